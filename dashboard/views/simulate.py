"""Simulate: every policy over a range of PW, as the paper's Fig. 3."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import (
    catalog_state,
    compute,
    formatting,
    keys,
    plain_view,
    result_frames,
    state,
    sweep_charts,
    sweep_quotas,
    typed_inputs,
    url,
    widgets,
)
from dashboard.plain_view import words
from deepvm_core.recommend.sweep import SweepResult, intervals


def paper_setup() -> None:
    """Callback: the paper's Fig. 3 (simulated catalog, quotas off, PW 0..10 step 0.1)."""
    catalog_state.select_catalog(catalog_state.SIMULATED_CATALOG)
    keys.QUOTAS.set(False)
    keys.SWEEP_RANGE.set(keys.SWEEP_RANGE.initial())
    keys.SWEEP_STEP.set(keys.SWEEP_STEP.initial())
    keys.SWEEP_NORMALISED.set(keys.SWEEP_NORMALISED.initial())


def setup_note(active: catalog_state.ActiveCatalog) -> None:
    quotas = keys.QUOTAS.get()
    is_paper = active.id == catalog_state.SIMULATED_CATALOG and not active.edited and not quotas
    if is_paper:
        st.success("This is the paper's Fig. 3 setup: the simulated catalog with quotas off "
                   "(node counts up to 256).", icon=":material/check_circle:")
        return
    with st.container(border=True):
        left, right = st.columns([0.72, 0.28], vertical_alignment="center")
        left.markdown(
            words(f"Quotas are **{'on' if quotas else 'off'}** on catalog "
                  f"**{widgets.escape_md(active.label)}**. "
                  "The paper's simulation (Fig. 3) used its simulated catalog with quotas "
                  "**off**."))
        right.button("Use the paper's Fig. 3 setup", key="sim_paper_setup",
                     icon=":material/science:", on_click=paper_setup, width="stretch")


def findings(result: SweepResult) -> None:
    found = result.findings()
    a, b, c = st.columns(3)
    a.metric("Performance objective vs paper's Z", f"+{found.mean_gain:.1%} mean",
             delta=f"up to {found.max_ratio:.2f}×", delta_color="off", delta_arrow="off",
             help="perf(performance objective) / perf(paper's Z) - 1, averaged where both exist")
    b.metric(words("Performance-First beats DeepVM (Z)"),  # at PW: the value (not cut)
             formatting.format_intervals(found.pf_beats_deepvm, "USD/h"),
             help="Grid points where Performance-First has more performance than DeepVM with the "
                  "paper's objective; the paper claims DeepVM is highest everywhere")
    c.metric(words("DeepVM-NoScale below Cost-First at PW"),
             formatting.format_intervals(found.noscale_below_cost_first, "USD/h"),
             help="The paper claims NoScale falls below Cost-First beyond about PW 2.5")


def quota_note(frame: pd.DataFrame, binds: pd.Series) -> None:
    """Where a vCPU quota binds each policy's choice, in words under the chart."""
    lines = []
    for _, part in frame.groupby("policy", sort=False):
        bound = binds.loc[part.index] != ""
        if bound.any():
            spans = formatting.format_intervals(
                intervals(part["pw_usd_per_hour"].tolist(), bound.to_numpy()), "USD/h")
            quotas = ", ".join(sorted(set(binds.loc[part.index][bound])))
            lines.append(f"- **{part['policy_label'].iloc[0]}**: at PW {spans} (quota on "
                         f"{quotas})")
    if lines:
        st.caption(words("Red crosses: a vCPU quota binds the policy's choice, so a larger PW buys "
                         "no larger cluster of that type:\n" + "\n".join(lines)))


def main() -> None:
    active = catalog_state.active_catalog()
    scenario = state.scenario()
    st.title("Simulate")
    st.caption(words(f"Catalog {widgets.catalog_named(active)} · checkpoint "
                     f"{scenario.checkpoint_gb:g} GB × buffer {scenario.buffer_checkpoints:g} · "
                     f"quotas {'on' if scenario.use_quotas else 'off'} · each policy's choice at "
                     "every PW"))
    setup_note(active)

    left, mid, right = st.columns([0.5, 0.25, 0.25], vertical_alignment="bottom")
    left.slider("PW range (USD/hour)", *url.SWEEP_SPAN, step=0.1, key=keys.SWEEP_RANGE.name,
                persist_state=keys.PERSIST)
    typed_inputs.number(mid, "PW step (USD/hour)", keys.SWEEP_STEP, *url.SWEEP_STEP_RANGE,
                        unit=" USD/hour", step=0.01, format="%.2f", note_to=st.container())
    right.toggle("Normalised", key=keys.SWEEP_NORMALISED.name, persist_state=keys.PERSIST,
                              help="Performance divided by DeepVM's (paper's Z) at the largest "
                                   "PW of the sweep, as in the paper's Fig. 3")

    (start, stop), step = keys.SWEEP_RANGE.get(), keys.SWEEP_STEP.get()
    normalised = keys.SWEEP_NORMALISED.get()
    result = compute.run_sweep(active.catalog, scenario, start, stop, step)
    frame = result_frames.sweep_frame(result)
    if normalised and result.normaliser <= 0:
        st.warning(words("DeepVM finds nothing at the largest PW, so there is nothing to normalise "
                         "by: showing absolute performance."), icon=":material/warning:")
        normalised = False
    findings(result)
    pw = scenario.pw_usd_per_hour
    binds = sweep_quotas.quota_binds(frame, active.catalog, scenario)
    plain_view.chart(sweep_charts.sweep_chart(frame, normalised=normalised, pw=pw, binds=binds),
                     key="sim_perf_chart")
    quota_note(frame, binds)
    plain_view.chart(sweep_charts.sweep_price_chart(frame, pw, binds), key="sim_price_chart")
    st.download_button(
        "Download sweep (CSV)", frame.to_csv(index=False), key="sim_csv", on_click="ignore",
        file_name=f"deepvm-sweep-{active.catalog.name}-{start:g}-{stop:g}-{step:g}.csv",
        mime="text/csv", icon=":material/download:")
    with st.expander(words(f"Sweep rows ({len(frame)})")):
        plain_view.dataframe(frame, hide_index=True, key="sim_rows")


widgets.run_page(main)
