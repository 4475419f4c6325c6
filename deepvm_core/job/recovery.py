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


Policy = Callable[[RecoveryState], IntArray]


def late(s: RecoveryState) -> BoolArray:
    """The greedy rule: ``D - t < rem + R + g`` (strictly, beyond the tolerance): waiting one more
    tick could make the deadline unreachable on demand."""
    slack = s.deadline_hours - s.elapsed_hours - (s.remaining_hours + s.restart_hours
                                                  + s.tick_hours)
    return np.asarray(slack < -TIME_TOLERANCE_HOURS, dtype=bool)


def _first_up(s: RecoveryState) -> IntArray:
    up = s.pools_up
    return np.where(up.any(axis=1), np.argmax(up, axis=1), NOTHING).astype(np.int64)


def wait(s: RecoveryState) -> IntArray:
    """The first pool when it is up, else nothing."""
    return np.where(s.pools_up[:, 0], 0, NOTHING).astype(np.int64)


def failover(s: RecoveryState) -> IntArray:
    """The current pool while it is up, else the first pool up, else nothing."""
    p = s.placement
    rows = np.arange(p.size)
    stay = (p >= 0) & s.pools_up[rows, np.maximum(p, 0)]
    return np.where(stay, p, _first_up(s)).astype(np.int64)


def greedy(s: RecoveryState) -> IntArray:
    """``deadline``: on demand for good once :func:`late`, else :func:`failover`."""
    od = (s.placement == ON_DEMAND) | late(s)
    return np.where(od, ON_DEMAND, failover(s)).astype(np.int64)


def behind_line(s: RecoveryState) -> BoolArray:
    """Uniform Progress's line: the work done is below ``job t / D`` (job = done + remaining)."""
    job = s.work_done_hours + s.remaining_hours
    with np.errstate(invalid="ignore"):
        line = job * s.elapsed_hours / s.deadline_hours
    return np.asarray(s.work_done_hours < line - TIME_TOLERANCE_HOURS, dtype=bool)


def uniform_progress(s: RecoveryState) -> IntArray:
    """Uniform Progress (module docstring): the greedy rule first, then spot whenever a pool is
    up, then on demand only while behind the line, else nothing."""
    spot = failover(s)
    od = late(s) | ((spot == NOTHING) & behind_line(s))
    return np.where(od, ON_DEMAND, spot).astype(np.int64)


def slack_reserve(s: RecoveryState) -> IntArray:
    """``slack-reserve`` (module docstring)."""
    slack = s.deadline_hours - s.elapsed_hours - (s.remaining_hours + s.restart_hours
                                                  + s.tick_hours)
    short = slack < RESERVE_ATTEMPTS * (s.restart_hours + s.segment_hours)
    spot = failover(s)
    on_od = s.placement == ON_DEMAND
    tight = slack < s.restart_hours + s.segment_hours  # cannot afford one lost attempt
    mid_segment = on_od & ((s.attempt_hours > s.tick_hours + TIME_TOLERANCE_HOURS)
                           | s.restart_pending | tight)
    od = late(s) | ((spot == NOTHING) & (short | mid_segment)) | ((spot != NOTHING)
                                                                  & mid_segment)
    return np.where(od, ON_DEMAND, spot).astype(np.int64)


#: Policies whose action, along boundaries where only the time moves on (the same pools up, the
#: same segments done, the same placement and restart), changes at most once: the backtest may
#: then call them at a stretch's ends and bisect instead of calling them at every boundary
#: (a hypothesis test checks the property for each).
MONOTONE_IN_TIME: Final[frozenset[RecoveryPolicy]] = frozenset(
    {"wait", "failover", "deadline", "uniform-progress", "slack-reserve"})

#: Every policy by name (the CLI's ``--policy`` / ``--recovery`` choices).
POLICIES: Final[Mapping[RecoveryPolicy, Policy]] = {
    "wait": wait, "failover": failover, "deadline": greedy,
    "uniform-progress": uniform_progress, "slack-reserve": slack_reserve}
