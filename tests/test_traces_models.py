"""Models against backtests (``deepvm_core.job.trace_models``) on synthetic traces."""

from __future__ import annotations

import math

import numpy as np
import pytest

from deepvm_core.job.trace_models import ReferenceJob, check_models, closed_form_makespan
from deepvm_core.market.trace import SpotTrace

JOB = ReferenceJob(full_segments=3, segment_hours=0.5, last_segment_hours=0.25,
                   restart_hours=0.125)


def test_a_market_that_never_fails_is_predicted_exactly():
    t = SpotTrace("up", 900.0, np.ones(40, dtype=np.int64))
    m = check_models(t, JOB)
    # 3 x 0.5 + 0.25 = 1.75 h for every model and the backtest
    assert m.backtest_hours == 1.75
    assert m.closed_form_hours == 1.75
    assert m.renewal_hours == 1.75
    assert m.closed_form_error == 0.0
    assert m.renewal_error == 0.0


def test_closed_form_makespan_matches_e0_by_hand():
    # one segment s = 1 h, λ = 1/h, R = 0, W = 0: E0 = (1 - e^-1) + (1 - e^-1)(e^1 - 1)
    #   = (1 - e^-1) e = e - 1
    job = ReferenceJob(0, 1.0, 1.0, 0.0)
    assert closed_form_makespan(job, 1.0, 0.0) == pytest.approx(math.e - 1)


def test_a_second_half_that_is_never_up_has_no_error():
    data = np.array([1, 1, 0, 1] * 10 + [0] * 40, dtype=np.int64)
    m = check_models(SpotTrace("t", 900.0, data), JOB)
    assert math.isinf(m.backtest_hours)
    assert math.isnan(m.closed_form_error)


def test_renewal_is_seeded_and_near_the_backtest_on_a_periodic_market():
    # up 2 h, down 0.5 h, repeated: both halves alike
    data = np.array(([1] * 8 + [0] * 2) * 20, dtype=np.int64)
    a = check_models(SpotTrace("p", 900.0, data), JOB, seed=1)
    b = check_models(SpotTrace("p", 900.0, data), JOB, seed=1)
    assert a == b
    assert abs(a.renewal_error) < 0.1
