"""Spot markets on a fresh home in a real browser (issue 25, part 5): the labelled synthetic
market and the fetch button, a fetch from a loopback server of the public traces' files, and
no folder of the server anywhere on the page.

The dashboard runs in its own server whose ``DEEPVM_HOME`` is new and whose
``DEEPVM_SPOT_TRACES_URL`` points at ``tests/file_server.py`` on 127.0.0.1; anything beyond
loopback goes to a dead proxy.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_helpers import screenshot
from dashboard_server import running_server
from file_server import FileServer, serve
from loopback import closed_port_url
from playwright.sync_api import Page, expect

from deepvm_core.market.synthetic import SYNTHETIC_LABEL
from deepvm_core.market.trace_fetch import SPOT_TRACES_URL_VARIABLE, trace_files

pytestmark = pytest.mark.e2e

LOAD_TIMEOUT_MS = 60_000
FETCH_TIMEOUT_MS = 180_000
FRESH = ':not([data-stale="true"])'  # not the element of the run before
URL = "/spot?catalog=aws-us-east-1-2025-h1&epochs=30&trials=0&starts=50"


def _traces() -> dict[str, bytes]:
    files = {}
    for i, rel in enumerate(trace_files()):
        data = (([1] * 30 + [0] * 5) * 60)[i:i + 2000]
        files["/" + rel] = json.dumps({"metadata": {"gap_seconds": 600}, "data": data}).encode()
    return files


@pytest.fixture(scope="module")
def traces_site() -> Iterator[FileServer]:
    with serve(_traces()) as site:
        yield site


@pytest.fixture(scope="module")
def fresh_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fresh-home")


@pytest.fixture(scope="module")
def fresh_server(traces_site: FileServer, fresh_home: Path,
                 tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    dead_proxy = closed_port_url()
    env = {k: v for k, v in os.environ.items()
           if k.lower() not in ("http_proxy", "https_proxy", "all_proxy", "no_proxy")}
    env.update({"DEEPVM_HOME": str(fresh_home),
                "DEEPVM_USER_CATALOG_DIR": str(fresh_home / "user"),
                "DEEPVM_FETCHED_CATALOG_DIR": str(fresh_home / "fetched"),
                SPOT_TRACES_URL_VARIABLE: traces_site.url + "/",
                "HTTP_PROXY": dead_proxy, "HTTPS_PROXY": dead_proxy,
                "NO_PROXY": "127.0.0.1,localhost"})
    env.pop("DEEPVM_SPOT_TRACES_DIR", None)
    with running_server(env, tmp_path_factory.mktemp("fresh-logs")) as url:
        yield url


def no_server_path(page: Page, home: Path) -> None:
    html = page.content()
    assert str(home) not in html
    assert str(home.resolve()) not in html
    assert "/tmp/" not in html  # no temporary folder of the server either
    expect(page.get_by_test_id("stException")).to_have_count(0)


def test_fresh_home_shows_the_labelled_synthetic_market_then_fetches(
        page: Page, fresh_server: str, fresh_home: Path, traces_site: FileServer,
        artifacts_dir: Path) -> None:
    page.goto(fresh_server + URL)
    expect(page.get_by_role("heading", name="Spot markets", level=1)).to_be_visible(
        timeout=LOAD_TIMEOUT_MS)
    button = page.get_by_role("button", name="Fetch the public traces")
    expect(button).to_be_visible()
    expect(page.get_by_text(SYNTHETIC_LABEL).first).to_be_visible(timeout=LOAD_TIMEOUT_MS)
    strip = page.locator(".st-key-spot_strip" + FRESH)
    expect(strip.locator(".js-plotly-plot")).to_be_visible(timeout=LOAD_TIMEOUT_MS)
    expect(strip).to_contain_text("SYNTHETIC MARKET")
    expect(strip).to_contain_text("synthetic-1a")
    cdf = page.locator(".st-key-spot_cdf" + FRESH)
    expect(cdf.locator(".js-plotly-plot")).to_be_visible(timeout=LOAD_TIMEOUT_MS)
    expect(cdf).to_contain_text("SYNTHETIC MARKET")
    expect(page.locator(".st-key-spot_card" + FRESH)).to_contain_text("SYNTHETIC MARKET")
    assert not (fresh_home / "spot-traces").exists()
    no_server_path(page, fresh_home)
    screenshot(page, artifacts_dir / "spot-markets-first-run.png")

    button.click()
    expect(page.get_by_text(f"Fetched {len(trace_files())} trace files in")).to_be_visible(
        timeout=FETCH_TIMEOUT_MS)
    assert len(traces_site.asked) == len(trace_files())
    expect(strip).to_contain_text("p3.2xlarge@us-west-2a", timeout=FETCH_TIMEOUT_MS)
    expect(strip).not_to_contain_text("SYNTHETIC MARKET")
    expect(page.get_by_role("button", name="Fetch them again")).to_be_visible(
        timeout=FETCH_TIMEOUT_MS)
    assert len(list((fresh_home / "spot-traces").rglob("*.json"))) == len(trace_files())
    no_server_path(page, fresh_home)
    screenshot(page, artifacts_dir / "spot-markets-fetched.png")
