"""cheapest, fastest and the Pareto frontier: ties, limits, and a brute-force check."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deepvm_core.errors import InputError
from deepvm_core.job.objectives import cheapest, fastest, pareto_frontier

COST = [10.0, 8.0, 8.0, 12.0, 8.0, math.nan]
TIME = [5.0, 9.0, 7.0, 4.0, 7.0, 1.0]


def test_cheapest_with_ties_and_a_deadline():
    assert cheapest(COST, TIME) == 2  # cost 8: lower T (7) wins; 2 before 4 by rank
    assert cheapest(COST, TIME, rank=[0, 1, 5, 3, 4, 2]) == 4
    assert cheapest(COST, TIME, deadline_hours=6.0) == 0
    assert cheapest(COST, TIME, deadline_hours=3.0) is None  # the NaN entry never counts


def test_cheapest_within_half_a_percent_on_cost_and_time_is_the_same_answer():
    # issue 27: c5.large and c6i.large (0.085 USD/h each) as memory nodes: 7.07 USD / 4.200 h
    # and 7.06 USD / 4.199 h are the same answer, and the stage-4 order (rank) picks
    assert cheapest([7.07, 7.06], [4.200, 4.199], rank=[0, 1]) == 0
    assert cheapest([7.07, 7.06], [4.200, 4.199], rank=[1, 0]) == 1
    # 7.06 * 1.005 = 7.0953: 7.10 is beyond; 4.199 * 1.005 = 4.22: 4.23 is beyond
    assert cheapest([7.10, 7.06], [4.200, 4.199], rank=[0, 1]) == 1
    assert cheapest([7.07, 7.06], [4.230, 4.199], rank=[0, 1]) == 1
    # the tie is with the cheapest, not a chain: 7.09 ties 7.06, 7.12 does not
    assert cheapest([7.12, 7.09, 7.06], [4.2, 4.2, 4.2], rank=[0, 1, 2]) == 1


def test_fastest_with_ties_and_a_budget():
    assert fastest(COST, TIME) == 3
    assert fastest(COST, TIME, budget_usd=10.0) == 0
    assert fastest([9.0, 8.0, 8.0], [2.0, 2.0, 2.0], rank=[0, 2, 1]) == 2
    assert fastest(COST, TIME, budget_usd=1.0) is None


def test_frontier_on_a_small_case():
    assert pareto_frontier(COST, TIME).tolist() == [2, 0, 3]
    assert pareto_frontier([], []).tolist() == []
    assert pareto_frontier([1.0, 1.0], [math.inf, 2.0]).tolist() == [1]


def test_bad_inputs():
    with pytest.raises(InputError):
        cheapest([1.0, 2.0], [1.0])
    with pytest.raises(InputError):
        fastest([1.0], [1.0], budget_usd=math.nan)


def brute_frontier(cost: list[float], time: list[float], rank: list[int]) -> list[int]:
    keep = []
    for i in range(len(cost)):
        beaten = any(
            (cost[j] <= cost[i] and time[j] <= time[i] and (cost[j] < cost[i] or time[j] < time[i]))
            or (cost[j] == cost[i] and time[j] == time[i] and (rank[j], j) < (rank[i], i))
            for j in range(len(cost)) if j != i)
        if not beaten:
            keep.append(i)
    return sorted(keep, key=lambda i: (cost[i], time[i]))


values = st.integers(0, 6).map(float)


@given(st.lists(st.tuples(values, values, st.integers(0, 3)), max_size=25))
@settings(max_examples=150, deadline=None)
def test_frontier_matches_brute_force(rows):
    cost = [r[0] for r in rows]
    time = [r[1] for r in rows]
    rank = [r[2] for r in rows]
    got = pareto_frontier(cost, time, rank=rank).tolist()
    assert got == brute_frontier(cost, time, rank)
    if rows:
        c = cheapest(cost, time, rank=rank)
        f = fastest(cost, time, rank=rank)
        assert c == got[0]
        assert f == got[-1]
        assert c == min(range(len(rows)), key=lambda i: (cost[i], time[i], rank[i], i))
        assert f == min(range(len(rows)), key=lambda i: (time[i], cost[i], rank[i], i))


def test_frontier_is_fast_on_many_points():
    rng = np.random.default_rng(0)
    cost, time = rng.random(200_000), rng.random(200_000)
    front = pareto_frontier(cost, time)
    assert np.all(np.diff(cost[front]) > 0)
    assert np.all(np.diff(time[front]) < 0)
