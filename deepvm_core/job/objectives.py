"""Picking configurations by expected cost and makespan (``job-model.md``, "Objectives").

All three work on arrays, one entry per configuration: expected cost C (USD), expected makespan
T (hours) and an optional ``rank`` array (``model.md``'s order: lower ranks first; by default
the array order). Ties go to the lower C, then the lower T, then the lower rank. An entry with
a NaN cost or makespan is never picked and never on the frontier.

* :func:`best_first`: the configurations within a deadline (``T <= deadline_hours``) and a
  budget (``C <= budget_usd``), best first by a :data:`Goal`: for ``cheapest``, those as cheap
  as the cheapest (below) first by rank, then the rest by (C, T, rank); for ``fastest`` with
  diminishing returns (below), then by (T, C, rank) (:func:`deepvm_core.pipeline.plan.plan_job`'s
  order);
* :func:`cheapest`: least C, optionally with ``T <= deadline_hours``;
* :func:`fastest`: least T (ties: lower C, then rank), optionally with ``C <= budget_usd``;
* :func:`pareto_frontier`: the configurations no other beats on both T and C (at least as good
  on both and better on one); of configurations with equal (C, T) only the first by rank is
  kept. Sort by (C, T, rank), then keep each entry whose T is below every earlier T:
  O(n log n).
* :func:`frontier_steps`: along the frontier (cost ascending), what each step costs per hour
  it saves, and the knee.

**Fastest, with diminishing returns.** A buyer who asks for the fastest cluster does not want
to pay 222 times more to save 0.02 %. With ``T_min`` the least expected makespan within the
limits and a tolerance ``ε`` (:data:`DEFAULT_FASTEST_TOLERANCE`, 2 %), the configurations with
``T <= T_min (1 + ε)`` are "as fast"; ``fastest`` ranks those first, cheapest first (C, T,
rank), then the rest by (T, C, rank). ``ε = 0`` is the plain least makespan.

**Cheapest, one tie rule with Recommend.** A cluster whose expected cost and makespan are both
within :data:`CHEAPEST_TOLERANCE` (0.5 %) of those of the cheapest ``b`` (by (C, T, rank)),
``C <= C_b (1 + δ)`` and ``T <= T_b (1 + δ)``, is the same answer: the job model's own error
is tens of percent (the rolling-origin table, ``docs/method.md``), and a cent between two
memory nodes of one price (c5.large and c6i.large, 0.085 USD/h, whose networks change a
checkpoint's stall by a second) must not make Plan and Recommend name different clusters.
Among those, ``model.md``'s stage-4 order (``rank``: Recommend's) decides; the others follow
by (C, T, rank).

**Marginal cost of time along the frontier.** On the frontier sorted by cost
``C_0 < C_1 < ...`` (so ``T_0 > T_1 > ...``), step i costs ``m_i = (C_i - C_{i-1}) /
(T_{i-1} - T_i)`` USD per hour saved (``m_0`` undefined: NaN). The knee is the frontier point
farthest from the straight line between the two ends, both axes scaled to [0, 1] (the
"Kneedle" rule: where buying time stops being cheap); with fewer than three points there is no
knee.
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
#: ``fastest``: configurations within this share of the least expected makespan count as
#: equally fast, and the cheapest of them wins (2 %).
DEFAULT_FASTEST_TOLERANCE = 0.02
#: ``cheapest``: expected costs within this share of the least are as cheap, and the stage-4
#: order (Recommend's) decides among them (0.5 %).
CHEAPEST_TOLERANCE = 0.005


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


def check_fastest_tolerance(value: float) -> float:
    """``value`` if it is a share in [0, 1], else an :class:`InputError` naming it."""
    if (isinstance(value, bool) or not isinstance(value, (int, float))
            or not 0 <= value <= 1):
        raise InputError("fastest_tolerance", value,
                         "must be a share from 0 to 1 (0.02: within 2 % of the fastest)")
    return float(value)


def best_first(goal: Goal, cost_usd: npt.ArrayLike, makespan_hours: npt.ArrayLike, *,
               deadline_hours: float | None = None, budget_usd: float | None = None,
               rank: npt.ArrayLike | None = None,
               eligible: npt.ArrayLike | None = None,
               fastest_tolerance: float = DEFAULT_FASTEST_TOLERANCE) -> IntArray:
    """Indices of the configurations :func:`within_limits`, best first by ``goal``: for
    ``cheapest``, those within :data:`CHEAPEST_TOLERANCE` of the cheapest's cost and makespan
    first, by (rank, C, T), then the others by (C, T, rank); for ``fastest``, those within
    ``fastest_tolerance`` of the least makespan first, by (C, T, rank), then the others by
    (T, C, rank)."""
    if goal not in GOALS:
        raise InputError("goal", goal, f"must be one of {', '.join(GOALS)}")
    tolerance = check_fastest_tolerance(fastest_tolerance)
    cost, time, order = _inputs(cost_usd, makespan_hours, rank)
    candidates = np.flatnonzero(within_limits(cost, time, deadline_hours=deadline_hours,
                                              budget_usd=budget_usd, eligible=eligible))
    c, t, r = cost[candidates], time[candidates], order[candidates]
    if candidates.size == 0:
        return candidates.astype(np.int64)
    if goal == "cheapest":
        by_cost = np.lexsort((r, t, c))
        best = by_cost[0]
        slack = 1.0 + CHEAPEST_TOLERANCE
        same = (c <= c[best] * slack) & (t <= t[best] * slack)
        # the same answer as the cheapest first, by rank; then the rest by (C, T, rank)
        rest = by_cost[~same[by_cost]]
        tied = np.flatnonzero(same)
        tied = tied[np.lexsort((t[tied], c[tied], r[tied]))]
        return np.asarray(candidates[np.concatenate((tied, rest))], dtype=np.int64)
    as_fast = t <= t.min() * (1.0 + tolerance)
    # as fast first (0), then the rest (1); within "as fast" by (C, T, rank), else (T, C, rank)
    first = np.where(as_fast, c, t)
    second = np.where(as_fast, t, c)
    keys = (r, second, first, ~as_fast)
    return np.asarray(candidates[np.lexsort(keys)], dtype=np.int64)


def cheapest(cost_usd: npt.ArrayLike, makespan_hours: npt.ArrayLike, *,
             deadline_hours: float | None = None, rank: npt.ArrayLike | None = None,
             eligible: npt.ArrayLike | None = None) -> int | None:
    """Index of the least expected cost (with ``T <= deadline_hours`` if given, among the
    ``eligible``), or ``None`` when no configuration qualifies. Ties: lower T, then lower
    rank; a cluster within :data:`CHEAPEST_TOLERANCE` of the cheapest's cost and makespan
    ties with it, and the lower rank wins."""
    order = best_first("cheapest", cost_usd, makespan_hours, deadline_hours=deadline_hours,
                       rank=rank, eligible=eligible)
    return int(order[0]) if order.size else None


def fastest(cost_usd: npt.ArrayLike, makespan_hours: npt.ArrayLike, *,
            budget_usd: float | None = None, rank: npt.ArrayLike | None = None,
            eligible: npt.ArrayLike | None = None,
            fastest_tolerance: float = DEFAULT_FASTEST_TOLERANCE) -> int | None:
    """Index of the cheapest configuration within ``fastest_tolerance`` of the least expected
    makespan (with ``C <= budget_usd`` if given, among the ``eligible``), or ``None`` when no
    configuration qualifies. Ties: lower T, then lower rank. ``fastest_tolerance=0``: the
    least makespan (ties: lower C, then rank)."""
    order = best_first("fastest", cost_usd, makespan_hours, budget_usd=budget_usd, rank=rank,
                       eligible=eligible, fastest_tolerance=fastest_tolerance)
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


def frontier_steps(cost_usd: npt.ArrayLike, makespan_hours: npt.ArrayLike,
                   frontier: npt.ArrayLike) -> tuple[FloatArray, int | None]:
    """Along ``frontier`` (indices by increasing cost, as :func:`pareto_frontier` gives them):
    each point's marginal cost of time, USD per hour saved against the previous point (NaN for
    the first), and the position in ``frontier`` of the knee (``None`` with fewer than three
    points, or when every point lies on the line between the ends)."""
    cost = np.asarray(cost_usd, dtype=np.float64).ravel()
    time = np.asarray(makespan_hours, dtype=np.float64).ravel()
    idx = np.asarray(frontier, dtype=np.int64).ravel()
    c, t = cost[idx], time[idx]
    marginal = np.full(idx.size, np.nan)
    if idx.size >= 2:
        with np.errstate(divide="ignore", invalid="ignore"):
            marginal[1:] = np.diff(c) / -np.diff(t)
    if idx.size < 3:
        return marginal, None
    span_c, span_t = c[-1] - c[0], t[0] - t[-1]
    if not (span_c > 0 and span_t > 0 and np.isfinite(span_c) and np.isfinite(span_t)):
        return marginal, None
    x = (c - c[0]) / span_c  # 0 .. 1, cost up
    y = (t[0] - t) / span_t  # 0 .. 1, time saved
    # distance above the chord y = x (time saved beyond what a straight line buys)
    gain = y - x
    best = int(np.argmax(gain))
    return marginal, (best if gain[best] > 1e-12 else None)
