"""The backtest's stepper for one run (``deepvm_core.job.backtest_step``, what ``deepvm watch``
moves its job with, issue 28), driven from outside boundary by boundary as the controller drives
it (the policy asked at every boundary, the pools' state given), against the plain-loop oracle of
``tests/traces_oracle.py`` on seeded synthetic traces. Ticks of 0.25 h and hours that are
multiples of 1/16 h: both compute in exact binary fractions and must agree exactly."""

from __future__ import annotations

import numpy as np
import pytest

from deepvm_core.job.backtest import BacktestJob
from deepvm_core.job.backtest_step import RunStepper
from deepvm_core.job.recovery import NOTHING, ON_DEMAND, POLICIES
from tests.synthetic_traces import alternating_runs
from tests.traces_oracle import NeverEnds, PoolJob, oracle_run

G = 0.25
FULL, LAST, R, K = 0.75, 0.5, 0.125, 4


def the_job(pools: int) -> BacktestJob:
    return BacktestJob(full_segments=[K], full_segment_hours=[[FULL] * pools],
                       last_segment_hours=[[LAST] * pools], restart_hours=[[R] * pools],
                       spot_vms=[[1] * pools], price_usd_per_hour=[[2.0] * pools],
                       on_demand_usd_per_hour=[[0.5] * pools],
                       fallback_usd_per_hour=[[5.0] * pools])


def stepped(up: list[list[bool]], policy: str, deadline: float | None) -> RunStepper:
    """The stepper moved as the controller moves it, from trace tick 0."""
    pools, size = len(up), len(up[0])
    run = RunStepper(the_job(pools), G, deadline)
    decide = POLICIES[policy]  # type: ignore[index]
    for k in range(20 * size):
        run.advance(k)
        if run.done_at is not None:
            return run
        now = [up[p][k % size] for p in range(pools)]
        act = int(decide(run.state(now)).action[0])
        assert act in (NOTHING, ON_DEMAND) or now[act], "the policy chose a pool that is down"
        place = run.placement
        run.apply(act, now[place] if place >= 0 else True)
    raise AssertionError("the stepped run never ended")


@pytest.mark.parametrize("policy", ["wait", "failover", "deadline"])
@pytest.mark.parametrize("seed", [1, 2, 3, 5, 8, 13])
def test_the_stepper_driven_from_outside_is_the_oracle(policy: str, seed: int) -> None:
    pools = 1 if policy == "wait" else 2
    up = [[bool(x) for x in alternating_runs(seed + 100 * p, 40, 5.0, 3.0)]
          for p in range(pools)]
    up[0][0] = True
    deadline = 5.0 if policy == "deadline" else None
    jobs = [PoolJob(FULL, LAST, R, 2.0, 0.5, 5.0)] * pools
    try:
        want = oracle_run(up, G, K, jobs, policy, deadline, 0)
    except NeverEnds:
        pytest.skip("the oracle's run never ends on this trace")
    run = stepped(up, policy, deadline)
    assert run.done_at == want.makespan
    assert run.interruptions == want.interruptions
    assert run.fell_back == want.fell_back
    assert run.work_done_hours == K * FULL + LAST


def test_report_work_moves_the_segment_and_keeps_the_attempt() -> None:
    """On one pool always up: an attempt of segment 0 starts at 0 (0.75 h). At 0.5 h the job
    says 1.6 h are checkpointed (segment 2 is the first not done, by hand: floor(1.6 / 0.75)):
    the attempt in progress, ending at 0.75 h, is now segment 2; then segments 3 (0.75 h) and
    the last (0.5 h): the end at 0.75 + 0.75 + 0.5 = 2.0 h."""
    run = RunStepper(the_job(1), G)
    run.advance(0)
    run.apply(0)
    run.advance(2)  # 0.5 h
    assert run.segment == 0
    run.report_work(1.6)
    assert run.segment == 2
    assert run.work_done_hours == 2 * FULL
    for k in range(3, 12):
        run.advance(k)
        if run.done_at is not None:
            break
        run.apply(0)
    assert run.done_at == 2.0
    assert run.interruptions == 0


def test_report_work_of_the_whole_job_ends_it_there() -> None:
    run = RunStepper(the_job(1), G)
    run.advance(3)
    run.report_work(K * FULL + LAST)
    assert run.done_at == 3 * G


def test_one_configuration_only() -> None:
    two = BacktestJob(full_segments=[1, 2], full_segment_hours=[[1.0], [1.0]],
                      last_segment_hours=[[0.5], [0.5]], restart_hours=[[0.1], [0.1]],
                      spot_vms=[[1], [1]], price_usd_per_hour=[[1.0], [1.0]],
                      on_demand_usd_per_hour=[[0.1], [0.1]],
                      fallback_usd_per_hour=[[2.0], [2.0]])
    with pytest.raises(ValueError, match="one configuration, not 2"):
        RunStepper(two, G)
    assert np.isinf(RunStepper(the_job(1), G).state([True]).deadline_hours[0])
