"""The hindsight optimum (``deepvm_core.job.hindsight``, issue 26 item 4) against a brute-force
recursion written here over ticks, work done and placement (restart ticks as explicit states),
on small random traces; and never above what a policy of the backtest pays on a job whose
segments are one tick long (so the relaxed job and the real one coincide)."""

from __future__ import annotations

import math
from functools import cache

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from deepvm_core.job.backtest import BacktestJob
from deepvm_core.job.backtest_replay import backtest
from deepvm_core.job.hindsight import hindsight_costs
from deepvm_core.market.trace import SpotTrace

G = 0.25
P, POD, PF = 1.0, 0.5, 3.0


def brute(up: list[bool], start: int, n: int, rho: int, last: int) -> float:
    """Least cost of a job of n one-tick segments, restart rho ticks, done by tick ``last``.
    State: (k, w, where, left): where in idleN (a start needs a restart), idleS (spot resumes
    without one), idleO (on demand resumes without one), spot or od with ``left`` restart ticks
    to do (0: restart done, the tick of work pending; -1: the last tick was work)."""
    size = len(up)

    @cache
    def v(k: int, w: int, where: str, left: int) -> float:
        if w >= n:
            return 0.0
        if k >= last:
            return math.inf
        on = up[(start + k) % size]
        if where in ("spot", "od"):
            stop = ("idleS" if where == "spot" else "idleO") if left < 0 else "idleN"
        else:
            stop = where
        best = POD * G + v(k + 1, w, stop, 0)
        for place, price in (("od", PF), ("spot", P)):
            if place == "spot" and not on:
                continue
            free = where == place or where == ("idleS" if place == "spot" else "idleO")
            if where == place and left > 0:
                nxt = (w, left - 1)
            elif free:
                nxt = (w + 1, -1)
            else:
                nxt = (w, rho - 1) if rho else (w + 1, -1)
            best = min(best, price * G + v(k + 1, nxt[0], place, nxt[1]))
        return best

    return v(0, 0, "idleS", 0)


@settings(max_examples=60, deadline=None)
@given(data=st.lists(st.booleans(), min_size=6, max_size=16), n=st.integers(1, 6),
       rho=st.integers(0, 3), extra=st.integers(0, 8), start=st.integers(0, 15))
def test_matches_a_brute_force_recursion(data, n, rho, extra, start):
    last = n + rho + extra
    start %= len(data)
    got = hindsight_costs(np.asarray(data), np.array([start]), G, n * G, rho * G, last * G,
                          P, POD, PF)
    assert got[0] == brute(data, start, n, rho, last)


def synthetic(seed: int, ticks: int) -> list[int]:
    rng = np.random.default_rng(seed)
    out: list[int] = []
    state = 1
    while len(out) < ticks:
        out += [state] * int(rng.geometric(1.0 / (5.0 if state else 3.0)))
        state = 1 - state
    return out[:ticks]


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(1, 12), rho=st.integers(0, 3),
       slack=st.integers(1, 16), policy=st.sampled_from(["deadline", "uniform-progress"]))
def test_never_above_a_policy_on_one_tick_segments(seed, k, rho, slack, policy):
    data = synthetic(seed, 48)
    job = BacktestJob(full_segments=[k - 1], full_segment_hours=[[G]], last_segment_hours=[[G]],
                      restart_hours=[[rho * G]], spot_vms=[[1]], price_usd_per_hour=[[P]],
                      on_demand_usd_per_hour=[[POD]], fallback_usd_per_hour=[[PF]])
    deadline = (k + rho + slack) * G
    runs = backtest([SpotTrace("a", G * 3600, np.asarray(data, dtype=np.int64))], job,
                    policy=policy, deadline_hours=deadline, starts=12)
    best = hindsight_costs(np.asarray(data, dtype=bool), runs.start_ticks, G, k * G, rho * G,
                           deadline, P, POD, PF)
    assert np.all(best <= runs.cost_usd[0] + 1e-9)
