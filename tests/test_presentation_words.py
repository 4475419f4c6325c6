"""Issue 27: presentation mode in plain words on every page. Every text a page shows in
presentation mode (headings, markdown, captions, notes, metric labels, tables' columns and
cells, charts' titles, axes and legends, tabs and expanders) is free of the research terms of
``tests/phrases.py``; off, the research names stay."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from app_pages import new_app, no_errors
from phrases import research_terms
from streamlit.testing.v1 import AppTest

from dashboard.url_pages import PAGE_SLUGS

#: What each page other than the answer's is for, in presentation mode (the start of its lead,
#: written here as the issue asks for it: one line per page).
LEADS = {"instances": "How each GPU type is ranked", "catalog": "The machines and prices",
         "simulate": "The research paper's study", "live": "Today's prices from AWS",
         "regions": "The best cluster in each AWS region", "method": "How the answer is found",
         "spot": "How often spot GPUs are taken back", "jobs": "The jobs you launched"}


@pytest.fixture
def app(tmp_path, monkeypatch) -> AppTest:
    return new_app(tmp_path, monkeypatch)


def _figure_texts(spec: dict[str, Any]) -> Iterator[str]:
    """A plotly figure's visible words: title, axis titles, trace names, annotations."""
    layout = spec.get("layout", {})

    def title(node: Any) -> str:
        if isinstance(node, dict):
            node = node.get("text", "")
        return str(node or "")

    yield title(layout.get("title"))
    for key, value in layout.items():
        if key.startswith(("xaxis", "yaxis")) and isinstance(value, dict):
            yield title(value.get("title"))
            yield " ".join(str(t) for t in value.get("ticktext") or ())
        if key == "legend" and isinstance(value, dict):
            yield title(value.get("title"))
    for note in layout.get("annotations", ()):
        yield str(note.get("text", ""))
    for trace in spec.get("data", ()):
        if trace.get("showlegend", True) is not False:
            yield str(trace.get("name") or "")
        if trace.get("mode", "") and "text" in trace.get("mode", ""):
            text = trace.get("text")
            yield " ".join(map(str, text)) if isinstance(text, list) else str(text or "")


#: The expanders presentation mode may keep research words in: folded, labelled as such.
FOLDED = ("Research settings", "Research details", "Glossary")
#: The elements whose ``value`` is text a reader sees.
TEXTS = ("title", "header", "subheader", "markdown", "caption", "info", "warning", "error",
         "success", "latex", "exception")
WIDGETS = ("button", "toggle", "checkbox", "number_input", "selectbox", "radio", "slider",
           "select_slider", "text_input", "multiselect", "date_input", "download_button",
           "page_link")


def _node_texts(node: Any) -> Iterator[str]:
    kind = getattr(node, "type", "")
    if kind == "expander":
        if str(node.label).startswith(FOLDED):
            return
        yield str(node.label)
    elif kind == "tab":
        yield str(node.label)
    elif kind in TEXTS:
        yield str(node.value)
    elif kind == "metric":
        yield f"{node.label} {node.value}"
    elif kind in WIDGETS:
        yield str(node.label)
        for option in getattr(node, "options", None) or ():
            yield str(option)
    elif kind == "dataframe":
        frame = node.value
        config = json.loads(node.proto.columns or "{}")  # a column's label, if it has one
        yield " | ".join(str(config.get(str(c), {}).get("label") or c)
                         for c in frame.columns)
        for row in frame.itertuples(index=False):
            yield " | ".join(c for c in row if isinstance(c, str))
    elif kind == "plotly_chart":
        yield from (t for t in _figure_texts(json.loads(node.proto.spec)) if t)
    for child in getattr(node, "children", {}).values():
        yield from _node_texts(child)


def visible_text(at: AppTest) -> str:
    """The page's words, main area and sidebar, one line each (folded research expanders
    left out)."""
    return "\n".join([*_node_texts(at.main), *_node_texts(at.sidebar)])


@pytest.mark.parametrize("slug", PAGE_SLUGS)
def test_presentation_mode_shows_no_research_term(app: AppTest, slug: str) -> None:
    app.query_params.update({"page": slug, "presentation": "on"})
    app.run()
    no_errors(app)
    found = research_terms(visible_text(app))
    assert not found, "\n".join(found)
    if slug not in ("recommend", "plan"):  # the answer's pages answer; the others say what for
        (lead,) = [i.value for i in app.info if "The answer for your job is on" in i.value]
        assert lead.startswith(LEADS[slug]), lead


def test_off_presentation_keeps_the_research_names(app: AppTest) -> None:
    """Off, the page speaks the paper's words (the golden texts and the CLI's)."""
    app.query_params.update({"page": "recommend"})
    app.run()
    no_errors(app)
    text = visible_text(app)
    for term in ("Tiering", "Cost-First", "Performance-First", "% of PW"):
        assert term in text, term


def test_plain_words_read_as_a_budget_holder_reads_them() -> None:
    from dashboard.glossary import plain

    assert plain("### Tiering · 17 × g4dn.xlarge spot + 1 × c5.xlarge memory node") == (
        "### Spot GPUs with a memory server that keeps checkpoints · 17 × g4dn.xlarge spot + "
        "1 × c5.xlarge memory node")
    assert plain("vs Cost-First") == "vs the most GPUs the cap affords"
    assert plain("about **7.07 USD** (P90 8.47 USD), expected makespan") == (
        "about **7.07 USD** (9 in 10 runs under 8.47 USD), expected time to finish")
    assert plain("DeepVM-NoScale | SA: 2 x g6e.2xlarge | 40 % of PW") == (
        "The best value per dollar, ignoring scaling losses | Spot GPUs with one on-demand GPU: "
        "2 x g6e.2xlarge | 40 % of the cap")
    assert plain("Monte Carlo: MTBI 7.6 h, eFLOPS 377, K(n) 0.9") == (
        "Simulated runs: time between interruptions 7.6 h, GPU speed 377, scaling efficiency "
        "0.9")
    assert plain("g4dn.xlarge, PWX, GP90") == "g4dn.xlarge, PWX, GP90"  # whole words only
