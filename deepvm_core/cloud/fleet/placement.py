"""Placing the spot workers in the plan's zones on the account (``deepvm launch``): the zone
IDs resolved to this account's zone names (:mod:`~deepvm_core.cloud.fleet.zones` says why and
how)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from deepvm_core.cloud.fleet.ec2 import Ec2
from deepvm_core.cloud.fleet.errors import FleetInputError
from deepvm_core.cloud.fleet.target import FleetPlan
from deepvm_core.cloud.fleet.zones import SpotZones


def resolve_zone_names(ec2: Ec2, zone_ids: Sequence[str]) -> dict[str, str]:
    """zone ID -> the account's zone name (``DescribeAvailabilityZones`` with ``ZoneIds``).

    Raises:
        FleetInputError: a zone ID the region does not have.
    """
    answer = ec2.call("DescribeAvailabilityZones", ZoneIds=list(zone_ids))
    names = {str(z.get("ZoneId")): str(z.get("ZoneName"))
             for z in answer.get("AvailabilityZones") or []}
    missing = [z for z in zone_ids if z not in names]
    if missing:
        raise FleetInputError(f"zone ID(s) {', '.join(missing)} of the plan are not in "
                              f"{ec2.region}: launch in the catalog's region")
    return names


def place_spot_zones(ec2: Ec2, plan: FleetPlan, mode: SpotZones,
                     progress: Callable[[str], None]) -> FleetPlan:
    """``plan`` with the spot workers' zones (``pool_zones``, zone names) set by ``mode``
    (module docstring); unchanged for ``any``, for a plan with pools or without zone IDs."""
    if mode == "any" or plan.pool_zones or not plan.spot_zone_ids or plan.spot is None:
        return plan
    wanted = ((plan.planned_zone_id,) if mode == "planned" and plan.planned_zone_id
              else plan.spot_zone_ids)
    progress(f"resolving zone ID(s) {', '.join(wanted)} (DescribeAvailabilityZones)")
    names = resolve_zone_names(ec2, wanted)
    zones = tuple(names[z] for z in wanted)
    progress(", ".join(f"{z} is {names[z]}" for z in wanted) + " in this account")
    return replace(plan, pool_zones=zones)
