"""Numbers as text, one format per quantity (deepvm_core/text.py; issue 20 item 16, issue 23:
one home for the CLI, the JSON sentences and the dashboard). Hand-written cases."""

from __future__ import annotations

import math

from deepvm_core.text import (
    duration,
    duration_unit,
    usd,
    usd_per_hour,
    usd_per_hour_change,
)


def test_money_has_two_decimals_in_sentences_and_cards() -> None:
    assert usd(0.1294) == "0.13 USD"
    assert usd(1234.567) == "1,234.57 USD"
    assert usd_per_hour(2.8526) == "2.85 USD/h"


def test_hourly_price_changes_are_signed_and_never_read_zero() -> None:
    assert usd_per_hour_change(0.04) == "+0.04 USD/h"
    assert usd_per_hour_change(-1.2) == "-1.20 USD/h"
    assert usd_per_hour_change(0.001) == "+<0.01 USD/h"
    assert usd_per_hour_change(-0.004) == "-<0.01 USD/h"
    assert usd_per_hour_change(0.0) == "+0.00 USD/h"


def test_durations_minutes_hours_days() -> None:
    assert duration(0.2763) == "17 min"  # 0.2763 × 60 = 16.6
    assert duration(59.4 / 60) == "59 min"
    assert duration(0.0) == "0 min"
    assert duration(1.0) == "1.0 h"
    assert duration(2.44) == "2.4 h"
    assert duration(48.0) == "48.0 h"  # days only past 48 h
    assert duration(49.0) == "2.0 days"  # 49 / 24 = 2.04
    assert duration(84.0) == "3.5 days"  # 84 / 24
    assert duration(math.inf) == "never"
    assert duration(math.nan) == "never"


def test_durations_under_a_minute_and_over_a_year() -> None:
    # The extremes of a cluster that does not finish (job/finish.py): two significant figures
    # under a minute, years with one decimal from 365.25 days (8,766 h) on.
    assert duration(16 / 3600) == "16 s"
    assert duration(1.5 / 3600) == "1.5 s"
    assert duration(0.5 / 3600) == "500 ms"  # 0.5 s
    assert duration(1e-9) == "3.6 µs"  # 1e-9 h × 3600 s/h = 3.6e-6 s
    assert duration(2.5e-10) == "0.9 µs"  # 9e-7 s: below a µs, still in µs
    assert duration(8766.0) == "1.0 years"
    assert duration(1e6) == "114.1 years"  # 1e6 / 8766 = 114.08
    assert duration(8765.0) == "365.2 days"  # 8765 / 24 = 365.21


def test_duration_unit_is_the_count_of_the_unit_in_an_hour() -> None:
    assert duration_unit(0.6) == (60.0, "min")
    assert duration_unit(30.0) == (1.0, "h")
    assert duration_unit(100.0) == (1 / 24, "days")
    assert duration_unit(1e-3) == (3600.0, "s")  # 3.6 s
