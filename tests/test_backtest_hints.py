"""The backtest's fast path (the policy asked again only where its decision's hint says the
answer may change) against the plain one (asked at every boundary of every run): the same runs
for every policy, on random traces, tick lengths, jobs with several configurations and pools
whose clusters differ (hours, R, prices), restarts and deadlines, with values that land exactly
on tick boundaries and values that do not. Exactly: times are placed from the start of an
unbroken chain of attempts and hours billed per placement, so nothing depends on where the
replay stopped on the way."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from deepvm_core.job import backtest_replay
from deepvm_core.job.backtest import RECOVERY_POLICIES, BacktestJob
from deepvm_core.job.backtest_replay import backtest
from deepvm_core.market.trace import SpotTrace, TraceError
from tests.synthetic_traces import TICK_SECONDS, draw_shape


def both(traces, job, policy, deadline, starts):
    out = []
    for every in (False, True):
        backtest_replay._EVERY_BOUNDARY = every
        try:
            out.append(backtest(traces, job, policy=policy, deadline_hours=deadline,
                                starts=starts))
        except TraceError as e:
            out.append(str(e))
        finally:
            backtest_replay._EVERY_BOUNDARY = False
    return out


@settings(max_examples=100, deadline=None)
@given(data=st.data(), policy=st.sampled_from(RECOVERY_POLICIES),
       gap=st.sampled_from(TICK_SECONDS))
def test_hints_give_the_runs_of_every_boundary(data, policy, gap):
    g, pools, ticks = draw_shape(data, gap, 80)
    up_share = data.draw(st.sampled_from([0.2, 0.5, 0.8]))
    seed = data.draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    # runs of up and down ticks, so that outages and uptimes last several ticks
    trace = []
    for _ in range(pools):
        row: list[int] = []
        state = int(rng.random() < up_share)
        while len(row) < ticks:
            row += [state] * int(rng.integers(1, 8))
            state = 1 - state if rng.random() < 0.8 else state
        trace.append(row[:ticks])
    unit = data.draw(st.sampled_from([g, g / 2, 0.1, 1 / 60, 0.037]))
    configs = data.draw(st.integers(1, 3))
    same = data.draw(st.booleans())  # every pool's cluster the same (hints span moves)

    def figure(lo: int, hi: int) -> list[list[float]]:
        rows = rng.integers(lo, hi + 1, size=(configs, 1 if same else pools)) * unit
        return np.broadcast_to(rows, (configs, pools)).tolist()

    full = figure(1, 12)
    last = figure(1, 12)
    restart = figure(0, 6)
    k = rng.integers(0, 6, size=configs).tolist()
    job = BacktestJob(full_segments=k, full_segment_hours=full, last_segment_hours=last,
                      restart_hours=restart, spot_vms=[[1] * pools] * configs,
                      price_usd_per_hour=rng.uniform(0.5, 2, (configs, pools)).tolist(),
                      on_demand_usd_per_hour=rng.uniform(0, 0.5, (configs, pools)).tolist(),
                      fallback_usd_per_hour=rng.uniform(2, 5, (configs, pools)).tolist())
    need = max(r[0] + kk * f[0] + la[0] for r, kk, f, la in zip(restart, k, full, last,
                                                                 strict=True))
    deadline = need + data.draw(st.integers(0, 40)) * data.draw(st.sampled_from([g, unit]))
    traces = [SpotTrace(f"p{i}", gap, np.asarray(t, dtype=np.int64))
              for i, t in enumerate(trace)]
    fast, plain = both(traces, job, policy, deadline, data.draw(st.integers(1, ticks)))
    if isinstance(plain, str) or isinstance(fast, str):
        assert fast == plain
        return
    for name in ("makespan_hours", "cost_usd", "spot_hours", "wait_hours", "on_demand_hours",
                 "interruptions", "fell_back"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(plain, name), err_msg=name)
