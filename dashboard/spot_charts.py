"""The Spot markets page's charts (plotly): the availability strip and the makespan CDF per
recovery policy."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from deepvm_core.job.backtest import RecoveryPolicy
from deepvm_core.job.backtest_runs import BacktestRuns
from deepvm_core.text import duration

#: One colour per recovery policy (Okabe-Ito), none the deadline line's: without their own,
#: the two later policies took plotly's defaults and slack-reserve's looked like deadline's.
POLICY_COLORS = {"wait": "#999999", "failover": "#0072B2", "deadline": "#009E73",
                 "uniform-progress": "#CC79A7", "slack-reserve": "#E69F00"}
DEADLINE_COLOR = "#D55E00"


def _titled(text: str, label: str | None) -> str:
    """The chart's title, under ``label`` (the synthetic market's) when given."""
    return text if not label else f"<b>{label}</b><br>{text}"


def availability_strip(x_hours: np.ndarray, names: Sequence[str],
                       z: np.ndarray, label: str | None = None) -> go.Figure:
    """One row per pool, the share of time it was up in each bin (0 red to 1 blue); zoom with
    the mouse (a drag selects a time span, a double click resets). ``label`` heads the title
    (the synthetic market says so on every chart)."""
    fig = go.Figure(go.Heatmap(
        x=x_hours / 24.0, y=list(names), z=z, zmin=0.0, zmax=1.0,
        colorscale=[[0.0, "#D55E00"], [0.5, "#F0E442"], [1.0, "#0072B2"]],
        colorbar={"title": "up", "tickformat": ".0%", "thickness": 12},
        hovertemplate="%{y}<br>day %{x:.2f}: up %{z:.0%} of the time<extra></extra>"))
    fig.update_layout(title={"text": _titled("Availability over time (one row per pool)", label),
                             "x": 0, "font": {"size": 15}},
                      height=120 + 40 * len(names) + (20 if label else 0),
                      margin={"l": 10, "r": 10, "t": 70 if label else 50, "b": 10},
                      xaxis_title="days since the trace's start", yaxis={"autorange": "reversed"})
    return fig


def makespan_cdf(runs: Mapping[RecoveryPolicy, BacktestRuns], deadline_hours: float,
                 label: str | None = None) -> go.Figure:
    """Per policy, the share of start times whose run was done within a time; the deadline as
    a dashed line; ``label`` heads the title."""
    fig = go.Figure()
    for policy, r in runs.items():
        hours = np.sort(r.makespan_hours[0])
        share = np.arange(1, hours.size + 1) / hours.size
        fig.add_trace(go.Scatter(
            x=hours, y=share, mode="lines", name=policy,
            line={"color": POLICY_COLORS.get(policy), "width": 2, "shape": "hv"},
            hovertemplate=f"{policy}: %{{y:.0%}} of starts done within %{{x:.2f}} h"
                          "<extra></extra>"))
    fig.add_vline(x=deadline_hours, line={"color": DEADLINE_COLOR, "dash": "dash"},
                  annotation_text=f"deadline {duration(deadline_hours)}")
    fig.update_yaxes(tickformat=".0%", range=[0, 1.02])
    fig.update_layout(title={"text": _titled("Backtest: share of start times done within a time",
                                             label), "x": 0, "font": {"size": 15}},
                      height=340 + (20 if label else 0),
                      margin={"l": 10, "r": 10, "t": 90 if label else 70, "b": 10},
                      legend={"orientation": "h", "yanchor": "bottom", "y": 1.0, "x": 0},
                      xaxis_title="makespan (hours)", yaxis_title="start times done")
    return fig
