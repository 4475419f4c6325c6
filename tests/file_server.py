"""A static file server on 127.0.0.1 for the tests that download (SkyPilot's catalog, the
public spot traces): ``serve({"/vms.csv": b"..."})`` yields its base URL; every other path is
a 404. It records the paths asked for. Nothing here leaves loopback."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field


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

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            served.asked.append(self.path)
            body = served.files.get(self.path)
            if body is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    served.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        yield served
    finally:
        httpd.shutdown()
        httpd.server_close()
