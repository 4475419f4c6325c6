"""Launch a plan on EC2, all or nothing.

:func:`prepare` checks everything that can be checked without launching: the launch templates
exist, the subnets exist (their AZs are learnt; without ``--subnet`` the region's default
subnets, one per AZ, are used; a plan with spot pools keeps those of its pools' zones, in
failover order: :mod:`~deepvm_core.cloud.fleet.requests`), no instance of the plan is
already live, and both ``CreateFleet`` requests pass ``DryRun`` (AWS answers
``DryRunOperation``). Any failure there is a
:class:`~deepvm_core.cloud.fleet.errors.FleetInputError` or
:class:`~deepvm_core.cloud.fleet.errors.AwsCallError`, and nothing was launched.

:func:`launch` then:

1. launches the spot workers (``CreateFleet``, ``instant``), counts the instance ids of the
   answer, waits (bounded poll of ``DescribeInstances``) until each is running, checks that
   they are spot, all in one AZ, and that exactly n_spot live instances carry the plan's
   worker tags;
2. launches the on-demand part (anchor or memory nodes) with only the subnets of the workers'
   AZ, and checks it the same way (same AZ as the workers).

"Instant" does not mean "all": a fleet may launch fewer instances than asked (listing why under
``Errors``), a service may ignore ``MinTargetCapacity`` or ``SingleAvailabilityZone``. When any
step falls short or fails (Ctrl-C included), :func:`rollback` deletes the fleets created
(``DeleteFleets`` with ``TerminateInstances``), terminates every live instance tagged with the
plan's id or returned by a fleet, waits until they are shutting-down or terminated, and
:func:`launch` raises :class:`~deepvm_core.cloud.fleet.errors.LaunchFailed` with the report.

Each ``CreateFleet`` carries a ``ClientToken`` (one per part and launch), so a retried call
cannot launch twice.

**Why one module (over 400 lines).** Preparing, launching, checking the counts and rolling
back are one transaction: each step's failure decides what the next one undoes, and reading
them apart would hide that.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from deepvm_core.cloud.fleet.ec2 import Ec2
from deepvm_core.cloud.fleet.errors import (
    AwsCallError,
    FleetInputError,
    LaunchFailed,
    RollbackReport,
)
from deepvm_core.cloud.fleet.manage import (
    DEFAULT_POLL,
    GONE_STATES,
    LIVE_STATES,
    InstanceInfo,
    PollSettings,
    Progress,
    _quiet,
    describe_ids,
    plan_instances,
    terminate,
    wait_gone,
)
from deepvm_core.cloud.fleet.placement import place_spot_zones
from deepvm_core.cloud.fleet.requests import (
    FleetRequests,
    RequestOptions,
    TemplateRef,
    build_requests,
    part_request,
)
from deepvm_core.cloud.fleet.target import FleetPart, FleetPlan

_DELETE_FLEETS_CHUNK = 25  # instant fleets per DeleteFleets call


class _StepFailed(Exception):
    """A launch step fell short (internal: becomes :class:`LaunchFailed`)."""


# ----------------------------------------------------------------------------- preflight


@dataclass(frozen=True)
class Preflight:
    """A plan checked against the account, ready to launch.

    Attributes:
        plan: what to launch.
        requests: both bodies, over :attr:`subnet_azs` (the given or the default subnets).
        subnet_azs: subnet id -> availability zone, in the order of the overrides.
        default_subnets: True when the subnets are the region's default subnets.
        region: the launch region.
    """

    plan: FleetPlan
    requests: FleetRequests
    subnet_azs: dict[str, str]
    default_subnets: bool
    region: str

    @property
    def availability_zones(self) -> list[str]:
        """The AZs the spot workers may land in, sorted."""
        return sorted(set(self.subnet_azs.values()))


def check_template(ec2: Ec2, template: TemplateRef) -> None:
    """Raise :class:`FleetInputError` unless ``template`` (and its version) exists."""
    params = ({"LaunchTemplateIds": [template.ref]} if template.is_id
              else {"LaunchTemplateNames": [template.ref]})
    kind = "id" if template.is_id else "name"
    try:
        found = ec2.call("DescribeLaunchTemplates", **params).get("LaunchTemplates") or []
    except AwsCallError as exc:
        if exc.code.startswith("InvalidLaunchTemplate"):
            raise FleetInputError(f"launch template {kind} {template.ref!r} does not exist in "
                                  f"{ec2.region} ({exc.code})") from None
        raise
    if not found:
        raise FleetInputError(f"launch template {kind} {template.ref!r} does not exist in "
                              f"{ec2.region}")
    if template.version.isdigit():
        latest = int(found[0].get("LatestVersionNumber") or 0)
        if int(template.version) > latest:
            raise FleetInputError(f"launch template {template.ref!r} has no version "
                                  f"{template.version} (latest: {latest})")


def resolve_subnets(ec2: Ec2, subnets: Sequence[str]) -> tuple[dict[str, str], bool]:
    """subnet id -> AZ of the given subnets, or of the region's default subnets (one per AZ)
    when none is given; and whether they are the defaults."""
    if subnets:
        try:
            found = list(ec2.pages("DescribeSubnets", "Subnets", SubnetIds=list(subnets)))
        except AwsCallError as exc:
            if exc.code.startswith("InvalidSubnetID"):
                raise FleetInputError(f"a subnet does not exist in {ec2.region}: "
                                      f"{exc}") from None
            raise
        azs = {s["SubnetId"]: s["AvailabilityZone"] for s in found}
        missing = [s for s in subnets if s not in azs]
        if missing:
            raise FleetInputError(f"subnet(s) not found in {ec2.region}: {', '.join(missing)}")
        return {s: azs[s] for s in subnets}, False
    found = list(ec2.pages("DescribeSubnets", "Subnets",
                           Filters=[{"Name": "default-for-az", "Values": ["true"]}]))
    if not found:
        raise FleetInputError(f"{ec2.region} has no default subnets (no default VPC): give "
                              "--subnet, once per availability zone")
    by_az = sorted(found, key=lambda s: (s["AvailabilityZone"], s["SubnetId"]))
    return {s["SubnetId"]: s["AvailabilityZone"] for s in by_az}, True


def prepare(ec2: Ec2, plan: FleetPlan, options: RequestOptions, *,
            progress: Progress = _quiet) -> Preflight:
    """Check ``plan`` against the account and dry-run both requests; launches nothing. The
    spot workers' zones follow ``options.spot_zones`` (the planned zone ID resolved to this
    account's zone name: :func:`~deepvm_core.cloud.fleet.placement.place_spot_zones`)."""
    plan = place_spot_zones(ec2, plan, options.spot_zones, progress)
    templates = {options.template_for(p) for p in plan.parts}
    for template in sorted(templates, key=str):
        progress(f"checking launch template {template}")
        check_template(ec2, template)
    progress("checking subnets" if options.subnets else "looking up the default subnets")
    subnet_azs, default = resolve_subnets(ec2, options.subnets)
    for subnet, zone in options.subnet_zones.items():
        if subnet_azs.get(subnet, zone) != zone:
            raise FleetInputError(f"--subnet {subnet}@{zone}: the subnet is in "
                                  f"{subnet_azs[subnet]}, not {zone}")
    options = replace(options, subnets=tuple(subnet_azs), subnet_zones=dict(subnet_azs))
    requests = build_requests(plan, options)
    if plan.pool_zones:  # only the pools' zones, in failover order (requests.py)
        rank = {z: i for i, z in enumerate(plan.pool_zones)}
        subnet_azs = dict(sorted(((s, z) for s, z in subnet_azs.items() if z in rank),
                                 key=lambda item: rank[item[1]]))
        progress(f"spot pools of the plan, in failover order: {', '.join(plan.pool_zones)}")
    progress(f"looking for live instances of plan {plan.plan_id}")
    live = plan_instances(ec2, plan.plan_id, LIVE_STATES)
    if live:
        raise FleetInputError(
            f"plan {plan.plan_id} already has {len(live)} live instance(s) in {ec2.region}; "
            f"see 'deepvm status --plan {plan.plan_id} --region {ec2.region}' or terminate "
            f"them with 'deepvm teardown --plan {plan.plan_id} --region {ec2.region} --yes'")
    for part, body in ((plan.spot, requests.spot), (plan.on_demand, requests.on_demand)):
        if part is not None and body is not None:
            progress(f"{part.role}: CreateFleet DryRun: {part.describe()}")
            ec2.dry_run("CreateFleet", **body)
    return Preflight(plan, requests, subnet_azs, default, ec2.region)


# ----------------------------------------------------------------------------- launch


@dataclass(frozen=True)
class PartResult:
    """One launched part: its fleet, its instances (running) and their AZ."""

    part: FleetPart
    fleet_id: str
    instances: tuple[InstanceInfo, ...]
    availability_zone: str


@dataclass(frozen=True)
class LaunchResult:
    """A launched plan: every part running in one AZ."""

    plan: FleetPlan
    region: str
    availability_zone: str
    parts: tuple[PartResult, ...]

    @property
    def instances(self) -> tuple[InstanceInfo, ...]:
        """Every instance of the plan."""
        return tuple(i for p in self.parts for i in p.instances)


def _errors_text(errors: Sequence[Any]) -> str:
    seen: dict[str, str] = {}
    for error in errors:
        if isinstance(error, dict):
            code = str(error.get("ErrorCode") or "error")
            seen.setdefault(code, " ".join(str(error.get("ErrorMessage") or "").split())[:200])
    if not seen:
        return ""
    return " (AWS: " + "; ".join(f"{c}: {m}" if m else c for c, m in seen.items()) + ")"


def _wait_running(ec2: Ec2, part: FleetPart, ids: Sequence[str], poll: PollSettings,
                  progress: Progress) -> list[InstanceInfo]:
    deadline = poll.clock() + poll.wait_timeout_s
    while True:
        infos = describe_ids(ec2, ids)
        ended = [i for i in infos if i.state not in ("pending", "running")]
        if ended:
            states = ", ".join(f"{i.instance_id} {i.state}" for i in ended)
            raise _StepFailed(f"{part.role}: {len(ended)} instance(s) ended before running "
                              f"({states})")
        running = [i for i in infos if i.state == "running"]
        if len(running) == len(ids):
            return running
        if poll.clock() >= deadline:
            raise _StepFailed(f"{part.role}: only {len(running)} of {len(ids)} instance(s) "
                              f"running after {poll.wait_timeout_s:g} s")
        progress(f"{part.role}: {len(running)}/{len(ids)} running")
        poll.sleep(max(0.0, min(poll.poll_interval_s, deadline - poll.clock())))


def _launch_part(ec2: Ec2, plan: FleetPlan, part: FleetPart, body: dict[str, Any],
                 azs: Sequence[str], token: str, fleets: list[str], seen: list[str],
                 poll: PollSettings, progress: Progress) -> PartResult:
    subnets = body["LaunchTemplateConfigs"][0]["Overrides"]
    progress(f"{part.role}: CreateFleet {part.describe()} over {len(subnets)} subnet(s) in "
             f"{', '.join(azs)}")
    answer = ec2.call("CreateFleet", ClientToken=f"deepvm-{plan.plan_id}-{part.role}-{token}",
                      **body)
    fleet_id = str(answer.get("FleetId") or "")
    if fleet_id:
        fleets.append(fleet_id)
    ids = [i for item in answer.get("Instances") or [] for i in item.get("InstanceIds") or []]
    seen.extend(ids)
    if len(ids) != part.count:
        raise _StepFailed(f"{part.role}: CreateFleet {fleet_id} launched {len(ids)} of "
                          f"{part.count} {part.instance_type}"
                          f"{_errors_text(answer.get('Errors') or [])}")
    progress(f"{part.role}: fleet {fleet_id} launched {len(ids)} instance(s); waiting until "
             "they run")
    infos = _wait_running(ec2, part, ids, poll, progress)
    wrong = [i.instance_id for i in infos
             if i.lifecycle != part.market or i.instance_type != part.instance_type]
    if wrong:
        raise _StepFailed(f"{part.role}: {len(wrong)} instance(s) are not {part.instance_type} "
                          f"{part.market}: {', '.join(wrong)}")
    landed = sorted({i.availability_zone for i in infos})
    if len(landed) != 1:
        raise _StepFailed(f"{part.role}: the {len(infos)} instances landed in {len(landed)} "
                          f"availability zones ({', '.join(landed)}), not one")
    tagged = [i for i in plan_instances(ec2, plan.plan_id, LIVE_STATES) if i.role == part.role]
    if len(tagged) != part.count:
        raise _StepFailed(f"{part.role}: {len(tagged)} live instance(s) carry the plan's tags, "
                          f"expected {part.count}")
    progress(f"{part.role}: {len(infos)} x {part.instance_type} running in {landed[0]}")
    return PartResult(part, fleet_id, tuple(infos), landed[0])


def launch(ec2: Ec2, pre: Preflight, *, poll: PollSettings = DEFAULT_POLL,
           progress: Progress = _quiet) -> LaunchResult:
    """Launch a prepared plan: spot workers first, then the on-demand part in their AZ.

    Raises :class:`LaunchFailed` (after :func:`rollback`) when a step falls short or fails.
    """
    plan = pre.plan
    token = uuid.uuid4().hex[:16]
    fleets: list[str] = []
    seen: list[str] = []
    results: list[PartResult] = []
    try:
        az: str | None = None
        if plan.spot is not None and pre.requests.spot is not None:
            spot = _launch_part(ec2, plan, plan.spot, pre.requests.spot,
                                pre.availability_zones, token, fleets, seen, poll, progress)
            results.append(spot)
            az = spot.availability_zone
        if plan.on_demand is not None:
            options = pre.requests.options
            if az is None:
                subnets, azs = list(pre.subnet_azs), pre.availability_zones
            else:
                subnets, azs = [s for s, z in pre.subnet_azs.items() if z == az], [az]
            body = part_request(plan, plan.on_demand, options, subnets)
            on_demand = _launch_part(ec2, plan, plan.on_demand, body, azs, token, fleets, seen,
                                     poll, progress)
            if az is not None and on_demand.availability_zone != az:
                raise _StepFailed(f"{plan.on_demand.role}: landed in "
                                  f"{on_demand.availability_zone}, not in the workers' AZ {az}")
            results.append(on_demand)
    except (_StepFailed, AwsCallError) as exc:
        progress(f"launch failed, rolling back: {exc}")
        raise LaunchFailed(str(exc), rollback(ec2, plan.plan_id, fleets, seen, poll=poll,
                                              progress=progress)) from None
    except KeyboardInterrupt:
        progress("interrupted: rolling back")
        raise LaunchFailed("interrupted", rollback(ec2, plan.plan_id, fleets, seen, poll=poll,
                                                   progress=progress),
                           interrupted=True) from None
    except BaseException:
        rollback(ec2, plan.plan_id, fleets, seen, poll=poll, progress=progress)
        raise
    return LaunchResult(plan, ec2.region, results[-1].availability_zone, tuple(results))


def launch_part(ec2: Ec2, plan: FleetPlan, part: FleetPart, options: RequestOptions,
                subnet_azs: dict[str, str], zone: str, *, poll: PollSettings = DEFAULT_POLL,
                progress: Progress = _quiet) -> PartResult:
    """Launch one part of a running plan in ``zone`` (``deepvm watch``: spot workers again, or
    the workers on demand as ``fallback-worker``), with :func:`launch`'s steps and checks (tags,
    counts, one AZ, running). ``subnet_azs``: subnet -> AZ (:func:`resolve_subnets`); only the
    subnets of ``zone`` are used, or the zone itself without subnets.

    Raises :class:`LaunchFailed` after rolling back what this call launched only (the plan's
    other instances keep running).
    """
    subnets = [s for s, z in subnet_azs.items() if z == zone]
    placed = replace(plan, pool_zones=(zone,))
    body = part_request(placed, part, replace(options, subnets=tuple(subnets),
                                              subnet_zones=dict(subnet_azs)), subnets)
    token = uuid.uuid4().hex[:16]
    fleets: list[str] = []
    seen: list[str] = []
    try:
        return _launch_part(ec2, placed, part, body, [zone], token, fleets, seen, poll,
                            progress)
    except (_StepFailed, AwsCallError) as exc:
        progress(f"{part.role}: launch in {zone} failed, rolling back: {exc}")
        raise LaunchFailed(str(exc), rollback(ec2, plan.plan_id, fleets, seen, poll=poll,
                                              progress=progress, role=part.role)) from None
    except BaseException:
        rollback(ec2, plan.plan_id, fleets, seen, poll=poll, progress=progress, role=part.role)
        raise


# ----------------------------------------------------------------------------- rollback


def rollback(ec2: Ec2, plan_id: str, fleet_ids: Sequence[str], instance_ids: Sequence[str], *,
             poll: PollSettings = DEFAULT_POLL, progress: Progress = _quiet,
             rounds: int = 2, role: str | None = None) -> RollbackReport:
    """Terminate everything a launch of ``plan_id`` created and wait until each instance is
    shutting-down or terminated. Never raises for an AWS failure: the report lists it.

    The live instances tagged with the plan (all of this launch: :func:`prepare` refused a plan
    with live instances) and ``instance_ids`` are listed first; then ``fleet_ids`` are deleted
    with their instances (``DeleteFleets``, ``TerminateInstances``), the listed instances are
    terminated, and the tag is searched again (``rounds`` times in all) for instances that
    became visible late. With ``role``, only the plan's instances of that role are searched
    by tag (a part launched into a running plan: :func:`launch_part`).
    """
    report = RollbackReport()
    progress(f"rolling back plan {plan_id}: {len(fleet_ids)} fleet(s), "
             f"{len(instance_ids)} instance id(s) known")
    targets: list[str] = []
    try:
        targets = [i.instance_id for i in plan_instances(ec2, plan_id, LIVE_STATES)
                   if role is None or i.role == role]
        known = list(dict.fromkeys(instance_ids))
        if known:
            targets += [i.instance_id for i in describe_ids(ec2, known)
                        if i.state not in GONE_STATES]
    except AwsCallError as exc:
        report.errors.append(str(exc))
        targets = list(instance_ids)
    targets = list(dict.fromkeys(targets))
    fleets = list(dict.fromkeys(fleet_ids))
    for start in range(0, len(fleets), _DELETE_FLEETS_CHUNK):
        chunk = fleets[start:start + _DELETE_FLEETS_CHUNK]
        progress(f"DeleteFleets {', '.join(chunk)} (TerminateInstances)")
        try:
            answer = ec2.call("DeleteFleets", FleetIds=chunk, TerminateInstances=True)
        except AwsCallError as exc:
            report.notes.append(str(exc))
            continue
        report.deleted_fleets += [str(d.get("FleetId"))
                                  for d in answer.get("SuccessfulFleetDeletions") or []]
        for failed in answer.get("UnsuccessfulFleetDeletions") or []:
            error = failed.get("Error") or {}
            report.notes.append(f"DeleteFleets {failed.get('FleetId')}: {error.get('Code')}: "
                                f"{error.get('Message')}")
    done: list[str] = []
    left: list[str] = []
    for round_ in range(rounds):
        try:
            if round_ > 0:
                targets = [i.instance_id for i in plan_instances(ec2, plan_id, LIVE_STATES)
                           if i.instance_id not in done and (role is None or i.role == role)]
            if not targets:
                break
            progress(f"TerminateInstances: {len(targets)} instance(s)")
            terminate(ec2, targets)
            left = wait_gone(ec2, targets, poll, progress)
            done += [i for i in targets if i not in left]
            if left:
                break
        except AwsCallError as exc:
            report.errors.append(str(exc))
            left = [i for i in targets if i not in done]
            break
    report.terminated = done
    report.still_running = left
    return report
