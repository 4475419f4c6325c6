"""One check for the tests that read a message: every phrase is in it, and a failure lists all
the phrases missing at once (not the first only)."""

from __future__ import annotations


def assert_says(text: str, *phrases: str) -> None:
    """Every phrase of ``phrases`` occurs in ``text``."""
    missing = [p for p in phrases if p not in text]
    assert not missing, f"missing {missing!r} in:\n{text}"
