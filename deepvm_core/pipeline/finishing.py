"""Recommend never badges a cluster on which the job does not finish (issue 24).

Recommend ranks clusters by the objective (the job's speed by default) within PW; the job model
then says whether the job is expected to finish on them (``job-model.md``: a cluster whose
expected makespan is not finite, or past the horizon, is not expected to finish). When the
cluster shown does not finish the job, :func:`finishing_answer` finds what to say instead:

1. the best of Recommend's top-k on which the job finishes (its rank);
2. else the best configuration within PW on which it finishes (the objective's order over every
   configuration within PW, the cheapest memory-node type per GPU type and count);
3. else the limit that binds: the least hourly price of a cluster on which the job finishes at
   any price ("lift PW to X USD/h for the first cluster that finishes"), or that none does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from deepvm_core.arrays import BoolArray
from deepvm_core.catalog import Catalog
from deepvm_core.job.closed_form import expected_jobs
from deepvm_core.job.finish import finishes
from deepvm_core.job.inputs import job_inputs
from deepvm_core.model import Configuration
from deepvm_core.pipeline.job_arrays import cluster_arrays
from deepvm_core.pipeline.recommend_job import RecommendJob, estimate_configuration
from deepvm_core.recommend.recommendation import Recommendation
from deepvm_core.search.candidates import build_domain
from deepvm_core.search.pairing import candidate_table
from deepvm_core.search.tables import CandidateTable
from deepvm_core.text import usd_per_hour

__all__ = ["FinishingAnswer", "finishing_answer"]


@dataclass(frozen=True)
class FinishingAnswer:
    """Whether the job finishes on the cluster shown, and what to recommend if not.

    Attributes:
        shown: the cluster the card shows (Recommend's chosen, default its first).
        finishes: the job is expected to finish on ``shown`` (then it may be badged
            "recommended").
        reason: why it does not (the job model's words), or ``None``.
        pick: the best cluster on which the job finishes (within PW), or ``None`` when
            ``finishes`` (it is ``shown``) or none within PW does.
        pick_rank: ``pick``'s 1-based rank in Recommend's top-k, or ``None`` (outside it).
        lift_pw_usd_per_hour: when no cluster within PW finishes the job, the least hourly
            price of one that does (rounded up to the cent), or ``None``.
        lift_configuration: that cluster, or ``None``.
        sentence: the answer in words, or ``None`` when ``finishes``.
    """

    shown: Configuration
    finishes: bool
    reason: str | None = None
    pick: Configuration | None = None
    pick_rank: int | None = None
    lift_pw_usd_per_hour: float | None = None
    lift_configuration: Configuration | None = None
    sentence: str | None = None


def _finishing(catalog: Catalog, job: RecommendJob, table: CandidateTable,
               checkpoint_gb: float) -> BoolArray:
    """Per configuration of ``table``: the job is expected to finish on it."""
    if len(table) == 0:
        return np.zeros(0, dtype=bool)
    workload = replace(job.workload, checkpoint_gb=checkpoint_gb)
    plan = job_inputs(workload, catalog, cluster_arrays(catalog, table), basis=job.speed)
    est = expected_jobs(plan)
    return finishes(est.expected_makespan_hours) & np.isfinite(est.expected_cost_usd)


def finishing_answer(rec: Recommendation, catalog: Catalog, job: RecommendJob,
                     shown: Configuration | None = None) -> FinishingAnswer | None:
    """Whether the job finishes on ``shown`` (default: Recommend's first) and, if not, the best
    cluster on which it does or the PW that would allow one (module doc); ``None`` when
    nothing is feasible."""
    shown = rec.best if shown is None else shown
    if shown is None:
        return None
    estimate = estimate_configuration(rec, catalog, job, shown, trials=0)
    if estimate.does_not_finish is None and math.isfinite(estimate.expected_makespan_hours):
        return FinishingAnswer(shown, True)
    reason = estimate.does_not_finish or "no finite expected time"
    reason = reason.removeprefix("does not finish: ")
    head = (f"The job is not expected to finish on {shown.describe()} ({reason}), so it is "
            "not recommended")
    for rank, config in enumerate(rec.deepvm, start=1):
        if config == shown:
            continue
        e = estimate_configuration(rec, catalog, job, config, trials=0)
        if e.does_not_finish is None and math.isfinite(e.expected_makespan_hours):
            return FinishingAnswer(shown, False, reason, config, rank, sentence=(
                f"{head}. The best cluster on which it finishes: #{rank}, "
                f"{config.describe()}."))
    scenario = rec.scenario
    table = candidate_table(rec.candidates.domain)
    done = _finishing(catalog, job, table, scenario.checkpoint_gb)
    order = [i for i in table.rank_order(scenario.objective) if done[i]]
    if order:
        config = table.configuration(int(order[0]))
        return FinishingAnswer(shown, False, reason, config, None, sentence=(
            f"{head}. The best cluster within PW on which it finishes: "
            f"{config.describe()}."))
    anywhere = candidate_table(build_domain(catalog, scenario, speed=job.speed))
    done = _finishing(catalog, job, anywhere, scenario.checkpoint_gb)
    if not done.any():
        return FinishingAnswer(shown, False, reason, sentence=(
            f"{head}. It finishes on no cluster of this catalog at any price (up to "
            f"{scenario.max_nodes} VMs per role)."))
    prices = np.where(done, anywhere.price_usd_per_hour, np.inf)
    cheapest = int(np.argmin(prices))
    lift = math.ceil(float(prices[cheapest]) * 100 - 1e-9) / 100
    config = anywhere.configuration(cheapest)
    return FinishingAnswer(shown, False, reason, lift_pw_usd_per_hour=lift,
                           lift_configuration=config, sentence=(
                               f"{head}, and no cluster within PW "
                               f"{usd_per_hour(scenario.pw_usd_per_hour)} finishes it. Lift PW "
                               f"to {usd_per_hour(lift)} for the first cluster that finishes: "
                               f"{config.describe()}."))
