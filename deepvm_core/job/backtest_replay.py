"""The backtest's replay: a job on spot traces (``traces.md``, "Backtest"), vectorised over start
times and configurations, driven tick boundary by tick boundary by the recovery policies of
:mod:`deepvm_core.job.recovery` (the only home of their rules). The job (``K`` full segments of
``s`` hours, a last one of ``s_last``, a restart of R hours; ``rem = (K - i) s_p + s_last,p``
hours remain at segment i in pool p) is :mod:`deepvm_core.job.backtest`; the runs it returns,
:mod:`deepvm_core.job.backtest_runs`.

**Time.** Ticks last g hours; run j starts at tick ``floor(j L / S)`` (S = min(S, L)); its time
0 is the beginning of that tick, tick boundaries are at ``t = k g`` (k = 0, 1, ...), and tick k
of the run is trace tick ``(start + k) mod L`` (traces are cyclic). A pool is up or down per
tick (:func:`~deepvm_core.market.trace_stats.up_ticks`). Times are compared with
:data:`~deepvm_core.job.recovery.TIME_TOLERANCE_HOURS`: a time within it of a boundary is at the
boundary, as exact arithmetic would have it.

**At every boundary** (time 0 included), in this order:

1. An attempt that reached its end exactly at the boundary is done before anything else (no
   interruption; the policy sees the segment done).
2. The policy is called with the run's :class:`~deepvm_core.job.recovery.RecoveryState` and
   returns a pool (up now), on demand or nothing.
3. An action other than the current placement abandons the attempt in progress (its segment
   starts again, with a restart). If the current spot pool is down and the action is not on
   demand, that is an interruption (``interruptions += 1``); a run that goes on demand at a
   boundary is not also interrupted there (the ``deadline`` rule comes first).
4. A new attempt starts where the action says: R hours of restart (after an interruption, an
   abandoned attempt, a move to another placement, and always when going on demand: the
   contract's fallback takes ``R + rem``; never before the first attempt on spot) and then the
   current segment. When an attempt reaches its end the next segment starts at once, without a
   restart. Nothing: the job waits until the next boundary.

**Billing.** Spot hours (attempts running in a pool, restarts, lost work and stalls included) at
that pool's cluster price P; on-demand hours at ``P_fallback`` of the home cluster (the last pool
the job ran in, the first before it ran; its hours and R also apply on demand); waiting hours at
its on-demand part ``P_od``. With ``deadline`` (on demand for good) a run thus costs
``Σ P spot_hours + P_od wait_hours + P_fallback (R + rem)``, the contract's formula.

**Speed: asking the policy only where its answer may change.** Calling the policy at every
boundary of every run would cost one round per tick (a 45-hour makespan on 32-second ticks is
5,000). Each policy returns, with its action, a hint (:class:`~deepvm_core.job.recovery.Decision`):
a time before which its answer stays the same while the run holds the action, and the pools whose
state it depends on. A run then moves on in one round to the first boundary at or after that
time, where a pool it watches (or its own pool) changes (``flip_next``, from the trace once), or
where its job ends, running through any number of segments on the way (:meth:`_Runs.progress`);
after a move to a pool whose cluster has other hours or R (the hint assumed the old ones), one
boundary. The hint is a bound computed by the rule's own function, next to the rule; the runs are
exactly those of a loop asking at every boundary (``_EVERY_BOUNDARY``, which the tests also run).

**Bounds.** A run whose segments never fit (no segment done for ``2 (pools + 1) L + 2`` ticks,
plus ``D / g`` with a deadline) is refused with an error, so every loop here ends within the
trace length times the job.
"""

from __future__ import annotations

import math

import numpy as np

from deepvm_core.arrays import BoolArray, FloatArray, IntArray
from deepvm_core.job.backtest import (
    DEFAULT_STARTS,
    MAX_STARTS,
    BacktestJob,
)
from deepvm_core.job.backtest_runs import BacktestRuns
from deepvm_core.job.recovery import (
    DEADLINE_POLICIES,
    NOTHING,
    ON_DEMAND,
    POLICIES,
    RECOVERY_POLICIES,
    TIME_TOLERANCE_HOURS,
    Decision,
    RecoveryPolicy,
    RecoveryState,
)
from deepvm_core.market.trace import SpotTrace, TraceError
from deepvm_core.market.trace_stats import up_threshold

_TOL = TIME_TOLERANCE_HOURS
#: Tests set this to call the policy at every boundary of every run (the plain definition),
#: ignoring the policies' hints.
_EVERY_BOUNDARY = False


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
    if policy in DEADLINE_POLICIES and deadline_hours is None:
        raise TraceError("deadline_hours", f"the {policy} policy needs a deadline")


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
    out = {name: np.zeros(shape) for name in ("makespan", "cost", "spot", "wait", "od")}
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
        for name, value in zip(("makespan", "cost", "spot", "wait", "od"), part[:5],
                               strict=True):
            out[name][rows] = value
        inter[rows], fell[rows] = part[5], part[6]
    return BacktestRuns(policy=policy, deadline_hours=None if deadline_hours is None
                        else float(deadline_hours), start_ticks=first,
                        makespan_hours=out["makespan"], cost_usd=out["cost"],
                        spot_hours=out["spot"], wait_hours=out["wait"],
                        on_demand_hours=out["od"], interruptions=inter,
                        fell_back=fell)


def _times(k: IntArray, g: float) -> FloatArray:
    """Boundary ``k`` in hours."""
    return np.asarray(k * g, dtype=np.float64)


class _Runs:
    """The working arrays of every run (configuration x start), updated in place by the driver;
    per-run copies of the job's (configurations, pools) arrays."""

    def __init__(self, job: BacktestJob, first: IntArray, deadline: float | None) -> None:
        nconf, nstart = job.configurations, first.size
        ci = np.repeat(np.arange(nconf), nstart)
        self.n = n = ci.size
        self.start = np.tile(first, nconf)
        self.kfull = job.full_segments[ci]
        self.sfull, self.slast = job.full_segment_hours[ci], job.last_segment_hours[ci]
        self.rr, self.price = job.restart_hours[ci], job.price_usd_per_hour[ci]
        self.od, self.fb = job.on_demand_usd_per_hour[ci], job.fallback_usd_per_hour[ci]
        self.deadline = np.full(n, math.inf if deadline is None else float(deadline))
        self.k = np.zeros(n, dtype=np.int64)  # the boundary the run is at
        self.seg = np.zeros(n, dtype=np.int64)
        self.place = np.full(n, NOTHING, dtype=np.int64)
        self.last_run = np.full(n, NOTHING, dtype=np.int64)
        self.home = np.zeros(n, dtype=np.int64)
        self.in_att = np.zeros(n, dtype=bool)
        self.att_start, self.att_len = np.zeros(n), np.zeros(n)
        self.restart = np.zeros(n, dtype=bool)
        self.since = np.zeros(n, dtype=np.int64)  # boundary of the last segment done
        self.spot, self.wait, self.odh = np.zeros(n), np.zeros(n), np.zeros(n)
        self.cost, self.makespan = np.zeros(n), np.full(n, np.nan)
        self.inter = np.zeros(n, dtype=np.int64)
        self.fell = np.zeros(n, dtype=bool)
        self.pools = job.pools
        self.ticks = 0
        #: Per run: every pool's cluster has the same segment hours and R.
        same = ((job.full_segment_hours == job.full_segment_hours[:, :1])
                & (job.last_segment_hours == job.last_segment_hours[:, :1])
                & (job.restart_hours == job.restart_hours[:, :1])).all(axis=1)
        self.same_pools = np.asarray(same[ci], dtype=bool)

    def at(self, values: FloatArray, r: IntArray, pool: IntArray) -> FloatArray:
        """``values[r, pool]`` for a (runs, pools) array, as one flat take (faster)."""
        return np.asarray(values.ravel()[r * self.pools + pool], dtype=np.float64)

    def seglen(self, r: IntArray, home: IntArray, seg: IntArray) -> FloatArray:
        """Hours of segment ``seg`` in the cluster of pool ``home``."""
        return np.where(seg < self.kfull[r], self.at(self.sfull, r, home),
                        self.at(self.slast, r, home))

    def remaining(self, r: IntArray, home: IntArray, seg: IntArray) -> FloatArray:
        """``rem``: every segment from ``seg`` on, in the cluster of pool ``home``."""
        return (self.kfull[r] - seg) * self.at(self.sfull, r, home) + self.at(self.slast, r, home)

    def progress(self, r: IntArray, until: FloatArray,
                 ) -> tuple[IntArray, FloatArray, FloatArray, BoolArray, FloatArray]:
        """Runs ``r`` (each with an attempt in progress) running without a break until
        ``until``: the segment, attempt start and length, whether an attempt is in progress at
        ``until`` (not when one ended exactly there) and the job's end (NaN if later)."""
        home, seg, kf = self.home[r], self.seg[r], self.kfull[r]
        s, sl = self.at(self.sfull, r, home), self.at(self.slast, r, home)
        a0, l0 = self.att_start[r], self.att_len[r]
        c1 = a0 + l0
        first = c1 <= until + _TOL
        left = kf - seg - 1  # full segments after the current one (-1: it is the last)
        m = np.floor((until - c1 + _TOL) / s)
        m = np.minimum(np.maximum(np.where(first, m, 0), 0), np.maximum(left, 0)).astype(np.int64)
        over = (m > 0) & (c1 + m * s > until + _TOL)
        m -= over
        more = (m < left) & (c1 + (m + 1) * s <= until + _TOL) & first
        m += more
        t2 = c1 + m * s
        end_last = t2 + sl
        done_at = np.where(first & (left < 0), c1,
                           np.where(first & (left >= 0) & (m == left) & (end_last <= until + _TOL),
                                    end_last, np.nan))
        nseg = np.where(first, seg + 1 + m, seg)
        nstart = np.where(first, t2, a0)
        nlen = np.where(first, self.seglen(r, home, np.minimum(nseg, kf)), l0)
        going = ~first | (t2 < until - _TOL)
        return nseg, nstart, nlen, going, done_at

    def state(self, r: IntArray, t: FloatArray, seg: IntArray, att_start: FloatArray,
              in_att: BoolArray, restart: BoolArray, up_now: BoolArray) -> RecoveryState:
        """The policy's view of runs ``r`` at time ``t`` (a boundary)."""
        home = self.home[r]
        rem = self.remaining(r, home, seg)
        total = self.remaining(r, home, np.zeros_like(seg))
        return RecoveryState(
            elapsed_hours=t, work_done_hours=total - rem, remaining_hours=rem,
            segment_hours=self.seglen(r, home, seg),
            attempt_hours=np.where(in_att, t - att_start, 0.0), restart_pending=restart,
            placement=self.place[r], pools_up=up_now, deadline_hours=self.deadline[r],
            restart_hours=self.at(self.rr, r, home), tick_hours=self._g)

    _g: float = 0.0


def _replay(up: BoolArray, g: float, job: BacktestJob, policy: RecoveryPolicy,
            deadline: float | None, first: IntArray, sources: list[str],
            ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray, IntArray,
                       BoolArray]:
    """The runs of ``job`` (configurations x starts) on pools ``up`` (pools x ticks)."""
    pools, ticks = up.shape
    decide = POLICIES[policy]
    if policy == "wait" and not up[0].any():
        raise TraceError(sources[0], "the pool is never up for this cluster: with the wait "
                                     "policy the job never runs")
    if policy == "failover" and not up.any():
        raise TraceError("pools", "no pool is ever up for this cluster: the job never runs")
    # per pool and trace tick k: ticks from k to the next tick where the pool's state differs
    flip_next = np.stack([_ticks_to_next(np.asarray(u != np.roll(u, -1), dtype=bool)) + 1
                          for u in up])
    runs = _Runs(job, first, deadline)
    runs._g = g
    runs.ticks = ticks
    stuck_after = 2 * (pools + 1) * ticks + 2 + (
        0 if deadline is None else math.ceil(deadline / g) + 1)
    longest = float(np.max(job.full_segments[:, None] * job.full_segment_hours
                           + job.last_segment_hours + job.restart_hours))
    bound = (int(job.full_segments.max()) + 1) * (stuck_after + 1) + math.ceil(longest / g) + 2
    active = np.arange(runs.n)
    rounds = 0
    while active.size:
        rounds += 1
        if rounds > bound:  # unreachable: every round moves every run on by a boundary
            raise RuntimeError(f"backtest: more than {bound} rounds")
        r = active
        rows = np.arange(r.size)
        k = runs.k[r]
        tick = (runs.start[r] + k) % ticks
        up_now = up[:, tick].T
        home = runs.home[r]
        dec = decide(runs.state(r, _times(k, g), runs.seg[r], runs.att_start[r], runs.in_att[r],
                                runs.restart[r], up_now))
        act = dec.action
        bad = (act < NOTHING) | (act >= pools) | ((act >= 0) & ~up_now[rows, np.clip(act, 0,
                                                                                     None)])
        if np.any(bad):
            raise TraceError("policy", f"the {policy} policy chose {int(act[bad][0])}, not a "
                                       "pool that is up, on demand or nothing")
        _apply(runs, r, rows, k, act, up_now, g)
        if _EVERY_BOUNDARY:
            stop = np.ones(r.size, dtype=np.int64)
        else:
            stop = _stop(runs, r, k, tick, home, dec, flip_next, g)
        done = _advance(runs, r, k, stop, g)
        active = r[~done]
        stuck = (runs.k[active] - runs.since[active]) > stuck_after
        if np.any(stuck):
            raise TraceError("pools", f"under the {policy} policy the job never finishes on "
                                      "these pools: a segment plus its restart never fits in "
                                      "the time the pools stay up")
    shape = (job.configurations, first.size)
    return (runs.makespan.reshape(shape), runs.cost.reshape(shape), runs.spot.reshape(shape),
            runs.wait.reshape(shape), runs.odh.reshape(shape), runs.inter.reshape(shape),
            runs.fell.reshape(shape))


def _apply(runs: _Runs, r: IntArray, rows: IntArray, k: IntArray, act: IntArray,
           up_now: BoolArray, g: float) -> None:
    """Steps 3 and 4 at a boundary (module docstring) for runs ``r`` and their actions."""
    cur, in_att = runs.place[r], runs.in_att[r]
    changing = act != cur
    cur_down = (cur >= 0) & ~up_now[rows, np.maximum(cur, 0)]
    runs.inter[r] += in_att & cur_down & (act != ON_DEMAND)
    restart = runs.restart[r] | (in_att & changing)
    in_att = in_att & ~changing
    start = (act != NOTHING) & ~in_att
    lr = runs.last_run[r]
    restart |= start & (((lr != NOTHING) & (act != lr))
                        | ((act == ON_DEMAND) & (lr != ON_DEMAND)))
    runs.restart[r] = restart
    s = r[start]
    a = act[start]
    runs.home[s] = np.where(a >= 0, a, runs.home[s])
    runs.last_run[s] = a
    runs.att_start[s] = k[start] * g
    home = runs.home[s]
    runs.att_len[s] = (np.where(restart[start], runs.at(runs.rr, s, home), 0.0)
                       + runs.seglen(s, home, runs.seg[s]))
    in_att[start] = True
    runs.in_att[r] = in_att
    runs.place[r] = act
    runs.fell[r] |= act == ON_DEMAND


def _stop(runs: _Runs, r: IntArray, k: IntArray, tick: IntArray, home: IntArray,
          dec: Decision, flip_next: FloatArray, g: float) -> IntArray:
    """Boundaries each run ``r`` moves on from ``k`` (>= 1) before the policy is asked again:
    to the first boundary ``t >= until_hours`` of its decision, where a pool it watches (or its
    own pool) changes, or where its job ends; at the next boundary after a move to a pool whose
    cluster's hours or R differ from the home cluster's (the decision assumed the old ones)."""
    until = dec.until_hours
    with np.errstate(invalid="ignore"):
        c = np.ceil(until / g)  # the least boundary at or after ``until``, corrected for floats
        at = np.where((c - 1) * g >= until, c - 1, np.where(c * g >= until, c, c + 1))
    stop = np.fmax(at - k, 1)  # NaN: the next boundary
    act = dec.action
    watch = dec.watch | (np.arange(runs.pools)[None, :] == act[:, None])
    flips = np.where(watch, flip_next[:, tick].T, np.inf).min(axis=1)
    stop = np.minimum(stop, flips)
    moved = (act >= 0) & (act != home) & ~runs.same_pools[r]
    stop[moved] = 1
    open_ = np.flatnonzero(np.isinf(stop))
    if open_.size:
        ro = r[open_]
        ends = np.full(open_.size, float(runs.ticks))
        going = runs.in_att[ro]
        if going.any():
            rg = ro[going]
            h = runs.home[rg]
            rest = runs.remaining(rg, h, runs.seg[rg]) - runs.seglen(rg, h, runs.seg[rg])
            end = runs.att_start[rg] + runs.att_len[rg] + rest
            ends[going] = np.maximum(np.ceil((end - _TOL) / g) - k[open_][going], 1)
        stop[open_] = ends
    return np.asarray(stop, dtype=np.int64)


def _advance(runs: _Runs, r: IntArray, k: IntArray, stop: IntArray, g: float) -> BoolArray:
    """Runs ``r`` keep their action from boundary ``k`` to ``k + stop`` (or the job's end):
    progress and billing. Returns which runs are done."""
    b0 = _times(k, g)
    until = _times(k + stop, g)
    place, home = runs.place[r], runs.home[r]
    done = np.zeros(r.size, dtype=bool)
    span_end = until.copy()
    going = np.flatnonzero(runs.in_att[r])
    if going.size:
        rg = r[going]
        nseg, nstart, nlen, ngoing, done_at = runs.progress(rg, until[going])
        fin = ~np.isnan(done_at)
        done[going[fin]] = True
        span_end[going[fin]] = done_at[fin]
        runs.makespan[rg[fin]] = done_at[fin]
        moved = nseg != runs.seg[rg]
        runs.since[rg[moved]] = k[going[moved]] + stop[going[moved]]
        runs.restart[rg[moved]] = False
        runs.seg[rg], runs.att_start[rg], runs.att_len[rg] = nseg, nstart, nlen
        runs.in_att[rg] = ngoing
    hours = span_end - b0
    spot, od, idle = place >= 0, place == ON_DEMAND, place == NOTHING
    runs.spot[r[spot]] += hours[spot]
    runs.cost[r[spot]] += runs.at(runs.price, r[spot], place[spot]) * hours[spot]
    runs.odh[r[od]] += hours[od]
    runs.cost[r[od]] += runs.at(runs.fb, r[od], home[od]) * hours[od]
    runs.wait[r[idle]] += hours[idle]
    runs.cost[r[idle]] += runs.at(runs.od, r[idle], home[idle]) * hours[idle]
    runs.k[r] = k + stop
    return done
