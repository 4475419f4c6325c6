"""Regenerate the dashboard screenshots (docs/screenshots/*.png: the README, docs/dashboard.md).

Starts the dashboard as ``make run`` does (``tests/dashboard_server.py``, loopback only, a
temporary DEEPVM_HOME and catalog folders), opens each page in Debian's Chromium in a 1280x720
window, scrolls the chart to the top of the window and saves what the window shows (the default
page: a 1280x920 window, not scrolled)::

    .venv/bin/python bench/screenshots.py            # all, into docs/screenshots/
    .venv/bin/python bench/screenshots.py --out /tmp/shots --only plan-frontier

The chart pages pin the 2023 us-east-1 catalog, so the pictures do not move with the default;
``default-page`` is the root URL as a first visitor sees it (today's catalog, PW 3), the README's
picture.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

from playwright.sync_api import expect, sync_playwright

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.dashboard_server import running_server

CATALOG = "catalog=aws-us-east-1-2023-10"


class Shot(NamedTuple):
    """One picture: ``key`` is the Streamlit key of what to wait for, a chart (its svg, scrolled
    to the top of the window) or, with ``scroll`` off, the recommendation card (its heading)."""

    name: str
    path: str
    key: str
    scroll: bool = True
    #: The window is 1280 wide; the default page is taller than 720 so that the whole card (the
    #: cluster, its price, speed and the example job's cost and time) is in the picture.
    height: int = 720


SHOTS = (
    Shot("default-page", "", "rec_card", scroll=False, height=920),
    Shot("plan-frontier", f"plan?{CATALOG}&pw=3", "plan_frontier"),
    Shot("plan-speedup", f"plan?{CATALOG}&pw=3", "plan_speedups"),
    Shot("simulate", f"simulate?{CATALOG}&pw=3", "sim_perf_chart"),
    Shot("recommend-prices", f"?{CATALOG}&pw=3", "rec_perf_chart"),
)
LOAD_TIMEOUT_MS = 90_000
#: Scroll the chart to the top of the window, below Streamlit's header (its page links).
SCROLL = """(el) => {
  el.scrollIntoView({block: 'start'});
  const main = document.querySelector('[data-testid="stMain"]');
  const header = document.querySelector('header');
  main.scrollBy(0, -((header ? header.getBoundingClientRect().height : 60) + 16));
}"""


def take(url: str, out: Path, only: set[str]) -> list[Path]:
    """Save every shot of :data:`SHOTS` (or those named in ``only``) under ``out``."""
    saved = []
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"),
            headless=True, args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        for shot in SHOTS:
            if only and shot.name not in only:
                continue
            page = browser.new_page(viewport={"width": 1280, "height": shot.height})
            page.goto(f"{url}/{shot.path}")
            inner = ".main-svg" if shot.scroll else "h3"
            expect(page.locator(f".st-key-{shot.key} {inner}").first).to_be_visible(
                timeout=LOAD_TIMEOUT_MS)
            # The sidebar's controls come after the page (first load): wait until none is a
            # placeholder any more.
            expect(page.locator('[data-testid="stSkeleton"]')).to_have_count(
                0, timeout=LOAD_TIMEOUT_MS)
            if shot.scroll:
                page.locator(f".st-key-{shot.key}").evaluate(SCROLL)
            page.wait_for_timeout(1500)  # plotly's transitions and Streamlit's last rerun
            target = out / f"{shot.name}.png"
            page.screenshot(path=str(target))
            saved.append(target)
            page.close()
        browser.close()
    return saved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "screenshots")
    parser.add_argument("--only", nargs="*", default=[], help="names of the shots to take")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "DEEPVM_HOME": f"{tmp}/home",
               "DEEPVM_USER_CATALOG_DIR": f"{tmp}/user",
               "DEEPVM_UPLOAD_CATALOG_DIR": f"{tmp}/upload"}
        with running_server(env, Path(tmp) / "logs") as url:
            for path in take(url, args.out, set(args.only)):
                print(f"{path} ({path.stat().st_size / 1024:.0f} KiB)")


if __name__ == "__main__":
    main()
