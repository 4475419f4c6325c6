"""Spot markets price each pool from its own region's catalog (issue 25, part 4): a pool
``p3.2xlarge@us-west-2a`` with the us-east-1 catalog active gets us-west-2's bundled prices, or
a message when no catalog of its region is bundled. Expected prices are read straight from the
bundled JSON files, not through the code under test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deepvm_core.catalog.store import load_catalog
from deepvm_core.market.pool_prices import make_regional_pool, region_of_zone
from deepvm_core.market.trace import SpotTrace, TraceError

CATALOGS = Path(__file__).resolve().parent.parent / "data" / "catalogs"
TRACE = SpotTrace(source="t.json", gap_seconds=600.0, counts=(1, 1, 0, 1))


def _row(catalog: str, name: str) -> dict:
    doc = json.loads((CATALOGS / f"{catalog}.json").read_text())
    return next(r for r in doc["gpu_types"] if r["name"] == name)


@pytest.mark.parametrize(("zone", "region"), [
    ("us-west-2a", "us-west-2"), ("eu-central-1b", "eu-central-1"),
    ("ap-southeast-3c", "ap-southeast-3"), ("use1-az1", None), ("us-west-2", None)])
def test_region_of_a_zone_name(zone: str, region: str | None) -> None:
    assert region_of_zone(zone) == region


def test_a_pool_of_another_region_gets_that_regions_prices() -> None:
    east = load_catalog("aws-us-east-1-2025-h1")
    west = _row("aws-us-west-2-2025-h1", "p3.2xlarge")
    pool = make_regional_pool(east, "p3.2xlarge@us-west-2a", TRACE)
    assert pool.spot_usd_per_hour == west["spot_usd_per_hour"]
    assert pool.on_demand_usd_per_hour == west["on_demand_usd_per_hour"]
    assert pool.prices_from == "aws-us-west-2-2025-h1"
    assert pool.spot_usd_per_hour != _row("aws-us-east-1-2025-h1", "p3.2xlarge")[
        "spot_usd_per_hour"]
    own = make_regional_pool(east, "p3.2xlarge@us-east-1c", TRACE)
    assert own.spot_usd_per_hour == _row("aws-us-east-1-2025-h1", "p3.2xlarge")[
        "spot_usd_per_hour"]
    assert own.prices_from == "aws-us-east-1-2025-h1"


def test_no_catalog_of_the_region_is_a_message() -> None:
    east = load_catalog("aws-us-east-1-2025-h1")
    with pytest.raises(TraceError, match="no catalog of region ap-south-1 is bundled"):
        make_regional_pool(east, "p3.2xlarge@ap-south-1a", TRACE)


def test_the_simulated_catalog_prices_every_pool() -> None:
    sim = load_catalog("paper-simulated")
    gpu = sim.gpu_types[0]
    pool = make_regional_pool(sim, f"{gpu.name}@us-west-2a", TRACE)
    assert pool.spot_usd_per_hour == gpu.spot_usd_per_hour
    assert pool.prices_from == "paper-simulated"
