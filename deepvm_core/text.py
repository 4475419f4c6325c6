"""Numbers as short text, one format per quantity: the one home of each, for the CLI's tables,
the JSON documents' sentences and the dashboard (pure; nothing here depends on the rest of the
library but :mod:`deepvm_core.units`).

* Money (USD) in sentences and cards: 2 decimals and thousands separators (:func:`usd`,
  :func:`usd_per_hour`, :func:`usd_per_hour_change`).
* Durations (given in hours, :func:`duration`): minutes under an hour (no decimals), hours
  with one decimal up to 48 h, days with one decimal past 48 h, years with one decimal from a
  year on; under a minute, seconds, milliseconds or microseconds with two significant figures
  (the extremes of a cluster that is not expected to finish,
  :mod:`deepvm_core.job.finish`); ``never`` when infinite. :func:`duration_unit` is the unit
  rule alone (the dashboard's chart axes and ticks use it).
"""

from __future__ import annotations

import math
from typing import Final

from deepvm_core.units import HOURS_PER_DAY, MINUTES_PER_HOUR, SECONDS_PER_HOUR

#: Hours up to which a duration is written in hours (48 h is "48.0 h", 49 h "2.0 days").
DAYS_FROM_HOURS: Final = 48.0
#: Hours of a (Julian) year: from a year on, a duration is written in years.
HOURS_PER_YEAR: Final = 365.25 * HOURS_PER_DAY
#: Text of a duration that never ends (a cluster not expected to finish).
NEVER: Final = "never"

_SECONDS_PER_MINUTE: Final = SECONDS_PER_HOUR / MINUTES_PER_HOUR
#: (seconds in the unit, its symbol) of the units under a minute, smallest first.
_SUBMINUTE: Final = ((1e-6, "µs"), (1e-3, "ms"), (1.0, "s"))


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


def duration_unit(hours: float) -> tuple[float, str]:
    """(the unit's count in one hour, its symbol) that :func:`duration` writes ``hours`` in:
    ``min`` under an hour (and for 0; 60 per hour), ``h`` to 48 h, ``days`` past 48 h,
    ``years`` from a year on; under a minute ``s``, ``ms`` or ``µs`` (the largest the duration
    reaches)."""
    size = abs(hours)
    if size >= HOURS_PER_YEAR:
        return 1 / HOURS_PER_YEAR, "years"
    if size > DAYS_FROM_HOURS:
        return 1 / HOURS_PER_DAY, "days"
    if size >= 1.0:
        return 1.0, "h"
    seconds = size * SECONDS_PER_HOUR
    if seconds >= _SECONDS_PER_MINUTE or seconds == 0:
        return MINUTES_PER_HOUR, "min"
    unit_seconds, unit = _SUBMINUTE[0]
    for s, u in _SUBMINUTE:
        if seconds >= s:
            unit_seconds, unit = s, u
    return SECONDS_PER_HOUR / unit_seconds, unit


def duration(hours: float) -> str:
    """A duration given in hours: ``25 min``, ``2.4 h``, ``3.5 days``, ``114.1 years``,
    ``16 s``, ``3.6 µs`` (module doc); ``never`` if infinite (or NaN)."""
    if not math.isfinite(hours):
        return NEVER
    per_hour, unit = duration_unit(hours)
    value = hours * per_hour
    if unit == "min":
        return f"{value:,.0f} {unit}"
    if unit in ("h", "days", "years"):
        return f"{value:,.1f} {unit}"
    return f"{value:.2g} {unit}" if abs(value) < 100 else f"{value:,.0f} {unit}"
