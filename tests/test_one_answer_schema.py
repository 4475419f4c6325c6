"""The exports' JSON Schemas (package data): every output of the CLI validates, and every number
of the schemas says its unit."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from typing import Any

import jsonschema
import pytest

from deepvm_core.cli import main
from deepvm_core.errors import InputError
from deepvm_core.io.schemas import SCHEMA_NAMES, load_schema

AWS = "aws-us-east-1-2023-10"
SIM = "paper-simulated"


def _cli_json(*argv: str) -> dict[str, Any]:
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert main(list(argv)) == 0
    return json.loads(buf.getvalue())


@pytest.mark.parametrize("argv", [
    ("--catalog", AWS, "--pw", "3"),
    ("--catalog", AWS, "--pw", "3", "--objective", "paper", "--top", "5"),
    ("--catalog", AWS, "--pw", "0.1"),  # nothing feasible: explanation
    ("--catalog", AWS, "--pw", "0.4"),  # architecture notes
    ("--catalog", SIM, "--pw", "10", "--no-quotas", "--objective", "performance"),
    ("--catalog", AWS, "--pw", "3", "--epochs", "90", "--epoch-seconds", "960",
     "--measurements", "deepvm-scaling"),
    ("--catalog", "aws-us-east-1-2025-h1", "--pw", "30"),  # estimated eFLOPS, by_accelerator
])
def test_recommend_outputs_validate(argv: tuple[str, ...]) -> None:
    doc = _cli_json("recommend", *argv, "--solver", "enumerate", "--format", "json")
    jsonschema.validate(doc, load_schema("recommend"))


@pytest.mark.parametrize("argv", [
    ("--catalog", AWS, "--pw", "3", "--trials", "300"),
    ("--catalog", AWS, "--pw", "3", "--speedup", "measured", "--measurements", "deepvm-scaling",
     "--deadline-hours", "8", "--trials", "300"),
    ("--catalog", SIM, "--pw", "none", "--no-quotas", "--ckpt-auto", "--goal", "fastest",
     "--trials", "0"),
    ("--catalog", AWS, "--pw", "0.1", "--trials", "0"),  # nothing feasible
])
def test_plan_outputs_validate(argv: tuple[str, ...]) -> None:
    doc = _cli_json("plan", *argv, "--format", "json")
    jsonschema.validate(doc, load_schema("plan"))


def test_a_wrong_document_fails() -> None:
    doc = _cli_json("recommend", "--catalog", AWS, "--pw", "3", "--solver", "enumerate",
                    "--format", "json")
    doc["deepvm"][0]["hourly_price"] = "cheap"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, load_schema("recommend"))
    del doc["summary"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, load_schema("recommend"))


def _numbers(node: Any, path: str = "") -> list[tuple[str, dict[str, Any]]]:
    found = []
    if isinstance(node, dict):
        kind = node.get("type")
        kinds = kind if isinstance(kind, list) else [kind]
        if "number" in kinds or "integer" in kinds:
            found.append((path, node))
        for key, value in node.items():
            found += _numbers(value, f"{path}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found += _numbers(value, f"{path}/{i}")
    return found


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_every_number_says_its_unit(name: str) -> None:
    schema = load_schema(name)
    jsonschema.Draft202012Validator.check_schema(schema)
    numbers = _numbers(schema)
    assert len(numbers) > 20
    units = ("USD", "hour", "second", "GB", "count", "dimensionless", "percent", "eFLOP",
             "epochs", "0 to 1", "index", "version", "seed", "K(n)")
    for path, node in numbers:
        description = node.get("description", "")
        assert any(u in description for u in units), (path, description)


def test_unknown_schema_name() -> None:
    with pytest.raises(InputError, match="schema"):
        load_schema("launch")
