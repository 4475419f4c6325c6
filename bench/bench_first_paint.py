"""First paint of Recommend and Plan a job: the sidebar, the answer card, the settled page; cold
and warm, on an idle machine and under load (issue 27).

For each page (``/`` Recommend, ``/plan`` Plan a job, the default catalog and job), a new
browser session opens the page and a MutationObserver installed before any of the page's own
scripts (``add_init_script``) records, on the page's clock (``performance.now()``, 0 =
navigation start):

* **sidebar**: the sidebar's PW control is drawn (a real slider, not a grey skeleton);
* **card**: the page's answer card has its headline;
* **settled**: the app's script run has finished (``data-test-script-state="notRunning"``
  after the card), everything the page draws is in place.

The first session after a server start is cold (imports, catalog load, the first solve); the
next ones are warm (new sessions on a running server, Streamlit's caches filled). ``--load N``
runs N busy processes beside the server for the whole run, as on a machine shared by other
work (the issue's "under load"); the default runs both 0 and 2. ``--trace`` then records one
warm load of Recommend with Chromium's tracing and prints the browser's longest main-thread
tasks (where the time between the card and the sidebar's controls goes).

Starts its own Streamlit server as ``make run`` does (``tests/dashboard_server.py``) and drives
Debian's Chromium (``/usr/bin/chromium`` or env ``CHROMIUM_PATH``). Prints the figures.

    .venv/bin/python bench/bench_first_paint.py [--sessions 4] [--load 0 2]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import sync_playwright

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.bench_browser import VIEWPORT, _launch
from tests.dashboard_server import running_server

#: Page path -> the card's headline selector.
PAGES = {"/": ".st-key-rec_card h3", "/plan": ".st-key-plan_card h3"}
SIDEBAR_CONTROL = '[data-testid="stSidebar"] [data-testid="stSlider"]'
WATCH = """(() => {
  const marks = window.__deepvmPaint = {};
  const observer = new MutationObserver(() => {
    const now = performance.now();
    if (!('sidebar' in marks) && document.querySelector('%s')) marks.sidebar = now;
    if (!('card' in marks) && document.querySelector('%s')) marks.card = now;
    const app = document.querySelector('[data-testid="stApp"]');
    if ('card' in marks && !('settled' in marks) && app
        && app.getAttribute('data-test-script-state') === 'notRunning') marks.settled = now;
    if ('sidebar' in marks && 'settled' in marks) observer.disconnect();
  });
  observer.observe(document, {subtree: true, childList: true, characterData: true,
                              attributes: true});
})();"""
MARKS = ("sidebar", "card", "settled")


def _spin() -> None:  # pragma: no cover - a busy process
    while True:
        pass


@contextmanager
def load(processes: int) -> Iterator[None]:
    """``processes`` busy processes for the duration (a machine shared with other work)."""
    workers = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(processes)]
    for w in workers:
        w.start()
    try:
        yield
    finally:
        for w in workers:
            w.terminate()
            w.join()


def first_paint(url: str, path: str, sessions: int) -> list[dict[str, float]]:
    """Milliseconds of :data:`MARKS` for ``sessions`` new browser sessions of ``path``."""
    out: list[dict[str, float]] = []
    with sync_playwright() as p:
        browser = _launch(p)
        for _ in range(sessions):
            context = browser.new_context(viewport=VIEWPORT)
            context.add_init_script(WATCH % (SIDEBAR_CONTROL, PAGES[path]))
            page = context.new_page()
            page.goto(url + path)
            page.wait_for_function("'settled' in window.__deepvmPaint && "
                                   "'sidebar' in window.__deepvmPaint", timeout=120_000)
            out.append({k: float(v) for k, v in page.evaluate("window.__deepvmPaint").items()})
            context.close()
        browser.close()
    return out


def longest_tasks(url: str, path: str = "/", at_least_ms: float = 100.0) -> list[str]:
    """One warm load of ``path`` traced: the renderer's tasks of at least ``at_least_ms``, as
    ``start ms, duration ms, what`` (what: the task's name and script, when it has one)."""
    with sync_playwright() as p, tempfile.TemporaryDirectory() as folder:
        browser = _launch(p)
        for traced in (False, True):  # the first load warms the server
            context = browser.new_context(viewport=VIEWPORT)
            page = context.new_page()
            trace = Path(folder) / "trace.json"
            if traced:
                browser.start_tracing(page=page, path=str(trace),
                                      categories=["devtools.timeline", "v8.execute"])
            page.goto(url + path)
            page.wait_for_selector(PAGES[path], timeout=120_000)
            page.wait_for_selector(SIDEBAR_CONTROL, timeout=120_000)
            page.wait_for_timeout(1000)
            if traced:
                browser.stop_tracing()
            context.close()
        browser.close()
        events = json.loads(trace.read_text())["traceEvents"]
    start = min(e["ts"] for e in events if e.get("ts"))
    out = []
    for e in events:
        if e.get("ph") == "X" and e.get("dur", 0) >= at_least_ms * 1000 and e["name"] in (
                "v8.evaluateModule", "FunctionCall", "v8.compile", "Layout", "Paint",
                "UpdateLayoutTree", "ParseHTML"):
            data = e.get("args", {}).get("data", {})
            what = data.get("url") or data.get("functionName") or ""
            out.append(f"  {(e['ts'] - start) / 1000:7.0f} ms  {e['dur'] / 1000:6.0f} ms  "
                       f"{e['name']} {what.rsplit('/', 1)[-1]}")
    return out


def line(label: str, runs: list[dict[str, float]]) -> str:
    parts = [f"{m} {statistics.median(r[m] for r in runs):6.0f}" for m in MARKS]
    return f"  {label:<7} " + "   ".join(parts) + f"   ms (median of {len(runs)})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=4, help="sessions per page per server "
                        "start (the first of the first page is cold)")
    parser.add_argument("--starts", type=int, default=2, help="server starts per load level")
    parser.add_argument("--load", type=int, nargs="+", default=[0, 2],
                        help="busy processes beside the server (one run per value)")
    parser.add_argument("--trace", action="store_true",
                        help="also trace one warm load of Recommend (longest browser tasks)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="deepvm-bench-") as user_dir:
        env = {**os.environ, "DEEPVM_HOME": user_dir, "DEEPVM_USER_CATALOG_DIR": user_dir}
        for busy in args.load:
            print(f"First paint with {busy} busy process(es) beside the server "
                  f"({os.cpu_count()} cores)")
            with load(busy):
                for path in PAGES:
                    cold: list[dict[str, float]] = []
                    warm: list[dict[str, float]] = []
                    for _ in range(max(args.starts, 1)):
                        with running_server(env, Path(user_dir) / "logs") as url:
                            runs = first_paint(url, path, max(args.sessions, 2))
                        cold.append(runs[0])
                        warm += runs[1:]
                    print(f" {path}")
                    print(line("cold", cold))
                    print(line("warm", warm))
        if args.trace:
            with running_server(env, Path(user_dir) / "logs") as url:
                print("The browser's longest main-thread tasks, one warm load of Recommend "
                      "(start, duration, what):")
                print("\n".join(longest_tasks(url)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
