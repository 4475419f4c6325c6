"""Every chart of the dashboard drawn by plotly.js in Chromium, measured (issue 20, items 12-13).

The figures are the ones the pages send (collected with Streamlit's AppTest, so no server is
needed); each is drawn at a half-column and a full-width size, then:

* no chart title or axis title overlaps the legend's box (item 13);
* every tick label of a log axis states its full value: the label, read back as a number
  (with its unit: ``30 min``, ``2 days``), equals the tick's position, and no two neighbouring
  labels are more than a factor 10 apart, so no decade goes unlabelled (item 12).
"""

from __future__ import annotations

import functools
import itertools
import json
import re
from pathlib import Path
from typing import Any

import plotly
import pytest
from playwright.sync_api import Browser
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.e2e

APP = Path(__file__).resolve().parents[2] / "dashboard" / "app.py"
PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
#: (page, URL parameters) whose charts are drawn; the AWS catalog of 2023 keeps the numbers.
PAGES = (("plan", {"catalog": "aws-us-east-1-2023-10"}),
         ("plan", {"catalog": "aws-us-east-1-2023-10", "epochs": "3000"}),
         ("simulate", {"catalog": "aws-us-east-1-2023-10"}), ("simulate", {"quotas": "0"}),
         ("recommend", {"catalog": "aws-us-east-1-2023-10"}),
         ("instances", {}))
#: Widths (px) a chart gets: a half column and the main column at a 1440 px wide window.
WIDTHS = (520, 1040)
#: Hours of the units a duration tick may carry.
UNIT_HOURS = {"min": 1 / 60, "h": 1.0, "days": 24.0}


@functools.cache
def page_figures(index: int) -> list[tuple[str, dict[str, Any]]]:
    """(page and chart title, figure spec) of every chart the page ``PAGES[index]`` draws."""
    page, params = PAGES[index]
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.query_params["page"] = page
    for name, value in params.items():
        at.query_params[name] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    figures = []
    for element in at.get("plotly_chart"):
        spec = json.loads(element.proto.spec)
        title = spec["layout"].get("title", {}).get("text", "?")
        figures.append((f"{page}: {title}", spec))
    assert figures, f"{page} drew no chart"
    return figures


MEASURE = """async ([spec, width]) => {
  const div = document.getElementById('chart');
  div.style.width = width + 'px';
  await Plotly.newPlot(div, spec.data, {...spec.layout, width});
  const box = (el) => {
    const r = el.getBoundingClientRect();
    return {x0: r.left, y0: r.top, x1: r.right, y1: r.bottom};
  };
  const legend = div.querySelector('g.legend rect.bg');
  const titles = [...div.querySelectorAll('[class^="g-"][class$="title"] text')]
    .filter((t) => t.textContent.trim())
    .map((t) => ({text: t.textContent, box: box(t)}));
  const axes = Object.keys(div._fullLayout).filter((k) => /^[xy]axis\\d*$/.test(k))
    .map((k) => ({name: k, type: div._fullLayout[k].type,
                  range: div._fullLayout[k].range,
                  ticks: (div._fullLayout[k]._vals || []).map((v) => ({x: v.x, text: v.text}))}));
  return {legend: legend ? box(legend) : null, titles, axes};
}"""


def overlaps(a: dict[str, float], b: dict[str, float]) -> bool:
    return a["x0"] < b["x1"] and b["x0"] < a["x1"] and a["y0"] < b["y1"] and b["y0"] < a["y1"]


def tick_value(text: str) -> float:
    """The number a tick label states, in the axis' unit (hours for durations)."""
    match = re.fullmatch(r"([\d,]*\.?\d+)(?: (min|h|days))?", text.strip())
    assert match, f"tick label {text!r} is not a full value"
    number = float(match.group(1).replace(",", ""))
    return number * UNIT_HOURS[match.group(2)] if match.group(2) else number


@pytest.fixture(scope="module")
def chart_page(browser: Browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_content("<html><body style='margin:0'><div id='chart'></div></body></html>")
    page.add_script_tag(path=str(PLOTLY_JS))
    yield page
    context.close()


def problems(drawn: dict[str, Any], name: str, width: int) -> list[str]:
    """What is wrong with one drawn chart (empty: nothing)."""
    found = []
    legend = drawn["legend"]
    if legend is not None:
        found += [f"{name}: the title {t['text']!r} lies inside the legend at {width} px"
                  for t in drawn["titles"] if overlaps(t["box"], legend)]
    for axis in drawn["axes"]:
        if axis["type"] != "log":
            continue
        low, high = sorted(10 ** r for r in axis["range"])
        ticks = [(10 ** t["x"], tick_value(t["text"])) for t in axis["ticks"]]
        if len(ticks) < 2:
            found.append(f"{name}: {axis['name']} has {len(ticks)} tick labels")
        found += [f"{name}: {axis['name']} labels {position:g} as {value:g}"
                  for position, value in ticks if abs(value / position - 1) > 0.02]
        edges = [low, *(p for p, _ in ticks), high]
        found += [f"{name}: {axis['name']} has no label between {a:g} and {b:g}"
                  for a, b in itertools.pairwise(edges) if b / a > 10.0 + 1e-9]
    return found


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("index", range(len(PAGES)),
                         ids=[f"{p}-{'-'.join(q.values()) or 'default'}" for p, q in PAGES])
def test_chart_titles_clear_of_legend_and_log_ticks_full(chart_page, index: int,
                                                         width: int) -> None:
    found = []
    for name, spec in page_figures(index):
        found += problems(chart_page.evaluate(MEASURE, [spec, width]), name, width)
    assert not found, "\n".join(found)
