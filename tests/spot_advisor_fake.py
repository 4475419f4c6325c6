"""A loopback fake of the AWS Spot Instance Advisor's public file: a server on 127.0.0.1
(``loopback.LoopbackServer``) that serves the excerpt (``tests/fixtures/spot_advisor``) at
the URL ``$DEEPVM_SPOT_ADVISOR_URL`` points to; it can answer an HTTP error or a broken body
instead.

Fixtures (``tests/conftest.py`` makes them available to every test): ``fake_spot_advisor``
(one server per session), ``spot_advisor`` (per test: reset, the environment set).
"""

from __future__ import annotations

import http.server
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.loopback import LoopbackFake, LoopbackServer, guard_loopback_only, send

SPOT_ADVISOR_PATH = "/spot-advisor-data.json"
#: An excerpt of the AWS Spot Instance Advisor's data (see its README); also
#: ``conftest.SPOT_ADVISOR_EXCERPT``.
SPOT_ADVISOR_EXCERPT = (Path(__file__).resolve().parent / "fixtures" / "spot_advisor"
                        / "spot-advisor-excerpt.json")


@dataclass
class FakeSpotAdvisor(LoopbackFake):
    """Serves the Spot Instance Advisor excerpt over HTTP on 127.0.0.1 (GET only).

    ``fail(status, times)`` answers the next ``times`` requests (all, when ``None``) with that
    HTTP status; ``body`` replaces the excerpt (a malformed answer).
    """

    body: bytes = b""
    status: int | None = None
    remaining: int | None = None
    requests: list[str] = field(default_factory=list)
    _server: LoopbackServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    path = SPOT_ADVISOR_PATH

    def __post_init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        with self._lock:
            self.body = SPOT_ADVISOR_EXCERPT.read_bytes()
            self.status, self.remaining = None, None
            self.requests.clear()

    def fail(self, status: int, times: int | None = None) -> None:
        with self._lock:
            self.status, self.remaining = status, times

    def _handle(self, h: http.server.BaseHTTPRequestHandler, _body: bytes) -> None:
        with self._lock:
            self.requests.append(h.path)
            status, body = 200, self.body
            if h.command != "GET" or h.path != SPOT_ADVISOR_PATH:
                status, body = 404, b"not found"
            elif self.status is not None and self.remaining != 0:
                status, body = self.status, b"error"
                if self.remaining is not None:
                    self.remaining -= 1
        send(h, status, body, "application/json")


@pytest.fixture(scope="session")
def fake_spot_advisor() -> Iterator[FakeSpotAdvisor]:
    """The fake Spot Instance Advisor on 127.0.0.1 (a free port), one per session
    (``spot_advisor`` resets it for each test)."""
    with FakeSpotAdvisor() as fake:
        yield fake


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
