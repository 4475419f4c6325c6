"""Spot markets on first run (issue 25, part 5), with AppTest: a fresh home shows a seeded
synthetic market labelled as such on every chart, one button fetches the public traces (from a
loopback server, ``tests/file_server.py``) with progress and maps them to pools priced from
their own region's catalog, a fetch that cannot reach the server says why, and no page shows a
folder of the server. Also the synthetic market itself (``deepvm_core.market.synthetic``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from file_server import serve
from loopback import closed_port_url, guard_loopback_only
from streamlit.testing.v1 import AppTest

from dashboard.server_paths import hide_paths
from deepvm_core.market.synthetic import (
    SYNTHETIC_LABEL,
    SYNTHETIC_ZONES,
    synthetic_market,
    synthetic_trace,
)
from deepvm_core.market.trace_fetch import SPOT_TRACES_URL_VARIABLE, trace_files

APP = Path(__file__).resolve().parent.parent / "dashboard" / "app.py"
JOB = {"page": "spot", "catalog": "aws-us-east-1-2025-h1", "epochs": "30", "trials": "0",
       "starts": "50"}


@pytest.fixture
def fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh per-user folder with no traces; loopback only."""
    root = tmp_path / "home" / "spot-traces"
    monkeypatch.setenv("DEEPVM_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DEEPVM_SPOT_TRACES_DIR", str(root))
    guard_loopback_only(monkeypatch)
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
        monkeypatch.delenv(name, raising=False)
    return root


def page() -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=180)
    for key, value in JOB.items():
        at.query_params[key] = value
    return at


def everything(at: AppTest) -> str:
    """Every text the page shows, charts included."""
    parts = [e.value for kind in ("markdown", "caption", "info", "warning", "error", "success",
                                  "title", "subheader") for e in at.get(kind)]
    parts += [c.proto.spec for c in at.get("plotly_chart")]
    parts += [d.value.to_csv() for d in at.dataframe]
    parts += [b.label for b in at.button]
    return "\n".join(str(p) for p in parts)


def no_server_path(at: AppTest, *folders: Path) -> None:
    text = everything(at)
    for folder in folders:
        assert str(folder) not in text
        assert str(folder.resolve()) not in text


def public_traces() -> dict[str, bytes]:
    """Every file of the fetch list: 2,000 ticks of 600 s, up 5 hours then down 50 minutes,
    shifted per file (the files of one folder line up, as the public ones do)."""
    files = {}
    for i, rel in enumerate(trace_files()):
        data = (([1] * 30 + [0] * 5) * 60)[i:i + 2000]
        files["/" + rel] = json.dumps({"metadata": {"gap_seconds": 600}, "data": data}).encode()
    return files


def test_the_synthetic_market_by_hand() -> None:
    (za, a), (zb, _), (zc, c) = synthetic_market()
    assert (za, zb, zc) == ("synthetic-1a", "synthetic-1b", "synthetic-1c")
    assert a.ticks == 45 * 86400 // 300
    assert set(np.unique(a.counts)) <= {0, 1}
    assert a.counts[0] == 1  # up first
    assert a.counts.mean() > c.counts.mean()  # 10 h up / 0.8 h down against 0.8 h / 3.5 h
    again = synthetic_market()
    assert all(np.array_equal(x.counts, y.counts) for (_, x), (_, y) in zip(
        synthetic_market(), again, strict=True))  # seeded
    # a plain loop over the same draws gives the same spells
    up, down = SYNTHETIC_ZONES[0][1:]
    rng = np.random.default_rng(99)
    gap_h = 300 / 3600
    expected: list[int] = []
    state = 1
    while len(expected) < 500:
        hours = rng.exponential(up if state else down)
        expected += [state] * max(1, int(np.ceil(hours / gap_h)))
        state = 1 - state
    got = synthetic_trace(up, down, seed=99, days=500 * 300 / 86400)
    assert got.counts.tolist() == expected[:500]


def test_fresh_home_shows_the_labelled_synthetic_market_and_the_fetch_button(
        fresh: Path) -> None:
    at = page().run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert at.button(key="spot_fetch").label == "Fetch the public traces"
    assert any(SYNTHETIC_LABEL in w.value for w in at.warning)
    charts = at.get("plotly_chart")
    assert len(charts) == 2  # the strip and the CDF
    for chart in charts:
        assert SYNTHETIC_LABEL in chart.proto.spec
    stats = at.dataframe[0].value
    assert [p.split("@")[1] for p in stats["Pool"]] == [
        "synthetic-1a", "synthetic-1b", "synthetic-1c"]
    assert any(SYNTHETIC_LABEL in m.value for m in at.markdown)  # the backtest card
    assert not fresh.exists()  # nothing written for the synthetic market
    no_server_path(at, fresh)


def test_fetch_button_fetches_maps_and_prices_each_pool_from_its_region(
        fresh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with serve(public_traces()) as server:
        monkeypatch.setenv(SPOT_TRACES_URL_VARIABLE, server.url + "/")
        at = page().run()
        at.button(key="spot_fetch").click().run()
        assert len(server.asked) == len(trace_files())
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert sorted(p.relative_to(fresh).as_posix() for p in fresh.rglob("*.json")) == sorted(
        trace_files())
    assert not any(SYNTHETIC_LABEL in w.value for w in at.warning)
    stats = at.dataframe[0].value.set_index("Pool")
    # the first folder's V100 traces: us-west-2 pools with the us-east-1 catalog active
    assert sorted(stats.index) == ["p3.16xlarge@us-west-2a", "p3.16xlarge@us-west-2b",
                                   "p3.2xlarge@us-west-2a", "p3.2xlarge@us-west-2b"]
    assert set(stats["Prices from"]) == {"aws-us-west-2-2025-h1"}
    west = json.loads((APP.parent.parent / "data" / "catalogs" /
                       "aws-us-west-2-2025-h1.json").read_text())
    price = next(r["spot_usd_per_hour"] for r in west["gpu_types"] if r["name"] == "p3.2xlarge")
    assert stats.loc["p3.2xlarge@us-west-2a", "Spot USD/h"] == price
    for chart in at.get("plotly_chart"):
        assert SYNTHETIC_LABEL not in chart.proto.spec
    assert at.button(key="spot_fetch").label == "Fetch them again"
    (notice,) = [s.value for s in at.success]
    assert notice.startswith(f"Fetched {len(trace_files())} trace files in ")
    assert "4 of them mapped to pools" in notice
    no_server_path(at, fresh)


def test_fetch_offline_says_why_writes_nothing_and_keeps_the_demo(
        fresh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SPOT_TRACES_URL_VARIABLE, closed_port_url() + "/")
    at = page().run()
    at.button(key="spot_fetch").click().run()
    assert not at.exception
    (error,) = [e.value for e in at.error]
    assert "could not be reached" in error
    assert "Nothing was written" in error
    assert any("could not download the traces" in c.value for c in at.caption)
    assert any(SYNTHETIC_LABEL in w.value for w in at.warning)
    assert not list(fresh.rglob("*.json"))
    no_server_path(at, fresh)


def test_a_mapped_file_that_is_gone_names_no_folder(fresh: Path) -> None:
    at = page()
    at.query_params["pools"] = "p3.2xlarge@us-east-1a=gone.json"
    at.run()
    assert not at.exception
    warnings = [w.value for w in at.warning]
    assert any("gone.json" in w and "the traces folder on the server" in w for w in warnings)
    no_server_path(at, fresh)


def test_hide_paths() -> None:
    assert hide_paths("catalog /srv/x/.deepvm/fetched/a.json is invalid") == \
        "catalog a.json is invalid"
    assert hide_paths("http://127.0.0.1:8/a/b.json: HTTP 404") == \
        "http://127.0.0.1:8/a/b.json: HTTP 404"
    assert hide_paths("uploads/0123-x.json: bad") == "uploads/0123-x.json: bad"
