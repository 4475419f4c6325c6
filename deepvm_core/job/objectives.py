"""Picking configurations by expected cost and makespan (``job-model.md``, "Objectives").

All three work on arrays, one entry per configuration: expected cost C (USD), expected makespan
T (hours) and an optional ``rank`` array (``model.md``'s order: lower ranks first; by default
the array order). Ties go to the lower C, then the lower T, then the lower rank. An entry with
a NaN cost or makespan is never picked and never on the frontier.

* :func:`best_first`: the configurations within a deadline (``T <= deadline_hours``) and a
  budget (``C <= budget_usd``), best first by a :data:`Goal`: by (C, T, rank) for
  ``cheapest``, by (T, C, rank) for ``fastest`` (:func:`deepvm_core.job.plan_job`'s order);
* :func:`cheapest`: least C, optionally with ``T <= deadline_hours``;
* :func:`fastest`: least T (ties: lower C, then rank), optionally with ``C <= budget_usd``;
* :func:`pareto_frontier`: the configurations no other beats on both T and C (at least as good
  on both and better on one); of configurations with equal (C, T) only the first by rank is
  kept. Sort by (C, T, rank), then keep each entry whose T is below every earlier T:
  O(n log n).
"""

from __future__ import annotations

from typing import Literal, get_args

import numpy as np
import numpy.typing as npt

from deepvm_core.arrays import BoolArray, FloatArray, IntArray
from deepvm_core.errors import InputError

#: What a job plan optimises: least expected cost or least expected makespan.
Goal = Literal["cheapest", "fastest"]
GOALS: tuple[Goal, ...] = get_args(Goal)
#: The goal of a job plan unless told.
DEFAULT_GOAL: Goal = "cheapest"


def _inputs(cost_usd: npt.ArrayLike, makespan_hours: npt.ArrayLike,
            rank: npt.ArrayLike | None) -> tuple[FloatArray, FloatArray, FloatArray]:
    cost = np.asarray(cost_usd, dtype=np.float64).ravel()
    time = np.asarray(makespan_hours, dtype=np.float64).ravel()
    order = (np.arange(cost.size, dtype=np.float64) if rank is None
             else np.asarray(rank, dtype=np.float64).ravel())
    if not cost.size == time.size == order.size:
        raise InputError("makespan_hours", time.size,
                         f"cost, makespan and rank need one length (cost has {cost.size}, "
                         f"rank {order.size})")
    return cost, time, order


def _limit(name: str, value: float | None) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                              or np.isnan(value)):
        raise InputError(name, value, "must be a number or None")


def within_limits(cost_usd: npt.ArrayLike, makespan_hours: npt.ArrayLike, *,
                  deadline_hours: float | None = None, budget_usd: float | None = None,
                  eligible: npt.ArrayLike | None = None) -> BoolArray:
    """Which configurations have a cost and a makespan (not NaN) with ``T <= deadline_hours``
    and ``C <= budget_usd`` (each limit only if given), among the ``eligible`` ones (a boolean
    mask; default all: the planner leaves out clusters that do not finish,
    :func:`deepvm_core.job.finish.finishes`)."""
    _limit("deadline_hours", deadline_hours)
    _limit("budget_usd", budget_usd)
    cost, time, _ = _inputs(cost_usd, makespan_hours, None)
    ok = ~np.isnan(cost) & ~np.isnan(time)
    if eligible is not None:
        mask = np.asarray(eligible, dtype=bool).ravel()
        if mask.size != cost.size:
            raise InputError("eligible", mask.size, f"needs one entry per configuration "
                             f"({cost.size})")
        ok &= mask
    if deadline_hours is not None:
        ok &= time <= deadline_hours
    if budget_usd is not None:
        ok &= cost <= budget_usd
    return np.asarray(ok, dtype=bool)


def best_first(goal: Goal, cost_usd: npt.ArrayLike, makespan_hours: npt.ArrayLike, *,
               deadline_hours: float | None = None, budget_usd: float | None = None,
               rank: npt.ArrayLike | None = None,
               eligible: npt.ArrayLike | None = None) -> IntArray:
    """Indices of the configurations :func:`within_limits`, best first by ``goal``: sorted by
    (C, T, rank) for ``cheapest`` and by (T, C, rank) for ``fastest``."""
    if goal not in GOALS:
        raise InputError("goal", goal, f"must be one of {', '.join(GOALS)}")
    cost, time, order = _inputs(cost_usd, makespan_hours, rank)
    candidates = np.flatnonzero(within_limits(cost, time, deadline_hours=deadline_hours,
                                              budget_usd=budget_usd, eligible=eligible))
    c, t, r = cost[candidates], time[candidates], order[candidates]
    keys = (r, t, c) if goal == "cheapest" else (r, c, t)
    return np.asarray(candidates[np.lexsort(keys)], dtype=np.int64)


def cheapest(cost_usd: npt.ArrayLike, makespan_hours: npt.ArrayLike, *,
             deadline_hours: float | None = None, rank: npt.ArrayLike | None = None,
             eligible: npt.ArrayLike | None = None) -> int | None:
    """Index of the least expected cost (with ``T <= deadline_hours`` if given, among the
    ``eligible``), or ``None`` when no configuration qualifies. Ties: lower T, then lower
    rank."""
    order = best_first("cheapest", cost_usd, makespan_hours, deadline_hours=deadline_hours,
                       rank=rank, eligible=eligible)
    return int(order[0]) if order.size else None


def fastest(cost_usd: npt.ArrayLike, makespan_hours: npt.ArrayLike, *,
            budget_usd: float | None = None, rank: npt.ArrayLike | None = None,
            eligible: npt.ArrayLike | None = None) -> int | None:
    """Index of the least expected makespan (with ``C <= budget_usd`` if given, among the
    ``eligible``), or ``None`` when no configuration qualifies. Ties: lower C, then lower
    rank."""
    order = best_first("fastest", cost_usd, makespan_hours, budget_usd=budget_usd, rank=rank,
                       eligible=eligible)
    return int(order[0]) if order.size else None


def pareto_frontier(cost_usd: npt.ArrayLike, makespan_hours: npt.ArrayLike, *,
                    rank: npt.ArrayLike | None = None) -> IntArray:
    """Indices of the Pareto frontier, by increasing cost (so decreasing makespan)."""
    cost, time, order = _inputs(cost_usd, makespan_hours, rank)
    candidates = np.flatnonzero(~np.isnan(cost) & ~np.isnan(time))
    if candidates.size == 0:
        return np.empty(0, dtype=np.int64)
    sorted_idx = candidates[np.lexsort((order[candidates], time[candidates],
                                        cost[candidates]))]
    t = time[sorted_idx]
    best_before = np.concatenate(([np.inf], np.minimum.accumulate(t)[:-1]))
    keep = t < best_before
    keep[0] = True  # the cheapest (ties: fastest, then rank) is never beaten
    return np.asarray(sorted_idx[keep], dtype=np.int64)
