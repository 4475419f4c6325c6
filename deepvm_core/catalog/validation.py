"""Validation: a raw catalog (parsed JSON, in our format or the artifact's) -> a :class:`Catalog`.

Loading never stops at the first problem and never drops a row silently: every problem is
collected with its row, field and value, and an invalid catalog raises one
:class:`~deepvm_core.errors.CatalogError` that lists them all. The rules are those of
:data:`~deepvm_core.catalog.types.RULES` and :func:`~deepvm_core.catalog.types.catalog_problems`,
the same the types check when built directly. Soft problems (a spot price above the on-demand
price, a GPU type without eFLOPS or without scaling parameters) are kept as
``Catalog.warnings``. Schema version 1 files load too; they have no interruption buckets.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, Final, TypeVar

from deepvm_core.catalog.artifact import (
    ARTIFACT_FIELD_NAMES,
    ARTIFACT_ROW,
    from_artifact_dict,
    is_artifact_format,
)
from deepvm_core.catalog.catalog import Catalog
from deepvm_core.catalog.json_input import JsonInputError, parse_json_bounded
from deepvm_core.catalog.schema import (
    MAX_CATALOG_BYTES,
    READABLE_SCHEMA_VERSIONS,
    SCHEMA_VERSION,
)
from deepvm_core.catalog.types import (
    RULES,
    CpuType,
    GpuType,
    Quota,
    SaturationStep,
    ScalingParams,
    catalog_problems,
    row_count_problem,
)
from deepvm_core.errors import CatalogError, Problem

T = TypeVar("T")


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
        rule: str | None = None,
        required: bool = True,
    ) -> float | None:
        """Read ``row[key]`` as a finite number that keeps ``RULES[rule or key]``, recording a
        problem when it does not."""
        if key not in row or row[key] is None:
            if required:
                self.error(where, key, row.get(key), "missing (a number is required)")
            return None
        value = row[key]
        if isinstance(value, bool) or not isinstance(value, int | float):
            if isinstance(value, str):
                try:
                    value = float(value)
                except ValueError:
                    self.error(where, key, row[key], "not a number")
                    return None
            else:
                self.error(where, key, value, "not a number")
                return None
        try:
            number = float(value)
        except OverflowError:  # an int beyond the float range
            number = math.inf
        if not math.isfinite(number):
            self.error(where, key, row[key], "must be a finite number (not NaN or infinity)")
            return None
        broken = RULES[rule or key].problem(number)
        if broken is not None:
            self.error(where, key, row[key], broken)
            return None
        return number

    def object_rows(self, rows: list[object],
                    name: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
        """``(where, row)`` of each row of the list ``name`` that is an object (``where``:
        ``name[i]``); each other row is recorded as a problem."""
        for i, row in enumerate(rows):
            where = f"{name}[{i}]"
            if isinstance(row, Mapping):
                yield where, row
            else:
                self.error(where, "(row)", row, "must be an object")

    def optional_object(self, row: Mapping[str, Any], where: str, key: str,
                        shape: str) -> Mapping[str, Any] | None:
        """``row[key]`` when it is an object, ``None`` when absent or null, else ``None`` with
        a problem saying it ``must be`` ``shape``."""
        raw = row.get(key)
        if raw is not None and not isinstance(raw, Mapping):
            self.error(where, key, raw, f"must be {shape}")
            return None
        return raw

    def text(self, row: Mapping[str, Any], where: str, key: str) -> str | None:
        value = row.get(key)
        if not isinstance(value, str) or not value.strip():
            self.error(where, key, value, "missing (a non-empty text is required)")
            return None
        return value.strip()

    def build(self, where: str, make: Callable[..., T], **kwargs: Any) -> T | None:
        """``make(**kwargs)``, or ``None`` with its problems recorded under ``where``.

        The fields were checked already, so this only guards the collect-every-problem
        behaviour should a type ever check more than this module does."""
        try:
            return make(**kwargs)
        except CatalogError as exc:
            self.errors.extend(replace(p, where=where) for p in exc.problems)
            return None


def _row_label(kind: str, index: int, row: object) -> str:
    name = row.get("name") if isinstance(row, Mapping) else None
    if isinstance(row, Mapping) and isinstance(row.get(ARTIFACT_ROW), int):
        kind, index = "instances", row[ARTIFACT_ROW]
    return f"{kind}[{index}]" + (f" ({name})" if isinstance(name, str) and name else "")


def _read_zone_prices(
    c: _Collector, row: Mapping[str, Any], where: str
) -> dict[str, float] | None:
    raw = c.optional_object(row, where, "spot_by_zone_usd_per_hour",
                            "an object {zone: USD/hour}")
    if raw is None:
        return None
    zones: dict[str, float] = {}
    for zone, price in raw.items():
        value = c.number({zone: price}, where + ".spot_by_zone_usd_per_hour", zone,
                         rule="spot_by_zone_usd_per_hour")
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
    od = c.number(row, where, "on_demand_usd_per_hour")
    spot = c.number(row, where, "spot_usd_per_hour")
    vcpus = c.number(row, where, "vcpus")
    memory = c.number(row, where, "memory_gib", required=kind == "cpu_types")
    network = c.number(row, where, "network_gbps")
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
    raw = c.optional_object(row, where, "scaling", "an object {a, b, c} or null")
    if raw is None:
        return None
    prefixed = {f"scaling.{k}": raw.get(k) for k in ("a", "b", "c")}
    a, b, c_ = (c.number(prefixed, where, f"scaling.{k}") for k in ("a", "b", "c"))
    if a is None or b is None or c_ is None:
        return None
    return c.build(where, ScalingParams, a=a, b=b, c=c_)


def _read_bucket(c: _Collector, row: Mapping[str, Any], where: str) -> int | None:
    """``interruption_bucket``: a whole number 0..4 (read like every number: ``3.0`` is 3), or
    null or absent (unknown)."""
    value = c.number(row, where, "interruption_bucket", required=False)
    return None if value is None else int(value)


def _read_gpu_extras(
    c: _Collector, index: int, row: object, common: dict[str, Any] | None, *, buckets: bool
) -> GpuType | None:
    """Validate eFLOPS, scaling and (``buckets``: schema version 2 on) the interruption bucket
    of a GPU row; the :class:`GpuType`, or ``None`` on errors."""
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
        eflops = c.number(row, where, "eflops")
    scaling = _read_scaling(c, row, where)
    bucket = _read_bucket(c, row, where) if buckets else None
    sources = {}
    for key in ("eflops_source", "scaling_source"):
        if row.get(key) is not None:
            sources[key] = c.text(row, where, key)
    if common is None or len(c.errors) > before:
        return None
    if row.get("scaling") is None and eflops is not None:
        c.warn(where, "scaling", None, "no scaling parameters: the scaling factor K is taken as 1")
    return c.build(where, GpuType, **common, eflops=eflops, scaling=scaling,
                   interruption_bucket=bucket, **sources)


def _read_quotas(c: _Collector, rows: object) -> tuple[Quota, ...]:
    if not isinstance(rows, list):
        c.error("(catalog)", "quotas", rows, "must be a list of {family, on_demand_vcpus, "
                "spot_vcpus}")
        return ()
    quotas: list[Quota] = []
    seen: set[str] = set()
    for where, row in c.object_rows(rows, "quotas"):
        family = c.text(row, where, "family")
        od = c.number(row, where, "on_demand_vcpus")
        spot = c.number(row, where, "spot_vcpus")
        if family is not None and family in seen:
            c.error(where, "family", family, "duplicate family")
            continue
        if family is not None:
            seen.add(family)
        if family is None or od is None or spot is None:
            continue
        quota = c.build(where, Quota, family=family, on_demand_vcpus=int(od),
                        spot_vcpus=int(spot))
        if quota is not None:
            quotas.append(quota)
    return tuple(quotas)


def _read_saturation(c: _Collector, rows: object) -> tuple[SaturationStep, ...] | None:
    """The valid steps, or ``None`` when ``rows`` is not a list at all (reported)."""
    if not isinstance(rows, list):
        c.error("(catalog)", "network_saturation", rows,
                "must be a non-empty list of {bandwidth_gbps, max_gpu_vms}")
        return None
    steps: list[SaturationStep] = []
    for where, row in c.object_rows(rows, "network_saturation"):
        bw = c.number(row, where, "bandwidth_gbps")
        n = c.number(row, where, "max_gpu_vms")
        if bw is not None and n is not None:
            step = c.build(where, SaturationStep, bandwidth_gbps=bw, serves_fewer_than=int(n))
            if step is not None:
                steps.append(step)
    return tuple(steps)


#: A catalog file must have a GPU VM type: one rule for ``deepvm catalog validate``, loading,
#: uploads and the dashboard's Catalog editor (a :class:`Catalog` built in code may be empty,
#: e.g. a region without those types in a comparison, and so may an export's rows).
NO_GPU_TYPES_MESSAGE: Final = "no GPU VM: a catalog needs at least one, or no cluster can be built"


def parse_catalog(data: object, source: str = "catalog", *,
                  require_gpu_types: bool = True) -> Catalog:
    """Validate a catalog in our format (a parsed JSON object) and build a :class:`Catalog`.

    A catalog without GPU VM types is invalid (:data:`NO_GPU_TYPES_MESSAGE`), unless
    ``require_gpu_types`` is False: only for the rows an export holds, which are the types its
    configurations use (none when nothing was feasible), not a catalog.

    Raises:
        CatalogError: listing every problem found (row, field, value, message).
    """
    c = _Collector()
    if not isinstance(data, Mapping):
        raise CatalogError([Problem("(file)", "(root)", type(data).__name__,
                                    "a catalog must be a JSON object")], source)
    version = data.get("schema_version")
    if isinstance(version, bool) or version not in READABLE_SCHEMA_VERSIONS:
        readable = " or ".join(str(v) for v in READABLE_SCHEMA_VERSIONS)
        c.error("(catalog)", "schema_version", version,
                f"must be {readable} (this program reads schema versions {readable} and writes "
                f"{SCHEMA_VERSION})")
    meta: dict[str, str] = {}
    for key in ("name", "provider", "region", "prices_date"):
        value = c.text(data, "(catalog)", key)
        meta[key] = value or ""
    source_text = data.get("source", "")
    if not isinstance(source_text, str):
        c.error("(catalog)", "source", source_text, "must be a text")
        source_text = ""

    too_many = [p for kind in ("gpu_types", "cpu_types") if isinstance(data.get(kind), list)
                and (p := row_count_problem(kind, len(data[kind]))) is not None]
    if too_many:  # refused before its rows are validated one by one
        raise CatalogError(too_many, source)
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
                gpu = _read_gpu_extras(c, i, row, common, buckets=version != 1)
                if gpu is not None:
                    gpus.append(gpu)
            elif common is not None:
                cpu = c.build(_row_label(kind, i, row), CpuType, **common)
                if cpu is not None:
                    cpus.append(cpu)

    if require_gpu_types and isinstance(data.get("gpu_types"), list) and not data["gpu_types"]:
        c.error("(catalog)", "gpu_types", [], NO_GPU_TYPES_MESSAGE)
    quotas = _read_quotas(c, data.get("quotas", []))
    saturation = _read_saturation(c, data.get("network_saturation"))
    for problem in catalog_problems(tuple(gpus), tuple(cpus), quotas, saturation or ()):
        if saturation is not None or problem.field != "network_saturation":
            c.errors.append(problem)

    if c.errors or saturation is None:
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


def json_problem(exc: JsonInputError) -> Problem:
    """The catalog problem of JSON text that was not read."""
    return Problem(exc.where, "(json)", exc.value, exc.reason)


def catalog_from_json_text(text: str | bytes, source: str = "catalog") -> Catalog:
    """Parse JSON text in either format (ours or the artifact's) and validate it.

    Problems found in an artifact file name the artifact's rows and fields. The text is read
    within bounds (:func:`deepvm_core.catalog.json_input.parse_json_bounded`): at most
    :data:`~deepvm_core.catalog.schema.MAX_CATALOG_BYTES` bytes and
    :data:`~deepvm_core.catalog.json_input.MAX_JSON_DEPTH` levels of nesting.

    Raises:
        CatalogError: too large, too deeply nested, not text, malformed JSON (with line and
            column), or an invalid catalog.
    """
    try:
        data = parse_json_bounded(text, max_bytes=MAX_CATALOG_BYTES)
    except JsonInputError as exc:
        raise CatalogError([json_problem(exc)], source) from None
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
