"""A loopback fake of the AWS Spot Instance Advisor's public file: an ``http.server`` on
127.0.0.1 that serves the excerpt (``tests/fixtures/spot_advisor``) at the URL
``$DEEPVM_SPOT_ADVISOR_URL`` points to; it can answer an HTTP error or a broken body instead.

Fixtures (import them into a test module): ``fake_spot_advisor``, ``spot_advisor``.
"""

from __future__ import annotations

import http.server
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from tests.conftest import SPOT_ADVISOR_EXCERPT
from tests.loopback import guard_loopback_only

SPOT_ADVISOR_PATH = "/spot-advisor-data.json"


@dataclass
class FakeSpotAdvisor:
    """Serves the Spot Instance Advisor excerpt over HTTP on 127.0.0.1 (GET only).

    ``fail(status, times)`` answers the next ``times`` requests (all, when ``None``) with that
    HTTP status; ``body`` replaces the excerpt (a malformed answer).
    """

    body: bytes = b""
    status: int | None = None
    remaining: int | None = None
    requests: list[str] = field(default_factory=list)
    _server: http.server.ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}{SPOT_ADVISOR_PATH}"

    def start(self) -> FakeSpotAdvisor:
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                fake._answer(self)

            def log_message(self, *args: object) -> None:
                pass

        self.reset()
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def reset(self) -> None:
        with self._lock:
            self.body = SPOT_ADVISOR_EXCERPT.read_bytes()
            self.status, self.remaining = None, None
            self.requests.clear()

    def fail(self, status: int, times: int | None = None) -> None:
        with self._lock:
            self.status, self.remaining = status, times

    def _answer(self, h: http.server.BaseHTTPRequestHandler) -> None:
        with self._lock:
            self.requests.append(h.path)
            status, body = 200, self.body
            if h.path != SPOT_ADVISOR_PATH:
                status, body = 404, b"not found"
            elif self.status is not None and self.remaining != 0:
                status, body = self.status, b"error"
                if self.remaining is not None:
                    self.remaining -= 1
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)


@pytest.fixture(scope="module")
def fake_spot_advisor() -> Iterator[FakeSpotAdvisor]:
    """The fake Spot Instance Advisor on 127.0.0.1 (a free port)."""
    fake = FakeSpotAdvisor().start()
    try:
        yield fake
    finally:
        fake.stop()


@pytest.fixture
def spot_advisor(fake_spot_advisor: FakeSpotAdvisor,
                 monkeypatch: pytest.MonkeyPatch) -> FakeSpotAdvisor:
    """The fake Spot Instance Advisor, reset, with ``$DEEPVM_SPOT_ADVISOR_URL`` pointing to it,
    no proxies, and any connection beyond loopback refused."""
    fake_spot_advisor.reset()
    guard_loopback_only(monkeypatch)
    for key in list(os.environ):
        if key.lower() in ("http_proxy", "https_proxy", "all_proxy"):
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("DEEPVM_SPOT_ADVISOR_URL", fake_spot_advisor.url)
    return fake_spot_advisor
