"""Presentation mode's plain words on the page (issue 27): a text, a table and a chart as the
page shows them, through :func:`dashboard.glossary.plain` when presentation mode is on and
unchanged when it is off. Each page draws its visible text through these."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from dashboard import keys
from dashboard.glossary import plain

if TYPE_CHECKING:  # pandas and plotly load with the first table or chart, after the card
    import pandas as pd
    import plotly.graph_objects as go


def presentation() -> bool:
    """Whether the sidebar's presentation mode hides the research details (its key; off for a
    part drawn alone, without the sidebar). The one reader: ``state.presentation`` is this."""
    return bool(st.session_state.get(keys.PRESENTATION.name, False))  # a part drawn alone: off


def words(text: str) -> str:
    """``text`` as the page shows it: plain words in presentation mode."""
    return plain(text) if presentation() else text


def plain_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its column names and text cells in plain words (a copy)."""
    import pandas as pd

    shown = frame.rename(columns=lambda c: plain(c) if isinstance(c, str) else c)
    for i, dtype in enumerate(shown.dtypes):
        if pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype):
            shown.isetitem(i, shown.iloc[:, i].map(
                lambda v: plain(v) if isinstance(v, str) else v))
    return shown


def _plain_title(node: Any) -> None:
    title = getattr(node, "title", None)
    if title is not None and isinstance(title.text, str):
        title.text = plain(title.text)


def _plain_texts(values: Any) -> Any:
    """A trace's category values or labels in plain words (numbers unchanged)."""
    if isinstance(values, str):
        return plain(values)
    if isinstance(values, Sequence) and any(isinstance(v, str) for v in values):
        return [plain(v) if isinstance(v, str) else v for v in values]
    return values


def plain_figure(figure: go.Figure) -> go.Figure:
    """A copy of ``figure`` with its title, axis titles and tick labels, legend, annotations,
    trace names and text labels and category values in plain words."""
    import plotly.graph_objects as go

    shown = go.Figure(figure)
    layout = shown.layout
    _plain_title(layout)
    _plain_title(layout.legend)
    shown.for_each_xaxis(_plain_title)
    shown.for_each_yaxis(_plain_title)
    for axis in (*shown.select_xaxes(), *shown.select_yaxes()):
        if axis.ticktext is not None:
            axis.ticktext = _plain_texts(list(axis.ticktext))
    for note in layout.annotations or ():
        if isinstance(note.text, str):
            note.text = plain(note.text)
    for trace in shown.data:
        if isinstance(getattr(trace, "name", None), str):
            trace.name = plain(trace.name)
        for field in ("x", "y", "text", "legendgroup"):
            value = getattr(trace, field, None)
            if value is not None and field in trace:
                setattr(trace, field, _plain_texts(
                    value if isinstance(value, str) else list(value)))
        for field in ("legendgrouptitle",):
            node = getattr(trace, field, None)
            if node is not None and isinstance(node.text, str):
                node.text = plain(node.text)
    return shown


def frame(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` as the page shows it: its columns and text cells in plain words in
    presentation mode."""
    return plain_frame(table) if presentation() else table


def figure(chart: go.Figure) -> go.Figure:
    """``chart`` as the page shows it: its words plain in presentation mode."""
    return plain_figure(chart) if presentation() else chart


def dataframe(table: pd.DataFrame | Sequence[Mapping[str, Any]], *,
              to: DeltaGenerator | None = None,
              column_config: Mapping[str, Any] | None = None,
              column_order: Sequence[str] | None = None, **kwargs: Any) -> None:
    """``st.dataframe`` of ``table`` (a frame or its rows; in ``to``, else the page), its
    words plain in presentation mode, the column settings following the renamed columns."""
    where = to if to is not None else st
    if presentation():
        import pandas as pd

        table = plain_frame(table if isinstance(table, pd.DataFrame) else pd.DataFrame(table))
        if column_config is not None:
            column_config = {plain(k): _plain_column(v) for k, v in column_config.items()}
        if column_order is not None:
            column_order = [plain(c) for c in column_order]
    where.dataframe(table, column_config=column_config, column_order=column_order, **kwargs)


def _plain_column(config: Any) -> Any:
    """A column setting with its label plain (a string label, or the setting's ``label``)."""
    if isinstance(config, str):
        return plain(config)
    if isinstance(config, dict) and isinstance(config.get("label"), str):
        return {**config, "label": plain(config["label"])}
    return config


def chart(figure_: go.Figure, *, to: DeltaGenerator | None = None, **kwargs: Any) -> None:
    """``st.plotly_chart`` of ``figure_`` (in ``to``, else the page), its words plain in
    presentation mode."""
    (to if to is not None else st).plotly_chart(figure(figure_), **kwargs)


def formula(latex: str) -> None:
    """``st.latex(latex)``; in presentation mode folded into a "Research details" expander
    (a formula names the research terms in symbols)."""
    if presentation():
        with st.expander("Research details: the formula"):
            st.latex(latex)
    else:
        st.latex(latex)
