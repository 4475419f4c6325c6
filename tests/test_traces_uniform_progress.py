"""Uniform Progress (issue 26 item 2) and the greedy ``deadline`` rule in the backtest against a
plain-loop oracle of their definitions (``tests/recovery_oracle.py``) on seeded synthetic
traces, 1 to 3 pools with different hours and prices, deadlines tight and loose; every number a
multiple of 1/16 h so that ties at tick boundaries happen and are exact. Both paths of the
engine (the policy asked where its hint says, and at every boundary) are checked. The oracle's
greedy rule is itself checked against ``tests/traces_oracle.py``."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deepvm_core.job import backtest_replay
from deepvm_core.job.backtest import BacktestJob
from deepvm_core.job.backtest_replay import backtest
from deepvm_core.market.trace import SpotTrace
from tests.recovery_oracle import policy_run
from tests.traces_oracle import PoolJob, oracle_run

G = 0.25


@pytest.fixture(autouse=True, scope="module", params=["hints", "every-boundary"])
def engine_path(request):
    backtest_replay._EVERY_BOUNDARY = request.param == "every-boundary"
    yield request.param
    backtest_replay._EVERY_BOUNDARY = False


def synthetic(seed: int, ticks: int, mean_up: float, mean_down: float) -> list[int]:
    rng = np.random.default_rng(seed)
    out: list[int] = []
    state = int(rng.random() < 0.5)
    while len(out) < ticks:
        out += [state] * int(rng.geometric(1.0 / (mean_up if state else mean_down)))
        state = 1 - state
    return out[:ticks]


def make(pools: int, k: int, full: list[int], last: list[int], restart: list[int],
         price: list[float]) -> tuple[BacktestJob, list[PoolJob]]:
    fb = [6.0 + p for p in range(pools)]
    od = [0.5 + 0.25 * p for p in range(pools)]
    job = BacktestJob(full_segments=[k], full_segment_hours=[[f / 16 for f in full]],
                      last_segment_hours=[[x / 16 for x in last]],
                      restart_hours=[[r / 16 for r in restart]], spot_vms=[[1] * pools],
                      price_usd_per_hour=[price], on_demand_usd_per_hour=[od],
                      fallback_usd_per_hour=[fb])
    jobs = [PoolJob(full[p] / 16, last[p] / 16, restart[p] / 16, price[p], od[p], fb[p])
            for p in range(pools)]
    return job, jobs


def check(policy: str, data: list[list[int]], job: BacktestJob, jobs: list[PoolJob],
          k: int, deadline: float, starts: int) -> None:
    traces = [SpotTrace(f"p{i}", G * 3600, np.asarray(d, dtype=np.int64))
              for i, d in enumerate(data)]
    got = backtest(traces, job, policy=policy, deadline_hours=deadline,  # type: ignore[arg-type]
                   starts=starts)
    size = len(data[0])
    s = min(starts, size)
    up = [[bool(c) for c in d] for d in data]
    want = [policy_run(up, G, k, jobs, policy, deadline, (i * size) // s) for i in range(s)]
    assert got.makespan_hours[0].tolist() == [w.makespan for w in want]
    assert got.interruptions[0].tolist() == [w.interruptions for w in want]
    assert got.fell_back[0].tolist() == [w.fell_back for w in want]
    np.testing.assert_allclose(got.spot_hours[0], [w.spot for w in want], rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_allclose(got.on_demand_hours[0], [w.on_demand for w in want],
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got.wait_hours[0], [w.wait for w in want], rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_allclose(got.cost_usd[0], [w.cost for w in want], rtol=1e-12)


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
@pytest.mark.parametrize("deadline", [3.0, 4.5, 7.0, 12.0])
def test_uniform_progress_matches_its_oracle(seed, deadline):
    data = [synthetic(seed * 10 + p, 80, 5.0, 4.0) for p in range(3)]
    job, jobs = make(3, 7, [6, 8, 6], [5, 6, 5], [2, 1, 3], [2.0, 2.5, 1.5])
    check("uniform-progress", data, job, jobs, 7, deadline, starts=40)


def test_uniform_progress_on_a_pool_never_up_by_hand():
    # job 1 h (one segment), R 0.25, D 4: t = 0 on the line: nothing; t = 0.25 behind: on
    # demand from 0.25, R + 1 h: makespan 1.5, cost 0.5 * 0.25 wait + 6 * 1.25 on demand
    job, _ = make(1, 0, [16], [16], [4], [2.0])
    runs = backtest([SpotTrace("never", 900.0, np.zeros(20, dtype=np.int64))], job,
                    policy="uniform-progress", deadline_hours=4.0, starts=1)
    assert runs.makespan_hours[0, 0] == 1.5
    assert runs.cost_usd[0, 0] == 0.125 + 7.5
    assert runs.on_demand_hours[0, 0] == 1.25


def test_uniform_progress_goes_back_to_spot_paying_a_restart():
    # down 2 ticks then up: 4 segments of 0.25 h, R 0.125, D 3 (line t / 3 of 1 h).
    # t 0: nothing (on the line); t 0.25: behind (0 < 1/12): on demand, R + 0.25 ends at 0.625,
    # so at t 0.5 nothing is done and the pool is up: back to spot (a move: R again), the
    # on-demand attempt is lost. From 0.5: 0.125 + 4 x 0.25 = 1.125 h: done at 1.625
    job, _ = make(1, 3, [4], [4], [2], [2.0])
    runs = backtest([SpotTrace("a", 900.0, np.asarray([0, 0] + [1] * 20, dtype=np.int64))], job,
                    policy="uniform-progress", deadline_hours=3.0, starts=1)
    assert runs.makespan_hours[0, 0] == 1.625
    assert runs.on_demand_hours[0, 0] == 0.25
    assert runs.spot_hours[0, 0] == 1.125
    assert runs.wait_hours[0, 0] == 0.25
    assert runs.interruptions[0, 0] == 0
    assert runs.fell_back[0, 0]


@pytest.mark.parametrize("seed", [5, 6])
def test_the_oracles_greedy_rule_agrees_with_traces_oracle(seed):
    data = [synthetic(seed * 10 + p, 60, 4.0, 3.0) for p in range(2)]
    _, jobs = make(2, 5, [6, 8], [5, 6], [2, 1], [2.0, 2.5])
    up = [[bool(c) for c in d] for d in data]
    for start in range(0, 60, 3):
        a = policy_run(up, G, 5, jobs, "deadline", 4.0, start)
        b = oracle_run(up, G, 5, jobs, "deadline", 4.0, start)
        assert (a.makespan, a.interruptions, a.fell_back) == (b.makespan, b.interruptions,
                                                              b.fell_back)
        assert a.cost == pytest.approx(b.cost, rel=1e-12)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), pools=st.integers(1, 3), k=st.integers(0, 6),
       full=st.integers(1, 12), last=st.integers(1, 12), restart=st.integers(0, 4),
       slack=st.integers(-4, 64), policy=st.sampled_from(["deadline", "uniform-progress"]))
def test_random_jobs_match_the_oracle(seed, pools, k, full, last, restart, slack, policy):
    data = [synthetic(seed + p, 40, 5.0, 3.0) for p in range(pools)]
    job, jobs = make(pools, k, [full + p for p in range(pools)], [last] * pools,
                     [restart] * pools, [2.0 + 0.5 * p for p in range(pools)])
    deadline = max((k * full + last + slack) / 16, 1 / 16)
    check(policy, data, job, jobs, k, deadline, starts=20)
