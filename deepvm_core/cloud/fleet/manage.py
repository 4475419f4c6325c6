"""The instances of a plan: find them by tag, wait for states, terminate them.

Everything a plan launched carries the tag ``deepvm:plan`` = plan id, so
:func:`plan_instances` finds it whatever happened to the fleet requests; ``status`` and
``teardown`` (and the launcher's rollback) rely on that alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from deepvm_core.cloud.fleet.ec2 import Ec2
from deepvm_core.cloud.fleet.errors import AwsCallError, TeardownIncomplete
from deepvm_core.cloud.fleet.target import ROLES, TAG_CATALOG, TAG_PLAN, TAG_ROLE

#: States of an instance that may still bill (or come back).
LIVE_STATES = ("pending", "running", "stopping", "stopped")
#: States of an instance on its way out.
GONE_STATES = ("shutting-down", "terminated")

_DESCRIBE_CHUNK = 200  # instance ids per DescribeInstances call
_TERMINATE_CHUNK = 500  # instance ids per TerminateInstances call

Progress = Callable[[str], None]


def _quiet(_: str) -> None:
    """A progress callback that shows nothing."""


@dataclass(frozen=True)
class PollSettings:
    """Bounded polls.

    Attributes:
        wait_timeout_s: how long to wait for launched instances to run, seconds.
        terminate_timeout_s: how long to wait for terminated instances to be shutting-down
            or terminated, seconds.
        poll_interval_s: pause between two polls, seconds.
        sleep, clock: injectable for tests (``time.sleep``, ``time.monotonic``).
    """

    wait_timeout_s: float = 600.0
    terminate_timeout_s: float = 300.0
    poll_interval_s: float = 5.0
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic


DEFAULT_POLL = PollSettings()


@dataclass(frozen=True)
class InstanceInfo:
    """One instance of a plan, from ``DescribeInstances``.

    Attributes:
        instance_id: ``i-...``.
        role: the tag ``deepvm:role`` (``spot-worker``, ``anchor``, ``memory-node``) or ``?``.
        instance_type: ``g4dn.xlarge``.
        lifecycle: ``spot`` or ``on-demand``.
        state: ``pending``, ``running``, ..., ``terminated``.
        availability_zone: ``us-east-1b``.
        subnet_id: the subnet, or ``""``.
        catalog: the tag ``deepvm:catalog``, or ``""``.
        launch_time: when it was launched, or ``None``.
        state_reason: the code of its state reason (``Server.SpotInstanceTermination`` when AWS
            reclaimed a spot instance), or ``""``.
    """

    instance_id: str
    role: str
    instance_type: str
    lifecycle: str
    state: str
    availability_zone: str
    subnet_id: str = ""
    catalog: str = ""
    launch_time: datetime | None = None
    state_reason: str = ""

    @property
    def live(self) -> bool:
        """True while the instance may bill (pending, running, stopping, stopped)."""
        return self.state in LIVE_STATES


def instance_info(raw: Mapping[str, Any]) -> InstanceInfo:
    """An :class:`InstanceInfo` of one ``Instances`` item of ``DescribeInstances``."""
    tags = {t.get("Key"): t.get("Value") for t in raw.get("Tags") or []}
    launch_time = raw.get("LaunchTime")
    return InstanceInfo(
        instance_id=str(raw.get("InstanceId", "")),
        role=str(tags.get(TAG_ROLE) or "?"),
        instance_type=str(raw.get("InstanceType", "")),
        lifecycle="spot" if raw.get("InstanceLifecycle") == "spot" else "on-demand",
        state=str((raw.get("State") or {}).get("Name", "unknown")),
        availability_zone=str((raw.get("Placement") or {}).get("AvailabilityZone", "")),
        subnet_id=str(raw.get("SubnetId") or ""),
        catalog=str(tags.get(TAG_CATALOG) or ""),
        launch_time=launch_time if isinstance(launch_time, datetime) else None,
        state_reason=str((raw.get("StateReason") or {}).get("Code") or ""),
    )


def sort_key(info: InstanceInfo) -> tuple[int, str, str]:
    """Instances by role (workers first), AZ and id."""
    order = ROLES.index(info.role) if info.role in ROLES else len(ROLES)
    return (order, info.availability_zone, info.instance_id)


def plan_instances(ec2: Ec2, plan_id: str,
                   states: Sequence[str] | None = None) -> list[InstanceInfo]:
    """The instances tagged ``deepvm:plan`` = ``plan_id`` (in ``states``, default all), by
    role, AZ and id."""
    filters: list[dict[str, Any]] = [{"Name": f"tag:{TAG_PLAN}", "Values": [plan_id]}]
    if states:
        filters.append({"Name": "instance-state-name", "Values": list(states)})
    found = [instance_info(i)
             for reservation in ec2.pages("DescribeInstances", "Reservations", Filters=filters,
                                          MaxResults=1000)
             for i in reservation.get("Instances") or []]
    return sorted(found, key=sort_key)


def describe_ids(ec2: Ec2, instance_ids: Sequence[str]) -> list[InstanceInfo]:
    """The instances ``instance_ids`` that EC2 already knows (a just-launched instance may not
    be visible yet: EC2 is eventually consistent)."""
    found: list[InstanceInfo] = []
    ids = list(dict.fromkeys(instance_ids))
    for start in range(0, len(ids), _DESCRIBE_CHUNK):
        chunk = ids[start:start + _DESCRIBE_CHUNK]
        try:
            reservations = list(ec2.pages("DescribeInstances", "Reservations",
                                          InstanceIds=chunk))
        except AwsCallError as exc:
            if exc.code != "InvalidInstanceID.NotFound":
                raise
            reservations = []
            for one in chunk:  # find which are visible
                try:
                    reservations += list(ec2.pages("DescribeInstances", "Reservations",
                                                   InstanceIds=[one]))
                except AwsCallError as inner:
                    if inner.code != "InvalidInstanceID.NotFound":
                        raise
        found += [instance_info(i) for r in reservations for i in r.get("Instances") or []]
    return found


def terminate(ec2: Ec2, instance_ids: Sequence[str]) -> None:
    """``TerminateInstances`` on ``instance_ids`` (in chunks)."""
    ids = list(dict.fromkeys(instance_ids))
    for start in range(0, len(ids), _TERMINATE_CHUNK):
        ec2.call("TerminateInstances", InstanceIds=ids[start:start + _TERMINATE_CHUNK])


def wait_gone(ec2: Ec2, instance_ids: Sequence[str], poll: PollSettings,
              progress: Progress = _quiet) -> list[str]:
    """Wait until every instance of ``instance_ids`` is shutting-down or terminated (at most
    ``poll.terminate_timeout_s``); returns those that are not."""
    ids = list(dict.fromkeys(instance_ids))
    deadline = poll.clock() + poll.terminate_timeout_s
    while True:
        states = {i.instance_id: i.state for i in describe_ids(ec2, ids)}
        left = [i for i in ids if states.get(i) not in GONE_STATES]
        if not left or poll.clock() >= deadline:
            return left
        progress(f"{len(ids) - len(left)}/{len(ids)} shutting-down or terminated")
        poll.sleep(max(0.0, min(poll.poll_interval_s, deadline - poll.clock())))


# ----------------------------------------------------------------------------- status


@dataclass(frozen=True)
class PlanStatus:
    """The instances of a plan in a region."""

    plan_id: str
    region: str
    instances: tuple[InstanceInfo, ...]

    def counts(self) -> dict[tuple[str, str], int]:
        """(role, state) -> number of instances."""
        counts: dict[tuple[str, str], int] = {}
        for i in self.instances:
            counts[(i.role, i.state)] = counts.get((i.role, i.state), 0) + 1
        return counts

    @property
    def live(self) -> tuple[InstanceInfo, ...]:
        """The instances that may still bill."""
        return tuple(i for i in self.instances if i.live)


def plan_status(ec2: Ec2, plan_id: str) -> PlanStatus:
    """Every instance of the plan (terminated ones too, while EC2 still lists them)."""
    return PlanStatus(plan_id, ec2.region, tuple(plan_instances(ec2, plan_id)))


def format_instances(instances: Iterable[InstanceInfo]) -> list[str]:
    """A table of instances: role, id, type, lifecycle, state, AZ."""
    rows = [("role", "instance", "type", "lifecycle", "state", "AZ")]
    rows += [(i.role, i.instance_id, i.instance_type, i.lifecycle, i.state,
              i.availability_zone) for i in instances]
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
            for row in rows]


def summarize(instances: Iterable[InstanceInfo]) -> str:
    """``spot-worker: 17 running (us-east-1b); memory-node: 1 running (us-east-1b)``."""
    by_role: dict[str, dict[str, int]] = {}
    azs: dict[str, set[str]] = {}
    for i in instances:
        by_role.setdefault(i.role, {})
        by_role[i.role][i.state] = by_role[i.role].get(i.state, 0) + 1
        azs.setdefault(i.role, set()).add(i.availability_zone)
    parts = []
    for role in sorted(by_role, key=lambda r: ROLES.index(r) if r in ROLES else 9):
        states = ", ".join(f"{n} {s}" for s, n in sorted(by_role[role].items()))
        parts.append(f"{role}: {states} ({', '.join(sorted(azs[role]))})")
    return "; ".join(parts) or "no instances"


# ----------------------------------------------------------------------------- teardown


@dataclass
class TeardownResult:
    """What ``teardown`` found and did.

    Attributes:
        plan_id, region: the plan and its region.
        targets: the live instances (pending, running, stopping, stopped) found.
        terminated: the ids confirmed shutting-down or terminated (empty on a dry run).
        dry_run: True when nothing was terminated on purpose.
    """

    plan_id: str
    region: str
    targets: list[InstanceInfo] = field(default_factory=list)
    terminated: list[str] = field(default_factory=list)
    dry_run: bool = True


def teardown(ec2: Ec2, plan_id: str, *, yes: bool, poll: PollSettings = DEFAULT_POLL,
             progress: Progress = _quiet) -> TeardownResult:
    """Terminate every live instance of the plan and wait until each is shutting-down or
    terminated; with ``yes=False`` only list them.

    Raises :class:`TeardownIncomplete` when some are not confirmed in time.
    """
    targets = plan_instances(ec2, plan_id, LIVE_STATES)
    result = TeardownResult(plan_id, ec2.region, targets, [], not yes)
    if not yes or not targets:
        return result
    ids = [i.instance_id for i in targets]
    progress(f"terminating {len(ids)} instance(s) of plan {plan_id} in {ec2.region}")
    terminate(ec2, ids)
    left = wait_gone(ec2, ids, poll, progress)
    late = [i for i in plan_instances(ec2, plan_id, LIVE_STATES) if i.instance_id not in ids]
    if late:  # launched while we were terminating (a launch still running elsewhere)
        late_ids = [i.instance_id for i in late]
        progress(f"terminating {len(late)} more instance(s) that appeared meanwhile")
        terminate(ec2, late_ids)
        left += wait_gone(ec2, late_ids, poll, progress)
        ids += late_ids
        result.targets += late
    if left:
        raise TeardownIncomplete(
            f"{len(left)} of {len(ids)} instance(s) of plan {plan_id} are not shutting-down "
            f"or terminated after {poll.terminate_timeout_s:g} s: {', '.join(left)}; run "
            f"'deepvm teardown --plan {plan_id} --region {ec2.region} --yes' again", left)
    result.terminated = [i for i in ids if i not in left]
    return result
