"""Loopback helpers of the network tests: one HTTP server on 127.0.0.1 that every fake of the
tests runs on (:class:`LoopbackServer`), an endpoint that is down, a guard that refuses any
connection or name lookup beyond loopback, and a snapshot of a folder's files (to check that a
failure wrote nothing)."""

from __future__ import annotations

import http.client
import http.server
import socket
import threading
import urllib.parse
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Self

import pytest

#: A request handler of :class:`LoopbackServer`: the request (its line and headers read) and
#: its body; it answers with :func:`send` (or anything ``BaseHTTPRequestHandler`` can do).
Handle = Callable[[http.server.BaseHTTPRequestHandler, bytes], None]


class LoopbackServer:
    """An HTTP/1.1 server on 127.0.0.1 (a free port), served from a daemon thread; each
    request (GET, POST, PUT, DELETE, HEAD) goes to ``handle(request, body)``.

    Use it as a context manager, or :meth:`start` and :meth:`stop`. Answers go out in one
    segment per answer (buffered writes, no Nagle): unbuffered header and body writes would meet
    Nagle's algorithm and delayed ACKs, 40 ms per request on a kept-alive connection.
    """

    def __init__(self, handle: Handle) -> None:
        self._handle = handle
        self._server: http.server.ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (no trailing slash)."""
        assert self._server is not None, "the server is not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> LoopbackServer:
        handle = self._handle

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            wbufsize = 1 << 16
            disable_nagle_algorithm = True

            def _dispatch(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                handle(self, self.rfile.read(length) if length else b"")

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _dispatch

            def log_message(self, *args: object) -> None:
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


class LoopbackFake(ABC):
    """What every fake server of the tests shares: a :class:`LoopbackServer` answering with
    the subclass's ``_handle``, its :attr:`url` (plus ``path``), :meth:`start` and
    :meth:`stop` (or ``with``). A subclass (a dataclass) declares
    ``_server: LoopbackServer | None = None`` and its own ``reset``."""

    _server: LoopbackServer | None
    #: Appended to the server's URL by :attr:`url` (a fake serving one file).
    path = ""

    @property
    def url(self) -> str:
        assert self._server is not None, "the fake is not started"
        return f"{self._server.url}{self.path}"

    @abstractmethod
    def _handle(self, h: http.server.BaseHTTPRequestHandler, body: bytes) -> None:
        """Answer one request ``h`` whose body is ``body`` (each fake its own protocol)."""

    def start(self) -> Self:
        self._server = LoopbackServer(self._handle).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


def send(h: http.server.BaseHTTPRequestHandler, status: int, payload: bytes,
         content_type: str = "application/octet-stream",
         headers: dict[str, str] | None = None) -> None:
    """Answer ``status`` with ``payload`` (its length and type, an AWS request id and any
    ``headers`` in the header; no body for HEAD)."""
    h.send_response(status)
    h.send_header("Content-Type", content_type)
    h.send_header("Content-Length", str(len(payload)))
    h.send_header("x-amzn-RequestId", str(uuid.uuid4()))
    for name, value in (headers or {}).items():
        h.send_header(name, value)
    h.end_headers()
    if h.command != "HEAD":
        h.wfile.write(payload)


def forward(h: http.server.BaseHTTPRequestHandler, url: str, body: bytes,
            timeout_s: float = 60) -> tuple[int, bytes, str]:
    """Send the request ``h`` (with ``body`` in place of its own) to the server at ``url``;
    return its answer's status, body and content type (a proxy's half)."""
    parsed = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=timeout_s)
    headers = {k: v for k, v in h.headers.items()
               if k.lower() not in ("host", "content-length", "connection")}
    try:
        conn.request(h.command, h.path, body=body, headers=headers)
        response = conn.getresponse()
        return (response.status, response.read(),
                response.getheader("Content-Type", "text/xml"))
    finally:
        conn.close()


def serve_folder(root: Path) -> LoopbackServer:
    """A (not yet started) server of the files under ``root``: ``GET /a/b.json`` answers
    ``root/a/b.json``, 404 for anything else."""
    base = root.resolve()

    def handle(h: http.server.BaseHTTPRequestHandler, _body: bytes) -> None:
        rel = urllib.parse.unquote(urllib.parse.urlsplit(h.path).path).lstrip("/")
        path = (base / rel).resolve()
        if h.command in ("GET", "HEAD") and path.is_file() and base in path.parents:
            send(h, 200, path.read_bytes(), "application/json")
        else:
            send(h, 404, b"not found", "text/plain")

    return LoopbackServer(handle)


def closed_port_url() -> str:
    """An http:// URL on 127.0.0.1 where nothing listens (an endpoint that is down)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (hidden temp files included) and its content."""
    if not folder.exists():
        return {}
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


_LOOPBACK = {"127.0.0.1", "::1", "localhost"}


def guard_loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make any connection or name lookup beyond loopback fail loudly (no test reaches AWS,
    not even its DNS names)."""
    real_connect = socket.socket.connect
    real_getaddrinfo = socket.getaddrinfo

    def connect(self: socket.socket, address: object) -> None:
        if self.family in (socket.AF_INET, socket.AF_INET6):
            host = address[0] if isinstance(address, tuple) else address
            if host not in _LOOPBACK:
                raise OSError(f"test network guard: connection to {address!r} refused")
        return real_connect(self, address)

    def getaddrinfo(host: object, *args: object, **kwargs: object) -> list:
        if host not in _LOOPBACK and host is not None:
            raise OSError(f"test network guard: name lookup of {host!r} refused")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
