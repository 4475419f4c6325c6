"""The ledger of a watched plan (issue 28): one append-only JSON-lines file per plan in the
user's folder (``<home>/ledgers/PLAN_ID.jsonl``, :func:`ledger_path`), and pure functions that
read it.

**Records** (one JSON object a line, ``kind`` first, ``time`` in seconds since the epoch):

* ``start``: what ``deepvm watch`` controls, written once (:class:`WatchSetup`): the plan, the
  region, the policy and deadline, the polling interval, the pools' zones (failover order), the
  job the plan priced (segments, R) and its prices (USD/hour), the plan's P10-P90.
* ``observe``: what ``DescribeInstances`` showed at a step (:class:`Observation`): every
  instance of the plan with its type, zone, market, state, state reason and hourly price; which
  pools are known up or down; the work done from the progress file (hours), when there is one.
* ``act``: an action (:class:`Action`): spot in a zone, on demand, wait or keep, with the type,
  zone, market, count, hourly price per VM and its outcome (``launched``, ``refused``: no
  capacity, ``kept``, ``waiting``, ``dry-run``).
* ``done``: the job finished (by the progress file or the estimate).

**What is read from it** (:func:`summarize`): the cost so far (each observation's running
instances at their hourly prices until the next observation, the last one until the job's end
when it is done), the spot and on-demand worker hours, the reclaims seen (observations where a
spot worker is newly ``terminated`` or ``stopped`` with ``Server.SpotInstanceTermination``), the
job's progress (:class:`~deepvm_core.cloud.fleet.watch_state.JobTracker` folded over the
records), and the counterfactuals: the same cluster on demand from the start, and every other
policy replayed by the backtest on the availability the controller observed
(:func:`observed_traces`).

**Observed availability.** Steps are at ``start + k * interval``. A pool is up at step k when
the plan's workers ran there or a launch there succeeded, down when they were reclaimed under
the job or a launch there was refused; a step where nothing was learnt about a pool keeps its
last known state, and a pool never seen is down (a counterfactual cannot use a pool no one saw
up).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from deepvm_core.errors import DeepVMError
from deepvm_core.home import data_home
from deepvm_core.units import SECONDS_PER_HOUR

if TYPE_CHECKING:
    from deepvm_core.job.backtest import BacktestJob

#: The ledgers' folder under the per-user folder.
LEDGER_FOLDER: Final = "ledgers"
#: The state reason of a reclaimed spot instance.
SPOT_RECLAIM_REASON: Final = "Server.SpotInstanceTermination"
#: The roles of the workers (spot, or on demand after a fallback); the others are the plan's
#: on-demand part.
WORKER_ROLES: Final = ("spot-worker", "fallback-worker")


def ledger_dir() -> Path:
    """``<home>/ledgers`` (:func:`deepvm_core.home.data_home`)."""
    return data_home() / LEDGER_FOLDER


def ledger_path(plan_id: str) -> Path:
    """The ledger of plan ``plan_id``."""
    return ledger_dir() / f"{plan_id}.jsonl"


@dataclass(frozen=True)
class WatchSetup:
    """The ``start`` record: what is watched and what the plan priced.

    Attributes:
        plan_id, region, plan_file: the plan.
        policy: the recovery policy; deadline_hours: D or ``None``.
        interval_seconds: the polling interval (the tick g of the policies).
        started_at: seconds since the epoch; step k is at ``started_at + k * interval``.
        instance_type, spot_vms: the workers. pools: their zones, failover order.
        full_segments, segment_hours, last_segment_hours, restart_hours: the job (hours).
        spot_usd_per_hour: the whole cluster on spot, per pool, USD/hour.
        on_demand_part_usd_per_hour: the anchor or memory nodes (billed while waiting).
        fallback_usd_per_hour: the cluster with its workers on demand.
        on_demand_part: ``(role, type, count)`` of the on-demand part, or ``None``.
        plan_makespan_p10_hours ... plan_cost_p90_usd: the plan's range (``None``: not given).
        summary: the configuration in words.
    """

    plan_id: str
    region: str
    plan_file: str
    policy: str
    deadline_hours: float | None
    interval_seconds: float
    started_at: float
    instance_type: str
    spot_vms: int
    pools: tuple[str, ...]
    full_segments: int
    segment_hours: float
    last_segment_hours: float
    restart_hours: float
    spot_usd_per_hour: tuple[float, ...]
    on_demand_part_usd_per_hour: float
    fallback_usd_per_hour: float
    on_demand_part: tuple[str, str, int] | None = None
    plan_makespan_p10_hours: float | None = None
    plan_makespan_p90_hours: float | None = None
    plan_cost_p10_usd: float | None = None
    plan_cost_p90_usd: float | None = None
    summary: str = ""

    @property
    def tick_hours(self) -> float:
        """The interval, hours."""
        return self.interval_seconds / SECONDS_PER_HOUR

    @property
    def job_hours(self) -> float:
        """Every segment's hours: ``K s + s_last``."""
        return self.full_segments * self.segment_hours + self.last_segment_hours

    def spot_vm_usd_per_hour(self, pool: int) -> float:
        """One spot worker in ``pool``."""
        return (self.spot_usd_per_hour[pool] - self.on_demand_part_usd_per_hour) / self.spot_vms

    @property
    def on_demand_vm_usd_per_hour(self) -> float:
        """One worker on demand."""
        return (self.fallback_usd_per_hour - self.on_demand_part_usd_per_hour) / self.spot_vms

    def backtest_job(self) -> BacktestJob:
        """The job as the backtest replays it: one configuration, the same segments and R in
        every pool, each pool at its spot price."""
        import numpy as np

        from deepvm_core.job.backtest import BacktestJob

        width = len(self.pools)
        return BacktestJob(
            full_segments=np.array([self.full_segments]),
            full_segment_hours=np.full((1, width), self.segment_hours),
            last_segment_hours=np.full((1, width), self.last_segment_hours),
            restart_hours=np.full((1, width), self.restart_hours),
            spot_vms=np.full((1, width), self.spot_vms, dtype=np.int64),
            price_usd_per_hour=np.array([self.spot_usd_per_hour]),
            on_demand_usd_per_hour=np.full((1, width), self.on_demand_part_usd_per_hour),
            fallback_usd_per_hour=np.full((1, width), self.fallback_usd_per_hour))


@dataclass(frozen=True)
class Seen:
    """One instance in an observation (``market``: ``spot`` or ``on-demand``; ``reason``: the
    state reason code, ``""`` when none)."""

    instance_id: str
    role: str
    instance_type: str
    zone: str
    market: str
    state: str
    price_usd_per_hour: float
    reason: str = ""

    @property
    def running(self) -> bool:
        """Billed as running (pending or running)."""
        return self.state in ("pending", "running")

    @property
    def reclaimed(self) -> bool:
        """A spot instance AWS took back."""
        return self.state in ("terminated", "stopped", "shutting-down", "stopping") and \
            self.reason == SPOT_RECLAIM_REASON


@dataclass(frozen=True)
class Observation:
    """An ``observe`` record: the plan's instances at ``time``; ``pools_up`` per pool (``None``:
    not known at this step); ``progress_hours``: work done from the progress file, else
    ``None``."""

    time: float
    instances: tuple[Seen, ...]
    pools_up: tuple[bool | None, ...]
    progress_hours: float | None = None


@dataclass(frozen=True)
class Action:
    """An ``act`` record. ``action``: a pool index, -1 on demand, -2 wait (the policies'
    numbers); ``outcome``: ``launched``, ``refused``, ``kept``, ``waiting``, ``terminated``,
    ``dry-run``."""

    time: float
    action: int
    outcome: str
    zone: str = ""
    instance_type: str = ""
    market: str = ""
    count: int = 0
    price_usd_per_hour: float = 0.0
    instance_ids: tuple[str, ...] = ()
    note: str = ""


@dataclass(frozen=True)
class Done:
    """A ``done`` record: the job ended at ``time`` (``source``: ``file`` or ``estimate``)."""

    time: float
    source: str


Record = WatchSetup | Observation | Action | Done


@dataclass(frozen=True)
class Ledger:
    """A ledger read back: its setup and the records after it, in order."""

    setup: WatchSetup
    records: tuple[Observation | Action | Done, ...] = field(default=())

    def hours(self, time: float) -> float:
        """``time`` as hours since the watch started."""
        return (time - self.setup.started_at) / SECONDS_PER_HOUR

    @property
    def done(self) -> Done | None:
        """The ``done`` record, if any."""
        return next((r for r in self.records if isinstance(r, Done)), None)


# ----------------------------------------------------------------------------- file


def _kind(record: Record) -> str:
    return {WatchSetup: "start", Observation: "observe", Action: "act",
            Done: "done"}[type(record)]


def record_to_dict(record: Record) -> dict[str, Any]:
    """A record as its JSON object (``kind`` first)."""
    return {"kind": _kind(record), **asdict(record)}


def append_record(path: Path, record: Record) -> None:
    """Append ``record`` to the ledger at ``path`` (created with its folder), flushed to
    disk."""
    path.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps(record_to_dict(record), allow_nan=False, separators=(",", ":"))
    with open(path, "a", encoding="utf-8") as f:
        f.write(line + "\n")
        f.flush()
        os.fsync(f.fileno())


def _tuple(value: Any) -> tuple[Any, ...]:
    return tuple(tuple(v) if isinstance(v, list) else v for v in value)


def record_from_dict(obj: Mapping[str, Any]) -> Record:
    """The record of one JSON object (raises ``KeyError``/``TypeError``/``ValueError`` when it
    is not one)."""
    data = {k: v for k, v in obj.items() if k != "kind"}
    kind = obj["kind"]
    if kind == "start":
        for key in ("pools", "spot_usd_per_hour"):
            data[key] = tuple(data[key])
        if data.get("on_demand_part") is not None:
            data["on_demand_part"] = tuple(data["on_demand_part"])
        return WatchSetup(**data)
    if kind == "observe":
        data["instances"] = tuple(Seen(**i) for i in data["instances"])
        data["pools_up"] = tuple(data["pools_up"])
        return Observation(**data)
    if kind == "act":
        data["instance_ids"] = tuple(data.get("instance_ids") or ())
        return Action(**data)
    if kind == "done":
        return Done(**data)
    raise ValueError(f"unknown kind {kind!r}")


def read_ledger(path: Path) -> Ledger:
    """The ledger at ``path``.

    Raises:
        DeepVMError: no such file, a line that is not a record (named by its number), or no
            ``start`` record first.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DeepVMError(f"no ledger at {path}: the plan was never watched here "
                          "(deepvm watch PLAN.json --yes writes it)") from None
    except OSError as exc:
        raise DeepVMError(f"{path}: cannot read the ledger: {exc.strerror}") from None
    records: list[Record] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            records.append(record_from_dict(json.loads(line)))
        except (ValueError, KeyError, TypeError) as exc:
            if number == len(text.splitlines()) and not text.endswith("\n"):
                break  # a last line cut short by a crash: ignored
            raise DeepVMError(f"{path}, line {number}: not a ledger record ({exc})") from None
    if not records or not isinstance(records[0], WatchSetup):
        raise DeepVMError(f"{path}: a ledger begins with a 'start' record")
    rest = tuple(r for r in records[1:] if not isinstance(r, WatchSetup))
    return Ledger(records[0], rest)


def ledger_paths() -> list[Path]:
    """Every ledger in the user's folder, by name."""
    folder = ledger_dir()
    return sorted(folder.glob("*.jsonl")) if folder.is_dir() else []


# ----------------------------------------------------------------------------- reading


def observations(ledger: Ledger) -> list[Observation]:
    """The observations, in order."""
    return [r for r in ledger.records if isinstance(r, Observation)]


def actions(ledger: Ledger) -> list[Action]:
    """The actions, in order."""
    return [r for r in ledger.records if isinstance(r, Action)]


def _billed_spans(ledger: Ledger) -> Iterable[tuple[Observation, float]]:
    """Each observation with the hours until the next one (the last: until the job's end when
    it is done, else 0)."""
    obs = observations(ledger)
    done = ledger.done
    for i, o in enumerate(obs):
        if done is not None and o.time >= done.time:
            break
        end = obs[i + 1].time if i + 1 < len(obs) else (done.time if done else o.time)
        if done is not None:
            end = min(end, done.time)
        yield o, max(end - o.time, 0.0) / SECONDS_PER_HOUR


def cost_usd(ledger: Ledger) -> float:
    """The cost so far: every running instance at its hourly price, span by span."""
    return sum(sum(i.price_usd_per_hour for i in o.instances if i.running) * hours
               for o, hours in _billed_spans(ledger))


def worker_hours(ledger: Ledger, market: str) -> float:
    """Hours during which the workers ran on ``market`` (``spot`` or ``on-demand``)."""
    return sum(hours for o, hours in _billed_spans(ledger)
               if any(i.running and i.market == market and i.role in WORKER_ROLES
                      for i in o.instances))


def reclaims(ledger: Ledger) -> int:
    """Observations at which a spot worker was newly seen reclaimed."""
    seen: set[str] = set()
    count = 0
    for o in observations(ledger):
        new = {i.instance_id for i in o.instances if i.reclaimed} - seen
        count += bool(new)
        seen |= new
    return count


def step_of(ledger: Ledger, time: float) -> int:
    """The step a time belongs to (the nearest grid point at or before it)."""
    return math.floor((time - ledger.setup.started_at) / ledger.setup.interval_seconds
                          + 1e-6)


def observed_up(ledger: Ledger) -> list[list[bool]]:
    """Per pool, per step from 0 to the last step observed: up or down as observed (module
    docstring: the last known state carried forward, never seen: down)."""
    setup = ledger.setup
    obs = observations(ledger)
    if not obs:
        return [[] for _ in setup.pools]
    steps = step_of(ledger, obs[-1].time) + 1
    known: list[list[bool | None]] = [[None] * steps for _ in setup.pools]
    for r in ledger.records:
        k = step_of(ledger, r.time)
        if k >= steps:
            continue
        if isinstance(r, Observation):
            for p, up in enumerate(r.pools_up):
                if up is not None:
                    known[p][k] = up
        elif isinstance(r, Action) and r.action >= 0 and r.outcome in ("refused", "launched"):
            known[r.action][k] = r.outcome == "launched"
    out: list[list[bool]] = []
    for row in known:
        last = False
        filled = []
        for value in row:
            last = last if value is None else value
            filled.append(last)
        out.append(filled)
    return out


@dataclass(frozen=True)
class Counterfactual:
    """What another way of running the job would have made of the same market.

    Attributes:
        name: ``on demand`` or a policy's name.
        makespan_hours, cost_usd: its result, ``None`` when it did not finish within the
            observed window (or could not run: ``note`` says why).
        note: a few words (``""`` when none).
    """

    name: str
    makespan_hours: float | None
    cost_usd: float | None
    note: str = ""


def on_demand_counterfactual(setup: WatchSetup) -> Counterfactual:
    """The same cluster on demand from the start: every segment once, at the fallback price."""
    return Counterfactual("on demand", setup.job_hours,
                          setup.job_hours * setup.fallback_usd_per_hour)


def policy_counterfactuals(ledger: Ledger,
                           policies: Sequence[str] | None = None) -> list[Counterfactual]:
    """Every policy (``policies``, default all) replayed by the backtest on the observed
    availability (:func:`observed_up`, one start at step 0); a run that ends after the last
    observed step is reported as not finished (the backtest's traces repeat)."""
    import numpy as np

    from deepvm_core.job.backtest_replay import backtest
    from deepvm_core.job.recovery import DEADLINE_POLICIES, RECOVERY_POLICIES
    from deepvm_core.market.trace import SpotTrace, TraceError

    setup = ledger.setup
    up = observed_up(ledger)
    steps = len(up[0]) if up else 0
    names = list(RECOVERY_POLICIES if policies is None else policies)
    if steps == 0:
        return [Counterfactual(p, None, None, "nothing observed yet") for p in names]
    width = len(setup.pools)
    job = setup.backtest_job()
    traces = [SpotTrace(source=f"observed {zone}", gap_seconds=setup.interval_seconds,
                        counts=np.asarray(row, dtype=np.int64))
              for zone, row in zip(setup.pools, up, strict=True)]
    window = steps * setup.tick_hours
    out = []
    for name in names:
        if name in DEADLINE_POLICIES and setup.deadline_hours is None:
            out.append(Counterfactual(name, None, None, "needs a deadline"))
            continue
        used = 1 if name == "wait" else width
        try:
            runs = backtest(traces[:used], job.first_pools(used), policy=name,  # type: ignore[arg-type]
                            deadline_hours=setup.deadline_hours, starts=1)
        except TraceError as exc:
            out.append(Counterfactual(name, None, None, exc.reason))
            continue
        makespan = float(runs.makespan_hours[0, 0])
        if makespan > window + 1e-9:
            out.append(Counterfactual(name, None, None, "not finished within the "
                                      f"{window:.2f} h observed"))
        else:
            out.append(Counterfactual(name, makespan, float(runs.cost_usd[0, 0])))
    return out
