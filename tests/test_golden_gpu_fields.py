"""The golden JSON files changed on purpose, by the GPU fields only (issue 24).

Catalog schema version 3 gives every GPU row its ``accelerator``, ``gpu_count`` and
``gpu_memory_gb``; the files whose JSON echoes catalog rows (``catalog.instance_types`` of
``recommend`` and ``plan``) gained those three keys per GPU row, and every file that names a
catalog's sha256 names the new one, since the hash covers the catalog's content (its schema
version and rows). Nothing else changed: taking the three keys out of each row and putting the
old sha256 back gives each file byte for byte as it was
(``tests/fixtures/golden-before-gpu-fields.json`` holds the sha256 of every golden JSON file
before the change: as the yardstick branch wrote them (issue 24's fixed example job, whose own
change tests/test_yardstick.py states), which had neither the GPU fields nor the quotas merge
(that changed no golden file); and the catalogs' sha256 before and after. The plan JSONs are
left out: they also carry the transformer workload's keys (tests/test_golden_workload_fields.py).

When a golden file changes again on purpose, remove its line from the fixture: this test pins
issue 24's change only.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from deepvm_core.catalog.catalog import catalog_to_dict
from deepvm_core.catalog.store import load_catalog

GOLDEN_DIR = Path(__file__).parent / "golden"
BEFORE = json.loads((Path(__file__).parent / "fixtures" / "golden-before-gpu-fields.json")
                    .read_text(encoding="utf-8"))
NEW_KEYS = ("accelerator", "gpu_count", "gpu_memory_gb")
OLD_SHA = {v["after"]: v["before"] for v in BEFORE["catalog_sha256"].values()}


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _without_new_keys(value: Any, found: list[dict[str, Any]]) -> Any:
    """``value`` with the GPU fields taken out of every catalog GPU row (a dict with ``eflops``
    and ``interruption_bucket``) and each new catalog sha256 put back to the old one; the rows
    seen are added to ``found``."""
    if isinstance(value, dict):
        if "eflops" in value and "interruption_bucket" in value:
            found.append(value)
        return {k: _without_new_keys(v, found) for k, v in value.items()
                if not ("eflops" in value and k in NEW_KEYS)}
    if isinstance(value, list):
        return [_without_new_keys(v, found) for v in value]
    if isinstance(value, str):
        return OLD_SHA.get(value, value)
    return value


@pytest.mark.parametrize("name", sorted(BEFORE["files"]))
def test_only_the_gpu_fields_and_the_catalog_hash_changed(name: str) -> None:
    text = (GOLDEN_DIR / name).read_text(encoding="utf-8")
    rows: list[dict[str, Any]] = []
    before = json.dumps(_without_new_keys(json.loads(text), rows), indent=2) + "\n"
    assert _sha256(before) == BEFORE["files"][name]
    for row in rows:  # each echoed row has the three keys, as its catalog holds them
        assert all(key in row for key in NEW_KEYS), (name, row["name"])


def test_the_echoed_rows_carry_their_catalogs_gpus() -> None:
    """In the AWS files the rows say M60/T4/A10G, one GPU each; in the simulated ones null."""
    expected = {"g3s.xlarge": ("M60", 1, 8.0), "g4dn.xlarge": ("T4", 1, 16.0),
                "g5.xlarge": ("A10G", 1, 24.0)}
    for name in BEFORE["files"]:
        rows: list[dict[str, Any]] = []
        _without_new_keys(json.loads((GOLDEN_DIR / name).read_text(encoding="utf-8")), rows)
        for row in rows:
            got = tuple(row[k] for k in NEW_KEYS)
            assert got == expected.get(row["name"], (None, None, None)), (name, row["name"])


@pytest.mark.parametrize("catalog", sorted(BEFORE["catalog_sha256"]))
def test_the_catalogs_changed_by_the_gpu_fields_only(catalog: str) -> None:
    """The bundled catalog's sha256 is the new one, and its content without the GPU fields, as
    schema version 2 (the version the old sha256 was taken of; paper-simulated is still a
    version 1 file but was always hashed as written, version 2), hashes to the old one."""
    loaded = load_catalog(catalog)
    hashes = BEFORE["catalog_sha256"][catalog]
    assert loaded.sha256 == hashes["after"]
    old = catalog_to_dict(loaded)
    old["schema_version"] = 2
    for row in old["gpu_types"]:
        for key in NEW_KEYS:
            del row[key]
    text = json.dumps(old, sort_keys=True, separators=(",", ":"))
    assert _sha256(text) == hashes["before"]
