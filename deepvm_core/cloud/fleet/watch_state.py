"""The state of a watched job (issue 28): the job model's progress, step by step, as the backtest
keeps it for one run. The stepping is the backtest's own
(:class:`~deepvm_core.job.backtest_step.RunStepper`, which goes through the functions the
backtest's driver replays with: ``traces.md``, "Backtest";
:mod:`deepvm_core.job.backtest_replay`, "At every boundary"); :class:`JobTracker` only puts it
in the controller's terms (a :class:`~deepvm_core.cloud.fleet.ledger.WatchSetup`, times in
hours). The controller (:mod:`deepvm_core.cloud.fleet.watch`) builds the policy's
:class:`~deepvm_core.job.recovery.RecoveryState` from it at every step, and a restarted
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

from collections.abc import Sequence

from deepvm_core.cloud.fleet.ledger import Action, Done, Ledger, Observation, WatchSetup, step_of
from deepvm_core.job.backtest_step import RunStepper
from deepvm_core.job.recovery import RecoveryState


class JobTracker:
    """One job's progress under the job model (mutable: the controller's working state): the
    backtest's :class:`~deepvm_core.job.backtest_step.RunStepper` of ``setup``'s job, stepped at
    times ``t`` (hours, multiples of the interval).

    Attributes:
        setup: the job and its pools.
        stepper: the run; its figures (segment, placement, last run, interruptions, fell back,
            done at, work done) are read from it, the one home of the stepping.
    """

    def __init__(self, setup: WatchSetup) -> None:
        self.setup = setup
        self.stepper = RunStepper(setup.backtest_job(), setup.tick_hours, setup.deadline_hours)

    def _boundary(self, t: float) -> int:
        return round(t / self.setup.tick_hours)

    def advance(self, t: float) -> None:
        """Run the attempt in progress on to ``t`` (step 1 of the module docstring)."""
        self.stepper.advance(self._boundary(t))

    def set_progress(self, t: float, done_hours: float) -> None:
        """The progress file's word at ``t`` (after :meth:`advance` to ``t``): ``done_hours``
        of work checkpointed."""
        self.stepper.advance(self._boundary(t))
        self.stepper.report_work(done_hours)

    def end(self, t: float) -> None:
        """The job ended at ``t`` (hours; the ledger's ``done`` record)."""
        self.stepper.end(t)

    def state(self, t: float, pools_up: Sequence[bool]) -> RecoveryState:
        """The policy's state at step ``t`` (arrays of length 1; after :meth:`advance`)."""
        self.stepper.advance(self._boundary(t))
        return self.stepper.state(pools_up)

    def apply(self, t: float, act: int, current_up: bool) -> None:
        """Take action ``act`` at ``t`` (step 3); ``current_up``: the current spot pool still
        runs the workers."""
        self.stepper.advance(self._boundary(t))
        self.stepper.apply(act, current_up)


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
        if tracker.stepper.done_at is not None:
            break
        if act is not None:
            cur = tracker.stepper.placement
            up = True
            if cur >= 0 and obs is not None and cur < len(obs.pools_up):
                up = obs.pools_up[cur] is not False
            tracker.apply(t, act.action, up)
    done = ledger.done
    if done is not None and tracker.stepper.done_at is None:
        tracker.end(ledger.hours(done.time))
    return tracker
