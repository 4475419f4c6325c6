"""Issue 26, item 6: the deadline backtest must end, and compare ticks exactly.

The example of the issue: a 1 h job (no checkpoint), R = 0.2 h, 10-minute ticks, a pool that is
never up, deadline 1.7 h. By hand (exact arithmetic), the fallback rule ``D - t < rem + R + g``
with rem = 1, R = 0.2, g = 1/6: at t = 1/3 h, 1.7 - 1/3 = 1.3667 = 1.2 + 1/6, not less: no
fallback; at t = 0.5 h, 1.2 < 1.3667: fallback; makespan 0.5 + 0.2 + 1 = 1.7 h, cost
P_fallback (0.2 + 1) plus the waiting 0.5 h at P_od. Every call runs in a child process with a
time limit, so a hang fails the test instead of stopping the suite.
"""

from __future__ import annotations

import multiprocessing as mp
from typing import Any

import numpy as np
import pytest

from deepvm_core.job.backtest import BacktestJob
from deepvm_core.job.backtest_replay import backtest
from deepvm_core.market.trace import SpotTrace

LIMIT_SECONDS = 20.0


def _child(queue: Any, data: list[int], gap: float, deadline: float, restart: float,
           hours: float, policy: str) -> None:
    job = BacktestJob(full_segments=[0], full_segment_hours=[[hours]],
                      last_segment_hours=[[hours]], restart_hours=[[restart]], spot_vms=[[1]],
                      price_usd_per_hour=[[1.0]], on_demand_usd_per_hour=[[0.5]],
                      fallback_usd_per_hour=[[3.0]])
    runs = backtest([SpotTrace("never", gap, np.asarray(data, dtype=np.int64))], job,
                    policy=policy, deadline_hours=deadline, starts=1)  # type: ignore[arg-type]
    queue.put((float(runs.makespan_hours[0, 0]), float(runs.cost_usd[0, 0]),
               bool(runs.fell_back[0, 0]), float(runs.wait_hours[0, 0])))


def bounded(data: list[int], gap: float, deadline: float, restart: float, hours: float,
            policy: str = "deadline") -> tuple[float, float, bool, float]:
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    proc = ctx.Process(target=_child, args=(queue, data, gap, deadline, restart, hours, policy))
    proc.start()
    proc.join(LIMIT_SECONDS)
    if proc.is_alive():
        proc.kill()
        proc.join()
        pytest.fail(f"the backtest did not return within {LIMIT_SECONDS:g} s")
    assert proc.exitcode == 0
    result: tuple[float, float, bool, float] = queue.get(timeout=5)
    return result


def test_the_issue_example_returns_1_7_hours():
    makespan, cost, fell, wait = bounded([0] * 30, 600.0, 1.7, 0.2, 1.0)
    assert fell
    assert makespan == pytest.approx(1.7, abs=1e-12)
    assert wait == pytest.approx(0.5, abs=1e-12)  # falls back at t = 0.5 h, tick 3
    assert cost == pytest.approx(0.5 * 0.5 + 3.0 * 1.2, abs=1e-12)


@pytest.mark.parametrize("ticks_before", [0, 1, 2, 5, 11])
def test_deadlines_landing_exactly_on_boundaries_end(ticks_before):
    # deadline chosen so that D - k g = rem + R + g exactly (in decimal) at k = ticks_before:
    # the fallback comes one tick later; 10-minute ticks, R = 0.2, job 1 h
    g = 1 / 6
    deadline = round(1.2 + g + ticks_before * g, 12)
    makespan, _, fell, wait = bounded([0] * 40, 600.0, deadline, 0.2, 1.0)
    assert fell
    assert wait == pytest.approx((ticks_before + 1) * g, abs=1e-9)
    assert makespan == pytest.approx((ticks_before + 1) * g + 1.2, abs=1e-9)
    assert makespan <= deadline + 1e-9
