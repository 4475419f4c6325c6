"""Spot markets in a real browser: upload a trace, see its availability strip and the backtest
of the planned job; the pool lands in the URL."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import numpy as np
import pytest
from browser_helpers import screenshot
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.e2e

LOAD_TIMEOUT_MS = 45_000
UPDATE_TIMEOUT_MS = 30_000
#: Issue 27: the hostile trace (up and down in turn, every tick, 100,000 ticks) is mapped and
#: its backtest shown within this many seconds of the upload.
ALTERNATING_SECONDS = 10.0


def synthetic_trace(path: Path) -> Path:
    """Seeded: 2,000 ticks of 600 s, up and down runs of 1 to 40 ticks (up three times as
    long on average)."""
    rng = np.random.default_rng(15)
    data: list[int] = []
    up = True
    while len(data) < 2000:
        data += [int(up)] * int(rng.integers(1, 40 if up else 14))
        up = not up
    path.write_text(json.dumps({"metadata": {"gap_seconds": 600}, "data": data[:2000]}))
    return path


def test_upload_a_trace_and_see_the_strip_and_the_backtest(
        page: Page, streamlit_server: str, tmp_path: Path, artifacts_dir: Path) -> None:
    page.goto(f"{streamlit_server}/spot?catalog=aws-us-east-1-2025-h1&epochs=3000"
              "&epoch_s=61.16&ref=g4dn.xlarge&trials=0")
    expect(page.get_by_role("heading", name="Spot markets", level=1)).to_be_visible(
        timeout=LOAD_TIMEOUT_MS)
    trace = synthetic_trace(tmp_path / "us-east-1c_v100_1.json")
    page.locator("input[type=file]").first.set_input_files(str(trace))
    # the file name gives the pool p3.2xlarge@us-east-1c; the strip and the backtest follow.
    # Before the upload the page shows the synthetic market's strip (issue 25): look at the
    # strip of the latest run, not the one Streamlit keeps on screen from the run before.
    fresh = ':not([data-stale="true"])'
    strip = page.locator(".st-key-spot_strip" + fresh)
    expect(strip.locator(".js-plotly-plot")).to_be_visible(timeout=UPDATE_TIMEOUT_MS)
    expect(strip).to_contain_text("p3.2xlarge@us-east-1c")
    backtest = page.locator(".st-key-spot_card" + fresh)
    expect(backtest).to_contain_text("p3.2xlarge", timeout=UPDATE_TIMEOUT_MS)
    expect(backtest).to_contain_text("of 200")
    expect(page.locator(".st-key-spot_cdf" + fresh + " .js-plotly-plot")).to_be_visible()
    expect(page).to_have_url(re.compile(r"[?&]pools=p3\.2xlarge%40us-east-1c%3Duploads"))
    screenshot(page, artifacts_dir / "spot-markets.png")

    # issue 27: the alternating 100,000-tick trace, uploaded on a new visit (a new session
    # maps nothing yet), is mapped and its backtest shown in under 10 s
    page.goto(f"{streamlit_server}/spot?catalog=aws-us-east-1-2025-h1&epochs=3000"
              "&epoch_s=61.16&ref=g4dn.xlarge&trials=0")
    expect(page.locator(".st-key-spot_card" + fresh)).to_contain_text(
        "SYNTHETIC MARKET", timeout=LOAD_TIMEOUT_MS)
    alternating = tmp_path / "us-east-1d_v100_1.json"
    alternating.write_text(json.dumps({"metadata": {"gap_seconds": 600},
                                       "data": [k % 2 for k in range(100_000)]}))
    started = time.monotonic()
    page.locator("input[type=file]").first.set_input_files(str(alternating))
    card = page.locator(".st-key-spot_card" + fresh)
    expect(card).to_contain_text("p3.2xlarge@us-east-1d",
                                 timeout=int(ALTERNATING_SECONDS * 1000))
    expect(card).to_contain_text("of 200", timeout=1_000)
    elapsed = time.monotonic() - started
    assert elapsed < ALTERNATING_SECONDS, f"{elapsed:.1f} s"
