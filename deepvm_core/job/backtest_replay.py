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

Steps 2 to 4 and the progress between boundaries are :func:`policy_state`,
:func:`apply_actions` and :func:`advance_runs`; one run stepped from outside (the controller of
``deepvm watch``) goes through the same three (:mod:`deepvm_core.job.backtest_step`).

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
where its job ends, running through any number of segments on the way (:meth:`RunState.progress`);
after a move to a pool whose cluster has other hours or R (the hint assumed the old ones), one
boundary. The hint is a bound computed by the rule's own function, next to the rule; the runs are
exactly those of a loop asking at every boundary (``_EVERY_BOUNDARY``, which the tests also run).

**Bounds.** A run whose segments never fit (no segment done for ``2 (pools + 1) L + 2`` ticks,
plus ``D / g`` with a deadline) is refused with an error, so every loop here ends within the
trace length times the job. Under ``wait`` and ``failover`` (which never go on demand) a run is
refused as soon as it needs an attempt after a restart (R plus its segment) longer than any pool
it may use ever stays up (exact: such an attempt starts at a boundary), so a trace that flips
every tick costs rounds in proportion to the job, not to the trace's length.

**Work shared** (issue 27): configurations whose segments, R and spot VMs are equal have the same
runs whatever their prices, so they are replayed once, their hours kept per kind of placement
and home pool and priced per configuration; and :func:`backtest_markets` replays several markets
(the scenarios of a band) in one loop. A :class:`~deepvm_core.job.backtest.TimeBudget` stops a
replay that runs too long.

**Why one module (over 400 lines).** The replay loop and its steps (the policy's state, its
actions, the advance to the next boundary, where each run stops) are one algorithm over one
set of working arrays, read top to bottom with the rules above; the stepper
(:mod:`deepvm_core.job.backtest_step`) and the state (:mod:`deepvm_core.job.backtest_state`)
already live apart.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from deepvm_core.arrays import BoolArray, FloatArray, IntArray
from deepvm_core.job.backtest import (
    DEFAULT_STARTS,
    MAX_STARTS,
    BacktestBudgetError,
    BacktestJob,
    TimeBudget,
)
from deepvm_core.job.backtest_runs import BacktestRuns
from deepvm_core.job.backtest_state import KINDS, RunState, boundary_hours
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
from deepvm_core.market.trace_stats import up_run_lengths, up_threshold

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
             starts: int = DEFAULT_STARTS, budget: TimeBudget | None = None) -> BacktestRuns:
    """Replay ``job`` on the pools whose traces are ``traces`` (failover order) from ``starts``
    start times (rules in the module docstring). Deterministic.

    Raises:
        TraceError: a bad policy, deadline or start count; traces of different lengths or
            tick lengths; a cluster larger than a count trace's largest count; a policy that
            can never run (``wait`` on a pool that is never up, ``failover`` with no pool
            ever up) or a job that never finishes on these pools.
        BacktestBudgetError: ``budget`` spent before the replay ended.
    """
    return backtest_markets([traces], job, policy=policy, deadline_hours=deadline_hours,
                            starts=starts, budget=budget)


def backtest_markets(markets: Sequence[Sequence[SpotTrace]], job: BacktestJob, *,
                     policy: RecoveryPolicy = "failover", deadline_hours: float | None = None,
                     starts: int = DEFAULT_STARTS, never_finishing: bool = False,
                     budget: TimeBudget | None = None) -> BacktestRuns:
    """:func:`backtest` of ``job`` on several markets at once (each a list of traces, one per
    pool, all of one length and tick): one replay whose runs are (configurations, markets x
    S), market by market, so that the rounds are those of the longest market, not their sum.
    With ``never_finishing``, a run that never finishes (no pool it may use is ever up, or an
    attempt after an interruption never fits in the time its pools stay up) gets an infinite
    makespan and cost instead of an error.

    **Configurations whose runs are the same are replayed once**: the runs depend on the
    segments, R and spot VMs, never on the prices; each run's hours are kept per kind of
    placement and home pool, and every configuration's cost is those hours at its own prices.

    Raises:
        as :func:`backtest`.
    """
    if not markets:
        raise TraceError("pools", "a backtest needs at least one market")
    for traces in markets:
        _check_inputs(list(traces), job, policy, deadline_hours, starts)
    if any(t.ticks != markets[0][0].ticks or t.gap_seconds != markets[0][0].gap_seconds
           for traces in markets for t in traces):
        raise TraceError("pools", "markets replayed together need traces of one length and tick")
    ticks = markets[0][0].ticks
    first = start_ticks(ticks, starts)
    width = len(markets) * first.size
    key = np.column_stack((job.full_segments, job.full_segment_hours, job.last_segment_hours,
                           job.restart_hours, job.spot_vms))
    _, reps, same = np.unique(key, axis=0, return_index=True, return_inverse=True)
    same = same.ravel()
    unique = job.rows(reps)
    levels = np.ones((unique.configurations, len(markets), job.pools), dtype=np.int64)
    for m, traces in enumerate(markets):
        for col, trace in enumerate(traces):
            if trace.max_count > 1:
                need = unique.spot_vms[:, col]
                if np.any(need > trace.max_count):
                    up_threshold(trace, int(need.max()))  # raises, naming the trace
                levels[:, m, col] = need
    flat_levels = levels.reshape(unique.configurations, -1)
    groups, which = np.unique(flat_levels, axis=0, return_inverse=True)
    outs = np.zeros((4, unique.configurations, width))  # makespan, spot, wait, on demand
    by = np.zeros((KINDS * job.pools, unique.configurations, width))
    inter = np.zeros((unique.configurations, width), dtype=np.int64)
    fell = np.zeros((unique.configurations, width), dtype=bool)
    never = np.zeros((unique.configurations, width), dtype=bool)
    for gi, level in enumerate(groups):
        rows = np.flatnonzero(which.ravel() == gi)
        level = level.reshape(len(markets), job.pools)
        up = np.stack([np.stack([t.counts >= lv for t, lv in zip(traces, lvs, strict=True)])
                       for traces, lvs in zip(markets, level, strict=True)])
        part = _replay(up, markets[0][0].gap_hours, unique.rows(rows), policy, deadline_hours,
                       first, [t.source for t in markets[0]], never_finishing, budget)
        outs[:, rows], by[:, rows] = part.outs, part.by
        inter[rows], fell[rows], never[rows] = part.inter, part.fell, part.never
    prices = np.concatenate((job.price_usd_per_hour, job.fallback_usd_per_hour,
                             job.on_demand_usd_per_hour), axis=1)  # kind-major, as ``by``
    cost = np.einsum("rj,jrs->rs", prices, by[:, same])
    lost = never[same]
    cost[lost] = np.inf
    return BacktestRuns(policy=policy, deadline_hours=None if deadline_hours is None
                        else float(deadline_hours), start_ticks=np.tile(first, len(markets)),
                        makespan_hours=outs[0][same], cost_usd=cost,
                        spot_hours=outs[1][same], wait_hours=outs[2][same],
                        on_demand_hours=outs[3][same], interruptions=inter[same],
                        fell_back=fell[same])


@dataclass(frozen=True)
class _Part:
    """The runs of one replay (configurations, markets x starts): ``outs`` makespan, spot,
    wait and on-demand hours; ``by`` hours per (kind, home pool) first; interruptions, fell
    back, never finished."""

    outs: FloatArray
    by: FloatArray
    inter: IntArray
    fell: BoolArray
    never: BoolArray


def _longest_up_ticks(up: BoolArray) -> float:
    """The longest run of up ticks, the trace read in a loop; inf when always up."""
    if up.all():
        return math.inf
    if not up.any():
        return 0.0
    return float(up_run_lengths(np.concatenate((up, up))).max())


def _never_fits(up: BoolArray, g: float, job: BacktestJob, policy: RecoveryPolicy,
                ) -> tuple[BoolArray, BoolArray]:
    """Per configuration and market, whether an attempt after an interruption (R plus a full
    segment; R plus the last segment) never fits in the time any pool the policy may use
    stays up: a run that needs one then never finishes (exact: an attempt after a restart
    starts at a boundary and needs that much up time in one pool). All False for the
    policies that go on demand."""
    markets, pools, _ = up.shape
    shape = (job.configurations, markets)
    if policy in DEADLINE_POLICIES:
        return np.zeros(shape, dtype=bool), np.zeros(shape, dtype=bool)
    used = 1 if policy == "wait" else pools
    longest = np.array([[_longest_up_ticks(up[m, p]) * g for p in range(used)]
                        for m in range(markets)])  # (markets, used)
    reach = longest[None, :, :] + _TOL
    full = (job.restart_hours + job.full_segment_hours)[:, None, :used]
    last = (job.restart_hours + job.last_segment_hours)[:, None, :used]
    return (np.asarray(~(full <= reach).any(axis=2), dtype=bool),
            np.asarray(~(last <= reach).any(axis=2), dtype=bool))


def _replay(up: BoolArray, g: float, job: BacktestJob, policy: RecoveryPolicy,
            deadline: float | None, first: IntArray, sources: list[str],
            never_finishing: bool = False, budget: TimeBudget | None = None) -> _Part:
    """The runs of ``job`` (configurations x markets x starts) on pools ``up`` (markets x
    pools x ticks)."""
    markets, pools, ticks = up.shape
    decide = POLICIES[policy]
    never_up: BoolArray = np.zeros(markets, dtype=bool)
    if policy == "wait":
        never_up = np.asarray(~up[:, 0].any(axis=1), dtype=bool)
        if never_up.any() and not never_finishing:
            raise TraceError(sources[0], "the pool is never up for this cluster: with the wait "
                                         "policy the job never runs")
    if policy == "failover":
        never_up = np.asarray(~up.any(axis=(1, 2)), dtype=bool)
        if never_up.any() and not never_finishing:
            raise TraceError("pools", "no pool is ever up for this cluster: the job never runs")
    never_text = (f"under the {policy} policy the job never finishes on these pools: a segment "
                  "plus its restart never fits in the time the pools stay up")
    # per pool and market x ticks + trace tick k: ticks from k to the next tick where the
    # pool's state differs
    flip_next = np.stack([np.concatenate([
        _ticks_to_next(np.asarray(u != np.roll(u, -1), dtype=bool)) + 1 for u in up[:, p]])
        for p in range(pools)])
    up_at = up.transpose(0, 2, 1).reshape(markets * ticks, pools)
    never_full, never_last = _never_fits(up, g, job, policy)
    runs = RunState(job, first, markets)
    deadlines = np.full(runs.size, math.inf if deadline is None else float(deadline))
    if never_up.any():
        gone = never_up[runs.market]
        runs.finish(gone, np.zeros(runs.size), never=True)
    stuck_after = 2 * (pools + 1) * ticks + 2 + (
        0 if deadline is None else math.ceil(deadline / g) + 1)
    longest = float(np.max(job.full_segments[:, None] * job.full_segment_hours
                           + job.last_segment_hours + job.restart_hours))
    bound = (int(job.full_segments.max()) + 1) * (stuck_after + 1) + math.ceil(longest / g) + 2
    rounds = 0
    while runs.size > runs.ended:
        rounds += 1
        if rounds > bound:  # unreachable: every round moves every run on by a boundary
            raise RuntimeError(f"backtest: more than {bound} rounds")
        if budget is not None and budget.spent():
            raise BacktestBudgetError(budget.seconds, (
                f"The backtest of {job.configurations:,} configuration(s) x "
                f"{markets * first.size:,} start(s) on {pools} pool(s) of {ticks:,} ticks "
                f"({policy}), at round {rounds:,} with {runs.size - runs.ended:,} runs to go,"))
        n = runs.size
        rows = np.arange(n)
        k = runs.k.copy()
        at = runs.market * ticks + (runs.start + k) % ticks
        up_now = up_at[at]
        t = boundary_hours(k, g)
        home = runs.home.copy()
        seglen = runs.seglen(runs.seg)
        dec = decide(policy_state(runs, t, up_now, deadlines[:n], g))
        # (views of the working arrays: the state is read here only, before they change)
        act = dec.action if not runs.ended else np.where(runs.live, dec.action, NOTHING)
        bad = (act < NOTHING) | (act >= pools) | (
            (act >= 0) & ~up_now[rows, np.minimum(np.maximum(act, 0), pools - 1)])
        if bad.any():
            raise TraceError("policy", f"the {policy} policy chose {int(act[bad][0])}, not a "
                                       "pool that is up, on demand or nothing")
        apply_actions(runs, rows, act, up_now, t, seglen)
        if _EVERY_BOUNDARY:
            stop = np.ones(n, dtype=np.int64)
        else:
            stop = _stop(runs, k, at, home, dec, flip_next, g, ticks)
        done, end = advance_runs(runs, k, stop, g)
        if runs.ended:
            done &= runs.live
        if done.any():
            runs.finish(done, end)
        stuck = (((runs.k - runs.since) > stuck_after) | (runs.restart & np.where(
            runs.seg < runs.kfull, never_full[runs.conf, runs.market],
            never_last[runs.conf, runs.market]))) & runs.live
        if stuck.any():
            if not never_finishing:
                raise TraceError("pools", never_text)
            runs.finish(stuck, boundary_hours(runs.k, g), never=True)
    shape = (job.configurations, markets * first.size)
    return _Part(runs.out_floats.reshape((4, *shape)),
                 runs.out_by.reshape((KINDS * pools, *shape)),
                 runs.out_inter.reshape(shape), runs.out_fell.reshape(shape),
                 runs.out_never.reshape(shape))


def policy_state(runs: RunState, t: FloatArray, up_now: BoolArray, deadlines: FloatArray,
                 g: float) -> RecoveryState:
    """Step 2 at a boundary (module docstring): what the policy sees of every run at ``t``
    (hours), its pools ``up_now`` (runs, pools) and deadlines ``deadlines`` (``inf``: none).
    Some of its arrays are views of the working arrays: read it before they change."""
    rem = runs.remaining()
    return RecoveryState(
        elapsed_hours=t, work_done_hours=runs.total - rem, remaining_hours=rem,
        segment_hours=runs.seglen(runs.seg),
        attempt_hours=np.where(runs.in_att, t - runs.att_start, 0.0),
        restart_pending=runs.restart, placement=runs.place, pools_up=up_now,
        deadline_hours=deadlines, restart_hours=runs.rr, tick_hours=g)


def apply_actions(runs: RunState, rows: IntArray, act: IntArray, up_now: BoolArray,
                  t: FloatArray, seglen: FloatArray) -> None:
    """Steps 3 and 4 at a boundary (module docstring) for every run and its action: ``rows``
    are ``arange(runs.size)``, ``up_now`` (runs, pools) the pools now, ``t`` the boundary in
    hours and ``seglen`` :meth:`RunState.seglen` of the current segments (before the action)."""
    cur, in_att = runs.place, runs.in_att
    changing = act != cur
    cur_down = (cur >= 0) & ~up_now[rows, np.maximum(cur, 0)]
    runs.inter += in_att & cur_down & (act != ON_DEMAND)
    restart = runs.restart | (in_att & changing)
    going = in_att & ~changing
    start = (act != NOTHING) & ~going
    lr = runs.last_run
    restart |= start & (((lr != NOTHING) & (act != lr))
                        | ((act == ON_DEMAND) & (lr != ON_DEMAND)))
    runs.restart[:] = restart
    closing = np.flatnonzero(changing)
    if closing.size:
        runs.bill(closing, t[closing])
    moved = np.flatnonzero(start & (act >= 0) & (act != runs.home))
    if moved.size:
        runs.set_home(moved, act[moved])
        seglen = runs.seglen(runs.seg)
    np.copyto(runs.last_run, act, where=start)
    # a run that keeps its placement after an attempt ended exactly here goes on with its chain
    # (the next attempt, without a restart, is already placed there); any other starts one
    fresh = start & changing
    np.copyto(runs.att_start, t, where=fresh)
    np.copyto(runs.att_len, np.where(restart, runs.rr, 0.0) + seglen, where=fresh)
    np.copyto(runs.chain_start, runs.att_start, where=fresh)
    np.copyto(runs.chain_len, runs.att_len, where=fresh)
    np.copyto(runs.chain_seg, runs.seg, where=fresh)
    runs.in_att[:] = going | start
    runs.place[:] = act
    runs.fell |= act == ON_DEMAND


def _stop(runs: RunState, k: IntArray, where: IntArray, home: IntArray, dec: Decision,
          flip_next: FloatArray, g: float, ticks: int) -> IntArray:
    """Boundaries each run moves on from ``k`` (>= 1) before the policy is asked again: to the
    first boundary ``t >= until_hours`` of its decision, where a pool it watches (or its own
    pool) changes, or where its job ends; at the next boundary after a move to a pool whose
    cluster's hours or R differ from the home cluster's (the decision assumed the old ones)."""
    until = dec.until_hours
    if np.isinf(until).all():
        stop = np.full(k.size, np.inf)
    else:
        with np.errstate(invalid="ignore"):
            c = np.ceil(until / g)  # the least boundary at or after ``until``, float-corrected
            at = np.where((c - 1) * g >= until, c - 1, np.where(c * g >= until, c, c + 1))
        stop = np.fmax(at - k, 1)  # NaN: the next boundary
    act = dec.action
    flips = flip_next[:, where]  # ``where``: market x ticks + the trace tick
    for pool in range(runs.pools):  # (a loop: numpy's min over a short last axis is slow)
        watched = dec.watch[:, pool] | (act == pool)
        stop = np.minimum(stop, np.where(watched, flips[pool], np.inf))
    if not runs.all_same:
        moved = (act >= 0) & (act != home) & ~runs.same_pools[runs.conf]
        stop[moved] = 1
    open_ = np.isinf(stop)
    if open_.any():
        left = runs.kfull - runs.chain_seg - 1  # full segments after the chain's first
        c1 = runs.chain_start + runs.chain_len
        end = np.where(left < 0, c1, c1 + np.maximum(left, 0) * runs.s + runs.sl)
        stop = np.where(open_, np.where(runs.in_att, np.maximum(np.ceil((end - _TOL) / g) - k,
                                                                1), ticks), stop)
    return np.asarray(stop, dtype=np.int64)


def advance_runs(runs: RunState, k: IntArray, stop: IntArray,
                 g: float) -> tuple[BoolArray, FloatArray]:
    """Every run keeps its action from boundary ``k`` (a copy of ``runs.k``) to ``k + stop``
    (or its job's end): its progress (billing is per placement, :meth:`RunState.bill`).
    Returns which runs are done, and when (hours; for the others ``(k + stop) g``)."""
    until = boundary_hours(k + stop, g)
    going = runs.in_att.copy()
    span_end = until
    done = np.zeros(k.size, dtype=bool)
    if going.any():
        with np.errstate(invalid="ignore"):
            nseg, nstart, nlen, ngoing, done_at = runs.progress(until)
        done = going & ~np.isnan(done_at)
        span_end = np.where(done, done_at, until)
        moved = going & (nseg != runs.seg)
        np.copyto(runs.since, k + stop, where=moved)
        runs.restart &= ~moved
        np.copyto(runs.seg, nseg, where=going)
        np.copyto(runs.att_start, nstart, where=going)
        np.copyto(runs.att_len, nlen, where=going)
        np.copyto(runs.in_att, ngoing, where=going)
    runs.k += stop
    return done, span_end
