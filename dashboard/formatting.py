"""Numbers and PW spans as short text for the pages (pure)."""

from __future__ import annotations

import math
from collections.abc import Sequence


def si(value: float, digits: int = 4) -> str:
    """A large number with an SI suffix: ``145.4 M``, ``8.045 M``, ``6,375``."""
    for factor, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M")):
        if abs(value) >= factor:
            return f"{value / factor:.{digits}g} {suffix}"
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.{digits}g}"


def format_intervals(spans: Sequence[tuple[float, float]], unit: str = "") -> str:
    """``0.8-1.3 and 9.5-10`` followed by `` unit`` if given (or ``never``)."""
    if not spans:
        return "never"
    parts = [f"{a:g}" if a == b else f"{a:g}–{b:g}" for a, b in spans]
    text = ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]
    return f"{text} {unit}" if unit else text


def usd(value: float) -> str:
    """A job's cost: ``18.08 USD``, ``1,234.50 USD``."""
    return f"{value:,.2f} USD"


def job_hours(hours: float) -> str:
    """A job's duration: ``25 min``, ``6.3 h``, ``3.2 days`` (``never`` when not finite)."""
    if not math.isfinite(hours):
        return "never"
    if hours < 1:
        return f"{hours * 60:.0f} min"
    return f"{hours:,.1f} h" if hours < 48 else f"{hours / 24:,.1f} days"
