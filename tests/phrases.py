"""One check for the tests that read a message: every phrase is in it, and a failure lists all
the phrases missing at once (not the first only)."""

from __future__ import annotations

import re


def assert_says(text: str, *phrases: str) -> None:
    """Every phrase of ``phrases`` occurs in ``text``."""
    missing = [p for p in phrases if p not in text]
    assert not missing, f"missing {missing!r} in:\n{text}"


#: The research terms presentation mode never shows (issue 27): a budget holder reads plain
#: words. Each is matched case-sensitively at word boundaries (``P90`` and ``DeepVM-NoScale``,
#: not ``GP90``).
RESEARCH_TERMS = ("Tiering", "Single Anchor", "DeepVM", "Cost-First", "Performance-First",
                  "eFLOPS", "FLOPP", "P10", "P90", "makespan", "Makespan", "Monte Carlo",
                  "MTBI", "% of PW", "TR:", "SA:", "K(n)")
_RESEARCH = re.compile("|".join(
    ("\\b" if term[0].isalnum() else "") + re.escape(term) + ("\\b" if term[-1].isalnum() else "")
    for term in RESEARCH_TERMS))


def research_terms(text: str) -> list[str]:
    """The research terms in ``text``, each with a little context (empty: plain words only)."""
    return [f"{m.group()} in ...{text[max(0, m.start() - 40):m.end() + 40]}...".replace("\n", " ")
            for m in _RESEARCH.finditer(text)]
