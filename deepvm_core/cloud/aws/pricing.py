"""The AWS Price List API's ``GetProducts``: the call, and the on-demand USD price per hour it
gives. The parser is pure (no I/O, no boto3).

``GetProducts`` is asked for service ``AmazonEC2`` with ``TERM_MATCH`` on ``instanceType``,
``regionCode``, ``operatingSystem`` = Linux, ``tenancy`` = Shared, ``preInstalledSw`` = NA and
``capacitystatus`` = Used (:data:`PRICING_FILTERS`), one instance type per request: the price
is the USD per hour of ``terms.OnDemand.*.priceDimensions.*.pricePerUnit``. The Pricing client
lives in a pricing region (:data:`DEFAULT_PRICING_REGION` by default) whatever the catalog's
region.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

from deepvm_core.cloud.aws.client import MalformedAnswer, answer_field

#: Region of the Pricing API client (the API is served from a few regions only).
DEFAULT_PRICING_REGION = "us-east-1"
#: Regions that serve the Price List API.
PRICING_REGIONS = ("us-east-1", "eu-central-1", "ap-south-1")
#: The Pricing API attributes an on-demand Linux price is selected by.
PRICING_FILTERS: Mapping[str, str] = {
    "operatingSystem": "Linux",
    "tenancy": "Shared",
    "preInstalledSw": "NA",
    "capacitystatus": "Used",
}


def _product_matches(attributes: Mapping[str, Any], instance_type: str, region: str | None) -> bool:
    if attributes.get("instanceType") not in (None, instance_type):
        return False
    if region is not None and attributes.get("regionCode") not in (None, region):
        return False
    for key, wanted in PRICING_FILTERS.items():
        if attributes.get(key) not in (None, wanted):
            return False
    # Capacity Blocks and other market options carry their own prices.
    return attributes.get("marketoption") in (None, "OnDemand")


def parse_on_demand_usd_per_hour(
    price_list: Iterable[str | Mapping[str, Any]],
    instance_type: str,
    region: str | None = None,
) -> tuple[float | None, tuple[str, ...]]:
    """The on-demand USD/hour of ``instance_type`` from ``GetProducts`` price-list items.

    Each item is a JSON string (as the API returns it) or its parsed object. Products whose
    attributes do not match (another type, region, OS, tenancy, software, capacity status or
    market option) are skipped; only ``terms.OnDemand`` hourly (``Hrs``) dimensions with a
    positive ``pricePerUnit.USD`` count. Returns ``(price or None, notes)``: with several
    distinct prices, the lowest, and a note saying so.

    Raises:
        MalformedAnswer: an item is not JSON, or a price is not a number.
    """
    prices: set[float] = set()
    for item in price_list:
        if isinstance(item, (str, bytes)):
            try:
                product = json.loads(item)
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                reason = exc.msg if isinstance(exc, json.JSONDecodeError) else exc.reason
                raise MalformedAnswer(f"a price-list item is not JSON ({reason})") from None
        else:
            product = item
        if not isinstance(product, Mapping):
            raise MalformedAnswer("a price-list item is not a JSON object")
        attributes = answer_field(product, "product", "attributes")
        if not isinstance(attributes, Mapping):
            raise MalformedAnswer("a price-list item has no product.attributes")
        if not _product_matches(attributes, instance_type, region):
            continue
        offers = answer_field(product, "terms", "OnDemand") or {}
        if not isinstance(offers, Mapping):
            raise MalformedAnswer("terms.OnDemand of a price-list item is not an object")
        for offer in offers.values():
            dimensions = answer_field(offer, "priceDimensions") or {}
            if not isinstance(dimensions, Mapping):
                raise MalformedAnswer("priceDimensions of a price-list item is not an object")
            for dim in dimensions.values():
                unit = str(answer_field(dim, "unit") or "").lower()
                if unit not in ("hrs", "hours", "hr", "hour"):
                    continue
                raw = answer_field(dim, "pricePerUnit", "USD")
                try:
                    usd = float(raw)
                except (TypeError, ValueError):
                    raise MalformedAnswer(
                        f"{instance_type}: pricePerUnit.USD {raw!r} is not a number") from None
                if not math.isfinite(usd):
                    raise MalformedAnswer(f"{instance_type}: pricePerUnit.USD {raw!r} "
                                          "is not finite")
                if usd > 0:
                    prices.add(usd)
    if not prices:
        return None, ()
    notes: tuple[str, ...] = ()
    if len(prices) > 1:
        listed = ", ".join(f"{p:g}" for p in sorted(prices))
        notes = (f"{instance_type}: several on-demand Linux prices ({listed} USD/h); "
                 "the lowest is used",)
    return min(prices), notes


def get_products(
    pricing: Any, instance_type: str, region: str, *, page_size: int = 100
) -> list[str]:
    """The ``PriceList`` JSON strings of Linux, shared-tenancy, on-demand ``instance_type`` in
    ``region`` from ``GetProducts`` (all pages). Raises botocore's exceptions, and
    :class:`MalformedAnswer` when a page has no ``PriceList`` list."""
    filters = [{"Type": "TERM_MATCH", "Field": "instanceType", "Value": instance_type},
               {"Type": "TERM_MATCH", "Field": "regionCode", "Value": region}]
    filters += [{"Type": "TERM_MATCH", "Field": k, "Value": v} for k, v in PRICING_FILTERS.items()]
    paginator = pricing.get_paginator("get_products")
    out: list[str] = []
    for page in paginator.paginate(ServiceCode="AmazonEC2", Filters=filters,
                                   FormatVersion="aws_v1",
                                   PaginationConfig={"PageSize": page_size}):
        found = page.get("PriceList")
        if not isinstance(found, list):
            raise MalformedAnswer("GetProducts answer without a PriceList list")
        out.extend(found)
    return out

