"""Tick values and labels of log axes (pure): full values in the 1-2-5 series, so that 20 h
reads "20 h" and 90 USD sits between labelled "50" and "100" (issue 20, item 12).

Plotly's own log ticks label the 2s and 5s of a decade with their leading digit only ("2"
for 20) and leave short ranges with one label or none; every log axis of the dashboard takes
its ticks from here instead.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from dashboard.formatting import duration_tick, number_tick, si
from deepvm_core.text import DAYS_FROM_HOURS
from deepvm_core.units import HOURS_PER_DAY, MINUTES_PER_HOUR

#: Mantissas of the tick series within a decade; the fine series is used when the coarse one
#: puts fewer than :data:`MIN_TICKS` ticks in the data's span.
COARSE = (1, 2, 5)
FINE = (1, 1.5, 2, 3, 5, 7)
MIN_TICKS = 3


def _series(low: float, high: float, mantissas: tuple[float, ...]) -> list[float]:
    """``mantissa × 10^k`` from the decade of ``low`` to the one above ``high`` (exact
    decimals: ``float("2e-1")`` is the double nearest 0.2)."""
    first, last = math.floor(math.log10(low)), math.ceil(math.log10(high))
    return [float(f"{m}e{k}") for k in range(first, last + 1) for m in mantissas]


def _around(values: list[float], low: float, high: float) -> list[float]:
    """The values within [low, high] and the nearest one beyond each end (plotly pads the
    axis a little past the data)."""
    inside = [v for v in values if low <= v <= high]
    below = [v for v in values if v < low][-1:]
    above = [v for v in values if v > high][:1]
    return below + inside + above


def number_ticks(low: float, high: float) -> tuple[list[float], list[str]]:
    """Tick values and labels of a log axis of plain numbers or money over [low, high]
    (both > 0): ``1, 2, 5, 10, 20, 50, …``; finer (``1, 1.5, 2, 3, 5, 7``) in a short span."""
    return _ticks(low, high, lambda lo, hi, m: _series(lo, hi, m), number_tick)


def duration_ticks(low_hours: float, high_hours: float) -> tuple[list[float], list[str]]:
    """Tick values (hours) and labels of a log axis of durations over [low, high] hours (both
    > 0), in the units of :func:`deepvm_core.text.duration`: ``10 min, 20 min, 30 min,
    1 h, 2 h, 5 h, 10 h, 20 h, 48 h, 5 days, 10 days, …``."""

    def series(lo: float, hi: float, mantissas: tuple[float, ...]) -> list[float]:
        coarse = mantissas == COARSE
        minutes = [m for m in _series(lo * MINUTES_PER_HOUR, 10, mantissas) if m < 10]
        minutes += [10, 20, 30] if coarse else [10, 15, 20, 30, 45]
        hours = [h for h in _series(1, DAYS_FROM_HOURS, mantissas) if h < DAYS_FROM_HOURS]
        days = [d for d in _series(2, max(hi / HOURS_PER_DAY, 2), mantissas) if d > 2]
        return sorted({*(m / MINUTES_PER_HOUR for m in minutes), *hours, DAYS_FROM_HOURS,
                       *(d * HOURS_PER_DAY for d in days)})

    return _ticks(low_hours, high_hours, series, duration_tick)


def _ticks(low: float, high: float,
           series: Callable[[float, float, tuple[float, ...]], list[float]],
           label: Callable[[float], str]) -> tuple[list[float], list[str]]:
    if not (low > 0 and high >= low and math.isfinite(high)):
        return [], []
    values = _around(series(low, high, COARSE), low, high)
    if sum(low <= v <= high for v in values) < MIN_TICKS:
        values = _around(series(low, high, FINE), low, high)
    return values, [label(v) for v in values]


#: Most ticks of a linear axis from zero (:func:`si_ticks`).
LINEAR_TICKS = 6


def si_ticks(high: float) -> tuple[list[float], list[str]]:
    """Ticks of a linear axis from 0 to ``high`` at a 1-2-5 step (at most
    :data:`LINEAR_TICKS` of them), labelled with :func:`dashboard.formatting.si` (``8.0 M``)."""
    if not (high > 0 and math.isfinite(high)):
        return [0.0], ["0"]
    step = next(s for s in _series(high / LINEAR_TICKS, high, COARSE)
                if high / s <= LINEAR_TICKS - 1)
    values = [i * step for i in range(int(high // step) + 2)]
    return values, [si(v) for v in values]
