"""Unit tests of the dashboard's pure helpers (URL parsing, editor tables, findings)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dashboard import charts, editor_frames, formatting, result_frames, sweep_charts, url
from deepvm_core.catalog.catalog import catalog_sha256
from deepvm_core.catalog.store import load_catalog
from deepvm_core.errors import CatalogError, Problem
from deepvm_core.model import Scenario
from deepvm_core.recommend.sweep import pw_grid, sweep

CATALOGS = {"aws-us-east-1-2023-10", "paper-simulated", "user:mine"}


def test_parse_query_params_accepts_a_full_scenario() -> None:
    values, warnings = url.parse_query_params(
        {"catalog": "user:mine", "pw": "2.5", "ckpt": "1", "buffer": "1.5",
         "objective": "performance", "quotas": "OFF", "top": "7", "page": "simulate",
         "utm": "ignored"}, CATALOGS)
    assert warnings == []
    assert values == {"catalog": "user:mine", "pw": 2.5, "ckpt": 1.0, "buffer": 1.5,
                      "objective": "performance", "quotas": False, "top": 7,
                      "page": "simulate"}


@pytest.mark.parametrize(("key", "raw", "why"), [
    ("pw", "abc", "is not a number"),
    ("pw", "-1", "is outside 0..1000"),
    ("pw", "inf", "is not a finite number"),
    ("ckpt", "0", "is outside 0.01..10000"),
    ("buffer", "nan", "is not a finite number"),
    ("top", "2.5", "is not a whole number"),
    ("top", "101", "is outside 1..100"),  # recommend takes top_k 1..100
    ("quotas", "perhaps", "is not on or off"),
    ("objective", "cost", "is not one of speed, paper, performance"),
    ("catalog", "gone", "is not a catalog available here"),
    ("page", "pages", "is not one of recommend"),
])
def test_parse_query_params_warns_and_keeps_the_default(key: str, raw: str, why: str) -> None:
    values, warnings = url.parse_query_params({key: raw}, CATALOGS)
    assert values == {}
    assert len(warnings) == 1
    assert why in warnings[0].text
    assert f"using the default {url.format_param(key, url.DEFAULTS[key])}" in warnings[0].text


def test_format_param_round_trips() -> None:
    for key in ("pw", "ckpt", "buffer", "quotas", "objective", "top"):
        text = url.format_param(key, url.DEFAULTS[key])
        values, warnings = url.parse_query_params({key: text}, CATALOGS)
        assert not warnings
        assert values[key] == url.DEFAULTS[key]


def test_slider_range_stretches_for_large_values() -> None:
    pw = url.CONTROL_BY_NAME["pw"]
    assert pw.slider_range(3.0) == (0.0, 20.0)
    assert pw.slider_range(42.3) == (0.0, 43.0)
    ckpt = url.CONTROL_BY_NAME["ckpt"]
    assert ckpt.slider_value(0.01) == ckpt.slider_low


@pytest.mark.parametrize("name", ["aws-us-east-1-2023-10", "paper-simulated"])
def test_editor_frames_round_trip(name: str) -> None:
    catalog = load_catalog(name)
    frames = editor_frames.catalog_frames(catalog)
    assert set(frames) == {"gpu_types", "cpu_types", "quotas", "network_saturation"}
    parsed, problems = editor_frames.validate_frames(frames, catalog)
    assert problems == ()
    assert catalog_sha256(parsed) == catalog_sha256(catalog)


def test_blank_cells_become_missing_values() -> None:
    catalog = load_catalog("aws-us-east-1-2023-10")
    frames = editor_frames.catalog_frames(catalog)
    frames["cpu_types"].loc[1, "memory_gib"] = np.nan  # rows are numbered from 1
    frames["cpu_types"].loc[2, "name"] = "  "
    frames["gpu_types"].loc[1, "scaling_b"] = np.nan
    parsed, problems = editor_frames.validate_frames(frames, catalog)
    assert parsed is None
    rows = editor_frames.problems_frame(problems).to_dict("records")
    found = {(r["Table"], r["Row"], r["Column"]) for r in rows}
    assert ("CPU VMs (memory nodes)", 1, "GiB") in found
    assert ("CPU VMs (memory nodes)", 2, "Name") in found
    assert ("GPU VMs", 1, "b") in found


def test_numbers_are_text_cells_read_as_typed() -> None:
    catalog = load_catalog("aws-us-east-1-2023-10")
    frames = editor_frames.catalog_frames(catalog)
    assert frames["gpu_types"]["spot_usd_per_hour"].tolist() == ["0.225", "0.1578", "0.3018"]
    assert frames["gpu_types"]["vcpus"].tolist() == ["4", "4", "4"]
    frames["gpu_types"].loc[2, "spot_usd_per_hour"] = " 1e308 "
    parsed, problems = editor_frames.validate_frames(frames, catalog)
    assert problems == ()
    assert parsed.gpu_types[1].spot_usd_per_hour == 1e308
    frames["gpu_types"].loc[2, "spot_usd_per_hour"] = "1,5"
    parsed, problems = editor_frames.validate_frames(frames, catalog)
    rows = editor_frames.problems_frame(problems).to_dict("records")
    assert parsed is None
    assert [(r["Column"], r["Value"], r["Problem"]) for r in rows] == [
        ("Spot $/h", "1,5", "not a number")]
    assert editor_frames.number_text(1e308) == "1e+308"
    assert editor_frames.number_text(None) is None


def test_problems_frame_maps_catalog_level_problems() -> None:
    frame = editor_frames.problems_frame([
        Problem("(catalog)", "network_saturation", [], "must be a non-empty list"),
        Problem("quotas[2]", "family", "G", "duplicate family"),
    ])
    assert frame["Table"].tolist() == ["Network saturation", "Quotas (vCPUs per family)"]
    assert frame["table_key"].tolist() == ["network_saturation", "quotas"]
    assert frame["Row"].tolist()[1] == 3


def test_parse_upload_reports_malformed_json() -> None:
    with pytest.raises(CatalogError) as info:
        editor_frames.parse_upload("x.json", b"{oops")
    assert "malformed JSON" in info.value.problems[0].message


def test_format_intervals() -> None:
    assert formatting.format_intervals(((0.1, 0.2), (0.5, 0.5))) == "0.1–0.2 and 0.5"
    assert formatting.format_intervals(((0.8, 1.3), (9.5, 10.0), (12.0, 12.0))) == (
        "0.8–1.3, 9.5–10 and 12")
    assert formatting.format_intervals(()) == "never"


def test_si_formatting() -> None:
    assert formatting.si(145_400_000) == "145.4 M"
    assert formatting.si(6375.2) == "6,375"
    assert formatting.si(0.995) == "0.995"


def test_charts_are_built_from_frames() -> None:
    catalog = load_catalog("paper-simulated")
    result = sweep(catalog, Scenario(0.0, use_quotas=False), pw_grid(0.0, 2.0, 0.5))
    frame = result_frames.sweep_frame(result)
    fig = sweep_charts.sweep_chart(frame, normalised=True)
    assert len(fig.data) == 11  # six policies' lines, DeepVM's grey behind the other five
    assert all(t.line.shape == "hv" for t in fig.data)
    assert sweep_charts.sweep_price_chart(frame).data[1].line.shape == "hv"
    curves = result_frames.scaling_frame(catalog, 32)
    fig = charts.scaling_chart(curves, result_frames.inflection_frame(catalog),
                               result_frames.Col.K, "K")
    assert len(fig.data) == 20  # a curve and a b marker per GPU type


def test_the_recommend_card_does_not_wait_for_heavy_imports() -> None:
    """Issue 9, first load under 2 s: what the app imports before the Recommend card draws
    (app.py's imports, the card's modules, the core's recommend) loads no pandas, scipy or
    pulp; pandas loads with the first table, scipy with a calibration, pulp with the ILP."""
    code = ("import sys; import state, widgets, alternatives, compute, plan_compute, launch_panel, "
            "url; "
            "import deepvm_core.recommend.recommendation, deepvm_core.recommend.narrative, "
            "deepvm_core.job; "
            "print(sorted(m for m in ('pandas', 'scipy', 'pulp') if m in sys.modules))")
    repo = Path(__file__).resolve().parent.parent
    path = f"{repo}{os.pathsep}{repo / 'dashboard'}"
    out = subprocess.run([sys.executable, "-c", code], cwd=repo / "dashboard", check=True,
                         capture_output=True, text=True, env={**os.environ, "PYTHONPATH": path})
    assert out.stdout.strip() == "[]"


def test_catalog_files_load_once_and_are_shared() -> None:
    """Issue 9, first load: a catalog is immutable, so every run and session shares one loaded
    object (no unpickled copy per run, its sha256 computed once)."""
    from dashboard import compute
    from deepvm_core.catalog.store import bundled_catalog_paths

    path = bundled_catalog_paths()["aws-us-east-1-2023-10"]
    mtime = path.stat().st_mtime_ns
    assert compute.load_catalog_file(str(path), mtime) is compute.load_catalog_file(str(path),
                                                                                    mtime)
