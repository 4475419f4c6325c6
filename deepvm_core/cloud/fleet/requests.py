"""EC2 Fleet request bodies of a plan (``launch.txt`` and the files they go to:
:mod:`~deepvm_core.cloud.fleet.bundle`).

One EC2 Fleet cannot fix which launch template is spot and which on-demand (an override has no
market field), so a configuration becomes two ``CreateFleet`` requests of ``Type: instant``:

* ``spot-workers.json``: the spot GPU workers. ``TotalTargetCapacity`` = ``SpotTargetCapacity``
  = n_spot, ``DefaultTargetCapacityType: spot``; ``SpotOptions``: ``AllocationStrategy:
  price-capacity-optimized``, ``SingleAvailabilityZone`` and ``SingleInstanceType: true``,
  ``MinTargetCapacity`` = n_spot, so all workers land together in one AZ or none launch. One
  override per subnet (an ``instant`` fleet takes one subnet per override), so the allocation
  strategy can pick the deepest pool among the AZs.
* ``on-demand.json``: the anchor GPU VM (Single Anchor) or the memory nodes (Tiering), with
  ``OnDemandTargetCapacity``, ``SingleAvailabilityZone`` and ``MinTargetCapacity``. It belongs
  in the AZ where the workers landed (checkpoint traffic stays in one AZ; crossing AZs costs
  about 0.02 USD per GB): ``deepvm launch`` keeps only the subnets of that AZ, and
  ``launch.txt`` shows how to do it by hand.

**Pools.** When the plan's configuration was evaluated on spot traces (a plan with
:attr:`~deepvm_core.cloud.fleet.target.FleetPlan.pool_zones`), the spot workers may only use
those zones, in the failover order: ``AllocationStrategy: capacity-optimized-prioritized`` and
one override per subnet of a pool zone, ordered by the zone's rank, ``Priority`` = rank (1 for
the first pool; lower is preferred), still ``SingleAvailabilityZone``. Subnets of other zones
are left out. Without subnets, one override per pool zone names its ``AvailabilityZone``
(the default VPC's subnet there). A subnet's zone comes from ``SUBNET@ZONE`` or, in
``deepvm launch``, from ``DescribeSubnets``; an export with pools and subnets of unknown zone is
refused. The on-demand part keeps only the subnets of the pool zones.

**Zones and price cap** (:mod:`~deepvm_core.cloud.fleet.zones`). ``MaxPrice`` is never set
(AWS discourages it for spot). The spot request's ``MaxTotalPrice`` (USD per hour for the whole
fleet) is PW minus the on-demand part by default (:attr:`~deepvm_core.cloud.fleet.target.
FleetPlan.spot_cap_usd_per_hour`), or the user's, or none (``cap_spot_at_pw=False``); the
on-demand request's only when the user asks. A plan with per-zone prices carries the tag
``deepvm:zone-id`` (the planned zone ID); ``deepvm launch`` resolves it to a zone name and
pins it through ``pool_zones`` as above. Every instance and both fleets carry the tags
``deepvm:plan``, ``deepvm:role`` and ``deepvm:catalog``. Every body is checked against
botocore's service model of ``CreateFleet`` before it is returned or written.

:func:`build_requests` is pure (no AWS call, no file).
"""
from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from deepvm_core.cloud.fleet.errors import FleetInputError
from deepvm_core.cloud.fleet.target import (
    TAG_CATALOG,
    TAG_PLAN,
    TAG_ROLE,
    FleetPart,
    FleetPlan,
)
from deepvm_core.cloud.fleet.zones import DEFAULT_SPOT_ZONES, TAG_ZONE_ID, SpotZones
from deepvm_core.market.pools import ZONE_NAME

SPOT_ALLOCATION_STRATEGY = "price-capacity-optimized"
#: The spot strategy of a plan with pools: the failover order as override priorities.
POOL_ALLOCATION_STRATEGY = "capacity-optimized-prioritized"
ON_DEMAND_ALLOCATION_STRATEGY = "lowest-price"
DEFAULT_TEMPLATE_VERSION = "$Latest"

_TEMPLATE_ID = re.compile(r"^lt-[0-9a-f]{8,17}$")
_TEMPLATE_NAME = re.compile(r"^[a-zA-Z0-9().\-/_]{3,128}$")
_TEMPLATE_VERSION = re.compile(r"^(\$Latest|\$Default|[1-9][0-9]*)$")
_SUBNET_ID = re.compile(r"^subnet-[0-9a-f]{8,17}$")


# ----------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class TemplateRef:
    """A launch template by name or id (``lt-...``), and a version.

    Attributes:
        ref: the template's name or id.
        version: ``$Latest`` (default), ``$Default`` or a version number.
    """

    ref: str
    version: str = DEFAULT_TEMPLATE_VERSION

    @property
    def is_id(self) -> bool:
        """True when :attr:`ref` is a template id (``lt-0123...``)."""
        return bool(_TEMPLATE_ID.match(self.ref))

    def specification(self) -> dict[str, str]:
        """The ``LaunchTemplateSpecification`` of a fleet request."""
        key = "LaunchTemplateId" if self.is_id else "LaunchTemplateName"
        return {key: self.ref, "Version": self.version}

    def __str__(self) -> str:
        return f"{self.ref} ({self.version})"

    def argument(self) -> str:
        """How ``--gpu-template`` takes it back: ``NAME``, or ``NAME:VERSION`` when the
        version is not ``$Latest``."""
        return self.ref if self.version == DEFAULT_TEMPLATE_VERSION else \
            f"{self.ref}:{self.version}"


def parse_template(text: str, option: str = "--gpu-template") -> TemplateRef:
    """``NAME``, ``lt-ID``, ``NAME:VERSION`` or ``lt-ID:VERSION`` (version ``$Latest``,
    ``$Default`` or a number; default ``$Latest``)."""
    ref, _, version = text.strip().partition(":")
    version = version or DEFAULT_TEMPLATE_VERSION
    if version.lower() in ("latest", "default"):
        version = "$" + version.capitalize()
    if ref.startswith("lt-") and not _TEMPLATE_ID.match(ref):
        raise FleetInputError(f"{option} {text!r}: {ref!r} is not a launch template id "
                              "(lt- and 8 to 17 hex digits)")
    if not (_TEMPLATE_ID.match(ref) or _TEMPLATE_NAME.match(ref)):
        raise FleetInputError(f"{option} {text!r}: {ref!r} is not a launch template name (3 to "
                              "128 letters, digits and ( ) . - / _) or id (lt-...)")
    if not _TEMPLATE_VERSION.match(version):
        raise FleetInputError(f"{option} {text!r}: version {version!r} is not $Latest, "
                              "$Default or a number")
    return TemplateRef(ref, version)


def _subnet_items(values: Sequence[str] | None) -> list[tuple[str, str | None]]:
    items: list[tuple[str, str | None]] = []
    for value in values or ():
        for item in value.split(","):
            text = item.strip()
            if not text:
                continue
            subnet, sep, zone = text.partition("@")
            if not _SUBNET_ID.match(subnet):
                raise FleetInputError(f"--subnet {subnet!r} is not a subnet id (subnet- and 8 "
                                      "to 17 hex digits)")
            if sep and not ZONE_NAME.match(zone):
                raise FleetInputError(f"--subnet {text!r}: {zone!r} is not an availability "
                                      "zone (SUBNET@us-east-1a)")
            items.append((subnet, zone if sep else None))
    return items


def parse_subnets(values: Sequence[str] | None) -> tuple[str, ...]:
    """Subnet ids from repeated and comma-separated ``--subnet`` values (``SUBNET`` or
    ``SUBNET@ZONE``), in order, once each."""
    return tuple(dict.fromkeys(s for s, _ in _subnet_items(values)))


def parse_subnet_zones(values: Sequence[str] | None) -> dict[str, str]:
    """subnet id -> availability zone, for the ``--subnet SUBNET@ZONE`` values that name one;
    a subnet given twice with two zones is an error."""
    zones: dict[str, str] = {}
    for subnet, zone in _subnet_items(values):
        if zone is None:
            continue
        if zones.setdefault(subnet, zone) != zone:
            raise FleetInputError(f"--subnet {subnet} is given in two zones, {zones[subnet]} "
                                  f"and {zone}")
    return zones


def _price_text(value: float | None, option: str) -> str | None:
    if value is None:
        return None
    if not value > 0 or value != value or value == float("inf"):
        raise FleetInputError(f"{option} {value!r} must be a positive number of USD per hour")
    return format(value, ".6g")


@dataclass(frozen=True)
class RequestOptions:
    """The user's choices for the fleet requests.

    Attributes:
        gpu_template: launch template of the GPU VMs (spot workers and the anchor).
        cpu_template: launch template of the memory nodes (Tiering only).
        subnets: subnet ids, one or more per AZ to diversify over; empty: the template's
            network settings (or the default VPC).
        spot_max_total_price_usd_per_hour: ``SpotOptions.MaxTotalPrice``; ``None``: not set.
        on_demand_max_total_price_usd_per_hour: ``OnDemandOptions.MaxTotalPrice``; ``None``:
            not set.
        subnet_zones: subnet id -> availability zone, for the subnets whose zone is known
            (``SUBNET@ZONE``, or looked up by ``deepvm launch``); needed for a plan with pools.
        cap_spot_at_pw: without ``spot_max_total_price_usd_per_hour``, cap the spot workers
            at PW minus the on-demand part (default); ``False``: no cap.
        spot_zones: how ``deepvm launch`` places the spot workers in the plan's zones
            (``planned``, ``by-price``, ``any``; :mod:`~deepvm_core.cloud.fleet.zones`).
    """

    gpu_template: TemplateRef
    cpu_template: TemplateRef | None = None
    subnets: tuple[str, ...] = ()
    spot_max_total_price_usd_per_hour: float | None = None
    on_demand_max_total_price_usd_per_hour: float | None = None
    subnet_zones: Mapping[str, str] = field(default_factory=dict)
    cap_spot_at_pw: bool = True
    spot_zones: SpotZones = DEFAULT_SPOT_ZONES

    def template_for(self, part: FleetPart) -> TemplateRef:
        """The launch template of ``part``; an error when the plan needs a CPU template
        and none was given."""
        if part.uses_gpu_template:
            return self.gpu_template
        if self.cpu_template is None:
            raise FleetInputError(f"the configuration has {part.describe()}: give their launch "
                                  "template with --cpu-template")
        return self.cpu_template


# ----------------------------------------------------------------------------- bodies


def _tags(plan: FleetPlan, part: FleetPart) -> list[dict[str, str]]:
    tags = [{"Key": TAG_PLAN, "Value": plan.plan_id}, {"Key": TAG_ROLE, "Value": part.role},
            {"Key": TAG_CATALOG, "Value": plan.catalog_name}]
    if plan.planned_zone_id:
        tags.append({"Key": TAG_ZONE_ID, "Value": plan.planned_zone_id})
    return tags


def effective_spot_cap(plan: FleetPlan, options: RequestOptions) -> float | None:
    """The spot request's ``MaxTotalPrice``, USD per hour: the user's, else PW minus the
    on-demand part when ``options.cap_spot_at_pw``, else ``None``."""
    if options.spot_max_total_price_usd_per_hour is not None:
        return options.spot_max_total_price_usd_per_hour
    return plan.spot_cap_usd_per_hour if options.cap_spot_at_pw else None


def _pool_subnets(plan: FleetPlan, subnets: Sequence[str],
                  zones: Mapping[str, str]) -> list[tuple[str, int]]:
    """The subnets of the plan's pool zones with their zone's rank (0 = first pool), ordered
    by rank, then as given."""
    unknown = [s for s in subnets if s not in zones]
    if unknown:
        raise FleetInputError(
            f"the plan's spot pools are in {', '.join(plan.pool_zones)}: give each --subnet its "
            f"zone as SUBNET@ZONE ({', '.join(unknown)} has none), or launch with "
            "'deepvm launch', which looks them up")
    rank = {z: i for i, z in enumerate(plan.pool_zones)}
    kept = [(s, rank[zones[s]]) for s in subnets if zones[s] in rank]
    if not kept:
        given = ", ".join(f"{s} ({zones[s]})" for s in subnets)
        raise FleetInputError(f"no subnet is in a zone of the plan's spot pools "
                              f"({', '.join(plan.pool_zones)}): {given}")
    return sorted(kept, key=lambda item: item[1])


def _overrides(plan: FleetPlan, part: FleetPart, subnets: Sequence[str],
               zones: Mapping[str, str]) -> list[dict[str, Any]]:
    """One override per subnet (or one without a subnet); with pools, see the module
    docstring."""
    kind = part.instance_type
    if not plan.pool_zones:
        return [{"InstanceType": kind, "SubnetId": s} for s in subnets] or [
            {"InstanceType": kind}]
    if part.market == "spot":
        if not subnets:
            return [{"InstanceType": kind, "AvailabilityZone": z, "Priority": float(i + 1)}
                    for i, z in enumerate(plan.pool_zones)]
        return [{"InstanceType": kind, "SubnetId": s, "Priority": float(r + 1)}
                for s, r in _pool_subnets(plan, subnets, zones)]
    if not subnets:
        return [{"InstanceType": kind}]
    return [{"InstanceType": kind, "SubnetId": s} for s, _ in _pool_subnets(plan, subnets, zones)]


def part_request(plan: FleetPlan, part: FleetPart, options: RequestOptions,
                 subnets: Sequence[str] | None = None) -> dict[str, Any]:
    """The ``CreateFleet`` body of one part (validated).

    Args:
        subnets: the subnets of the overrides; default ``options.subnets``.
    """
    template = options.template_for(part)
    chosen_subnets = options.subnets if subnets is None else tuple(subnets)
    overrides = _overrides(plan, part, chosen_subnets, options.subnet_zones)
    n = part.count
    body: dict[str, Any] = {"Type": "instant"}
    spot = part.market == "spot"
    own, other = (("SpotTargetCapacity", "OnDemandTargetCapacity") if spot
                  else ("OnDemandTargetCapacity", "SpotTargetCapacity"))
    body["TargetCapacitySpecification"] = {
        "TotalTargetCapacity": n, own: n, other: 0, "DefaultTargetCapacityType": part.market}
    if spot:
        strategy = POOL_ALLOCATION_STRATEGY if plan.pool_zones else SPOT_ALLOCATION_STRATEGY
        price = _price_text(effective_spot_cap(plan, options), "--spot-max-total-price")
    else:
        strategy = ON_DEMAND_ALLOCATION_STRATEGY
        price = _price_text(options.on_demand_max_total_price_usd_per_hour,
                            "--on-demand-max-total-price")
    market_options: dict[str, Any] = {
        "AllocationStrategy": strategy, "SingleInstanceType": True,
        "SingleAvailabilityZone": True, "MinTargetCapacity": n}
    if price is not None:
        market_options["MaxTotalPrice"] = price
    body["SpotOptions" if spot else "OnDemandOptions"] = market_options
    body["LaunchTemplateConfigs"] = [{
        "LaunchTemplateSpecification": template.specification(), "Overrides": overrides}]
    tags = _tags(plan, part)
    body["TagSpecifications"] = [{"ResourceType": "instance", "Tags": tags},
                                 {"ResourceType": "fleet", "Tags": list(tags)}]
    validate_request(body)
    return body


@functools.lru_cache(maxsize=1)
def _create_fleet_shape() -> Any:
    try:
        import botocore.session
    except ImportError:
        raise FleetInputError("botocore is needed to check fleet requests: pip install "
                              "'deepvm-studio[aws]'") from None
    model = botocore.session.get_session().get_service_model("ec2")
    return model.operation_model("CreateFleet").input_shape


def validate_request(body: Mapping[str, Any]) -> None:
    """Check ``body`` against botocore's EC2 service model of ``CreateFleet``; raises
    :class:`FleetInputError` with botocore's report when it does not fit."""
    from botocore.validate import ParamValidator

    report = ParamValidator().validate(dict(body), _create_fleet_shape())
    if report.has_errors():
        problems = "; ".join(report.generate_report().splitlines())
        raise FleetInputError(f"the CreateFleet request is invalid: {problems}")


@dataclass(frozen=True)
class FleetRequests:
    """The request bodies of a plan (``None`` for a part the plan does not have)."""

    plan: FleetPlan
    options: RequestOptions
    spot: dict[str, Any] | None
    on_demand: dict[str, Any] | None


def build_requests(plan: FleetPlan, options: RequestOptions) -> FleetRequests:
    """Both ``CreateFleet`` bodies of ``plan`` (validated)."""
    spot = part_request(plan, plan.spot, options) if plan.spot else None
    on_demand = part_request(plan, plan.on_demand, options) if plan.on_demand else None
    return FleetRequests(plan, options, spot, on_demand)
