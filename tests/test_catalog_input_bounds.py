"""Hostile catalog files: whatever bytes arrive (an upload, ``--catalog PATH``, ``deepvm catalog
validate``), loading ends in a :class:`CatalogError` listing its problems, never another
exception: the nesting depth and the size are bounded before the parser runs, and what the
parser can raise is caught."""

from __future__ import annotations

import contextlib
import functools
import json
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.synthetic import synthetic_catalog
from deepvm_core.catalog.catalog import catalog_to_dict
from deepvm_core.catalog.json_input import MAX_JSON_DEPTH, json_nesting_depth
from deepvm_core.catalog.rules import MAX_CPU_TYPES, MAX_GPU_TYPES
from deepvm_core.catalog.schema import MAX_CATALOG_BYTES
from deepvm_core.catalog.store import load_catalog
from deepvm_core.catalog.validation import catalog_from_json_text, parse_catalog
from deepvm_core.cli import main
from deepvm_core.errors import CatalogError
from tests.factories import catalog_dict, cpu_row, gpu_row

DEEP_LIST = "[" * 100_000 + "]" * 100_000
DEEP_OBJECT = '{"a":' * 100_000 + "1" + "}" * 100_000


def refused(text: str | bytes) -> CatalogError:
    """The :class:`CatalogError` loading ``text`` raises (any other exception fails)."""
    with pytest.raises(CatalogError) as info:
        catalog_from_json_text(text, source="upload.json")
    return info.value


@pytest.mark.parametrize("text", [DEEP_LIST, DEEP_OBJECT, DEEP_LIST.encode()])
def test_deep_nesting_is_a_catalog_error_not_a_recursion_error(text: str | bytes) -> None:
    error = refused(text)
    (problem,) = error.problems
    assert problem.value == 100_000
    assert f"at most {MAX_JSON_DEPTH}" in problem.message
    assert "upload.json is invalid (1 problem)" in str(error)


def test_nesting_inside_a_catalog_row_is_refused_too() -> None:
    data = catalog_dict(gpus=[gpu_row(scaling=None, name="x")])
    text = json.dumps(data).replace('"scaling": null', '"scaling": ' + "[" * 5000 + "]" * 5000)
    assert "nests 5,003 levels" in str(refused(text))  # the row sits 3 deep


def test_brackets_inside_strings_do_not_count_as_nesting() -> None:
    name = '[{"' * 200 + '\\"[[['
    text = json.dumps(catalog_dict(source=name))
    assert json_nesting_depth(text) == 4  # catalog, gpu_types, row, scaling
    assert parse_catalog(json.loads(text)).source == json.loads(text)["source"]
    assert catalog_from_json_text(text).source == json.loads(text)["source"]


def test_an_oversized_file_is_refused_before_it_is_parsed() -> None:
    text = json.dumps(catalog_dict(source="x" * MAX_CATALOG_BYTES))
    (problem,) = refused(text).problems
    assert problem.value == len(text)
    assert f"{MAX_CATALOG_BYTES:,} bytes" in problem.message
    (problem,) = refused(text.encode()).problems
    assert problem.value == len(text)


def test_an_oversized_file_on_disk_is_not_read_whole(tmp_path: Any) -> None:
    path = tmp_path / "huge.json"
    with path.open("wb") as handle:  # a sparse file: large, cheap
        handle.truncate(50 * MAX_CATALOG_BYTES)
    with pytest.raises(CatalogError) as info:
        load_catalog(path)
    assert "bytes" in info.value.problems[0].message


@pytest.mark.parametrize(("text", "needle"), [
    ('{"schema_version": 2, "gpu_types": [{"vcpus": 1' + "0" * 5000 + "}]}", "finite"),
    ('{"schema_version": 1' + "0" * 5000 + "}", "schema_version"),
    ("1" + "0" * 5000, "a catalog must be a JSON object"),
    ('{"gpu_types": [{"on_demand_usd_per_hour": 1e999}]}', "finite"),
    ('{"gpu_types": [{"on_demand_usd_per_hour": NaN}]}', "finite"),
    ('{"gpu_types": [{"on_demand_usd_per_hour": -Infinity}]}', "finite"),
    (b"\xff\xfe\x00", "not text"),
    (b'{"name": "\xc3\x28"}', "UTF-8"),
    ('"\\ud800"', "a catalog must be a JSON object"),
    ("\ufeff{}", "malformed JSON"),
    ("", "malformed JSON"),
])
def test_what_the_parser_raises_becomes_a_problem(text: str | bytes, needle: str) -> None:
    assert needle in str(refused(text))


def test_a_huge_python_int_given_directly_is_a_problem_not_an_overflow() -> None:
    data = catalog_dict(gpus=[gpu_row(vcpus=10**400)])
    with pytest.raises(CatalogError) as info:
        parse_catalog(data)
    assert info.value.problems[0].field == "vcpus"


def test_a_problem_with_a_huge_value_prints_short() -> None:
    data = catalog_dict(gpus=[gpu_row(family="F" * 100_000, vcpus="x" * 100_000)])
    with pytest.raises(CatalogError) as info:
        parse_catalog(data)
    assert len(str(info.value)) < 2_000


def test_catalog_validate_says_so_in_one_line_with_exit_2(tmp_path: Any,
                                                         capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    path = tmp_path / "deep.json"
    path.write_text(DEEP_LIST)
    assert main(["catalog", "validate", str(path)]) == 2
    out, err = capsys.readouterr()
    assert len(out.strip().splitlines()) == 1
    assert "nests 100,000 levels" in out
    assert main(["recommend", "--catalog", str(path), "--pw", "3"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert "100,000" in err


# ----------------------------------------------------------------------------- fuzzing

JSON_SCALARS = (st.none() | st.booleans() | st.integers() | st.integers(-10**400, 10**400)
                | st.floats() | st.text(max_size=20))
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8),
                                                                      children, max_size=5),
    max_leaves=30)
FIELDS = ["name", "family", "on_demand_usd_per_hour", "spot_usd_per_hour", "vcpus",
          "memory_gib", "network_gbps", "eflops", "scaling", "interruption_bucket",
          "spot_by_zone_usd_per_hour", "schema_version", "quotas", "network_saturation",
          "gpu_types", "cpu_types", "instances", "available_vcpus", "type", "ondemand_price",
          "spot_price", "vCPU", "flops", "a", "b", "c", "bandwidth_gbps", "max_gpu_vms",
          "on_demand_vcpus", "spot_vcpus", "_artifact_row"]


def only_catalog_errors(text: str | bytes) -> None:
    with contextlib.suppress(CatalogError):
        catalog_from_json_text(text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(JSON_VALUES)
def test_fuzz_any_json_value(value: object) -> None:
    only_catalog_errors(json.dumps(value))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_fuzz_any_bytes(data: bytes) -> None:
    only_catalog_errors(data)


@functools.cache
def valid_catalog_texts() -> tuple[str, ...]:
    """Valid catalogs as JSON text (ours, a bundled one, the artifact's format), built once:
    each example starts from a fresh copy."""
    return tuple(json.dumps(doc) for doc in (
        catalog_dict(), catalog_to_dict(load_catalog("aws-us-east-1-2023-10")),
        {"instances": [{"name": "g", "type": "G", "ondemand_price": 1, "spot_price": 0.3,
                        "vCPU": 4, "network_bandwidth": 10, "flops": 100},
                       {"name": "c", "type": "C", "ondemand_price": 0.2, "spot_price": 0.1,
                        "vCPU": 4, "memory": 8, "network_bandwidth": 10}],
         "available_vcpus": {"G": {"ondemand": 32, "spot": 128}}}))


@st.composite
def mutated_catalogs(draw: st.DrawFn) -> dict[str, Any]:
    """A valid catalog (ours or the artifact's) with fields replaced by arbitrary JSON."""
    doc: Any = json.loads(draw(st.sampled_from(valid_catalog_texts())))
    for _ in range(draw(st.integers(1, 6))):
        targets: list[Any] = [doc]
        for key in ("gpu_types", "cpu_types", "instances", "quotas", "network_saturation"):
            if isinstance(doc.get(key), list):
                targets += [row for row in doc[key] if isinstance(row, dict)]
        target = draw(st.sampled_from(targets))
        target[draw(st.sampled_from(FIELDS))] = draw(JSON_VALUES)
    return dict(doc)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_catalogs())
def test_fuzz_catalogs_with_arbitrary_fields(doc: dict[str, Any]) -> None:
    only_catalog_errors(json.dumps(doc))
    with contextlib.suppress(CatalogError):  # the parsed form too, as the editor hands it over
        parse_catalog(doc)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 300), st.sampled_from(["[", '{"k":', '{"gpu_types":']),
       st.sampled_from(["", "1", "{}", "["]))
def test_fuzz_nesting_depths(depth: int, opener: str, middle: str) -> None:
    closer = "]" if opener == "[" else "}"
    only_catalog_errors(opener * depth + middle + closer * depth)


@settings(max_examples=100, deadline=None)
@given(st.integers(300, 6000), st.sampled_from(["", "-", "0."]), st.sampled_from(["", "e999",
                                                                                 "e-999"]))
def test_fuzz_huge_numbers(digits: int, sign: str, exponent: str) -> None:
    number = sign + "9" * digits + exponent
    only_catalog_errors(json.dumps(catalog_dict()).replace('"vcpus": 4', f'"vcpus": {number}'))


# ----------------------------------------------------------------------------- catalog size


def test_a_catalog_over_the_row_limits_is_refused_naming_the_count_and_the_limit() -> None:
    gpus = [gpu_row(f"g{i}") for i in range(10_000)]
    cpus = [cpu_row(f"c{i}") for i in range(MAX_CPU_TYPES + 1)]
    error = refused(json.dumps(catalog_dict(gpus=gpus, cpus=cpus)))
    assert [(p.field, p.value) for p in error.problems] == [
        ("gpu_types", 10_000), ("cpu_types", MAX_CPU_TYPES + 1)]
    assert (f"10,000 GPU types; a catalog holds at most {MAX_GPU_TYPES:,}"
            in error.problems[0].message)


def test_a_catalog_at_the_row_limits_loads_and_one_built_past_them_is_refused() -> None:
    catalog = synthetic_catalog(MAX_GPU_TYPES, MAX_CPU_TYPES)
    text = json.dumps(catalog_to_dict(catalog), indent=2)
    assert len(text.encode()) < MAX_CATALOG_BYTES / 4
    assert catalog_from_json_text(text) == catalog
    extra = replace(catalog.cpu_types[0], name="one-too-many")
    with pytest.raises(CatalogError) as info:
        replace(catalog, cpu_types=(*catalog.cpu_types, extra))
    assert [p.field for p in info.value.problems] == ["cpu_types"]


def test_artifact_files_have_the_same_limit() -> None:
    rows = [{"name": f"g{i}", "type": "G", "ondemand_price": 1.0, "spot_price": 0.3, "vCPU": 4,
             "network_bandwidth": 10, "flops": 100} for i in range(MAX_GPU_TYPES + 5)]
    (problem,) = refused(json.dumps({"instances": rows})).problems
    assert problem.value == MAX_GPU_TYPES + 5
