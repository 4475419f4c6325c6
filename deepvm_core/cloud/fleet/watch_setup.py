"""The ``start`` record of a watched plan (:class:`~deepvm_core.cloud.fleet.ledger.WatchSetup`)
from its plan JSON: the job the plan priced (:func:`~deepvm_core.io.plan_reader.planned_cluster`)
and its prices per pool, from the one place that prices a cluster in a pool for the backtest
(:func:`~deepvm_core.pipeline.backtest_plan.backtest_job`, each pool priced from its region's
catalog)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from deepvm_core.catalog.store import load_catalog
from deepvm_core.cloud.fleet.ledger import WatchSetup
from deepvm_core.cloud.fleet.target import FleetPlan
from deepvm_core.errors import DeepVMError
from deepvm_core.io.plan_reader import plan_field, planned_cluster
from deepvm_core.market.pool_prices import make_regional_pool
from deepvm_core.market.trace import SpotTrace
from deepvm_core.pipeline.backtest_plan import backtest_job


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        else None


def watch_setup(doc: dict[str, Any], path: str, plan: FleetPlan, *, region: str, policy: str,
                deadline_hours: float | None, interval_seconds: float, started_at: float,
                zones: Sequence[str]) -> WatchSetup:
    """What ``deepvm watch`` records first: ``doc`` is the plan JSON at ``path`` (launched as
    ``plan``); ``zones`` the pools' zones in failover order.

    Raises:
        DeepVMError: a field of the plan is missing or out of range, no zone, a type the
            pools' catalogs do not price.
    """
    if not zones:
        raise DeepVMError(f"{path}: the plan has no spot pools (chosen.estimate.pools) and no "
                          "spot worker runs: launch it first ('deepvm launch ... --yes')")
    cluster = planned_cluster(doc, path)
    catalog = load_catalog(str(plan_field(doc, path, "catalog", "name")))
    restart = float(plan_field(doc, path, "assumptions", "restart_hours"))
    dummy = SpotTrace("price only", 3600.0, np.ones(1, dtype=np.int64))
    pools = [make_regional_pool(catalog, f"{cluster.gpu}@{z}", dummy) for z in zones]
    inputs, job = backtest_job(catalog, cluster, pools, restart)
    est = doc["chosen"].get("estimate") or {}
    part = plan.on_demand
    return WatchSetup(
        plan_id=plan.plan_id, region=region, plan_file=path, policy=policy,
        deadline_hours=deadline_hours, interval_seconds=interval_seconds,
        started_at=started_at, instance_type=cluster.gpu, spot_vms=cluster.spot_vms,
        pools=tuple(zones), full_segments=int(job.full_segments[0]),
        segment_hours=float(job.full_segment_hours[0, 0]),
        last_segment_hours=float(job.last_segment_hours[0, 0]), restart_hours=restart,
        spot_usd_per_hour=tuple(float(x) for x in job.price_usd_per_hour[0]),
        on_demand_part_usd_per_hour=float(inputs["on_demand_part_usd_per_hour"]),
        fallback_usd_per_hour=float(inputs["fallback_usd_per_hour"]),
        on_demand_part=None if part is None else (part.role, part.instance_type, part.count),
        plan_makespan_p10_hours=_number(est.get("makespan_hours_p10")),
        plan_makespan_p90_hours=_number(est.get("makespan_hours_p90")),
        plan_cost_p10_usd=_number(est.get("cost_usd_p10")),
        plan_cost_p90_usd=_number(est.get("cost_usd_p90")), summary=cluster.summary)
