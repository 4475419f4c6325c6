"""The Method page's tables and curves: the estimators' errors, the scaling prior against the
measured curves, and the trace models' check. They depend on no input (bundled data only), so
each is computed once per server and shared by every session (``st.cache_resource``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from deepvm_core.hardware.method_tables import (
    MethodTable,
    artifact_curves,
    estimator_error_tables,
    workload_class_error_tables,
)
from deepvm_core.hardware.scaling_prior import prior_errors, step_speedup

if TYPE_CHECKING:  # pandas loads with the first table
    import pandas as pd


@st.cache_resource(show_spinner=False)
def method_tables() -> tuple[MethodTable, ...]:
    """:func:`deepvm_core.hardware.method_tables.estimator_error_tables` and the per-workload-class
    tables (:func:`~deepvm_core.hardware.method_tables.workload_class_error_tables`): about a
    second of fits, the same for every session, computed once per server."""
    return (*estimator_error_tables(), *workload_class_error_tables())


@st.cache_resource(show_spinner=False)
def prior_curves() -> pd.DataFrame:
    """Each measured speedup curve of the artifact beside the scaling prior fitted without it
    (:func:`deepvm_core.hardware.scaling_prior.prior_errors`) and perfect scaling S(n) = n: columns
    ``curve``, ``n``, ``speedup`` and ``series`` (``measured``, ``prior (held out)``,
    ``S(n) = n``), long form for a line chart."""
    import pandas as pd

    curves = artifact_curves()
    rows: list[dict[str, object]] = []
    for curve, error in zip(curves, prior_errors(curves), strict=True):
        prior = step_speedup(error.model, curve.vm, curve.nodes)
        for series, values in (("measured", curve.speedups), ("prior (held out)", prior),
                               ("S(n) = n", curve.nodes)):
            rows += [{"curve": curve.instance, "n": n, "speedup": float(v), "series": series}
                     for n, v in zip(curve.nodes, values, strict=True)]
    return pd.DataFrame(rows)


@st.cache_resource(show_spinner=False)
def trace_model_check() -> pd.DataFrame:
    """The closed form and the renewal model against the backtest on the development spot
    traces (``data/trace-model-check.csv``, written by ``bench/bench_traces.py --write-data``:
    results on those traces, not the traces), as a table: errors in percent."""
    import io

    import pandas as pd

    from deepvm_core.bundled import read_bundled_file

    frame = pd.read_csv(io.BytesIO(read_bundled_file("trace-model-check.csv")))
    for column in ("closed_form_error", "renewal_error"):
        frame[column] = frame[column] * 100.0
    return frame
