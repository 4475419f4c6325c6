"""Issue 26: no deadline policy misses a deadline that on demand alone meets from the same
moment (a run's start: ``R + rem <= D``), on random traces, tick lengths, jobs, restarts and
deadlines, with values that land exactly on tick boundaries; and every call ends (the loops are
bounded; hypothesis' own deadline would fail a hang only after it returns, so the sizes are
small and each call is timed)."""

from __future__ import annotations

import time

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from deepvm_core.job.backtest import BacktestJob
from deepvm_core.job.backtest_replay import backtest
from deepvm_core.job.recovery import DEADLINE_POLICIES
from deepvm_core.market.trace import SpotTrace
from tests.synthetic_traces import TICK_SECONDS, draw_shape


@settings(max_examples=120, deadline=None)
@given(data=st.data(), policy=st.sampled_from(DEADLINE_POLICIES),
       gap=st.sampled_from(TICK_SECONDS))
def test_never_misses_a_deadline_on_demand_alone_meets(data, policy, gap):
    g, pools, ticks = draw_shape(data, gap, 60)
    trace = [data.draw(st.lists(st.integers(0, 1), min_size=ticks, max_size=ticks))
             for _ in range(pools)]
    # hours as whole or half ticks, or free decimals: ties on tick boundaries are common
    unit = data.draw(st.sampled_from([g, g / 2, 0.1, 1 / 60]))
    k = data.draw(st.integers(0, 5))
    full = data.draw(st.integers(1, 12)) * unit
    last = data.draw(st.integers(1, 12)) * unit
    restart = data.draw(st.integers(0, 6)) * unit
    need = restart + k * full + last
    deadline = need + data.draw(st.integers(0, 30)) * data.draw(st.sampled_from([g, unit]))
    job = BacktestJob(full_segments=[k], full_segment_hours=[[full] * pools],
                      last_segment_hours=[[last] * pools], restart_hours=[[restart] * pools],
                      spot_vms=[[1] * pools], price_usd_per_hour=[[1.0] * pools],
                      on_demand_usd_per_hour=[[0.2] * pools],
                      fallback_usd_per_hour=[[3.0] * pools])
    traces = [SpotTrace(f"p{i}", gap, np.asarray(t, dtype=np.int64))
              for i, t in enumerate(trace)]
    t0 = time.perf_counter()
    runs = backtest(traces, job, policy=policy, deadline_hours=deadline, starts=ticks)
    assert time.perf_counter() - t0 < 10.0
    assert np.all(runs.makespan_hours <= deadline + 1e-9), (
        policy, deadline, runs.makespan_hours.max())
    assert np.all(np.isfinite(runs.cost_usd))
    assert np.all(runs.cost_usd >= 0)
