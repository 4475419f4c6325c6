"""Picking configurations by expected cost and makespan (``job-model.md``, "Objectives").

All three work on arrays, one entry per configuration: expected cost C (USD), expected makespan
T (hours) and an optional ``rank`` array (``model.md``'s order: lower ranks first; by default
the array order). Ties go to the lower C, then the lower T, then the lower rank. An entry with
a NaN cost or makespan is never picked and never on the frontier.

* :func:`cheapest`: least C, optionally with ``T <= deadline_hours``;
* :func:`fastest`: least T (ties: lower C, then rank), optionally with ``C <= budget_usd``;
* :func:`pareto_frontier`: the configurations no other beats on both T and C (at least as good
  on both and better on one); of configurations with equal (C, T) only the first by rank is
  kept. Sort by (C, T, rank), then keep each entry whose T is below every earlier T:
  O(n log n).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from deepvm_core.arrays import FloatArray, IntArray
from deepvm_core.errors import InputError


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


def cheapest(cost_usd: npt.ArrayLike, makespan_hours: npt.ArrayLike, *,
             deadline_hours: float | None = None,
             rank: npt.ArrayLike | None = None) -> int | None:
    """Index of the least expected cost (with ``T <= deadline_hours`` if given), or ``None``
    when no configuration qualifies. Ties: lower T, then lower rank."""
    _limit("deadline_hours", deadline_hours)
    cost, time, order = _inputs(cost_usd, makespan_hours, rank)
    ok = ~np.isnan(cost) & ~np.isnan(time)
    if deadline_hours is not None:
        ok &= time <= deadline_hours
    candidates = np.flatnonzero(ok)
    if candidates.size == 0:
        return None
    best = np.lexsort((order[candidates], time[candidates], cost[candidates]))[0]
    return int(candidates[best])


def fastest(cost_usd: npt.ArrayLike, makespan_hours: npt.ArrayLike, *,
            budget_usd: float | None = None,
            rank: npt.ArrayLike | None = None) -> int | None:
    """Index of the least expected makespan (with ``C <= budget_usd`` if given), or ``None``
    when no configuration qualifies. Ties: lower C, then lower rank."""
    _limit("budget_usd", budget_usd)
    cost, time, order = _inputs(cost_usd, makespan_hours, rank)
    ok = ~np.isnan(cost) & ~np.isnan(time)
    if budget_usd is not None:
        ok &= cost <= budget_usd
    candidates = np.flatnonzero(ok)
    if candidates.size == 0:
        return None
    best = np.lexsort((order[candidates], cost[candidates], time[candidates]))[0]
    return int(candidates[best])


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
