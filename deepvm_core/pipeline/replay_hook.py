"""Planning against spot markets (issue 15, step 4, core only): backtest every configuration
of a GPU type that has pools, in the pool order the contract gives.

For each configuration with spot VMs of a GPU type g that has pools:

1. **Order.** Each of g's pools alone (policy ``wait``) gives the configuration's backtest mean
   makespan; the pools are ordered by it, ascending, ties by zone name.
2. **Evaluate.** The backtest of the chosen recovery policy (``failover`` by default; ``wait``
   uses the first pool of that order; ``deadline`` needs a deadline) over that order gives the
   mean makespan and cost, the makespan's P10/P50/P90, the cost's P90 and the share of runs
   that meet the deadline.

Configurations of types without pools, and clusters without spot VMs, keep the closed form
(``evaluated`` False). The job of configuration c in pool p (``job-model.md``, ``traces.md``):
K = its checkpoints, ``s = (τ + δ) / 3600`` and ``s_last`` hours, R; ``P = P_c - n_spot
spot(g) + n_spot spot(g, zone)`` (the pool's zone price), ``P_od`` its on-demand part and
``P_fallback = P_od + n_spot on_demand(g)``. Configurations that share an order are replayed
together (one vectorised backtest per distinct order).

:func:`~deepvm_core.pipeline.plan.plan_job` takes it as its ``replay`` hook
(:func:`replay_hook`): the backtested candidates then carry the backtest's mean makespan and
cost, its percentiles and deadline share, ``evaluated_by`` = ``backtest``, their ``pools`` and
the ``recovery`` policy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from deepvm_core.catalog import Catalog
from deepvm_core.job.backtest import DEFAULT_STARTS, BacktestJob, RecoveryPolicy
from deepvm_core.job.backtest_replay import backtest
from deepvm_core.job.inputs import ClusterArrays, JobInputs
from deepvm_core.job.result import ReplayEstimates
from deepvm_core.market.pools import Pool, check_pools
from deepvm_core.market.trace import TraceError
from deepvm_core.units import SECONDS_PER_HOUR

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


def _job(catalog: Catalog, clusters: ClusterArrays, inputs: JobInputs, rows: npt.NDArray[
        np.int64], pools: Sequence[Pool]) -> BacktestJob:
    gpu = catalog.gpu_types[int(clusters.gpu_index[rows[0]])]
    n = clusters.n_spot[rows].astype(np.float64)[:, None]
    width = len(pools)

    def col(x: FloatArray) -> FloatArray:
        return np.repeat(np.asarray(x, dtype=np.float64)[rows, None], width, axis=1)

    zone = np.array([p.spot_usd_per_hour for p in pools])[None, :]
    od_part = clusters.on_demand_usd_per_hour[rows, None]
    return BacktestJob(
        full_segments=inputs.checkpoints[rows],
        full_segment_hours=col((inputs.checkpoint_interval_seconds
                                + inputs.checkpoint_stall_seconds) / SECONDS_PER_HOUR),
        last_segment_hours=col(inputs.last_segment_seconds / SECONDS_PER_HOUR),
        restart_hours=col(inputs.restart_hours),
        spot_vms=np.repeat(clusters.n_spot[rows, None], width, axis=1),
        price_usd_per_hour=clusters.price_usd_per_hour[rows, None]
        - n * gpu.spot_usd_per_hour + n * zone,
        on_demand_usd_per_hour=np.repeat(od_part, width, axis=1),
        fallback_usd_per_hour=np.repeat(od_part + n * gpu.on_demand_usd_per_hour, width,
                                        axis=1))


def _columns(job: BacktestJob, order: npt.NDArray[np.int64]) -> BacktestJob:
    return BacktestJob(**{name: getattr(job, name) if name == "full_segments"
                          else getattr(job, name)[:, order]
                          for name in job.__dataclass_fields__})


def backtest_candidates(catalog: Catalog, clusters: ClusterArrays, inputs: JobInputs,
                        pools: Sequence[Pool], *, recovery: RecoveryPolicy = "failover",
                        deadline_hours: float | None = None,
                        starts: int = DEFAULT_STARTS) -> ReplayEstimates:
    """Backtest the configurations of every GPU type that has pools (module docstring).

    Raises:
        TraceError: a pool's type not in the catalog, a pool twice, pools of one type whose
            traces differ in length or tick, a cluster larger than a count trace allows, a
            deadline policy without a deadline.
    """
    if recovery == "deadline" and deadline_hours is None:
        raise TraceError("recovery", "the deadline policy needs a deadline")
    check_names = {p.name for p in pools}
    if len(check_names) != len(pools):
        check_pools(list(pools))
    size = clusters.size
    out = {name: np.full(size, np.nan) for name in (
        "mean", "p10", "p50", "p90", "cost", "cost_p10", "cost_p50", "cost_p90", "events",
        "met")}
    runs_per = 0
    evaluated = np.zeros(size, dtype=bool)
    names: list[tuple[str, ...]] = [()] * size
    by_gpu: dict[str, list[Pool]] = {}
    for p in pools:
        by_gpu.setdefault(p.gpu, []).append(p)
    index = {g.name: i for i, g in enumerate(catalog.gpu_types)}
    for gpu, group in by_gpu.items():
        if gpu not in index:
            raise TraceError("pool", f"{group[0].name!r}: no GPU type {gpu!r} in catalog "
                                     f"{catalog.name!r}")
        check_pools(group)
        rows = np.flatnonzero((clusters.gpu_index == index[gpu]) & (clusters.n_spot > 0))
        if rows.size == 0:
            continue
        job = _job(catalog, clusters, inputs, rows, group)
        alone = np.stack([backtest([p.trace], _columns(job, np.array([i])), policy="wait",
                                   starts=starts).makespan_hours.mean(axis=1)
                          for i, p in enumerate(group)], axis=1)
        zone_rank = np.argsort(np.argsort([p.zone for p in group], kind="stable"))
        order = np.lexsort((np.broadcast_to(zone_rank, alone.shape), alone), axis=1)
        distinct, which = np.unique(order, axis=0, return_inverse=True)
        for k, perm in enumerate(distinct):
            sub = np.flatnonzero(which.ravel() == k)
            used = perm[:1] if recovery == "wait" else perm
            runs = backtest([group[i].trace for i in used], _columns(job.rows(sub), used),
                            policy=recovery, deadline_hours=deadline_hours, starts=starts)
            s = runs.summary()
            runs_per = s.runs
            at = rows[sub]
            out["cost_p10"][at], out["cost_p50"][at] = np.percentile(runs.cost_usd, (10.0, 50.0),
                                                                     axis=1)
            out["mean"][at], out["p10"][at] = s.mean_makespan_hours, s.makespan_p10_hours
            out["p50"][at], out["p90"][at] = s.makespan_p50_hours, s.makespan_p90_hours
            out["cost"][at], out["cost_p90"][at] = s.mean_cost_usd, s.cost_p90_usd
            out["events"][at] = s.mean_interruptions
            if s.deadline_met is not None:
                out["met"][at] = s.deadline_met
            label = tuple(group[i].name for i in perm)
            for r in at:
                names[int(r)] = label
            evaluated[at] = True
    return ReplayEstimates(
        recovery=recovery, runs=runs_per, evaluated=evaluated, pools=tuple(names),
        mean_makespan_hours=out["mean"], makespan_p10_hours=out["p10"],
        makespan_p50_hours=out["p50"], makespan_p90_hours=out["p90"],
        mean_cost_usd=out["cost"], cost_p10_usd=out["cost_p10"], cost_p50_usd=out["cost_p50"],
        cost_p90_usd=out["cost_p90"], mean_interruptions=out["events"],
        deadline_met=None if deadline_hours is None else out["met"])


def replay_hook(catalog: Catalog, pools: Sequence[Pool], *, recovery: RecoveryPolicy = "failover",
                deadline_hours: float | None = None, starts: int = DEFAULT_STARTS,
                ) -> Callable[[ClusterArrays, JobInputs], ReplayEstimates]:
    """The ``replay`` argument of :func:`~deepvm_core.pipeline.plan.plan_job` for ``pools``."""
    def hook(clusters: ClusterArrays, inputs: JobInputs) -> ReplayEstimates:
        return backtest_candidates(catalog, clusters, inputs, pools, recovery=recovery,
                                   deadline_hours=deadline_hours, starts=starts)
    return hook
