"""EC2 ``DescribeSpotPriceHistory``: the call, the latest spot price of each availability zone,
and one spot price per instance type from them. The parsers are pure (no I/O, no boto3).

The history is read for ``Linux/UNIX`` with ``StartTime`` = now minus a window (6 hours by
default): the latest price of each availability zone is kept in ``spot_by_zone_usd_per_hour``;
``spot_usd_per_hour`` is their minimum (the cheapest zone, default) or their median.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Literal

from deepvm_core.cloud.aws.client import MalformedAnswer, chunks

#: The product description spot prices are read for.
SPOT_PRODUCT_DESCRIPTION = "Linux/UNIX"

SpotAggregate = Literal["min", "median"]
SPOT_AGGREGATES: tuple[SpotAggregate, ...] = ("min", "median")
#: How far back spot price history is read, hours.
DEFAULT_SPOT_WINDOW_HOURS = 6.0


def _timestamp(value: object) -> datetime:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise MalformedAnswer(f"spot price timestamp {value!r} is not a time") from None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    raise MalformedAnswer(f"spot price timestamp {value!r} is not a time")


def latest_spot_by_zone(
    history: Iterable[Mapping[str, Any]],
) -> dict[str, dict[str, float]]:
    """``{instance type: {availability zone: USD/hour}}``: the latest price of each zone.

    Items are ``DescribeSpotPriceHistory`` entries (``InstanceType``, ``AvailabilityZone``,
    ``SpotPrice`` as text, ``Timestamp``). Of two entries with the same timestamp the later one
    in the answer wins. Non-positive prices are ignored.

    Raises:
        MalformedAnswer: an entry without type, zone, a numeric price or a timestamp.
    """
    latest: dict[tuple[str, str], tuple[datetime, float]] = {}
    for item in history:
        name = item.get("InstanceType") if isinstance(item, Mapping) else None
        zone = item.get("AvailabilityZone") if isinstance(item, Mapping) else None
        if not isinstance(name, str) or not name or not isinstance(zone, str) or not zone:
            raise MalformedAnswer(f"a spot price entry without type or zone: {item!r:.200}")
        try:
            price = float(item.get("SpotPrice"))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise MalformedAnswer(
                f"{name} in {zone}: spot price {item.get('SpotPrice')!r} is not a number"
            ) from None
        if not math.isfinite(price):
            raise MalformedAnswer(f"{name} in {zone}: spot price {price!r} is not finite")
        when = _timestamp(item.get("Timestamp"))
        if price <= 0:
            continue
        key = (name, zone)
        if key not in latest or when >= latest[key][0]:
            latest[key] = (when, price)
    out: dict[str, dict[str, float]] = {}
    for (name, zone), (_, price) in sorted(latest.items()):
        out.setdefault(name, {})[zone] = price
    return out


def aggregate_spot_usd_per_hour(
    by_zone_usd_per_hour: Mapping[str, float], how: SpotAggregate = "min"
) -> float:
    """One spot price from per-zone prices: the cheapest zone (``min``) or the ``median``.

    Raises:
        ValueError: no prices, or an unknown aggregate.
    """
    prices = list(by_zone_usd_per_hour.values())
    if not prices:
        raise ValueError("no spot prices to aggregate")
    if how == "min":
        return min(prices)
    if how == "median":
        return float(statistics.median(prices))
    raise ValueError(f"spot aggregate {how!r} must be one of {', '.join(SPOT_AGGREGATES)}")


def describe_spot_price_history(
    ec2: Any, instance_types: Sequence[str], start_time: datetime,
    *, product_description: str = SPOT_PRODUCT_DESCRIPTION, page_size: int = 1000,
) -> list[dict[str, Any]]:
    """Every ``DescribeSpotPriceHistory`` entry of ``instance_types`` since ``start_time``
    (all pages). Raises botocore's exceptions."""
    entries: list[dict[str, Any]] = []
    paginator = ec2.get_paginator("describe_spot_price_history")
    for chunk in chunks(list(instance_types)):
        pages = paginator.paginate(
            InstanceTypes=chunk, ProductDescriptions=[product_description],
            StartTime=start_time, PaginationConfig={"PageSize": page_size})
        for page in pages:
            found = page.get("SpotPriceHistory", [])
            if not isinstance(found, list):
                raise MalformedAnswer("SpotPriceHistory is not a list")
            entries.extend(dict(e) if isinstance(e, Mapping) else e for e in found)
    return entries

