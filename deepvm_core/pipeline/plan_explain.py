"""Why a job plan has no answer: no cluster meets the deadline or the budget (with the nearest
one), or none is expected to finish the job (with the reason of the best by the goal). The
plan's other explanation, nothing feasible within PW, is the recommendation's
(:func:`deepvm_core.recommend.explain.explain_infeasible`).
"""

from __future__ import annotations

import numpy as np

from deepvm_core.arrays import IntArray
from deepvm_core.job.estimate import EstimateParts, unfinished_reason_of
from deepvm_core.job.finish import finishes
from deepvm_core.job.objectives import Goal, best_first, cheapest, fastest
from deepvm_core.recommend.explain import Explanation

__all__ = ["limits_explanation", "unfinished_explanation"]


def limits_explanation(result: EstimateParts, goal: Goal, rank: IntArray) -> Explanation:
    """Why no candidate meets the deadline or the budget, and the nearest one: the fastest
    when the deadline binds, else the cheapest when the budget binds, else (each limit is met
    by some cluster, never both) the best by the goal."""
    est = result.estimates
    cost, time = est.expected_cost_usd, est.expected_makespan_hours
    done = finishes(time)
    quickest = fastest(cost, time, rank=rank, eligible=done, fastest_tolerance=0.0)
    least = cheapest(cost, time, rank=rank, eligible=done)
    if quickest is None or least is None:
        return unfinished_explanation(result, goal, rank)
    limits = []
    if result.deadline_hours is not None:
        limits.append(f"a deadline of {result.deadline_hours:g} h")
    if result.budget_usd is not None:
        limits.append(f"a budget of {result.budget_usd:g} USD")
    binding: tuple[str, ...]
    if result.deadline_hours is not None and time[quickest] > result.deadline_hours:
        binding, nearest, which = ("deadline",), quickest, "the fastest"
    elif result.budget_usd is not None and cost[least] > result.budget_usd:
        binding, nearest, which = ("job_budget",), least, "the cheapest"
    else:
        binding, which = ("deadline", "job_budget"), f"the {goal}"
        nearest = quickest if goal == "fastest" else least
    config = result.candidates.configuration(nearest)
    summary = (f"No cluster meets {' and '.join(limits)} in expectation; {which} is "
               f"{config.describe()}: {time[nearest]:.4g} h and {cost[nearest]:.4g} USD "
               "expected.")
    if binding == ("deadline",) and result.budget_usd is not None and (
            cost[least] > result.budget_usd):
        binding = ("deadline", "job_budget")
        cheap = result.candidates.configuration(least)
        summary += (f" The budget is missed too: the cheapest is {cheap.describe()}: "
                    f"{cost[least]:.4g} USD and {time[least]:.4g} h expected.")
    return Explanation(summary=summary, binding=binding, cheapest_feasible_usd_per_hour=None,
                       cheapest_configuration=config)


def unfinished_explanation(result: EstimateParts, goal: Goal, rank: IntArray) -> Explanation:
    """Why nothing qualifies when no candidate is expected to finish: the reason of the best
    by the goal (:mod:`deepvm_core.job.finish`)."""
    est = result.estimates
    order = best_first(goal, est.expected_cost_usd, est.expected_makespan_hours, rank=rank)
    nearest = int(order[0]) if order.size else int(np.argmin(rank))  # all NaN: first by rank
    config = result.candidates.configuration(nearest)
    reason = unfinished_reason_of(est, result.job_plan, nearest) or ""
    summary = (f"No cluster is expected to finish this job: on {config.describe()}, {reason}. "
               "Raise the MTBI or its scale, or shorten the restart or checkpoint interval.")
    return Explanation(summary=summary, binding=("does_not_finish",),
                       cheapest_feasible_usd_per_hour=None, cheapest_configuration=config)
