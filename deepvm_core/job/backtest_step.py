"""One run of the backtest, stepped from outside, boundary by boundary: the controller of
``deepvm watch`` (issue 28) moves its job with it, so that the stepping arithmetic the backtest
replays is the one that acts. There is no second copy of the rules: :class:`RunStepper` keeps a
:class:`~deepvm_core.job.backtest_state.RunState` of one run and goes through the driver's own
functions (:func:`~deepvm_core.job.backtest_replay.policy_state`,
:func:`~deepvm_core.job.backtest_replay.apply_actions`,
:func:`~deepvm_core.job.backtest_replay.advance_runs`; the rules are the driver's module
docstring, "At every boundary"). Where the backtest reads a trace, the caller says which pools
are up; where the backtest calls the policy, the caller does and says what it did.

At each boundary k (time ``k g``): :meth:`RunStepper.advance` (step 1: the attempt in progress
runs on to the boundary, through any number of segments; the job may end on the way), then
:meth:`RunStepper.state` (step 2, what the policy sees), then :meth:`RunStepper.apply` (steps 3
and 4). Outside the backtest's rules, :meth:`RunStepper.report_work` takes the job's own word on
the work checkpointed (a progress file) in place of the model's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from deepvm_core.job.backtest import BacktestJob
from deepvm_core.job.backtest_replay import advance_runs, apply_actions, policy_state
from deepvm_core.job.backtest_state import RunState
from deepvm_core.job.recovery import TIME_TOLERANCE_HOURS, RecoveryState

_TOL = TIME_TOLERANCE_HOURS


class RunStepper:
    """One run of ``job`` (one configuration), started at boundary 0, on ticks of
    ``tick_hours`` (g), with a deadline of ``deadline_hours`` (``None``: none).

    Mutable: the caller's working state. Its figures (segment, placement, interruptions, ...)
    are those the backtest keeps for a run; :attr:`done_at` is the job's end (hours) once it
    ended.

    Raises:
        ValueError: ``job`` has more than one configuration, or g is not > 0.
    """

    def __init__(self, job: BacktestJob, tick_hours: float,
                 deadline_hours: float | None = None) -> None:
        if job.configurations != 1:
            raise ValueError(f"a stepper runs one configuration, not {job.configurations}")
        if not tick_hours > 0:
            raise ValueError(f"tick_hours = {tick_hours!r} must be > 0")
        self.job = job
        self.tick_hours = float(tick_hours)
        self.runs = RunState(job, np.zeros(1, dtype=np.int64))
        self._rows = np.arange(1)
        self._deadline = np.array([math.inf if deadline_hours is None
                                   else float(deadline_hours)])
        #: When the job ended, hours (``None`` while it runs).
        self.done_at: float | None = None

    # -- the run's figures

    @property
    def boundary(self) -> int:
        """The boundary the run is at."""
        return int(self.runs.k[0])

    @property
    def segment(self) -> int:
        """The current segment (0 .. K; K once the job ended)."""
        return min(int(self.runs.seg[0]), int(self.runs.kfull[0]))

    @property
    def placement(self) -> int:
        """A pool, ``ON_DEMAND`` or ``NOTHING``."""
        return int(self.runs.place[0])

    @property
    def last_run(self) -> int:
        """The placement the last attempt started in (``NOTHING`` before the first)."""
        return int(self.runs.last_run[0])

    @property
    def interruptions(self) -> int:
        """Attempts lost to a reclaim, counted as the backtest counts them."""
        return int(self.runs.inter[0])

    @property
    def fell_back(self) -> bool:
        """The run went on demand."""
        return bool(self.runs.fell[0])

    @property
    def job_hours(self) -> float:
        """Every segment's hours (home cluster)."""
        return float(self.runs.total[0])

    @property
    def remaining_hours(self) -> float:
        """``rem``: every segment from the current one on, in full (0 once the job ended)."""
        return 0.0 if self.done_at is not None else float(self.runs.remaining()[0])

    @property
    def work_done_hours(self) -> float:
        """Hours of the segments done (checkpointed)."""
        return self.job_hours - self.remaining_hours

    def segment_hours(self, segment: int) -> float:
        """Hours of segment ``segment`` (home cluster)."""
        return float(self.runs.seglen(np.array([segment]))[0])

    # -- a boundary

    def advance(self, k: int) -> None:
        """Step 1 at boundary ``k``: the attempt in progress runs on to it (a segment that ends
        exactly there is done and the next one is placed, not begun); the job may end on the
        way (:attr:`done_at`). Nothing when the run is already at or past ``k``."""
        stop = k - self.boundary
        if self.done_at is not None or stop <= 0:
            return
        done, at = advance_runs(self.runs, self.runs.k.copy(), np.array([stop]),
                                self.tick_hours)
        if done[0]:
            self.end(float(at[0]))

    def state(self, pools_up: Sequence[bool]) -> RecoveryState:
        """Step 2 at the current boundary: what the policy sees (arrays of length 1) with the
        pools ``pools_up``. Read it before :meth:`apply`."""
        up = np.array([list(pools_up)], dtype=bool)
        t = np.array([self.boundary * self.tick_hours])
        return policy_state(self.runs, t, up, self._deadline, self.tick_hours)

    def apply(self, action: int, current_up: bool = True) -> None:
        """Steps 3 and 4 at the current boundary: the run takes ``action`` (a pool,
        ``ON_DEMAND`` or ``NOTHING``); ``current_up``: the pool it runs in (if any) is still
        up (else its attempt was interrupted)."""
        runs = self.runs
        up = np.ones((1, self.job.pools), dtype=bool)
        if self.placement >= 0:
            up[0, self.placement] = current_up
        t = np.array([self.boundary * self.tick_hours])
        apply_actions(runs, self._rows, np.array([action], dtype=np.int64), up, t,
                      runs.seglen(runs.seg))

    # -- the job's own word

    def report_work(self, work_done_hours: float) -> None:
        """The job says ``work_done_hours`` of work is checkpointed (at the current boundary):
        the current segment becomes the first not done (the attempt in progress, if any, now
        runs that one and keeps its start and length); all of it: the job ends here."""
        runs = self.runs
        if work_done_hours >= self.job_hours - _TOL:
            self.end(self.boundary * self.tick_hours)
            return
        s = float(runs.s[0])
        seg = min(max(math.floor((work_done_hours + _TOL) / s), 0), int(runs.kfull[0]))
        if seg != int(runs.seg[0]):
            runs.seg[0] = seg
            # the chain of attempts goes on from the attempt in progress (or the next one
            # placed), now at segment ``seg``
            runs.chain_start[0], runs.chain_len[0] = runs.att_start[0], runs.att_len[0]
            runs.chain_seg[0] = seg

    def end(self, at: float) -> None:
        """The job ended at ``at`` (hours): no attempt from now on."""
        self.done_at = at
        self.runs.in_att[0] = False
