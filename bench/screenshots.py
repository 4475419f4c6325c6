"""Regenerate the dashboard screenshots (docs/screenshots/*.png: the README, docs/dashboard.md).

Starts the dashboard as ``make run`` does (``tests/dashboard_server.py``, loopback only, a
temporary DEEPVM_HOME and catalog folders), opens each page in Debian's Chromium at a 1280x720
window, scrolls the chart to the top of the window and saves what the window shows::

    .venv/bin/python bench/screenshots.py            # all, into docs/screenshots/
    .venv/bin/python bench/screenshots.py --out /tmp/shots --only plan-frontier

The pages pin the 2023 us-east-1 catalog, so the pictures do not move with the default.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import expect, sync_playwright

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.dashboard_server import running_server  # noqa: E402

VIEWPORT = {"width": 1280, "height": 720}
CATALOG = "catalog=aws-us-east-1-2023-10"
#: (file name, page path and query, the chart's Streamlit key): the chart is scrolled to the top.
SHOTS = (
    ("plan-frontier", f"plan?{CATALOG}&pw=3", "plan_frontier"),
    ("plan-speedup", f"plan?{CATALOG}&pw=3", "plan_speedups"),
    ("simulate", f"simulate?{CATALOG}&pw=3", "sim_perf_chart"),
    ("recommend-prices", f"?{CATALOG}&pw=3", "rec_perf_chart"),
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
        for name, path, key in SHOTS:
            if only and name not in only:
                continue
            page = browser.new_page(viewport=VIEWPORT)
            page.goto(f"{url}/{path}")
            chart = page.locator(f".st-key-{key} .main-svg").first
            expect(chart).to_be_visible(timeout=LOAD_TIMEOUT_MS)
            page.locator(f".st-key-{key}").evaluate(SCROLL)
            page.wait_for_timeout(1500)  # plotly's transitions and Streamlit's last rerun
            target = out / f"{name}.png"
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
