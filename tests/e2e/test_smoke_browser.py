"""Browser plumbing check, independent of the app: Chromium + Playwright on a local page."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

SMOKE_HTML = """<!doctype html>
<html>
<head><meta charset="utf-8"><title>DeepVM smoke page</title></head>
<body>
<h1 id="heading">Smoke</h1>
<button id="go" onclick="document.getElementById('out').textContent = 'clicked'">Go</button>
<p id="out">idle</p>
</body>
</html>
"""


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def local_site(tmp_path: Path) -> Iterator[str]:
    (tmp_path / "index.html").write_text(SMOKE_HTML, encoding="utf-8")
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_QuietHandler, directory=str(tmp_path)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/index.html"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_browser_opens_local_page(page, local_site: str) -> None:
    page.goto(local_site)
    assert page.title() == "DeepVM smoke page"
    page.click("#go")
    page.wait_for_function("document.getElementById('out').textContent === 'clicked'")
    assert page.text_content("#out") == "clicked"
