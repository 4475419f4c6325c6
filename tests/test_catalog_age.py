"""How old a catalog's prices are (deepvm_core.catalog.age), and the one default catalog."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deepvm_core.bundled import bundled_catalog_names
from deepvm_core.catalog.age import age_months, describe_age, prices_period
from deepvm_core.catalog.store import DEFAULT_CATALOG, PAPER_CATALOG, load_catalog

TODAY = date(2026, 11, 24)


@pytest.mark.parametrize(("text", "first", "last", "label"), [
    ("2025-h1", date(2025, 1, 1), date(2025, 6, 30), "2025-H1"),
    ("2025-H2", date(2025, 7, 1), date(2025, 12, 31), "2025-H2"),
    ("2024-02", date(2024, 2, 1), date(2024, 2, 29), "2024-02"),  # a leap year's February
    ("2023-10-01", date(2023, 10, 1), date(2023, 10, 1), "2023-10-01"),
    ("2026-01-15T09:30:00+00:00", date(2026, 1, 15), date(2026, 1, 15), "2026-01-15"),
])
def test_periods(text: str, first: date, last: date, label: str) -> None:
    period = prices_period(text)
    assert period is not None
    assert (period.first, period.last, period.label) == (first, last, label)


@pytest.mark.parametrize("text", ["unknown", "", "2025-h3", "2023-13", "2023-02-30", "soon"])
def test_unreadable_dates(text: str) -> None:
    assert prices_period(text) is None
    assert age_months(text, TODAY) is None
    assert describe_age(text, TODAY).endswith("age unknown")


def test_ages_by_hand() -> None:
    # 2025-06-30 -> 2026-11-24: 184 + 328 = 512 days; 512 / 30.436875 = 16.82 -> 17 months.
    assert describe_age("2025-h1", TODAY) == "prices of 2025-H1, 17 months old"
    # 2023-10-01 -> 2026-11-24: 1150 days; 1150 / 30.436875 = 37.78 -> 38 months.
    assert describe_age("2023-10-01", TODAY) == "prices of 2023-10-01, 38 months old"
    # 2026-10-20 -> 2026-11-24: 35 days / 30.44 = 1.15 -> 1 month.
    assert describe_age("2026-10-20", TODAY) == "prices of 2026-10-20, 1 month old"
    assert describe_age("2026-11-20", TODAY) == "prices of 2026-11-20, less than a month old"
    assert age_months("2027-01-01", TODAY) == 0  # a future date is not a negative age


@given(st.dates(min_value=date(2000, 1, 1), max_value=date(2030, 12, 31)),
       st.integers(min_value=0, max_value=3000))
def test_age_grows_with_today(day: date, later: int) -> None:
    text = day.isoformat()
    first = age_months(text, day)
    after = age_months(text, day + timedelta(days=later))
    assert first == 0
    assert after is not None
    assert after >= first
    assert abs(after - later / (365.2425 / 12)) <= 0.5


def test_default_catalog_is_the_newest_us_east_1() -> None:
    bundled = bundled_catalog_names()
    assert DEFAULT_CATALOG in bundled
    assert PAPER_CATALOG in bundled
    us_east_1 = [load_catalog(n) for n in bundled if n.startswith("aws-us-east-1-")]
    newest = max(us_east_1, key=lambda c: prices_period(c.prices_date).last)  # type: ignore
    assert newest.name == DEFAULT_CATALOG
    assert load_catalog(PAPER_CATALOG).prices_date == "2023-10-01"
