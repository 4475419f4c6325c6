"""The research artifact's JSON format (``model.md``): import it into ours, export ours to it.

``{"instances": [{"name", "type", "ondemand_price", "spot_price", "vCPU", "memory"?,
"network_bandwidth", "flops"?, "a"?, "b"?, "c"?}], "available_vcpus": {TYPE: {"ondemand",
"spot"}}}``. :func:`from_artifact_dict` only renames fields; validating the result (and naming
the artifact's rows and fields in problems) is :mod:`deepvm_core.catalog.validation`'s job.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from deepvm_core.catalog.catalog import Catalog
from deepvm_core.catalog.schema import SCHEMA_VERSION, saturation_rows
from deepvm_core.catalog.types import DEFAULT_SATURATION, GpuType, SaturationStep, ScalingParams
from deepvm_core.errors import CatalogError, Problem

#: The research artifact's logistic fits for real AWS instances (``model.md``). The artifact keeps
#: them in code, not in its JSON, so an imported artifact file gets them by instance name.
ARTIFACT_SCALING: dict[str, ScalingParams] = {
    "g3s.xlarge": ScalingParams(0.1408559584, 14.49263334, 13.53250952),
    "g4dn.xlarge": ScalingParams(0.1338806402, 12.87424514, 6.176666667),
    "g5.xlarge": ScalingParams(0.08533428072, 20.06669931, 4.962225551),
}

#: Our row fields -> the research artifact's names, for problems found in an imported file.
ARTIFACT_FIELD_NAMES = {
    "family": "type", "on_demand_usd_per_hour": "ondemand_price",
    "spot_usd_per_hour": "spot_price", "vcpus": "vCPU", "memory_gib": "memory",
    "network_gbps": "network_bandwidth", "eflops": "flops", "scaling.a": "a", "scaling.b": "b",
    "scaling.c": "c", "on_demand_vcpus": "ondemand", "spot_vcpus": "spot",
}
#: Key that :func:`from_artifact_dict` sets on each converted row: its index in "instances"
#: (validation names the artifact's row in its problems).
ARTIFACT_ROW = "_artifact_row"


def is_artifact_format(data: object) -> bool:
    """True when ``data`` looks like the research artifact's JSON (``instances`` list)."""
    return isinstance(data, Mapping) and "instances" in data and "schema_version" not in data


def from_artifact_dict(
    data: object,
    *,
    name: str = "artifact-import",
    provider: str = "aws",
    region: str = "-",
    prices_date: str = "unknown",
    source: str = "imported from the DeepVM research artifact's JSON format",
    scaling: Mapping[str, ScalingParams] | None = None,
    saturation: Iterable[SaturationStep] = DEFAULT_SATURATION,
) -> dict[str, Any]:
    """Convert the artifact's JSON into our format's dict (then
    :func:`~deepvm_core.catalog.validation.parse_catalog` it).

    ``type`` "G" or "P" is a GPU VM, any other letter a CPU VM; ``type`` is the quota family.
    ``scaling`` supplies (a, b, c) for types whose rows lack them (the artifact keeps the real
    instances' fits in code, not in the JSON); by default :data:`ARTIFACT_SCALING`. Field
    problems are left for validation to report.

    Raises:
        CatalogError: when the root is not the artifact's shape at all.
    """
    if not isinstance(data, Mapping) or not isinstance(data.get("instances"), list):
        raise CatalogError([Problem("(file)", "instances", None,
                                    "the artifact format needs an 'instances' list")], name)
    scaling = dict(ARTIFACT_SCALING if scaling is None else scaling)
    gpus: list[dict[str, Any]] = []
    cpus: list[dict[str, Any]] = []
    for j, row in enumerate(data["instances"]):
        if not isinstance(row, Mapping):
            cpus.append(row)  # not an object: validation reports the row
            continue
        family = row.get("type")
        out: dict[str, Any] = {
            ARTIFACT_ROW: j,
            "name": row.get("name"),
            "family": family,
            "on_demand_usd_per_hour": row.get("ondemand_price"),
            "spot_usd_per_hour": row.get("spot_price"),
            "vcpus": row.get("vCPU"),
            "memory_gib": row.get("memory"),
            "network_gbps": row.get("network_bandwidth"),
        }
        if isinstance(family, str) and family.upper() in ("G", "P"):
            out["eflops"] = row.get("flops")
            if all(k in row for k in ("a", "b", "c")):
                out["scaling"] = {"a": row["a"], "b": row["b"], "c": row["c"]}
            elif isinstance(out["name"], str) and out["name"] in scaling:
                s = scaling[out["name"]]
                out["scaling"] = {"a": s.a, "b": s.b, "c": s.c}
            else:
                out["scaling"] = None
            gpus.append(out)
        else:
            cpus.append(out)
    quotas = []
    raw_quotas = data.get("available_vcpus", {})
    if isinstance(raw_quotas, Mapping):
        for family, limits in raw_quotas.items():
            limits = limits if isinstance(limits, Mapping) else {}
            quotas.append({"family": family, "on_demand_vcpus": limits.get("ondemand"),
                           "spot_vcpus": limits.get("spot")})
    return {
        "schema_version": SCHEMA_VERSION,
        "name": name,
        "provider": provider,
        "region": region,
        "prices_date": prices_date,
        "source": source,
        "gpu_types": gpus,
        "cpu_types": cpus,
        "quotas": quotas,
        "network_saturation": saturation_rows(saturation),
    }


def catalog_to_artifact_dict(catalog: Catalog) -> dict[str, Any]:
    """The artifact's JSON format of ``catalog`` (loses region, date, source, the table and the
    interruption buckets)."""
    rows: list[dict[str, Any]] = []
    for t in (*catalog.gpu_types, *catalog.cpu_types):
        row: dict[str, Any] = {
            "name": t.name,
            "type": t.family,
            "ondemand_price": t.on_demand_usd_per_hour,
            "spot_price": t.spot_usd_per_hour,
            "vCPU": t.vcpus,
            "network_bandwidth": t.network_gbps,
        }
        if t.memory_gib is not None:
            row["memory"] = t.memory_gib
        if isinstance(t, GpuType):
            if t.eflops is not None:
                row["flops"] = t.eflops
            if t.scaling is not None:
                row.update(a=t.scaling.a, b=t.scaling.b, c=t.scaling.c)
        rows.append(row)
    return {
        "instances": rows,
        "available_vcpus": {
            q.family: {"ondemand": q.on_demand_vcpus, "spot": q.spot_vcpus}
            for q in catalog.quotas
        },
    }
