"""Forecast from a recent window (issue 25): spot markets change from week to week, so pool
statistics, replays and the trace models read the last days of a trace by default.

On the development traces, availability changed between the halves of 11 of 12 traces, by up
to 5x; a model fitted on the whole past inherits that, while the last 3-7 days forecast the
next week best (docs/method.md, "Forecasts from a recent window"). The window is
:data:`DEFAULT_WINDOW_DAYS` days unless told; ``None`` (``--window-days all``) keeps the whole
trace.

* :func:`recent_window`: the last ``days`` days of a trace (all of it when shorter).
* :func:`sub_windows`: the overlapping one-day sub-windows of a window, and :func:`warp`, a
  market with its up and down periods scaled, for bands that include how much the market's
  MTBI and W move (:mod:`deepvm_core.job.forecast_scenarios`).
* :func:`parse_window_days`: ``all`` or a number of days > 0, with the error naming the value.
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np

from deepvm_core.arrays import BoolArray
from deepvm_core.market.trace import SpotTrace, TraceError
from deepvm_core.units import SECONDS_PER_DAY

#: Days of the recent window that statistics, replays and forecasts read unless told.
DEFAULT_WINDOW_DAYS: Final = 7.0
#: The word for the whole trace (``--window-days all``).
WHOLE_TRACE: Final = "all"
#: Sub-windows (:func:`sub_windows`): this many days long, one starting every
#: :data:`SUB_WINDOW_STEP_DAYS`.
SUB_WINDOW_DAYS: Final = 1.0
SUB_WINDOW_STEP_DAYS: Final = 0.5


def window_ticks(trace: SpotTrace, days: float) -> int:
    """Ticks of ``days`` days on ``trace``'s tick length (at least 1, at most all)."""
    return max(1, min(trace.ticks, round(days * SECONDS_PER_DAY / trace.gap_seconds)))


def part(trace: SpotTrace, start: int, stop: int, label: str) -> SpotTrace:
    """Ticks ``start:stop`` of ``trace`` as a trace of its own, ``label`` added to its source."""
    counts = trace.counts[start:stop]
    if counts.size == 0:
        raise TraceError(trace.source, f"no ticks in {start}:{stop}")
    return SpotTrace(f"{trace.source} ({label})", trace.gap_seconds, counts)


def recent_window(trace: SpotTrace, days: float | None = DEFAULT_WINDOW_DAYS) -> SpotTrace:
    """The last ``days`` days of ``trace``; the trace itself when ``days`` is ``None`` or the
    trace is not longer.

    Raises:
        TraceError: ``days`` not a number > 0.
    """
    if days is None:
        return trace
    check_window_days(days)
    keep = window_ticks(trace, days)
    if keep >= trace.ticks:
        return trace
    return part(trace, trace.ticks - keep, trace.ticks, f"last {days:g} days")


def sub_windows(trace: SpotTrace, days: float = SUB_WINDOW_DAYS,
                step_days: float = SUB_WINDOW_STEP_DAYS) -> list[SpotTrace]:
    """The overlapping sub-windows of ``trace``: ``days`` long, one starting every
    ``step_days``, and one that ends at the trace's end (a 7-day window: 13 days, starting
    every half day); a trace not longer than ``days``: itself."""
    length = window_ticks(trace, days)
    if length >= trace.ticks:
        return [trace]
    stride = window_ticks(trace, step_days)
    starts = list(range(0, trace.ticks - length + 1, stride))
    if starts[-1] != trace.ticks - length:
        starts.append(trace.ticks - length)
    return [part(trace, s, s + length, f"ticks {s}-{s + length}") for s in starts]


def warp(up: BoolArray, gap_seconds: float, up_factor: float, down_factor: float,
         source: str) -> SpotTrace:
    """A state trace (1 up, 0 down) whose maximal up runs are ``up_factor`` times and down
    runs ``down_factor`` times as long as those of ``up`` (ticks rounded, at least one; an
    infinite up factor: always up), in the same order: the market with its MTBI and W scaled.
    """
    if math.isinf(up_factor):
        return SpotTrace(f"{source} (always up)", gap_seconds, np.ones(1, dtype=np.int64))
    edges = np.flatnonzero(np.diff(up.astype(np.int8))) + 1
    bounds = np.concatenate(([0], edges, [up.size]))
    lengths = np.diff(bounds).astype(np.float64)
    states = up[bounds[:-1]]
    scaled = np.maximum(1, np.round(lengths * np.where(states, up_factor, down_factor)))
    counts = np.repeat(states.astype(np.int64), scaled.astype(np.int64))
    counts.setflags(write=False)
    return SpotTrace(f"{source} (MTBI x {up_factor:.3g}, W x {down_factor:.3g})", gap_seconds,
                     counts)


def check_window_days(days: object) -> float:
    """``days`` as a float when it is a finite number > 0.

    Raises:
        TraceError: naming the value.
    """
    if (isinstance(days, bool) or not isinstance(days, (int, float)) or not math.isfinite(days)
            or days <= 0):
        raise TraceError("window_days", f"{days!r}: must be a number of days > 0, or "
                                        f"{WHOLE_TRACE!r} for the whole trace")
    return float(days)


def parse_window_days(text: str) -> float | None:
    """``all`` -> ``None`` (the whole trace); else a number of days > 0.

    Raises:
        TraceError: anything else, naming the value.
    """
    if text.strip().lower() == WHOLE_TRACE:
        return None
    try:
        return check_window_days(float(text))
    except (ValueError, TraceError):
        raise TraceError("window_days", f"{text!r}: must be a number of days > 0, or "
                                        f"{WHOLE_TRACE!r} for the whole trace") from None
