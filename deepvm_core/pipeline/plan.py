"""The job planner: which cluster to rent for a training job, by expected cost or makespan
(``job-model.md``, "Objectives over all feasible configurations"). Pure: no I/O, no UI.

:func:`plan_job` takes a catalog, a :class:`~deepvm_core.model.Scenario` (f, s, quotas, node
cap, objective for the tie-break), a :class:`~deepvm_core.workload.workload.Workload` and a
:class:`~deepvm_core.workload.speedup.SpeedupModel`, and returns a :class:`JobPlanResult`:

1. **Candidates.** Every feasible configuration (``build_candidates(..., memory_node_choices=
   None)``: every memory-node type, not only the cheapest), priced within ``pw_usd_per_hour``;
   ``None`` turns PW off (quotas and the node cap still bound the space).
2. **Closed form** (:func:`~deepvm_core.job.closed_form.expected_jobs`) on every candidate at
   once: expected makespan T, cost C and events N (numpy arrays, no loop over configurations).
3. **Goal.** ``cheapest``: least C; ``fastest``: least T. Both limits apply with either goal:
   a configuration qualifies when ``T <= deadline_hours`` and ``C <= budget_usd`` (each when
   given). Ties: lower C, then lower T (``cheapest``) or lower T, then lower C (``fastest``),
   then ``model.md``'s order under the scenario's objective (the candidate table's
   :meth:`~deepvm_core.search.tables.CandidateTable.rank_order`), all by
   :func:`~deepvm_core.job.objectives.best_first`. ``best`` is the top-k distinct clusters
   (the first of each architecture, GPU type and count:
   :func:`~deepvm_core.recommend.distinct.first_of_each_cluster`); ``chosen`` is ``best[0]``.
4. **Frontier.** The Pareto frontier of (C, T) over every candidate, limits ignored
   (:func:`~deepvm_core.job.objectives.pareto_frontier`, by increasing cost).
5. **The paper's policies** within PW, each estimated: DeepVM (Z, top-k), DeepVM with the
   performance objective, DeepVM-NoScale, Cost-First, Performance-First. They rank clusters by
   price per hour within a PW, so **with PW off they are not computed** (``None`` and an empty
   list, with a note): without a budget, Z and Cost-First would pick the largest cluster the
   quotas and node cap allow, which says nothing about the paper's policies.
6. **Monte Carlo** (seeded, ``trials`` runs, 0 for none) for the best, the policies and the
   chosen configuration only, in one batch with ``np.random.default_rng(seed)``: P10/P50/P90
   of makespan and cost, mean events, and the deadline probability when a deadline is given.

Nothing feasible never raises: ``best`` is empty and :attr:`JobPlanResult.explanation` says why
(PW below the cheapest cluster, quotas, memory, ...; or no cluster meets the deadline or the
budget, with the nearest one). Bad inputs (workload against the catalog, unknown speedup
types, top-k, trials) raise :class:`~deepvm_core.errors.DeepVMError` subclasses.

:func:`deepvm_core.io.plan_json.plan_to_dict` is the JSON (the CLI's ``deepvm plan --format json``
and the dashboard's
export); its ``chosen`` lets ``deepvm export --to ec2-fleet`` and ``deepvm launch`` read it.

**Why one file.** ``plan_job`` is the six steps above in order, each handing its arrays to the
next (candidates, the closed form, the goal, the frontier, the policies, the Monte Carlo of a
few); the steps' own computations live in ``job/``, ``search/`` and ``recommend/``, what the
plan assumes and its notes in :mod:`deepvm_core.pipeline.plan_assumptions`, and what is left
here is their sequence and the few helpers that read the same locals.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Final

import numpy as np

from deepvm_core.catalog import Catalog
from deepvm_core.errors import InputError
from deepvm_core.hardware.measurements import implausible_speedup_warnings
from deepvm_core.hardware.unused import unused_measurements_warnings
from deepvm_core.job.backtest import BacktestBudgetError
from deepvm_core.job.closed_form import expected_jobs
from deepvm_core.job.estimate import (
    EstimateParts,
    MonteCarloEstimate,
    PlanEstimate,
    ReplayEstimates,
    estimate_at,
)
from deepvm_core.job.finish import finishes
from deepvm_core.job.inputs import (
    ClusterArrays,
    JobInputs,
    job_inputs,
)
from deepvm_core.job.montecarlo import (
    DEFAULT_TRIALS,
    JobSamples,
    sample_jobs,
)
from deepvm_core.job.objectives import (
    DEFAULT_FASTEST_TOLERANCE,
    DEFAULT_GOAL,
    GOALS,
    Goal,
    best_first,
    pareto_frontier,
    within_limits,
)
from deepvm_core.job.result import GpuAssumption, JobPlanResult, PlanAssumptions, PolicyEstimates
from deepvm_core.model import Arch, Scenario
from deepvm_core.pipeline.job_arrays import (
    cluster_arrays,
    monte_carlo_estimates,
    simulate_band,
    sub_inputs,
)
from deepvm_core.pipeline.plan_assumptions import odds_by_gpu, plan_assumptions, plan_notes
from deepvm_core.pipeline.plan_explain import limits_explanation
from deepvm_core.recommend.distinct import first_of_each_cluster
from deepvm_core.recommend.explain import (
    Explanation,
    any_price_table,
    explain_infeasible,
)
from deepvm_core.recommend.policies import PAPER_POLICIES, policy_indices
from deepvm_core.recommend.recommendation import DEFAULT_TOP_K, TOP_K_RANGE
from deepvm_core.search.candidates import build_domain
from deepvm_core.search.pairing import candidate_table
from deepvm_core.search.ranking import rank_positions
from deepvm_core.search.tables import CandidateDomain, CandidateTable
from deepvm_core.workload.speed import speed_basis
from deepvm_core.workload.speedup import SpeedupModel
from deepvm_core.workload.workload import Workload

#: The Monte Carlo seed of a plan unless told.
DEFAULT_SEED: Final = 0
#: Most Monte Carlo trials per configuration :func:`plan_job` accepts.
MAX_TRIALS: Final = 1_000_000
#: Most configurations a plan evaluates with every memory-node type per (v, n); a larger
#: search space keeps the cheapest memory-node types only (:func:`plan_job`'s notes say so).
MAX_PLAN_CONFIGURATIONS: Final = 500_000


# ----------------------------------------------------------------------------- building blocks


def configuration_samples(result: JobPlanResult, catalog: Catalog, speedup: SpeedupModel,
                          index: int, *, trials: int, seed: int) -> JobSamples:
    """Raw Monte Carlo draws (shape ``(1, trials)``) of candidate ``index`` of ``result``, for a
    distribution chart: the same process and generator seed as :func:`plan_job`'s statistics.

    ``catalog`` and ``speedup`` must be the ones ``result`` was planned with.

    Raises:
        InputError: ``index`` is not a candidate of ``result``, or bad ``trials``/``seed``.
    """
    if not 0 <= int(index) < result.size:
        raise InputError("index", index, f"not a candidate (0..{result.size - 1})")
    trials = _whole("trials", trials, 1, MAX_TRIALS)
    seed = _whole("seed", seed, 0, 2**63 - 1)
    clusters = cluster_arrays(catalog, result.candidates)
    one = ClusterArrays(**{name: getattr(clusters, name)[[int(index)]]
                           for name in clusters.__dataclass_fields__})
    plan = job_inputs(result.workload, catalog, one, speedup)
    return sample_jobs(plan, np.random.default_rng(seed), trials)


def _plan_candidates(domain: CandidateDomain) -> tuple[CandidateTable, tuple[str, ...]]:
    """Every feasible configuration of ``domain``, with every memory-node type per (v, n); past
    :data:`MAX_PLAN_CONFIGURATIONS` (a catalog near the size limit), the cheapest memory-node
    types per (v, n) only, so the plan stays interactive, and a note that says so."""
    tiering_rows = int(np.count_nonzero(domain.architecture == Arch.TIERING))
    pairs = tiering_rows * len(domain.cpus)
    if pairs <= MAX_PLAN_CONFIGURATIONS:
        return candidate_table(domain, None), ()
    keep = max(1, MAX_PLAN_CONFIGURATIONS // max(tiering_rows, 1))
    table = candidate_table(domain, keep)
    return table, (
        f"This catalog allows up to {pairs:,} (GPU type, memory-node type, n) Tiering "
        f"configurations; to stay interactive the plan keeps the {keep} cheapest memory-node "
        f"type(s) per GPU type and node count ({len(table):,} configurations). A pricier "
        "memory node with more bandwidth, which could shorten checkpoint stalls, is left out.",)


def budget_cut_warning(exc: BacktestBudgetError) -> str:
    """The plan's warning when its backtests on spot traces were stopped by their time
    budget: what was cut, and what the plan uses instead."""
    return (f"{exc}: the traces were not used, and every configuration is planned by the "
            "closed form instead (fewer pools, fewer start times or a shorter window fit in "
            "the budget).")


def _limit(name: str, value: float | None) -> float | None:
    if value is None:
        return None
    if (isinstance(value, bool) or not isinstance(value, (int, float))
            or not math.isfinite(value) or value <= 0):
        raise InputError(name, value, "must be a finite number > 0, or None")
    return float(value)


def _whole(name: str, value: object, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InputError(name, value, f"must be a whole number from {low} to {high}")
    return value


def _check_inputs(scenario: Scenario, workload: Workload, pw: float | None, goal: str) -> None:
    if goal not in GOALS:
        raise InputError("goal", goal, f"must be one of {', '.join(GOALS)}")
    if pw is not None and (isinstance(pw, bool) or not isinstance(pw, (int, float))
                           or math.isnan(pw) or pw < 0):
        raise InputError("pw_usd_per_hour", pw, "must be a number >= 0, or None (PW off)")
    if not math.isclose(scenario.checkpoint_gb, workload.checkpoint_gb, rel_tol=1e-12):
        raise InputError("checkpoint_gb", workload.checkpoint_gb,
                         f"the workload's checkpoint size must equal the scenario's "
                         f"({scenario.checkpoint_gb!r} GB): one f sizes the memory nodes and "
                         "the checkpoint stall")


# ----------------------------------------------------------------------------- plan_job


def plan_job(
    catalog: Catalog,
    scenario: Scenario,
    workload: Workload,
    *,
    pw_usd_per_hour: float | None,
    speedup: SpeedupModel,
    goal: Goal = DEFAULT_GOAL,
    deadline_hours: float | None = None,
    budget_usd: float | None = None,
    trials: int = DEFAULT_TRIALS,
    seed: int = DEFAULT_SEED,
    top_k: int = DEFAULT_TOP_K,
    replay: Callable[[ClusterArrays, JobInputs], ReplayEstimates] | None = None,
    fastest_tolerance: float = DEFAULT_FASTEST_TOLERANCE,
    bucket_spread: bool = True,
) -> JobPlanResult:
    """Plan ``workload`` on ``catalog`` (method in the module docstring).

    Args:
        scenario: f (must equal ``workload.checkpoint_gb``), s, quotas, node cap, and the
            objective of the final tie-break; its PW is not read.
        pw_usd_per_hour: the most the cluster may cost per hour, or ``None`` (PW off).
        speedup: the speedup model (with its measurements).
        goal: ``cheapest`` (least expected cost) or ``fastest`` (least expected makespan).
        deadline_hours: keep configurations whose expected makespan is at most this (> 0);
            also gives the Monte Carlo deadline probability.
        budget_usd: keep configurations whose expected cost is at most this (> 0).
        trials: Monte Carlo runs per simulated configuration, 0 for none.
        seed: seed of the Monte Carlo generator.
        replay: backtests on spot traces (:func:`deepvm_core.pipeline.replay_hook.replay_hook`):
            the candidates it evaluates take the backtest's mean makespan, cost and events
            (goal, limits and frontier then use them) and its percentiles instead of Monte
            Carlo; the others keep the closed form. A replay stopped by its time budget
            (:class:`~deepvm_core.job.backtest.BacktestBudgetError`) leaves every candidate
            to the closed form, and the first warning says so (:func:`budget_cut_warning`).
        top_k: how many best configurations, and DeepVM's top-k (:data:`TOP_K_RANGE`).
        fastest_tolerance: with ``goal="fastest"``, clusters within this share of the least
            expected makespan count as equally fast and the cheapest of them wins
            (:func:`~deepvm_core.job.objectives.best_first`; 0: the least makespan).
        bucket_spread: the Monte Carlo of closed-form candidates draws MTBI and W from the
            bucket's spread where they come from a bucket (:mod:`deepvm_core.job.spread`;
            issue 25), so its P10-P90 includes how little a bucket tells; False: the market
            exactly as assumed.

    Raises:
        InputError: a bad goal, PW, limit, trials, seed or top-k, or checkpoint sizes that
            differ.
        WorkloadError: the workload does not fit the catalog (unknown reference type, ...).
        JobModelError: a GPU type without any epoch time.
    """
    _check_inputs(scenario, workload, pw_usd_per_hour, goal)
    deadline = _limit("deadline_hours", deadline_hours)
    budget = _limit("budget_usd", budget_usd)
    trials = _whole("trials", trials, 0, MAX_TRIALS)
    seed = _whole("seed", seed, 0, 2**63 - 1)
    top_k = _whole("top_k", top_k, *TOP_K_RANGE)
    pw = None if pw_usd_per_hour is None or math.isinf(pw_usd_per_hour) else float(
        pw_usd_per_hour)

    basis = speed_basis(catalog, workload, speedup)  # the one-VM times, derived once
    assumptions = plan_assumptions(catalog, workload, basis)
    domain = build_domain(catalog, scenario, pw_usd_per_hour=pw, speed=basis)
    table, shortlist_note = _plan_candidates(domain)
    clusters = cluster_arrays(catalog, table)
    plan = job_inputs(workload, catalog, clusters, basis=basis)
    estimates = expected_jobs(plan)
    replayed: ReplayEstimates | None = None
    cut: tuple[str, ...] = ()
    try:
        replayed = None if replay is None else replay(clusters, plan)
    except BacktestBudgetError as exc:  # the closed form for every type, and why said
        cut = (budget_cut_warning(exc),)
    if replayed is not None:  # backtested candidates: the backtest's means (traces.md)
        hit = replayed.evaluated
        estimates = replace(
            estimates,
            expected_makespan_hours=np.where(hit, replayed.mean_makespan_hours,
                                             estimates.expected_makespan_hours),
            expected_cost_usd=np.where(hit, replayed.mean_cost_usd,
                                       estimates.expected_cost_usd),
            expected_interruptions=np.where(hit, replayed.mean_interruptions,
                                            estimates.expected_interruptions))
    rank = rank_positions(table.rank_order(scenario.objective))
    cost, time = estimates.expected_cost_usd, estimates.expected_makespan_hours
    done = np.flatnonzero(finishes(time))
    frontier = done[pareto_frontier(cost[done], time[done], rank=rank[done])]
    # A cluster that does not finish, or whose cost is not finite, is never chosen.
    eligible = finishes(time) & np.isfinite(cost)
    within = within_limits(cost, time, deadline_hours=deadline, budget_usd=budget,
                           eligible=eligible)
    odds = odds_by_gpu(assumptions)
    parts = EstimateParts(estimates, table, deadline, budget, within, plan, replayed, odds)
    best_idx = first_of_each_cluster(table, best_first(  # distinct clusters, as Recommend's
        goal, cost, time, deadline_hours=deadline, budget_usd=budget, rank=rank,
        eligible=eligible, fastest_tolerance=fastest_tolerance))[:top_k]

    explanation: Explanation | None = None
    if len(table) == 0:
        priced = replace(scenario, pw_usd_per_hour=0.0 if pw is None else pw)
        explanation = explain_infeasible(catalog, priced, any_price_table(domain, table), None)
    elif best_idx.size == 0:
        explanation = limits_explanation(parts, goal, rank)

    policy_idx: dict[str, list[int]] = {name: [] for name in PAPER_POLICIES}
    if pw is not None and len(table):
        policy_idx.update(policy_indices(table, top_k))

    finished = finishes(time)
    simulated = sorted(i for i in ({int(i) for i in best_idx}
                                   | {i for found in policy_idx.values() for i in found})
                       if finished[i])
    mc: dict[int, MonteCarloEstimate] = {}
    if trials and simulated:
        where = np.array(simulated, dtype=np.int64)
        sub = sub_inputs(plan, where)
        types = [assumptions.gpu_types[int(g)] for g in clusters.gpu_index[where]]
        summary = simulate_band(
            sub, [(g.mtbi_source, g.wait_source) for g in types] if bucket_spread else None,
            np.random.default_rng(seed), trials=trials, deadline_hours=deadline)
        mc = dict(zip(simulated, monte_carlo_estimates(summary), strict=True))
    if replayed is not None:
        mc.update({i: replayed.monte_carlo(i) for i in simulated if replayed.evaluated[i]})

    def estimate(i: int) -> PlanEstimate:
        return estimate_at(parts, int(i), mc.get(int(i)))

    def single(name: str) -> PlanEstimate | None:
        return estimate(policy_idx[name][0]) if policy_idx[name] else None

    policies = PolicyEstimates(
        deepvm=tuple(estimate(i) for i in policy_idx["deepvm"]),
        deepvm_performance=single("deepvm_performance"),
        deepvm_noscale=single("deepvm_noscale"),
        cost_first=single("cost_first"),
        performance_first=single("performance_first"),
        computed=pw is not None,
    )
    solvable = {g.name for g in table.gpus} if len(table) else {
        g.name for g in catalog.solvable_gpu_types}
    return JobPlanResult(
        scenario=scenario, workload=workload, pw_usd_per_hour=pw, goal=goal,
        deadline_hours=deadline, budget_usd=budget, trials=trials, seed=seed, top_k=top_k,
        catalog_name=catalog.name, catalog_sha256=catalog.sha256,
        candidates=table, estimates=estimates, rank=rank, frontier=frontier,
        within_limits=within, best=tuple(estimate(i) for i in best_idx), policies=policies,
        monte_carlo=mc,
        assumptions=assumptions,
        notes=plan_notes(catalog, assumptions, solvable, pw, basis) + shortlist_note,
        explanation=explanation,
        warnings=cut + unused_measurements_warnings(catalog, speedup.measurements)
        + (implausible_speedup_warnings(speedup.measurements,
                                        (g.name for g in catalog.gpu_types))
           if speedup.name == "measured" else ()),
        job_plan=plan,
        replay=replayed,
        odds_by_gpu=odds,
    )


__all__ = [
    "GOALS",
    "Goal",
    "GpuAssumption",
    "JobPlanResult",
    "MonteCarloEstimate",
    "PlanAssumptions",
    "PlanEstimate",
    "PolicyEstimates",
    "configuration_samples",
    "plan_job",
]
