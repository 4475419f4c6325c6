"""Downloading the public spot traces (``deepvm traces fetch``).

The files (``data/spot-traces/files.json``, bundled with the package) are read relative to a base
address: ``$DEEPVM_SPOT_TRACES_URL``, else :data:`DEFAULT_SPOT_TRACES_URL` (the public
``skypilot-org/spot-traces`` repository). Each file is downloaded with a timeout, bounded in
size and checked as a trace (:func:`~deepvm_core.market.trace.parse_trace`); only when every
file is good are they written (each atomically) under the output folder. Any failure is a
:class:`~deepvm_core.errors.FetchError` naming the address, and nothing is written.
"""

from __future__ import annotations

import http.client
import json
import os
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Final

from deepvm_core.bundled import read_bundled_file
from deepvm_core.catalog.schema import MAX_CATALOG_BYTES
from deepvm_core.errors import FetchError
from deepvm_core.market.trace import TraceError, parse_trace

#: The environment variable that overrides :data:`DEFAULT_SPOT_TRACES_URL`.
SPOT_TRACES_URL_VARIABLE: Final = "DEEPVM_SPOT_TRACES_URL"
DEFAULT_SPOT_TRACES_URL: Final = "https://raw.githubusercontent.com/skypilot-org/spot-traces/main/"
DEFAULT_TIMEOUT_S: Final = 30.0


def spot_traces_url() -> str:
    """``$DEEPVM_SPOT_TRACES_URL``, else :data:`DEFAULT_SPOT_TRACES_URL`."""
    return os.environ.get(SPOT_TRACES_URL_VARIABLE) or DEFAULT_SPOT_TRACES_URL


def trace_files() -> tuple[str, ...]:
    """The relative paths of the trace files to download (the shipped list)."""
    files = json.loads(read_bundled_file("spot-traces", "files.json"))["files"]
    return tuple(str(f) for f in files)


def _get(url: str, timeout_s: float) -> bytes:
    scheme = url.split(":", 1)[0].lower()
    if scheme not in ("http", "https", "file"):
        raise FetchError(f"{url}: the address must start with http://, https:// or file://. "
                         "Nothing was written.", kind="other")
    request = urllib.request.Request(url, headers={"User-Agent": "deepvm-studio"})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            body: bytes = response.read(MAX_CATALOG_BYTES + 1)
    except urllib.error.HTTPError as exc:
        raise FetchError(f"downloading {url} failed: the server answered HTTP {exc.code}. "
                         "Nothing was written.", kind="server_error" if exc.code >= 500
                         else "other") from None
    except TimeoutError:
        raise FetchError(f"downloading {url} failed: no answer within {timeout_s:g} s. "
                         "Nothing was written.", kind="timeout") from None
    except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
        reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
        raise FetchError(f"downloading {url} failed: could not be reached ({reason}). "
                         "Nothing was written.", kind="unreachable") from None
    if len(body) > MAX_CATALOG_BYTES:
        raise FetchError(f"downloading {url} failed: larger than {MAX_CATALOG_BYTES:,} bytes. "
                         "Nothing was written.", kind="malformed")
    return body


def fetch_traces(out_dir: str | os.PathLike[str], *, base_url: str | None = None,
                 timeout_s: float = DEFAULT_TIMEOUT_S,
                 progress: Callable[[str, int, int], None] | None = None) -> list[Path]:
    """Download every shipped trace file under ``out_dir`` (same relative paths); returns the
    paths written. ``progress(file, done, total)`` hears of each file downloaded.

    Raises:
        FetchError: a download failed, or a file is not a valid trace; nothing written.
    """
    base = base_url if base_url is not None else spot_traces_url()
    if not base.endswith("/"):
        base += "/"
    bodies = {}
    files = trace_files()
    for done, rel in enumerate(files):
        if progress is not None:
            progress(rel, done, len(files))
        url = base + rel
        body = _get(url, timeout_s)
        try:
            parse_trace(body, url)
        except TraceError as exc:
            raise FetchError(f"{exc}. Nothing was written.", kind="malformed") from None
        bodies[rel] = body
    written = []
    root = Path(out_dir)
    for rel, body in bodies.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(body)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        written.append(target)
    if progress is not None:
        progress("written", len(files), len(files))
    return written
