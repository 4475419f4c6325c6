"""The backtest (``traces.md``, "Backtest") against a plain-loop oracle (``traces_oracle.py``)
on seeded synthetic traces, edge cases worked by hand, and hypothesis invariants.

Every number is a multiple of 1/16 h (ticks of 0.25 h), so both implementations compute in
exact binary fractions and must agree exactly, ties at tick boundaries included.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from deepvm_core.job import backtest_replay
from deepvm_core.job.backtest import BacktestJob
from deepvm_core.job.backtest_replay import backtest, start_ticks
from deepvm_core.job.backtest_runs import BacktestRuns
from deepvm_core.market.trace import SpotTrace, TraceError
from tests.synthetic_traces import alternating_runs
from tests.traces_oracle import NeverEnds, PoolJob, oracle_percentile, oracle_run

G_SECONDS = 900.0  # 0.25 h ticks
G = 0.25


@pytest.fixture(autouse=True, scope="module", params=["hints", "every-boundary"])
def engine_path(request):
    """Every test twice: the backtest's fast path (the policy asked again only where its
    decision's hint says the answer may change) and the plain one (asked at every boundary)."""
    backtest_replay._EVERY_BOUNDARY = request.param == "every-boundary"
    yield request.param
    backtest_replay._EVERY_BOUNDARY = False


def trace(data: list[int], gap: float = G_SECONDS, name: str = "t") -> SpotTrace:
    return SpotTrace(name, gap, np.asarray(data, dtype=np.int64))


def synthetic(seed: int, ticks: int, mean_up: float, mean_down: float) -> list[int]:
    """Seeded alternating runs, the first up or down at random."""
    return alternating_runs(seed, ticks, mean_up, mean_down, random_start=True)


def job(k: int, full: float | list[float], last: float | list[float],
        restart: float | list[float] = 0.125, price: float | list[float] = 2.0,
        od: float | list[float] = 0.5, fb: float | list[float] = 5.0,
        pools: int = 1) -> BacktestJob:
    def row(x: float | list[float]) -> list[list[float]]:
        return [list(x) if isinstance(x, list) else [x] * pools]
    return BacktestJob(full_segments=[k], full_segment_hours=row(full),
                       last_segment_hours=row(last), restart_hours=row(restart),
                       spot_vms=[[1] * pools], price_usd_per_hour=row(price),
                       on_demand_usd_per_hour=row(od), fallback_usd_per_hour=row(fb))


def oracle_all(traces: list[SpotTrace], j: BacktestJob, policy: str, deadline: float | None,
               starts: int) -> list:
    up = [[bool(c >= 1) for c in t.counts] for t in traces]
    jobs = [PoolJob(float(j.full_segment_hours[0, p]), float(j.last_segment_hours[0, p]),
                    float(j.restart_hours[0, p]), float(j.price_usd_per_hour[0, p]),
                    float(j.on_demand_usd_per_hour[0, p]), float(j.fallback_usd_per_hour[0, p]))
            for p in range(len(traces))]
    size = traces[0].ticks
    s = min(starts, size)
    return [oracle_run(up, G, int(j.full_segments[0]), jobs, policy, deadline, (i * size) // s)
            for i in range(s)]


def oracle_and_backtest(traces: list[SpotTrace], j: BacktestJob, policy: str,
                        deadline: float | None = None, starts: int = 40
                        ) -> tuple[list, BacktestRuns] | None:
    """The oracle's runs and the backtest's, or ``None`` where the oracle's job never
    finishes, after checking that the backtest refuses it too."""
    try:
        want = oracle_all(traces, j, policy, deadline, starts)
    except NeverEnds:
        with pytest.raises(TraceError, match="never"):
            backtest(traces, j, policy=policy, deadline_hours=deadline, starts=starts)
        return None
    return want, backtest(traces, j, policy=policy, deadline_hours=deadline, starts=starts)


def assert_matches(traces: list[SpotTrace], j: BacktestJob, policy: str,
                   deadline: float | None = None, starts: int = 40) -> None:
    both = oracle_and_backtest(traces, j, policy, deadline, starts)
    if both is None:
        return
    want, got = both
    assert got.makespan_hours[0].tolist() == [r.makespan for r in want]
    assert got.interruptions[0].tolist() == [r.interruptions for r in want]
    assert got.fell_back[0].tolist() == [r.fell_back for r in want]
    np.testing.assert_allclose(got.spot_hours[0], [r.spot for r in want], rtol=1e-12)
    np.testing.assert_allclose(got.wait_hours[0], [r.wait for r in want], rtol=1e-12)
    np.testing.assert_allclose(got.cost_usd[0], [r.cost for r in want], rtol=1e-12)


# ----------------------------------------------------------------------------- by hand


def test_start_ticks_floor_j_l_over_s():
    # L = 10, S = 4: floor(0), floor(2.5), floor(5), floor(7.5)
    assert start_ticks(10, 4).tolist() == [0, 2, 5, 7]
    assert start_ticks(3, 200).tolist() == [0, 1, 2]  # S = min(S, L)


def test_always_up_runs_the_job_straight():
    # 3 full segments of 0.5 h + a last of 0.25 h = 1.75 h, no restart, P = 2: cost 3.5
    got = backtest([trace([1, 1, 1, 1])], job(3, 0.5, 0.25), policy="wait", starts=4)
    assert got.makespan_hours.tolist() == [[1.75] * 4]
    assert got.cost_usd.tolist() == [[3.5] * 4]
    assert got.interruptions.tolist() == [[0] * 4]


def test_outage_at_the_start_waits_then_runs_without_restart():
    # ticks: down, down, up...: the job waits 0.5 h (billed at P_od 0.5: 0.25 USD), then runs
    # 1 h with no restart (no interruption happened): makespan 1.5 h, cost 0.25 + 2 * 1 = 2.25
    got = backtest([trace([0, 0] + [1] * 10)], job(1, 0.5, 0.5), policy="wait", starts=1)
    assert got.makespan_hours[0, 0] == 1.5
    assert got.wait_hours[0, 0] == 0.5
    assert got.cost_usd[0, 0] == 2.25
    assert got.interruptions[0, 0] == 0


def test_interruption_inside_a_restart():
    # up 0.5 h, down, up 0.25 h, down, then up. Segments: 0.375 h + last 0.375 h, R = 0.375 h.
    # Segment 0 done at 0.375; segment 1 runs 0.375-0.5, lost at 0.5 (event 1).
    # At 0.75 (up again): restart 0.375 h would end at 1.125 but the pool drops at 1.0 (event 2,
    # inside the restart). At 1.25: R + 0.375 = 0.75 h -> done at 2.0.
    data = [1, 1, 0, 1, 0] + [1] * 10
    got = backtest([trace(data)], job(1, 0.375, 0.375, restart=0.375), policy="wait",
                   starts=1)
    assert got.makespan_hours[0, 0] == 2.0
    assert got.interruptions[0, 0] == 2
    # spot: 0.5 + 0.25 + 0.75 = 1.5 h; wait: 0.25 + 0.25 = 0.5 h
    assert got.spot_hours[0, 0] == 1.5
    assert got.wait_hours[0, 0] == 0.5


def test_deadline_forces_a_fallback_at_time_zero():
    # rem 2 h, R 0.125, g 0.25: D - 0 = 2.25 < 2 + 0.125 + 0.25 -> fallback at 0:
    # makespan 2.125 h, cost P_fallback 5 * 2.125 = 10.625, no spot hours
    got = backtest([trace([1] * 8)], job(3, 0.5, 0.5), policy="deadline", deadline_hours=2.25,
                   starts=2)
    assert got.makespan_hours.tolist() == [[2.125, 2.125]]
    assert got.cost_usd.tolist() == [[10.625, 10.625]]
    assert got.fell_back.all()
    assert got.spot_hours.tolist() == [[0.0, 0.0]]


def test_failover_when_every_pool_is_down_at_once():
    # both pools down for the first 2 ticks, then pool B up: wait 0.5 h, run 1 h in B
    a, b = trace([0, 0, 0, 0, 1, 1, 1, 1], name="a"), trace([0, 0, 1, 1, 1, 1, 1, 1], name="b")
    got = backtest([a, b], job(1, 0.5, 0.5, pools=2), policy="failover", starts=1)
    assert got.makespan_hours[0, 0] == 1.5
    assert got.wait_hours[0, 0] == 0.5


def test_failover_stays_in_a_pool_while_it_is_up():
    # pool A down at tick 0, B up: the job runs in B and stays there when A comes back
    a, b = trace([0, 1, 1, 1, 1, 1], name="a"), trace([1, 1, 1, 1, 1, 1], name="b")
    got = backtest([a, b], job(2, 0.5, 0.25, price=[1.0, 3.0], pools=2),
                   policy="failover", starts=1)
    assert got.makespan_hours[0, 0] == 1.25
    assert got.cost_usd[0, 0] == 3.75


def test_deadline_fallback_inside_a_later_segment_of_an_up_run():
    # found by a search with the engine's near-deadline stepping disabled
    data = [1, 0, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1,
            1, 0, 1, 1, 1, 1, 1, 1]
    assert_matches([trace(data)], job(3, 3 / 16, 4 / 16, restart=0.0), "deadline", 1.125,
                   starts=35)


def test_deadline_rule_at_a_boundary_uses_the_last_pool_then_moves():
    # at time 0 the rule reads the first pool's hours; the job starts in pool c (a, b down)
    a = [1, 0, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1,
         1, 1, 0, 1, 1, 0]
    b = [0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 0, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0,
         1, 0, 0, 1, 1, 1]
    c = [0, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1,
         0, 1, 1, 0, 1, 1]
    j = job(1, [0.125, 0.3125, 0.6875], [0.125, 0.3125, 0.3125], restart=[0.1875, 0, 0.125],
            price=[1.0, 2.0, 3.0], od=[0.25, 0.5, 0.75], fb=[9.0, 8.0, 7.0], pools=3)
    assert_matches([trace(a, name="a"), trace(b, name="b"), trace(c, name="c")], j,
                   "deadline", 0.9375, starts=35)


def test_a_job_that_never_fits_is_refused():
    # up runs of 0.25 h, a segment of 0.5 h: never done
    with pytest.raises(TraceError, match="never finishes"):
        backtest([trace([1, 0] * 6)], job(0, 0.5, 0.5), policy="wait", starts=2)


def test_refusals():
    t = trace([0, 1])
    with pytest.raises(TraceError, match="never up"):
        backtest([trace([0, 0])], job(0, 1.0, 1.0), policy="wait")
    with pytest.raises(TraceError, match="needs a deadline"):
        backtest([t], job(0, 1.0, 1.0), policy="deadline")
    with pytest.raises(TraceError, match="deadline_hours"):
        backtest([t], job(0, 1.0, 1.0), policy="deadline", deadline_hours=0.0)
    with pytest.raises(TraceError, match="starts"):
        backtest([t], job(0, 1.0, 1.0), starts=0)
    with pytest.raises(TraceError, match="starts"):
        backtest([t], job(0, 1.0, 1.0), starts=100_001)
    with pytest.raises(TraceError, match="same length"):
        backtest([t, trace([1, 1, 1])], job(0, 1.0, 1.0, pools=2))
    big = BacktestJob([0], [[1.0]], [[1.0]], [[0.1]], [[5]], [[1.0]], [[0.0]], [[2.0]])
    with pytest.raises(TraceError, match="largest count"):
        backtest([trace([0, 4, 3])], big)


def test_count_trace_is_up_when_the_cluster_fits():
    # counts [4, 2, 4, 4]: 3 spot VMs are up in ticks 0, 2, 3 only; a state trace would not
    j = BacktestJob([0], [[0.25]], [[0.5]], [[0.0]], [[3]], [[1.0]], [[0.0]], [[2.0]])
    got = backtest([trace([4, 2, 4, 4])], j, policy="wait", starts=1)
    # 0-0.25 runs, lost at 0.25 (event), waits tick 1, restarts at 0.5: 0 + 0.5 -> 1.0
    assert got.makespan_hours[0, 0] == 1.0
    assert got.interruptions[0, 0] == 1


# ----------------------------------------------------------------------------- vs the oracle


@pytest.mark.parametrize("policy", ["wait", "failover", "deadline"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_matches_the_oracle_on_synthetic_traces(policy, seed):
    traces = [trace(synthetic(seed * 10 + p, 96, 6.0, 3.0), name=f"p{p}") for p in range(3)]
    j = job(7, [0.5, 0.625, 0.5], [0.3125, 0.375, 0.3125], restart=[0.125, 0.0625, 0.1875],
            price=[2.0, 2.5, 1.5], od=[0.5, 0.5, 0.75], fb=[6.0, 7.0, 6.5], pools=3)
    deadline = 9.0 if policy == "deadline" else None
    assert_matches(traces if policy != "wait" else traces[:1],
                   j if policy != "wait" else job(7, 0.5, 0.3125), policy, deadline, starts=48)


@pytest.mark.parametrize("deadline", [3.0, 4.5, 6.0, 12.0])
def test_deadline_matches_the_oracle_near_and_far_from_the_deadline(deadline):
    traces = [trace(synthetic(99, 64, 4.0, 4.0), name="a"),
              trace(synthetic(98, 64, 3.0, 2.0), name="b")]
    assert_matches(traces, job(11, 0.25, 0.125, pools=2), "deadline", deadline, starts=64)


def test_long_segments_and_short_ticks_match_the_oracle():
    # segments of 1.5 h over 0.25 h ticks: most up runs cannot hold one
    traces = [trace(synthetic(5, 80, 8.0, 2.0))]
    assert_matches(traces, job(2, 1.5, 1.0, restart=0.25), "wait", starts=80)
    assert_matches(traces, job(2, 1.5, 1.0, restart=0.25), "deadline", 12.0, starts=80)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(0, 6),
       full=st.integers(1, 12), last=st.integers(1, 12), restart=st.integers(0, 4),
       policy=st.sampled_from(["wait", "failover", "deadline"]),
       slack=st.integers(-8, 64))
def test_random_jobs_match_the_oracle(seed, k, full, last, restart, policy, slack):
    traces = [trace(synthetic(seed + p, 40, 5.0, 3.0), name=f"p{p}") for p in range(2)]
    if not any(np.asarray(traces[0].counts)):
        traces[0] = trace([1, *list(traces[0].counts[1:])], name="p0")
    j = job(k, full / 16, last / 16, restart=restart / 16, pools=2)
    total = (k * full + last) / 16
    deadline = total + slack / 16 + 0.5 if policy == "deadline" else None
    if deadline is not None and deadline <= 0:
        deadline = 0.0625
    assert_matches(traces if policy != "wait" else traces[:1],
                   j if policy != "wait" else job(k, full / 16, last / 16,
                                                  restart=restart / 16),
                   policy, deadline, starts=20)


# ----------------------------------------------------------------------------- invariants


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(0, 8), full=st.integers(1, 16))
@example(seed=199, k=0, full=15)  # the wait policy's run never fits: refused
def test_invariants(seed, k, full):
    data = synthetic(seed, 60, 5.0, 3.0)
    data[0] = 1
    traces = [trace(data, name="a"), trace(synthetic(seed + 1, 60, 5.0, 3.0), name="b")]
    j = job(k, full / 16, full / 16, pools=2)
    compute = (k + 1) * full / 16
    # a run that never fits its segment (and restart) in an up run is refused, as the oracle
    # says (seed 199, k 0, full 15: no up run of pool a is over 1 h)
    checked = [oracle_and_backtest(traces[:1], job(k, full / 16, full / 16), "wait", starts=30),
               oracle_and_backtest(traces, j, "failover", starts=30)]
    for both in checked:
        if both is None:
            continue
        runs = both[1]
        # makespan = spot + wait; never shorter than the compute; cost = P spot + P_od wait
        np.testing.assert_allclose(runs.makespan_hours, runs.spot_hours + runs.wait_hours)
        assert np.all(runs.makespan_hours >= compute - 1e-12)
        np.testing.assert_allclose(runs.cost_usd, 2.0 * runs.spot_hours + 0.5 * runs.wait_hours)
    # a deadline that can always be met on demand is always met
    dl = compute + 0.125 + 2 * G
    dead = backtest(traces, j, policy="deadline", deadline_hours=dl, starts=30)
    assert np.all(dead.makespan_hours <= dl + 1e-9)
    s = dead.summary()
    assert s.deadline_met is not None
    assert s.deadline_met[0] == 1.0


def test_summary_percentiles_are_numpy_linear():
    traces = [trace(synthetic(7, 50, 4.0, 3.0))]
    runs = backtest(traces, job(3, 0.5, 0.25), policy="wait", starts=50)
    s = runs.summary()
    values = runs.makespan_hours[0].tolist()
    assert s.makespan_hours_p90[0] == pytest.approx(oracle_percentile(values, 90.0))
    assert s.makespan_hours_p10[0] == pytest.approx(oracle_percentile(values, 10.0))
    assert s.max_makespan_hours[0] == max(values)
    assert s.deadline_met is None
