"""Issue 20 item 16: one format per quantity, hand-written cases: what only the dashboard
writes (dashboard/formatting.py); money and durations in words are the core's
(tests/test_text.py)."""

from __future__ import annotations

from dashboard import formatting


def test_table_formats() -> None:
    assert formatting.TABLE_USD_PER_HOUR == "%.4f"
    assert formatting.TABLE_USD == "%.2f"


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
