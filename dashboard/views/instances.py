"""Instances: FLOPP ranking (stage 2), scaling curves, the network-saturation table and the
vCPU quotas."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import streamlit as st

from dashboard import (
    catalog_state,
    charts,
    compute,
    instance_filters,
    keys,
    plain_view,
    provenance,
    result_frames,
    state,
    widgets,
)
from dashboard.columns import Col
from dashboard.glossary import GLOSSARY
from dashboard.plain_view import words
from deepvm_core.catalog import Catalog
from deepvm_core.recommend.explain import catalog_notes

if TYPE_CHECKING:
    import pandas as pd

#: Most rows or columns of the pair table: a catalog may have up to 1,000 GPU types (the core's
#: limit).
PAIR_TABLE = 40
SOURCE = "eFLOPS source"
ESTIMATE = "How estimated"
MODEL = "GPU model"


def shown_note(shown: int, total: int, what: str) -> None:
    if shown < total:
        st.caption(words(f"Showing {shown} of {total:,} {what}."))


def with_sources(frame: pd.DataFrame, catalog: Catalog) -> pd.DataFrame:
    """The FLOPP table with each type's accelerator model and where its eFLOPS come from."""
    by_name = {g.name: g for g in catalog.gpu_types}
    gpus = [by_name[n] for n in frame[Col.GPU]]
    out = frame.copy()
    out.insert(1, MODEL, [instance_filters.model_of(g.name) for g in gpus])
    out.insert(3, SOURCE, [provenance.eflops_source(g) for g in gpus])
    out.insert(4, ESTIMATE, [g.eflops_source.partition(":")[2].strip() for g in gpus])
    return out


def flopp(active: catalog_state.ActiveCatalog, frame: pd.DataFrame, shown: list[str],
          passing: int) -> None:
    st.subheader(words("FLOPP ranking"))
    st.caption(words("Stage 2: eFLOP per USD, SPFP = eFLOPS / spot price × 3600 and ODFP = eFLOPS "
                     "/ on-demand price × 3600. Click a column header to sort."))
    table = with_sources(frame.set_index(Col.GPU).loc[shown].reset_index(), active.catalog)
    plain_view.chart(charts.flopp_bars(table.head(instance_filters.CHART_TYPES)),
                     key="inst_flopp_chart")
    shown_note(min(len(table), instance_filters.CHART_TYPES), passing,
               "GPU types on the chart (best spot FLOPP first)")
    shown_note(len(table), passing, "GPU types in the table: 'Show all' lists them all")
    n = st.column_config.NumberColumn
    plain_view.dataframe(table, hide_index=True, key="inst_flopp_table", column_config={
        Col.SPOT_FLOPP: n(format="compact", help="eFLOP per USD on spot"),
        Col.OD_FLOPP: n(format="compact", help="eFLOP per USD on demand"),
        Col.SPOT_PRICE: n(format="%.4f"), Col.OD_PRICE: n(format="%.4f"),
        Col.SPOT_RANK: n(format="%d"), Col.OD_RANK: n(format="%d"),
        SOURCE: st.column_config.TextColumn(
            help="measured: the DeepVM artifact's measurement; estimated: from the chip's "
                 "datasheet (the next column; the Method page shows the estimate's error); "
                 "edited: typed in the catalog editor"),
        ESTIMATE: st.column_config.TextColumn(
            help="The estimate's model: k C^0.34 B^0.66 per GPU (C: the chip's FP16 tensor "
                 "TFLOPS, B: its memory bandwidth), m GPUs per VM less an intra-node "
                 "all-reduce (Method page)")})


def per_model(active: catalog_state.ActiveCatalog) -> None:
    """Recommend's best cluster of each GPU model within the sidebar's PW (``by_accelerator``),
    for the models the filter keeps."""
    scenario = state.scenario()
    rec = compute.recommendation(active.catalog, scenario, keys.SOLVER.get(), keys.TOP_K.get())
    chosen = set(keys.INSTANCES_MODELS.get())
    rows = [b for b in rec.by_accelerator if not chosen or b.accelerator in chosen]
    if not rows:
        return
    st.subheader("Best cluster per GPU model")
    st.caption(words(f"Within PW {scenario.pw_usd_per_hour:g} USD/h and the sidebar's scenario, "
                     "ranked by its objective: what each model can do for the money (the "
                     "Recommend page's answer is #1)."))
    import pandas as pd  # loaded by the FLOPP table already

    plain_view.dataframe(pd.DataFrame([{
        "#": b.rank, MODEL: b.accelerator,
        "Best cluster": b.configuration.describe() if b.configuration else b.note,
        "USD/hour": b.configuration.hourly_price_usd if b.configuration else None,
        "Performance": b.configuration.performance if b.configuration else None,
        SOURCE: provenance.source_word(b.eflops_source) if b.eflops_source else None,
    } for b in rows]), hide_index=True, key="inst_by_model", placeholder="–", column_config={
        "#": st.column_config.NumberColumn(format="%d"),
        "USD/hour": st.column_config.NumberColumn(format="%.4f"),
        "Performance": st.column_config.NumberColumn(format="%.0f")})


def scaling(active: catalog_state.ActiveCatalog, shown: list[str]) -> None:
    st.subheader("Scaling factor")
    st.caption(words("K(n) = 1 up to the inflection point b of the fitted speedup S(n) = c / (1 + "
                     "exp(-a (n - b))), then S(n) / L(n) with L the tangent at b. The effective "
                     "speedup n·K(n) is what a cluster of n GPU VMs delivers; diamonds mark n "
                     "= b."))
    n_max = st.columns([0.4, 0.6])[0].slider("Largest n shown", 8, 256, step=4,
                                             key=keys.INSTANCES_N_MAX.name)
    lines = set(shown[:instance_filters.SCALING_LINES])
    drawn = replace(active.catalog, gpu_types=tuple(
        g for g in active.catalog.gpu_types if g.name in lines))
    curves = result_frames.scaling_frame(drawn, n_max)
    fits = result_frames.inflection_frame(drawn)
    shown_note(len(drawn.solvable_gpu_types), len(shown),
               "GPU types shown (best spot FLOPP first)")
    if curves.empty:
        st.warning(words("No GPU type with an eFLOPS score."), icon=":material/warning:")
        return
    left, right = st.columns(2, gap="medium")
    plain_view.chart(charts.scaling_chart(curves, fits, Col.K, "Scaling factor K(n)"),
                     key="inst_k_chart", to=left)
    plain_view.chart(charts.scaling_chart(curves, fits, Col.SPEEDUP,
                                            "Effective speedup n·K(n)", ideal=True),
                       key="inst_speedup_chart", to=right)
    by_name = {g.name: g for g in active.catalog.gpu_types}
    estimated = [n for n in shown if n in lines and by_name[n].scaling is not None
                 and provenance.scaling_source(by_name[n]) != "measured"]
    if estimated:
        st.caption(words(f"Scaling curves estimated (prior: data-parallel step model, not "
                         f"measured): {', '.join(estimated)}. The Method page shows the "
                         "prior's error."),
                   help=by_name[estimated[0]].scaling_source)
    with st.expander("Fitted parameters (a, b, c)"):
        table = fits.copy()
        table["Scaling source"] = [provenance.scaling_source(by_name[n]) for n in fits[Col.GPU]]
        plain_view.dataframe(table, hide_index=True, key="inst_fits")


def saturation(active: catalog_state.ActiveCatalog) -> None:
    st.subheader("Network saturation")
    st.caption(words("A memory node serves fewer than n_sat GPU VMs, read from the table at bw = "
                     "min(BW(GPU), BW(CPU)) (the entry of the largest bandwidth <= bw). Tiering "
                     "therefore needs m = floor(n / n_sat) + 1 memory nodes."))
    left, right = st.columns([0.25, 0.75], gap="medium")
    with left:
        st.markdown("**Measured table**")
        plain_view.dataframe(result_frames.saturation_frame(active.catalog), hide_index=True,
                             key="inst_saturation")
    with right:
        st.markdown("**n_sat per pair** (GPU type × memory node type)")
        pairs = compute.pair_table(active.catalog, PAIR_TABLE)
        shown_note(pairs.size, len(active.catalog.gpu_types) * len(active.catalog.cpu_types),
                   "pairs (the first GPU and CPU types of the catalog)")
        if pairs.empty:
            st.caption("The catalog needs GPU and CPU types for pairs.")
        else:
            plain_view.dataframe(pairs, key="inst_pairs", column_config={
                c: st.column_config.NumberColumn(width="small") for c in pairs.columns})


def quotas(active: catalog_state.ActiveCatalog) -> None:
    st.subheader("vCPU quotas")
    off = "" if keys.QUOTAS.get() else (" Quotas are off in the sidebar: these rows bound "
                                        "nothing now.")
    st.caption(words(GLOSSARY["vCPU quotas"] + " This catalog's source says where its rows come "
                     "from." + off), help=active.catalog.source or None)
    frame = result_frames.quota_frame(active.catalog)
    unlimited = list(frame[Col.FAMILY][frame[Col.OD_VCPUS].isna()])
    if unlimited:
        st.warning(words(f"No quota row for family {', '.join(unlimited)}: unlimited, even with "
                         "quotas on."), icon=":material/warning:")
    plain_view.dataframe(frame, hide_index=True, key="inst_quotas", placeholder="unlimited")


def main() -> None:
    active = catalog_state.active_catalog()
    st.title("Instances")
    st.caption(words(f"Catalog {widgets.catalog_named(active)}"))
    for note in catalog_notes(active.catalog):
        st.info(words(note), icon=":material/info:")
    frame = compute.flopp_table(active.catalog)
    if frame.empty:
        st.subheader(words("FLOPP ranking"))
        st.warning(words("No GPU type with an eFLOPS score: nothing to rank."),
                   icon=":material/warning:")
    else:
        passing, shown = instance_filters.select(list(frame[Col.GPU]))
        if not shown:
            st.info("No GPU type passes these filters.", icon=":material/filter_alt_off:")
        else:
            flopp(active, frame, shown, len(passing))
            per_model(active)
            scaling(active, shown)
    saturation(active)
    quotas(active)


widgets.run_page(main)
