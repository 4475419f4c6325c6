"""Where the spot workers go and what they may cost (issue 25, part 4).

**Zones.** A plan's spot price is one zone's (:mod:`deepvm_core.market.zones`): the export
records the zone ID (``chosen.spot_zone``, :mod:`deepvm_core.io.zone_record`; an older export
without it: the chosen type's ``spot_by_zone_usd_per_hour`` row in ``catalog.instance_types``),
the same zone in every account. An EC2 Fleet override takes the account's zone *name* or a
subnet, so ``deepvm launch`` resolves the IDs (``DescribeAvailabilityZones``, ``ZoneId`` ->
``ZoneName``) and, by ``--spot-zones``:

* ``planned`` (default): pins the planned zone (the cheapest): the spot workers get only the
  subnets (or the ``AvailabilityZone`` override) of that zone;
* ``by-price``: every zone with a price, cheapest first, as override priorities with
  ``capacity-optimized-prioritized`` (the price cap below keeps the cluster within PW);
* ``any``: no zone restriction (``price-capacity-optimized`` over the subnets given).

A plan evaluated on spot traces keeps its pools' zones (they are zone names already).
``deepvm export`` (no AWS call) cannot resolve IDs: it tags the requests ``deepvm:zone-id``
and ``launch.txt`` says how to resolve it by hand.

**Price cap.** By default the spot request's ``SpotOptions.MaxTotalPrice`` is PW minus the
on-demand part's hourly price (the anchor or the memory nodes, at the catalog's on-demand
prices): the most the spot workers may cost together for the cluster to stay within PW
(:attr:`FleetPlan.spot_cap_usd_per_hour`). ``--spot-max-total-price`` sets another cap,
``--no-spot-price-cap`` none; a plan without PW has none.

This module reads exports; :mod:`~deepvm_core.cloud.fleet.placement` asks AWS.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from deepvm_core.cloud.fleet.errors import FleetInputError
from deepvm_core.market.pools import ZONE_ID

SpotZones = Literal["planned", "by-price", "any"]
#: ``--spot-zones``: how the spot workers' zones follow the plan (module docstring).
SPOT_ZONE_MODES: tuple[SpotZones, ...] = ("planned", "by-price", "any")
DEFAULT_SPOT_ZONES: SpotZones = "planned"
#: The tag that records the planned zone ID on every fleet and instance.
TAG_ZONE_ID = "deepvm:zone-id"


def _rows(export: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    catalog = export.get("catalog")
    types = catalog.get("instance_types") if isinstance(catalog, Mapping) else None
    rows: dict[str, Mapping[str, Any]] = {}
    if isinstance(types, Mapping):
        for kind in ("gpu_types", "cpu_types"):
            for row in types.get(kind) or []:
                if isinstance(row, Mapping) and isinstance(row.get("name"), str):
                    rows[row["name"]] = row
    return rows


def _zone_id(value: Any, where: str) -> str:
    if not isinstance(value, str) or not ZONE_ID.match(value):
        raise FleetInputError(f"the export's {where} = {value!r} is not an availability zone "
                              "ID (use1-az5)")
    return value


def spot_zone_ids(export: Mapping[str, Any], config: Mapping[str, Any], gpu_type: str,
                  where: str) -> tuple[tuple[str, ...], str | None]:
    """The zone IDs of ``gpu_type``'s spot prices, cheapest first, and the planned zone (where
    the workers are pinned); ``((), None)`` when the export has no per-zone prices."""
    record = config.get("spot_zone")
    if isinstance(record, Mapping):
        ids = record.get("zones_by_price")
        if not isinstance(ids, list) or not ids:
            raise FleetInputError(f"the export's {where}.spot_zone.zones_by_price = {ids!r} is "
                                  "not a list of zone IDs")
        zones = tuple(_zone_id(z, f"{where}.spot_zone.zones_by_price[{i}]")
                      for i, z in enumerate(ids))
        planned = _zone_id(record.get("launch_zone_id"), f"{where}.spot_zone.launch_zone_id")
        if planned not in zones:
            raise FleetInputError(f"the export's {where}.spot_zone.launch_zone_id {planned} is "
                                  "not one of its zones_by_price")
        return zones, planned
    prices = _rows(export).get(gpu_type, {}).get("spot_by_zone_usd_per_hour")
    if not isinstance(prices, Mapping) or not prices:
        return (), None
    ordered = sorted(prices.items(), key=lambda item: (float(item[1]), str(item[0])))
    zones = tuple(_zone_id(z, f"catalog row {gpu_type}.spot_by_zone_usd_per_hour")
                  for z, _ in ordered)
    return zones, zones[0]


def spot_cap(export: Mapping[str, Any], on_demand: Sequence[tuple[str, int]]) -> float | None:
    """PW minus the on-demand part (``on_demand``: (instance type, count) at the rows'
    on-demand prices), USD per hour; ``None`` without PW, without a row's price, or when
    nothing is left for the spot workers."""
    inputs = export.get("inputs")
    pw = inputs.get("pw_usd_per_hour") if isinstance(inputs, Mapping) else None
    if isinstance(pw, bool) or not isinstance(pw, (int, float)) or not pw > 0:
        return None
    rows = _rows(export)
    part = 0.0
    for name, count in on_demand:
        price = rows.get(name, {}).get("on_demand_usd_per_hour")
        if isinstance(price, bool) or not isinstance(price, (int, float)):
            return None
        part += count * float(price)
    cap = float(pw) - part
    return round(cap, 6) if cap > 0 else None
