"""Numbers as text that only the dashboard writes (pure): table column formats, chart ticks
and axes, SI abbreviations.

Money and durations in sentences and cards have one format, the core's
(:mod:`deepvm_core.text`: ``text.usd``, ``text.usd_per_hour``, ``text.duration``); the axes and
ticks here follow its duration units (:func:`deepvm_core.text.duration_unit`).

* Tables show USD/hour with 4 decimals (:data:`TABLE_USD_PER_HOUR`) and job costs with 2
  (:data:`TABLE_USD`).
* Chart ticks of durations use the units of ``text.duration`` without a trailing ``.0``
  (:func:`duration_tick`).
* Large numbers: one decimal and an SI suffix, ``8.0 M``, ``145.4 M``; below a thousand
  thousand, thousands separators (:func:`si`).
"""

from __future__ import annotations

from collections.abc import Sequence

from deepvm_core.text import duration_unit

#: Number formats (printf style, as ``st.column_config.NumberColumn`` takes them) of table
#: columns: USD per hour, USD.
TABLE_USD_PER_HOUR = "%.4f"
TABLE_USD = "%.2f"
#: The multiplication sign of the pages: ``1 × c5.xlarge``, ``2.12 × one A10G``
#: (``Configuration.speed_text(TIMES)``; the CLI writes ``x``).
TIMES = "×"


def duration_axis(largest_hours: float) -> tuple[float, str]:
    """(factor from hours, unit) of a linear duration axis whose largest value is
    ``largest_hours``: the unit :func:`deepvm_core.text.duration` writes that value in."""
    return duration_unit(largest_hours)


def duration_tick(hours: float) -> str:
    """A chart tick of a duration axis: the units of :func:`deepvm_core.text.duration`, no
    trailing zeros (``30 min``, ``1 h``, ``2.5 h``, ``5 days``)."""
    per_hour, unit = duration_unit(hours)
    value = hours * per_hour
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

