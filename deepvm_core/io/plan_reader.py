"""Reading a plan file (``deepvm plan --format json``) back: the document, checked to be a plan
with a chosen configuration, and that configuration as a
:class:`~deepvm_core.pipeline.backtest_plan.PlannedCluster`. A file may hold anything: every field
is checked, and a bad one is named with the file and its value."""

from __future__ import annotations

import math
from typing import Any

from deepvm_core.catalog import Catalog
from deepvm_core.catalog.json_input import JsonInputError, read_json_file
from deepvm_core.catalog.schema import MAX_CATALOG_BYTES
from deepvm_core.errors import DeepVMError
from deepvm_core.model import MAX_NODES
from deepvm_core.pipeline.backtest_plan import PlannedCluster
from deepvm_core.units import SECONDS_PER_HOUR
from deepvm_core.workload.workload import MAX_RESTART_HOURS


def read_plan(path: str) -> dict[str, Any]:
    """The plan document at ``path``.

    Raises:
        DeepVMError: unreadable, not JSON, too large, not a plan, or no chosen configuration.
    """
    try:
        doc = read_json_file(path, max_bytes=MAX_CATALOG_BYTES)
    except JsonInputError as exc:
        raise DeepVMError(f"{path}: {exc.reason if exc.where == '(file)' else exc}") from None
    if not isinstance(doc, dict) or doc.get("kind") != "job-plan":
        raise DeepVMError(f"{path}: not a plan (deepvm plan --format json): kind must be "
                          "'job-plan'")
    if not isinstance(doc.get("chosen"), dict):
        raise DeepVMError(f"{path}: the plan has no chosen configuration to replay")
    return doc


def plan_field(doc: dict[str, Any], path: str, *keys: str) -> Any:
    """``doc[keys[0]][keys[1]]...``, or an error naming the missing dotted key."""
    value: Any = doc
    for key in keys:
        if not isinstance(value, dict) or key not in value:
            raise DeepVMError(f"{path}: {'.'.join(keys)} is missing")
        value = value[key]
    return value


def _positive(path: str, name: str, value: Any, *, allow_zero: bool = False) -> float:
    if (isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)
            or value < 0 or (value == 0 and not allow_zero)):
        raise DeepVMError(f"{path}: {name} = {value!r}: must be a finite number "
                          f"{'>= 0' if allow_zero else '> 0'}")
    return float(value)


def _whole(path: str, name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise DeepVMError(f"{path}: {name} = {value!r}: must be a whole number >= 0")
    return value


def plan_restart_hours(doc: dict[str, Any], path: str) -> float:
    """The plan's restart R (``assumptions.restart_hours``), hours, in [0,
    :data:`~deepvm_core.workload.workload.MAX_RESTART_HOURS`] as a plan accepts it.

    Raises:
        DeepVMError: missing, not a number, or out of range (named with ``path``).
    """
    value = plan_field(doc, path, "assumptions", "restart_hours")
    hours = _positive(path, "assumptions.restart_hours", value, allow_zero=True)
    if hours > MAX_RESTART_HOURS:
        raise DeepVMError(f"{path}: assumptions.restart_hours = {value!r}: must be at most "
                          f"{MAX_RESTART_HOURS:g} h, as a plan accepts")
    return hours


def check_plan_price(cluster: PlannedCluster, catalog: Catalog, path: str) -> None:
    """The chosen cluster's hourly price is one a cluster of the catalog can have: at most
    :data:`~deepvm_core.model.MAX_NODES` VMs of its dearest type on demand.

    Raises:
        DeepVMError: ``chosen.hourly_price`` above that (named with ``path``).
    """
    dearest = max((t.on_demand_usd_per_hour for t in (*catalog.gpu_types, *catalog.cpu_types)),
                  default=0.0)
    if cluster.hourly_price_usd > MAX_NODES * dearest:
        raise DeepVMError(f"{path}: chosen.hourly_price = {cluster.hourly_price_usd!r}: more "
                          f"than {MAX_NODES:,} VMs of catalog {catalog.name}'s dearest type "
                          f"cost ({MAX_NODES * dearest:,.2f} USD/h)")


def planned_cluster(doc: dict[str, Any], path: str) -> PlannedCluster:
    """The plan's chosen configuration, checked field by field.

    Raises:
        DeepVMError: a field is missing or out of range (named with ``path``).
    """
    chosen = doc["chosen"]
    est = plan_field(doc, path, "chosen", "estimate")
    gpu = plan_field(doc, path, "chosen", "gpu", "name")
    spot = _whole(path, "chosen.gpu.spot", plan_field(doc, path, "chosen", "gpu", "spot"))
    if spot == 0:
        raise DeepVMError(f"{path}: the chosen configuration has no spot VMs: nothing to replay")
    if spot > MAX_NODES:
        raise DeepVMError(f"{path}: chosen.gpu.spot = {spot!r}: must be at most {MAX_NODES:,} "
                          "VMs")
    price = _positive(path, "chosen.hourly_price", chosen.get("hourly_price"))
    compute = _positive(path, "chosen.estimate.compute_hours", est.get("compute_hours"))
    stall = _positive(path, "chosen.estimate.checkpoint_stall_seconds",
                      est.get("checkpoint_stall_seconds"), allow_zero=True) / SECONDS_PER_HOUR
    count = _whole(path, "chosen.estimate.checkpoints", est.get("checkpoints"))
    interval_s = est.get("checkpoint_interval_seconds")
    interval = compute if interval_s is None else _positive(
        path, "chosen.estimate.checkpoint_interval_seconds", interval_s) / SECONDS_PER_HOUR
    try:
        return PlannedCluster(gpu=str(gpu), spot_vms=spot, hourly_price_usd=price,
                              compute_hours=compute, checkpoint_stall_hours=stall,
                              checkpoints=count, checkpoint_interval_hours=interval,
                              summary=str(chosen.get("summary", "")))
    except DeepVMError as exc:
        raise DeepVMError(f"{path}: {exc}") from None
