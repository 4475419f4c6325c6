"""A planned cluster replayed on spot pools (``traces.md``, "Backtest"): the one place that turns
a plan's chosen configuration into the job the backtest replays, for ``deepvm backtest`` (from a
plan file, read by :mod:`deepvm_core.io.plan_reader`) and the Spot markets page (from the plan in
memory, :meth:`PlannedCluster.of_estimate`).

The job (``traces.md``): K full segments of ``τ + δ`` hours, the last of ``T_c - K τ`` hours;
per pool, the cluster at that pool's spot price, ``P = P_od + s · spot_pool`` with ``P_od`` the
price less its ``s`` spot VMs at the catalog's spot price; on fallback every VM on demand,
``P_fallback = P_od + s · on_demand``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from deepvm_core.catalog import Catalog
from deepvm_core.errors import DeepVMError
from deepvm_core.job.backtest import (
    RECOVERY_POLICIES,
    BacktestJob,
    RecoveryPolicy,
    TimeBudget,
)
from deepvm_core.job.backtest_replay import backtest
from deepvm_core.job.backtest_runs import BacktestRuns
from deepvm_core.job.estimate import PlanEstimate
from deepvm_core.market.pools import Pool, pool_gpu
from deepvm_core.market.trace import TraceError
from deepvm_core.units import SECONDS_PER_HOUR


@dataclass(frozen=True)
class PlannedCluster:
    """What a backtest needs of a planned configuration.

    Attributes:
        gpu: the GPU type (``p3.2xlarge``).
        spot_vms: s, its spot GPU VMs (>= 1).
        hourly_price_usd: P, the whole cluster's price, USD per hour.
        compute_hours: T_c, compute hours without checkpoints or failures.
        checkpoint_stall_hours: δ, hours one checkpoint stalls training.
        checkpoints: K, checkpoints taken.
        checkpoint_interval_hours: τ, compute hours between checkpoints (T_c when K = 0).
        summary: the configuration in words.
    """

    gpu: str
    spot_vms: int
    hourly_price_usd: float
    compute_hours: float
    checkpoint_stall_hours: float
    checkpoints: int
    checkpoint_interval_hours: float
    summary: str = ""

    def __post_init__(self) -> None:
        if self.spot_vms < 1:
            raise DeepVMError("the configuration has no spot VMs: nothing to replay")
        if self.last_segment_hours <= 0:
            raise DeepVMError(f"the configuration's checkpoints ({self.checkpoints}) and "
                              "interval do not fit its compute hours")

    @property
    def last_segment_hours(self) -> float:
        """``T_c - K τ``: the compute after the last checkpoint."""
        if not self.checkpoints:
            return self.compute_hours
        return self.compute_hours - self.checkpoints * self.checkpoint_interval_hours

    @classmethod
    def of_estimate(cls, estimate: PlanEstimate) -> PlannedCluster:
        """The planned cluster of one of the plan's estimates."""
        c = estimate.configuration
        interval_s = estimate.checkpoint_interval_seconds
        compute = estimate.compute_hours
        return cls(gpu=c.gpu, spot_vms=c.gpu_spot, hourly_price_usd=c.hourly_price_usd,
                   compute_hours=compute,
                   checkpoint_stall_hours=estimate.checkpoint_stall_seconds / SECONDS_PER_HOUR,
                   checkpoints=estimate.checkpoints,
                   checkpoint_interval_hours=(compute if not math.isfinite(interval_s)
                                              else interval_s / SECONDS_PER_HOUR),
                   summary=c.describe())


def backtest_job(catalog: Catalog, cluster: PlannedCluster, pools: Sequence[Pool],
                 restart_hours: float) -> tuple[dict[str, Any], BacktestJob]:
    """The job that replays ``cluster`` on ``pools`` (failover order) and its inputs as a
    JSON-ready dict (``deepvm backtest``'s ``inputs``).

    Raises:
        TraceError: a pool is not of the cluster's GPU type.
    """
    for p in pools:
        if p.gpu != cluster.gpu:
            raise TraceError("pool", f"{p.name!r}: the plan's chosen configuration runs on "
                                     f"{cluster.gpu}, not {p.gpu}")
    row = pool_gpu(catalog, cluster.gpu, f"{cluster.gpu}@*")
    spot = cluster.spot_vms
    od_part = max(cluster.hourly_price_usd - spot * row.spot_usd_per_hour, 0.0)
    fallback = od_part + spot * row.on_demand_usd_per_hour
    prices = [od_part + spot * p.spot_usd_per_hour for p in pools]
    width = len(pools)
    segment = cluster.checkpoint_interval_hours + cluster.checkpoint_stall_hours
    job = BacktestJob(
        full_segments=np.array([cluster.checkpoints]),
        full_segment_hours=np.full((1, width), segment),
        last_segment_hours=np.full((1, width), cluster.last_segment_hours),
        restart_hours=np.full((1, width), restart_hours),
        spot_vms=np.full((1, width), spot, dtype=np.int64),
        price_usd_per_hour=np.array([prices]), on_demand_usd_per_hour=np.full((1, width), od_part),
        fallback_usd_per_hour=np.full((1, width), fallback))
    interval = cluster.checkpoint_interval_hours
    inputs = {"spot_vms": spot, "compute_hours": cluster.compute_hours,
              "checkpoint_interval_hours": (interval if cluster.checkpoints
                                            and math.isfinite(interval) else None),
              "checkpoint_stall_hours": cluster.checkpoint_stall_hours,
              "restart_hours": restart_hours, "cluster_usd_per_hour": cluster.hourly_price_usd,
              "on_demand_part_usd_per_hour": od_part, "fallback_usd_per_hour": fallback}
    return inputs, job


def replay(catalog: Catalog, cluster: PlannedCluster, pools: Sequence[Pool],
           restart_hours: float, policy: RecoveryPolicy, *, deadline_hours: float | None = None,
           starts: int, budget: TimeBudget | None = None) -> tuple[dict[str, Any], BacktestRuns]:
    """``cluster`` replayed on ``pools`` under ``policy`` (``wait`` uses the first pool): the
    inputs and the runs (``budget``: as :func:`~deepvm_core.job.backtest_replay.backtest`)."""
    inputs, job = backtest_job(catalog, cluster, pools, restart_hours)
    used = 1 if policy == "wait" else len(pools)
    runs = backtest([p.trace for p in pools[:used]], job.first_pools(used), policy=policy,
                    deadline_hours=deadline_hours, starts=starts, budget=budget)
    return inputs, runs


@dataclass(frozen=True)
class PolicyBacktests:
    """A cluster replayed under every recovery policy.

    Attributes:
        runs: the runs of each policy that could replay, in :data:`RECOVERY_POLICIES` order.
        cannot: why each other policy could not (``wait`` on a pool whose up spells are all
            shorter than a segment plus its restart, say), in the same order.
    """

    runs: dict[RecoveryPolicy, BacktestRuns]
    cannot: dict[RecoveryPolicy, str]


def policy_backtests(catalog: Catalog, cluster: PlannedCluster, pools: Sequence[Pool],
                     restart_hours: float, deadline_hours: float, starts: int, *,
                     budget: TimeBudget | None = None) -> PolicyBacktests:
    """``cluster`` replayed on ``pools`` (failover order) under every recovery policy, all
    within ``budget`` (raises :class:`~deepvm_core.job.backtest.BacktestBudgetError` past
    it). A policy that cannot replay on these pools is said for that policy alone: the others
    still answer (issue 27: "under the wait policy the job never finishes" stood for the whole
    table when the user had chosen failover)."""
    runs: dict[RecoveryPolicy, BacktestRuns] = {}
    cannot: dict[RecoveryPolicy, str] = {}
    for policy in RECOVERY_POLICIES:
        try:
            runs[policy] = replay(catalog, cluster, pools, restart_hours, policy,
                                  deadline_hours=deadline_hours, starts=starts,
                                  budget=budget)[1]
        except TraceError as exc:  # (not the budget's error: that stops them all)
            cannot[policy] = str(exc)
    return PolicyBacktests(runs, cannot)
