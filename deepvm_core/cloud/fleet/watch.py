"""``deepvm watch``: carry out a recovery policy on a launched plan (issue 28).

Every ``interval`` seconds (step k at ``started_at + k * interval``; the policies' tick g is the
interval) the controller:

1. lists the plan's instances by its tag (``DescribeInstances``); a spot worker that is
   ``terminated`` or ``stopped`` with the reason ``Server.SpotInstanceTermination`` was
   reclaimed, and its pool is down; the pool where all n workers run is up; it reads the
   progress file when there is one (:func:`read_progress`); it writes the observation to the
   ledger (:mod:`~deepvm_core.cloud.fleet.ledger_file`);
2. moves the job model on to the step (:class:`~deepvm_core.cloud.fleet.watch_state.JobTracker`,
   the backtest's stepper for one run) and builds the policy's state;
3. calls the policy of :mod:`deepvm_core.job.recovery` (the same function the backtest replays)
   and carries out its action with the launch code of ``deepvm launch``
   (:func:`~deepvm_core.cloud.fleet.launch.launch_part`: tags, counts, one AZ, rollback):
   spot workers in a pool's zone, the workers on demand (role ``fallback-worker``, in the zone
   of the on-demand part), back to spot (the on-demand workers are terminated first), or wait.
   A pool the controller has no instance in is taken as up until a launch there is refused (no
   capacity): the refusal is recorded, the pool is down for this step, and the policy is asked
   again, so it chooses as it would knowing every pool;
4. writes the action and a second observation (what now runs) to the ledger.

The controller does not restart the training process: the launch template's user data must
start (or resume from its checkpoint) the job when an instance boots. It moves only the
workers; the anchor or memory nodes stay where ``deepvm launch`` put them. When the job ends
(the progress file says so, or the estimate does) it stops and says how to tear the plan down.

Without ``yes`` it makes one observation and prints what it would do: no mutating EC2 call,
nothing written. With ``yes`` it holds a lock file (``<home>/ledgers/PLAN_ID.lock``, the
holder's process id: :mod:`~deepvm_core.cloud.fleet.watch_lock`), so a second ``watch`` of the
plan refuses to run; a restarted controller rebuilds its state from the ledger
(:func:`~deepvm_core.cloud.fleet.watch_state.fold`), and
adopts workers that run in a pool the ledger does not know (a launch it was killed during).

**Progress file** (``--progress FILE``, a local path or ``s3://BUCKET/KEY``,
:mod:`~deepvm_core.cloud.fleet.watch_progress`): the job writes one line, ``DONE/TOTAL``
(epochs or steps checkpointed, of the job's total: ``1200/3000``) or a fraction from 0 to 1;
the controller reads it at every step. Without it, or while it cannot be read (no such file or
object, access denied, a line not in the format: said once, with the path and the value), the
work done is the job model's estimate from the time the workers ran (and the ledger says so).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from deepvm_core.cloud.fleet.ec2 import Ec2
from deepvm_core.cloud.fleet.errors import LaunchFailed
from deepvm_core.cloud.fleet.launch import launch_part, resolve_subnets
from deepvm_core.cloud.fleet.ledger import Action, Done, Observation, Seen, WatchSetup
from deepvm_core.cloud.fleet.ledger_file import append_record, ledger_path, read_ledger
from deepvm_core.cloud.fleet.manage import (
    InstanceInfo,
    PollSettings,
    Progress,
    _quiet,
    plan_instances,
    terminate,
    wait_gone,
)
from deepvm_core.cloud.fleet.requests import RequestOptions
from deepvm_core.cloud.fleet.target import FleetPart, FleetPlan
from deepvm_core.cloud.fleet.watch_progress import ESTIMATE_FALLBACK, ProgressFile
from deepvm_core.cloud.fleet.watch_state import JobTracker, fold
from deepvm_core.errors import DeepVMError
from deepvm_core.job.recovery import NOTHING, ON_DEMAND, POLICIES
from deepvm_core.units import SECONDS_PER_HOUR

#: The default polling interval, seconds (the policies' tick).
DEFAULT_INTERVAL_SECONDS = 60.0
#: The policy when neither ``--policy`` nor the plan (``chosen.estimate.recovery``) names one.
DEFAULT_POLICY = "failover"


# ----------------------------------------------------------------------------- controller


@dataclass(frozen=True)
class WatchSettings:
    """How the controller runs.

    Attributes:
        yes: act (else one observation and what it would do).
        progress_file: the job's progress file
            (:func:`~deepvm_core.cloud.fleet.watch_progress.open_progress`), or ``None``.
        max_steps: stop after this many steps (``None``: until the job ends).
        clock: seconds since the epoch (``time.time``); sleep: ``time.sleep`` (tests inject
            both).
        launch_poll: the launches' polls (:class:`PollSettings`).
    """

    yes: bool = False
    progress_file: ProgressFile | None = None
    max_steps: int | None = None
    clock: Callable[[], float] = time.time
    sleep: Callable[[float], None] = time.sleep
    launch_poll: PollSettings = field(default_factory=PollSettings)


@dataclass(frozen=True)
class StepReport:
    """What one step saw and did (``action``: the policy's number; ``text``: in words)."""

    step: int
    hours: float
    action: int
    text: str
    done: bool = False


class Controller:
    """The loop of the module docstring for one plan (build with :func:`open_controller`)."""

    def __init__(self, ec2: Ec2, plan: FleetPlan, setup: WatchSetup, options: RequestOptions,
                 settings: WatchSettings, tracker: JobTracker, *,
                 progress: Progress = _quiet) -> None:
        self.ec2 = ec2
        self.plan = plan
        self.setup = setup
        self.options = options
        self.settings = settings
        self.tracker = tracker
        self.progress = progress
        self.path = ledger_path(plan.plan_id)
        self._subnets: dict[str, str] | None = None
        #: reclaimed instances already seen (a new one says its pool is down now)
        self.reclaims_seen: set[str] = set()
        self.fresh = True  # no step taken yet by this controller or its ledger
        self._progress_problem = ""  # why the progress file gave no word, last said

    # -- what there is

    def _price(self, i: InstanceInfo) -> float:
        s = self.setup
        if i.role == "spot-worker":
            pool = s.pools.index(i.availability_zone) if i.availability_zone in s.pools else 0
            return s.spot_vm_usd_per_hour(pool)
        if i.role == "fallback-worker":
            return s.on_demand_vm_usd_per_hour
        count = s.on_demand_part[2] if s.on_demand_part else 1
        return s.on_demand_part_usd_per_hour / max(count, 1)

    def observe(self, t_seconds: float) -> tuple[Observation, list[InstanceInfo]]:
        """The plan's instances now, as an observation (not yet written)."""
        found = plan_instances(self.ec2, self.plan.plan_id)
        seen = tuple(Seen(i.instance_id, i.role, i.instance_type, i.availability_zone,
                          i.lifecycle, i.state, self._price(i), i.state_reason)
                     for i in found)
        up: list[bool | None] = [None] * len(self.setup.pools)
        for p, zone in enumerate(self.setup.pools):
            running = [i for i in found if i.role == "spot-worker" and i.state in
                       ("pending", "running") and i.availability_zone == zone]
            if len(running) >= self.setup.spot_vms:
                up[p] = True
            elif self.tracker.stepper.placement == p or any(  # reclaimed under the job, or just now
                    i.reclaimed and i.zone == zone and i.instance_id not in self.reclaims_seen
                    for i in seen):
                up[p] = False
        self.reclaims_seen |= {i.instance_id for i in seen if i.reclaimed}
        share = self._read_progress()
        done = None if share is None else share * self.setup.job_hours
        return Observation(t_seconds, seen, tuple(up), done), found

    def _read_progress(self) -> float | None:
        """The progress file's share, or ``None``; a reason it gives no word is said when it
        changes (and the estimate is used)."""
        source = self.settings.progress_file
        if source is None:
            return None
        reading = source.read()
        if reading.problem != self._progress_problem:
            self._progress_problem = reading.problem
            if reading.problem:
                self.progress(f"{reading.problem}; {ESTIMATE_FALLBACK}")
            else:
                self.progress(f"--progress {source.path}: read (the work done is the job's "
                              "word from now on)")
        return reading.share

    # -- acting

    def _write(self, record: Observation | Action | Done) -> None:
        if self.settings.yes:
            append_record(self.path, record)

    def subnets(self) -> dict[str, str]:
        """subnet -> AZ of ``--subnet`` (or the default subnets), looked up once."""
        if self._subnets is None:
            self._subnets = resolve_subnets(self.ec2, self.options.subnets)[0]
        return self._subnets

    def _end_workers(self, found: list[InstanceInfo], role: str) -> None:
        """Terminate the live workers of ``role`` (the placement they made is left)."""
        ids = [i.instance_id for i in found if i.role == role and i.live]
        if ids:
            self.progress(f"terminating {len(ids)} worker(s) the new placement does not use")
            terminate(self.ec2, ids)
            wait_gone(self.ec2, ids, self.settings.launch_poll, self.progress)

    def _od_zone(self, found: list[InstanceInfo]) -> str:
        part = [i.availability_zone for i in found
                if i.role in ("anchor", "memory-node") and i.live]
        home = self.tracker.stepper.last_run
        return part[0] if part else self.setup.pools[max(home, 0)]

    def _launch(self, part: FleetPart, zone: str, at: float, act: int) -> Action:
        result = launch_part(self.ec2, self.plan, part, self.options, self.subnets(), zone,
                             poll=self.settings.launch_poll, progress=self.progress)
        price = (self.setup.spot_vm_usd_per_hour(act) if act >= 0
                 else self.setup.on_demand_vm_usd_per_hour)
        return Action(at, act, "launched", zone, part.instance_type, part.market, part.count,
                      price, tuple(i.instance_id for i in result.instances))

    def step(self, k: int) -> StepReport:
        """Step ``k`` (module docstring); without ``yes``, only what it would do."""
        s = self.setup
        at = s.started_at + k * s.interval_seconds
        t = k * s.tick_hours
        obs, found = self.observe(at)
        self._write(obs)
        tr = self.tracker
        tr.advance(t)
        if obs.progress_hours is not None:
            tr.set_progress(t, obs.progress_hours)
        if tr.stepper.done_at is not None:
            source = "file" if obs.progress_hours is not None else "estimate"
            self._write(Done(s.started_at + tr.stepper.done_at * SECONDS_PER_HOUR, source))
            return StepReport(k, t, NOTHING, f"the job is done ({source}) at "
                                             f"{tr.stepper.done_at:.2f} h", done=True)
        up = list(obs.pools_up)
        # workers running in a pool the ledger does not know: a launch the controller was
        # stopped during (adopted, not launched again)
        running = [p for p, u in enumerate(up) if u]
        if running and tr.stepper.placement not in running and self.settings.yes:
            adopt = Action(at, running[0], "adopted", s.pools[running[0]], s.instance_type,
                           "spot", s.spot_vms, s.spot_vm_usd_per_hour(running[0]))
            self._write(adopt)
            tr.apply(t, running[0], True)
        current_up = tr.stepper.placement < 0 or up[tr.stepper.placement] is not False
        known = [u is not False for u in up]
        decide = POLICIES[s.policy]  # type: ignore[index]
        action: Action | None = None
        act = NOTHING
        for _ in range(len(s.pools) + 1):
            act = int(decide(tr.state(t, known)).action[0])
            if act == tr.stepper.placement:
                action = Action(at, act, "kept")
                break
            if act == NOTHING:
                action = Action(at, act, "waiting")
                break
            if not self.settings.yes:
                break
            if act >= 0:
                zone = s.pools[act]
                self._end_workers(found, "spot-worker")  # a pool left, or a partial cluster
                part = FleetPart("spot-worker", s.instance_type, s.spot_vms)
                try:
                    action = self._launch(part, zone, at, act)
                    # back to spot: the on-demand workers go once spot runs, not before
                    self._end_workers(found, "fallback-worker")
                    break
                except LaunchFailed as exc:
                    self._write(Action(at, act, "refused", zone, s.instance_type, "spot",
                                       s.spot_vms, s.spot_vm_usd_per_hour(act),
                                       note=" ".join(str(exc).split())[:300]))
                    known[act] = False
                    continue
            zone = self._od_zone(found)
            self._end_workers(found, "spot-worker")
            part = FleetPart("fallback-worker", s.instance_type, s.spot_vms)
            action = self._launch(part, zone, at, act)  # LaunchFailed: the caller stops
            break
        text = _words(act, s, tr.stepper.placement)
        if not self.settings.yes:
            return StepReport(k, t, act, f"would {text}")
        if action is None:  # every pool refused and the policy kept asking: wait
            act = NOTHING
            action = Action(at, act, "waiting")
            text = _words(act, s, tr.stepper.placement)
        self._write(action)
        tr.apply(t, act, current_up)
        if action.outcome == "launched":
            self._write(self.observe(at)[0])
        return StepReport(k, t, act, text)

    def run(self) -> list[StepReport]:
        """Steps from the next one due until the job ends (or ``max_steps``)."""
        s, st = self.setup, self.settings
        reports: list[StepReport] = []
        while st.max_steps is None or len(reports) < st.max_steps:
            now = st.clock()
            since = (now - s.started_at) / s.interval_seconds
            # the first step of a new ledger is now; a dry run looks now; else the next due
            k = 0 if self.fresh else max(math.floor(since + 1e-9) if not st.yes
                                         else math.ceil(since - 1e-9), 0)
            self.fresh = False
            wait = s.started_at + k * s.interval_seconds - now
            if wait > 0:
                st.sleep(wait)
            report = self.step(k)
            reports.append(report)
            self.progress(f"step {k} ({report.hours:.2f} h): {report.text}")
            if report.done or not st.yes:
                break
            st.sleep(max(s.started_at + (k + 1) * s.interval_seconds - st.clock(), 0.0))
        return reports


def _words(act: int, s: WatchSetup, current: int) -> str:
    if act == NOTHING:
        return "wait for spot capacity"
    if act == current:
        return "keep the current placement"
    if act == ON_DEMAND:
        return f"launch the {s.spot_vms} worker(s) on demand ({s.instance_type})"
    return f"launch {s.spot_vms} x {s.instance_type} spot in {s.pools[act]}"


def open_controller(ec2: Ec2, plan: FleetPlan, make_setup: Callable[[float], WatchSetup],
                    options: RequestOptions, settings: WatchSettings, *,
                    progress: Progress = _quiet) -> Controller:
    """The controller of ``plan``: its ledger's setup and state when it has one (a restart;
    the policy and deadline must be the same), else ``make_setup(now)``."""
    path = ledger_path(plan.plan_id)
    if path.exists():
        ledger = read_ledger(path)
        fresh = make_setup(ledger.setup.started_at)
        setup = ledger.setup
        if (fresh.policy, fresh.deadline_hours, fresh.interval_seconds) != (
                setup.policy, setup.deadline_hours, setup.interval_seconds):
            raise DeepVMError(
                f"the ledger {path} was started with --policy {setup.policy}, deadline "
                f"{setup.deadline_hours} h, --interval {setup.interval_seconds:g}: give the "
                "same to resume (or move the ledger away to start again)")
        tracker = fold(ledger)
        progress(f"resuming from the ledger {path} ({len(ledger.records)} records)")
        seen = {i.instance_id for r in ledger.records if isinstance(r, Observation)
                for i in r.instances if i.reclaimed}
        controller = Controller(ec2, plan, setup, options, settings, tracker,
                                progress=progress)
        controller.reclaims_seen = seen
        controller.fresh = not any(isinstance(r, Observation) for r in ledger.records)
        return controller
    else:
        setup = make_setup(settings.clock())
        tracker = JobTracker(setup)
        if settings.yes:
            append_record(path, setup)
    return Controller(ec2, plan, setup, options, settings, tracker, progress=progress)

