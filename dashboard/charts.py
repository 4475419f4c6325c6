"""Plotly figure builders: pure functions of the frames in :mod:`result_frames`."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dashboard import chart_axes, formatting
from dashboard.columns import Col
from deepvm_core.recommend.policies import POLICY_LABELS
from deepvm_core.text import duration, usd

#: One colour per policy (Okabe-Ito, readable for colour-blind users), the same on every chart.
POLICY_COLORS = {
    "deepvm": "#0072B2",
    "deepvm_noscale": "#56B4E9",
    "cost_first": "#E69F00",
    "performance_first": "#D55E00",
    "deepvm_performance": "#009E73",
    "deepvm_speed": "#CC79A7",
}
_POLICY_BY_LABEL = {label: key for key, label in POLICY_LABELS.items()}
SPOT_COLOR, ON_DEMAND_COLOR = "#0072B2", "#E69F00"
GPU_PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442",
               "#000000", "#999999", "#882255", "#44AA99", "#117733")
#: Line styles cycled beside the hues (5 against 12: every one of 60 types differs in one),
#: so that two close hues (the blues, the greens) still read apart on one plot.
GPU_DASHES = ("solid", "dash", "dot", "dashdot", "longdash")


def _layout(fig: go.Figure, title: str, *, height: int = 340, legend_below: bool = False,
            **axes: str) -> go.Figure:
    """Title at the top left, legend under the plot (below the x-axis title: the legend sits at
    the bottom of the figure, and plotly.js widens the bottom margin to fit it), axis titles.
    ``legend_below`` is kept for the callers; every legend goes below."""
    del legend_below
    fig.update_layout(
        title={"text": title, "x": 0, "xanchor": "left", "font": {"size": 15}},
        height=height,
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        legend={"orientation": "h", "yref": "container", "yanchor": "bottom", "y": 0,
                "x": 0, "title": None},
        hoverlabel={"align": "left"},
    )
    for axis in ("x", "y"):
        if axis in axes:
            fig.update_layout({f"{axis}axis_title": axes[axis]})
    return fig


#: The performance axis, with its unit (relative: eFLOPS are a benchmark's relative units).
PERFORMANCE_AXIS = "Performance (eFLOPS × n × K(n), relative units)"


def policy_bars(frame: pd.DataFrame, column: str, title: str, *,
                pw: float | None = None, fmt: str = ",.0f",
                axis: str | None = None) -> go.Figure:
    """Horizontal bars of ``column`` per policy (``result_frames.policy_frame``); ``pw`` draws the
    budget line; ``axis``: the value axis's title with its unit (default: the column's
    name)."""
    data = frame.dropna(subset=[column]).iloc[::-1]
    colors = [POLICY_COLORS.get(_POLICY_BY_LABEL.get(p, ""), "#777") for p in data[Col.POLICY]]
    fig = go.Figure(go.Bar(
        x=data[column], y=data[Col.POLICY], orientation="h", marker_color=colors,
        text=[f"{v:{fmt}}" for v in data[column]], textposition="auto",
        customdata=data[Col.CONFIG],
        hovertemplate="%{y}<br>%{customdata}<br>" + column + ": %{x:" + fmt + "}<extra></extra>",
    ))
    if pw is not None:
        fig.add_vline(x=pw, line_dash="dash", line_color="#444",
                      annotation_text=f"PW {pw:g}", annotation_position="top")
    _layout(fig, title, height=60 + 48 * max(len(data), 1), x=axis or column)
    fig.update_yaxes(automargin=True)
    return fig


#: Part of the axis the spread of the prices takes at least on the price dot plot (the rest is
#: padding on both sides).
PRICE_SPREAD_SHARE = 0.7


def price_dots(frame: pd.DataFrame, pw: float | None = None) -> go.Figure:
    """Hourly price per policy (``result_frames.policy_frame``) as a dot plot zoomed to the
    prices' range, so that 2.82 and 2.89 USD/h stand apart; each dot is labelled with its price
    and its difference to the cheapest. ``pw`` is drawn when it falls in the zoomed range and
    named in the title otherwise."""
    data = frame.dropna(subset=[Col.PRICE]).iloc[::-1]
    prices = data[Col.PRICE]
    colors = [POLICY_COLORS.get(_POLICY_BY_LABEL.get(p, ""), "#777") for p in data[Col.POLICY]]
    low, high = (float(prices.min()), float(prices.max())) if len(prices) else (0.0, 1.0)
    pad = max((high - low) * (1 - PRICE_SPREAD_SHARE) / (2 * PRICE_SPREAD_SHARE),
              0.005 * max(high, 0.01))
    span = (low - pad, high + pad)
    text = [f"{p:.4f}" + (f" (+{p - low:.4f})" if p > low else " (cheapest)") for p in prices]
    fig = go.Figure(go.Scatter(
        x=prices, y=data[Col.POLICY], mode="markers+text", text=text,
        textposition="top center", marker={"size": 13, "color": colors},
        customdata=data[Col.CONFIG], cliponaxis=False,
        hovertemplate="%{y}<br>%{customdata}<br>%{x:.4f} USD/h<extra></extra>"))
    axis = "USD/hour"
    if pw is not None and span[0] <= pw <= span[1]:
        fig.add_vline(x=pw, line_dash="dash", line_color="#444",
                      annotation_text=f"PW {pw:g}", annotation_position="top")
    elif pw is not None:
        axis += f" (PW {pw:g} is {'above' if pw > span[1] else 'below'} this range)"
    fig.update_xaxes(range=list(span), tickformat=".3f", nticks=6)
    _layout(fig, "Hourly price (USD/h), zoomed in", height=80 + 56 * max(len(data), 1),
            x=axis)
    fig.update_yaxes(automargin=True)
    return fig


def flopp_bars(frame: pd.DataFrame) -> go.Figure:
    """Stage 2: spot and on-demand FLOPP per GPU type, best spot FLOPP first."""
    fig = go.Figure([
        go.Bar(name="Spot (SPFP)", x=frame[Col.GPU], y=frame[Col.SPOT_FLOPP],
               marker_color=SPOT_COLOR),
        go.Bar(name="On-demand (ODFP)", x=frame[Col.GPU], y=frame[Col.OD_FLOPP],
               marker_color=ON_DEMAND_COLOR),
    ])
    fig.update_layout(barmode="group")
    ticks, labels = chart_axes.si_ticks(float(frame[[Col.SPOT_FLOPP, Col.OD_FLOPP]].max().max())
                                        if len(frame) else 0.0)
    fig.update_yaxes(tickmode="array", tickvals=ticks, ticktext=labels)
    return _layout(fig, "FLOPP: eFLOP per USD", x="GPU type", y="eFLOP per USD")


def scaling_chart(curves: pd.DataFrame, inflections: pd.DataFrame, column: str,
                  title: str, *, ideal: bool = False) -> go.Figure:
    """``column`` (K(n) or n·K(n)) against n per GPU type; a diamond marks n = b."""
    fig = go.Figure()
    if ideal and not curves.empty:
        n_max = int(curves[Col.NODES].max())
        fig.add_trace(go.Scatter(x=[1, n_max], y=[1, n_max], mode="lines", name="ideal (K = 1)",
                                 line={"dash": "dot", "color": "#999"}, hoverinfo="skip"))
    for i, (gpu, part) in enumerate(curves.groupby(Col.GPU, sort=False)):
        color = GPU_PALETTE[i % len(GPU_PALETTE)]
        fig.add_trace(go.Scatter(
            x=part[Col.NODES], y=part[column], mode="lines", name=str(gpu), legendgroup=str(gpu),
            line={"color": color, "dash": GPU_DASHES[i % len(GPU_DASHES)]},
            hovertemplate=f"{gpu}<br>n %{{x}}<br>{column} %{{y:.3f}}<extra></extra>"))
        b = inflections.loc[inflections[Col.GPU] == gpu, Col.INFLECTION]
        if len(b) and pd.notna(b.iloc[0]) and b.iloc[0] <= part[Col.NODES].max():
            b_value = float(b.iloc[0])
            fig.add_trace(go.Scatter(
                x=[b_value], y=[1.0 if column == Col.K else b_value], mode="markers",
                marker={"symbol": "diamond", "size": 10, "color": color,
                        "line": {"color": "white", "width": 1}},
                name=f"b of {gpu}", legendgroup=str(gpu), showlegend=False,
                hovertemplate=f"{gpu}: inflection b = {b_value:.2f}<extra></extra>"))
    return _layout(fig, title, height=420, legend_below=True, x="n (GPU VMs)", y=column)


def price_change_bars(diff: pd.DataFrame) -> go.Figure:
    """Spot and on-demand price change (%) per instance type present in both catalogs
    (``result_frames.diff_frame``)."""
    data = diff.dropna(subset=[Col.SPOT_CHANGE, Col.OD_CHANGE], how="all")
    fig = go.Figure()
    for column, name, color in ((Col.SPOT_CHANGE, "Spot", SPOT_COLOR),
                                (Col.OD_CHANGE, "On-demand", ON_DEMAND_COLOR)):
        old, new = ((Col.SPOT_OLD, Col.SPOT_NEW) if column == Col.SPOT_CHANGE
                    else (Col.OD_OLD, Col.OD_NEW))
        fig.add_trace(go.Bar(
            name=name, x=data[Col.TYPE], y=data[column], marker_color=color,
            customdata=data[[old, new]].to_numpy(),
            hovertemplate=("%{x} " + name.lower() + "<br>%{customdata[0]:.4f} → "
                           "%{customdata[1]:.4f} USD/h<br>%{y:+.1f} %<extra></extra>")))
    fig.add_hline(y=0, line_color="#444", line_width=1)
    fig.update_layout(barmode="group")
    return _layout(fig, "Price change vs the catalog compared with (%)", height=360,
                   x="Instance type", y="change (%)")


#: Colours of the region chart: the best region, the other feasible ones.
BEST_REGION_COLOR, REGION_COLOR = "#009E73", "#0072B2"


#: The bar of :func:`region_bars` when the regions are ranked by the sidebar's objective, not by
#: the job's time: (column, axis title, hover format) by objective.
_REGION_OBJECTIVE_AXES = {
    "paper": (Col.OBJECTIVE, "Paper's Z (eFLOP per USD)", "%{x:,.3s}"),
    "performance": (Col.PERF, PERFORMANCE_AXIS, "%{x:,.0f}"),
}


def region_bars(frame: pd.DataFrame, objective: str = "speed") -> go.Figure:
    """The ranking quantity of each region's best cluster (``result_frames.region_frame``),
    best on top and longest: under ``speed`` with job estimates, the job's epochs per expected
    hour (the shorter its expected time, the longer the bar), its expected time and cost as the
    bar's text; otherwise the objective's value (Z or performance), the hourly price as the
    text. A region with nothing feasible keeps an empty row labelled with that."""
    data = frame.iloc[::-1]
    feasible = data[Col.CONFIG] != "nothing feasible"
    by_job = objective == "speed" and bool(data.loc[feasible, Col.JOB_RATE].notna().all())
    best = data[Col.RANK] == 1
    colors = [BEST_REGION_COLOR if b else REGION_COLOR for b in best]
    if by_job:
        column, axis, fmt = Col.JOB_RATE, "Job speed (epochs per hour, interruptions included)", (
            "%{x:,.3g} epochs/h")
        text = [(f"{duration(h)} · {usd(c)}" if h != float("inf") else "not expected to finish")
                if ok else "nothing feasible"
                for h, c, ok in zip(data[Col.JOB_HOURS], data[Col.JOB_COST], feasible,
                                    strict=True)]
        title = "Best cluster per region: the job's speed (bar), expected time and cost (text)"
    else:
        column, axis, fmt = _REGION_OBJECTIVE_AXES.get(objective, _REGION_OBJECTIVE_AXES[
            "performance"])
        text = [f"{p:.4f} USD/h" if ok else "nothing feasible"
                for p, ok in zip(data[Col.PRICE], feasible, strict=True)]
        title = f"Best configuration per region: {axis.split(' (')[0]} (bar), hourly price (text)"
    detail = [(f"{cfg}<br>{p:.4f} USD/h ({share:.0f} % of PW)" if ok else f"nothing feasible: "
               f"{note}") for cfg, p, share, note, ok in zip(
                   data[Col.CONFIG], data[Col.PRICE], data[Col.PW_SHARE], data[Col.NOTE],
                   feasible, strict=True)]
    fig = go.Figure(go.Bar(
        x=data[column].fillna(0.0), y=data[Col.REGION], orientation="h", marker_color=colors,
        text=text, textposition=["auto" if ok else "outside" for ok in feasible],
        customdata=detail, cliponaxis=False,
        hovertemplate=f"%{{y}}<br>%{{customdata}}<br>{fmt}<extra></extra>"))
    _layout(fig, title, height=90 + 52 * max(len(data), 1), x=axis)
    fig.update_yaxes(automargin=True)
    return fig


# ----------------------------------------------------------------------------- job planner

#: Most background points the frontier chart sends to the browser (the frontier and the
#: marked configurations are always drawn).
MAX_CLOUD_POINTS = 4000
JOB_MARK_COLORS = {"best": "#000000", **POLICY_COLORS}


def frontier_chart(points: pd.DataFrame, frontier: list[int], marks: dict[int, str],
                   total: int) -> go.Figure:
    """Expected makespan vs expected cost of every candidate (a sample past
    :data:`MAX_CLOUD_POINTS`), the Pareto frontier as a line, the marked ones as symbols.

    ``points`` (``job_frames.frontier_frame``: cost, hours, label) is indexed by candidate;
    ``marks`` maps a candidate to its mark (``best`` or a policy name, whose label is in
    ``POLICY_LABELS``)."""
    cost, hours = points["cost"], points["hours"]
    labels = (points["label"] + "<br>" + hours.map(duration) + " · "
              + cost.map(usd))
    fig = go.Figure()
    fig.add_trace(go.Scattergl(
        x=hours, y=cost, mode="markers", name=f"feasible clusters ({len(hours):,} of {total:,})",
        marker={"size": 5, "color": "#9aa5b1", "opacity": 0.45},
        customdata=labels, hovertemplate="%{customdata}<extra></extra>"))
    fig.add_trace(go.Scatter(
        x=hours.loc[frontier], y=cost.loc[frontier], mode="lines+markers",
        name="Pareto frontier", line={"color": "#009E73", "width": 2, "shape": "hv"},
        marker={"size": 7}, customdata=labels.loc[frontier],
        hovertemplate="%{customdata}<extra>frontier</extra>"))
    # the chosen one last, so that it is drawn on top of a policy that picks the same cluster
    for index, mark in sorted(marks.items(), key=lambda item: item[1] == "best"):
        name = "Chosen (best for the goal)" if mark == "best" else POLICY_LABELS.get(mark, mark)
        fig.add_trace(go.Scatter(
            x=[hours.loc[index]], y=[cost.loc[index]], mode="markers", name=name,
            marker={"size": 14 if mark == "best" else 11, "symbol": "star" if mark == "best"
                    else "diamond", "color": JOB_MARK_COLORS.get(mark, "#777"),
                    "line": {"width": 1, "color": "white"}},
            customdata=[labels.loc[index]],
            hovertemplate="%{customdata}<extra>" + name + "</extra>"))
    log_duration_axis(fig, "x", hours)
    log_number_axis(fig, "y", cost)
    return _layout(fig, "Expected makespan vs expected cost of every feasible cluster",
                   height=460, legend_below=True, x="expected makespan (log)",
                   y="expected job cost (USD, log)")


def _positive_span(values: pd.Series) -> tuple[float, float]:
    finite = values[(values > 0) & values.lt(float("inf"))]
    return (float(finite.min()), float(finite.max())) if len(finite) else (1.0, 10.0)


def log_number_axis(fig: go.Figure, axis: str, values: pd.Series) -> None:
    """Make ``axis`` ("x" or "y") of ``fig`` a log axis of numbers labelled with full values
    (:func:`chart_axes.number_ticks`)."""
    ticks, labels = chart_axes.number_ticks(*_positive_span(values))
    fig.update_layout({f"{axis}axis": {"type": "log", "tickmode": "array", "tickvals": ticks,
                                       "ticktext": labels}})


def log_duration_axis(fig: go.Figure, axis: str, hours: pd.Series) -> None:
    """Make ``axis`` of ``fig`` a log axis of durations given in hours, labelled in minutes,
    hours or days (:func:`chart_axes.duration_ticks`)."""
    ticks, labels = chart_axes.duration_ticks(*_positive_span(hours))
    fig.update_layout({f"{axis}axis": {"type": "log", "tickmode": "array", "tickvals": ticks,
                                       "ticktext": labels}})


def distribution_chart(hours: pd.Series, deadline_hours: float | None) -> go.Figure:
    """Cumulative distributions of a cluster's Monte Carlo makespan (with the deadline line),
    the time axis in minutes, hours or days as :func:`duration` writes them."""
    ordered = hours.sort_values().to_numpy()
    share = (pd.RangeIndex(1, len(ordered) + 1) / len(ordered)).to_numpy()
    largest = max(float(ordered[-1]) if len(ordered) else 1.0, deadline_hours or 0.0)
    factor, unit = formatting.duration_axis(largest)
    fig = go.Figure(go.Scatter(x=ordered * factor, y=share, mode="lines", name="makespan",
                               line={"color": SPOT_COLOR, "width": 2, "shape": "hv"},
                               hovertemplate="%{y:.0%} of runs done within %{x:.1f} " + unit
                                             + "<extra></extra>"))
    if deadline_hours:
        fig.add_vline(x=deadline_hours * factor, line={"color": "#D55E00", "dash": "dash"},
                      annotation_text=f"deadline {duration(deadline_hours)}")
    fig.update_yaxes(tickformat=".0%", range=[0, 1.02])
    return _layout(fig, "Monte Carlo: share of runs done within a time (chosen cluster)",
                   height=320, x=f"makespan ({unit})", y="runs done")


#: The speedup models of the Plan page's chart: legend label and line style, the same in every
#: panel; the measured points are open circles.
SPEEDUP_STYLES: dict[str, tuple[str, dict[str, object]]] = {
    "fitted": ("fitted logistic", {"color": "#0072B2", "width": 2.5}),
    "paper": ("paper's n·K(n)", {"color": "#999999", "width": 2, "dash": "dot"}),
    "measured": ("measured, interpolated", {"color": "#D55E00", "width": 2, "dash": "dash"}),
}
MEASURED_POINTS = "measured points"
#: Panels per row of the speedup chart (one panel per GPU type).
SPEEDUP_COLUMNS = 3


def speedup_chart(curves: pd.DataFrame, points: pd.DataFrame,
                  chosen: str | None = None) -> go.Figure:
    """Speedup S(n) per GPU type and model (``curves``: type, model, n, speedup) against the
    measured points (``points``: type, n, speedup): one panel per GPU type (small multiples,
    shared axes), the ``chosen`` cluster's type first and titled so, one legend entry per
    model, styled alike in every panel."""
    types = sorted(curves["type"].unique(), key=lambda t: (t != chosen, t))
    cols = min(len(types), SPEEDUP_COLUMNS) or 1
    rows = max(1, -(-len(types) // cols))
    titles = [f"{t} (the chosen cluster's)" if t == chosen else t for t in types]
    fig = make_subplots(rows=rows, cols=cols, shared_xaxes=True, shared_yaxes=True,
                        subplot_titles=titles, horizontal_spacing=0.04,
                        vertical_spacing=0.12 if rows > 1 else 0.0)
    shown: set[str] = set()
    for i, gpu in enumerate(types):
        row, col = divmod(i, cols)
        for model, frame in curves[curves["type"] == gpu].groupby("model", sort=False):
            label, line = SPEEDUP_STYLES.get(str(model), (str(model), {}))
            fig.add_trace(go.Scatter(
                x=frame["n"], y=frame["speedup"], mode="lines", name=label, legendgroup=label,
                showlegend=label not in shown, line=line,
                hovertemplate=f"{gpu} · {label}<br>n %{{x}}<br>S(n) %{{y:.2f}}<extra></extra>"),
                row=row + 1, col=col + 1)
            shown.add(label)
        measured = points[points["type"] == gpu]
        if len(measured):
            fig.add_trace(go.Scatter(
                x=measured["n"], y=measured["speedup"], mode="markers", name=MEASURED_POINTS,
                legendgroup=MEASURED_POINTS, showlegend=MEASURED_POINTS not in shown,
                marker={"color": "#000000", "size": 8, "symbol": "circle-open"},
                hovertemplate=f"{gpu} · measured<br>n %{{x}}<br>S(n) %{{y:.2f}}"
                              "<extra></extra>"), row=row + 1, col=col + 1)
            shown.add(MEASURED_POINTS)
    fig.update_xaxes(title_text="GPU VMs n", row=rows)
    fig.update_yaxes(title_text="speedup", col=1)
    return _layout(fig, "Speedup S(n) = t(1) / t(n): the three models against the measurements",
                   height=320 + 220 * (rows - 1))
