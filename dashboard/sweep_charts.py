"""The Simulate page's sweep charts (the paper's Fig. 3) as small multiples (pure).

Step lines of five policies on one plot hide each other (DeepVM-NoScale and Cost-First often
run exactly under DeepVM), so each policy gets its own panel with DeepVM (paper's Z) drawn
thin and grey behind it for reference; the panels share both axes. Where a vCPU quota binds
the policy's choice (:mod:`dashboard.sweep_quotas`), small red crosses lie under its line.
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dashboard.charts import POLICY_COLORS, _layout
from deepvm_core.recommend.policies import POLICY_LABELS, SWEEP_POLICIES

#: Panels per row, and the height of a row of panels (px).
PANEL_COLUMNS = 2
ROW_HEIGHT = 190
REFERENCE = "deepvm"
REFERENCE_NAME = "DeepVM (paper's Z), for reference"
REFERENCE_LINE = {"color": "#BBBBBB", "width": 4}
QUOTA_NAME = "a vCPU quota binds"
#: Small and light, drawn under the policy's line: a run of bound PWs reads as a red trace
#: along the line instead of a band of crosses that hides it (issue 27).
QUOTA_MARKER = {"symbol": "x-thin", "size": 6, "opacity": 0.55,
                "line": {"width": 1.5, "color": "#B00020"}}


def _panels(frame: pd.DataFrame, column: str, title: str, axis_title: str, value_format: str,
            pw: float | None, binds: pd.Series | None, *, price_line: bool = False) -> go.Figure:
    policies = [p for p in SWEEP_POLICIES if p in set(frame["policy"])]
    cols = min(PANEL_COLUMNS, len(policies)) or 1
    rows = max(1, -(-len(policies) // cols))
    fig = make_subplots(rows=rows, cols=cols, shared_xaxes="all", shared_yaxes="all",
                        subplot_titles=[POLICY_LABELS[p] for p in policies],
                        horizontal_spacing=0.06, vertical_spacing=0.5 / (rows * 2 + 1))
    reference = frame[frame["policy"] == REFERENCE]
    pws = frame["pw_usd_per_hour"]
    shown: set[str] = set()

    def legend(name: str) -> dict[str, object]:
        first = name not in shown
        shown.add(name)
        return {"name": name, "legendgroup": name, "showlegend": first}

    for i, policy in enumerate(policies):
        at = {"row": i // cols + 1, "col": i % cols + 1}
        part = frame[frame["policy"] == policy]
        if price_line and len(pws):
            fig.add_trace(go.Scatter(x=[pws.min(), pws.max()], y=[pws.min(), pws.max()],
                                     mode="lines", hoverinfo="skip", **legend("price = PW"),
                                     line={"dash": "dot", "color": "#999", "width": 1}), **at)
        if policy != REFERENCE and len(reference):
            fig.add_trace(go.Scatter(x=reference["pw_usd_per_hour"], y=reference[column],
                                     mode="lines", line_shape="hv", line=REFERENCE_LINE,
                                     hoverinfo="skip", **legend(REFERENCE_NAME)), **at)
        label = POLICY_LABELS[policy]
        if binds is not None:  # under the line: drawn first
            bound = part[binds.loc[part.index] != ""]
            if len(bound):
                fig.add_trace(go.Scatter(
                    x=bound["pw_usd_per_hour"], y=bound[column], mode="markers",
                    marker=QUOTA_MARKER, **legend(QUOTA_NAME),
                    customdata=binds.loc[bound.index],
                    hovertemplate=(label + "<br>PW %{x:.2f} USD/h: the quota on %{customdata} "
                                   "binds<extra></extra>")), **at)
        fig.add_trace(go.Scatter(
            x=part["pw_usd_per_hour"], y=part[column], mode="lines", line_shape="hv",
            name=label, showlegend=False,
            line={"color": POLICY_COLORS[policy], "width": 2.5},
            customdata=part["configuration"],
            hovertemplate=(label + "<br>PW %{x:.2f} USD/h<br>" + axis_title + " %{y:"
                           + value_format + "}<br>%{customdata}<extra></extra>")), **at)
    if pw is not None and len(pws) and pws.min() <= pw <= pws.max():
        fig.add_vline(x=pw, line_dash="dash", line_color="#444", line_width=1, row="all",
                      col="all")
    fig.update_xaxes(title_text="PW (USD/hour)", row=rows)
    fig.update_yaxes(title_text=axis_title, col=1)
    if pw is not None:
        title += f" · dashed: PW {pw:g} (sidebar)"
    return _layout(fig, title, height=110 + ROW_HEIGHT * rows)


def sweep_chart(frame: pd.DataFrame, *, normalised: bool, pw: float | None = None,
                binds: pd.Series | None = None) -> go.Figure:
    """Performance of every policy against PW as step lines (the paper's Fig. 3), one panel per
    policy; ``pw`` is marked by a dashed line, ``binds`` (per row: the binding quota or "")
    by crosses."""
    column = "normalised_performance" if normalised else "performance"
    label = "Performance / DeepVM's at the largest PW" if normalised else "Performance"
    short = "relative perf." if normalised else "performance"
    return _panels(frame, column, f"{label} vs PW", short, ",.3f", pw, binds)


def sweep_price_chart(frame: pd.DataFrame, pw: float | None = None,
                      binds: pd.Series | None = None) -> go.Figure:
    """Hourly price of every policy's choice against PW, one panel per policy, with the budget
    line price = PW."""
    return _panels(frame, "hourly_price_usd", "Hourly price of the chosen cluster vs PW",
                   "USD/hour", ".2f", pw, binds, price_line=True)
