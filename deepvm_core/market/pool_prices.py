"""Which catalog prices a pool: the one of the pool's own region (issue 25, part 4).

A pool ``TYPE@ZONE`` is a market in one availability zone; its spot and on-demand prices must
be that zone's region's. With an AWS catalog of another region active (say us-east-1 and a
pool ``p3.2xlarge@us-west-2a``), :func:`make_regional_pool` prices the pool from the newest
bundled catalog of the zone's region (``aws-us-west-2-2025-h1``), or refuses it with a message
naming the region when none is bundled. The active catalog prices pools of its own region, and
every pool when it is not an AWS catalog (the simulated one has no regions).

Zone names (``us-west-2a``) are per account, while catalogs key per-zone prices by zone ID, so a
pool's spot price is its region's type price (:mod:`deepvm_core.market.pools`), not one zone's.
"""

from __future__ import annotations

import functools

from deepvm_core.bundled import bundled_catalog_names
from deepvm_core.catalog import Catalog
from deepvm_core.catalog.store import load_catalog
from deepvm_core.market.pools import Pool, make_pool, region_of_zone, split_pool_name
from deepvm_core.market.trace import SpotTrace, TraceError


@functools.cache
def bundled_region_catalog(region: str) -> Catalog | None:
    """The bundled AWS catalog of ``region`` with the newest prices, or ``None``."""
    best: Catalog | None = None
    for name in bundled_catalog_names():
        catalog = load_catalog(name)
        if catalog.provider == "aws" and catalog.region == region and (
                best is None or catalog.prices_date > best.prices_date):
            best = catalog
    return best


def pool_catalog(active: Catalog, zone: str) -> Catalog | None:
    """The catalog that prices a pool in ``zone`` (module docstring), or ``None`` when the
    zone's region has none."""
    region = region_of_zone(zone)
    if active.provider != "aws" or region is None or region == active.region:
        return active
    return bundled_region_catalog(region)


def make_regional_pool(active: Catalog, name: str, trace: SpotTrace) -> Pool:
    """The pool ``name`` with ``trace``, priced from its region's catalog
    (:func:`pool_catalog`).

    Raises:
        TraceError: a bad name, no catalog of the zone's region, or a type not in it.
    """
    _, zone = split_pool_name(name)
    catalog = pool_catalog(active, zone)
    if catalog is None:
        raise TraceError("pool", f"{name!r}: no catalog of region {region_of_zone(zone)} is "
                                 f"bundled, and the active catalog {active.name!r} is "
                                 f"{active.region}'s: its prices would be another region's. "
                                 "Fetch that region's prices (Live prices) and make it active")
    return make_pool(catalog, name, trace)
