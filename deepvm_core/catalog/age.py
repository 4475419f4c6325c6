"""How old a catalog's prices are: its ``prices_date`` read as a period, and its age on a day.

A catalog's ``prices_date`` is an ISO date or timestamp (``2023-10-01``,
``2026-01-15T09:30:00Z``; a fetch writes the latter), a month (``2023-10``) or a half year
(``2025-h1``, when the source records no exact date, as SkyPilot's snapshots). Each is read as
the period ``[first, last]`` of days the prices may be from; the age is counted from ``last``,
so it is the *least* the prices can be old:

    age_months = (today - last) / (365.2425 / 12) days, rounded to whole months

Pure: ``today`` is an argument (the dashboard and docs/dashboard.md pass the current date).
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date

#: Mean days per month of the Gregorian calendar (365.2425 / 12).
DAYS_PER_MONTH = 365.2425 / 12
_HALF = re.compile(r"^(\d{4})-[hH]([12])$")
_MONTH = re.compile(r"^(\d{4})-(\d{2})$")
_DAY = re.compile(r"^(\d{4})-(\d{2})-(\d{2})")


@dataclass(frozen=True)
class PricesPeriod:
    """The days a catalog's prices may be from.

    Attributes:
        first: the period's first day.
        last: its last day (``first`` for a date).
        label: how the period is written (``2025-H1``, ``2023-10``, ``2023-10-01``).
    """

    first: date
    last: date
    label: str


def prices_period(prices_date: str) -> PricesPeriod | None:
    """The period ``prices_date`` names (module docstring), or ``None`` when it is none of the
    forms (``unknown``, free text) or not a real day."""
    text = prices_date.strip()
    try:
        if m := _HALF.match(text):
            year, half = int(m[1]), int(m[2])
            return PricesPeriod(date(year, 1 if half == 1 else 7, 1),
                                date(year, 6, 30) if half == 1 else date(year, 12, 31),
                                f"{year}-H{half}")
        if m := _MONTH.match(text):
            year, month = int(m[1]), int(m[2])
            return PricesPeriod(date(year, month, 1),
                                date(year, month, calendar.monthrange(year, month)[1]), text)
        if m := _DAY.match(text):
            day = date(int(m[1]), int(m[2]), int(m[3]))
            return PricesPeriod(day, day, day.isoformat())
    except ValueError:  # month 13, day 31 of a 30-day month, ...
        return None
    return None


def age_months(prices_date: str, today: date) -> int | None:
    """Whole months from the period's last day to ``today`` (module docstring; 0 when the
    period is today's or in the future), or ``None`` for an unreadable ``prices_date``."""
    period = prices_period(prices_date)
    if period is None:
        return None
    return max(0, round((today - period.last).days / DAYS_PER_MONTH))


def describe_age(prices_date: str, today: date) -> str:
    """``prices of 2025-H1, 17 months old``: the period and its age in words (``less than a
    month old`` under half a month; ``prices of <text>, age unknown`` when unreadable)."""
    period = prices_period(prices_date)
    months = age_months(prices_date, today)
    if period is None or months is None:
        return f"prices of {prices_date.strip() or 'an unknown date'}, age unknown"
    if months == 0:
        age = "less than a month old"
    elif months == 1:
        age = "1 month old"
    else:
        age = f"{months} months old"
    return f"prices of {period.label}, {age}"


#: A card says its on-demand saving may be off once the catalog's prices are older than this
#: (days from the last day of their period).
STALE_AFTER_DAYS = 90
#: AWS cut the on-demand prices of its P4 and P5 instances by up to 45 % in June 2025
#: (announced 5 June 2025); a catalog whose period begins before this day may predate it.
P4_P5_CUT = date(2025, 6, 1)
#: The instance families of that cut (the part of a type's name before the dot).
P4_P5_FAMILIES = ("p4d", "p4de", "p5", "p5e", "p5en")


def is_stale(prices_date: str, today: date) -> bool:
    """True when the period ``prices_date`` names ended more than :data:`STALE_AFTER_DAYS`
    days before ``today`` (an unreadable date is not said to be stale: its age is unknown)."""
    period = prices_period(prices_date)
    return period is not None and (today - period.last).days > STALE_AFTER_DAYS


def stale_saving_note(prices_date: str, instance_type: str, today: date) -> str | None:
    """What a card says next to its "saves X % against on demand" when the catalog's prices are
    stale (:func:`is_stale`), or ``None``: for a P4 or P5 type whose prices may predate the June
    2025 cut, ``prices of 2025-H1, 17 months old: on-demand P4/P5 prices were cut up to 45 %
    in June 2025, so this saving may be overstated``; for any other type, ``prices of
    2023-10-01, 26 months old: spot and on-demand prices have changed since, so this saving may
    be off``. The one home of the sentence (the dashboard's cards show it)."""
    if not is_stale(prices_date, today):
        return None
    period = prices_period(prices_date)
    assert period is not None
    family = instance_type.split(".", 1)[0].lower()
    if family in P4_P5_FAMILIES and period.first < P4_P5_CUT:
        return (f"{describe_age(prices_date, today)}: on-demand P4/P5 prices were cut up to "
                "45 % in June 2025, so this saving may be overstated")
    return (f"{describe_age(prices_date, today)}: spot and on-demand prices have changed since, "
            "so this saving may be off")
