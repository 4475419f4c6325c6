"""One answer across pages: the user's job next to a recommendation.

* :func:`recommend_job` bundles a job (workload and speedup model) with its speed basis, so
  ``recommend`` ranks by the job's own speed (``deepvm recommend --epochs ... --epoch-seconds
  ...``).
* :func:`estimate_configuration` runs the job model (closed form, on-demand baseline and a
  seeded Monte Carlo) on one configuration of a recommendation, read from the recommendation's
  own candidate table (no second domain) with the job's speed basis (no second one either).
* :func:`compare_plan_with_recommendation` says whether the plan's answer (its goal: least
  expected cost or makespan) differs from Recommend's pick (the most speed, or Z, within PW),
  and why, in words with both clusters' job cost and time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from deepvm_core.catalog import Catalog
from deepvm_core.job.closed_form import expected_jobs
from deepvm_core.job.estimate import EstimateParts, PlanEstimate, estimate_at
from deepvm_core.job.inputs import job_inputs
from deepvm_core.job.result import JobPlanResult
from deepvm_core.market.mtbi import mtbi_estimate
from deepvm_core.model import Configuration
from deepvm_core.pipeline.job_arrays import cluster_arrays, monte_carlo_estimates, simulate_band
from deepvm_core.recommend.distinct import cluster_key
from deepvm_core.recommend.recommendation import Recommendation
from deepvm_core.workload.speed import SpeedBasis, speed_basis
from deepvm_core.workload.speedup import SpeedupModel
from deepvm_core.workload.workload import Workload

#: Monte Carlo runs of a recommendation's job estimate (seeded: the same inputs give the same
#: numbers).
JOB_TRIALS = 10_000


@dataclass(frozen=True)
class RecommendJob:
    """A job given to ``recommend``.

    Attributes:
        workload: the job.
        speedup: the speedup model (with its measurement table, if any).
        speed: the speed basis of the job on the catalog.
    """

    workload: Workload
    speedup: SpeedupModel
    speed: SpeedBasis


def recommend_job(catalog: Catalog, workload: Workload, speedup: SpeedupModel | None = None, *,
                  example: bool = False) -> RecommendJob:
    """The job and its speed basis on ``catalog`` (speedup default: ``fitted``); ``example``:
    the example job, whose basis says so (``job_given`` False), as where no job is given.

    Raises:
        WorkloadError: the workload does not fit the catalog.
    """
    model = SpeedupModel() if speedup is None else speedup
    return RecommendJob(workload, model,
                        speed_basis(catalog, workload, model, job_given=not example))


def estimate_configuration(rec: Recommendation, catalog: Catalog, job: RecommendJob,
                           config: Configuration, *, trials: int = JOB_TRIALS,
                           seed: int = 0) -> PlanEstimate:
    """The job model on ``config``, one configuration of ``rec`` (its pick, its top-k, a
    baseline): expected makespan and cost, the on-demand baseline, and Monte Carlo percentiles
    (``trials`` runs, 0 for none). The configuration's row is read from the recommendation's
    candidate domain (:meth:`~deepvm_core.search.tables.CandidateDomain.locate`), its epoch
    times from the job's speed basis, and the checkpoint size f is the recommendation's (one f
    sizes the memory nodes and the checkpoint stall; the example job has no f of its own).

    Raises:
        InputError: ``config`` is not a configuration of the recommendation's domain.
    """
    table = rec.candidates.domain.locate(config)
    workload = replace(job.workload, checkpoint_gb=rec.scenario.checkpoint_gb)
    plan = job_inputs(workload, catalog, cluster_arrays(catalog, table), basis=job.speed)
    estimates = expected_jobs(plan)
    mc = None
    if trials:  # the band Plan a job shows for the same cluster (its bucket's spread)
        gpu = next(g for g in catalog.gpu_types if g.name == config.gpu)
        odds = mtbi_estimate(gpu, workload)
        summary = simulate_band(plan, [(odds.mtbi_source, odds.wait_source)],
                                np.random.default_rng(seed), trials=trials)
        mc = monte_carlo_estimates(summary)[0]
    parts = EstimateParts(estimates, table, None, None, np.ones(1, dtype=bool), job_plan=plan)
    return estimate_at(parts, 0, mc)


def _expected(e: PlanEstimate) -> str:
    """``6.3 h and 18.08 USD expected``, or why the cluster is not expected to finish."""
    if e.does_not_finish is not None or not (math.isfinite(e.expected_makespan_hours)
                                             and math.isfinite(e.expected_cost_usd)):
        return f"not expected to finish ({e.does_not_finish or 'no finite expectation'})"
    return f"{e.expected_makespan_hours:.1f} h and {e.expected_cost_usd:,.2f} USD expected"


def job_summary(estimate: PlanEstimate, workload: Workload) -> str:
    """One sentence: the job on the pick, expected and against the same cluster on demand."""
    if estimate.does_not_finish is not None or not math.isfinite(estimate.expected_cost_usd):
        return (f"the job ({workload.epochs:g} epochs) is {_expected(estimate)} on it; the same "
                f"cluster on demand: {estimate.on_demand_makespan_hours:.1f} h, "
                f"{estimate.on_demand_cost_usd:,.2f} USD")
    od = estimate.on_demand_cost_usd
    saved = od - estimate.expected_cost_usd
    return (f"the job ({workload.epochs:g} epochs) takes {estimate.expected_makespan_hours:.1f} h "
            f"and costs {estimate.expected_cost_usd:,.2f} USD expected; the same cluster on "
            f"demand: {estimate.on_demand_makespan_hours:.1f} h, {od:,.2f} USD "
            f"({'saves' if saved >= 0 else 'costs'} {abs(saved):,.2f} USD)")


@dataclass(frozen=True)
class PlanVsRecommend:
    """Whether the plan's answer and Recommend's pick differ, and why.

    Attributes:
        same: the same cluster (architecture, GPU type and count, memory-node type).
        sentence: the answer in words, with both clusters' job cost and time.
        recommend_estimate: the job on Recommend's pick, or ``None`` (no pick).
    """

    same: bool
    sentence: str
    recommend_estimate: PlanEstimate | None


def compare_plan_with_recommendation(plan: JobPlanResult, rec: Recommendation,
                                     catalog: Catalog, job: RecommendJob) -> PlanVsRecommend:
    """Say whether the plan's chosen cluster differs from Recommend's pick, and why (both
    clusters' expected job cost and time)."""
    chosen, pick = plan.chosen, rec.best
    if chosen is None or pick is None:
        missing = "the plan has no cluster" if chosen is None else "Recommend has no pick"
        return PlanVsRecommend(False, f"Nothing to compare: {missing}.", None)
    c = chosen.configuration
    if cluster_key(c) == cluster_key(pick) and c.cpu == pick.cpu:
        return PlanVsRecommend(True, (
            f"The plan and Recommend agree: {c.describe()} ({_expected(chosen)})."), chosen)
    other = estimate_configuration(rec, catalog, job, pick, trials=0)
    goal = "the least expected cost" if plan.goal == "cheapest" else "the least expected time"
    objective = {"speed": "the most epochs per hour", "paper": "the paper's Z (eFLOP per USD)",
                 "performance": "the most eFLOPS"}[rec.scenario.objective]
    sentence = (
        f"The plan picks {c.describe()}: {_expected(chosen)}, {goal} for this job with "
        f"interruptions. Recommend picks {pick.describe()}: {_expected(other)}, {objective} "
        f"within PW {rec.scenario.pw_usd_per_hour:g} USD/h.")
    return PlanVsRecommend(False, sentence, other)
