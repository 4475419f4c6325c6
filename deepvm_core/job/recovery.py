"""Recovery policies as step functions (issue 26): the one home of every rule that decides where a
job runs next. Each policy is a pure function :class:`RecoveryState` -> action, called at every
tick boundary (time 0 included); the backtest (:mod:`deepvm_core.job.backtest_replay`) drives
them, and so could a live controller (arrays of length 1) or another simulator.

**State** (:class:`RecoveryState`, numpy arrays with one entry per run, so that the backtest
decides for thousands of start times at once): the elapsed time t (hours, a tick boundary), the
work done (hours of the checkpointed segments) and remaining (``rem``, every segment not yet
done, the current one in full), the hours into the attempt in progress, whether a restart R is
pending, the current placement, which pools are up now, the deadline D, R and the tick g. Hours
and R are those of the *home* cluster: the last spot pool the job ran in (the first before it
ran), which is also the cluster that runs on demand.

**Action** (an int per run): a pool index p >= 0 (spot in pool p, which must be up now),
:data:`ON_DEMAND` (the same cluster with its spot VMs on demand) or :data:`NOTHING` (wait for
the next boundary). Keeping the current placement continues the attempt in progress; any other
action abandons it (its segment starts again from the checkpoint).

**Hint** (with the action, :class:`Decision`): a time before which the policy's answer stays
the same while the run holds the action and its work only moves on, and the pools whose state
the answer depends on (its own pool; every pool while it waits for one). Each policy derives it
from its own rule (the time the greedy rule fires, Uniform Progress's line crossing, the end of
the on-demand segment in progress); a simulator may ask again only there (the backtest does), a
live controller may ignore it.

**Policies** (:data:`POLICIES`):

* ``wait``: the first pool when it is up, else nothing.
* ``failover``: stay in the current pool while it is up; else the first pool of the list that
  is up; else nothing.
* ``deadline`` (the greedy rule of "Can't Be Late", NSDI 2024; ``traces.md``): on demand for
  good once ``D - t < rem + R + g`` (:func:`late`), else ``failover``.
* ``uniform-progress`` (the paper's Uniform Progress): keep the work done on or above the line
  from (0, 0) to (D, job hours). Spot (``failover``'s choice) whenever a pool is up, going back
  to spot from on demand when one returns (a move: it costs R); with no pool up, on demand only
  while the work done is below the line at t, else nothing. Safety margin: the greedy rule
  (:func:`late`) overrides everything, so it never misses a deadline that on demand alone
  meets from the same moment.
* ``slack-reserve`` (ours): the greedy rule first. The slack is ``D - t - rem - R - g`` (the
  greedy rule falls back when it is negative); the reserve is :data:`RESERVE_ATTEMPTS` lost
  attempts, ``2 (R + s)``. With no pool up, it waits while the slack is at least the reserve and
  goes on demand below it (rather than spending the reserve on waiting, as greedy does); with a
  pool up, it runs on spot, and goes back to spot from on demand, but only at the first boundary
  of an on-demand segment that began without a restart (``attempt <= g``, no restart pending),
  so that on-demand work is never thrown away for more than a tick, and only while the slack
  still covers one lost attempt (``R + s``; below, on demand is for good). Greedy spends the whole
  slack waiting and then pays on demand for the rest of the job; Uniform Progress goes on
  demand as soon as it is behind its line and leaves on demand mid-segment, losing the work.

Comparisons of times use :data:`TIME_TOLERANCE_HOURS` (ties at tick boundaries are decided as
exact arithmetic would, never by float noise).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final, Literal, get_args

import numpy as np

from deepvm_core.arrays import BoolArray, FloatArray, IntArray

RecoveryPolicy = Literal["wait", "failover", "deadline", "uniform-progress", "slack-reserve"]
RECOVERY_POLICIES: Final[tuple[RecoveryPolicy, ...]] = get_args(RecoveryPolicy)
#: Policies that need a deadline.
DEADLINE_POLICIES: Final[tuple[RecoveryPolicy, ...]] = ("deadline", "uniform-progress",
                                                         "slack-reserve")
#: Each deadline policy in a few words (the Plan card's offer and ``deepvm plan``'s, issue 26).
DEADLINE_POLICY_WORDS: Final[Mapping[RecoveryPolicy, str]] = {
    "deadline": "spot until the last safe moment, then on demand for good",
    "uniform-progress": "spot whenever it is up, on demand while behind an even pace to the "
                        "deadline",
    "slack-reserve": "spot while the slack covers two lost attempts, on demand below that",
}
#: ``slack-reserve``: the slack it keeps for going back to spot, in lost attempts (R + s).
RESERVE_ATTEMPTS: Final = 2.0
#: Actions besides a pool index: run on demand, or do nothing until the next boundary.
ON_DEMAND: Final = -1
NOTHING: Final = -2
#: Hours within which two times count as equal (a tie at a tick boundary). The float noise of
#: ``k g`` is ~1e-13 h on the longest traces; this stays below the deadline's reporting
#: tolerance (1e-9 h), so a run decided "on time" is reported on time.
TIME_TOLERANCE_HOURS: Final = 1e-10


@dataclass(frozen=True)
class RecoveryState:
    """What a policy sees at a tick boundary; one entry per run (arrays of shape (runs,), except
    ``pools_up``, (runs, pools)).

    Attributes:
        elapsed_hours: t, hours since the run started (a tick boundary).
        work_done_hours: hours of the segments done (checkpointed), home cluster.
        remaining_hours: rem, hours of every segment not yet done, the current one in full.
        segment_hours: s, hours of the current segment (stall included).
        attempt_hours: hours into the attempt in progress (restart included), 0 when none.
        restart_pending: the current attempt began, or the next will begin, with a restart R.
        placement: the current placement: a pool index, :data:`ON_DEMAND` or :data:`NOTHING`.
        pools_up: whether each pool is up in the tick that starts now.
        deadline_hours: D (``inf`` without a deadline).
        restart_hours: R, hours, home cluster.
        tick_hours: g, hours.
    """

    elapsed_hours: FloatArray
    work_done_hours: FloatArray
    remaining_hours: FloatArray
    segment_hours: FloatArray
    attempt_hours: FloatArray
    restart_pending: BoolArray
    placement: IntArray
    pools_up: BoolArray
    deadline_hours: FloatArray
    restart_hours: FloatArray
    tick_hours: float


@dataclass(frozen=True)
class Decision:
    """A policy's answer for each run: the action, and how long it stays the answer (so that a
    simulator need not ask again at every boundary).

    Attributes:
        action: (runs,): a pool index (up now), :data:`ON_DEMAND` or :data:`NOTHING`.
        until_hours: (runs,): the policy gives the same action at every later boundary
            ``t < until_hours`` (``inf``: no limit in time), provided the run takes the action
            and holds it, its work only moves on by running (``rem`` never grows; R and the
            segment hours stay those of the same home cluster) and the pools in ``watch`` stay
            up or down as they are now. A bound: the action may also stay after it.
        watch: (runs, pools): the pools whose state the answer depends on.
    """

    action: IntArray
    until_hours: FloatArray
    watch: BoolArray


Policy = Callable[[RecoveryState], Decision]


def _decision(s: RecoveryState, action: IntArray, until: FloatArray,
              all_pools: BoolArray) -> Decision:
    """``action`` with ``until``, watching its own pool, or every pool where ``all_pools``."""
    one = np.arange(s.pools_up.shape[1])[None, :] == action[:, None]
    return Decision(action=action.astype(np.int64), until_hours=np.asarray(until, dtype=float),
                    watch=np.asarray(one | all_pools[:, None], dtype=bool))


def _slack(s: RecoveryState) -> FloatArray:
    """``D - t - (rem + R + g)``: the greedy rule falls back when it is negative."""
    return np.asarray(s.deadline_hours - s.elapsed_hours
                      - (s.remaining_hours + s.restart_hours + s.tick_hours), dtype=float)


def late(s: RecoveryState) -> BoolArray:
    """The greedy rule: ``D - t < rem + R + g`` (strictly, beyond the tolerance): waiting one more
    tick could make the deadline unreachable on demand."""
    return np.asarray(_slack(s) < -TIME_TOLERANCE_HOURS, dtype=bool)


def _not_late_before(s: RecoveryState) -> FloatArray:
    """:func:`late` stays false at every ``t' < D - rem - R - g`` while ``rem`` does not grow."""
    return np.asarray(s.elapsed_hours + _slack(s), dtype=float)


def _segment_end(s: RecoveryState, action: IntArray) -> FloatArray:
    """A time no later than the end of the on-demand attempt that ``action`` (on demand) holds:
    the work done and ``rem`` change no earlier. Already on demand: the attempt's own end (it
    began ``attempt_hours`` ago, with R when a restart is pending); going on demand now: one
    segment from now at least."""
    going_on = s.placement == ON_DEMAND
    end = np.where(going_on, s.elapsed_hours - s.attempt_hours
                   + np.where(s.restart_pending, s.restart_hours, 0.0) + s.segment_hours,
                   s.elapsed_hours + s.segment_hours)
    return np.asarray(np.where(action == ON_DEMAND, end - 2 * TIME_TOLERANCE_HOURS, np.inf),
                      dtype=float)


def _first_up(s: RecoveryState) -> IntArray:
    up = s.pools_up
    first = np.argmax(up, axis=1)  # 0 when none is up
    return np.where(up[np.arange(first.size), first], first, NOTHING).astype(np.int64)


def wait(s: RecoveryState) -> Decision:
    """The first pool when it is up, else nothing (it depends on the first pool only)."""
    action = np.where(s.pools_up[:, 0], 0, NOTHING).astype(np.int64)
    watch = np.zeros(s.pools_up.shape, dtype=bool)
    watch[:, 0] = True
    return Decision(action=action, until_hours=np.full(action.size, np.inf), watch=watch)


def _failover(s: RecoveryState) -> IntArray:
    p = s.placement
    rows = np.arange(p.size)
    stay = (p >= 0) & s.pools_up[rows, np.maximum(p, 0)]
    return np.where(stay, p, _first_up(s)).astype(np.int64)


def failover(s: RecoveryState) -> Decision:
    """The current pool while it is up, else the first pool up, else nothing (in a pool it
    depends on that pool only; waiting, on every pool)."""
    action = _failover(s)
    return _decision(s, action, np.full(action.size, np.inf), action == NOTHING)


def greedy(s: RecoveryState) -> Decision:
    """``deadline``: on demand for good once :func:`late`, else :func:`failover`."""
    od = (s.placement == ON_DEMAND) | late(s)
    action = np.where(od, ON_DEMAND, _failover(s)).astype(np.int64)
    return _decision(s, action, np.where(od, np.inf, _not_late_before(s)), action == NOTHING)


def behind_line(s: RecoveryState) -> BoolArray:
    """Uniform Progress's line: the work done is below ``job t / D`` (job = done + remaining)."""
    job = s.work_done_hours + s.remaining_hours
    with np.errstate(invalid="ignore"):
        line = job * s.elapsed_hours / s.deadline_hours
    return np.asarray(s.work_done_hours < line - TIME_TOLERANCE_HOURS, dtype=bool)


def _on_line_before(s: RecoveryState) -> FloatArray:
    """:func:`behind_line` stays false at every ``t' < done D / job`` while the work done does
    not change (the line only rises)."""
    job = s.work_done_hours + s.remaining_hours
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(s.work_done_hours * s.deadline_hours / job, dtype=float)


def uniform_progress(s: RecoveryState) -> Decision:
    """Uniform Progress (module docstring): the greedy rule first, then spot whenever a pool is
    up, then on demand only while behind the line, else nothing. Its answer changes when the
    greedy rule fires, when the line overtakes the work done (waiting), when a segment ends (on
    demand: the work done moves) or a pool changes."""
    spot = _failover(s)
    is_late = late(s)
    od = is_late | ((spot == NOTHING) & behind_line(s))
    action = np.where(od, ON_DEMAND, spot).astype(np.int64)
    until = np.where(action == NOTHING, np.minimum(_not_late_before(s), _on_line_before(s)),
                     np.where(od, _segment_end(s, action), _not_late_before(s)))
    return _decision(s, action, until, (action == NOTHING) | ((action == ON_DEMAND) & ~is_late))


def slack_reserve(s: RecoveryState) -> Decision:
    """``slack-reserve`` (module docstring). Its answer changes when the greedy rule fires, when
    the slack falls below the reserve (waiting), when a segment ends (on demand) or a pool
    changes."""
    slack = _slack(s)
    reserve = RESERVE_ATTEMPTS * (s.restart_hours + s.segment_hours)
    short = slack < reserve
    spot = _failover(s)
    on_od = s.placement == ON_DEMAND
    tight = slack < s.restart_hours + s.segment_hours  # cannot afford one lost attempt
    mid_segment = on_od & ((s.attempt_hours > s.tick_hours + TIME_TOLERANCE_HOURS)
                           | s.restart_pending | tight)
    is_late = late(s)
    od = is_late | ((spot == NOTHING) & (short | mid_segment)) | ((spot != NOTHING)
                                                                   & mid_segment)
    action = np.where(od, ON_DEMAND, spot).astype(np.int64)
    not_short = s.elapsed_hours + slack - reserve - TIME_TOLERANCE_HOURS
    until = np.where(action == NOTHING, np.minimum(_not_late_before(s), not_short),
                     np.where(od, _segment_end(s, action), _not_late_before(s)))
    return _decision(s, action, until, (action == NOTHING) | ((action == ON_DEMAND) & ~is_late))


#: Every policy by name (the CLI's ``--policy`` / ``--recovery`` choices).
POLICIES: Final[Mapping[RecoveryPolicy, Policy]] = {
    "wait": wait, "failover": failover, "deadline": greedy,
    "uniform-progress": uniform_progress, "slack-reserve": slack_reserve}
