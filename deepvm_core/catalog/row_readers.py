"""The readers of a raw catalog's rows (parsed JSON, our format): instance types, a GPU type's
eFLOPS, scaling fit and interruption bucket, quotas and the saturation table.

Each reader checks every field of its row by the rules of
:data:`~deepvm_core.catalog.rules.RULES` and records every problem in a :class:`Collector`
(row, field, value, message) instead of stopping at the first; a row with errors is left out
and its problems reported. Soft problems (a spot price above the on-demand price, a GPU type
without eFLOPS or without scaling parameters) are collected as warnings. The whole catalog is
read by :func:`deepvm_core.catalog.validation.parse_catalog`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, TypeVar

from deepvm_core.catalog.artifact import ARTIFACT_ROW
from deepvm_core.catalog.rules import RULES
from deepvm_core.catalog.types import GpuType, Quota, SaturationStep, ScalingParams
from deepvm_core.errors import CatalogError, Problem

T = TypeVar("T")


class Collector:
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


def row_label(kind: str, index: int, row: object) -> str:
    """How problems name a row: ``gpu_types[3] (g4dn.xlarge)``; a row converted from the
    artifact's format by its own place, ``instances[7] (...)``."""
    name = row.get("name") if isinstance(row, Mapping) else None
    if isinstance(row, Mapping) and isinstance(row.get(ARTIFACT_ROW), int):
        kind, index = "instances", row[ARTIFACT_ROW]
    return f"{kind}[{index}]" + (f" ({name})" if isinstance(name, str) and name else "")


def _read_zone_prices(
    c: Collector, row: Mapping[str, Any], where: str
) -> dict[str, float] | None:
    raw = row.get("spot_by_zone_usd_per_hour")
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        c.error(where, "spot_by_zone_usd_per_hour", raw, "must be an object {zone: USD/hour}")
        return None
    zones: dict[str, float] = {}
    for zone, price in raw.items():
        value = c.number({zone: price}, where + ".spot_by_zone_usd_per_hour", zone,
                         rule="spot_by_zone_usd_per_hour")
        if value is not None:
            zones[str(zone)] = value
    return zones


def read_instance(
    c: Collector, kind: str, index: int, row: object
) -> dict[str, Any] | None:
    """Validate the fields common to GPU and CPU rows; ``None`` when the row is unusable."""
    where = row_label(kind, index, row)
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


def _read_scaling(c: Collector, row: Mapping[str, Any], where: str) -> ScalingParams | None:
    raw = row.get("scaling")
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        c.error(where, "scaling", raw, "must be an object {a, b, c} or null")
        return None
    prefixed = {f"scaling.{k}": raw.get(k) for k in ("a", "b", "c")}
    a, b, c_ = (c.number(prefixed, where, f"scaling.{k}") for k in ("a", "b", "c"))
    if a is None or b is None or c_ is None:
        return None
    return c.build(where, ScalingParams, a=a, b=b, c=c_)


def _read_bucket(c: Collector, row: Mapping[str, Any], where: str) -> int | None:
    """``interruption_bucket``: a whole number 0..4 (read like every number: ``3.0`` is 3), or
    null or absent (unknown)."""
    value = c.number(row, where, "interruption_bucket", required=False)
    return None if value is None else int(value)


def read_gpu_extras(
    c: Collector, index: int, row: object, common: dict[str, Any] | None, *, buckets: bool
) -> GpuType | None:
    """Validate eFLOPS, scaling and (``buckets``: schema version 2 on) the interruption bucket
    of a GPU row; the :class:`GpuType`, or ``None`` on errors."""
    if not isinstance(row, Mapping):
        return None
    where = row_label("gpu_types", index, row)
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


def read_quotas(c: Collector, rows: object) -> tuple[Quota, ...]:
    """The valid quotas of ``rows`` (one per family; the problems of the others recorded)."""
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


def read_saturation(c: Collector, rows: object) -> tuple[SaturationStep, ...] | None:
    """The valid steps, or ``None`` when ``rows`` is not a list at all (reported)."""
    if not isinstance(rows, list):
        c.error("(catalog)", "network_saturation", rows,
                "must be a non-empty list of {bandwidth_gbps, max_gpu_vms}")
        return None
    steps: list[SaturationStep] = []
    for i, row in enumerate(rows):
        where = f"network_saturation[{i}]"
        if not isinstance(row, Mapping):
            c.error(where, "(row)", row, "must be an object")
            continue
        bw = c.number(row, where, "bandwidth_gbps")
        n = c.number(row, where, "max_gpu_vms")
        if bw is not None and n is not None:
            step = c.build(where, SaturationStep, bandwidth_gbps=bw, serves_fewer_than=int(n))
            if step is not None:
                steps.append(step)
    return tuple(steps)

