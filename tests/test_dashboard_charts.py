"""Unit tests of the chart builders' figures and the log-axis ticks (issue 20, items 12-15).

The rendered layout (titles clear of legends, tick labels read back) is checked in the
browser by tests/e2e/test_charts_browser.py.
"""

from __future__ import annotations

import pandas as pd
import pytest

from dashboard import chart_axes, charts, sweep_charts
from deepvm_core.recommend.policies import POLICY_LABELS


def test_number_ticks_are_the_1_2_5_series_with_full_labels() -> None:
    # 0.3 .. 90 USD: the decades 0.1, 1, 10 and the first value beyond each end (0.2, 100).
    values, labels = chart_axes.number_ticks(0.3, 90)
    assert values == [0.2, 0.5, 1, 2, 5, 10, 20, 50, 100]
    assert labels == ["0.2", "0.5", "1", "2", "5", "10", "20", "50", "100"]
    # 900 .. 9,000: 1,000, 2,000 and 5,000 inside, 500 and 10,000 around, with separators.
    assert chart_axes.number_ticks(900, 9000)[1] == ["500", "1,000", "2,000", "5,000", "10,000"]
    # 900 .. 4,000: only 1,000 and 2,000 inside, so the fine series 1, 1.5, 2, 3, 5, 7.
    assert chart_axes.number_ticks(900, 4000)[1] == ["700", "1,000", "1,500", "2,000", "3,000",
                                                     "5,000"]


def test_a_short_span_gets_the_fine_series() -> None:
    # 3..6: the coarse series has only 5 inside; the fine one 3, 5 and ... 2 and 7 around.
    values, labels = chart_axes.number_ticks(2.5, 6.5)
    assert values == [2, 3, 5, 7]
    assert labels == ["2", "3", "5", "7"]


def test_duration_ticks_use_minutes_hours_and_days() -> None:
    # 5 min .. 100 h: 2 min (the one below), minutes to 30, hours 1..20 and 48, then 5 days
    # (120 h, the one above).
    values, labels = chart_axes.duration_ticks(5 / 60, 100)
    assert labels == ["2 min", "5 min", "10 min", "20 min", "30 min", "1 h", "2 h", "5 h",
                      "10 h", "20 h", "48 h", "5 days"]
    assert values[labels.index("5 days")] == 120.0  # 5 × 24
    assert values[labels.index("20 min")] == pytest.approx(1 / 3)


def test_no_ticks_without_a_positive_span() -> None:
    assert chart_axes.number_ticks(0.0, 5.0) == ([], [])


def speedup_frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    curves = pd.DataFrame([{"type": t, "model": m, "n": n, "speedup": float(n)}
                           for t in ("a.x", "b.x", "c.x")
                           for m in ("paper", "fitted", "measured") for n in (1, 2, 4)])
    points = pd.DataFrame([{"type": t, "n": n, "speedup": float(n)}
                           for t in ("a.x", "b.x", "c.x") for n in (1, 2, 4)])
    return curves, points


def test_speedup_chart_has_one_panel_per_type_and_one_legend_entry_per_model() -> None:
    fig = charts.speedup_chart(*speedup_frames())
    legend = [t.name for t in fig.data if t.showlegend is not False]
    assert sorted(legend) == sorted(["paper's n·K(n)", "fitted logistic",
                                     "measured, interpolated", "measured points"])
    panels = {}
    for trace in fig.data:
        panels.setdefault(trace.xaxis, set()).add(trace.hovertemplate.split(" · ")[0])
    assert sorted(map(sorted, panels.values())) == [["a.x"], ["b.x"], ["c.x"]]
    assert [a.text for a in fig.layout.annotations] == ["a.x", "b.x", "c.x"]
    styles = {t.name: (t.line.dash, t.line.color) for t in fig.data if t.mode == "lines"}
    assert len(set(styles.values())) == 3  # the three models look different


def test_frontier_axes_are_log_with_full_labels() -> None:
    points = pd.DataFrame({"cost": [0.3, 2.0, 90.0], "hours": [0.2, 2.0, 20.0],
                           "label": ["a", "b", "c"]})
    fig = charts.frontier_chart(points, [0, 1], {0: "best"}, 3)
    assert fig.layout.xaxis.type == fig.layout.yaxis.type == "log"
    assert "20 h" in fig.layout.xaxis.ticktext
    assert "12 min" not in fig.layout.xaxis.ticktext
    assert {"20", "50", "100"} <= set(fig.layout.yaxis.ticktext)


def sweep_rows() -> pd.DataFrame:
    """Three PWs of the five policies, DeepVM-NoScale and Cost-First exactly under DeepVM (as
    on the bundled catalogs), one quota-bound row of DeepVM at PW 2."""
    rows = []
    for policy in ("deepvm", "deepvm_noscale", "cost_first", "performance_first",
                   "deepvm_performance"):
        for pw, perf in ((1.0, 10.0), (2.0, 20.0), (3.0, 20.0)):
            rows.append({"pw_usd_per_hour": pw, "policy": policy, "performance": perf,
                         "normalised_performance": perf / 20, "hourly_price_usd": pw * 0.9,
                         "configuration": f"{policy} at {pw}"})
    return pd.DataFrame(rows)


def test_sweep_chart_gives_every_policy_its_own_panel_and_marks_binding_quotas() -> None:
    frame = sweep_rows()
    binds = pd.Series("", index=frame.index, dtype=object)
    binds.iloc[1] = "spot vCPUs of G (128)"  # deepvm at PW 2
    for fig in (sweep_charts.sweep_chart(frame, normalised=False, binds=binds),
                sweep_charts.sweep_price_chart(frame, binds=binds)):
        own = [t for t in fig.data if t.name in POLICY_LABELS.values()]  # the policies' lines
        assert len(own) == 5
        assert len({(t.xaxis, t.yaxis) for t in own}) == 5  # no two share a plot
        assert [a.text for a in fig.layout.annotations][:5] == [  # the policies' one order
            "DeepVM", "DeepVM (performance objective)", "DeepVM-NoScale", "Cost-First",
            "Performance-First"]
        crosses = [t for t in fig.data if t.name == sweep_charts.QUOTA_NAME]
        assert len(crosses) == 1
        assert list(crosses[0].x) == [2.0]
        assert crosses[0].xaxis == own[0].xaxis  # on DeepVM's panel


def test_quota_binds_names_the_spot_quota_of_the_gpu_family() -> None:
    from dashboard.sweep_quotas import quota_binds
    from deepvm_core.catalog.store import load_catalog
    from deepvm_core.model import Scenario

    catalog = load_catalog("aws-us-east-1-2023-10")  # quota G: 128 spot vCPUs
    gpu = next(g for g in catalog.gpu_types if g.family == "G" and g.vcpus == 4)
    # 31 spot VMs of 4 vCPUs use 124 of 128: a 32nd (128) still fits -> no bind; 32 use 128:
    # a 33rd (132) does not -> binds. Quotas off -> never.
    frame = pd.DataFrame([
        {"gpu": gpu.name, "gpu_spot": 31, "gpu_on_demand": 0, "cpu": None, "cpu_on_demand": 0},
        {"gpu": gpu.name, "gpu_spot": 32, "gpu_on_demand": 0, "cpu": None, "cpu_on_demand": 0},
        {"gpu": None, "gpu_spot": 0, "gpu_on_demand": 0, "cpu": None, "cpu_on_demand": 0}])
    assert list(quota_binds(frame, catalog, Scenario(3.0))) == [
        "", "spot vCPUs of G (128)", ""]
    assert list(quota_binds(frame, catalog, Scenario(3.0, use_quotas=False))) == ["", "", ""]


def test_price_dots_zoom_to_the_prices_and_label_the_differences() -> None:
    from dashboard.columns import Col

    frame = pd.DataFrame({Col.POLICY: ["DeepVM", "Cost-First", "Performance-First"],
                          Col.CONFIG: ["a", "b", "c"], Col.PRICE: [2.89, 2.82, 2.85]})
    fig = charts.price_dots(frame, pw=3.0)
    low, high = fig.layout.xaxis.range
    # the spread 2.82..2.89 (0.07) takes 70 % of the axis: 0.1 wide, 2.805..2.905
    assert low == pytest.approx(2.805)
    assert high == pytest.approx(2.905)
    assert fig.data[0].mode == "markers+text"
    assert sorted(fig.data[0].text) == ["2.8200 (cheapest)", "2.8500 (+0.0300)",
                                        "2.8900 (+0.0700)"]
    assert "PW 3 is above this range" in fig.layout.xaxis.title.text


def test_si_ticks_use_the_one_abbreviation_style() -> None:
    # 0 .. 8.045 M: steps of 2 M (8.045 / 2 = 4.02, at most 5 steps), labelled "8.0 M".
    values, labels = chart_axes.si_ticks(8_045_000)
    assert labels == ["0", "2.0 M", "4.0 M", "6.0 M", "8.0 M", "10.0 M"]
    assert values[-1] == 10_000_000


def test_distribution_axis_in_minutes_under_an_hour() -> None:
    fig = charts.distribution_chart(pd.Series([0.25, 0.5, 0.75]), 0.5)
    assert fig.layout.xaxis.title.text == "makespan (min)"
    assert list(fig.data[0].x) == [15.0, 30.0, 45.0]  # hours × 60
    assert fig.layout.annotations[0].text == "deadline 30 min"


def test_the_chosen_star_is_drawn_over_a_policy_that_picks_the_same_cluster() -> None:
    """Issue 27: the chosen star hid under the marker of a policy on the same point."""
    points = pd.DataFrame({"cost": [0.3, 2.0, 90.0], "hours": [0.2, 2.0, 20.0],
                           "label": ["a", "b", "c"]})
    fig = charts.frontier_chart(points, [0, 1], {0: "best", 1: "deepvm"}, 3)
    assert fig.data[-1].name == "Chosen (best for the goal)"  # plotly draws in order


def test_quota_crosses_lie_under_their_policy_line() -> None:
    frame = sweep_rows()
    binds = pd.Series("", index=frame.index, dtype=object)
    binds.iloc[:3] = "spot vCPUs of G (128)"  # deepvm at every PW: a run of crosses
    fig = sweep_charts.sweep_chart(frame, normalised=False, binds=binds)
    names = [t.name for t in fig.data]
    assert names.index(sweep_charts.QUOTA_NAME) < names.index("DeepVM")
    assert fig.data[names.index(sweep_charts.QUOTA_NAME)].marker.size <= 6


def test_ten_scaling_curves_differ_in_hue_or_line_style() -> None:
    """Issue 27: ten K(n) curves reused hues; each type now differs in colour or dash from
    every other, and a type's diamond takes its line's colour."""
    from dashboard.columns import Col

    gpus = [f"t{i}.x" for i in range(14)]
    curves = pd.DataFrame([{Col.GPU: g, Col.NODES: n, Col.K: 1.0} for g in gpus
                           for n in (1, 2)])
    fig = charts.scaling_chart(curves, pd.DataFrame({Col.GPU: gpus, Col.INFLECTION: [None] * 14}),
                               Col.K, "K(n)")
    styles = [(t.line.color, t.line.dash) for t in fig.data if t.mode == "lines"]
    assert len(styles) == 14
    assert len(set(styles)) == 14


def test_the_speedup_chart_shows_the_chosen_type_first_even_unmeasured() -> None:
    """Issue 27: the speedup chart omitted the chosen cluster's type (p3.16xlarge on today's
    catalog, which the bundled measurements do not measure)."""
    from dashboard.job_frames import speedup_frames
    from deepvm_core.bundled import bundled_measurements_paths
    from deepvm_core.catalog.store import load_catalog
    from deepvm_core.hardware.measurements import load_measurements
    from deepvm_core.workload.speedup import SpeedupModel

    catalog = load_catalog("aws-us-east-1-2025-h1")
    model = SpeedupModel("fitted",
                         load_measurements(bundled_measurements_paths()["deepvm-scaling"]))
    curves, points = speedup_frames(catalog, model, "p3.16xlarge")
    chosen = curves[curves["type"] == "p3.16xlarge"]
    assert set(chosen["model"]) == {"paper", "fitted"}  # no measurement: no measured curve
    assert "p3.16xlarge" not in set(points["type"])
    fig = charts.speedup_chart(curves, points, "p3.16xlarge")
    assert fig.layout.annotations[0].text == "p3.16xlarge (the chosen cluster's)"


def test_every_recovery_policy_has_its_own_colour_on_the_backtest_chart() -> None:
    from dashboard import spot_charts
    from deepvm_core.job.recovery import RECOVERY_POLICIES

    colours = [spot_charts.POLICY_COLORS[p] for p in RECOVERY_POLICIES]
    assert len(set(colours)) == len(RECOVERY_POLICIES)
    assert spot_charts.DEADLINE_COLOR not in colours
