"""The bundled data files (``deepvm_core.bundled``) against the repository's ``data/`` folder.

The installed wheel is checked in ``test_packaging.py``; here the editable install (``make
install``), which must read ``data/`` itself, not a copy."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from deepvm_core import bundled
from deepvm_core.errors import DeepVMError

DATA = Path(__file__).resolve().parents[1] / "data"


def test_catalog_names_are_the_json_files_of_data_catalogs():
    expected = tuple(sorted(p.stem for p in (DATA / "catalogs").glob("*.json")))
    assert expected  # at least one
    assert bundled.bundled_catalog_names() == expected
    assert "aws-us-east-1-2023-10" in expected
    assert "paper-simulated" in expected


def test_reading_a_catalog_gives_the_file_bytes():
    for name in bundled.bundled_catalog_names():
        path = DATA / "catalogs" / f"{name}.json"
        assert bundled.read_bundled_catalog(name) == path.read_bytes()
        assert bundled.bundled_catalog_paths()[name].resolve() == path.resolve()


def test_measurements_are_the_csv_files_of_data_measurements():
    assert bundled.bundled_measurement_names() == tuple(
        sorted(p.stem for p in (DATA / "measurements").glob("*.csv")))
    raw = bundled.read_bundled_measurements("deepvm-scaling")
    assert raw == (DATA / "measurements" / "deepvm-scaling.csv").read_bytes()
    assert raw.startswith(b"instance,nodes,epoch_seconds")


def test_any_bundled_file_is_read_by_its_parts():
    assert bundled.read_bundled_file("README.md") == (DATA / "README.md").read_bytes()
    assert bundled.read_bundled_file("measurements", "deepvm-scaling.csv") == (
        DATA / "measurements" / "deepvm-scaling.csv").read_bytes()
    assert bundled.bundled_paths("no-such-folder", ".json") == {}


@pytest.mark.parametrize("parts", [(), ("..", "pyproject.toml"), ("catalogs/x.json",), ("",),
                                   (".",), ("catalogs", "..", "README.md")])
def test_a_name_that_is_not_plain_is_refused(parts):
    with pytest.raises(DeepVMError, match="not a plain relative name"):
        bundled.read_bundled_file(*parts)


def test_unknown_names_are_one_clear_error():
    with pytest.raises(DeepVMError, match=r"bundled catalog 'nope' does not exist \(bundled: "
                                          r"[a-z0-9-, ]*aws-us-east-1-2023-10, [a-z0-9-, ]*"
                                          r"paper-simulated"):
        bundled.read_bundled_catalog("nope")
    with pytest.raises(DeepVMError, match="bundled measurements 'nope' does not exist"):
        bundled.read_bundled_measurements("nope")
    with pytest.raises(DeepVMError, match=re.escape(
            "bundled file 'catalogs/nope.json' does not exist")):
        bundled.read_bundled_file("catalogs", "nope.json")


def test_only_paths_inside_the_bundled_data_are_bundled(tmp_path: Path):
    assert bundled.is_bundled(DATA / "catalogs" / "aws-us-east-1-2023-10.json")
    assert bundled.is_bundled(DATA / "catalogs" / "new.json")  # not there yet: still refused
    assert bundled.is_bundled(DATA / "catalogs" / "user" / "x.json")
    assert not bundled.is_bundled(tmp_path / "catalogs" / "x.json")
    assert not bundled.is_bundled(DATA.parent / "x.json")
