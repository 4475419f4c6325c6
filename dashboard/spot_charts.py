"""The Spot markets page's charts (plotly): the availability strip and the makespan CDF per
recovery policy."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from deepvm_core.job.backtest import RecoveryPolicy
from deepvm_core.job.backtest_runs import BacktestRuns

POLICY_COLORS = {"wait": "#999999", "failover": "#0072B2", "deadline": "#009E73"}
DEADLINE_COLOR = "#D55E00"


def availability_strip(x_hours: np.ndarray, names: Sequence[str],
                       z: np.ndarray) -> go.Figure:
    """One row per pool, the share of time it was up in each bin (0 red to 1 blue); zoom with
    the mouse (a drag selects a time span, a double click resets)."""
    fig = go.Figure(go.Heatmap(
        x=x_hours / 24.0, y=list(names), z=z, zmin=0.0, zmax=1.0,
        colorscale=[[0.0, "#D55E00"], [0.5, "#F0E442"], [1.0, "#0072B2"]],
        colorbar={"title": "up", "tickformat": ".0%", "thickness": 12},
        hovertemplate="%{y}<br>day %{x:.2f}: up %{z:.0%} of the time<extra></extra>"))
    fig.update_layout(title={"text": "Availability over time (one row per pool)", "x": 0,
                             "font": {"size": 15}},
                      height=120 + 40 * len(names), margin={"l": 10, "r": 10, "t": 50, "b": 10},
                      xaxis_title="days since the trace's start", yaxis={"autorange": "reversed"})
    return fig


def makespan_cdf(runs: Mapping[RecoveryPolicy, BacktestRuns], deadline_hours: float) -> go.Figure:
    """Per policy, the share of start times whose run was done within a time; the deadline as
    a dashed line."""
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
                  annotation_text=f"deadline {deadline_hours:,.1f} h")
    fig.update_yaxes(tickformat=".0%", range=[0, 1.02])
    fig.update_layout(title={"text": "Backtest: share of start times done within a time",
                             "x": 0, "font": {"size": 15}},
                      height=340, margin={"l": 10, "r": 10, "t": 70, "b": 10},
                      legend={"orientation": "h", "yanchor": "bottom", "y": 1.0, "x": 0},
                      xaxis_title="makespan (hours)", yaxis_title="start times done")
    return fig
