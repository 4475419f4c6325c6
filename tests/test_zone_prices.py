"""Spot prices per zone (``deepvm_core.market.zones``): the rules, the re-priced catalog, the
card's sentence and the CLI's ``--zone-price``.

Expected values are worked out by hand from the bundled us-east-1 catalog's p3.16xlarge row:
use1-az1 4.8549, use1-az2 6.2948, use1-az5 2.7531, use1-az6 3.5861 USD/h; sorted 2.7531,
3.5861, 4.8549, 6.2948, so the median is (3.5861 + 4.8549) / 2 = 4.2205.
"""

from __future__ import annotations

import statistics

import pytest
from cli_helpers import cli_json

from deepvm_core.catalog import GpuType
from deepvm_core.catalog.store import load_catalog
from deepvm_core.cli import main
from deepvm_core.errors import InputError
from deepvm_core.market.zones import (
    CAPACITY_WEIGHTED_NOTE,
    DEFAULT_ZONE_PRICE,
    ZONE_PRICE_RULES,
    check_rule,
    zone_priced_catalog,
    zone_prices,
    zone_sentence,
)
from deepvm_core.model import Configuration

TODAY = "aws-us-east-1-2025-h1"
P3 = {"use1-az1": 4.8549, "use1-az2": 6.2948, "use1-az5": 2.7531, "use1-az6": 3.5861}


def _row(zones: dict[str, float] | None, spot: float = 1.0) -> GpuType:
    return GpuType(name="x.large", family="X", on_demand_usd_per_hour=10.0,
                   spot_usd_per_hour=spot, vcpus=4, memory_gib=16.0, network_gbps=10.0,
                   spot_by_zone_usd_per_hour=zones, eflops=100.0)


def _tr(gpu: str, n: int, price: float) -> Configuration:
    return Configuration("tiering", gpu, n, 0, "c5.large", 1, price, 1.0, 1.0, 1.0, 1.0, 1.0)


def test_rules_by_hand() -> None:
    assert ZONE_PRICE_RULES == ("cheapest", "median")
    assert DEFAULT_ZONE_PRICE == "cheapest"
    cheapest = zone_prices(_row(P3), "cheapest")
    median = zone_prices(_row(P3), "median")
    assert cheapest is not None
    assert median is not None
    assert cheapest.spot_usd_per_hour == 2.7531
    assert cheapest.zone_id == "use1-az5"
    assert median.spot_usd_per_hour == pytest.approx(4.2205)
    assert median.zone_id is None  # an even count: no zone asks the median
    assert median.launch_zone_id == "use1-az5"
    assert median.zone_ids_by_price == ("use1-az5", "use1-az6", "use1-az1", "use1-az2")
    assert (median.low_usd_per_hour, median.high_usd_per_hour) == (2.7531, 6.2948)
    odd = zone_prices(_row({"a": 3.0, "b": 1.0, "c": 2.0}), "median")
    assert odd is not None
    assert (odd.spot_usd_per_hour, odd.zone_id) == (2.0, "c")
    assert zone_prices(_row(None)) is None
    assert zone_prices(_row({})) is None


def test_the_rule_of_a_stored_price_is_named() -> None:
    assert zone_prices(_row(P3, spot=2.7531)).rule == "cheapest"  # type: ignore[union-attr]
    assert zone_prices(_row(P3, spot=4.2205)).rule == "median"  # type: ignore[union-attr]
    edited = zone_prices(_row(P3, spot=3.0))
    assert edited is not None
    assert edited.rule is None
    assert edited.spot_usd_per_hour == 3.0


def test_unknown_rule_names_the_field() -> None:
    with pytest.raises(InputError, match="zone_price"):
        check_rule("capacity-weighted")
    assert "capacity" in CAPACITY_WEIGHTED_NOTE


def test_repriced_catalog() -> None:
    catalog = load_catalog(TODAY)
    assert zone_priced_catalog(catalog, "cheapest") is catalog  # the bundled prices are so
    median = zone_priced_catalog(catalog, "median")
    assert median is not catalog
    assert median.sha256 != catalog.sha256
    assert median.name == catalog.name
    assert "--zone-price median" in median.source
    assert median.instance("p3.16xlarge").spot_usd_per_hour == pytest.approx(4.2205)
    assert dict(median.instance("p3.16xlarge").spot_by_zone_usd_per_hour or {}) == P3
    paper = load_catalog("aws-us-east-1-2023-10")  # no per-zone prices: unchanged
    assert zone_priced_catalog(paper, "median") is paper


def test_sentence_names_the_zone_the_range_and_the_zones_above_pw() -> None:
    catalog = load_catalog(TODAY)
    od = catalog.instance("c5.large").on_demand_usd_per_hour
    config = _tr("p3.16xlarge", 1, 2.7531 + od)
    text = zone_sentence(catalog, config, pw_usd_per_hour=3.0)
    assert text is not None
    assert "2.7531 USD/h per p3.16xlarge, the cheapest of its 4 zones (use1-az5)" in text
    assert "2.7531–6.2948 USD/h over the zones (median 4.2205)" in text
    # the cluster in the other zones: od + 3.5861, od + 4.8549, od + 6.2948, all above 3
    assert "In 3 of its 4 zones this cluster would cost more than PW 3 USD/h" in text
    assert f"up to {od + 6.2948:,.4f} USD/h" in text
    assert "launch pins use1-az5" in text
    assert "more than PW" not in (zone_sentence(catalog, config, pw_usd_per_hour=10.0) or "")
    median = zone_sentence(zone_priced_catalog(catalog, "median"),
                           _tr("p3.16xlarge", 1, 4.2205 + od), rule="median")
    assert median is not None
    assert "the median over its 4 zones; 2.7531–6.2948 USD/h" in median
    assert "the cheapest use1-az5, where launch pins the workers" in median


def test_sentence_without_zones_or_spot_vms() -> None:
    paper = load_catalog("aws-us-east-1-2023-10")
    text = zone_sentence(paper, _tr("g4dn.xlarge", 17, 2.8526))
    assert text is not None
    assert "no per-zone prices" in text
    anchor_only = Configuration("single_anchor", "g4dn.xlarge", 0, 1, None, 0, 0.526,
                                1.0, 1.0, 1.0, 1.0, 1.0)
    assert zone_sentence(paper, anchor_only) is None


def test_cli_zone_price_median_reprices_and_the_export_records_the_zone() -> None:
    base = ["recommend", "--catalog", TODAY, "--pw", "3", "--format", "json", "--top", "3"]
    cheapest = cli_json(*base)
    assert cheapest["chosen"]["gpu"]["name"] == "p3.16xlarge"
    zone = cheapest["chosen"]["spot_zone"]
    assert zone["rule"] == "cheapest"
    assert zone["zone_id"] == "use1-az5"
    assert zone["launch_zone_id"] == "use1-az5"
    assert zone["spot_usd_per_hour"] == 2.7531
    assert zone["zones_by_price"] == ["use1-az5", "use1-az6", "use1-az1", "use1-az2"]
    assert cheapest == cli_json(*base, "--zone-price", "cheapest")
    median = cli_json(*base, "--zone-price", "median")
    row = next(r for r in median["catalog"]["instance_types"]["gpu_types"]
               if r["name"] == median["chosen"]["gpu"]["name"])
    assert median["chosen"]["spot_zone"]["rule"] == "median"
    assert row["spot_usd_per_hour"] == pytest.approx(
        statistics.median(row["spot_by_zone_usd_per_hour"].values()))
    assert median["chosen"]["hourly_price"] > cheapest["chosen"]["hourly_price"] or \
        median["chosen"]["gpu"]["name"] != "p3.16xlarge"


def test_cli_zone_price_refuses_an_unknown_rule(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["recommend", "--catalog", TODAY, "--pw", "3", "--zone-price", "mean"])
    assert info.value.code == 2
    assert "--zone-price" in capsys.readouterr().err


def test_no_zone_record_without_per_zone_prices() -> None:
    doc = cli_json("recommend", "--catalog", "aws-us-east-1-2023-10", "--pw", "3", "--format",
                   "json")
    assert "spot_zone" not in doc["chosen"]


def test_zoned_exports_fit_their_schemas() -> None:
    import jsonschema

    from deepvm_core.io.schemas import load_schema

    rec = cli_json("recommend", "--catalog", TODAY, "--pw", "3", "--format", "json")
    assert "spot_zone" in rec["chosen"]
    jsonschema.validate(rec, load_schema("recommend"))
    plan = cli_json("plan", "--catalog", TODAY, "--pw", "3", "--epochs", "10", "--epoch-seconds",
                "60", "--trials", "0", "--zone-price", "median", "--format", "json")
    assert plan["chosen"]["spot_zone"]["rule"] == "median"
    jsonschema.validate(plan, load_schema("plan"))
