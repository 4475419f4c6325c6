"""Downloading the public spot traces (``deepvm traces fetch``).

The files (``data/spot-traces/files.json``, bundled with the package) are read relative to a base
address: ``$DEEPVM_SPOT_TRACES_URL``, else :data:`DEFAULT_SPOT_TRACES_URL` (the public
``skypilot-org/spot-traces`` repository). Each file is downloaded with a timeout, bounded in
size and checked as a trace (:func:`~deepvm_core.market.trace.parse_trace`); only when every
file is good are they written (each atomically) under the output folder. Any failure is a
:class:`~deepvm_core.errors.FetchError` naming the address, and nothing is written.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Final

from deepvm_core.bundled import read_bundled_file
from deepvm_core.catalog.schema import MAX_CATALOG_BYTES
from deepvm_core.downloads import download
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
        body = download(url, timeout_s=timeout_s, max_bytes=MAX_CATALOG_BYTES,
                        too_large=f"{MAX_CATALOG_BYTES:,} bytes",
                        schemes=("http", "https", "file"))
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
