"""Checkpoint stall δ, Daly's interval τ and the segments of a job."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from deepvm_core.job.checkpoint import (
    daly_interval_seconds,
    segment_plan,
    single_anchor_stall_seconds,
    tiering_stall_seconds,
)

MINUTE = 60.0
HOUR = 3600.0


def test_daly_reproduces_the_published_values():
    # Daly (FGCS 2006): restart R = 10 min, checkpoint δ = 5 min; τ_opt is 117 min for
    # M = 24 h, 57 min for M = 6 h and 9.1 min for M = 15 min. R does not enter τ_opt.
    tau = daly_interval_seconds(5 * MINUTE, np.array([24 * HOUR, 6 * HOUR, 15 * MINUTE]))
    minutes = tau / MINUTE
    assert round(minutes[0]) == 117
    assert round(minutes[1]) == 57
    assert round(minutes[2], 1) == 9.1
    # And by hand for M = 24 h: sqrt(2 * 5 * 1440) = 120, δ/(2M) = 5/2880.
    x = 5 / 2880
    assert minutes[0] == pytest.approx(120 * (1 + math.sqrt(x) / 3 + x / 9) - 5, rel=1e-12)


def test_daly_beyond_two_mtbi_is_the_mtbi_and_infinite_mtbi_is_infinite():
    tau = daly_interval_seconds([10.0, 20.0, 19.999, 5.0], [5.0, 10.0, 10.0, math.inf])
    assert tau[0] == 5.0
    assert tau[1] == 10.0
    assert tau[3] == math.inf
    assert 0 < tau[2] < 10.0 * 2


def test_tiering_stall():
    # 8 f ceil(n/m) / (n BW(w)) + δ0: f = 0.3 GB, n = 17, m = 2, BW = 10 Gbit/s.
    got = tiering_stall_seconds(0.3, [17, 16, 1], [2, 1, 1], [10.0, 10.0, 2.0], 1.5)
    np.testing.assert_allclose(got, [1.5 + 8 * 0.3 * 9 / (17 * 10), 1.5 + 8 * 0.3 * 16 / 160,
                                     1.5 + 8 * 0.3 / 2], rtol=1e-15)


def test_single_anchor_stall():
    # δ0 + 8 f (n - 1) / (n BW(v)) + f / D.
    got = single_anchor_stall_seconds(0.3, [16, 1], [25.0, 25.0], 0.25)
    np.testing.assert_allclose(got, [8 * 0.3 * 15 / (16 * 25) + 0.3 / 0.25, 0.3 / 0.25],
                               rtol=1e-15)


def test_segments_with_integral_and_fractional_ratios():
    checkpoints, last = segment_plan([30.0, 31.0, 29.5, 5.0, 7.0], [10.0, 10.0, 10.0, 10.0,
                                                                  math.inf])
    np.testing.assert_array_equal(checkpoints, [2, 3, 2, 0, 0])
    np.testing.assert_allclose(last, [10.0, 1.0, 9.5, 5.0, 7.0])


@given(st.floats(0.5, 5000), st.integers(1, 300), st.integers(1, 40))
@settings(max_examples=80, deadline=None)
def test_k_epoch_intervals_give_whole_segment_counts(epoch_seconds, segments, k):
    # T_c = E t with E = segments * k epochs and τ = k t: exactly `segments` segments, even
    # though E t / (k t) is not always exactly representable.
    epochs = segments * k
    compute = epochs * epoch_seconds
    checkpoints, last = segment_plan(compute, k * epoch_seconds)
    assert int(checkpoints) == segments - 1
    assert float(last) == pytest.approx(k * epoch_seconds, rel=1e-6)


@given(st.floats(1.0, 1e6), st.floats(0.5, 1e5))
@example(499996.0, 0.99999)  # T_c / τ = 500001.00001: a 1e-9 tolerance made the last segment > τ
@settings(max_examples=80, deadline=None)
def test_segments_cover_the_compute_time(compute, tau):
    checkpoints, last = segment_plan(compute, tau)
    assert checkpoints >= 0
    assert float(checkpoints * tau + last) == pytest.approx(compute, rel=1e-12)
    assert 0 < float(last) <= tau * (1 + 1e-8)


def test_absurdly_many_segments_never_overflow():
    """Epoch times beyond any real one (a degenerate speedup fit gives S(2) ~ 1e-24): the
    segment count stops at 2^53 and the rest stays in the last segment; an infinite τ or T_c
    is one segment. No negative counts, no warnings."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        checkpoints, last = segment_plan([2e27, math.inf, math.inf, 10.0],
                                         [1000.0, 5.0, math.inf, math.inf])
    assert list(checkpoints) == [2**53 - 1, 2**53 - 1, 0, 0]
    assert last[0] > 1e26
    assert math.isinf(last[1])
    assert math.isinf(last[2])
    assert last[3] == 10.0
