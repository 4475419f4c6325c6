"""The closed-form expectations: known special cases, limits, stability, cost.

Expected values are derived by hand (the arithmetic in the comments) or come from
``tests/job_oracle.py``, job-model.md in plain loops; never from ``segment_expectations``."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deepvm_core.job.closed_form import expected_jobs, segment_expectations
from deepvm_core.job.inputs import JobInputs
from tests import job_oracle


def test_without_restart_or_wait_it_is_the_classic_result():
    # Work s with restarts from scratch at rate λ, R = W = 0: E[T] = (e^{λs} - 1) / λ and the
    # number of failures is geometric with mean e^{λs} - 1.
    s, lam = np.array([1.0, 0.5, 3.0]), np.array([1.0, 2.0, 0.1])
    seg = segment_expectations(s, lam, 0.0, 0.0)
    np.testing.assert_allclose(seg.makespan_hours, np.expm1(lam * s) / lam, rtol=1e-14)
    np.testing.assert_allclose(seg.interruptions, np.expm1(lam * s), rtol=1e-14)
    assert seg.makespan_hours[0] == pytest.approx(math.e - 1, rel=1e-15)


def test_one_segment_by_hand():
    # s = 1 h, λ = 0.5 / h, R = 0.1 h, W = 0.2 h:
    #   q0 = 1 - e^{-0.5} = 0.39346934; e^{λ(R+s)} = e^{0.55} = 1.73325302
    #   E1 = (1.73325302 - 1) (1/0.5 + 0.2) = 0.73325302 * 2.2 = 1.61315664
    #   E0 = 0.39346934 / 0.5 + 0.39346934 (0.2 + 1.61315664) = 0.78693868 + 0.71342155
    #      = 1.50036023
    #   F0 = 0.39346934 * 1.73325302 = 0.68198192
    #   U0 = E0 - W F0 = 1.50036023 - 0.2 * 0.68198192 = 1.36396384
    seg = segment_expectations(1.0, 0.5, 0.1, 0.2)
    assert float(seg.restart_attempt_hours) == pytest.approx(1.61315664, rel=1e-8)
    assert float(seg.makespan_hours) == pytest.approx(1.50036023, rel=1e-8)
    assert float(seg.interruptions) == pytest.approx(0.68198192, rel=1e-8)
    assert float(seg.up_hours) == pytest.approx(1.36396384, rel=1e-8)


def test_rate_zero_is_exact_and_tiny_rates_are_continuous():
    s = np.full(4, 2.0)
    lam = np.array([0.0, 1e-300, 1e-15, 1e-9])
    seg = segment_expectations(s, lam, 0.1, 0.5)
    assert seg.makespan_hours[0] == 2.0
    assert seg.interruptions[0] == 0.0
    assert seg.up_hours[0] == 2.0
    # First order in λ: E0 ≈ s + λ s (R + W + s/2), F0 ≈ λ s, E1 ≈ R + s: no 0/0, no
    # cancellation (1 - e^{-λs} and e^{λc} - 1 go through expm1).
    assert np.all(np.isfinite(seg.makespan_hours))
    np.testing.assert_allclose(seg.interruptions[1:], lam[1:] * 2.0, rtol=1e-8)
    np.testing.assert_allclose(seg.restart_attempt_hours[1:], 2.1, rtol=1e-8)
    assert (seg.makespan_hours[3] - 2.0) / lam[3] == pytest.approx(2.0 * (0.1 + 0.5 + 1.0),
                                                                   rel=1e-6)


def test_huge_rates_overflow_to_infinity_not_nan():
    plan = JobInputs.from_segments(compute_seconds=[36_000.0, 36_000.0],
                                 checkpoint_interval_seconds=[3600.0, 36_000.0],
                                 checkpoint_stall_seconds=10.0,
                                 interruption_rate_per_hour=[1e3, 1e3], restart_hours=0.1,
                                 wait_hours=[0.0, 1.0], price_usd_per_hour=2.0,
                                 on_demand_usd_per_hour=0.5)
    est = expected_jobs(plan)
    assert np.all(np.isinf(est.expected_makespan_hours))
    assert np.all(np.isinf(est.expected_cost_usd))
    assert np.all(np.isinf(est.expected_interruptions))


def test_job_sums_segments_and_prices_waits_on_demand():
    # T_c = 2.5 h, τ = 1 h, δ = 360 s: two full segments of 1.1 h and a last one of 0.5 h.
    lam, r, w, p, pod = 0.3, 0.1, 0.25, 3.0, 0.5
    plan = JobInputs.from_segments(compute_seconds=9000.0, checkpoint_interval_seconds=3600.0,
                                 checkpoint_stall_seconds=360.0, interruption_rate_per_hour=lam,
                                 restart_hours=r, wait_hours=w, price_usd_per_hour=p,
                                 on_demand_usd_per_hour=pod)
    est = expected_jobs(plan)
    # The oracle, segment by segment: (E0, F0) = (1.44363499, 0.40287488) for s = 1.1 h and
    # (0.59756680, 0.16676283) for s = 0.5 h, so Σ E0 = 2 * 1.44363499 + 0.59756680
    # = 3.48483678 and N = 2 * 0.40287488 + 0.16676283 = 0.97251259. The start-up wait (issue
    # 25, a model change): π = λW / (1 + λW) = 0.075 / 1.075 = 0.06976744, S = π W = 0.01744186,
    # so T = 3.48483678 + 0.01744186 = 3.50227864; the waits N W + S = 0.24312815 + 0.01744186
    # = 0.26057001 are billed on demand: C = 3 (T - 0.26057001) + 0.5 * 0.26057001
    # = 9.72512589 + 0.13028500 = 9.85541089 (9.84668998 before the start-up wait).
    oracle = job_oracle.expected_job(9000.0, 3600.0, 360.0, lam, r, w, p, pod)
    assert (oracle.makespan_h, oracle.interruptions, oracle.cost_usd) == pytest.approx(
        (3.50227864, 0.97251259, 9.85541089), rel=1e-8)
    assert int(est.checkpoints[0]) == oracle.checkpoints == 2
    assert float(est.expected_makespan_hours[0]) == pytest.approx(oracle.makespan_h, rel=1e-13)
    assert float(est.expected_interruptions[0]) == pytest.approx(oracle.interruptions,
                                                                 rel=1e-13)
    assert float(est.expected_cost_usd[0]) == pytest.approx(oracle.cost_usd, rel=1e-12)
    assert float(est.compute_hours[0]) == 2.5


@given(st.floats(0.01, 100), st.floats(0.001, 2.0), st.floats(0, 600), st.floats(0, 1),
       st.floats(0, 5), st.floats(0.01, 20))
@settings(max_examples=60, deadline=None)
def test_no_spot_vms_means_compute_plus_stalls(hours, tau_hours, stall, r, w, price):
    plan = JobInputs.from_segments(compute_seconds=hours * 3600,
                                 checkpoint_interval_seconds=tau_hours * 3600,
                                 checkpoint_stall_seconds=stall, interruption_rate_per_hour=0.0,
                                 restart_hours=r, wait_hours=w, price_usd_per_hour=price,
                                 on_demand_usd_per_hour=price / 2)
    est = expected_jobs(plan)
    # No events: T = T_c + (segments - 1) δ, the segments counted by the oracle's loop.
    oracle = job_oracle.expected_job(hours * 3600, tau_hours * 3600, stall, 0.0, r, w, price,
                                     price / 2)
    t = hours + oracle.checkpoints * stall / 3600
    assert int(est.checkpoints[0]) == oracle.checkpoints
    assert oracle.makespan_h == pytest.approx(t, rel=1e-12)
    assert float(est.expected_makespan_hours[0]) == pytest.approx(t, rel=1e-12)
    assert float(est.expected_interruptions[0]) == 0.0
    assert float(est.expected_cost_usd[0]) == pytest.approx(price * t, rel=1e-12)


@given(st.floats(0.01, 10), st.floats(1e-6, 3), st.floats(0, 1), st.floats(0, 3))
@settings(max_examples=60, deadline=None)
def test_expectations_grow_with_the_rate_and_exceed_the_work(s, lam, r, w):
    lo = segment_expectations(s, lam, r, w)
    hi = segment_expectations(s, lam * 1.5, r, w)
    assert float(lo.makespan_hours) >= s * (1 - 1e-12)
    assert float(hi.makespan_hours) >= float(lo.makespan_hours)
    assert float(hi.interruptions) >= float(lo.interruptions)
    # Up time excludes only the waits: E0 = U0 + W F0.
    assert float(lo.makespan_hours) == pytest.approx(
        float(lo.up_hours) + w * float(lo.interruptions), rel=1e-12)
