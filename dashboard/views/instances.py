"""Instances: FLOPP ranking (stage 2), scaling curves and the network-saturation table."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from dashboard import charts, compute, keys, provenance, result_frames, state, widgets
from dashboard.columns import Col
from deepvm_core.recommend.recommendation import catalog_notes

#: Most GPU types drawn on a chart, and most rows or columns of the pair table: a real region
#: has a few dozen GPU types, a catalog may have up to 1,000 (the core's limit).
CHART_TYPES = 30
PAIR_TABLE = 40


def shown_note(shown: int, total: int, what: str) -> None:
    if shown < total:
        st.caption(f"Showing {shown} of {total:,} {what}.")


def flopp(active: state.ActiveCatalog) -> None:
    st.subheader("FLOPP ranking")
    st.caption("Stage 2: eFLOP per USD, SPFP = eFLOPS / spot price × 3600 and ODFP = eFLOPS / "
               "on-demand price × 3600. Click a column header to sort.")
    frame = compute.flopp_table(active.catalog)
    if frame.empty:
        st.warning("No GPU type with an eFLOPS score: nothing to rank.", icon=":material/warning:")
        return
    st.plotly_chart(charts.flopp_bars(frame.head(CHART_TYPES)), key="inst_flopp_chart")
    shown_note(min(len(frame), CHART_TYPES), len(frame), "GPU types on the chart (best spot "
               "FLOPP first); the table has them all")
    n = st.column_config.NumberColumn
    st.dataframe(frame, hide_index=True, key="inst_flopp_table", column_config={
        Col.SPOT_FLOPP: n(format="compact", help="eFLOP per USD on spot"),
        Col.OD_FLOPP: n(format="compact", help="eFLOP per USD on demand"),
        Col.SPOT_PRICE: n(format="%.4f"), Col.OD_PRICE: n(format="%.4f"),
        Col.SPOT_RANK: n(format="%d"), Col.OD_RANK: n(format="%d")})


def scaling(active: state.ActiveCatalog) -> None:
    st.subheader("Scaling factor")
    st.caption("K(n) = 1 up to the inflection point b of the fitted speedup S(n) = c / (1 + "
               "exp(-a (n - b))), then S(n) / L(n) with L the tangent at b. The effective "
               "speedup n·K(n) is what a cluster of n GPU VMs delivers; diamonds mark n = b.")
    n_max = st.columns([0.4, 0.6])[0].slider("Largest n shown", 8, 256, step=4,
                                             key=keys.INSTANCES_N_MAX.name)
    best = set(compute.flopp_table(active.catalog)[Col.GPU].head(CHART_TYPES))
    shown = replace(active.catalog, gpu_types=tuple(
        g for g in active.catalog.gpu_types if g.name in best))
    curves = result_frames.scaling_frame(shown, n_max)
    fits = result_frames.inflection_frame(shown)
    shown_note(len(shown.solvable_gpu_types), len(active.catalog.solvable_gpu_types),
               "GPU types (best spot FLOPP first)")
    if curves.empty:
        st.warning("No GPU type with an eFLOPS score.", icon=":material/warning:")
        return
    left, right = st.columns(2, gap="medium")
    left.plotly_chart(charts.scaling_chart(curves, fits, Col.K, "Scaling factor K(n)"),
                      key="inst_k_chart")
    right.plotly_chart(charts.scaling_chart(curves, fits, Col.SPEEDUP,
                                            "Effective speedup n·K(n)", ideal=True),
                       key="inst_speedup_chart")
    with st.expander("Fitted parameters (a, b, c)"):
        st.dataframe(fits, hide_index=True, key="inst_fits")


def saturation(active: state.ActiveCatalog) -> None:
    st.subheader("Network saturation")
    st.caption("A memory node serves fewer than n_sat GPU VMs, read from the table at bw = "
               "min(BW(GPU), BW(CPU)) (the entry of the largest bandwidth <= bw). Tiering "
               "therefore needs m = floor(n / n_sat) + 1 memory nodes.")
    left, right = st.columns([0.25, 0.75], gap="medium")
    with left:
        st.markdown("**Measured table**")
        st.dataframe(result_frames.saturation_frame(active.catalog), hide_index=True,
                     key="inst_saturation")
    with right:
        st.markdown("**n_sat per pair** (GPU type × memory node type)")
        pairs = compute.pair_table(active.catalog, PAIR_TABLE)
        shown_note(pairs.size, len(active.catalog.gpu_types) * len(active.catalog.cpu_types),
                   "pairs (the first GPU and CPU types of the catalog)")
        if pairs.empty:
            st.caption("The catalog needs GPU and CPU types for pairs.")
        else:
            st.dataframe(pairs, key="inst_pairs", column_config={
                c: st.column_config.NumberColumn(width="small") for c in pairs.columns})


def main() -> None:
    active = state.active_catalog()
    st.title("Instances")
    st.caption(f"Catalog **{active.label}** ({active.catalog.region}, "
               f"{provenance.prices_age(active.catalog)})")
    for note in catalog_notes(active.catalog):
        st.info(note, icon=":material/info:")
    flopp(active)
    scaling(active)
    saturation(active)


widgets.run_page(main)
