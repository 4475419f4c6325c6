"""Catalogs: instance types, quotas and the network-saturation table, validated.

A catalog file is JSON in one of two formats:

* **ours** (``schema_version`` 1, documented in ``data/README.md``), and
* **the research artifact's** (``{"instances": [...], "available_vcpus": {...}}``, see
  ``model.md``), imported by :func:`from_artifact_dict`.

Loading never stops at the first problem and never drops a row silently: every problem is
collected with its row, field and value, and an invalid catalog raises one
:class:`~deepvm_core.errors.CatalogError` that lists them all. Soft problems (a spot price above
the on-demand price, a GPU type without eFLOPS or without scaling parameters) are kept as
``Catalog.warnings``.

Units live in the field names: ``*_usd_per_hour`` (USD per hour), ``memory_gib`` (GiB, 2^30
bytes), ``network_gbps`` (Gbit/s), ``eflops`` (the artifact's relative deep-learning
throughput score).
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import json
import math
import os
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from deepvm_core.errors import CatalogError, DeepVMError, Problem

SCHEMA_VERSION = 1

#: Bundled catalogs live here (``data/catalogs`` at the repository root).
DATA_DIR = Path(__file__).resolve().parent.parent / "data" / "catalogs"

#: Bounds on the logistic scaling parameters (see :mod:`deepvm_core.model`).
SCALING_A_RANGE = (0.0, 10.0)  # exclusive lower bound, inclusive upper: steepness per node
SCALING_B_RANGE = (0.0, 100_000.0)  # inflection point, nodes
SCALING_C_RANGE = (0.0, 1_000_000.0)  # exclusive lower bound: asymptotic speedup


@dataclass(frozen=True)
class ScalingParams:
    """Logistic speedup fit ``S(n) = c / (1 + exp(-a (n - b)))`` of one GPU type.

    Attributes:
        a: steepness, per node (0 < a <= 10).
        b: inflection point, in nodes (0 <= b).
        c: asymptotic speedup (0 < c).
    """

    a: float
    b: float
    c: float


@dataclass(frozen=True, kw_only=True)
class InstanceType:
    """A VM type of a cloud provider.

    Attributes:
        name: the provider's name, unique in a catalog (``g4dn.xlarge``).
        family: the quota family (AWS: ``G`` for ``g4dn.xlarge``).
        on_demand_usd_per_hour: on-demand price, USD per hour (> 0).
        spot_usd_per_hour: spot price, USD per hour (> 0); the aggregate of
            ``spot_by_zone_usd_per_hour`` when a fetch recorded per-zone prices.
        vcpus: virtual CPUs (>= 1), counted against quotas.
        memory_gib: RAM in GiB, or ``None`` where unknown (GPU types only; memory nodes need it).
        network_gbps: network bandwidth in Gbit/s (> 0).
        spot_by_zone_usd_per_hour: optional latest spot price per availability zone.
    """

    name: str
    family: str
    on_demand_usd_per_hour: float
    spot_usd_per_hour: float
    vcpus: int
    memory_gib: float | None
    network_gbps: float
    spot_by_zone_usd_per_hour: Mapping[str, float] | None = None


@dataclass(frozen=True, kw_only=True)
class GpuType(InstanceType):
    """A GPU VM type: trains.

    Attributes:
        eflops: measured deep-learning throughput (relative units, > 0), or ``None`` when not
            known yet ("needs eFLOPS": kept in the catalog, left out of solving).
        scaling: the logistic scaling fit, or ``None`` (then K(n) = 1).
    """

    eflops: float | None
    scaling: ScalingParams | None = None

    @property
    def solvable(self) -> bool:
        """True when the type has an eFLOPS score and can take part in a recommendation."""
        return self.eflops is not None


@dataclass(frozen=True, kw_only=True)
class CpuType(InstanceType):
    """A CPU VM type: a Tiering memory node that keeps checkpoints in RAM."""


@dataclass(frozen=True)
class Quota:
    """vCPU limits of one instance family (AWS style: on-demand and spot are separate).

    Attributes:
        family: the family the limits apply to.
        on_demand_vcpus: most vCPUs of on-demand VMs of this family (>= 0).
        spot_vcpus: most vCPUs of spot VMs of this family (>= 0).
    """

    family: str
    on_demand_vcpus: int
    spot_vcpus: int


@dataclass(frozen=True)
class SaturationStep:
    """One entry of the network-saturation table.

    Attributes:
        bandwidth_gbps: the bandwidth ``min(BW(v), BW(w))`` this entry starts at, Gbit/s.
        max_gpu_vms: ``n_sat``: one memory node serves fewer than this many GPU VMs.
    """

    bandwidth_gbps: float
    max_gpu_vms: int


#: The research artifact's logistic fits for real AWS instances (``model.md``). The artifact keeps
#: them in code, not in its JSON, so an imported artifact file gets them by instance name.
ARTIFACT_SCALING: dict[str, ScalingParams] = {
    "g3s.xlarge": ScalingParams(0.1408559584, 14.49263334, 13.53250952),
    "g4dn.xlarge": ScalingParams(0.1338806402, 12.87424514, 6.176666667),
    "g5.xlarge": ScalingParams(0.08533428072, 20.06669931, 4.962225551),
}

#: The measured table of ``model.md`` (Gbit/s -> n_sat).
DEFAULT_SATURATION: tuple[SaturationStep, ...] = tuple(
    SaturationStep(bw, n)
    for bw, n in [(0.3, 2), (1.7, 12), (5, 16), (10, 20), (12.5, 24), (15, 24), (25, 28), (30, 32)]
)


@dataclass(frozen=True)
class Catalog:
    """A validated catalog. Build it with :func:`parse_catalog` or :func:`load_catalog`.

    Attributes:
        name: short name (``aws-us-east-1-2023-10``).
        provider: ``aws`` or ``simulated``.
        region: the provider's region, or ``-``.
        prices_date: ISO date (or timestamp) the prices were taken.
        source: where the numbers come from, free text.
        gpu_types: GPU VM types.
        cpu_types: CPU VM types (memory nodes).
        quotas: vCPU quotas per family; a family not listed is unlimited.
        saturation: the network-saturation table, bandwidth ascending.
        warnings: soft problems found while loading (the catalog is still usable).
    """

    name: str
    provider: str
    region: str
    prices_date: str
    source: str
    gpu_types: tuple[GpuType, ...]
    cpu_types: tuple[CpuType, ...]
    quotas: tuple[Quota, ...] = ()
    saturation: tuple[SaturationStep, ...] = DEFAULT_SATURATION
    warnings: tuple[Problem, ...] = field(default=(), compare=False)

    def quota(self, family: str) -> Quota | None:
        """The quota of ``family``, or ``None`` when the family is unlimited."""
        for q in self.quotas:
            if q.family == family:
                return q
        return None

    @property
    def solvable_gpu_types(self) -> tuple[GpuType, ...]:
        """GPU types with an eFLOPS score: the ones the solvers consider."""
        return tuple(g for g in self.gpu_types if g.solvable)

    def instance(self, name: str) -> GpuType | CpuType:
        """The instance type called ``name``; an unknown name suggests close matches."""
        for t in (*self.gpu_types, *self.cpu_types):
            if t.name == name:
                return t
        names = [t.name for t in (*self.gpu_types, *self.cpu_types)]
        close = difflib.get_close_matches(name, names, n=3)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise DeepVMError(f"no instance type {name!r} in catalog {self.name!r}.{hint}")

    @functools.cached_property
    def sha256(self) -> str:
        """SHA-256 of the catalog's canonical JSON (our format): identifies its exact content.

        Computed once per object (the catalog is immutable)."""
        return catalog_sha256(self)


# ----------------------------------------------------------------------------- validation


class _Collector:
    """Collects problems while a raw catalog is read."""

    def __init__(self) -> None:
        self.errors: list[Problem] = []
        self.warnings: list[Problem] = []

    def error(self, where: str, field_name: str, value: object, message: str) -> None:
        self.errors.append(Problem(where, field_name, value, message))

    def warn(self, where: str, field_name: str, value: object, message: str) -> None:
        self.warnings.append(Problem(where, field_name, value, message))

    def number(
        self,
        row: Mapping[str, Any],
        where: str,
        key: str,
        *,
        positive: bool = False,
        nonnegative: bool = False,
        integer: bool = False,
        required: bool = True,
    ) -> float | None:
        """Read ``row[key]`` as a finite number, recording a problem when it is not one."""
        if key not in row or row[key] is None:
            if required:
                self.error(where, key, row.get(key), "missing (a number is required)")
            return None
        value = row[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            if isinstance(value, str):
                try:
                    value = float(value)
                except ValueError:
                    self.error(where, key, row[key], "not a number")
                    return None
            else:
                self.error(where, key, value, "not a number")
                return None
        number = float(value)
        if not math.isfinite(number):
            self.error(where, key, row[key], "must be a finite number (not NaN or infinity)")
            return None
        if positive and number <= 0:
            self.error(where, key, row[key], "must be greater than 0")
            return None
        if nonnegative and number < 0:
            self.error(where, key, row[key], "must not be negative")
            return None
        if integer and number != int(number):
            self.error(where, key, row[key], "must be a whole number")
            return None
        return number

    def text(self, row: Mapping[str, Any], where: str, key: str) -> str | None:
        value = row.get(key)
        if not isinstance(value, str) or not value.strip():
            self.error(where, key, value, "missing (a non-empty text is required)")
            return None
        return value.strip()


#: Our row fields -> the research artifact's names, for problems found in an imported file.
ARTIFACT_FIELD_NAMES = {
    "family": "type", "on_demand_usd_per_hour": "ondemand_price",
    "spot_usd_per_hour": "spot_price", "vcpus": "vCPU", "memory_gib": "memory",
    "network_gbps": "network_bandwidth", "eflops": "flops", "scaling.a": "a", "scaling.b": "b",
    "scaling.c": "c", "on_demand_vcpus": "ondemand", "spot_vcpus": "spot",
}
_ARTIFACT_ROW = "_artifact_row"  # set by from_artifact_dict: the row's index in "instances"


def _row_label(kind: str, index: int, row: object) -> str:
    name = row.get("name") if isinstance(row, Mapping) else None
    if isinstance(row, Mapping) and isinstance(row.get(_ARTIFACT_ROW), int):
        kind, index = "instances", row[_ARTIFACT_ROW]
    return f"{kind}[{index}]" + (f" ({name})" if isinstance(name, str) and name else "")


def _read_zone_prices(
    c: _Collector, row: Mapping[str, Any], where: str
) -> dict[str, float] | None:
    raw = row.get("spot_by_zone_usd_per_hour")
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        c.error(where, "spot_by_zone_usd_per_hour", raw, "must be an object {zone: USD/hour}")
        return None
    zones: dict[str, float] = {}
    for zone, price in raw.items():
        value = c.number({zone: price}, where + ".spot_by_zone_usd_per_hour", zone, positive=True)
        if value is not None:
            zones[str(zone)] = value
    return zones


def _read_instance(
    c: _Collector, kind: str, index: int, row: object
) -> dict[str, Any] | None:
    """Validate the fields common to GPU and CPU rows; ``None`` when the row is unusable."""
    where = _row_label(kind, index, row)
    if not isinstance(row, Mapping):
        c.error(where, "(row)", row, "must be an object")
        return None
    before = len(c.errors)
    name = c.text(row, where, "name")
    family = c.text(row, where, "family")
    od = c.number(row, where, "on_demand_usd_per_hour", positive=True)
    spot = c.number(row, where, "spot_usd_per_hour", positive=True)
    vcpus = c.number(row, where, "vcpus", positive=True, integer=True)
    memory = c.number(row, where, "memory_gib", positive=True, required=kind == "cpu_types")
    network = c.number(row, where, "network_gbps", positive=True)
    zones = _read_zone_prices(c, row, where)
    if od is not None and spot is not None and spot > od:
        c.warn(
            where,
            "spot_usd_per_hour",
            row.get("spot_usd_per_hour"),
            f"spot price is above the on-demand price {od:g} USD/hour",
        )
    if len(c.errors) > before:
        return None
    return {
        "name": name,
        "family": family,
        "on_demand_usd_per_hour": od,
        "spot_usd_per_hour": spot,
        "vcpus": int(vcpus or 0),
        "memory_gib": memory,
        "network_gbps": network,
        "spot_by_zone_usd_per_hour": zones,
    }


def _read_scaling(c: _Collector, row: Mapping[str, Any], where: str) -> ScalingParams | None:
    raw = row.get("scaling")
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        c.error(where, "scaling", raw, "must be an object {a, b, c} or null")
        return None
    prefixed = {f"scaling.{k}": raw.get(k) for k in ("a", "b", "c")}
    before = len(c.errors)
    a, b, c_ = (c.number(prefixed, where, f"scaling.{k}") for k in ("a", "b", "c"))
    if len(c.errors) > before or a is None or b is None or c_ is None:
        return None
    ok = True
    if not (SCALING_A_RANGE[0] < a <= SCALING_A_RANGE[1]):
        c.error(where, "scaling.a", raw["a"], f"must be in ({SCALING_A_RANGE[0]:g}, "
                f"{SCALING_A_RANGE[1]:g}] (steepness per node)")
        ok = False
    if not (SCALING_B_RANGE[0] <= b <= SCALING_B_RANGE[1]):
        c.error(where, "scaling.b", raw["b"], f"must be in [{SCALING_B_RANGE[0]:g}, "
                f"{SCALING_B_RANGE[1]:g}] (inflection point, nodes)")
        ok = False
    if not (SCALING_C_RANGE[0] < c_ <= SCALING_C_RANGE[1]):
        c.error(where, "scaling.c", raw["c"], f"must be in ({SCALING_C_RANGE[0]:g}, "
                f"{SCALING_C_RANGE[1]:g}] (asymptotic speedup)")
        ok = False
    return ScalingParams(a, b, c_) if ok else None


def _read_gpu_extras(
    c: _Collector, index: int, row: object, common: dict[str, Any] | None
) -> GpuType | None:
    """Validate eFLOPS and scaling of a GPU row; the :class:`GpuType`, or ``None`` on errors."""
    if not isinstance(row, Mapping):
        return None
    where = _row_label("gpu_types", index, row)
    before = len(c.errors)
    eflops = None
    if "eflops" not in row:
        c.error(where, "eflops", None, "missing (a number, or null for 'needs eFLOPS')")
    elif row["eflops"] is None:
        c.warn(where, "eflops", None,
               "needs eFLOPS: kept, but left out of solving until it is given")
    else:
        eflops = c.number(row, where, "eflops", positive=True)
    scaling = _read_scaling(c, row, where)
    if common is None or len(c.errors) > before:
        return None
    if row.get("scaling") is None and eflops is not None:
        c.warn(where, "scaling", None, "no scaling parameters: the scaling factor K is taken as 1")
    return GpuType(**common, eflops=eflops, scaling=scaling)


def parse_catalog(data: object, source: str = "catalog") -> Catalog:
    """Validate a catalog in our format (a parsed JSON object) and build a :class:`Catalog`.

    Raises:
        CatalogError: listing every problem found (row, field, value, message).
    """
    c = _Collector()
    if not isinstance(data, Mapping):
        raise CatalogError([Problem("(file)", "(root)", type(data).__name__,
                                    "a catalog must be a JSON object")], source)
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        c.error("(catalog)", "schema_version", version,
                f"must be {SCHEMA_VERSION} (this program reads schema version {SCHEMA_VERSION})")
    meta: dict[str, str] = {}
    for key in ("name", "provider", "region", "prices_date"):
        value = c.text(data, "(catalog)", key)
        meta[key] = value or ""
    source_text = data.get("source", "")
    if not isinstance(source_text, str):
        c.error("(catalog)", "source", source_text, "must be a text")
        source_text = ""

    gpus: list[GpuType] = []
    cpus: list[CpuType] = []
    for kind in ("gpu_types", "cpu_types"):
        rows = data.get(kind)
        if not isinstance(rows, list):
            c.error("(catalog)", kind, rows, "must be a list of instance types")
            continue
        for i, row in enumerate(rows):
            common = _read_instance(c, kind, i, row)
            if kind == "gpu_types":
                gpu = _read_gpu_extras(c, i, row, common)
                if gpu is not None:
                    gpus.append(gpu)
            elif common is not None:
                cpus.append(CpuType(**common))

    names: dict[str, str] = {}
    for kind, items in (("gpu_types", gpus), ("cpu_types", cpus)):
        for t in items:
            if t.name in names:
                c.error(f"{kind} ({t.name})", "name", t.name,
                        f"duplicate name (also in {names[t.name]})")
            else:
                names[t.name] = kind

    quotas = _read_quotas(c, data.get("quotas", []))
    saturation = _read_saturation(c, data.get("network_saturation"))

    if c.errors:
        raise CatalogError(c.errors, source)
    return Catalog(
        name=meta["name"],
        provider=meta["provider"],
        region=meta["region"],
        prices_date=meta["prices_date"],
        source=source_text,
        gpu_types=tuple(gpus),
        cpu_types=tuple(cpus),
        quotas=quotas,
        saturation=saturation,
        warnings=tuple(c.warnings),
    )


def _read_quotas(c: _Collector, rows: object) -> tuple[Quota, ...]:
    if not isinstance(rows, list):
        c.error("(catalog)", "quotas", rows, "must be a list of {family, on_demand_vcpus, "
                "spot_vcpus}")
        return ()
    quotas: list[Quota] = []
    seen: set[str] = set()
    for i, row in enumerate(rows):
        where = f"quotas[{i}]"
        if not isinstance(row, Mapping):
            c.error(where, "(row)", row, "must be an object")
            continue
        family = c.text(row, where, "family")
        od = c.number(row, where, "on_demand_vcpus", nonnegative=True, integer=True)
        spot = c.number(row, where, "spot_vcpus", nonnegative=True, integer=True)
        if family is not None and family in seen:
            c.error(where, "family", family, "duplicate family")
            continue
        if family is not None:
            seen.add(family)
        if family is None or od is None or spot is None:
            continue
        quotas.append(Quota(family, int(od), int(spot)))
    return tuple(quotas)


def _read_saturation(c: _Collector, rows: object) -> tuple[SaturationStep, ...]:
    if not isinstance(rows, list) or not rows:
        c.error("(catalog)", "network_saturation", rows,
                "must be a non-empty list of {bandwidth_gbps, max_gpu_vms}")
        return ()
    steps: list[SaturationStep] = []
    for i, row in enumerate(rows):
        where = f"network_saturation[{i}]"
        if not isinstance(row, Mapping):
            c.error(where, "(row)", row, "must be an object")
            continue
        bw = c.number(row, where, "bandwidth_gbps", positive=True)
        n = c.number(row, where, "max_gpu_vms", positive=True, integer=True)
        if bw is not None and n is not None:
            steps.append(SaturationStep(bw, int(n)))
    keys = [s.bandwidth_gbps for s in steps]
    for i in range(1, len(keys)):
        if keys[i] <= keys[i - 1]:
            c.error(f"network_saturation[{i}]", "bandwidth_gbps", keys[i],
                    f"bandwidths must increase strictly (previous entry is {keys[i - 1]:g})")
    return tuple(steps)


# ----------------------------------------------------------------------------- formats


def catalog_to_dict(catalog: Catalog) -> dict[str, Any]:
    """Our JSON format (``schema_version`` 1) of ``catalog``; warnings are not stored."""

    def instance(t: InstanceType) -> dict[str, Any]:
        row: dict[str, Any] = {
            "name": t.name,
            "family": t.family,
            "on_demand_usd_per_hour": t.on_demand_usd_per_hour,
            "spot_usd_per_hour": t.spot_usd_per_hour,
            "vcpus": t.vcpus,
            "memory_gib": t.memory_gib,
            "network_gbps": t.network_gbps,
        }
        if t.spot_by_zone_usd_per_hour:
            row["spot_by_zone_usd_per_hour"] = dict(sorted(t.spot_by_zone_usd_per_hour.items()))
        if isinstance(t, GpuType):
            row["eflops"] = t.eflops
            row["scaling"] = (
                None if t.scaling is None
                else {"a": t.scaling.a, "b": t.scaling.b, "c": t.scaling.c}
            )
        return row

    return {
        "schema_version": SCHEMA_VERSION,
        "name": catalog.name,
        "provider": catalog.provider,
        "region": catalog.region,
        "prices_date": catalog.prices_date,
        "source": catalog.source,
        "gpu_types": [instance(g) for g in catalog.gpu_types],
        "cpu_types": [instance(w) for w in catalog.cpu_types],
        "quotas": [
            {"family": q.family, "on_demand_vcpus": q.on_demand_vcpus, "spot_vcpus": q.spot_vcpus}
            for q in catalog.quotas
        ],
        "network_saturation": [
            {"bandwidth_gbps": s.bandwidth_gbps, "max_gpu_vms": s.max_gpu_vms}
            for s in catalog.saturation
        ],
    }


def catalog_sha256(catalog: Catalog) -> str:
    """SHA-256 (hex) of the canonical JSON of ``catalog`` (sorted keys, no spaces)."""
    text = json.dumps(catalog_to_dict(catalog), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


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
    """Convert the artifact's JSON into our format's dict (then :func:`parse_catalog` it).

    ``type`` "G" or "P" is a GPU VM, any other letter a CPU VM; ``type`` is the quota family.
    ``scaling`` supplies (a, b, c) for types whose rows lack them (the artifact keeps the real
    instances' fits in code, not in the JSON); by default :data:`ARTIFACT_SCALING`. Field
    problems are left for :func:`parse_catalog` to report.

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
            cpus.append(row)  # type: ignore[arg-type]  # reported by parse_catalog
            continue
        family = row.get("type")
        out: dict[str, Any] = {
            _ARTIFACT_ROW: j,
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
        "network_saturation": [
            {"bandwidth_gbps": s.bandwidth_gbps, "max_gpu_vms": s.max_gpu_vms}
            for s in saturation
        ],
    }


def catalog_to_artifact_dict(catalog: Catalog) -> dict[str, Any]:
    """The artifact's JSON format of ``catalog`` (loses region, date, source and the table)."""
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


def catalog_from_json_text(text: str | bytes, source: str = "catalog") -> Catalog:
    """Parse JSON text in either format and validate it.

    Raises:
        CatalogError: malformed JSON (with line and column) or an invalid catalog.
    """
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        where = (f"line {exc.lineno}, column {exc.colno}"
                 if isinstance(exc, json.JSONDecodeError) else "(file)")
        raise CatalogError([Problem(where, "(json)", None, f"malformed JSON: {exc}")],
                           source) from None
    if not is_artifact_format(data):
        return parse_catalog(data, source)
    stem = Path(source).stem if source != "catalog" else "artifact-import"
    try:
        return parse_catalog(from_artifact_dict(data, name=stem), source)
    except CatalogError as exc:  # speak the artifact's field names back to its user
        raise CatalogError([
            replace(p, field=ARTIFACT_FIELD_NAMES.get(p.field, p.field))
            if p.where.startswith(("instances[", "quotas[")) else p
            for p in exc.problems], source) from None


# ----------------------------------------------------------------------------- files


def bundled_catalog_paths() -> dict[str, Path]:
    """Bundled catalogs by name (file stem) in ``data/catalogs``."""
    return {p.stem: p for p in sorted(DATA_DIR.glob("*.json"))}


def load_catalog(path_or_name: str | os.PathLike[str]) -> Catalog:
    """Load a catalog from a path, or by the name of a bundled catalog.

    Raises:
        CatalogError: the file is invalid (every problem listed).
        DeepVMError: the file does not exist or cannot be read (close names suggested).
    """
    text_name = str(path_or_name)
    path = Path(text_name)
    bundled = bundled_catalog_paths()
    if not path.exists() and text_name in bundled:
        path = bundled[text_name]
    if not path.exists():
        close = difflib.get_close_matches(text_name, list(bundled), n=3, cutoff=0.4)
        hint = f" Bundled catalogs: {', '.join(bundled)}." if bundled else ""
        if close:
            hint = f" Did you mean {', '.join(close)}?" + hint
        raise DeepVMError(f"catalog {text_name!r} not found: no such file or bundled name.{hint}")
    try:
        text = path.read_bytes()
    except OSError as exc:
        raise DeepVMError(f"catalog {text_name!r} cannot be read: {exc.strerror}") from None
    return catalog_from_json_text(text, source=str(path))


def write_json_atomic(path: str | os.PathLike[str], data: object) -> Path:
    """Write ``data`` as JSON to ``path`` atomically (temp file + rename in the same folder)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def save_catalog(catalog: Catalog, path: str | os.PathLike[str]) -> Path:
    """Write ``catalog`` in our format to ``path`` atomically."""
    return write_json_atomic(path, catalog_to_dict(catalog))
