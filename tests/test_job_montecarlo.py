"""Monte Carlo of the job process against the closed form and a naive simulator."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from deepvm_core.errors import InputError
from deepvm_core.job.closed_form import expected_jobs
from deepvm_core.job.inputs import JobInputs
from deepvm_core.job.montecarlo import sample_jobs, simulate_jobs


def naive_job(rng: np.random.Generator, segments_hours: list[float], rate: float,
              restart: float, wait: float) -> tuple[float, float, int]:
    """One run, attempt by attempt: (makespan hours, up hours, events). Outages are
    exponential with mean W (issue 25; constant before): one after each event, and one first
    when the run starts inside an outage, which happens with probability λW / (1 + λW)."""
    clock = up = 0.0
    events = 0
    if rate > 0 and wait > 0 and rng.random() < rate * wait / (1 + rate * wait):
        clock += rng.exponential(wait)
    for s in segments_hours:
        length = s  # the first attempt needs no restart
        while True:
            fail_at = rng.exponential(1 / rate) if rate > 0 else np.inf
            if fail_at >= length:
                clock += length
                up += length
                break
            clock += fail_at + (rng.exponential(wait) if wait > 0 else 0.0)
            up += fail_at
            events += 1
            length = restart + s
    return clock, up, events


def plan_of(hours: float, tau_hours: float, stall_seconds: float, rate: float, restart: float,
            wait: float, price: float = 2.0, on_demand: float = 0.5) -> JobInputs:
    return JobInputs.from_segments(compute_seconds=hours * 3600,
                                 checkpoint_interval_seconds=tau_hours * 3600,
                                 checkpoint_stall_seconds=stall_seconds,
                                 interruption_rate_per_hour=rate, restart_hours=restart,
                                 wait_hours=wait, price_usd_per_hour=price,
                                 on_demand_usd_per_hour=on_demand)


job = st.fixed_dictionaries({
    "hours": st.floats(0.05, 40.0),
    "tau_hours": st.floats(0.05, 10.0),
    "stall_seconds": st.floats(0.0, 900.0),
    # λ (R + τ): kept moderate so that the sample standard error is itself reliable
    "load": st.floats(0.001, 3.0),
    "spot": st.sampled_from([True, True, True, True, False]),
    "restart": st.floats(0.0, 0.5),
    "wait": st.floats(0.0, 2.0),
    "price": st.floats(0.1, 10.0),
    "share": st.floats(0.0, 1.0),
})


@given(job, st.integers(0, 2**32 - 1))
@settings(max_examples=30, deadline=None, derandomize=True)
def test_mean_agrees_with_the_closed_form(params, seed):
    rate = params["load"] / (params["restart"] + params["tau_hours"]) if params["spot"] else 0.0
    plan = plan_of(params["hours"], params["tau_hours"], params["stall_seconds"], rate,
                   params["restart"], params["wait"], params["price"],
                   params["price"] * params["share"])
    exact = expected_jobs(plan)
    # A standard error estimated from the sample is only trustworthy when the sample holds
    # many events: with a handful of rare events in 20,000 runs the mean is Poisson, not
    # normal (e.g. 0.05 h of compute at 0.004 events/h expects 4 events in all). Those cases
    # are left to the exact-agreement tests of the naive simulator above.
    assume(rate == 0.0 or float(exact.expected_interruptions[0]) * 20_000 >= 200)
    mc = simulate_jobs(plan, np.random.default_rng(seed), trials=20_000)
    for mean, error, want in (
            (mc.mean_makespan_hours, mc.makespan_std_error_hours, exact.expected_makespan_hours),
            (mc.mean_cost_usd, mc.cost_std_error_usd, exact.expected_cost_usd),
            (mc.mean_interruptions, mc.interruptions_std_error, exact.expected_interruptions)):
        if rate == 0.0:  # no spot VMs: no events, every run is the closed form exactly
            assert float(mean[0]) == pytest.approx(float(want[0]), rel=1e-12, abs=1e-12)
            assert float(error[0]) <= 1e-9 * max(1.0, float(want[0]))
        else:
            assert abs(float(mean[0]) - float(want[0])) <= 3 * float(error[0])


def test_cluster_without_spot_vms_has_no_events_and_no_spread():
    plan = plan_of(10.0, 1.0, 120.0, 0.0, 0.1, 1.0, price=3.0, on_demand=1.0)
    draws = sample_jobs(plan, np.random.default_rng(3), 1000)
    exact = expected_jobs(plan)
    assert np.all(draws.interruptions == 0)
    np.testing.assert_allclose(draws.makespan_hours, exact.expected_makespan_hours[0],
                               rtol=1e-14)
    assert float(exact.expected_makespan_hours[0]) == pytest.approx(10.0 + 9 * 120 / 3600)
    np.testing.assert_allclose(draws.cost_usd, 3.0 * exact.expected_makespan_hours[0],
                               rtol=1e-14)


@pytest.mark.parametrize(("segments", "rate", "restart", "wait"), [
    ([0.5, 0.5, 0.3], 0.8, 0.1, 0.2),   # a few failures: every sum drawn exactly
    ([1.0, 0.4], 3.2, 0.2, 0.05),       # dozens of failed retries: the gamma sum kicks in
    ([1.0, 1.0], 0.5, 0.1, 1.5),        # long exponential waits and start-up waits dominate
])
def test_distribution_matches_a_naive_attempt_by_attempt_simulation(segments, rate, restart,
                                                                    wait):
    trials = 4000
    rng = np.random.default_rng(11)
    naive = np.array([naive_job(rng, segments, rate, restart, wait) for _ in range(trials)])
    hours = sum(segments)
    plan = JobInputs.from_segments(compute_seconds=hours * 3600,
                                 checkpoint_interval_seconds=segments[0] * 3600,
                                 checkpoint_stall_seconds=0.0, interruption_rate_per_hour=rate,
                                 restart_hours=restart, wait_hours=wait,
                                 price_usd_per_hour=1.0, on_demand_usd_per_hour=0.0)
    assert int(plan.checkpoints[0]) == len(segments) - 1
    fast = sample_jobs(plan, np.random.default_rng(12), 40_000)
    for naive_x, fast_x in ((naive[:, 0], fast.makespan_hours[0]),
                            (naive[:, 1], fast.cost_usd[0]), (naive[:, 2], fast.interruptions[0])):
        se = np.hypot(naive_x.std() / np.sqrt(trials), fast_x.std() / np.sqrt(fast_x.size))
        assert abs(naive_x.mean() - fast_x.mean()) <= 4 * se
        for q in (25, 50, 75, 90):
            a, b = np.percentile(naive_x, q), np.percentile(fast_x, q)
            assert a == pytest.approx(b, rel=0.06, abs=0.05 * naive_x.std())


def test_seeded_runs_repeat_and_report_percentiles_and_deadline():
    plan = plan_of(8.0, 1.0, 60.0, np.array([0.5, 0.1, 0.0]), 0.1, 0.5)
    one = simulate_jobs(plan, np.random.default_rng(5), trials=5000, deadline_hours=9.0)
    two = simulate_jobs(plan, np.random.default_rng(5), trials=5000, deadline_hours=9.0)
    np.testing.assert_array_equal(one.mean_cost_usd, two.mean_cost_usd)
    np.testing.assert_array_equal(one.makespan_hours_p90, two.makespan_hours_p90)
    assert one.deadline_probability is not None
    assert np.all(one.makespan_hours_p10 <= one.makespan_hours_p50)
    assert np.all(one.makespan_hours_p50 <= one.makespan_hours_p90)
    assert np.all(one.cost_usd_p10 <= one.cost_usd_p90)
    assert one.deadline_probability[2] == 1.0  # no spot VMs: 8 h + 7 min < 9 h
    assert 0.0 < one.deadline_probability[0] < one.deadline_probability[1] <= 1.0
    chunked = simulate_jobs(plan, np.random.default_rng(5), trials=5000, deadline_hours=9.0,
                            max_cells=5000)
    np.testing.assert_allclose(chunked.mean_makespan_hours, one.mean_makespan_hours, rtol=0.05)
    assert simulate_jobs(plan, np.random.default_rng(5), trials=10).deadline_probability is None


def test_extreme_rates_terminate():
    # λ (R + s) from 50 to 1e4: billions of expected retries, or an overflow to infinity.
    # (bench/bench_limits.py times this call.)
    plan = plan_of(100.0, np.array([1.0, 5.0, 100.0, 0.01]), 30.0,
                   np.array([50.0, 10.0, 100.0, 2.0]), 0.1, 1.0)
    mc = simulate_jobs(plan, np.random.default_rng(0), trials=10_000)
    exact = expected_jobs(plan)
    assert np.isinf(exact.expected_makespan_hours[2])
    assert np.isinf(mc.mean_makespan_hours[2])
    finite = np.isfinite(exact.expected_makespan_hours)
    np.testing.assert_allclose(mc.mean_makespan_hours[finite],
                               exact.expected_makespan_hours[finite], rtol=0.05)
    np.testing.assert_allclose(mc.mean_interruptions[finite],
                               exact.expected_interruptions[finite], rtol=0.05)


def test_bad_arguments_are_library_errors():
    plan = plan_of(1.0, 1.0, 0.0, 0.1, 0.1, 0.0)
    with pytest.raises(InputError, match="trials"):
        simulate_jobs(plan, np.random.default_rng(0), trials=0)
    with pytest.raises(InputError, match="deadline_hours"):
        simulate_jobs(plan, np.random.default_rng(0), deadline_hours=float("nan"))
