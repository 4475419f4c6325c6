"""A test oracle for the backtest: ``traces.md``'s rules in a plain loop over tick boundaries.

It shares no code with ``deepvm_core.traces``: it walks one run tick by tick, and inside a tick
attempt by attempt, applying the contract's rules literally, with the ties the core documents
(an attempt that ends exactly at a boundary is done before the boundary's checks; the deadline
rule comes first at a boundary; no restart before the first attempt; waiting is billed at the
on-demand part of the last pool's cluster, the first pool's before any). Slow by design.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class PoolJob:
    """The job in one pool's cluster (hours, USD per hour)."""

    full_segment_hours: float
    last_segment_hours: float
    restart_hours: float
    price: float
    on_demand: float
    fallback: float


class NeverEnds(Exception):
    """The run repeats a state (tick, pool, segment, restart) without progress: it never ends."""


@dataclass
class OracleRun:
    makespan: float
    cost: float
    spot: float
    wait: float
    interruptions: int
    fell_back: bool


def oracle_run(up: list[list[bool]], gap_hours: float, full_segments: int,
               jobs: list[PoolJob], policy: str, deadline: float | None,
               start: int) -> OracleRun:
    """One run from trace tick ``start`` (``up[p][k]``: pool p is up in tick k)."""
    size = len(up[0])
    g = gap_hours

    def seglen(p: int, i: int) -> float:
        return jobs[p].full_segment_hours if i < full_segments else jobs[p].last_segment_hours

    def remaining(p: int, i: int) -> float:
        return sum(seglen(p, j) for j in range(i, full_segments + 1))

    seg = 0
    pool: int | None = None  # the pool the job is in (None: waiting, no pool chosen)
    last: int | None = None  # the last pool an attempt ran in
    attempt_start = 0.0
    attempt_len = 0.0
    in_attempt = False
    restart = False
    spot = wait = cost = 0.0
    inter = 0
    k = 0
    while True:
        b = k * g
        tick = (start + k) % size
        hp = last if last is not None else 0
        if policy == "deadline":
            assert deadline is not None
            rem = remaining(hp, seg)
            if deadline - b < rem + jobs[hp].restart_hours + g:
                if in_attempt:
                    spot += b - attempt_start
                    cost += jobs[hp].price * (b - attempt_start)
                extra = jobs[hp].restart_hours + rem
                cost += jobs[hp].fallback * extra
                return OracleRun(b + extra, cost, spot, wait, inter, True)
        current_up = pool is not None and up[pool][tick]
        if not current_up:
            if in_attempt:
                assert pool is not None
                inter += 1
                restart = True
                spot += b - attempt_start
                cost += jobs[pool].price * (b - attempt_start)
                in_attempt = False
            if policy == "wait":
                pool = 0 if up[0][tick] else None
            else:
                pool = next((p for p in range(len(up)) if up[p][tick]), None)
        if pool is not None and not in_attempt:
            if last is not None and pool != last:
                restart = True
            last = pool
            in_attempt = True
            attempt_start = b
            attempt_len = (jobs[pool].restart_hours if restart else 0.0) + seglen(pool, seg)
        if in_attempt:
            assert pool is not None
            while attempt_start + attempt_len <= b + g:
                end = attempt_start + attempt_len
                spot += attempt_len
                cost += jobs[pool].price * attempt_len
                seg += 1
                restart = False
                if seg > full_segments:
                    return OracleRun(end, cost, spot, wait, inter, False)
                attempt_start = end
                attempt_len = seglen(pool, seg)
                if end == b + g:  # done at the boundary: the next one starts after its checks
                    in_attempt = False
                    break
        else:
            wait += g
            cost += jobs[hp].on_demand * g
        k += 1
        if k > 2_000_000:
            raise NeverEnds("no end after 2,000,000 ticks: the run cycles forever")


def oracle_percentile(values: list[float], q: float) -> float:
    """numpy's default (linear) percentile, by hand."""
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)
