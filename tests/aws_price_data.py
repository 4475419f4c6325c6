"""The prices the AWS fakes (``aws_fakes``) answer with: spot price history per zone and the
price list's products, derived from the bundled catalog ``aws-us-east-1-2023-10`` (on-demand
prices are its on-demand prices, the cheapest zone's latest spot price is its spot price;
other regions: times a factor), plus a few types that catalog lacks (``EXTRA_TYPES``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta

from deepvm_core.catalog import Catalog

#: Latest spot price of each zone, as a multiple of the catalog's spot price (zone a is the
#: cheapest, so the minimum is the catalog's price; the median is 1.1 times it).
ZONE_FACTORS = {"a": 1.0, "b": 1.1, "c": 1.25}
#: Older entries within the window (hours ago, factor): cheaper or dearer, never the latest.
OLDER_ENTRIES = ((3.0, 0.5), (2.0, 2.0))
#: An entry older than any reasonable window (hours ago, factor).
STALE_ENTRY = (30.0, 0.01)


#: Prices of types the base catalog lacks (name: on-demand, spot USD/h, vCPUs): GPU types whose
#: eFLOPS is estimated (g5.2xlarge: 1 A10G; p4d.24xlarge: 8 A100, 400 Gbps), a Trainium type
#: (kept, needs eFLOPS) and an Inferentia type (left out). Prices: the bundled
#: aws-us-east-1-2025-h1 catalog (g5.2xlarge: made up); inf1.xlarge: SkyPilot's us-east-1 rows.
#: Other g5 sizes have no offers in the fake (left out, with a note).
EXTRA_TYPES = {"g5.2xlarge": (1.212, 0.3636, 8), "p4d.24xlarge": (32.7726, 5.0933, 96),
               "trn1.2xlarge": (1.34375, 0.3409, 8), "inf1.xlarge": (0.228, 0.0622, 4)}


@dataclass(frozen=True)
class PricedType:
    name: str
    on_demand_usd_per_hour: float
    spot_usd_per_hour: float
    vcpus: int


def _types(catalog: Catalog) -> list[PricedType]:
    rows = [PricedType(t.name, t.on_demand_usd_per_hour, t.spot_usd_per_hour, t.vcpus)
            for t in (*catalog.gpu_types, *catalog.cpu_types)]
    return rows + [PricedType(n, od, sp, v) for n, (od, sp, v) in EXTRA_TYPES.items()]


def spot_history(catalog: Catalog, region: str, factor: float, now: datetime) -> list[dict]:
    """DescribeSpotPriceHistory entries (newest first, as AWS returns them)."""
    entries = []
    for t in _types(catalog):
        base = t.spot_usd_per_hour * factor
        zones = dict(ZONE_FACTORS)
        if t.name == "c4.xlarge":
            zones.pop("c")  # not every type is offered in every zone
        for zone, zf in zones.items():
            entries.append((now - timedelta(minutes=5), t.name, f"{region}{zone}", base * zf))
            for hours, of in OLDER_ENTRIES:
                entries.append((now - timedelta(hours=hours), t.name, f"{region}{zone}",
                                base * zf * of))
            hours, of = STALE_ENTRY
            entries.append((now - timedelta(hours=hours), t.name, f"{region}{zone}", base * of))
    entries.sort(key=lambda e: e[0], reverse=True)
    return [{"Timestamp": when, "InstanceType": name, "AvailabilityZone": zone,
             "SpotPrice": f"{price:.6f}", "ProductDescription": "Linux/UNIX"}
            for when, name, zone, price in entries]


def _product(sku: str, attributes: dict, on_demand_usd: float | None,
             reserved_usd: float | None = None) -> str:
    terms: dict = {}
    if on_demand_usd is not None:
        offer = f"{sku}.JRTCKXETXF"
        terms["OnDemand"] = {offer: {
            "offerTermCode": "JRTCKXETXF", "sku": sku, "effectiveDate": "2026-11-01T00:00:00Z",
            "priceDimensions": {f"{offer}.6YS6EN2CT7": {
                "rateCode": f"{offer}.6YS6EN2CT7", "unit": "Hrs", "beginRange": "0",
                "endRange": "Inf", "appliesTo": [],
                "description": f"${on_demand_usd:.4f} per On Demand Linux "
                               f"{attributes['instanceType']} Instance Hour",
                "pricePerUnit": {"USD": f"{on_demand_usd:.10f}"}}},
            "termAttributes": {}}}
    if reserved_usd is not None:
        offer = f"{sku}.4NA7Y494T4"
        terms["Reserved"] = {offer: {
            "offerTermCode": "4NA7Y494T4", "sku": sku,
            "priceDimensions": {f"{offer}.6YS6EN2CT7": {
                "unit": "Hrs", "pricePerUnit": {"USD": f"{reserved_usd:.10f}"}}},
            "termAttributes": {"LeaseContractLength": "1yr", "PurchaseOption": "No Upfront"}}}
    return json.dumps({
        "product": {"productFamily": "Compute Instance", "sku": sku, "attributes": attributes},
        "serviceCode": "AmazonEC2", "terms": terms, "version": "20261101000000",
        "publicationDate": "2026-11-01T00:00:00Z"})


def price_list(catalog: Catalog, region: str, factor: float) -> list[tuple[dict, str]]:
    """(attributes, price-list JSON string) per product: the Linux shared on-demand product of
    every type, and decoys the filters must exclude (Windows, Dedicated, a capacity
    reservation, SQL Server)."""
    products = []
    for i, t in enumerate(_types(catalog)):
        attrs = {
            "instanceType": t.name, "regionCode": region, "location": f"Fake location {region}",
            "operatingSystem": "Linux", "tenancy": "Shared", "preInstalledSw": "NA",
            "capacitystatus": "Used", "licenseModel": "No License required",
            "marketoption": "OnDemand", "usagetype": f"BoxUsage:{t.name}",
            "vcpu": str(t.vcpus), "servicecode": "AmazonEC2",
        }
        od = t.on_demand_usd_per_hour * factor
        sku = f"SKU{i:03d}{region.replace('-', '').upper()}"
        products.append((attrs, _product(sku, attrs, od, reserved_usd=od * 0.6)))
        for j, (key, value, mult) in enumerate([("operatingSystem", "Windows", 1.8),
                                                ("tenancy", "Dedicated", 1.1),
                                                ("capacitystatus", "UnusedCapacityReservation",
                                                 0.0),
                                                ("preInstalledSw", "SQL Std", 2.5)]):
            decoy = {**attrs, key: value}
            price = od * mult if mult else 0.0
            products.append((decoy, _product(f"{sku}D{j}", decoy, price)))
    return products
