"""The deadline offer (issue 26, item 5): the policies priced, the cheapest that meets the target,
the job model's availability paths, and the offer of a plan. Expected values by hand or from
plain loops (tests/recovery_oracle.py, tests/job_oracle.py)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deepvm_core.catalog.store import load_catalog
from deepvm_core.job.backtest import BacktestJob
from deepvm_core.job.backtest_replay import backtest
from deepvm_core.job.deadline_offer import (
    DEADLINE_TARGET,
    PolicyPrice,
    best_policy,
    model_tick_hours,
    price_deadline_policies,
)
from deepvm_core.job.recovery import DEADLINE_POLICIES
from deepvm_core.market.synthetic import renewal_paths
from deepvm_core.market.trace import SpotTrace
from deepvm_core.model import Scenario
from deepvm_core.pipeline.deadline_offer import at_risk, deadline_offer
from deepvm_core.pipeline.plan import plan_job
from deepvm_core.workload.speedup import SpeedupModel
from deepvm_core.workload.workload import example_workload
from tests import job_oracle, recovery_oracle
from tests.traces_oracle import PoolJob


def trace(counts: list[int], gap_hours: float) -> SpotTrace:
    data = np.array(counts, dtype=np.int64)
    data.flags.writeable = False
    return SpotTrace(source="hand", gap_seconds=gap_hours * 3600, counts=data)


def one_segment_job(hours: float, restart: float, price: float, waiting: float,
                    fallback: float) -> BacktestJob:
    return BacktestJob(full_segments=np.array([0]), full_segment_hours=[[hours]],
                       last_segment_hours=[[hours]], restart_hours=[[restart]],
                       spot_vms=[[1]], price_usd_per_hour=[[price]],
                       on_demand_usd_per_hour=[[waiting]], fallback_usd_per_hour=[[fallback]])


# A 1 h job (one segment), R 0.5 h; spot 1 USD/h, waiting 0.5 USD/h, on demand 3 USD/h; a pool up
# in the first of 4 one-hour ticks; deadline 3 h; starts at ticks 0, 1, 2, 3.
HAND_TRACE = trace([1, 0, 0, 0], 1.0)
HAND_JOB = one_segment_job(1.0, 0.5, 1.0, 0.5, 3.0)


def test_hand_case_the_plan_misses_and_slack_reserve_is_offered():
    # Without a deadline policy (``wait``): start 0 runs at once and ends at 1 h; start 1 waits
    # for tick 4 = tick 0 and ends at 4 h (> 3 h: missed); start 2 ends at 3 h, start 3 at 2 h:
    # 3 of 4 = 75 %, under the 95 % target.
    plain = backtest([HAND_TRACE], HAND_JOB, policy="wait", deadline_hours=3.0, starts=4)
    assert plain.makespan_hours[0].tolist() == [1.0, 4.0, 3.0, 2.0]
    assert plain.summary().deadline_met[0] == 0.75 < DEADLINE_TARGET
    prices = {p.policy: p for p in price_deadline_policies([HAND_TRACE], HAND_JOB, 3.0, 4)}
    assert tuple(prices) == DEADLINE_POLICIES
    # deadline (greedy): late once 3 - t < rem + R + g = 2.5, i.e. at t = 1. Start 0 rides spot
    # and is done at 1 h (1 USD); starts 1-3 wait one tick (0.5 USD) and go on demand at 1 h for
    # R + rem = 1.5 h (4.5 USD): 2.5 h, 5 USD. Mean (1 + 3 x 5) / 4 = 4; P90 of [1, 5, 5, 5] = 5;
    # on demand 4.5 of 5.5 running hours.
    greedy = prices["deadline"]
    assert greedy.deadline_met == 1.0
    assert greedy.mean_cost_usd == pytest.approx(4.0)
    assert greedy.cost_usd_p90 == pytest.approx(5.0)
    assert greedy.on_demand_share == pytest.approx(4.5 / 5.5)
    assert greedy.mean_makespan_hours == pytest.approx((1 + 3 * 2.5) / 4)
    # uniform-progress: the same (at t = 0 the work done is on its line, so it waits; at t = 1
    # the greedy rule fires first).
    assert prices["uniform-progress"].mean_cost_usd == pytest.approx(4.0)
    # slack-reserve: slack 3 - 0 - 2.5 = 0.5 h is under its reserve 2 (R + s) = 3 h, so with no
    # pool up it goes on demand at t = 0: 1.5 h, 4.5 USD. Mean (1 + 3 x 4.5) / 4 = 3.625.
    reserve = prices["slack-reserve"]
    assert reserve.deadline_met == 1.0
    assert reserve.mean_cost_usd == pytest.approx(3.625)
    assert reserve.cost_usd_p90 == pytest.approx(4.5)
    assert reserve.on_demand_share == pytest.approx(4.5 / 5.5)
    assert best_policy(tuple(prices.values()), DEADLINE_TARGET) == reserve


def test_hand_case_no_policy_meets_a_deadline_on_demand_cannot():
    # Deadline 1.2 h < R + job = 1.5 h: every policy is late at t = 0 and takes 1.5 h.
    prices = price_deadline_policies([HAND_TRACE], HAND_JOB, 1.2, 4)
    assert [p.deadline_met for p in prices] == [0.0, 0.0, 0.0]
    assert best_policy(prices, DEADLINE_TARGET) is None


def test_prices_match_the_plain_loop_oracle_on_seeded_traces():
    """deadline and uniform-progress priced from the oracle's runs (plain loops)."""
    rng = random.Random(26)
    for _ in range(4):
        g = rng.choice([0.25, 0.5, 1.0])
        counts = [1 if rng.random() < 0.6 else 0 for _ in range(rng.randint(6, 30))]
        if not any(counts):
            counts[0] = 1
        k = rng.randint(0, 3)
        s, last, r = rng.choice([0.5, 0.75, 1.0]), rng.choice([0.25, 0.5]), rng.choice([0.0, 0.25])
        job = BacktestJob(full_segments=np.array([k]), full_segment_hours=[[s]],
                          last_segment_hours=[[last]], restart_hours=[[r]], spot_vms=[[1]],
                          price_usd_per_hour=[[1.0]], on_demand_usd_per_hour=[[0.25]],
                          fallback_usd_per_hour=[[3.0]])
        deadline = k * s + last + r + rng.choice([0.5, 1.0, 2.5])
        starts = min(len(counts), 8)
        got = {p.policy: p for p in price_deadline_policies([trace(counts, g)], job, deadline,
                                                             starts)}
        pool = PoolJob(s, last, r, 1.0, 0.25, 3.0)
        for policy in ("deadline", "uniform-progress"):
            runs = [recovery_oracle.policy_run([[c >= 1 for c in counts]], g, k, [pool], policy,
                                               deadline, (j * len(counts)) // starts)
                    for j in range(starts)]
            costs = sorted(run.cost for run in runs)
            pos = 0.9 * (len(costs) - 1)  # numpy's linear percentile, by hand
            low = math.floor(pos)
            p90 = costs[low] + (pos - low) * (costs[min(low + 1, len(costs) - 1)] - costs[low])
            od = sum(run.on_demand for run in runs)
            spot = sum(run.spot for run in runs)
            price = got[policy]
            assert price.runs == starts
            assert price.deadline_met == sum(run.makespan <= deadline + 1e-9
                                             for run in runs) / starts
            assert price.mean_cost_usd == pytest.approx(sum(run.cost for run in runs) / starts)
            assert price.cost_usd_p90 == pytest.approx(p90)
            assert price.on_demand_share == pytest.approx(od / (od + spot))


prices_strategy = st.lists(st.builds(
    PolicyPrice, policy=st.sampled_from(DEADLINE_POLICIES), runs=st.just(10),
    deadline_met=st.sampled_from([0.0, 0.5, 0.9, 0.95, 0.99, 1.0]),
    mean_cost_usd=st.sampled_from([1.0, 2.0, 2.5, 3.0]), cost_usd_p90=st.just(4.0),
    on_demand_share=st.just(0.5), mean_makespan_hours=st.just(1.0)), max_size=5)


@settings(max_examples=200, deadline=None)
@given(prices=prices_strategy, target=st.sampled_from([0.5, 0.95, 1.0]))
def test_best_policy_is_the_cheapest_that_meets_the_target(prices, target):
    best = None
    for p in prices:  # the plain loop: the first of the least cost among those meeting it
        if p.deadline_met >= target and (best is None or p.mean_cost_usd < best.mean_cost_usd):
            best = p
    assert best_policy(prices, target) is best


def test_renewal_paths_begin_stationary_and_share_time_as_the_model_says():
    # MTBI 2 h, W 1 h: up a share 2 / 3 of the time, and a path begins down with W / (MTBI + W)
    # = 1 / 3; rounding spells up to whole ticks of 0.05 h lengthens both by 0.025 h on average.
    paths, ticks = 4000, 400
    t = renewal_paths(np.full(paths, 2.0), np.full(paths, 1.0), path_ticks=ticks,
                      gap_seconds=0.05 * 3600, rng=np.random.default_rng(1))
    assert t.ticks == paths * ticks
    assert t.max_count == 1
    up = t.counts.reshape(paths, ticks)
    assert np.mean(up[:, 0] == 0) == pytest.approx(1 / 3, abs=0.03)
    assert up.mean() == pytest.approx(2.025 / 3.05, abs=0.02)
    # W = 0: each outage is one tick
    zero = renewal_paths(np.full(50, 1.0), np.zeros(50), path_ticks=200, gap_seconds=36.0,
                         rng=np.random.default_rng(2)).counts.reshape(50, 200)
    assert np.all(zero[:, 0] == 1)
    padded = np.pad(zero, ((0, 0), (1, 1)), constant_values=1)
    assert not np.any((padded[:, :-2] == 0) & (padded[:, 1:-1] == 0))  # no two down in a row


def test_wait_on_job_model_paths_takes_the_closed_form_makespan():
    """The paths are the job model's process: a job replayed with ``wait`` on them takes the
    closed form's mean makespan (tests/job_oracle.py), up to the ticks' rounding."""
    # 4 segments of 0.5 h (no stall), R 0.1 h, MTBI 2 h, W 0.5 h
    expect = job_oracle.expected_job(2 * 3600, 1800, 0.0, 1 / 2.0, 0.1, 0.5, 1.0, 0.0)
    tick = model_tick_hours(np.array([2.0]), np.array([0.5]), 0.1, 12.0)  # R / 20 = 0.005 h
    assert tick == pytest.approx(0.005)
    paths = renewal_paths(np.full(1000, 2.0), np.full(1000, 0.5), path_ticks=round(12 / tick),
                          gap_seconds=tick * 3600, rng=np.random.default_rng(3))
    job = BacktestJob(full_segments=np.array([3]), full_segment_hours=[[0.5]],
                      last_segment_hours=[[0.5]], restart_hours=[[0.1]], spot_vms=[[1]],
                      price_usd_per_hour=[[1.0]], on_demand_usd_per_hour=[[0.0]],
                      fallback_usd_per_hour=[[3.0]])
    runs = backtest([paths], job, policy="wait", starts=1000)
    # 3.09 h and 1.19 events expected; the mean of 1,000 runs has a standard error of 0.04 h
    assert runs.makespan_hours.mean() == pytest.approx(expect.makespan_h, rel=0.05)
    assert runs.interruptions.mean() == pytest.approx(expect.interruptions, abs=0.15)


@pytest.fixture(scope="module")
def catalog():
    return load_catalog("aws-us-east-1-2025-h1")


def plan(catalog, deadline: float | None, trials: int = 2000):
    return plan_job(catalog, Scenario(3.0), example_workload(), pw_usd_per_hour=3.0,
                    speedup=SpeedupModel(), deadline_hours=deadline, trials=trials)


def test_a_plan_at_risk_is_offered_the_cheapest_policy_that_meets_the_target(catalog):
    result = plan(catalog, 5.0)
    chance = result.chosen.monte_carlo.deadline_probability
    assert chance < DEADLINE_TARGET
    assert at_risk(result) == chance
    offer = deadline_offer(result, catalog)
    assert offer is not None
    assert not offer.on_traces
    assert offer.pools == ()
    assert offer.deadline_hours == 5.0
    assert offer.target == DEADLINE_TARGET
    assert [p.policy for p in offer.considered] == list(DEADLINE_POLICIES)
    meeting = [p for p in offer.considered if p.deadline_met >= DEADLINE_TARGET]
    assert meeting
    assert offer.offer == min(meeting, key=lambda p: p.mean_cost_usd)
    # every deadline policy keeps the greedy rule: on demand alone (R + 2.3 h) meets 5 h
    assert all(p.deadline_met == 1.0 for p in offer.considered)
    # dearer than riding spot blind, cheaper than on demand
    assert result.chosen.expected_cost_usd < offer.offer.mean_cost_usd < offer.on_demand_cost_usd
    assert 0 < offer.offer.on_demand_share < 1
    assert offer.sentence().startswith("The 5 h deadline is at risk: a ")
    assert f"The {offer.offer.policy} policy" in offer.sentence()
    assert deadline_offer(result, catalog) == offer  # seeded: the same offer


def test_no_offer_without_a_deadline_at_risk(catalog):
    assert deadline_offer(plan(catalog, None), catalog) is None
    relaxed = plan(catalog, 40.0)
    assert relaxed.chosen.monte_carlo.deadline_probability >= DEADLINE_TARGET
    assert deadline_offer(relaxed, catalog) is None
    assert deadline_offer(plan(catalog, 5.0, trials=0), catalog) is None  # no chance known
