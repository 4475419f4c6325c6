"""The state of a watched job (issue 28): the job model's progress, step by step, as the backtest
keeps it (``traces.md``, "Backtest"; :mod:`deepvm_core.job.backtest_replay`, "At every
boundary"), for one run. The controller (:mod:`deepvm_core.cloud.fleet.watch`) builds the
policy's :class:`~deepvm_core.job.recovery.RecoveryState` from it at every step, and a restarted
controller rebuilds it by folding its ledger (:func:`fold`): the state lives in the ledger.

At each step t (hours since the watch started, a multiple of the interval g):

1. :meth:`JobTracker.advance`: the attempt in progress runs on to t, through any number of
   segments (a segment that ends exactly at t is done, and the next one starts there without a
   restart); the job is done when the last segment ends. With a progress file, the work it
   reports replaces the estimate (:meth:`JobTracker.set_progress`).
2. :meth:`JobTracker.state`: the policy's state (arrays of length 1).
3. :meth:`JobTracker.apply`: the action, with the backtest's rules: a reclaim of the current
   pool while an attempt runs is an interruption (not when the action is on demand); any other
   placement than the current one abandons the attempt; a new attempt begins with R after an
   interruption, an abandoned attempt, a move, and always when going on demand.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from deepvm_core.cloud.fleet.ledger import Action, Done, Ledger, Observation, WatchSetup, step_of
from deepvm_core.job.recovery import NOTHING, ON_DEMAND, TIME_TOLERANCE_HOURS, RecoveryState

_TOL = TIME_TOLERANCE_HOURS


@dataclass
class JobTracker:
    """One job's progress under the job model (mutable: the controller's working state).

    Attributes:
        setup: the job and its prices. seg: the current segment (0 .. K). place: the current
        placement (a pool, ``ON_DEMAND`` or ``NOTHING``). last_run: the last placement an
        attempt started in. in_att: an attempt is in progress. att_start, att_len: its start
        and length (hours, R included). restart: a restart is pending. interruptions: counted
        as the backtest counts them. fell_back: the job went on demand. done_at: when the job
        ended (hours), or ``None``.
    """

    setup: WatchSetup
    seg: int = 0
    place: int = NOTHING
    last_run: int = NOTHING
    in_att: bool = False
    att_start: float = 0.0
    att_len: float = 0.0
    restart: bool = False
    interruptions: int = 0
    fell_back: bool = False
    done_at: float | None = None

    def seglen(self, seg: int) -> float:
        """Hours of segment ``seg``."""
        return self.setup.segment_hours if seg < self.setup.full_segments else \
            self.setup.last_segment_hours

    @property
    def remaining_hours(self) -> float:
        """``rem``: every segment from the current one on, in full."""
        return (self.setup.full_segments - self.seg) * self.setup.segment_hours + \
            self.setup.last_segment_hours

    @property
    def work_done_hours(self) -> float:
        """The segments done (checkpointed), hours."""
        return self.setup.job_hours - self.remaining_hours if self.done_at is None else \
            self.setup.job_hours

    def advance(self, t: float) -> None:
        """Run the attempt in progress on to ``t`` (step 1 of the module docstring)."""
        if self.done_at is not None or not self.in_att:
            return
        while self.att_start + self.att_len <= t + _TOL:
            end = self.att_start + self.att_len
            self.seg += 1
            self.restart = False
            if self.seg > self.setup.full_segments:
                self.seg = self.setup.full_segments
                self.done_at = end
                self.in_att = False
                return
            self.att_start, self.att_len = end, self.seglen(self.seg)
        if self.att_start >= t - _TOL:  # a segment ended at t: the next is placed, not begun
            self.in_att = False

    def set_progress(self, t: float, done_hours: float) -> None:
        """The progress file's word at ``t``: ``done_hours`` of work checkpointed."""
        if done_hours >= self.setup.job_hours - _TOL:
            self.done_at = t
            self.in_att = False
            return
        full = math.floor((done_hours + _TOL) / self.setup.segment_hours)
        self.seg = min(max(full, 0), self.setup.full_segments)

    def state(self, t: float, pools_up: Sequence[bool]) -> RecoveryState:
        """The policy's state at step ``t`` (arrays of length 1)."""
        s = self.setup
        rem = self.remaining_hours
        return RecoveryState(
            elapsed_hours=np.array([t]), work_done_hours=np.array([s.job_hours - rem]),
            remaining_hours=np.array([rem]), segment_hours=np.array([self.seglen(self.seg)]),
            attempt_hours=np.array([t - self.att_start if self.in_att else 0.0]),
            restart_pending=np.array([self.restart]), placement=np.array([self.place]),
            pools_up=np.array([list(pools_up)], dtype=bool),
            deadline_hours=np.array([math.inf if s.deadline_hours is None
                                     else s.deadline_hours]),
            restart_hours=np.array([s.restart_hours]), tick_hours=s.tick_hours)

    def apply(self, t: float, act: int, current_up: bool) -> None:
        """Take action ``act`` at ``t`` (step 3); ``current_up``: the current spot pool still
        runs the workers."""
        cur = self.place
        changing = act != cur
        if self.in_att and cur >= 0 and not current_up and act != ON_DEMAND:
            self.interruptions += 1
        restart = self.restart or (self.in_att and changing)
        going = self.in_att and not changing
        start = act != NOTHING and not going
        if start and ((self.last_run != NOTHING and act != self.last_run)
                      or (act == ON_DEMAND and self.last_run != ON_DEMAND)):
            restart = True
        self.restart = restart
        if start:
            self.last_run = act
        if start and changing:
            self.att_start = t
            self.att_len = (self.setup.restart_hours if restart else 0.0) + self.seglen(self.seg)
        self.in_att = going or start
        self.place = act
        self.fell_back |= act == ON_DEMAND


def step_actions(ledger: Ledger) -> dict[int, tuple[Observation | None, Action | None]]:
    """Per step: its first observation (before any action) and its last action that placed the
    job (``refused`` launches were probes: the pool was down)."""
    steps: dict[int, tuple[Observation | None, Action | None]] = {}
    for r in ledger.records:
        if isinstance(r, Done):
            continue
        k = step_of(ledger, r.time)
        obs, act = steps.get(k, (None, None))
        if isinstance(r, Observation) and obs is None and act is None:
            obs = r
        elif isinstance(r, Action) and r.outcome not in ("refused", "dry-run", "terminated"):
            act = r
        steps[k] = (obs, act)
    return steps


def fold(ledger: Ledger) -> JobTracker:
    """The tracker after every step the ledger records (the state a restarted controller
    resumes from)."""
    tracker = JobTracker(ledger.setup)
    g = ledger.setup.tick_hours
    for k, (obs, act) in sorted(step_actions(ledger).items()):
        t = k * g
        tracker.advance(t)
        if obs is not None and obs.progress_hours is not None:
            tracker.set_progress(t, obs.progress_hours)
        if tracker.done_at is not None:
            break
        if act is not None:
            cur = tracker.place
            up = True
            if cur >= 0 and obs is not None and cur < len(obs.pools_up):
                up = obs.pools_up[cur] is not False
            tracker.apply(t, act.action, up)
    done = ledger.done
    if done is not None and tracker.done_at is None:
        tracker.done_at = ledger.hours(done.time)
    return tracker
