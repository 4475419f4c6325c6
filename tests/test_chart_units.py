"""Issue 27: every value axis says its unit. The Recommend policy chart's axis was a bare
"Performance"; the Regions chart's says its unit under each objective."""

from __future__ import annotations

import pandas as pd

from dashboard import charts
from dashboard.columns import Col


def test_the_policy_chart_names_the_unit_of_performance():
    frame = pd.DataFrame({Col.POLICY: ["DeepVM", "Cost-First"], Col.PERF: [100.0, 80.0],
                          Col.CONFIG: ["a", "b"]})
    fig = charts.policy_bars(frame, Col.PERF, "Performance", axis=charts.PERFORMANCE_AXIS)
    assert fig.layout.xaxis.title.text == "Performance (eFLOPS × n × K(n), relative units)"
    # without an axis title the column's name stands (a column that carries its unit)
    frame[Col.PRICE] = [2.0, 1.0]
    assert charts.policy_bars(frame, Col.PRICE, "Price").layout.xaxis.title.text == "USD/hour"
