"""Pure parts of the AWS fetcher (no server, no network): parsing, assembly, comparison,
sanitizing and the CLI's argument errors."""

from __future__ import annotations

import argparse
import gzip
import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from aws_fakes import BASE_CATALOG
from aws_price_data import price_list
from hypothesis import given
from hypothesis import strategies as st

from deepvm_core.catalog.store import load_catalog
from deepvm_core.catalog.validation import parse_catalog
from deepvm_core.cli.fetch import add_fetch_parser, main, run_fetch
from deepvm_core.cloud import aws
from deepvm_core.cloud.aws import assemble, client, fetch, instance_types, pricing, spot_prices
from deepvm_core.errors import InputError
from deepvm_core.model import Scenario
from deepvm_core.recommend import regions
from deepvm_core.recommend.recommendation import recommend
from tests.phrases import assert_says

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def base():
    return load_catalog(BASE_CATALOG)


# ----------------------------------------------------------------------------- network


@pytest.mark.parametrize(("text", "gbps", "burst"), [
    ("Up to 25 Gigabit", 25.0, True),
    ("25 Gigabit", 25.0, False),
    ("100 Gigabit", 100.0, False),
    ("Up to 12.5 Gigabit", 12.5, True),
    ("4x 100 Gigabit", 400.0, False),
    ("16x 200 Gigabit", 3200.0, False),
])
def test_network_gigabit_strings(text, gbps, burst):
    parsed = instance_types.parse_network_gbps(text)
    assert parsed == instance_types.NetworkBandwidth(gbps, mapped=False, burst=burst)


@pytest.mark.parametrize(("text", "gbps"), [("High", 1.7), ("Moderate", 0.3),
                                            ("Low to Moderate", 0.1), ("Low", 0.1),
                                            ("Very Low", 0.05), ("  very   LOW ", 0.05)])
def test_network_named_levels(text, gbps):
    """AWS's named levels map to a bandwidth (never a burst), spacing and case ignored."""
    parsed = instance_types.parse_network_gbps(text)
    assert parsed == instance_types.NetworkBandwidth(gbps, mapped=True, burst=False)


@pytest.mark.parametrize("text", ["", "Fast", "Gigabit", "-5 Gigabit", "0 Gigabit", None])
def test_network_strings_not_understood(text):
    with pytest.raises(client.MalformedAnswer):
        instance_types.parse_network_gbps(text)


@given(st.decimals(min_value="0.01", max_value="10000", places=2), st.booleans())
def test_network_gigabit_roundtrip(value, up_to):
    text = f"{'Up to ' if up_to else ''}{value} Gigabit"
    parsed = instance_types.parse_network_gbps(text)
    assert parsed.gbps == pytest.approx(float(value))
    assert parsed.burst is up_to
    assert not parsed.mapped


def test_bundled_catalog_network_matches_the_documented_mapping(base):
    # The mapping reproduces the bundled catalog's values for its "Moderate"/"High" types.
    network = instance_types.parse_network_gbps
    assert base.instance("c3.xlarge").network_gbps == network("Moderate").gbps
    assert base.instance("c4.xlarge").network_gbps == network("High").gbps


def test_every_moto_instance_type_parses():
    """moto ships AWS's DescribeInstanceTypes data: every item must parse."""
    import moto

    path = Path(moto.__file__).parent / "ec2" / "resources" / "instance_types.json.gz"
    data = json.loads(gzip.decompress(path.read_bytes()))
    specs = [instance_types.parse_instance_type(item) for item in data.values()]
    assert len(specs) > 500
    gpus = [s for s in specs if s.is_gpu]
    assert gpus
    assert all(s.gpu_model and s.gpu_count >= 1 for s in gpus)
    assert all(s.network_gbps > 0 and s.memory_gib > 0 and s.vcpus >= 1 for s in specs)
    by_name = {s.name: s for s in specs}
    g4dn = by_name["g4dn.xlarge"]
    assert (g4dn.vcpus, g4dn.memory_gib, g4dn.network_gbps) == (4, 16.0, 25.0)
    assert g4dn.gpu_text() == "1 x NVIDIA T4 (16 GiB)"
    assert by_name["c3.xlarge"].memory_gib == 7.5
    assert by_name["c3.xlarge"].network_mapped
    assert not by_name["c5.xlarge"].is_gpu


# ----------------------------------------------------------------------------- specs, families


@pytest.mark.parametrize(("name", "family"), [
    ("g4dn.xlarge", "G"), ("g5.48xlarge", "G"), ("p4d.24xlarge", "P"), ("c5.xlarge", "C"),
    ("m6i.xlarge", "M"), ("t3.xlarge", "T"), ("d3.xlarge", "D"), ("inf2.xlarge", "Inf"),
    ("trn1.2xlarge", "Trn"), ("dl1.24xlarge", "DL"), ("vt1.3xlarge", "G"), ("f1.2xlarge", "F"),
    ("x2iedn.xlarge", "X"), ("c7i-flex.large", "C"), ("u-6tb1.metal", "U"),
    ("mac2-m2pro.metal", "Mac"), ("im4gn.large", "I"), ("hpc7g.4xlarge", "HPC"),
])
def test_quota_family(name, family):
    assert instance_types.quota_family(name) == family


def _raw(name="g9.xlarge", network="Up to 10 Gigabit", gpu=True):
    raw = {"InstanceType": name, "VCpuInfo": {"DefaultVCpus": 8},
           "MemoryInfo": {"SizeInMiB": 32768}, "NetworkInfo": {"NetworkPerformance": network}}
    if gpu:
        raw["GpuInfo"] = {"Gpus": [{"Name": "L4", "Manufacturer": "NVIDIA", "Count": 2,
                                    "MemoryInfo": {"SizeInMiB": 23034}}],
                          "TotalGpuMemoryInMiB": 46068}
    return raw


def test_parse_instance_type_gpu():
    spec = instance_types.parse_instance_type(_raw())
    assert spec == aws.InstanceSpec(
        name="g9.xlarge", family="G", vcpus=8, memory_gib=32.0, network_gbps=10.0,
        network_text="Up to 10 Gigabit", gpu_model="NVIDIA L4", gpu_count=2,
        gpu_memory_gib=46068 / 1024,
        gpu_info=instance_types.GpuInfo(name="L4", count=2, memory_mib_per_gpu=23034.0))


def test_unknown_network_level_falls_back_to_the_network_cards():
    raw = _raw(network="Ultra")
    raw["NetworkInfo"]["NetworkCards"] = [{"PeakBandwidthInGbps": 50.0},
                                          {"PeakBandwidthInGbps": 50.0}]
    spec = instance_types.parse_instance_type(raw)
    assert spec.network_gbps == 100.0
    assert spec.network_mapped
    with pytest.raises(client.MalformedAnswer, match=r"g9\.xlarge"):
        instance_types.parse_instance_type(_raw(network="Ultra"))


@pytest.mark.parametrize("broken", [
    {"VCpuInfo": {}}, {"MemoryInfo": {"SizeInMiB": "lots"}}, {"InstanceType": ""},
    {"VCpuInfo": {"DefaultVCpus": True}},
])
def test_parse_instance_type_malformed(broken):
    with pytest.raises(client.MalformedAnswer):
        instance_types.parse_instance_type({**_raw(), **broken})


# ----------------------------------------------------------------------------- spot


def _entry(name, zone, price, minutes_ago):
    return {"InstanceType": name, "AvailabilityZone": zone, "SpotPrice": f"{price}",
            "Timestamp": NOW - timedelta(minutes=minutes_ago)}


def test_latest_spot_price_per_zone_not_the_cheapest():
    history = [_entry("g4dn.xlarge", "us-east-1a", 0.20, 5),
               _entry("g4dn.xlarge", "us-east-1a", 0.10, 120),  # older and cheaper
               _entry("g4dn.xlarge", "us-east-1b", 0.25, 60),
               _entry("c5.xlarge", "us-east-1a", 0.08, 1),
               _entry("c5.xlarge", "us-east-1b", 0.0, 1)]  # non-positive: ignored
    assert spot_prices.latest_spot_by_zone(history) == {
        "c5.xlarge": {"us-east-1a": 0.08},
        "g4dn.xlarge": {"us-east-1a": 0.20, "us-east-1b": 0.25},
    }


def test_spot_timestamps_as_text():
    history = [{"InstanceType": "t", "AvailabilityZone": "z", "SpotPrice": "0.3",
                "Timestamp": "2026-11-22T10:00:00.000Z"},
               {"InstanceType": "t", "AvailabilityZone": "z", "SpotPrice": "0.2",
                "Timestamp": "2026-11-22T09:00:00Z"}]
    assert spot_prices.latest_spot_by_zone(history) == {"t": {"z": 0.3}}


@pytest.mark.parametrize("broken", [{"SpotPrice": "cheap"}, {"AvailabilityZone": None},
                                    {"Timestamp": "yesterday"}, {"SpotPrice": "nan"}])
def test_spot_history_malformed(broken):
    with pytest.raises(client.MalformedAnswer):
        spot_prices.latest_spot_by_zone([{**_entry("t", "z", 0.1, 1), **broken}])


@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c"]),
                          st.floats(min_value=0.001, max_value=50),
                          st.integers(min_value=0, max_value=10_000)), min_size=1, max_size=40))
def test_latest_spot_is_the_newest_entry_of_each_zone(entries):
    history = [_entry("t", zone, price, minutes) for zone, price, minutes in entries]
    result = spot_prices.latest_spot_by_zone(history)["t"]
    for zone in {z for z, _, _ in entries}:
        newest = min(m for z, _, m in entries if z == zone)
        candidates = [float(f"{p}") for z, p, m in entries if z == zone and m == newest]
        assert result[zone] == candidates[-1]
    low = spot_prices.aggregate_spot_usd_per_hour(result, "min")
    mid = spot_prices.aggregate_spot_usd_per_hour(result, "median")
    assert low == min(result.values())
    assert low <= mid <= max(result.values())


def test_spot_aggregates():
    zones = {"a": 0.3, "b": 0.1, "c": 0.2}
    assert spot_prices.aggregate_spot_usd_per_hour(zones) == 0.1
    assert spot_prices.aggregate_spot_usd_per_hour(zones, "median") == 0.2
    with pytest.raises(ValueError, match="no spot prices"):
        spot_prices.aggregate_spot_usd_per_hour({}, "min")
    with pytest.raises(ValueError, match="spot aggregate 'mean' must be one of"):
        spot_prices.aggregate_spot_usd_per_hour(zones, "mean")  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- on-demand


def test_on_demand_price_from_the_price_list(base):
    items = [text for _, text in price_list(base, "us-east-1", 1.0)]
    # every product of every type, decoys (Windows, Dedicated, reservations, SQL) included
    price, notes = pricing.parse_on_demand_usd_per_hour(items, "g4dn.xlarge", "us-east-1")
    assert price == pytest.approx(0.526)
    assert notes == ()
    assert pricing.parse_on_demand_usd_per_hour(items, "g4dn.xlarge", "eu-west-1") == (None, ())
    assert pricing.parse_on_demand_usd_per_hour([], "g4dn.xlarge") == (None, ())


def _product(usd, **attributes):
    attrs = {"instanceType": "g4dn.xlarge", "operatingSystem": "Linux", **attributes}
    return json.dumps({"product": {"attributes": attrs}, "terms": {"OnDemand": {"X.Y": {
        "priceDimensions": {"X.Y.Z": {"unit": "Hrs", "pricePerUnit": {"USD": usd}}}}}}})


def test_on_demand_price_several_prices_and_capacity_blocks():
    items = [_product("0.6"), _product("0.5"), _product("9.9", marketoption="CapacityBlock"),
             _product("0.0000000000")]
    price, notes = pricing.parse_on_demand_usd_per_hour(items, "g4dn.xlarge")
    assert price == 0.5
    assert len(notes) == 1
    assert "0.5, 0.6" in notes[0]
    assert "lowest" in notes[0]


@pytest.mark.parametrize("item", ['{"product": {"attributes": ', "[1, 2]", '{"terms": {}}',
                                  _product("one dollar")])
def test_on_demand_price_malformed(item):
    with pytest.raises(client.MalformedAnswer):
        pricing.parse_on_demand_usd_per_hour([item], "g4dn.xlarge")


# ----------------------------------------------------------------------------- sanitizing


def test_sanitize_message_redacts_credentials():
    text = ("Credential=AKIAIOSFODNN7EXAMPLE/20261122/us-east-1/ec2/aws4_request, "
            "Signature=" + "ab12" * 16 + " key ASIAJEXAMPLEXEG2JICEA secret wJalrXUtnFEMI "
            "X-Amz-Security-Token=FwoGZXIvYXdz&x=1 https://user:hunter2@proxy.example:3128/")
    clean = aws.sanitize_message(text, ["wJalrXUtnFEMI"])
    for secret in ("AKIAIOSFODNN7EXAMPLE", "ab12ab12", "ASIAJEXAMPLEXEG2JICEA", "wJalrXUtnFEMI",
                   "FwoGZXIvYXdz", "hunter2"):
        assert secret not in clean
    assert "us-east-1" not in clean.split("Credential=")[1][:12]  # the scope is gone too
    assert "proxy.example:3128" in clean  # the rest stays readable


# ----------------------------------------------------------------------------- assembly


def _spec(name, gpu, **kw):
    defaults = dict(name=name, family=instance_types.quota_family(name), vcpus=4, memory_gib=16.0,
                    network_gbps=10.0, network_text="Up to 10 Gigabit")
    if gpu:
        defaults.update(gpu_model="NVIDIA A10G", gpu_count=1, gpu_memory_gib=24.0)
    return aws.InstanceSpec(**{**defaults, **kw})


def test_assembly_carries_base_data_and_estimates_unmeasured_types(base):
    specs = [_spec("g4dn.xlarge", True, network_gbps=25.0), _spec("g5.2xlarge", True),
             _spec("c5.xlarge", False, memory_gib=8.0),
             _spec("c4.xlarge", False, network_gbps=1.7, network_text="High",
                   network_mapped=True, memory_gib=7.5),
             _spec("p3.2xlarge", True), _spec("m5.large", False)]
    spot = {"g4dn.xlarge": {"z1": 0.2, "z2": 0.1578}, "g5.2xlarge": {"z1": 0.4},
            "c5.xlarge": {"z1": 0.0999}, "c4.xlarge": {"z1": 0.12}, "m5.large": {"z1": 0.03}}
    od = {"g4dn.xlarge": 0.526, "g5.2xlarge": 1.212, "c5.xlarge": 0.17, "c4.xlarge": 0.199,
          "p3.2xlarge": 3.06}
    data, notes = assemble.assemble_catalog_dict(
        region="eu-west-1", specs=specs, spot_by_type=spot, on_demand_by_type=od, base=base,
        fetched_at=NOW)
    catalog = parse_catalog(data)
    assert catalog.name == "aws-eu-west-1-20261122T120000Z"
    assert (catalog.region, catalog.prices_date) == ("eu-west-1", "2026-11-22T12:00:00Z")
    g4dn = catalog.instance("g4dn.xlarge")
    assert g4dn.eflops == 377.0
    assert g4dn.scaling == base.instance("g4dn.xlarge").scaling
    assert g4dn.spot_usd_per_hour == 0.1578
    assert dict(g4dn.spot_by_zone_usd_per_hour) == {"z1": 0.2, "z2": 0.1578}
    # g5.2xlarge is not in the base catalog: its eFLOPS is the accelerator model's estimate for
    # one A10G, the chip of the base's measured g5.xlarge (696 eFLOPS): the estimator's
    # leave-one-out error on that type is +3.3 %, so the estimate lies within 5 % of 696.
    g5 = catalog.instance("g5.2xlarge")
    assert g5.eflops is not None
    assert abs(g5.eflops / 696.0 - 1.0) < 0.05
    assert g5.eflops_source.startswith("estimated: ")
    assert g5.scaling_source.startswith("prior: ")
    assert [g.name for g in catalog.solvable_gpu_types] == ["g4dn.xlarge", "g5.2xlarge"]
    assert {c.name for c in catalog.cpu_types} == {"c5.xlarge", "c4.xlarge"}
    assert catalog.quotas == base.quotas
    assert catalog.saturation == base.saturation
    text = "\n".join(notes)
    assert_says(text, "no on-demand", "m5.large", "no Linux/UNIX spot price", "p3.2xlarge",
                "eFLOPS estimated from the accelerator model", "g5.2xlarge (1 x A10G)",
                "c4.xlarge 'High' -> 1.7 Gbps", "quotas are the base catalog's")
    assert "NVIDIA A10G" in catalog.source
    assert base.name in catalog.source
    # Every GPU type has an eFLOPS (measured or estimated): no "needs eFLOPS" warning is left.
    assert not any(w.field == "eflops" for w in catalog.warnings)


def test_assembly_without_base_has_no_quotas():
    data, _ = assemble.assemble_catalog_dict(
        region="us-east-1", specs=[_spec("g5.xlarge", True)],
        spot_by_type={"g5.xlarge": {"a": 0.3}}, on_demand_by_type={"g5.xlarge": 1.0},
        base=None, fetched_at=NOW, spot_aggregate="median")
    catalog = parse_catalog(data)
    # Without a base catalog the type still gets the accelerator model's estimate (one A10G).
    assert catalog.quotas == ()
    assert catalog.gpu_types[0].eflops_source.startswith("estimated: ")
    assert "median" in catalog.source


# ----------------------------------------------------------------------------- comparison


def test_compare_regions_ranks_best_region_first(base):
    dear_gpus = tuple(replace(g, spot_usd_per_hour=g.spot_usd_per_hour * 1.5)
                      for g in base.gpu_types)
    dear = replace(base, name="dear", region="eu-west-1", gpu_types=dear_gpus)
    none = replace(base, name="empty", region="ap-south-2", gpu_types=())
    scenario = Scenario(3.0, checkpoint_gb=0.3, buffer_checkpoints=2.0)
    rows = regions.compare_regions({"ap-south-2": none, "eu-west-1": dear, "us-east-1": base},
                               scenario)
    assert [r.region for r in rows] == ["us-east-1", "eu-west-1", "ap-south-2"]
    best = recommend(base, scenario).best
    assert rows[0].best == best
    assert rows[0].hourly_price_usd == pytest.approx(2.8526)
    assert rows[0].objective_value > rows[1].objective_value
    assert rows[2].best is None
    assert rows[2].explanation


# ----------------------------------------------------------------------------- CLI errors


def _one_line_error(capsys) -> str:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert captured.out == ""
    return lines[0]


@pytest.mark.parametrize(("argv", "expected"), [
    ([], "--region"),
    (["--region", "us-east-1", "--spot-aggregate", "mean"], "spot-aggregate"),
    (["--region", "us-east-1", "--max-attempts", "many"], "max-attempts"),
    (["--region", "Mars-1"], "region"),
    (["--region", "us-east-1", "--instance-types", "G5!"], "instance_types"),
    (["--region", "us-east-1", "--region", "eu-west-1", "--out", "x.json"], ".json"),
    (["--region", "us-east-1", "--max-attempts", "0"], "max_attempts"),
    (["--region", "us-east-1", "--base", "aws-us-east-1-2023"], "Did you mean"),
    (["--region", "us-east-1", "--base", "none"], "instance types or a base catalog"),
    (["--region", "us-east-1", "--compare-pw", "-1"], "pw_usd_per_hour"),
])
def test_cli_bad_arguments_exit_2_with_one_line(argv, expected, capsys, monkeypatch):
    # None of these may reach a network: the endpoints point nowhere.
    monkeypatch.setenv("AWS_ENDPOINT_URL_EC2", "http://127.0.0.1:9")
    monkeypatch.setenv("AWS_ENDPOINT_URL_PRICING", "http://127.0.0.1:9")
    assert main(argv) == 2
    line = _one_line_error(capsys)
    assert line.startswith("deepvm fetch: error:")
    assert expected in line


def test_cli_wiring_is_one_line():
    parser = argparse.ArgumentParser(prog="deepvm")
    subparsers = parser.add_subparsers(dest="command", required=True)
    add_fetch_parser(subparsers)
    args = parser.parse_args(["fetch", "--region", "us-east-1", "--region", "eu-west-1",
                              "--instance-types", "g5.*", "c5.xlarge", "--spot-aggregate",
                              "median", "--profile", "research"])
    assert args.func is run_fetch
    assert args.command == "fetch"
    assert args.regions == ["us-east-1", "eu-west-1"]
    assert args.instance_types == ["g5.*", "c5.xlarge"]
    assert (args.spot_aggregate, args.profile, args.base) == ("median", "research",
                                                              aws.DEFAULT_BASE_CATALOG)


def test_input_validation():
    assert aws.validate_regions(["us-east-1", "US-EAST-1 ", "us-gov-west-1"]) == (
        "us-east-1", "us-gov-west-1")
    assert aws.validate_instance_types(["g5.*, c5.xlarge", "g5.*"]) == ("g5.*", "c5.xlarge")
    for bad in (["us_east_1"], [], ["us-east-1; rm -rf /"]):
        with pytest.raises(InputError):
            aws.validate_regions(bad)
    with pytest.raises(InputError):
        aws.validate_instance_types(["g5.xlarge --evil"])


# ----------------------------------------------------------------------------- writing


def test_a_failed_write_rolls_back_the_files_of_the_same_fetch(base, tmp_path, monkeypatch):
    existing = tmp_path / "kept.json"
    existing.write_text("earlier content")
    new = tmp_path / "new.json"
    real_save = fetch.save_catalog
    calls = []

    def failing_save(catalog, path):
        calls.append(path)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        return real_save(catalog, path)

    monkeypatch.setattr(fetch, "save_catalog", failing_save)
    with pytest.raises(aws.FetchError) as caught:
        fetch.write_fetched_catalogs([base, base, base], [new, existing, tmp_path / "third.json"])
    assert caught.value.kind == "write"
    assert "No space left" in str(caught.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.json"]
    assert existing.read_text() == "earlier content"


def test_write_into_a_folder_that_cannot_exist(base, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(aws.FetchError, match="Nothing was written"):
        fetch.write_fetched_catalogs([base], [blocker / "sub" / "c.json"])
    assert blocker.read_text() == "x"
