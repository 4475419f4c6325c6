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
(``evaluated`` False). A pool serves a configuration only if the cluster fits its count trace
and an attempt after an interruption (R plus its longest segment) fits in the pool's longest
up time (the trace read in a loop, as the replay does); a configuration no pool serves is
refused with the reason (``refusals``: infeasible, the rest is planned).

The job of configuration c in pool p (``job-model.md``, ``traces.md``):
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

import math
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from deepvm_core.arrays import FloatArray, IntArray
from deepvm_core.catalog import Catalog
from deepvm_core.job.backtest import DEFAULT_STARTS, BacktestJob, RecoveryPolicy, TimeBudget
from deepvm_core.job.backtest_replay import backtest, backtest_markets
from deepvm_core.job.backtest_runs import BacktestRuns
from deepvm_core.job.estimate import ReplayEstimates
from deepvm_core.job.forecast import Forecast, forecast, trace_model
from deepvm_core.job.forecast_scenarios import scenario_markets
from deepvm_core.job.inputs import ClusterArrays, JobInputs
from deepvm_core.job.recovery import DEADLINE_POLICIES, RECOVERY_POLICIES
from deepvm_core.market.pools import Pool, check_pools
from deepvm_core.market.trace import SpotTrace, TraceError
from deepvm_core.market.trace_stats import longest_up_hours
from deepvm_core.market.window import DEFAULT_WINDOW_DAYS, recent_window
from deepvm_core.units import SECONDS_PER_HOUR


def _job(catalog: Catalog, clusters: ClusterArrays, inputs: JobInputs, rows: IntArray,
         pools: Sequence[Pool]) -> BacktestJob:
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


def _columns(job: BacktestJob, order: IntArray) -> BacktestJob:
    return BacktestJob(**{name: getattr(job, name) if name == "full_segments"
                          else getattr(job, name)[:, order]
                          for name in job.__dataclass_fields__})


def _refusal(gpu: str, spot_vms: int, group: Sequence[Pool]) -> str:
    tops = ", ".join(f"{p.name} {p.trace.max_count}" for p in group)
    return (f"a cluster of {spot_vms} spot VMs does not fit {gpu}'s count traces (largest "
            f"counts: {tops}): it can never run on them")


def _too_long(gpu: str, need_hours: float, group: Sequence[Pool],
              longest: Sequence[float]) -> str:
    ups = ", ".join(f"{p.name} {h:.3g} h" for p, h in zip(group, longest, strict=True))
    return (f"a segment plus its restart ({need_hours:.3g} h) is longer than {gpu}'s pools ever "
            f"stay up (longest up time: {ups}): after an interruption it never finishes")


def _spread_runs(job: BacktestJob, group: Sequence[Pool], used: list[int],
                 levels: tuple[int, ...], recovery: RecoveryPolicy,
                 deadline_hours: float | None, starts: int,
                 markets: dict[tuple[int, int], list[SpotTrace]],
                 budget: TimeBudget | None = None) -> tuple[FloatArray, FloatArray]:
    """The band's runs (makespan, cost; rows x runs) of ``job`` replayed over the pools
    ``used`` (failover order) under every scenario of their windows
    (:func:`~deepvm_core.job.forecast_scenarios.scenario_markets`, each pool's own factors, the same
    sub-window for every pool), in one replay of every scenario at once; a run that never
    finishes (no pool of its scenario is ever up, or its attempts never fit) is infinite;
    ``levels``: the count each used pool needs (cached in ``markets``)."""
    for i, level in zip(used, levels, strict=True):
        if (i, level) not in markets:
            markets[(i, level)] = scenario_markets(group[i].trace, level)
    flat = BacktestJob(**{**{f: getattr(job, f) for f in job.__dataclass_fields__},
                          "spot_vms": np.ones_like(job.spot_vms)})
    sub = _columns(flat, np.array(used))
    count = len(markets[(used[0], levels[0])])
    per = min(math.ceil(starts / count), group[used[0]].trace.ticks)  # about ``starts`` in all
    runs = backtest_markets([[markets[(i, level)][j] for i, level in zip(used, levels,
                                                                         strict=True)]
                             for j in range(count)], sub, policy=recovery,
                            deadline_hours=deadline_hours, starts=per, never_finishing=True,
                            budget=budget)
    return runs.makespan_hours, runs.cost_usd


def _rows_of(runs: BacktestRuns, rows: IntArray) -> BacktestRuns:
    """The runs of configurations ``rows`` only."""
    return replace(runs, **{name: getattr(runs, name)[rows] for name in (
        "makespan_hours", "cost_usd", "spot_hours", "wait_hours", "on_demand_hours",
        "interruptions", "fell_back")})


def _percentiles(x: FloatArray) -> FloatArray:
    """P10, P50, P90 of each row, a never-finishing (infinite) run counting as the longest."""
    big = np.finfo(np.float64).max / 4
    q = np.percentile(np.where(np.isinf(x), big, x), (10.0, 50.0, 90.0), axis=1)
    return np.asarray(np.where(q > 1e300, np.inf, q), dtype=np.float64)


def backtest_candidates(catalog: Catalog, clusters: ClusterArrays, inputs: JobInputs,
                        pools: Sequence[Pool], *, recovery: RecoveryPolicy = "failover",
                        deadline_hours: float | None = None,
                        starts: int = DEFAULT_STARTS,
                        model: str | None = None,
                        window_days: float | None = DEFAULT_WINDOW_DAYS,
                        per_vm_share: float = 0.0, spread: bool = True,
                        seed: int = 0, budget: TimeBudget | None = None) -> ReplayEstimates:
    """Evaluate the configurations of every GPU type that has pools (module docstring) on the
    last ``window_days`` days of each trace (``None``: whole traces) with ``model``
    (:func:`~deepvm_core.job.forecast.trace_model`: ``None`` is the evaluation's best, or the
    replay for the deadline policy); bands with the scenarios of
    :mod:`deepvm_core.job.forecast` unless ``spread`` is False.

    Raises:
        TraceError: a pool's type not in the catalog, a pool twice, pools of one type whose
            traces differ in length or tick, a deadline policy without a deadline or with a
            model other than the replay.
    """
    if recovery in DEADLINE_POLICIES and deadline_hours is None:
        raise TraceError("recovery", f"the {recovery} policy needs a deadline")
    model = trace_model(model, recovery)
    check_names = {p.name for p in pools}
    if len(check_names) != len(pools):
        check_pools(list(pools))
    pools = [replace(p, trace=recent_window(p.trace, window_days)) for p in pools]
    size = clusters.size
    out = {name: np.full(size, np.nan) for name in (
        "mean", "p10", "p50", "p90", "cost", "cost_p10", "cost_p50", "cost_p90", "events",
        "met")}
    runs_per = 0
    evaluated = np.zeros(size, dtype=bool)
    names: list[tuple[str, ...]] = [()] * size
    refusals: list[str | None] = [None] * size
    by_gpu: dict[str, list[Pool]] = {}
    for p in pools:
        by_gpu.setdefault(p.gpu, []).append(p)
    index = {g.name: i for i, g in enumerate(catalog.gpu_types)}

    def store(at: IntArray, label: list[tuple[str, ...]], mean: FloatArray, cost: FloatArray,
              events: FloatArray, makespan_runs: FloatArray, cost_runs: FloatArray) -> None:
        out["mean"][at], out["cost"][at], out["events"][at] = mean, cost, events
        out["p10"][at], out["p50"][at], out["p90"][at] = _percentiles(makespan_runs)
        out["cost_p10"][at], out["cost_p50"][at], out["cost_p90"][at] = _percentiles(cost_runs)
        if deadline_hours is not None:
            out["met"][at] = np.mean(makespan_runs <= deadline_hours + 1e-9, axis=1)
        for r, names_of in zip(at, label, strict=True):
            names[int(r)] = names_of
        evaluated[at] = True

    for gpu, group in by_gpu.items():
        if gpu not in index:
            raise TraceError("pool", f"{group[0].name!r}: no GPU type {gpu!r} in catalog "
                                     f"{catalog.name!r}")
        check_pools(group)
        rows = np.flatnonzero((clusters.gpu_index == index[gpu]) & (clusters.n_spot > 0))
        if rows.size == 0:
            continue
        n = clusters.n_spot[rows]
        counted = np.array([[p.trace.max_count <= 1 or v <= p.trace.max_count for p in group]
                            for v in n], dtype=bool).reshape(rows.size, len(group))
        # a pool is usable for a row only if an attempt (restart + its longest segment) fits
        # in the pool's longest up time: else a replay that is interrupted never finishes
        full_h = np.where(inputs.checkpoints[rows] > 0, (
            inputs.checkpoint_interval_seconds[rows] + inputs.checkpoint_stall_seconds[rows])
            / SECONDS_PER_HOUR, 0.0)
        attempt = inputs.restart_hours[rows] + np.maximum(
            full_h, inputs.last_segment_seconds[rows] / SECONDS_PER_HOUR)
        spells: dict[tuple[int, int], float] = {}
        longest = np.zeros(counted.shape)
        for r, i in zip(*np.nonzero(counted), strict=True):
            level = int(n[r]) if group[i].trace.max_count > 1 else 1
            if (i, level) not in spells:
                spells[(i, level)] = longest_up_hours(group[i].trace, level)
            longest[r, i] = spells[(i, level)]
        usable = counted & (attempt[:, None] <= longest + 1e-9)
        for r in np.flatnonzero(~usable.any(axis=1)):
            refusals[int(rows[r])] = (
                _too_long(gpu, float(attempt[r]), group, longest[r]) if counted[r].any()
                else _refusal(gpu, int(n[r]), group))
            names[int(rows[r])] = tuple(p.name for p in group)
            evaluated[rows[r]] = True
        keep = usable.any(axis=1)
        rows, usable = rows[keep], usable[keep]
        if rows.size == 0:
            continue
        job = _job(catalog, clusters, inputs, rows, group)
        zone_rank = np.argsort(np.argsort([p.zone for p in group], kind="stable"))
        if model != "replay":  # each pool alone; the best pool's forecast per row
            made: dict[int, tuple[IntArray, Forecast]] = {}
            means = np.full(usable.shape, np.inf)
            for i in range(len(group)):
                fit = np.flatnonzero(usable[:, i])
                if fit.size:
                    f = forecast(group[i].trace, _columns(job.rows(fit), np.array([i])), model,
                                 per_vm_share=per_vm_share, seed=seed, starts=starts,
                                 spread=spread, deadline_hours=deadline_hours)
                    made[i] = (fit, f)
                    means[fit, i] = np.nan_to_num(f.mean_makespan_hours, nan=np.inf)
            shape = usable.shape
            pick = np.lexsort((np.broadcast_to(zone_rank, shape), ~usable, means), axis=1)[:, 0]
            for i, (fit, f) in made.items():
                mine = np.flatnonzero(pick == i)
                if mine.size == 0:
                    continue
                w = np.searchsorted(fit, mine)
                at = rows[mine]
                for key, values in (
                        ("mean", f.mean_makespan_hours), ("cost", f.mean_cost_usd),
                        ("events", f.mean_interruptions), ("p10", f.makespan_hours_p10),
                        ("p50", f.makespan_hours_p50), ("p90", f.makespan_hours_p90),
                        ("cost_p10", f.cost_usd_p10), ("cost_p50", f.cost_usd_p50),
                        ("cost_p90", f.cost_usd_p90)):
                    out[key][at] = values[w]
                if f.deadline_met is not None:
                    out["met"][at] = f.deadline_met[w]
                for r in at:
                    names[int(r)] = (group[i].name,)
                evaluated[at] = True
                runs_per = f.runs
            continue
        markets: dict[tuple[int, int], list[SpotTrace]] = {}
        # each pool alone (wait) orders the pools; with one pool there is nothing to order.
        # A replay under wait, or under failover on one pool (the same runs), is taken from
        # these instead of being replayed again.
        alone_runs: dict[int, tuple[IntArray, BacktestRuns]] = {}
        alone = np.full(usable.shape, np.inf)
        for i, p in enumerate(group):
            fit = np.flatnonzero(usable[:, i])
            if fit.size and (len(group) > 1 or recovery == "wait"):
                alone_runs[i] = (fit, backtest([p.trace], _columns(job.rows(fit), np.array([i])),
                                               policy="wait", starts=starts, budget=budget))
                alone[fit, i] = alone_runs[i][1].makespan_hours.mean(axis=1)
        order = np.lexsort((np.broadcast_to(zone_rank, alone.shape), alone), axis=1)
        lists = [tuple(int(i) for i in perm if usable[r, i]) for r, perm in enumerate(order)]
        for used_tuple in sorted(set(lists)):
            sub = np.array([r for r, u in enumerate(lists) if u == used_tuple])
            used = list(used_tuple[:1] if recovery == "wait" else used_tuple)
            part = job.rows(sub)
            if len(used) == 1 and recovery in ("wait", "failover") and used[0] in alone_runs:
                fit, done = alone_runs[used[0]]
                runs = _rows_of(done, np.searchsorted(fit, sub))
            else:
                runs = backtest([group[i].trace for i in used], _columns(part, np.array(used)),
                                policy=recovery, deadline_hours=deadline_hours, starts=starts,
                                budget=budget)
            label = [tuple(group[i].name for i in used_tuple)] * sub.size
            mk_runs, cost_runs = runs.makespan_hours.copy(), runs.cost_usd.copy()
            if spread:
                need = [tuple(int(part.spot_vms[r, i]) if group[i].trace.max_count > 1 else 1
                              for i in used) for r in range(sub.size)]
                for levels in sorted(set(need)):
                    same = np.array([r for r, v in enumerate(need) if v == levels])
                    wide_mk, wide_cost = _spread_runs(part.rows(same), group, used, levels,
                                                      recovery, deadline_hours, starts,
                                                      markets, budget)
                    if mk_runs.shape[1] != wide_mk.shape[1]:
                        mk_runs = np.zeros((sub.size, wide_mk.shape[1]))
                        cost_runs = np.zeros((sub.size, wide_mk.shape[1]))
                    mk_runs[same], cost_runs[same] = wide_mk, wide_cost
            store(rows[sub], label, runs.makespan_hours.mean(axis=1), runs.cost_usd.mean(axis=1),
                  runs.interruptions.mean(axis=1).astype(np.float64), mk_runs, cost_runs)
            runs_per = mk_runs.shape[1]
    return ReplayEstimates(
        recovery=recovery if model == "replay" else "wait", runs=runs_per, evaluated=evaluated,
        pools=tuple(names),
        mean_makespan_hours=out["mean"], makespan_hours_p10=out["p10"],
        makespan_hours_p50=out["p50"], makespan_hours_p90=out["p90"],
        mean_cost_usd=out["cost"], cost_usd_p10=out["cost_p10"], cost_usd_p50=out["cost_p50"],
        cost_usd_p90=out["cost_p90"], mean_interruptions=out["events"],
        deadline_met=None if deadline_hours is None else out["met"], model=model,
        window_days=window_days, refusals=tuple(refusals) if any(refusals) else ())


def planner_recovery(recovery: str, deadline_hours: float | None,
                     ) -> tuple[RecoveryPolicy, str | None]:
    """The one rule for a deadline policy without a deadline on the dashboard's pages (issue
    27): the plan replays ``failover`` instead, and the sentence that says so (``None`` when
    ``recovery`` is replayed as asked). ``deepvm plan`` refuses instead (it has no page to say
    it on).

    Raises:
        TraceError: ``recovery`` is not a recovery policy.
    """
    if recovery not in RECOVERY_POLICIES:
        raise TraceError("recovery", f"{recovery!r}: must be one of {', '.join(RECOVERY_POLICIES)}")
    if recovery in DEADLINE_POLICIES and deadline_hours is None:
        return "failover", (f"recovery={recovery} needs a deadline: Plan a job has none, so the "
                            f"plan replays failover instead; set a deadline there to replay "
                            f"{recovery}.")
    return recovery, None


def replay_hook(catalog: Catalog, pools: Sequence[Pool], *, recovery: RecoveryPolicy = "failover",
                deadline_hours: float | None = None, starts: int = DEFAULT_STARTS,
                model: str | None = None,
                window_days: float | None = DEFAULT_WINDOW_DAYS, per_vm_share: float = 0.0,
                spread: bool = True, seed: int = 0, budget_seconds: float | None = None,
                ) -> Callable[[ClusterArrays, JobInputs], ReplayEstimates]:
    """The ``replay`` argument of :func:`~deepvm_core.pipeline.plan.plan_job` for ``pools``;
    with ``budget_seconds``, its backtests stop with
    :class:`~deepvm_core.job.backtest.BacktestBudgetError` once that many seconds have passed
    since the hook was called (the dashboard: :data:`~deepvm_core.job.backtest.
    BACKTEST_BUDGET_SECONDS`)."""
    def hook(clusters: ClusterArrays, inputs: JobInputs) -> ReplayEstimates:
        budget = None if budget_seconds is None else TimeBudget(budget_seconds)
        return backtest_candidates(catalog, clusters, inputs, pools, recovery=recovery,
                                   deadline_hours=deadline_hours, starts=starts, model=model,
                                   window_days=window_days, per_vm_share=per_vm_share,
                                   spread=spread, seed=seed, budget=budget)
    return hook
