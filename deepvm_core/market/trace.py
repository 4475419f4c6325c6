"""Spot traces (``traces.md``, "Traces"): reading and checking one trace file.

A trace is JSON in the format of the public ``skypilot-org/spot-traces`` repository::

    {"metadata": {"gap_seconds": 300}, "data": [0, 0, 4, 4, 3, 4, 0]}

``data[k]`` is the number of spot VMs of one market available (or alive) during tick k, that
is over ``[k g, (k + 1) g)`` seconds with g = ``gap_seconds`` (a positive number, not always a
whole minute). Every bad input is a :class:`TraceError` naming the file and the problem: a
missing or non-positive gap; an empty or non-list ``data``; a negative, fractional or
non-numeric count; more than :data:`MAX_TICKS` ticks; a binary file or one over the catalog
loader's JSON limits (:data:`~deepvm_core.catalog.schema.MAX_CATALOG_BYTES`, nesting depth).
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import numpy as np

from deepvm_core.arrays import IntArray
from deepvm_core.catalog.json_input import JsonInputError, parse_json_bounded, read_bytes_bounded
from deepvm_core.catalog.schema import MAX_CATALOG_BYTES
from deepvm_core.errors import DeepVMError
from deepvm_core.units import SECONDS_PER_DAY, SECONDS_PER_HOUR

#: The most ticks a trace may have (45 days of 1-second ticks is 3.9 million).
MAX_TICKS: Final = 10_000_000
#: The largest count a tick may hold (VMs of one market; beyond it is not a count).
MAX_COUNT: Final = 2**31 - 1


class TraceError(DeepVMError):
    """A trace, pool or backtest input that cannot be used; the message names the file (or
    field) and the problem in one line.

    Attributes:
        source: the file or field at fault.
        reason: what is wrong, in a sentence.
    """

    def __init__(self, source: str, reason: str) -> None:
        self.source = source
        self.reason = reason
        super().__init__(f"{source}: {reason}")


@dataclass(frozen=True, eq=False)
class SpotTrace:
    """One market's trace.

    Attributes:
        source: where it was read (a path or a label).
        gap_seconds: g, seconds per tick (> 0).
        counts: ``data``, VMs available (or alive) per tick, int64, read-only, at least one.
    """

    source: str
    gap_seconds: float
    counts: IntArray

    @property
    def ticks(self) -> int:
        """L, the number of ticks."""
        return int(self.counts.size)

    @property
    def gap_hours(self) -> float:
        """g in hours."""
        return self.gap_seconds / SECONDS_PER_HOUR

    @property
    def max_count(self) -> int:
        """M, the largest count (1 or less: a state trace, see ``traces.md``)."""
        return int(self.counts.max())

    @property
    def days(self) -> float:
        """``ticks * g / 86,400``."""
        return self.ticks * self.gap_seconds / SECONDS_PER_DAY


def _counts(source: str, data: object) -> IntArray:
    """``data`` as an int64 array, or a :class:`TraceError` naming the first bad entry."""
    if not isinstance(data, list):
        raise TraceError(source, f"'data' must be a list of counts, got {type(data).__name__}")
    if not data:
        raise TraceError(source, "'data' is empty: a trace needs at least one tick")
    if len(data) > MAX_TICKS:
        raise TraceError(source, f"'data' has {len(data):,} ticks; at most {MAX_TICKS:,} are "
                                 "read")
    kinds = set(map(type, data))
    if not kinds <= {int, float}:
        bad = next(i for i, x in enumerate(data) if type(x) not in (int, float))
        raise TraceError(source, f"data[{bad}] = {data[bad]!r}: a count must be a number")
    if kinds == {int}:
        low, high = min(data), max(data)
        if low >= 0 and high <= MAX_COUNT:
            return np.asarray(data, dtype=np.int64)
    values = np.asarray(data, dtype=np.float64)
    problems = (("a count must be a finite number", ~np.isfinite(values)),
                ("a count must not be negative", values < 0),
                ("a count must be a whole number", np.mod(values, 1) != 0),
                (f"a count must be at most {MAX_COUNT:,}", values > MAX_COUNT))
    for message, mask in problems:
        if np.any(mask):
            bad = int(np.flatnonzero(mask)[0])
            raise TraceError(source, f"data[{bad}] = {data[bad]!r}: {message}")
    return values.astype(np.int64)


def parse_trace(data: str | bytes, source: str = "trace") -> SpotTrace:
    """The trace in ``data`` (JSON text or bytes), checked (module docstring).

    Raises:
        TraceError: a binary or malformed file, one over the JSON limits, or bad fields.
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if b"\x00" in raw and json.detect_encoding(raw) == "utf-8":
        raise TraceError(source, "a binary file, not a JSON trace")
    try:
        doc = parse_json_bounded(data, max_bytes=MAX_CATALOG_BYTES)
    except JsonInputError as exc:
        raise TraceError(source, str(exc)) from None
    if not isinstance(doc, dict):
        raise TraceError(source, "a trace must be a JSON object with 'metadata' and 'data'")
    meta = doc.get("metadata")
    if not isinstance(meta, dict) or "gap_seconds" not in meta:
        raise TraceError(source, "'metadata.gap_seconds' is missing (seconds per tick)")
    gap = meta["gap_seconds"]
    if (isinstance(gap, bool) or not isinstance(gap, (int, float)) or not math.isfinite(gap)
            or gap <= 0):
        raise TraceError(source, f"metadata.gap_seconds = {gap!r}: must be a number > 0 "
                                 "(seconds per tick)")
    if "data" not in doc:
        raise TraceError(source, "'data' is missing (the counts per tick)")
    counts = _counts(source, doc["data"])
    counts.setflags(write=False)
    return SpotTrace(source=source, gap_seconds=float(gap), counts=counts)


def load_trace(path: str | os.PathLike[str]) -> SpotTrace:
    """Read and check the trace file at ``path`` (module docstring).

    Raises:
        TraceError: no such file, unreadable, too large, binary, malformed or bad fields.
    """
    source = str(path)
    try:
        raw = read_bytes_bounded(Path(path), max_bytes=MAX_CATALOG_BYTES)
    except JsonInputError as exc:
        raise TraceError(source, exc.reason) from None
    except FileNotFoundError:
        raise TraceError(source, "no such file") from None
    except OSError as exc:
        raise TraceError(source, f"cannot be read: {exc.strerror or exc}") from None
    return parse_trace(raw, source)
