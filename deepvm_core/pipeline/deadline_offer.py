"""A plan's deadline offer (issue 26, item 5): :func:`deadline_offer`, the one place the Plan
card, ``deepvm plan`` and the plan JSON get it from. The rules (target, pricing, the cheapest
policy that meets the target, the job model's paths) are :mod:`deepvm_core.job.deadline_offer`.

The chosen cluster's job (``traces.md``: its segments, R, the cluster at the pool's spot price,
on demand at ``P_fallback``) is :func:`~deepvm_core.pipeline.backtest_plan.backtest_job`'s, as
``deepvm backtest`` replays it:

* **with traces** (the chosen estimate was evaluated on pools): its pools in its failover
  order, each trace's recent window (as the plan read them);
* **without**: one market of the chosen GPU type at the catalog's spot price, its availability
  drawn from the job model (:func:`~deepvm_core.job.deadline_offer.model_traces`) under the
  scenarios of the plan's Monte Carlo (the bucket's spread of MTBI and W where they come from a
  bucket, :func:`~deepvm_core.job.spread.bucket_scenarios`), seeded with the plan's seed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from deepvm_core.catalog import Catalog
from deepvm_core.job.deadline_offer import (
    DEADLINE_TARGET,
    OFFER_RUNS,
    DeadlineOffer,
    best_policy,
    model_traces,
    price_deadline_policies,
)
from deepvm_core.job.result import JobPlanResult
from deepvm_core.job.spread import FROM_BUCKET, bucket_scenarios
from deepvm_core.market.pools import Pool, pool_gpu
from deepvm_core.market.trace import TraceError
from deepvm_core.market.window import DEFAULT_WINDOW_DAYS, recent_window
from deepvm_core.pipeline.backtest_plan import PlannedCluster, backtest_job
from deepvm_core.pipeline.job_arrays import sub_inputs

#: The zone of the job model's one market (a pool's name needs one).
MODEL_ZONE = "job-model"


def at_risk(result: JobPlanResult, target: float = DEADLINE_TARGET) -> float | None:
    """The chosen cluster's chance to meet the plan's deadline when it is under ``target`` and
    the cluster has spot VMs (an offer can help), else ``None`` (no deadline, no chance known:
    trials 0, or not at risk)."""
    chosen = result.chosen
    if result.deadline_hours is None or chosen is None or chosen.monte_carlo is None:
        return None
    chance = chosen.monte_carlo.deadline_probability
    if chance is None or chance >= target or chosen.configuration.gpu_spot < 1:
        return None
    return chance


def deadline_offer(result: JobPlanResult, catalog: Catalog, *, pools: Sequence[Pool] = (),
                   window_days: float | None = DEFAULT_WINDOW_DAYS,
                   target: float = DEADLINE_TARGET,
                   runs: int = OFFER_RUNS) -> DeadlineOffer | None:
    """The deadline offer of ``result`` (planned on ``catalog``; ``pools`` and ``window_days``:
    the ones it was planned with, if any), or ``None`` when the deadline is not at risk
    (:func:`at_risk`).

    Raises:
        TraceError: the chosen estimate names a pool that is not in ``pools``.
    """
    chance = at_risk(result, target)
    chosen = result.chosen
    if chance is None or chosen is None or result.deadline_hours is None:
        return None
    deadline = result.deadline_hours
    plan = result.job_plan
    assert plan is not None  # a plan with a chosen cluster has its job inputs
    one = sub_inputs(plan, np.array([chosen.index]))
    restart = float(one.restart_hours[0])
    cluster = PlannedCluster.of_estimate(chosen)
    mtbi = wait = float("nan")
    if chosen.pools:
        by_name = {p.name: p for p in pools}
        missing = [name for name in chosen.pools if name not in by_name]
        if missing:
            raise TraceError("pools", f"the plan's pool {missing[0]!r} was not given")
        used = [replace(by_name[name], trace=recent_window(by_name[name].trace, window_days))
                for name in chosen.pools]
    else:
        gpu = next(g for g in result.assumptions.gpu_types if g.gpu == cluster.gpu)
        rates, waits = bucket_scenarios(one, [gpu.mtbi_source in FROM_BUCKET],
                                        [gpu.wait_source in FROM_BUCKET])
        mtbi, wait = 1.0 / float(one.interruption_rate_per_hour[0]), float(one.wait_hours[0])
        trace = model_traces(1.0 / rates[0], waits[0], restart, deadline,
                             np.random.default_rng(result.seed), runs)
        row = pool_gpu(catalog, cluster.gpu, f"{cluster.gpu}@{MODEL_ZONE}")
        used = [Pool(gpu=cluster.gpu, zone=MODEL_ZONE, trace=trace,
                     spot_usd_per_hour=row.spot_usd_per_hour,
                     on_demand_usd_per_hour=row.on_demand_usd_per_hour)]
    _, job = backtest_job(catalog, cluster, used, restart)
    prices = price_deadline_policies([p.trace for p in used], job, deadline, runs)
    return DeadlineOffer(
        deadline_hours=deadline, target=target, chance=chance, on_traces=bool(chosen.pools),
        pools=tuple(chosen.pools), mtbi_hours=mtbi, wait_hours=wait, considered=prices,
        offer=best_policy(prices, target), on_demand_cost_usd=chosen.on_demand_cost_usd,
        on_demand_makespan_hours=chosen.on_demand_makespan_hours)
