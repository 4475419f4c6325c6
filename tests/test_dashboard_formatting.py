"""Issue 20 item 16: one format per quantity (dashboard/formatting.py), hand-written cases."""

from __future__ import annotations

import math

from dashboard import formatting


def test_money_has_two_decimals_in_sentences_and_cards() -> None:
    assert formatting.usd(0.1294) == "0.13 USD"
    assert formatting.usd(1234.567) == "1,234.57 USD"
    assert formatting.usd_per_hour(2.8526) == "2.85 USD/h"
    assert formatting.TABLE_USD_PER_HOUR == "%.4f"
    assert formatting.TABLE_USD == "%.2f"


def test_durations_minutes_hours_days() -> None:
    assert formatting.duration(0.2763) == "17 min"  # 0.2763 × 60 = 16.6
    assert formatting.duration(59.4 / 60) == "59 min"
    assert formatting.duration(1.0) == "1.0 h"
    assert formatting.duration(2.44) == "2.4 h"
    assert formatting.duration(48.0) == "48.0 h"  # days only past 48 h
    assert formatting.duration(49.0) == "2.0 days"  # 49 / 24 = 2.04
    assert formatting.duration(84.0) == "3.5 days"  # 84 / 24
    assert formatting.duration(math.inf) == "never"


def test_duration_ticks_drop_trailing_zeros() -> None:
    assert formatting.duration_tick(0.5) == "30 min"
    assert formatting.duration_tick(2.0) == "2 h"
    assert formatting.duration_tick(2.5) == "2.5 h"
    assert formatting.duration_tick(120.0) == "5 days"


def test_large_numbers_one_abbreviation_style() -> None:
    assert formatting.si(8_045_000) == "8.0 M"
    assert formatting.si(145_400_000) == "145.4 M"
    assert formatting.si(2.5e9) == "2.5 G"
    assert formatting.si(6375.2) == "6,375"
    assert formatting.si(0.995) == "0.995"


def test_duration_axis_unit_follows_the_largest_value() -> None:
    # under an hour: minutes (× 60); to 48 h: hours; past: days (÷ 24)
    assert formatting.duration_axis(0.6) == (60.0, "min")
    assert formatting.duration_axis(30.0) == (1.0, "h")
    assert formatting.duration_axis(100.0) == (1 / 24, "days")
