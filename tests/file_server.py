"""A static file server on 127.0.0.1 for the tests that download (SkyPilot's catalog, the
public spot traces): ``serve({"/vms.csv": b"..."})`` yields its base URL; every other path is
a 404. It records the paths asked for. It runs on the tests' one loopback server
(:class:`loopback.LoopbackServer`); nothing here leaves loopback."""

from __future__ import annotations

import http.server
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

from loopback import LoopbackServer, send


@dataclass
class FileServer:
    """The files served and the paths asked for."""

    files: Mapping[str, bytes]
    url: str = ""
    asked: list[str] = field(default_factory=list)


@contextmanager
def serve(files: Mapping[str, bytes]) -> Iterator[FileServer]:
    """Serve ``files`` (path -> bytes) on a free port of 127.0.0.1 until the block ends."""
    served = FileServer(dict(files))

    def handle(h: http.server.BaseHTTPRequestHandler, _body: bytes) -> None:
        served.asked.append(h.path)
        body = served.files.get(h.path)
        if body is None:
            send(h, 404, b"not found", "text/plain")
        else:
            send(h, 200, body)

    with LoopbackServer(handle) as server:
        served.url = server.url
        yield served
