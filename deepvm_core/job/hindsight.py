"""A hindsight optimum for scoring deadline policies (issue 26 item 4): the least cost of a run
that knows the trace, by dynamic programming over tick boundaries x work done x placement.

**The relaxed job** (one pool): ``N = round(C / g)`` ticks of work (C = the job's hours,
stalls included) and a restart of ``ρ = round(R / g)`` ticks, as the backtest of a job whose
segments last one tick: work is kept at every tick boundary (checkpointed every tick), an
attempt is ρ restart ticks then one tick of work, and, as in the backtest, a restart is paid
after an attempt lost in progress (its pool down, or left, before its tick of work), on a move
between spot and on demand, and always when first going on demand; the job resumes without one
where it cleanly stopped (after a tick of work). Per tick the job is idle (billed at ``P_od``),
on demand (``P_fallback``) or on spot (``P``; only in an up tick). It must have done its N ticks
by boundary ``floor(D / g)``. Since it loses at most a tick of work where a policy loses a
segment, it bounds from below what a policy of the backtest pays, up to the rounding of C and R
to whole ticks (exact when they are multiples of g).

``V[k, w, phase]``: the least cost from boundary k with w ticks done. Phases: idle needing a
restart for either placement (N); where a spot start needs none (S: never ran, or stopped
cleanly on spot, or running on spot); where an on-demand start needs none (O); restart done on
spot or on demand with the tick of work still pending (SP, OP). A start with a restart jumps
ρ ticks (to OP at ``k + ρ``; to SP at ``k + m``, m = ρ or the first down tick, where a pending
attempt on a down pool is lost). Backward over k, vectorised over start ticks and over the band
of w that can still finish (``N - (last - k) <= w <= k``), kept in the coordinates
``d = w - N + last - k``: a tick with work keeps d, one without lowers it by 1.
"""

from __future__ import annotations

import math

import numpy as np

from deepvm_core.arrays import BoolArray, FloatArray, IntArray
from deepvm_core.job.recovery import TIME_TOLERANCE_HOURS
from deepvm_core.market.trace import TraceError

_N, _S, _O, _SP, _OP = 0, 1, 2, 3, 4


def _up_run(up: BoolArray) -> IntArray:
    """Per tick k, consecutive up ticks from k (cyclic; the trace length when never down)."""
    size = up.size
    downs = np.flatnonzero(~up)
    if downs.size == 0:
        return np.full(size, size, dtype=np.int64)
    ext = np.concatenate((downs, downs[:1] + size))
    k = np.arange(size)
    return np.asarray(ext[np.searchsorted(ext, k)] - k, dtype=np.int64)


def _shift(v: FloatArray, by: int) -> FloatArray:
    """``v[..., d - by]`` along axis 1 (inf where d - by < 0)."""
    if by == 0:
        return v
    out = np.full_like(v, np.inf)
    out[:, by:] = v[:, :-by]
    return out


def hindsight_costs(up: BoolArray, start_ticks: IntArray, tick_hours: float, job_hours: float,
                    restart_hours: float, deadline_hours: float, price_usd_per_hour: float,
                    on_demand_usd_per_hour: float, fallback_usd_per_hour: float) -> FloatArray:
    """The optimum's cost (USD) from each start tick (module docstring); ``up``: the pool per
    tick of the (cyclic) trace.

    Raises:
        TraceError: a deadline that on demand alone cannot meet in the relaxed job.
    """
    g = tick_hours
    n = max(1, round(job_hours / g))
    rho = round(restart_hours / g)
    last = math.floor(deadline_hours / g + TIME_TOLERANCE_HOURS / g)
    if n + rho > last:
        raise TraceError("deadline_hours", f"{deadline_hours:g} h: on demand alone needs "
                                           f"{(n + rho) * g:.3f} h (ticks of {g:.4g} h)")
    size = up.size
    starts = np.asarray(start_ticks, dtype=np.int64)
    nst = starts.size
    band = last - n + 1  # d = 0 .. last - n
    run = _up_run(np.asarray(up, dtype=bool))
    c_idle, c_od, c_spot = (on_demand_usd_per_hour * g, fallback_usd_per_hour * g,
                            price_usd_per_hour * g)
    depth = rho + 1
    hist = np.full((depth, nst, band, 5), np.inf)  # V at k + 1 .. k + rho (slot k mod depth)
    hist[last % depth] = 0.0  # at the last boundary every state of the band is done
    d = np.arange(band)
    rows = np.arange(nst)[:, None]
    for k in range(last - 1, -1, -1):
        nxt = hist[(k + 1) % depth]
        tick = (starts + k) % size
        on = up[tick][:, None]
        idle = [c_idle + _shift(nxt[:, :, ph], 1) for ph in (_N, _S, _O)]
        spot_work = np.where(on, c_spot + nxt[:, :, _S], np.inf)
        od_work = c_od + nxt[:, :, _O]
        if rho == 0:
            od_start, spot_start = od_work, spot_work
        else:
            od_start = (rho * c_od + _shift(hist[(k + rho) % depth][:, :, _OP], rho)
                        if k + rho <= last else np.full((nst, band), np.inf))
            m = np.minimum(run[tick], rho)[:, None]
            src = hist[(k + m) % depth, rows, np.maximum(d[None, :] - m, 0), _SP]
            ok = (d[None, :] >= m) & (k + m <= last) & on
            spot_start = np.where(ok, m * c_spot + src, np.inf)
        value = np.empty((nst, band, 5))
        value[:, :, _N] = np.minimum(np.minimum(idle[0], spot_start), od_start)
        value[:, :, _S] = np.minimum(np.minimum(idle[1], spot_work), od_start)
        value[:, :, _O] = np.minimum(np.minimum(idle[2], od_work), spot_start)
        value[:, :, _SP] = np.minimum(np.minimum(idle[0], spot_work), od_start)
        value[:, :, _OP] = np.minimum(np.minimum(idle[0], od_work), spot_start)
        value[:, last - k:, :] = 0.0  # w >= N: done
        if k == 0:  # the job has never run: a first spot attempt needs no restart
            return np.asarray(value[:, last - n, _S], dtype=np.float64)
        hist[k % depth] = value
    raise AssertionError("unreachable: last >= n + rho >= 1")
