"""Fixtures for the browser end-to-end tests in tests/e2e.

- ``streamlit_server``: the dashboard served as ``make run`` does, on a free port of
  127.0.0.1 (``tests/dashboard_server.py``), with ``DEEPVM_HOME`` and the catalog folders
  pointing at temporary ones; yields its base URL.
- ``browser``: Debian's Chromium (``/usr/bin/chromium``, or env ``CHROMIUM_PATH``) driven by
  Playwright. Never run ``playwright install``: the system browser is used. An ``expect``
  without a timeout of its own waits up to 15 s (``EXPECT_TIMEOUT_MS``).
- ``browser_context``: one browser context per session (per xdist worker: 1400x1000,
  downloads accepted), so that Streamlit's and plotly's JavaScript is downloaded and compiled
  once, not on every test's first page load (its HTTP and code caches stay warm).
- ``page``: a fresh page of that context per test, made after the context's cookies and the
  stored data (local storage, IndexedDB, service workers, ...) of every origin it visited are
  cleared: no test sees another's state, only the HTTP cache is kept. Every page a test
  opened is closed after it. When a test fails, a screenshot is written to tests/artifacts/. A
  test that needs other context options (a time zone) makes its own context from ``browser``.
- ``artifacts_dir``: tests/artifacts/ (git-ignored), for screenshots and downloads.

Every test collected under tests/e2e gets the ``e2e`` marker automatically.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import pytest
from browser_helpers import VIEWPORT
from dashboard_server import running_server

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Page

REPO_ROOT = Path(__file__).resolve().parents[2]
E2E_DIR = Path(__file__).resolve().parent
ARTIFACTS_DIR = REPO_ROOT / "tests" / "artifacts"
DEFAULT_CHROMIUM = "/usr/bin/chromium"
#: How long an ``expect`` without a timeout of its own waits, in milliseconds.
EXPECT_TIMEOUT_MS = 15_000

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if E2E_DIR in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.e2e)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item):
    # Keep each phase's report on the item so that `page` can screenshot failed tests.
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


@pytest.fixture(scope="session")
def streamlit_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Start the dashboard once per session and yield its base URL (no trailing slash)."""
    env = os.environ.copy()
    env["DEEPVM_HOME"] = str(tmp_path_factory.mktemp("deepvm_home"))
    env["DEEPVM_USER_CATALOG_DIR"] = str(tmp_path_factory.mktemp("user_catalogs"))
    env["DEEPVM_UPLOAD_CATALOG_DIR"] = str(tmp_path_factory.mktemp("upload_catalogs"))
    # A start that fails raises ServerStartError: an error at setup, with the server's logs.
    with running_server(env, tmp_path_factory.mktemp("streamlit_logs")) as url:
        yield url


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """Debian's Chromium under Playwright, headless; one per session."""
    executable = os.environ.get("CHROMIUM_PATH", DEFAULT_CHROMIUM)
    if not (os.path.isfile(executable) and os.access(executable, os.X_OK)):
        reason = (
            f"Chromium not found at {executable}: run `make browser` (installs Debian's "
            "chromium with apt-get) or set CHROMIUM_PATH"
        )
        if os.environ.get("CI"):
            pytest.fail(f"{reason} (CI is set, so this is an error)", pytrace=False)
        pytest.skip(reason)

    from playwright.sync_api import expect, sync_playwright

    # An expect without its own timeout waits up to 15 s (Playwright's default: 5 s): the
    # dashboard shares the cores with the other test workers (make test runs two).
    expect.set_options(timeout=EXPECT_TIMEOUT_MS)
    playwright = sync_playwright().start()
    try:
        chromium = playwright.chromium.launch(
            executable_path=executable, headless=True, args=CHROMIUM_ARGS
        )
    except BaseException:
        playwright.stop()
        raise
    try:
        yield chromium
    finally:
        chromium.close()
        playwright.stop()


@pytest.fixture(scope="session")
def artifacts_dir() -> Path:
    """tests/artifacts/ (created; git-ignored) for screenshots, downloads and logs."""
    ARTIFACTS_DIR.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS_DIR


#: What is cleared between tests for each visited origin (``Storage.clearDataForOrigin``; the
#: HTTP cache is not a storage type, so it stays warm).
CLEARED_STORAGE = ("cookies,local_storage,indexeddb,websql,service_workers,cache_storage,"
                   "file_systems")


@pytest.fixture(scope="session")
def browser_context(browser: Browser) -> Iterator[BrowserContext]:
    """One context for the session's tests (``page`` clears its state between them)."""
    context = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
    context.on("request", lambda request: _VISITED[context].add(_origin(request.url)))
    try:
        yield context
    finally:
        _VISITED.pop(context, None)
        context.close()


#: The origins (scheme://host:port) each shared context has sent a request to.
_VISITED: defaultdict[BrowserContext, set[str]] = defaultdict(set)


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme in ("http", "https") else ""


def _fresh_page(context: BrowserContext) -> Page:
    """A new page of ``context`` after its cookies and every visited origin's stored data are
    cleared (through that page; the pages before are closed by then, so nothing they write
    while closing is left)."""
    context.clear_cookies()
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    try:
        for origin in sorted(_VISITED[context] - {""}):
            cdp.send("Storage.clearDataForOrigin",
                     {"origin": origin, "storageTypes": CLEARED_STORAGE})
    finally:
        cdp.detach()
    return page


@pytest.fixture
def page(browser_context: BrowserContext, request: pytest.FixtureRequest) -> Iterator[Page]:
    """A new page of the session's context for each test, its cookies and stored data cleared;
    the pages the test opened are closed afterwards."""
    from playwright.sync_api import Error as PlaywrightError

    new_page = _fresh_page(browser_context)
    try:
        yield new_page
    finally:
        report = getattr(request.node, "rep_call", None)
        if report is not None and report.failed:
            ARTIFACTS_DIR.mkdir(parents=True, exist_ok=True)
            name = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.nodeid)[-150:]
            # A screenshot must never hide the real failure.
            with contextlib.suppress(PlaywrightError, OSError):
                new_page.screenshot(path=str(ARTIFACTS_DIR / f"FAILED-{name}.png"), full_page=True)
        for opened in browser_context.pages:
            opened.close()
