"""Writing files atomically: the one home of "temporary file in the same folder, flushed and
synced to disk, then renamed over the target".

A reader sees the old file or the new one, never half of one, and a crash leaves at most a
hidden ``.NAME.*.tmp`` file behind, never a truncated target. Used by the catalog store, the
live fetch (all-or-nothing over regions) and the EC2 Fleet bundle (all-or-nothing over files).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path


def write_temp_beside(target: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to a new temporary file in ``target``'s folder (created if needed),
    flushed and synced; returns its path. The caller renames it over ``target``
    (``os.replace``) or removes it. Nothing is left behind when the write fails."""
    path = Path(target)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp)


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (:func:`write_temp_beside`, then a rename)."""
    target = Path(path)
    tmp = write_temp_beside(target, data)
    try:
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return target


def write_json_atomic(path: str | os.PathLike[str], data: object) -> Path:
    """Write ``data`` as JSON (2-space indent, a final newline) to ``path`` atomically."""
    text = json.dumps(data, indent=2) + "\n"
    return write_bytes_atomic(path, text.encode("utf-8"))
