"""Catalog loading: every problem collected with row, field and value; both formats."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest

from deepvm_core.catalog import (
    DEFAULT_SATURATION,
    Catalog,
    CpuType,
    GpuType,
    Quota,
    SaturationStep,
    ScalingParams,
)
from deepvm_core.catalog.artifact import catalog_to_artifact_dict, from_artifact_dict
from deepvm_core.catalog.catalog import catalog_to_dict
from deepvm_core.catalog.schema import SCHEMA_VERSION
from deepvm_core.catalog.store import load_catalog, save_catalog
from deepvm_core.catalog.types import INTERRUPTION_BUCKET_LABELS
from deepvm_core.catalog.validation import catalog_from_json_text, parse_catalog
from deepvm_core.errors import (
    CatalogError,
    CatalogNotFoundError,
    DeepVMError,
    InstanceNotFoundError,
)
from tests.conftest import SHARED_DATA, SPOT_ADVISOR_EXCERPT, read_json
from tests.factories import catalog_dict, cpu_row, gpu_row, make_catalog


def problems_of(data) -> list[tuple[str, str, object]]:
    with pytest.raises(CatalogError) as info:
        parse_catalog(data)
    return [(p.where, p.field, p.value) for p in info.value.problems]


def test_valid_catalog_builds_typed_rows():
    cat = make_catalog()
    assert cat.gpu_types[0].name == "g1"
    assert cat.gpu_types[0].scaling == ScalingParams(0.1, 15.0, 10.0)
    assert cat.cpu_types[0].memory_gib == 8.0
    assert cat.warnings == ()


def test_every_problem_is_collected_not_only_the_first():
    data = catalog_dict(
        gpus=[gpu_row("a", spot_usd_per_hour="cheap", eflops=0),
              gpu_row("b", on_demand_usd_per_hour=-1.0, network_gbps=math.nan)],
        cpus=[cpu_row("c", memory_gib=None, vcpus=2.5)],
    )
    found = problems_of(data)
    assert ("gpu_types[0] (a)", "spot_usd_per_hour", "cheap") in found
    assert ("gpu_types[0] (a)", "eflops", 0) in found
    assert ("gpu_types[1] (b)", "on_demand_usd_per_hour", -1.0) in found
    assert any(w == "gpu_types[1] (b)" and f == "network_gbps" for w, f, _ in found)
    assert ("cpu_types[0] (c)", "memory_gib", None) in found
    assert ("cpu_types[0] (c)", "vcpus", 2.5) in found
    assert len(found) == 6


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan, 0, -0.5, None, "x", True])
def test_bad_prices_are_rejected(value):
    found = problems_of(catalog_dict(gpus=[gpu_row(spot_usd_per_hour=value)]))
    assert [(f, v) for _, f, v in found] == [("spot_usd_per_hour", value)] or (
        isinstance(value, float) and math.isnan(value) and found[0][1] == "spot_usd_per_hour")


def test_missing_field_named():
    row = gpu_row()
    del row["vcpus"]
    assert problems_of(catalog_dict(gpus=[row])) == [("gpu_types[0] (g1)", "vcpus", None)]


def test_duplicate_names_across_gpu_and_cpu():
    found = problems_of(catalog_dict(gpus=[gpu_row("x")], cpus=[cpu_row("x")]))
    assert found == [("cpu_types (x)", "name", "x")]


@pytest.mark.parametrize(("field", "value"), [("a", 0.0), ("a", 11.0), ("b", -1.0), ("c", 0.0),
                                         ("c", math.inf)])
def test_scaling_out_of_range(field, value):
    scaling = {"a": 0.1, "b": 10.0, "c": 5.0, field: value}
    found = problems_of(catalog_dict(gpus=[gpu_row(scaling=scaling)]))
    assert [(f, v) for _, f, v in found] == [(f"scaling.{field}", value)]


def test_spot_above_on_demand_is_a_warning_not_an_error():
    cat = make_catalog(gpus=[gpu_row(spot_usd_per_hour=2.0, on_demand_usd_per_hour=1.0)])
    assert [(w.field, w.value) for w in cat.warnings] == [("spot_usd_per_hour", 2.0)]


def test_gpu_without_eflops_is_kept_but_not_solvable():
    cat = make_catalog(gpus=[gpu_row("known"), gpu_row("new", eflops=None)])
    assert [g.name for g in cat.gpu_types] == ["known", "new"]
    assert [g.name for g in cat.solvable_gpu_types] == ["known"]
    assert any("needs eFLOPS" in w.message for w in cat.warnings)


def test_saturation_table_must_increase_and_be_whole():
    found = problems_of(catalog_dict(saturation=[
        {"bandwidth_gbps": 5, "max_gpu_vms": 16}, {"bandwidth_gbps": 5, "max_gpu_vms": 2.5}]))
    assert ("network_saturation[1]", "max_gpu_vms", 2.5) in found


def test_quota_problems():
    found = problems_of(catalog_dict(quotas=[
        {"family": "G", "on_demand_vcpus": -4, "spot_vcpus": 8},
        {"family": "G", "on_demand_vcpus": 4, "spot_vcpus": 8}]))
    assert found == [("quotas[0]", "on_demand_vcpus", -4), ("quotas[1]", "family", "G")]


def test_malformed_json_names_line_and_column():
    with pytest.raises(CatalogError) as info:
        catalog_from_json_text('{"schema_version": 1,\n "name": }', source="broken.json")
    problem = info.value.problems[0]
    assert problem.where == "line 2, column 10"
    assert "malformed JSON" in problem.message
    assert "broken.json" in str(info.value)


def test_not_an_object():
    with pytest.raises(CatalogError):
        catalog_from_json_text("[1, 2]")


def test_round_trip_ours(tmp_path):
    cat = make_catalog()
    save_catalog(cat, tmp_path / "c.json")
    again = load_catalog(tmp_path / "c.json")
    assert again == cat
    assert again.sha256 == cat.sha256


def test_parse_never_mutates_its_input():
    data = catalog_dict()
    before = json.dumps(data, sort_keys=True)
    parse_catalog(data)
    assert json.dumps(data, sort_keys=True) == before


def test_artifact_import_matches_bundled_catalog(aws_catalog):
    raw = json.loads((SHARED_DATA / "artifact_data.json").read_text())
    imported = catalog_from_json_text(json.dumps(raw), source="artifact_data.json")
    by_name = {t.name: t for t in (*imported.gpu_types, *imported.cpu_types)}
    for t in (*aws_catalog.gpu_types, *aws_catalog.cpu_types):
        other = by_name[t.name]
        assert (other.on_demand_usd_per_hour, other.spot_usd_per_hour, other.vcpus,
                other.network_gbps, other.family) == (
            t.on_demand_usd_per_hour, t.spot_usd_per_hour, t.vcpus, t.network_gbps, t.family)
    assert {q.family: (q.on_demand_vcpus, q.spot_vcpus) for q in imported.quotas}["G"] == (32, 128)
    # the artifact keeps its fits in code: an import gets them by name (model.md's table)
    assert [g.scaling for g in imported.gpu_types] == [g.scaling for g in aws_catalog.gpu_types]


def test_artifact_import_without_known_fit_warns_k_is_one():
    raw = {"instances": [{"name": "new.gpu", "type": "G", "ondemand_price": 1, "spot_price": 0.3,
                          "vCPU": 4, "network_bandwidth": 10, "flops": 10}]}
    cat = catalog_from_json_text(json.dumps(raw))
    assert cat.gpu_types[0].scaling is None
    assert [w.field for w in cat.warnings] == ["scaling"]


def test_bundled_aws_catalog_facts(aws_catalog):
    g4 = aws_catalog.instance("g4dn.xlarge")
    assert g4.spot_usd_per_hour == 0.1578  # the price that reproduces Table IV
    assert g4.scaling == ScalingParams(0.1338806402, 12.87424514, 6.176666667)
    assert aws_catalog.quota("G").on_demand_vcpus == 32
    assert aws_catalog.quota("G").spot_vcpus == 128
    assert aws_catalog.saturation == DEFAULT_SATURATION
    assert aws_catalog.region == "us-east-1"
    assert aws_catalog.prices_date.startswith("2023-10")
    assert "Table IV" in aws_catalog.source


def test_bundled_simulated_catalog_matches_artifact(sim_catalog):
    raw = json.loads((SHARED_DATA / "artifact_simul_data.json").read_text())
    rows = {r["name"]: r for r in raw["instances"]}
    assert len(sim_catalog.gpu_types) == 10
    assert len(sim_catalog.cpu_types) == 8
    for g in sim_catalog.gpu_types:
        r = rows[g.name]
        assert (g.eflops, g.scaling) == (r["flops"], ScalingParams(r["a"], r["b"], r["c"]))


def test_artifact_export_round_trip(aws_catalog):
    back = parse_catalog(from_artifact_dict(
        catalog_to_artifact_dict(aws_catalog), name=aws_catalog.name, region="us-east-1"))
    assert [g.scaling for g in back.gpu_types] == [g.scaling for g in aws_catalog.gpu_types]
    assert [c.memory_gib for c in back.cpu_types] == [c.memory_gib for c in aws_catalog.cpu_types]


def test_artifact_problem_rows_are_reported():
    raw = {"instances": [{"name": "x", "type": "G", "ondemand_price": "a", "spot_price": 0.1,
                          "vCPU": 4, "network_bandwidth": 10, "flops": 1}]}
    with pytest.raises(CatalogError) as info:
        catalog_from_json_text(json.dumps(raw))
    assert [(p.where, p.field, p.value) for p in info.value.problems] == [
        ("instances[0] (x)", "ondemand_price", "a")]


def test_artifact_problems_name_the_artifact_row_and_field():
    raw = {"instances": [
        {"name": "c", "type": "C", "ondemand_price": 0.2, "spot_price": 0.1, "vCPU": 4,
         "memory": 8, "network_bandwidth": 10},
        {"name": "g", "type": "G", "ondemand_price": 1, "spot_price": 0.3, "vCPU": 0,
         "network_bandwidth": 10, "flops": -5, "a": 50, "b": 1, "c": 1}],
        "available_vcpus": {"G": {"ondemand": -1, "spot": 8}}}
    with pytest.raises(CatalogError) as info:
        catalog_from_json_text(json.dumps(raw))
    assert [(p.where, p.field) for p in info.value.problems] == [
        ("instances[1] (g)", "vCPU"), ("instances[1] (g)", "flops"), ("instances[1] (g)", "a"),
        ("quotas[0]", "ondemand")]


def test_unknown_catalog_name_suggests():
    with pytest.raises(CatalogNotFoundError, match="Did you mean paper-simulated") as caught:
        load_catalog("paper-simulatd")
    error = caught.value
    assert isinstance(error, DeepVMError)
    assert isinstance(error, LookupError)
    assert not isinstance(error, CatalogError)  # not "invalid": there is no file at all
    assert (error.name, error.suggestions) == ("paper-simulatd", ("paper-simulated",))
    assert "aws-us-east-1-2023-10" in error.bundled


def test_unknown_instance_suggests(aws_catalog):
    with pytest.raises(InstanceNotFoundError, match=r"g4dn\.xlarge") as caught:
        aws_catalog.instance("g4dn.xlarg")
    error = caught.value
    assert isinstance(error, DeepVMError)
    assert isinstance(error, LookupError)
    assert (error.name, error.catalog_name) == ("g4dn.xlarg", aws_catalog.name)
    assert error.suggestions[0] == "g4dn.xlarge"


# ----------------------------------------------------------------------------- types built directly


def _gpu(**over):
    fields = dict(name="g1", family="G", on_demand_usd_per_hour=1.0, spot_usd_per_hour=0.3,
                  vcpus=4, memory_gib=16.0, network_gbps=10.0, eflops=100.0)
    fields.update(over)
    return GpuType(**fields)


def test_a_gpu_type_built_directly_cannot_hold_a_negative_price():
    with pytest.raises(CatalogError) as caught:
        _gpu(spot_usd_per_hour=-0.3)
    assert [(p.where, p.field, p.value) for p in caught.value.problems] == [
        ("g1", "spot_usd_per_hour", -0.3)]
    assert "spot_usd_per_hour = -0.3: must be greater than 0" in str(caught.value)
    assert "GpuType 'g1'" in str(caught.value)


def test_a_type_built_directly_lists_every_problem():
    with pytest.raises(CatalogError) as caught:
        _gpu(on_demand_usd_per_hour=math.nan, vcpus=2.5, network_gbps=0, eflops=-1,
             spot_by_zone_usd_per_hour={"z1": 0.0})
    assert [p.field for p in caught.value.problems] == [
        "on_demand_usd_per_hour", "vcpus", "network_gbps", "spot_by_zone_usd_per_hour.z1",
        "eflops"]


@pytest.mark.parametrize("build", [
    lambda: CpuType(name="c", family="C", on_demand_usd_per_hour=0.2, spot_usd_per_hour=0.1,
                    vcpus=4, memory_gib=None, network_gbps=10.0),
    lambda: _gpu(name=""),
    lambda: _gpu(vcpus=True),
    lambda: ScalingParams(0.0, 10.0, 5.0),
    lambda: ScalingParams(0.1, -1.0, 5.0),
    lambda: Quota("G", -1, 8),
    lambda: SaturationStep(0.0, 2),
    lambda: SaturationStep(5.0, 2.5),
    lambda: Catalog(name="x", provider="aws", region="-", prices_date="-", source="",
                    gpu_types=(_gpu(), _gpu()), cpu_types=()),
    lambda: Catalog(name="x", provider="aws", region="-", prices_date="-", source="",
                    gpu_types=(), cpu_types=(), saturation=(SaturationStep(5, 2),
                                                             SaturationStep(1, 4))),
])
def test_every_type_checks_itself(build):
    with pytest.raises(CatalogError):
        build()


def test_valid_types_build_and_loading_builds_the_same(aws_catalog):
    g4 = aws_catalog.instance("g4dn.xlarge")
    again = _gpu(name=g4.name, on_demand_usd_per_hour=g4.on_demand_usd_per_hour,
                 spot_usd_per_hour=g4.spot_usd_per_hour, network_gbps=g4.network_gbps,
                 eflops=g4.eflops, scaling=g4.scaling,
                 interruption_bucket=g4.interruption_bucket, accelerator="T4", gpu_count=1,
                 gpu_memory_gb=16.0)
    assert again == g4
    assert replace(g4, spot_usd_per_hour=0.2).spot_usd_per_hour == 0.2
    with pytest.raises(CatalogError, match="spot_usd_per_hour"):
        replace(g4, spot_usd_per_hour=-0.2)


def test_saturation_steps_serve_fewer_than_and_keep_the_file_key(aws_catalog):
    assert [s.serves_fewer_than for s in aws_catalog.saturation][:3] == [2, 12, 16]
    rows = catalog_to_dict(aws_catalog)["network_saturation"]
    assert rows[0] == {"bandwidth_gbps": 0.3, "max_gpu_vms": 2}


def test_catalog_dict_is_canonical(aws_catalog):
    assert catalog_to_dict(parse_catalog(catalog_to_dict(aws_catalog))) == catalog_to_dict(
        aws_catalog)


# ----------------------------------------------------------------------------- interruption buckets


def test_schema_version_2_reads_and_writes_the_bucket():
    data = catalog_dict(gpus=[gpu_row("a", interruption_bucket=0), gpu_row("b"),
                              gpu_row("c", interruption_bucket=None),
                              gpu_row("d", interruption_bucket=4)], schema_version=2)
    catalog = parse_catalog(data)
    assert [g.interruption_bucket for g in catalog.gpu_types] == [0, None, None, 4]
    written = catalog_to_dict(catalog)
    assert written["schema_version"] == SCHEMA_VERSION == 3  # read as 2, written as the current
    assert [r["interruption_bucket"] for r in written["gpu_types"]] == [0, None, None, 4]
    assert "interruption_bucket" not in written["cpu_types"][0]
    assert parse_catalog(written) == catalog


def test_version_1_files_load_without_buckets():
    catalog = parse_catalog(catalog_dict(gpus=[gpu_row("a")], schema_version=1))
    assert catalog.gpu_types[0].interruption_bucket is None
    sim = load_catalog("paper-simulated")  # still a version 1 file
    assert all(g.interruption_bucket is None for g in sim.gpu_types)


@pytest.mark.parametrize("value", [5, -1, 2.5, "two", True, [1], float("nan")])
def test_a_bad_bucket_names_row_field_and_value(value):
    data = catalog_dict(gpus=[gpu_row("ok", interruption_bucket=1),
                              gpu_row("bad", interruption_bucket=value)], schema_version=2)
    with pytest.raises(CatalogError) as caught:
        parse_catalog(data)
    found = [(p.where, p.field) for p in caught.value.problems]
    assert found == [("gpu_types[1] (bad)", "interruption_bucket")]
    assert caught.value.problems[0].value is value
    assert "interruption_bucket" in str(caught.value)


def test_a_whole_number_bucket_is_read_like_other_numbers():
    """Like vcpus: 3.0 (a spreadsheet or the dashboard's editor) is the whole number 3."""
    data = catalog_dict(gpus=[gpu_row("a", interruption_bucket=3.0)], schema_version=2)
    bucket = parse_catalog(data).gpu_types[0].interruption_bucket
    assert bucket == 3
    assert isinstance(bucket, int)


def test_unknown_schema_version_is_named():
    with pytest.raises(CatalogError) as caught:
        parse_catalog(catalog_dict(schema_version=4))
    problem = caught.value.problems[0]
    assert (problem.field, problem.value) == ("schema_version", 4)
    assert "must be 1, 2 or 3" in problem.message


@pytest.mark.parametrize("value", [5, -1, 1.0, True])
def test_a_gpu_type_built_directly_checks_its_bucket(value):
    with pytest.raises(CatalogError, match="interruption_bucket"):
        GpuType(name="g", family="G", on_demand_usd_per_hour=1.0, spot_usd_per_hour=0.3,
                vcpus=4, memory_gib=16.0, network_gbps=10.0, eflops=1.0,
                interruption_bucket=value)


def test_bundled_aws_catalog_has_the_excerpts_us_east_1_buckets(aws_catalog):
    linux = read_json(SPOT_ADVISOR_EXCERPT)["spot_advisor"]["us-east-1"]["Linux"]
    for gpu in aws_catalog.gpu_types:
        expected = linux[gpu.name]["r"] if gpu.name in linux else None
        assert gpu.interruption_bucket == expected, gpu.name
    assert {g.name: g.interruption_bucket for g in aws_catalog.gpu_types} == {
        "g3s.xlarge": None, "g4dn.xlarge": 3, "g5.xlarge": 4}
    assert "Spot Instance Advisor" in aws_catalog.source
    assert "mid-2025" in aws_catalog.source
    assert INTERRUPTION_BUCKET_LABELS[3] == "15-20%"


def test_uploads_are_content_addressed_and_pruned(tmp_path, monkeypatch) -> None:
    """Issue 9: uploads live on the server under their sha256; the newest ``keep`` stay."""
    from deepvm_core.catalog import store
    from deepvm_core.catalog.store import load_catalog, load_upload, save_upload

    monkeypatch.setenv("DEEPVM_UPLOAD_CATALOG_DIR", str(tmp_path))
    base = load_catalog("paper-simulated")
    catalogs = [replace(base, name=f"up-{i}") for i in range(3)]
    keys = [save_upload(c, keep=2) for c in catalogs]
    assert keys == [c.sha256[:store.UPLOAD_KEY_HEX] for c in catalogs]
    assert sorted(p.name for p in tmp_path.glob("*.json")) == sorted(
        f"{c.sha256}.json" for c in catalogs[1:])
    assert load_upload(keys[0]) is None  # pruned
    assert load_upload(keys[2]) == catalogs[2]
    assert save_upload(catalogs[2], keep=2) == keys[2]  # the same content: the same file
    assert len(list(tmp_path.glob("*.json"))) == 2
    for bad in ("", "../../etc", keys[2].upper(), keys[2][:8]):
        assert load_upload(bad) is None
