"""The backtest's replay: a job on spot traces (``traces.md``, "Backtest"), vectorised over start
times and configurations. The job (``K`` full segments of ``s`` hours, a last one of ``s_last``,
a restart of R hours; ``rem = (K - i) s_p + s_last,p`` hours remain at segment i in pool p) and
the recovery policies are :mod:`deepvm_core.job.backtest`; the runs it returns,
:mod:`deepvm_core.job.backtest_runs`.

**Time.** Ticks last g hours; run j starts at tick ``floor(j L / S)`` (S = min(S, L)); its time
0 is the beginning of that tick, tick boundaries are at ``t = k g`` (k = 0, 1, ...), and tick k
of the run is trace tick ``(start + k) mod L`` (traces are cyclic). A pool is up or down per
tick (:func:`~deepvm_core.market.trace_stats.up_ticks`).

**Rules, to the letter of the contract:**

* At a tick boundary t (time 0 included), first the ``deadline`` rule: if
  ``D - t < rem + R + g`` the attempt in progress (if any) is abandoned and the job finishes on
  demand: makespan ``t + R + rem``, fallback cost ``P_fallback (R + rem)``.
* Then, if the current pool is down (or at time 0): an attempt in progress is lost
  (``interruptions += 1``; the next attempt restarts), and a pool is chosen: ``wait``: the
  first pool, when up; ``failover``/``deadline``: the first pool of the list that is up. None up:
  the job waits until the next boundary. A job stays in a pool while it is up.
* An attempt is ``R`` (after an interruption or a move to another pool) plus the segment's
  hours; when it reaches its end the next segment starts at once, without a restart.
* Billing: spot hours (attempts running, restarts, lost work and stalls included) at the
  pool's cluster price P; waiting hours at its on-demand part ``P_od``; so a run costs
  ``Σ P spot_hours + P_od wait_hours (+ P_fallback (R + rem))``.

**Ties the contract leaves open, decided here:** an attempt that reaches its end exactly at a
boundary is done before that boundary's checks (no interruption, and the deadline rule sees the
segment as done); the deadline rule at a boundary comes before the interruption there (a job
that falls back is not also interrupted); before the job's first attempt there is no restart
(choosing the first pool is not a move); while waiting, hours and prices are those of the
cluster of the last pool the job ran in (the first pool before it ran).

**Vectorisation.** Every run (configuration x start) advances by whole events, never tick by
tick: per pool, ``down_next[k]`` and ``up_next[k]`` (ticks from k to the next down or up tick,
cyclic; infinite when there is none) and, for failover, the first pool up at each tick and the
ticks to the next tick with any pool up, are computed once with ``searchsorted``. A running job
at time t in an up run that ends at boundary E completes, in one step, the
``m = min(K_left, floor((E - c) / s))`` full segments that fit after its first attempt ends at
c. Under the deadline rule the slack ``A = (D - R - g) - (t + r R + rem)`` is constant over an
up run (r = 1 when the attempt starts with a restart); the first attempt falls back at the
first boundary ``b >= t`` with ``b > t + r R + A``; a later segment j (phase = time since its
start) falls back at a boundary only if ``phase > A``, impossible when A is at least every later
segment's length. Runs whose A is shorter (close to the deadline) advance one segment per
round. Each round works on boolean masks of the runs still going.
"""

from __future__ import annotations

import numpy as np

from deepvm_core.arrays import BoolArray, FloatArray, IntArray
from deepvm_core.job.backtest import (
    DEFAULT_STARTS,
    MAX_STARTS,
    RECOVERY_POLICIES,
    BacktestJob,
    RecoveryPolicy,
)
from deepvm_core.job.backtest_runs import BacktestRuns
from deepvm_core.market.trace import SpotTrace, TraceError
from deepvm_core.market.trace_stats import up_threshold

_BOUNDARY, _RUNNING, _DONE = 0, 1, 2
#: Hours within which two times count as equal (a tie at a tick boundary): float noise of
#: ``k g`` is ~1e-13 h on the longest traces; below the deadline's reporting tolerance (1e-9 h).
TIME_TOLERANCE_HOURS = 1e-10


def _late(deadline: float, t: FloatArray, need: FloatArray) -> BoolArray:
    """The deadline rule ``D - t < need`` (need = rem + R + g), strict beyond the tolerance."""
    return np.asarray(deadline - t - need < -TIME_TOLERANCE_HOURS, dtype=bool)


def _first_late_boundary(deadline: float, need: FloatArray, g: float) -> FloatArray:
    """The least boundary index k with ``_late(D, k g, need)``: the float floor of
    ``(D - need) / g`` may be off by one either way, so the candidates around it are tested."""
    base = np.floor((deadline - need) / g) - 1
    out = base + 3
    for step in (2, 1, 0):
        out = np.where(_late(deadline, (base + step) * g, need), base + step, out)
    return out


def start_ticks(ticks: int, starts: int) -> IntArray:
    """``floor(j L / S)`` for j = 0 .. S - 1, with S = min(starts, L)."""
    s = min(starts, ticks)
    return (np.arange(s, dtype=np.int64) * ticks) // s


def _ticks_to_next(mask: BoolArray) -> FloatArray:
    """Per tick k, ticks from k to the first tick >= k (cyclic) where ``mask``; inf if none."""
    size = mask.size
    hits = np.flatnonzero(mask)
    if hits.size == 0:
        return np.full(size, np.inf)
    ext = np.concatenate((hits, hits[:1] + size))
    k = np.arange(size)
    return (ext[np.searchsorted(ext, k)] - k).astype(np.float64)


def _check_inputs(traces: list[SpotTrace], job: BacktestJob, policy: str,
                  deadline_hours: float | None, starts: int) -> None:
    if policy not in RECOVERY_POLICIES:
        raise TraceError("policy", f"{policy!r}: must be one of {', '.join(RECOVERY_POLICIES)}")
    if not traces:
        raise TraceError("pools", "a backtest needs at least one pool")
    if len(traces) != job.pools:
        raise TraceError("pools", f"{len(traces)} traces for a job of {job.pools} pools")
    if any(t.ticks != traces[0].ticks for t in traces):
        raise TraceError("pools", "pools replayed together need traces of the same length")
    if any(t.gap_seconds != traces[0].gap_seconds for t in traces):
        raise TraceError("pools", "pools replayed together need the same tick length")
    if isinstance(starts, bool) or not isinstance(starts, int) or not 1 <= starts <= MAX_STARTS:
        raise TraceError("starts", f"{starts!r}: must be a whole number from 1 to "
                                   f"{MAX_STARTS:,}")
    if deadline_hours is not None and (isinstance(deadline_hours, bool) or not isinstance(
            deadline_hours, (int, float)) or not np.isfinite(deadline_hours)
            or deadline_hours <= 0):
        raise TraceError("deadline_hours", f"{deadline_hours!r}: must be a number > 0")
    if policy == "deadline" and deadline_hours is None:
        raise TraceError("deadline_hours", "the deadline policy needs a deadline")


def backtest(traces: list[SpotTrace], job: BacktestJob, *, policy: RecoveryPolicy = "failover",
             deadline_hours: float | None = None,
             starts: int = DEFAULT_STARTS) -> BacktestRuns:
    """Replay ``job`` on the pools whose traces are ``traces`` (failover order) from ``starts``
    start times (rules in the module docstring). Deterministic.

    Raises:
        TraceError: a bad policy, deadline or start count; traces of different lengths or
            tick lengths; a cluster larger than a count trace's largest count; a policy that
            can never run (``wait`` on a pool that is never up, ``failover`` with no pool
            ever up).
    """
    _check_inputs(traces, job, policy, deadline_hours, starts)
    ticks = traces[0].ticks
    first = start_ticks(ticks, starts)
    shape = (job.configurations, first.size)
    out = {name: np.zeros(shape) for name in ("makespan", "cost", "spot", "wait")}
    inter = np.zeros(shape, dtype=np.int64)
    fell = np.zeros(shape, dtype=bool)
    thresholds = np.ones(job.spot_vms.shape, dtype=np.int64)
    for col, trace in enumerate(traces):
        if trace.max_count > 1:
            need = job.spot_vms[:, col]
            if np.any(need > trace.max_count):
                up_threshold(trace, int(need.max()))  # raises, naming the trace
            thresholds[:, col] = need
    groups, which = np.unique(thresholds, axis=0, return_inverse=True)
    for gi, level in enumerate(groups):
        rows = np.flatnonzero(which.ravel() == gi)
        up = np.stack([t.counts >= lv for t, lv in zip(traces, level, strict=True)])
        part = _replay(up, traces[0].gap_hours, job.rows(rows), policy, deadline_hours, first,
                       [t.source for t in traces])
        for name, value in zip(("makespan", "cost", "spot", "wait"), part[:4], strict=True):
            out[name][rows] = value
        inter[rows], fell[rows] = part[4], part[5]
    return BacktestRuns(policy=policy, deadline_hours=None if deadline_hours is None
                        else float(deadline_hours), start_ticks=first,
                        makespan_hours=out["makespan"], cost_usd=out["cost"],
                        spot_hours=out["spot"], wait_hours=out["wait"], interruptions=inter,
                        fell_back=fell)


def _replay(up: BoolArray, g: float, job: BacktestJob, policy: RecoveryPolicy,
            deadline: float | None, first: IntArray, sources: list[str],
            ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, IntArray, BoolArray]:
    """The runs of ``job`` (configurations x starts) on pools ``up`` (pools x ticks)."""
    pools, ticks = up.shape
    down_next = np.stack([_ticks_to_next(np.asarray(u == 0, dtype=bool)) for u in up])
    up_next = np.stack([_ticks_to_next(u) for u in up])
    any_up: BoolArray = np.asarray(up.any(axis=0), dtype=bool)
    any_next = _ticks_to_next(any_up)
    first_up = np.where(any_up, np.argmax(up, axis=0), -1)
    if policy == "wait" and not up[0].any():
        raise TraceError(sources[0], "the pool is never up for this cluster: with the wait "
                                     "policy the job never runs")
    if policy == "failover" and not any_up.any():
        raise TraceError("pools", "no pool is ever up for this cluster: the job never runs")
    nconf, nstart = job.configurations, first.size
    ci = np.repeat(np.arange(nconf), nstart)
    start = np.tile(first, nconf)
    n = ci.size
    state = np.full(n, _BOUNDARY)
    rel = np.zeros(n, dtype=np.int64)  # boundary index of the run (state _BOUNDARY)
    t = np.zeros(n)
    end_tick = np.zeros(n)  # run's boundary index where the current up run ends (may be inf)
    seg = np.zeros(n, dtype=np.int64)
    restart = np.zeros(n, dtype=bool)
    fresh = np.zeros(n, dtype=bool)  # running from a boundary whose rules were just applied
    visits = np.zeros(n, dtype=np.int64)  # boundaries met since the last segment was done
    stuck_after = 2 * (pools + 1) * ticks + 2
    pool = np.full(n, -1, dtype=np.int64)
    spot, wait, cost, makespan = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)
    inter = np.zeros(n, dtype=np.int64)
    fell = np.zeros(n, dtype=bool)
    kfull = job.full_segments
    sfull, slast, rr = job.full_segment_hours, job.last_segment_hours, job.restart_hours
    price, od, fb = job.price_usd_per_hour, job.on_demand_usd_per_hour, job.fallback_usd_per_hour

    def finish(idx: IntArray, at: FloatArray) -> None:
        makespan[idx] = at
        state[idx] = _DONE

    while True:
        idx = np.flatnonzero(state == _BOUNDARY)
        if idx.size:
            c, p_last = ci[idx], pool[idx]
            hp = np.maximum(p_last, 0)
            tb = rel[idx] * g
            remh = (kfull[c] - seg[idx]) * sfull[c, hp] + slast[c, hp]
            r_h = rr[c, hp]
            if policy == "deadline":
                assert deadline is not None
                late = _late(deadline, np.asarray(tb, dtype=np.float64), remh + r_h + g)
                lidx = idx[late]
                fell[lidx] = True
                cost[lidx] += fb[c[late], hp[late]] * (r_h[late] + remh[late])
                finish(lidx, tb[late] + r_h[late] + remh[late])
                keep = ~late
                idx, c, p_last, hp = idx[keep], c[keep], p_last[keep], hp[keep]
                tb, remh, r_h = tb[keep], remh[keep], r_h[keep]
            visits[idx] += 1
            if policy != "deadline" and np.any(visits[idx] > stuck_after):
                raise TraceError("pools", f"under the {policy} policy the job never finishes "
                                          "on these pools: a segment plus its restart never "
                                          "fits in the time the pools stay up")
            tick = (start[idx] + rel[idx]) % ticks
            chosen = (np.where(up[0, tick], 0, -1) if policy == "wait" else first_up[tick])
            go = chosen >= 0
            g_idx, g_pool, g_tick = idx[go], chosen[go], tick[go]
            restart[g_idx] |= (p_last[go] >= 0) & (p_last[go] != g_pool)
            pool[g_idx] = g_pool
            end_tick[g_idx] = rel[g_idx] + down_next[g_pool, g_tick]
            t[g_idx] = tb[go]
            fresh[g_idx] = True
            state[g_idx] = _RUNNING
            stay = ~go
            w_idx = idx[stay]
            nxt = rel[w_idx] + (up_next[0, tick[stay]] if policy == "wait"
                                else any_next[tick[stay]])
            if policy == "deadline":
                assert deadline is not None
                due = _first_late_boundary(deadline, remh[stay] + r_h[stay] + g, g)
                nxt = np.minimum(nxt, due)
            hours = nxt * g - tb[stay]
            wait[w_idx] += hours
            cost[w_idx] += od[c[stay], hp[stay]] * hours
            rel[w_idx] = nxt.astype(np.int64)
        idx = np.flatnonzero(state == _RUNNING)
        if idx.size == 0:
            if idx.size == 0 and not np.any(state == _BOUNDARY):
                break
            continue
        _advance(idx, g, policy, deadline, ci, pool, seg, restart, fresh, visits, t, end_tick,
                 rel, state,
                 spot, cost, inter, fell, makespan, kfull, sfull, slast, rr, price, fb)
    shape = (nconf, nstart)
    return (makespan.reshape(shape), cost.reshape(shape), spot.reshape(shape),
            wait.reshape(shape), inter.reshape(shape), fell.reshape(shape))


def _advance(idx: IntArray, g: float, policy: RecoveryPolicy, deadline: float | None, ci: IntArray,
             pool: IntArray, seg: IntArray, restart: BoolArray, fresh: BoolArray,
             visits: IntArray, t: FloatArray,
             end_tick: FloatArray, rel: IntArray, state: IntArray, spot: FloatArray,
             cost: FloatArray, inter: IntArray, fell: BoolArray, makespan: FloatArray,
             kfull: IntArray, sfull: FloatArray, slast: FloatArray, rr: FloatArray,
             price: FloatArray, fb: FloatArray) -> None:
    """One round for the running runs ``idx``: to the end of the up run, the job's end, a
    fallback or (near the deadline) the end of the current attempt. Updates in place."""
    c, p = ci[idx], pool[idx]
    i, k = seg[idx], kfull[c]
    s, sl, r_h, pr = sfull[c, p], slast[c, p], rr[c, p], price[c, p]
    t0 = t[idx]
    e_tick = end_tick[idx]
    with np.errstate(invalid="ignore"):
        e = e_tick * g
    lead = np.where(restart[idx], r_h, 0.0)
    first_len = lead + np.where(i < k, s, sl)
    done_at = t0 + first_len
    rem = (k - i) * s + sl
    fall = np.zeros(idx.size, dtype=bool)
    step = np.zeros(idx.size, dtype=bool)
    b1 = np.zeros(idx.size)
    if policy == "deadline":
        assert deadline is not None
        latest = deadline - r_h - g
        b1 = np.maximum(np.ceil(t0 / g - TIME_TOLERANCE_HOURS / g) + fresh[idx],
                        _first_late_boundary(deadline, rem + r_h + g, g)) * g
        fall = (b1 < done_at) & (b1 <= e)
        slack = latest - (t0 + lead + rem)
        later = np.where(i + 1 < k, np.maximum(s, sl), np.where(i < k, sl, -np.inf))
        step = slack < later

    def bill(sel: BoolArray, until: FloatArray) -> None:
        spot[idx[sel]] += until - t0[sel]
        cost[idx[sel]] += pr[sel] * (until - t0[sel])

    def done(sel: BoolArray, at: FloatArray) -> None:
        makespan[idx[sel]] = at
        state[idx[sel]] = _DONE

    if np.any(fall):
        bill(fall, b1[fall])
        f_idx = idx[fall]
        fell[f_idx] = True
        extra = r_h[fall] + rem[fall]
        cost[f_idx] += fb[c[fall], p[fall]] * extra
        done(fall, b1[fall] + extra)
    complete = ~fall & (done_at <= e)
    visits[idx[complete]] = 0
    lost = ~fall & ~complete
    # the first attempt is lost at E: interruption, back to a boundary
    bill(lost, e[lost])
    inter[idx[lost]] += 1
    restart[idx[lost]] = True
    rel[idx[lost]] = e_tick[lost].astype(np.int64)
    state[idx[lost]] = _BOUNDARY
    # the job's last segment ends
    last = complete & (i >= k)
    bill(last, done_at[last])
    done(last, done_at[last])
    # near the deadline: one segment at a time
    one = complete & (i < k) & step
    bill(one, done_at[one])
    t[idx[one]] = done_at[one]
    seg[idx[one]] += 1
    restart[idx[one]] = False
    fresh[idx[one]] = False
    at_end = one & (done_at >= e)  # done exactly at E: no attempt in progress there
    rel[idx[at_end]] = e_tick[at_end].astype(np.int64)
    state[idx[at_end]] = _BOUNDARY
    # in bulk: the full segments that fit before E, then maybe the last
    bulk = complete & (i < k) & ~step
    if not np.any(bulk):
        return
    b_idx = idx[bulk]
    cb, eb, sb, slb = done_at[bulk], e[bulk], s[bulk], sl[bulk]
    left = (k - i - 1)[bulk]
    with np.errstate(invalid="ignore"):
        fit = np.where(np.isinf(eb), left, np.floor((eb - cb) / sb))
    m = np.minimum(left, fit).astype(np.int64)
    t2 = cb + m * sb
    over = t2 > eb
    m = np.where(over, m - 1, m)
    t2 = np.where(over, cb + m * sb, t2)
    end = t2 + slb
    fin = (m == left) & (end <= eb)
    sub = np.flatnonzero(bulk)
    fin_all = np.zeros(idx.size, dtype=bool)
    fin_all[sub[fin]] = True
    bill(fin_all, end[fin] if fin.any() else np.zeros(0))
    done(fin_all, end[fin])
    cut = ~fin
    cut_all = np.zeros(idx.size, dtype=bool)
    cut_all[sub[cut]] = True
    bill(cut_all, eb[cut])
    ci_idx = b_idx[cut]
    running = t2[cut] < eb[cut]
    inter[ci_idx] += running.astype(np.int64)
    restart[ci_idx] = running
    seg[ci_idx] = (i[bulk] + 1 + m)[cut]
    rel[ci_idx] = e_tick[bulk][cut].astype(np.int64)
    state[ci_idx] = _BOUNDARY
