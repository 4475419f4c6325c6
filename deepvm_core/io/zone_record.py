"""The export's record of the zone behind the chosen configuration's spot price
(``chosen.spot_zone`` of ``deepvm recommend`` and ``deepvm plan`` JSON), which ``deepvm export
--to ec2-fleet`` and ``deepvm launch`` read (:mod:`deepvm_core.cloud.fleet.target`)::

    "spot_zone": {"rule": "cheapest", "zone_id": "use1-az5", "launch_zone_id": "use1-az5",
                  "spot_usd_per_hour": 2.7531,
                  "zones_by_price": ["use1-az5", "use1-az6", "use1-az1", "use1-az2"],
                  "sentence": "Spot price: 2.7531 USD/h per p3.16xlarge, ..."}

Zones are zone IDs (the same in every AWS account); ``launch`` resolves them to the account's
zone names. ``rule`` is the zone-price rule (:mod:`deepvm_core.market.zones`), ``zone_id`` the
zone whose price the plan used (``null`` for the median of an even count), ``launch_zone_id``
the zone where the workers are pinned (the cheapest). The record is there only when the chosen
configuration has spot VMs of a type with per-zone prices, so exports of catalogs without them
are as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from deepvm_core.catalog import Catalog
from deepvm_core.market.zones import ZonePriceRule, spot_row_zone_prices, zone_sentence
from deepvm_core.model import Configuration


def spot_zone_record(catalog: Catalog, config: Configuration | None,
                     rule: ZonePriceRule | None,
                     pw_usd_per_hour: float | None = None) -> dict[str, Any] | None:
    """The ``spot_zone`` record of ``config`` on ``catalog`` (priced by ``rule``), or ``None``
    (module docstring). ``rule`` ``None``: the catalog's prices as they are."""
    found = spot_row_zone_prices(catalog, config, rule)
    zp = found[1] if found is not None else None
    if config is None or zp is None:
        return None
    return {"rule": zp.rule, "zone_id": zp.zone_id, "launch_zone_id": zp.launch_zone_id,
            "spot_usd_per_hour": zp.spot_usd_per_hour,
            "zones_by_price": list(zp.zone_ids_by_price),
            "sentence": zone_sentence(catalog, config, rule=rule,
                                      pw_usd_per_hour=pw_usd_per_hour)}


def with_spot_zone(doc: Mapping[str, Any], catalog: Catalog, config: Configuration | None,
                   rule: ZonePriceRule | None,
                   pw_usd_per_hour: float | None = None) -> dict[str, Any]:
    """A copy of the export ``doc`` whose ``chosen`` (``config``) carries ``spot_zone`` when
    there is one to record."""
    out = dict(doc)
    record = spot_zone_record(catalog, config, rule, pw_usd_per_hour)
    if record is not None and isinstance(out.get("chosen"), Mapping):
        out["chosen"] = {**out["chosen"], "spot_zone": record}
    return out
