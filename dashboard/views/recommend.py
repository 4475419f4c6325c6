"""Recommend: the best configuration for the sidebar's scenario, its rivals, and the export."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime

import streamlit as st

from dashboard import (
    alternatives,
    answer,
    answer_view,
    catalog_state,
    compute,
    formatting,
    job_view,
    keys,
    launch_panel,
    plain_view,
    price_notes,
    provenance,
    state,
    url_pages,
    widgets,
)
from dashboard.glossary import GLOSSARY
from dashboard.plain_view import words
from deepvm_core.catalog import Catalog
from deepvm_core.io.export import export_file_name
from deepvm_core.model import ARCHITECTURE_LABELS, Configuration, Objective, Scenario
from deepvm_core.pipeline.finishing import FinishingAnswer
from deepvm_core.pipeline.plan import JobPlanResult, PlanEstimate
from deepvm_core.recommend.explain import Explanation
from deepvm_core.recommend.recommendation import Recommendation
from deepvm_core.text import usd_per_hour


def infeasible(rec: Recommendation) -> None:
    """Nothing is feasible: the core's explanation, and a way out when raising PW helps."""
    explanation = rec.explanation
    if explanation is None:
        return
    with st.container(border=True, key="rec_card"):
        st.markdown("#### Nothing is feasible for this scenario")
        widgets.gpu_filter_line(rec.scenario.gpu_filter)
        st.error(words(explanation.summary), icon=":material/block:")
        st.markdown(words("Binding constraint: " + " ".join(
            f":red-badge[{b.replace('_', ' ')}]" for b in explanation.binding)))
        price = explanation.cheapest_feasible_usd_per_hour
        if price is not None:
            pw = math.ceil(price * 100) / 100
            st.markdown(words(f"Cheapest feasible cluster: **{usd_per_hour(price)}**"))
            st.button(f"Raise PW to {pw:.2f} USD/h", key="rec_raise_pw", icon=":material/north:",
                      on_click=state.set_number, args=("pw", pw))
        elif explanation.cheapest_configuration is not None:
            st.caption(words("Without quotas: " + explanation.cheapest_configuration.describe()))


def not_finishing(verdict: FinishingAnswer) -> None:
    """The job does not finish on the cluster shown: the core's sentence and the way out (the
    best cluster that finishes, or the PW that would allow one)."""
    with st.container(border=True, key="rec_not_finishing"):
        st.warning(words(verdict.sentence or ""), icon=":material/block:")
        if verdict.pick_rank is not None:
            st.button(f"Show #{verdict.pick_rank}, the best on which the job finishes",
                      key="rec_show_finishing", icon=":material/check:",
                      on_click=keys.REC_CHOSEN.set, args=(verdict.pick_rank - 1,))
        elif verdict.lift_pw_usd_per_hour is not None:
            st.button(f"Lift PW to {verdict.lift_pw_usd_per_hour:.2f} USD/h",
                      key="rec_lift_pw", icon=":material/north:", on_click=state.set_number,
                      args=("pw", verdict.lift_pw_usd_per_hour))


def architecture_box(name: str, best: Configuration | None, note: Explanation | None,
                     objective: Objective) -> None:
    with st.container(border=True):
        st.markdown(words(f"**Best {ARCHITECTURE_LABELS[name]}**"))
        if best is None:
            st.warning(words(note.summary if note else "None feasible."), icon=":material/block:")
            return
        st.markdown(words(widgets.cluster_lines(best)))
        speed = best.speed_epochs_per_hour
        line = (f"{usd_per_hour(best.hourly_price_usd)} · "
                + (f"performance {best.performance:,.0f}" if objective == "paper" or speed is None
                   else f"{speed:,.2f} epochs of the job per hour"))
        if not state.presentation():
            line += (f" · K(n) {best.scaling_factor:.3f} · objective "
                     f"{formatting.si(best.objective_value(objective))}")
        st.markdown(words(line))


def lowered(text: str) -> str:
    """``text`` starting with a small letter (after a label and a colon)."""
    return text[:1].lower() + text[1:]


def choose(rec: Recommendation) -> Configuration:
    """The configuration the card shows and the export calls "chosen" (default: #1).

    The labels are ranks ("#1"), stable while PW moves; the card shows the details."""
    count = len(rec.deepvm)
    chosen = keys.REC_CHOSEN.get()
    if not isinstance(chosen, int) or not 0 <= chosen < count:
        keys.REC_CHOSEN.set(0)
    st.markdown("**Configuration to show and export**",
                help="One of the top-k (see the table below); the JSON marks it 'chosen'.")
    index = st.radio("Configuration to show and export", range(count), key=keys.REC_CHOSEN.name,
                     format_func=lambda i: f"#{i + 1}", horizontal=True,
                     label_visibility="collapsed")
    return rec.deepvm[index]


def download(rec: Recommendation, active: catalog_state.ActiveCatalog,
             chosen: Configuration | None, the: job_view.SessionJob) -> str:
    """The download button; returns the JSON text it serves (with the job's estimate once a
    job is set on Plan a job, as ``deepvm recommend --epochs ...`` writes it)."""
    base = active.source if active.edited else None
    text = compute.export_text(rec, active.catalog, chosen, datetime.now(UTC), base)
    text = price_notes.zoned_export(text, active.catalog, chosen or rec.best,
                                    rec.scenario.pw_usd_per_hour)
    if the.inputs is not None and the.job is not None:
        text = compute.export_with_job(text, rec, active.catalog, the.job)
    st.download_button("Download configuration (JSON)", text, key="rec_download",
                       file_name=export_file_name(active.catalog, base=base,
                                                  pw_usd_per_hour=rec.scenario.pw_usd_per_hour),
                       mime="application/json", on_click="ignore", type="primary",
                       icon=":material/download:", width="stretch")
    return text


#: Height of the JSON preview (px): it scrolls inside instead of growing the page by 7,000 px
#: (issue 20 item 17).
PREVIEW_HEIGHT_PX = 420


def preview(rec: Recommendation, active: catalog_state.ActiveCatalog, text: str) -> None:
    """The export's text, drawn only while its expander is open: st.code's highlighter is 1.5 MB
    of JavaScript that would otherwise load and compile with the page (issue 9, first load)."""
    box = st.expander("What the JSON holds (preview)", key="rec_preview", on_change="rerun")
    if not box.open:
        return
    with box:
        st.caption(words(f"Inputs, catalog **{active.catalog.name}** (sha256 "
                         f"`{rec.catalog_sha256[:16]}…`), the chosen configuration with its price "
                         "and performance, every policy's choice, tool version and time: the "
                         "schema of `deepvm recommend --format json`."))
        st.code(text, language="json", height=PREVIEW_HEIGHT_PX)


def launch(text: str, catalog: Catalog) -> None:
    """Issue 10: the EC2 Fleet requests of the exact JSON the download button serves (AWS
    catalogs only: a simulated catalog has nothing to launch)."""
    if catalog.provider != "aws":
        return
    box = st.expander("Launch on AWS", icon=":material/rocket_launch:", key="rec_launch",
                      on_change="rerun")
    if box.open:  # drawn on demand, like the preview
        with box:
            launch_panel.render_launch_panel(json.loads(text), export_text=text)


def policies(rec: Recommendation) -> None:
    from dashboard import (
        charts,  # pandas and plotly: after the card (issue 9, first load)
        result_frames,
    )
    from dashboard.columns import Col

    st.subheader("Policies side by side")
    if state.presentation():
        st.caption(words("DeepVM under both objectives and the paper's baseline policies."))
    else:
        st.caption(words("DeepVM with the paper's objective Z and with the performance objective, "
                         "DeepVM-NoScale (Z with K = 1) and the paper's two Single Anchor "
                         "baselines (hover over a column header for its meaning)."))
    pw = rec.scenario.pw_usd_per_hour
    frame = result_frames.policy_frame(rec.compared, pw)
    plain_view.dataframe(widgets.presented(frame), hide_index=True,
                         column_config=widgets.number_columns(), key="rec_policies")
    left, right = st.columns(2)
    plain_view.chart(charts.policy_bars(frame, Col.PERF, "Performance: relative throughput "
                                         "(eFLOPS × n × K)", axis=charts.PERFORMANCE_AXIS),
                      key="rec_perf_chart", to=left)
    plain_view.chart(charts.price_dots(frame, pw=pw),
                     key="rec_price_chart", to=right)


def job_card_lines(rec: Recommendation, chosen: Configuration, the: job_view.SessionJob,
                   catalog: Catalog) -> tuple[PlanEstimate | None, JobPlanResult | None]:
    """Inside the card, the answer a budget holder reads above the fold (issue 27): the job's
    cost and time on the chosen cluster, the on-demand comparison, when it is done and how
    sure; then the zone's price note and, once a job is set, whether Plan a job's answer (same
    scenario, its goal) is this cluster, and why not. Returns the estimate and the plan for
    the job panel."""
    if the.job is None:
        price_notes.zone_caption(catalog, chosen, rec.scenario.pw_usd_per_hour, "rec_zone")
        return None, None
    estimate = compute.job_estimate(catalog, rec, the.job, chosen)
    answer_view.budget_lines(estimate, with_job_line=True, epochs=the.job.workload.epochs,
                             whose=the.whose)
    price_notes.zone_caption(catalog, chosen, rec.scenario.pw_usd_per_hour, "rec_zone")
    if the.inputs is None:
        return estimate, None
    result = job_view.plan(catalog, rec.scenario, the.inputs)
    if the.inputs.pw is not None:
        comparison = compute.plan_vs_recommend(result, rec, catalog, the.job)
        answer_view.comparison_sentence(comparison.sentence, comparison.same)
    return estimate, result


def job_panel(estimate: PlanEstimate, the: job_view.SessionJob,
              result: JobPlanResult | None, rec: Recommendation,
              chosen: Configuration) -> None:
    """Under the card: whose numbers they are (the example job's, with a link to set yours);
    once a job is set, its cost and time on the top-k and the baselines."""
    del estimate  # its lines are in the card
    if the.inputs is None:
        st.caption(words(f"These numbers are the example job's, {answer.EXAMPLE_JOB}."))
        st.page_link(url_pages.PAGE_BY_SLUG["plan"].file, label="Set your job on Plan a job",
                     icon=":material/schedule:")
    if result is not None:
        job_view.recommend_panel(result, [chosen, *(c for c in rec.deepvm if c != chosen)], {
            "Cost-First": rec.cost_first, "Performance-First": rec.performance_first,
            "DeepVM-NoScale": rec.deepvm_noscale})


def top_k(rec: Recommendation) -> None:
    """The top-k as a person reads it: distinct clusters, memory-node variants folded."""
    from dashboard import answer_frames  # pandas: after the card (issue 9, first load)

    objective = ("" if state.presentation() else
                 f" (objective: {state.OBJECTIVE_LABELS[rec.scenario.objective]})")
    clusters = rec.distinct or tuple(answer_frames.single(c) for c in rec.deepvm)
    st.subheader(words(f"Top {len(clusters)} clusters{objective}"))
    frame = answer_frames.distinct_frame(clusters, rec.scenario.pw_usd_per_hour,
                                         rec.scenario.objective)
    plain_view.dataframe(widgets.presented(frame), hide_index=True,
                         column_config=widgets.number_columns(), key="rec_top_k")
    st.caption("Clusters that differ only in the memory-node type are one row: the cheapest "
               "is named first, the others in brackets.")


def show_notes(rec: Recommendation) -> None:
    """The core's notes (types left out, assumptions), after the answer and folded: they
    qualify it but are not it (issue 27: an info box on Trainium was the first thing read)."""
    if not rec.notes:
        return
    with st.expander(words(f"Notes on this answer ({len(rec.notes)})"), icon=":material/info:"):
        for note in rec.notes:  # the core's notes read as sentences here
            st.info(words(note[:1].upper() + note[1:]), icon=":material/info:")


def main() -> None:
    page(catalog_state.active_catalog(), job_view.scenario_for_job(state.scenario()))


def page(active: catalog_state.ActiveCatalog, scenario: Scenario) -> None:
    """The page for ``scenario``: its recommendation, built once (with the session's job and
    that job's speed basis), then everything drawn from the recommendation (which carries its
    scenario)."""
    st.title("Recommend")
    widgets.scenario_caption(active, scenario)
    the = job_view.session_job(active.catalog, scenario, keys.TOP_K.get())
    if the.problem:
        st.warning(words(the.problem), icon=":material/warning:")
    rec = compute.job_recommendation(active.catalog, scenario, keys.SOLVER.get(),
                                     keys.TOP_K.get(), the.job)
    card = st.container()  # the answer first; what to show and download under it (issue 27)
    pick, action = st.columns([0.7, 0.3], vertical_alignment="bottom")
    if rec.best is None:  # issue 20 item 18: nothing to download, preview or launch
        infeasible(rec)
        st.caption("Download, preview and Launch on AWS appear once a configuration is "
                   "feasible.")
    else:
        with pick:
            chosen = choose(rec)
        with action:
            text = download(rec, active, chosen, the)
        rank = rec.deepvm.index(chosen) + 1
        found: list[tuple[PlanEstimate | None, JobPlanResult | None]] = []
        verdict = None if the.job is None else compute.finishing(active.catalog, rec, the.job,
                                                                  chosen)
        heading = f"RECOMMENDED CONFIGURATION · #{rank} OF {len(rec.deepvm)}"
        with card:
            if verdict is not None and not verdict.finishes:
                heading = (f"#{rank} OF {len(rec.deepvm)} · NOT RECOMMENDED: THE JOB IS NOT "
                           "EXPECTED TO FINISH ON IT")
                not_finishing(verdict)
            widgets.configuration_card(
                chosen, rec.scenario.pw_usd_per_hour, rec.scenario.objective, heading,
                presentation=state.presentation(),
                below=lambda: found.append(job_card_lines(rec, chosen, the, active.catalog)),
                gpu_filter=scenario.gpu_filter)
            gpu = provenance.gpu_of(active.catalog, chosen.gpu)
            if gpu is not None:
                provenance.gpu_sources_caption(gpu)
        estimate, result = found[0] if found else (None, None)
        if estimate is not None:
            job_panel(estimate, the, result, rec, chosen)
        alternatives.render_why(rec, chosen, active.catalog, state.presentation())
        show_notes(rec)
        preview(rec, active, text)
        launch(text, active.catalog)
    if rec.best is None:
        show_notes(rec)

    if rec.deepvm:
        top_k(rec)

    st.subheader(words("Single Anchor vs Tiering"))
    st.caption(words(f"Single Anchor: {lowered(GLOSSARY['Single Anchor (SA)'])} "
                     f"Tiering: {lowered(GLOSSARY['Tiering (TR)'])}"))
    left, right = st.columns(2)
    for column, name, best in ((left, "single_anchor", rec.best_single_anchor),
                               (right, "tiering", rec.best_tiering)):
        with column:
            architecture_box(name, best, rec.architecture_notes.get(name),
                             rec.scenario.objective)

    if rec.best is not None:
        policies(rec)


widgets.run_page(main)
