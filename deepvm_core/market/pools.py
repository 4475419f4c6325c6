"""Pools (``traces.md``, "A pool"): one spot market, a GPU type in one availability zone, with
its trace and its spot price.

A pool is named ``TYPE@ZONE`` (``g5.xlarge@us-east-1a``). Its spot price is the catalog's
``spot_by_zone_usd_per_hour[zone]`` when present, else the type's ``spot_usd_per_hour``
(USD per hour, one VM). A list of pools is the failover order.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from deepvm_core.catalog import Catalog, GpuType
from deepvm_core.errors import InstanceNotFoundError
from deepvm_core.market.trace import SpotTrace, TraceError


@dataclass(frozen=True, eq=False)
class Pool:
    """One spot market with its trace.

    Attributes:
        gpu: the GPU instance type (a catalog GPU type).
        zone: the availability zone.
        trace: the market's trace.
        spot_usd_per_hour: one spot VM of ``gpu`` in ``zone``, USD per hour.
        on_demand_usd_per_hour: one on-demand VM of ``gpu``, USD per hour (the fallback).
        prices_from: the catalog the prices are from (``None``: not said).
    """

    gpu: str
    zone: str
    trace: SpotTrace
    spot_usd_per_hour: float
    on_demand_usd_per_hour: float
    prices_from: str | None = None

    @property
    def name(self) -> str:
        """``TYPE@ZONE``."""
        return f"{self.gpu}@{self.zone}"


#: An AWS availability zone name and its region (``us-west-2a`` -> ``us-west-2``).
ZONE_NAME = re.compile(r"^([a-z]{2}(?:-[a-z]+)+-\d+)[a-z]$")
#: An AWS availability zone ID (``use1-az1``; a Local Zone's ``usw2-lax1-az1``): the same zone
#: in every account.
ZONE_ID = re.compile(r"^[a-z]{3,4}\d+(?:-[a-z]+\d+)?-az\d+$")


def region_of_zone(zone: str) -> str | None:
    """The AWS region of zone name ``zone`` (``us-west-2a`` -> ``us-west-2``), or ``None``."""
    match = ZONE_NAME.match(zone.strip())
    return match.group(1) if match else None


def user_pool_name(name: str) -> tuple[str, str]:
    """A pool name a user gave (``--pool``, the Spot markets page): ``TYPE@ZONE`` whose zone
    is an AWS zone name (``us-east-1a``) or zone ID (``use1-az1``) -> (TYPE, ZONE).

    Raises:
        TraceError: not ``TYPE@ZONE``, or a zone that is neither (naming it).
    """
    gpu, zone = split_pool_name(name)
    if not (ZONE_NAME.match(zone) or ZONE_ID.match(zone)):
        raise TraceError("pool", f"{name!r}: zone {zone!r} is not an availability zone name "
                                 "(us-east-1a) or zone ID (use1-az1)")
    return gpu, zone


def split_pool_name(name: str) -> tuple[str, str]:
    """``TYPE@ZONE`` -> (TYPE, ZONE).

    Raises:
        TraceError: no ``@``, or an empty type or zone.
    """
    gpu, sep, zone = name.partition("@")
    if not sep or not gpu.strip() or not zone.strip() or "@" in zone:
        raise TraceError("pool", f"{name!r} is not TYPE@ZONE (e.g. g5.xlarge@us-east-1a)")
    return gpu.strip(), zone.strip()


def pool_gpu(catalog: Catalog, gpu: str, pool_name: str) -> GpuType:
    """The catalog's GPU type ``gpu`` of pool ``pool_name``.

    Raises:
        TraceError: no GPU type of that name in the catalog.
    """
    try:
        found = catalog.instance(gpu)
    except InstanceNotFoundError as exc:
        hint = f" Did you mean {', '.join(exc.suggestions)}?" if exc.suggestions else ""
        raise TraceError("pool", f"{pool_name!r}: no GPU type {gpu!r} in catalog "
                                 f"{catalog.name!r}.{hint}") from None
    if not isinstance(found, GpuType):
        raise TraceError("pool", f"{pool_name!r}: {gpu!r} is not a GPU type of catalog "
                                 f"{catalog.name!r}")
    return found


def make_pool(catalog: Catalog, name: str, trace: SpotTrace) -> Pool:
    """The pool ``name`` (``TYPE@ZONE``) with ``trace``, priced from ``catalog``.

    Raises:
        TraceError: a bad name or a type not in the catalog.
    """
    gpu, zone = split_pool_name(name)
    row = pool_gpu(catalog, gpu, name)
    zones = row.spot_by_zone_usd_per_hour or {}
    return Pool(gpu=gpu, zone=zone, trace=trace,
                spot_usd_per_hour=float(zones.get(zone, row.spot_usd_per_hour)),
                on_demand_usd_per_hour=float(row.on_demand_usd_per_hour),
                prices_from=catalog.name)


def check_pools(pools: Sequence[Pool]) -> None:
    """Pools for one backtest: at least one, no name twice, every zone name in one region (a
    failover list is launched as one fleet, which lives in one region), and traces with the
    same tick length and number of ticks (ticks must line up).

    Raises:
        TraceError: what is wrong, naming the pools.
    """
    if not pools:
        raise TraceError("pools", "a backtest needs at least one pool")
    seen: set[str] = set()
    for p in pools:
        if p.name in seen:
            raise TraceError("pool", f"{p.name!r} is given twice")
        seen.add(p.name)
    first = pools[0]
    named = [(p, r) for p in pools if (r := region_of_zone(p.zone)) is not None]
    for p, region in named[1:]:
        if region != named[0][1]:
            raise TraceError("pools", f"{p.name} is in {region} and {named[0][0].name} in "
                                      f"{named[0][1]}: pools replayed together fail over "
                                      "within one region (one fleet launches them); map one "
                                      "region's pools per GPU type")
    for p in pools[1:]:
        if p.trace.ticks != first.trace.ticks:
            raise TraceError("pools", f"{p.name} has {p.trace.ticks:,} ticks and {first.name} "
                                      f"{first.trace.ticks:,}: pools replayed together need "
                                      "traces of the same length")
        if p.trace.gap_seconds != first.trace.gap_seconds:
            raise TraceError("pools", f"{p.name} has {p.trace.gap_seconds:g} s ticks and "
                                      f"{first.name} {first.trace.gap_seconds:g} s: pools "
                                      "replayed together need the same tick length")
