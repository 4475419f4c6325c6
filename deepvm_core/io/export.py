"""JSON export of a recommendation: one schema for the CLI (``--format json``) and the dashboard's
"Download configuration" button, so a launched cluster can always be traced to its inputs.

Schema (``EXPORT_SCHEMA_VERSION`` 1)::

    {
      "schema_version": 1, "tool": "deepvm-studio", "tool_version": "...",
      "generated_at": "2026-11-22T01:02:03Z",           # only with a timestamp
      "inputs": {"pw_usd_per_hour", "checkpoint_gb", "buffer_checkpoints", "objective",
                 "use_quotas", "max_nodes", "top_k", "solver",
                 "gpu_filter": {"accelerators", "min_gpu_memory_gb", "gpus_per_vm",
                                "summary"}},      # gpu_filter only when one is set
      "catalog": {"name", "sha256", "provider", "region", "prices_date", "source",
                  "edited": false | true,
                  "base": {"name", "sha256", "prices_date"},  # only when edited
                  "changes": ["gpu_types[g4dn.xlarge].spot_usd_per_hour: 0.1578 -> 0.2"],
                                                              # only when edited
                  "instance_types": {"gpu_types": [row, ...], "cpu_types": [row, ...]},
                  "quotas": [...], "network_saturation": [...]},
      "deepvm": [configuration, ...],                     # top-k, best first
      "deepvm_noscale": configuration | null,
      "cost_first": configuration | null,
      "performance_first": configuration | null,
      "best_per_architecture": {"single_anchor": configuration | null,
                                "tiering": configuration | null},
      "chosen": configuration | null,                     # the one picked (default: deepvm[0])
      "distinct": [{"configuration", "memory_node_types",
                    "variants": [{"cpu", "hourly_price", "summary"}, ...]}, ...],
                                        # the first top-k distinct clusters, variants folded
      "speed_basis": {"reference_gpu", "reference_one_vm_epoch_seconds",
                      "reference_one_vm_epochs_per_hour", "speedup", "job_given"} | null,
      "explanation": {...},                               # only when nothing is feasible
      "architecture_notes": {"tiering": {...}},           # architectures with no configuration
      "notes": ["..."],
      "by_accelerator": [{"accelerator", "rank", "gpu_types", "configuration",
                          "cheapest", "eflops_source", "scaling_source", "note"}, ...]
    }

``by_accelerator`` (the best cluster of each accelerator model within PW, ranked:
:mod:`deepvm_core.recommend.by_accelerator`) is there only when the catalog has GPU types with
an accelerator model (``data/accelerators.csv``; the AWS catalogs, not the simulated one). It is
a view: replay does not compare it, and ``catalog.instance_types`` does not add its types' rows
(each row names its own ``eflops_source`` and ``scaling_source``).

A configuration is ``{"architecture", "gpu": {"name", "spot", "on_demand"}, "cpu": {"name",
"on_demand"} | null, "hourly_price", "objective", "performance", ...}``: ``gpu.spot`` and
``gpu.on_demand`` count GPU VMs, ``cpu.on_demand`` memory nodes, ``objective`` is the value of
the chosen objective; the rest (``z_paper``, ``scaling_factor``, ``cluster_flopp``,
``summary``) are extras; ``speed_epochs_per_hour`` is the job's training speed (epochs per hour,
:mod:`deepvm_core.workload.speed`) and ``speed_vs_one_ref_vm`` that speed divided by one
reference-type VM's.

**Reproducible.** ``catalog.instance_types`` holds, in our catalog format (``data/README.md``),
every instance type a configuration of the document uses, each with a ``source`` (the catalog
and its prices date, or what was edited), and ``quotas`` and ``network_saturation`` the rules
that apply to them: enough to rebuild the part of the catalog that decides the recommendation
(the types a recommendation does not use can only lose to those it uses) and to run it again
(``deepvm recommend --replay``, :mod:`deepvm_core.io.replay`). Given the catalog an edited one was
derived from (``base``), ``edited`` is true and ``changes`` lists every changed field
(:func:`deepvm_core.catalog.diff.catalog_changes`); :func:`export_file_name` then names the file
after the edited catalog.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from importlib import metadata
from typing import Any

from deepvm_core.catalog import Catalog, GpuType
from deepvm_core.catalog.diff import catalog_changes
from deepvm_core.catalog.gpu_filter import ANY_GPU, GpuFilter
from deepvm_core.catalog.schema import instance_row, quota_rows, saturation_rows
from deepvm_core.errors import InputError
from deepvm_core.io.documents import (
    AcceleratorBestDoc,
    ConfigurationDoc,
    ExplanationDoc,
    GpuFilterDoc,
    InputsDoc,
)
from deepvm_core.model import Configuration, Objective
from deepvm_core.recommend.distinct import DistinctCluster
from deepvm_core.recommend.explain import Explanation
from deepvm_core.recommend.recommendation import Recommendation
from deepvm_core.workload.speed import SpeedBasis

EXPORT_SCHEMA_VERSION = 1


def tool_version() -> str:
    """The installed package version (``0+unknown`` when run from a source tree)."""
    try:
        return metadata.version("deepvm-studio")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def configuration_to_dict(
    config: Configuration | None, objective: Objective, *, noscale: bool = False
) -> ConfigurationDoc | None:
    """The export form of one configuration (``None`` stays ``None``)."""
    if config is None:
        return None
    return {
        "architecture": config.architecture,
        "gpu": {"name": config.gpu, "spot": config.gpu_spot, "on_demand": config.gpu_on_demand},
        "cpu": None if config.cpu is None else {"name": config.cpu,
                                                "on_demand": config.memory_nodes},
        "hourly_price": round(config.hourly_price_usd, 10),
        "objective": config.objective_value(objective, noscale=noscale),
        "performance": config.performance,
        "z_paper": config.z_paper,
        "scaling_factor": config.scaling_factor,
        "cluster_flopp": config.cluster_flopp,
        "summary": config.describe(),
        "speed_epochs_per_hour": config.speed_epochs_per_hour,
        "speed_vs_one_ref_vm": config.speed_vs_one_ref_vm,
    }


def distinct_to_dict(cluster: DistinctCluster, objective: Objective) -> dict[str, Any]:
    """One entry of the export's ``distinct``: the cluster's best variant, the memory-node
    types of its variants, and per variant what differs (memory nodes, price)."""
    return {
        "configuration": configuration_to_dict(cluster.configuration, objective),
        "memory_node_types": list(cluster.memory_node_types),
        "variants": [{"cpu": None if c.cpu is None else {"name": c.cpu,
                                                         "on_demand": c.memory_nodes},
                      "hourly_price": round(c.hourly_price_usd, 10),
                      "summary": c.describe()} for c in cluster.variants],
    }


def speed_basis_to_dict(basis: SpeedBasis | None) -> dict[str, Any] | None:
    """The export's ``speed_basis``: what every ``speed_epochs_per_hour`` is computed from."""
    if basis is None:
        return None
    return {
        "reference_gpu": basis.reference_gpu,
        "reference_one_vm_epoch_seconds": basis.reference_one_vm_epoch_seconds,
        "reference_one_vm_epochs_per_hour": basis.reference_epochs_per_hour,
        "speedup": basis.speedup.name,
        "job_given": basis.job_given,
    }


def gpu_filter_to_dict(gpu_filter: GpuFilter) -> GpuFilterDoc:
    """``inputs.gpu_filter`` of both exports (written only when the filter is active)."""
    return GpuFilterDoc(accelerators=list(gpu_filter.accelerators),
                        min_gpu_memory_gb=gpu_filter.min_gpu_memory_gb,
                        gpus_per_vm=gpu_filter.gpus_per_vm, summary=gpu_filter.describe())


def gpu_filter_from_dict(doc: object) -> GpuFilter:
    """The :class:`GpuFilter` of an export's ``inputs.gpu_filter`` (absent or ``null``: none).

    Raises:
        InputError: not an object of that shape, or a value the filter refuses.
    """
    if doc is None:
        return ANY_GPU
    if not isinstance(doc, Mapping):
        raise InputError("gpu_filter", doc, "must be an object {accelerators, "
                         "min_gpu_memory_gb, gpus_per_vm}")
    names = doc.get("accelerators", [])
    if not isinstance(names, list):
        raise InputError("gpu_filter.accelerators", names, "must be a list of GPU model names")
    return GpuFilter(tuple(names), doc.get("min_gpu_memory_gb"), doc.get("gpus_per_vm"))


def explanation_to_dict(explanation: Explanation | None,
                        objective: Objective) -> ExplanationDoc | None:
    """The export form of an explanation."""
    if explanation is None:
        return None
    return {
        "summary": explanation.summary,
        "binding": list(explanation.binding),
        "cheapest_feasible_usd_per_hour": explanation.cheapest_feasible_usd_per_hour,
        "cheapest_configuration": configuration_to_dict(explanation.cheapest_configuration,
                                                        objective),
    }


def exported_configurations(rec: Recommendation,
                            chosen: Configuration | None = None) -> list[Configuration]:
    """Every configuration an export of ``rec`` holds: the top-k, the policies' choices, the best
    of each architecture, ``chosen``, and the cheapest ones the explanations name."""
    explained = [rec.explanation, *rec.architecture_notes.values()]
    found = [*rec.deepvm, rec.deepvm_noscale, rec.cost_first, rec.performance_first,
             rec.best_single_anchor, rec.best_tiering, chosen,
             *(e.cheapest_configuration for e in explained if e is not None)]
    return [c for c in found if c is not None]


def _row_source(catalog: Catalog, base: Catalog | None, row: dict[str, Any]) -> str:
    """Where a row's numbers come from: the catalog, or the edit of ``base``."""
    plain = f"{catalog.name}, prices {catalog.prices_date}"
    if base is None:
        return plain
    try:
        before = instance_row(base.instance(row["name"]))
    except LookupError:
        return f"added to {base.name} (prices {base.prices_date}) by an edit"
    changed = [k for k in (*before, *(k for k in row if k not in before))
               if before.get(k) != row.get(k)]
    if not changed:
        return plain
    return f"edited from {base.name} (prices {base.prices_date}): {', '.join(changed)}"


def catalog_record(catalog: Catalog, configurations: Iterable[Configuration], *,
                   base: Catalog | None = None) -> dict[str, Any]:
    """The export's ``catalog`` object: which catalog, whether it was edited from ``base`` and
    how, and the rows of the instance types ``configurations`` use with the quotas of their
    families and the saturation table (module doc, "Reproducible")."""
    used = {name for c in configurations for name in (c.gpu, c.cpu) if name is not None}
    rows: dict[str, list[dict[str, Any]]] = {"gpu_types": [], "cpu_types": []}
    for t in (*catalog.gpu_types, *catalog.cpu_types):
        if t.name in used:
            row = instance_row(t)
            row["source"] = _row_source(catalog, base, instance_row(t))
            rows["gpu_types" if isinstance(t, GpuType) else "cpu_types"].append(row)
    families = {row["family"] for kind in rows.values() for row in kind}
    changes = [] if base is None else catalog_changes(base, catalog)
    record: dict[str, Any] = {
        "name": catalog.name,
        "sha256": catalog.sha256,
        "provider": catalog.provider,
        "region": catalog.region,
        "prices_date": catalog.prices_date,
        "source": catalog.source,
        "edited": bool(changes),
    }
    if base is not None and changes:
        record["base"] = {"name": base.name, "sha256": base.sha256,
                          "prices_date": base.prices_date}
        record["changes"] = changes
    record.update({
        "instance_types": rows,
        "quotas": quota_rows(q for q in catalog.quotas if q.family in families),
        "network_saturation": saturation_rows(catalog.saturation),
    })
    return record


_FILE_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def export_file_name(catalog: Catalog, *, base: Catalog | None = None,
                     pw_usd_per_hour: float | None = None) -> str:
    """A file name for an export of ``catalog``: ``deepvm-<catalog>[-pw<PW>].json``, or, when
    ``catalog`` differs from ``base`` (the catalog it was edited from),
    ``deepvm-<catalog>-edited-<first 8 hex digits of its sha256>[-pw<PW>].json``. Characters
    other than letters, digits, ``.``, ``_`` and ``-`` become ``-``; PW ``2.5`` is ``pw2_5``."""
    name = _FILE_NAME_UNSAFE.sub("-", catalog.name).strip("-.") or "catalog"
    if base is not None and base.sha256 != catalog.sha256:
        name += f"-edited-{catalog.sha256[:8]}"
    if pw_usd_per_hour is not None:
        name += "-pw" + f"{pw_usd_per_hour:g}".replace(".", "_")
    return f"deepvm-{name}.json"


def recommendation_summary(rec: Recommendation, catalog: Catalog) -> str:
    """The export's first line, for a person: what is recommended, how many VMs, the price and
    the speed (or why nothing is)."""
    s = rec.scenario
    filtered = f"; {s.gpu_filter.clause()}" if s.gpu_filter.active else ""
    where = (f"on {catalog.name} within PW {s.pw_usd_per_hour:g} USD/h (objective "
             f"{s.objective}{filtered})")
    best = rec.best
    if best is None:
        why = rec.explanation.summary if rec.explanation else "nothing is feasible"
        return f"No cluster {where}: {why}"
    speed_text = best.speed_text()
    speed = "" if speed_text is None else f", training speed {speed_text}"
    return (f"DeepVM recommends {best.describe()} {where}: {best.total_vms} VMs at "
            f"{best.hourly_price_usd:.4f} USD per hour{speed}.")


def recommendation_to_dict(
    rec: Recommendation,
    catalog: Catalog,
    *,
    chosen: Configuration | None = None,
    timestamp: datetime | None = None,
    base: Catalog | None = None,
) -> dict[str, Any]:
    """The export document of ``rec`` (see the module doc).

    Args:
        catalog: the catalog ``rec`` was computed on.
        chosen: the configuration the user picked; defaults to the first recommendation.
        timestamp: adds ``generated_at`` (UTC, ISO 8601); omit for reproducible output.
        base: the catalog ``catalog`` was edited from (the dashboard's catalog editor), or
            ``None``: when they differ, ``catalog.edited`` is true and ``catalog.changes``
            lists every changed field.

    Raises:
        InputError: ``catalog`` is not the one ``rec`` was computed on.
    """
    if catalog.sha256 != rec.catalog_sha256:
        raise InputError("catalog", catalog.name, "is not the catalog the recommendation was "
                         f"computed on (sha256 {catalog.sha256[:12]}..., the recommendation's "
                         f"{rec.catalog_sha256[:12]}...)")
    s = rec.scenario
    obj = s.objective
    chosen = chosen if chosen is not None else rec.best
    doc: dict[str, Any] = {
        "summary": recommendation_summary(rec, catalog),
        "schema_version": EXPORT_SCHEMA_VERSION,
        "tool": "deepvm-studio",
        "tool_version": tool_version(),
    }
    if timestamp is not None:
        doc["generated_at"] = timestamp.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    doc.update({
        "inputs": InputsDoc({
            "pw_usd_per_hour": s.pw_usd_per_hour,
            "checkpoint_gb": s.checkpoint_gb,
            "buffer_checkpoints": s.buffer_checkpoints,
            "objective": obj,
            "use_quotas": s.use_quotas,
            "max_nodes": s.max_nodes,
            "top_k": rec.top_k,
            "solver": rec.solver,
        }),
        "catalog": catalog_record(catalog, exported_configurations(rec, chosen), base=base),
        "deepvm": [configuration_to_dict(c, obj) for c in rec.deepvm],
        "deepvm_noscale": configuration_to_dict(rec.deepvm_noscale, obj, noscale=True),
        "cost_first": configuration_to_dict(rec.cost_first, obj),
        "performance_first": configuration_to_dict(rec.performance_first, obj),
        "best_per_architecture": {
            "single_anchor": configuration_to_dict(rec.best_single_anchor, obj),
            "tiering": configuration_to_dict(rec.best_tiering, obj),
        },
        "chosen": configuration_to_dict(chosen, obj),
        "distinct": [distinct_to_dict(d, obj) for d in rec.distinct],
        "speed_basis": speed_basis_to_dict(rec.speed_basis),
    })
    if s.gpu_filter.active:
        doc["inputs"]["gpu_filter"] = gpu_filter_to_dict(s.gpu_filter)
    if rec.explanation is not None:
        doc["explanation"] = explanation_to_dict(rec.explanation, obj)
    if rec.architecture_notes:
        doc["architecture_notes"] = {
            k: explanation_to_dict(v, obj) for k, v in rec.architecture_notes.items()}
    doc["notes"] = list(rec.notes)
    if rec.by_accelerator:
        doc["by_accelerator"] = [AcceleratorBestDoc(
            accelerator=row.accelerator, rank=row.rank, gpu_types=list(row.gpu_types),
            configuration=configuration_to_dict(row.configuration, obj),
            cheapest=configuration_to_dict(row.cheapest, obj),
            eflops_source=row.eflops_source, scaling_source=row.scaling_source, note=row.note,
        ) for row in rec.by_accelerator]
    return doc
