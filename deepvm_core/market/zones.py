"""Spot prices per availability zone: which zone's price a plan uses, and the sentence a card
shows about it.

A catalog row may carry ``spot_by_zone_usd_per_hour`` (USD per hour, one VM), keyed by **zone
ID** (``use1-az5``): the same physical zone in every AWS account, unlike zone names
(``us-east-1a``), which AWS maps to zones per account. The row's ``spot_usd_per_hour`` is one
aggregate of those prices (the fetch and the SkyPilot import store the cheapest zone's by
default). A spot price may hold in one zone only: p3.16xlarge's 2.7531 USD/h is use1-az5's,
the three other zones of us-east-1 ask 3.59 to 6.29 USD/h.

**The zone-price rule** (:data:`ZONE_PRICE_RULES`, default :data:`DEFAULT_ZONE_PRICE`) picks the
spot price a plan uses from the per-zone prices:

* ``cheapest``: the lowest zone price (what the bundled catalogs store: today's plans);
* ``median``: ``statistics.median`` of the zone prices (for an even count, the mean of the two
  middle ones), a price that holds in half the zones.

A capacity-weighted price is not offered (:data:`CAPACITY_WEIGHTED_NOTE`): no catalog records
spot capacity per zone.

:func:`zone_priced_catalog` applies a rule to every type with per-zone prices (the CLI's
``--zone-price``; types without per-zone prices keep their price). Whatever the rule, the zone
where ``deepvm launch`` pins the spot workers is the **cheapest** zone (:attr:`ZonePrices.
launch_zone_id`): under ``median`` the plan's price is then an upper bound for half the zones.

Pure: no I/O.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Literal, TypeVar

from deepvm_core.catalog import Catalog
from deepvm_core.catalog.types import InstanceType
from deepvm_core.errors import InputError
from deepvm_core.model import Configuration

T = TypeVar("T", bound=InstanceType)
ZonePriceRule = Literal["cheapest", "median"]
#: The rules a plan can price spot VMs by (module docstring).
ZONE_PRICE_RULES: tuple[ZonePriceRule, ...] = ("cheapest", "median")
#: The default rule: the cheapest zone, what the catalogs store (the CLI's and the
#: dashboard's default).
DEFAULT_ZONE_PRICE: ZonePriceRule = "cheapest"
#: Each rule in words (the CLI's help, the card).
ZONE_PRICE_WORDS: dict[ZonePriceRule, str] = {
    "cheapest": "the cheapest zone's price",
    "median": "the median over the zones",
}
#: Why there is no capacity-weighted rule.
CAPACITY_WEIGHTED_NOTE = ("A capacity-weighted zone price is not offered: no catalog records "
                          "spot capacity per zone (AWS publishes none without an account; its "
                          "Spot placement scores need credentials).")
#: Two prices closer than this (USD/hour) are the same price.
_SAME_PRICE_USD = 1e-9


def check_rule(rule: str) -> ZonePriceRule:
    """``rule`` if it is one of :data:`ZONE_PRICE_RULES`.

    Raises:
        InputError: naming the field ``zone_price`` and the rules.
    """
    for known in ZONE_PRICE_RULES:
        if rule == known:
            return known
    raise InputError("zone_price", rule, f"must be one of {', '.join(ZONE_PRICE_RULES)} "
                                         "(capacity-weighted: no catalog has the data)")


@dataclass(frozen=True)
class ZonePrices:
    """One instance type's spot prices over the zones, and the price a rule picks.

    Attributes:
        instance_type: the type's name.
        rule: the rule that gave :attr:`spot_usd_per_hour`, or ``None`` when the price is the
            catalog's own and matches no rule (an edited price).
        spot_usd_per_hour: the price a plan uses, USD per hour, one VM.
        zones: (zone ID, USD per hour) of every zone with a price, cheapest first (ties: by ID).
    """

    instance_type: str
    rule: ZonePriceRule | None
    spot_usd_per_hour: float
    zones: tuple[tuple[str, float], ...]

    @property
    def low_usd_per_hour(self) -> float:
        """The cheapest zone's price, USD per hour."""
        return self.zones[0][1]

    @property
    def high_usd_per_hour(self) -> float:
        """The dearest zone's price, USD per hour."""
        return self.zones[-1][1]

    @property
    def median_usd_per_hour(self) -> float:
        """The median of the zone prices, USD per hour."""
        return float(statistics.median(p for _, p in self.zones))

    @property
    def launch_zone_id(self) -> str:
        """The zone where ``deepvm launch`` pins the spot workers: the cheapest."""
        return self.zones[0][0]

    @property
    def zone_ids_by_price(self) -> tuple[str, ...]:
        """Every zone ID, cheapest first (the launch order of ``--spot-zones by-price``)."""
        return tuple(z for z, _ in self.zones)

    @property
    def zone_id(self) -> str | None:
        """The zone whose price :attr:`spot_usd_per_hour` is (the cheapest of those at that
        price), or ``None`` when no zone asks exactly that price (the median of an even
        count)."""
        return next((z for z, p in self.zones
                     if abs(p - self.spot_usd_per_hour) <= _SAME_PRICE_USD), None)


def _sorted_zones(zones: Mapping[str, float]) -> tuple[tuple[str, float], ...]:
    return tuple(sorted(((str(z), float(p)) for z, p in zones.items()),
                        key=lambda item: (item[1], item[0])))


def rule_price(zones: Mapping[str, float], rule: ZonePriceRule) -> float:
    """The price ``rule`` picks from ``zones`` (zone -> USD/hour, at least one)."""
    prices = [float(p) for p in zones.values()]
    if rule == "cheapest":
        return min(prices)
    return float(statistics.median(prices))


def zone_prices(row: InstanceType, rule: ZonePriceRule | None = None) -> ZonePrices | None:
    """``row``'s prices over the zones, priced by ``rule``; ``None`` without per-zone prices.

    ``rule`` ``None`` keeps the row's own ``spot_usd_per_hour`` and names the rule it matches
    (``cheapest`` first), or none.
    """
    zones = row.spot_by_zone_usd_per_hour
    if not zones:
        return None
    ordered = _sorted_zones(zones)
    if rule is not None:
        return ZonePrices(row.name, rule, rule_price(zones, rule), ordered)
    price = float(row.spot_usd_per_hour)
    matched = next((r for r in ZONE_PRICE_RULES
                    if abs(rule_price(zones, r) - price) <= _SAME_PRICE_USD), None)
    return ZonePrices(row.name, matched, price, ordered)


def _repriced(row: T, rule: ZonePriceRule) -> T:
    zones = row.spot_by_zone_usd_per_hour
    if not zones:
        return row
    price = rule_price(zones, rule)
    if abs(price - row.spot_usd_per_hour) <= _SAME_PRICE_USD:
        return row
    return replace(row, spot_usd_per_hour=price)


def zone_priced_catalog(catalog: Catalog, rule: ZonePriceRule = DEFAULT_ZONE_PRICE) -> Catalog:
    """``catalog`` with each type's spot price set to ``rule``'s price over its zones (types
    without per-zone prices keep theirs). The same object when no price changes; else a catalog
    of the same name whose ``source`` says the rule (its SHA-256 differs: the prices do)."""
    rule = check_rule(rule)
    gpus = tuple(_repriced(g, rule) for g in catalog.gpu_types)
    cpus = tuple(_repriced(c, rule) for c in catalog.cpu_types)
    if all(a is b for a, b in zip((*gpus, *cpus), (*catalog.gpu_types, *catalog.cpu_types),
                                  strict=True)):
        return catalog
    note = f" Spot prices re-priced to {ZONE_PRICE_WORDS[rule]} (--zone-price {rule})."
    return replace(catalog, gpu_types=gpus, cpu_types=cpus,
                   source=catalog.source.rstrip() + note)


def spot_row_zone_prices(
        catalog: Catalog, config: Configuration | None,
        rule: ZonePriceRule | None = None) -> tuple[InstanceType, ZonePrices | None] | None:
    """The catalog row of ``config``'s spot GPU type and its zone prices under ``rule``
    (:func:`zone_prices`: ``None`` when the row has no per-zone prices); ``None`` for no
    configuration, a cluster without spot VMs or a type the catalog does not have."""
    if config is None or config.gpu_spot <= 0:
        return None
    try:
        row = catalog.instance(config.gpu)
    except LookupError:
        return None
    return row, zone_prices(row, rule)


def _usd_h(value: float) -> str:
    return f"{value:,.4f} USD/h"


def zone_sentence(catalog: Catalog, config: Configuration, *,
                  rule: ZonePriceRule | None = None,
                  pw_usd_per_hour: float | None = None) -> str | None:
    """What a card says about the zone behind ``config``'s spot price: the zone, the range over
    the zones, the rule, and, with ``pw_usd_per_hour``, in how many other zones the same
    cluster would cost more than PW. ``None`` for a cluster without spot VMs.

    ``rule`` ``None``: the catalog's prices as they are (the rule they match is named).
    Example (p3.16xlarge, us-east-1, cheapest, PW 3)::

        Spot price: 2.7531 USD/h per p3.16xlarge, the cheapest of its 4 zones (use1-az5);
        2.7531–6.2948 USD/h over the zones (median 4.2205). In 3 other zones this cluster
        would cost more than PW 3 USD/h: launch pins use1-az5.
    """
    found = spot_row_zone_prices(catalog, config, rule)
    if found is None:
        return None
    row, zp = found
    n = config.gpu_spot
    if zp is None:
        return (f"Spot price: {_usd_h(row.spot_usd_per_hour)} per {row.name} for the whole "
                f"region {catalog.region} (the catalog has no per-zone prices).")
    count = len(zp.zones)
    price = zp.spot_usd_per_hour
    if count == 1:
        text = (f"Spot price: {_usd_h(price)} per {row.name}, in its only zone with a price "
                f"({zp.launch_zone_id}).")
    else:
        spread = f"{zp.low_usd_per_hour:,.4f}–{zp.high_usd_per_hour:,.4f} USD/h over the zones"
        if zp.rule == "cheapest":
            which = (f"the cheapest of its {count} zones ({zp.launch_zone_id}); {spread} "
                     f"(median {zp.median_usd_per_hour:,.4f})")
        elif zp.rule == "median":
            which = (f"the median over its {count} zones"
                     + (f" ({zp.zone_id})" if zp.zone_id else "")
                     + f"; {spread}, the cheapest {zp.launch_zone_id}, where launch pins the "
                       "workers")
        else:
            which = ((f"zone {zp.zone_id}'s price" if zp.zone_id is not None
                      else "the catalog's own price (no zone asks exactly that)")
                     + f"; {spread}; launch pins the cheapest, {zp.launch_zone_id}")
        text = f"Spot price: {_usd_h(price)} per {row.name}, {which}."
    if pw_usd_per_hour is not None and math.isfinite(pw_usd_per_hour) and count > 1:
        rest = config.hourly_price_usd - n * price
        above = [z for z, p in zp.zones if rest + n * p > pw_usd_per_hour + 1e-9]
        if above:
            text += (f" In {len(above)} of its {count} zones this cluster would cost more "
                     f"than PW {pw_usd_per_hour:g} USD/h (up to "
                     f"{_usd_h(rest + n * zp.high_usd_per_hour)}): launch pins "
                     f"{zp.launch_zone_id} and caps the spot price at PW.")
    return text
