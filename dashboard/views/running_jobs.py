"""Running jobs: the plans ``deepvm watch`` controls, read from their ledgers in the user's folder
(never from AWS): per job its cost and progress against the plan's P10-P90, and the
counterfactuals (the same cluster on demand; every policy replayed on the availability the
controller observed). Figures: :mod:`deepvm_core.cloud.fleet.ledger_report`."""

from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dashboard import plain_view
from dashboard.plain_view import words
from deepvm_core.cloud.fleet.ledger_file import ledger_paths, read_ledger
from deepvm_core.cloud.fleet.ledger_report import LedgerSummary, summarize
from deepvm_core.errors import DeepVMError
from deepvm_core.text import duration, usd


def _range(lo: float | None, hi: float | None, unit: str) -> str:
    if lo is None or hi is None:
        return "not given by the plan"
    return f"{lo:.2f}-{hi:.2f} {unit}"


def cost_figure(s: LedgerSummary) -> go.Figure:
    """The cost so far beside the counterfactuals that finished, with the plan's P10-P90."""
    names = ["this job" + ("" if s.done else " (so far)")]
    costs = [s.cost_usd]
    for c in s.counterfactuals:
        if c.cost_usd is not None:
            names.append(c.name)
            costs.append(c.cost_usd)
    fig = go.Figure(go.Bar(x=names, y=costs, text=[f"{c:.2f}" for c in costs],
                           textposition="outside"))
    lo, hi = s.plan_cost_usd
    if lo is not None and hi is not None:
        fig.add_hrect(y0=lo, y1=hi, fillcolor="green", opacity=0.12, line_width=0,
                      annotation_text="plan P10-P90", annotation_position="top left")
    fig.update_layout(title=f"Cost, USD: plan {s.plan_id}", yaxis_title="USD",
                      height=340, margin={"t": 50, "b": 40})
    return fig


def job_card(s: LedgerSummary) -> None:
    """One job: state, progress, cost against the plan, counterfactuals."""
    state = (f"done in {duration(s.makespan_hours)}" if s.done and s.makespan_hours is not None
             else f"running for {duration(s.elapsed_hours)}")
    with st.container(border=True, key=f"job_{s.plan_id}"):
        st.markdown(words(f"#### Plan {s.plan_id}: {s.summary}"))
        st.caption(words(f"Policy {s.policy}"
                         + (f", deadline {s.deadline_hours:g} h" if s.deadline_hours else "")
                         + f"; {state}" + ("; fell back to on demand" if s.fell_back else "")))
        source = ("from the job's progress file" if s.progress_source == "file"
                  else "estimated from the time the workers ran (no progress file)")
        st.progress(s.progress, text=f"Progress {s.progress:.0%}: {s.work_done_hours:.2f} of "
                                     f"{s.job_hours:.2f} h of work, {source}")
        a, b, c, d = st.columns(4)
        a.metric("Cost so far", usd(s.cost_usd))
        b.metric("Spot hours", f"{s.spot_hours:.2f} h")
        c.metric("On-demand hours", f"{s.on_demand_hours:.2f} h")
        d.metric("Reclaims", str(s.reclaims))
        st.markdown(words(f"Plan's P10-P90: makespan {_range(*s.plan_makespan_hours, 'h')}, cost "
                          f"{_range(*s.plan_cost_usd, 'USD')}."))
        plain_view.chart(cost_figure(s), key=f"job_cost_{s.plan_id}")
        rows = [{"Counterfactual": x.name,
                 "Makespan (h)": _rounded(x.makespan_hours), "Cost (USD)": _rounded(x.cost_usd),
                 "Note": x.note} for x in s.counterfactuals]
        # a counterfactual that did not finish has no number: an empty cell, not "None"
        costs = pd.DataFrame(rows).astype({"Makespan (h)": float, "Cost (USD)": float})
        plain_view.dataframe(costs,
                             hide_index=True, key=f"job_cf_{s.plan_id}",
                             column_config={c: st.column_config.NumberColumn(format="%.2f")
                                            for c in ("Makespan (h)", "Cost (USD)")})
        st.caption("The policies replayed by the backtest on the availability the controller "
                   "observed; the same cluster on demand from the start.")


def _rounded(value: float | None) -> float:
    """A table cell's number to the cent (or hundredth of an hour); NaN (an empty cell) for
    none."""
    return math.nan if value is None else round(value, 2)


def main() -> None:
    st.title("Running jobs")
    st.caption(words("The jobs 'deepvm watch PLAN.json --yes' controls, from their ledgers in your "
                     "DeepVM folder. This page reads the ledgers only; it never calls AWS."))
    paths = ledger_paths()
    if not paths:
        st.info("No watched job yet. 'deepvm watch PLAN.json --region R --yes' keeps a ledger "
                "of every observation and action; 'deepvm ledger PLAN' prints it.")
        return
    summaries: list[LedgerSummary] = []
    for path in paths:
        try:
            summaries.append(summarize(read_ledger(path)))
        except DeepVMError as exc:
            st.warning(words(f"The ledger {path.name} cannot be read: "
                             f"{str(exc).removeprefix(str(path)).lstrip(':, ')}"))
    if summaries:
        plain_view.dataframe(pd.DataFrame([{
            "Plan": s.plan_id, "Policy": s.policy, "Progress": f"{s.progress:.0%}",
            "State": "done" if s.done else "running", "Cost (USD)": round(s.cost_usd, 2),
            "Plan cost P10-P90 (USD)": _range(*s.plan_cost_usd, "")} for s in summaries]),
            hide_index=True, key="jobs_table")
    for s in summaries:
        job_card(s)


main()
