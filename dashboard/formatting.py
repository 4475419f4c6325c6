"""Numbers as short text for the pages, charts and tables (pure): one format per quantity.

* Money (USD): 2 decimals in sentences and cards (:func:`usd`, :func:`usd_per_hour`); tables
  show USD/hour with 4 decimals (:data:`TABLE_USD_PER_HOUR`) and job costs with 2
  (:data:`TABLE_USD`).
* Durations (given in hours): minutes under an hour, hours with one decimal up to 48 h, days
  with one decimal past 48 h (:func:`duration`); chart ticks use the same units without a
  trailing ``.0`` (:func:`duration_tick`).
* Large numbers: one decimal and an SI suffix, ``8.0 M``, ``145.4 M``; below a thousand
  thousand, thousands separators (:func:`si`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from deepvm_core.units import MINUTES_PER_HOUR

#: Hours from which a duration is written in days (48 h is "48.0 h", 49 h "2.0 days").
DAYS_FROM_HOURS = 48.0
HOURS_PER_DAY = 24.0
#: Number formats (printf style, as ``st.column_config.NumberColumn`` takes them) of table
#: columns: USD per hour, USD, hours.
TABLE_USD_PER_HOUR = "%.4f"
TABLE_USD = "%.2f"
TABLE_HOURS = "%.1f"
#: Text of a duration that never ends (a cluster not expected to finish).
NEVER = "never"


def usd(value: float) -> str:
    """Money in sentences and cards: ``1,234.57 USD``."""
    return f"{value:,.2f} USD"


def usd_per_hour(value: float) -> str:
    """An hourly price in sentences and cards: ``2.87 USD/h``."""
    return f"{value:,.2f} USD/h"


def usd_per_hour_change(value: float) -> str:
    """A signed difference of hourly prices: ``+0.04 USD/h``, ``-1.20 USD/h``; a difference
    that rounds to zero but is not zero reads ``+<0.01 USD/h``."""
    if 0 < abs(value) < 0.005:
        return f"{'+' if value > 0 else '-'}<0.01 USD/h"
    return f"{value:+,.2f} USD/h"


def _duration_parts(hours: float) -> tuple[float, str]:
    """(value, unit) of :func:`duration`: minutes under 1 h, hours to 48 h, days past."""
    if hours < 1.0:
        return hours * MINUTES_PER_HOUR, "min"
    if hours <= DAYS_FROM_HOURS:
        return hours, "h"
    return hours / HOURS_PER_DAY, "days"


def duration(hours: float) -> str:
    """A duration given in hours: ``25 min``, ``2.4 h``, ``3.5 days``; ``never`` if infinite."""
    if not math.isfinite(hours):
        return NEVER
    value, unit = _duration_parts(hours)
    return f"{value:,.0f} {unit}" if unit == "min" else f"{value:,.1f} {unit}"


def duration_axis(largest_hours: float) -> tuple[float, str]:
    """(factor from hours, unit) of a linear duration axis whose largest value is
    ``largest_hours``: minutes under an hour, hours to 48 h, days past (as :func:`duration`)."""
    _, unit = _duration_parts(largest_hours)
    return {"min": float(MINUTES_PER_HOUR), "h": 1.0, "days": 1 / HOURS_PER_DAY}[unit], unit


def duration_tick(hours: float) -> str:
    """A chart tick of a duration axis: the units of :func:`duration`, no trailing zeros
    (``30 min``, ``1 h``, ``2.5 h``, ``5 days``)."""
    value, unit = _duration_parts(hours)
    return f"{value:,.3g} {unit}" if value < 1000 else f"{value:,.0f} {unit}"


def number_tick(value: float) -> str:
    """A chart tick of a plain or money axis with its full value: ``0.5``, ``20``, ``5,000``."""
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def si(value: float) -> str:
    """A large number with an SI suffix and one decimal: ``145.4 M``, ``8.0 M``, ``6,375``."""
    for factor, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M")):
        if abs(value) >= factor:
            return f"{value / factor:,.1f} {suffix}"
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"


def format_intervals(spans: Sequence[tuple[float, float]], unit: str = "") -> str:
    """``0.8-1.3 and 9.5-10`` followed by `` unit`` if given (or ``never``)."""
    if not spans:
        return "never"
    parts = [f"{a:g}" if a == b else f"{a:g}–{b:g}" for a, b in spans]
    text = ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]
    return f"{text} {unit}" if unit else text
