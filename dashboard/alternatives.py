"""Under the Recommend card: why this configuration (in words) and the alternatives it beats."""

from __future__ import annotations

import streamlit as st

from dashboard.glossary import GLOSSARY
from dashboard.plain_view import words
from deepvm_core.catalog import Catalog
from deepvm_core.model import Configuration
from deepvm_core.recommend.narrative import (
    compared_value,
    percent_more,
    short,
    uses_job_speed,
    why,
)
from deepvm_core.recommend.policies import POLICY_LABELS
from deepvm_core.recommend.recommendation import Recommendation
from deepvm_core.text import usd_per_hour, usd_per_hour_change

#: The alternatives of the strip; NoScale is a research detail, hidden in presentation mode.
ALTERNATIVES = ("cost_first", "performance_first", "deepvm_noscale")


def alternative_metric(column: st.delta_generator.DeltaGenerator, name: str,
                       chosen: Configuration, other: Configuration | None,
                       presentation: bool, job_speed: bool = True) -> None:
    """``vs Cost-First``: the choice's speed (the job's epochs per hour; the paper's throughput
    unless ``job_speed``) over the alternative's (value) and its hourly price minus the
    alternative's (delta, green when the choice is cheaper)."""
    label = POLICY_LABELS[name]
    help_text = None if presentation else GLOSSARY[label]
    if other is None:
        column.metric(words(f"vs {label}"), "none feasible", help=help_text)
        return
    if other == chosen:
        column.metric(words(f"vs {label}"), "same cluster", help=help_text)
        return
    diff = percent_more(compared_value(chosen, job_speed), compared_value(other, job_speed))
    value = "n/a" if diff is None else f"{diff:+.1f} %"
    column.metric(words(f"vs {label}"), value, help=help_text,
                  delta=usd_per_hour_change(chosen.hourly_price_usd - other.hourly_price_usd),
                  delta_color="inverse")
    column.caption(words(short(other)))


def render_why(rec: Recommendation, chosen: Configuration, catalog: Catalog,
               presentation: bool) -> None:
    """The sentences of :func:`deepvm_core.recommend.narrative.why` and the "vs the alternatives"
    strip."""
    sentences = why(rec, chosen, catalog)
    with st.container(key="rec_why"):
        if sentences:
            st.markdown(words("**Why:** " + " ".join(sentences)))
        names = ALTERNATIVES[:2] if presentation else ALTERNATIVES
        job_speed = uses_job_speed(rec.scenario.objective, chosen,
                                   *(rec.policy(n) for n in names))
        measure = "the job's speed" if job_speed else "throughput"
        st.caption(words(f"This choice vs the alternatives within the same PW: {measure} "
                         "difference, and below it the hourly price difference (green: this "
                         "choice is cheaper)."))
        columns = st.columns(len(names) + 1)
        per_hour = job_speed and chosen.speed_epochs_per_hour is not None
        value = (f"{chosen.speed_epochs_per_hour:,.2f}" if per_hour
                 else f"{chosen.performance:,.0f}")
        # the unit in the label: a value with its unit was cut in a quarter column (issue 27)
        columns[0].metric("This choice (epochs/h)" if per_hour else "This choice", value,
                          help=None if presentation else GLOSSARY[
                              "Training speed" if job_speed else "Performance"],
                          delta=usd_per_hour(chosen.hourly_price_usd), delta_color="off",
                          delta_arrow="off")
        columns[0].caption(words(short(chosen)))
        for column, name in zip(columns[1:], names, strict=True):
            alternative_metric(column, name, chosen, rec.policy(name), presentation, job_speed)
