"""The budget holder's lines (issue 18), drawn on Plan a job's card and in Recommend's job
panel: the job's cost and time, the same cluster on demand and the saving, when it is done
in the browser's time zone, how sure, the 1.5x warning, and where Plan's answer differs from
Recommend's, why. The words are :mod:`dashboard.answer`'s."""

from __future__ import annotations

from datetime import UTC, datetime

import streamlit as st

from dashboard import answer, catalog_state, price_notes
from dashboard.plain_view import words
from deepvm_core.pipeline.plan import PlanEstimate


def browser_zone() -> answer.BrowserZone:
    """The browser's time zone (``st.context``); unknown outside a browser."""
    try:
        name = st.context.timezone
        offset = st.context.timezone_offset  # JavaScript's getTimezoneOffset: UTC - local
    except Exception:  # noqa: BLE001 - no browser context (bare mode, AppTest): st.context
        # raises there, and which error depends on the Streamlit version; the zone is unknown
        return answer.BrowserZone(None, None)
    return answer.BrowserZone(name or None, None if offset is None else -int(offset))


def budget_lines(estimate: PlanEstimate, *, with_job_line: bool = False, epochs: float = 0.0,
                 whose: str = "Your job") -> None:
    """The budget holder's lines of ``estimate`` (markdown, then the 1.5x warning)."""
    lines = [answer.job_line(estimate, epochs, whose)] if with_job_line else []
    for line in (answer.on_demand_line(estimate),
                 answer.done_by(estimate.expected_makespan_hours, datetime.now(UTC),
                                browser_zone()) if answer.finishes(estimate) else None,
                 answer.confidence_line(estimate)):
        if line:
            lines.append(line)
    st.markdown(words("\n\n".join(words(line) for line in lines)))
    price_notes.stale_saving(catalog_state.active_catalog().catalog, estimate.configuration)
    slow = answer.slow_line(estimate)
    if slow:
        st.warning(words(slow), icon=":material/hourglass_bottom:")


def comparison_sentence(sentence: str | None, same: bool) -> None:
    """Plan's answer against Recommend's pick, in one sentence (``None``: nothing to say)."""
    if sentence is None:
        return
    icon = ":material/check_circle:" if same else ":material/compare_arrows:"
    with st.container(key="answer_comparison"):
        st.markdown(words(f"{icon} {words(sentence)}"))
