"""Plan a job: what a training job costs in total and when it is done, with spot reclaims.

Inputs (the job, its assumptions: :mod:`dashboard.plan_inputs`) ->
:func:`deepvm_core.pipeline.plan.plan_job` (cached in :mod:`dashboard.plan_compute`) -> the
budget-holder card, the cost-vs-time frontier, the comparison table, the Monte Carlo
distribution, the speedup models, the plan's JSON and the estimate to keep (line items as
CSV, a printable summary). Calibration of the scaling fits from a measurements CSV is at the
bottom (:mod:`dashboard.plan_calibration`).
"""

from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd
import streamlit as st

from dashboard import (
    answer_view,
    catalog_state,
    charts,
    formatting,
    job_frames,
    job_view,
    keys,
    nearest,
    plain_view,
    plan_calibration,
    plan_compute,
    plan_inputs,
    price_notes,
    provenance,
    state,
    widgets,
)
from dashboard.glossary import GLOSSARY
from dashboard.plain_view import words
from deepvm_core.catalog import Catalog
from deepvm_core.errors import DeepVMError
from deepvm_core.io.line_items import (
    DEFAULT_STORAGE_GB_PER_VM,
    MAX_STORAGE_GB_PER_VM,
    line_items_csv,
    plan_line_items,
    summary_html,
)
from deepvm_core.io.plan_json import plan_summary
from deepvm_core.job.deadline_offer import DeadlineOffer
from deepvm_core.model import Scenario
from deepvm_core.pipeline.plan import JobPlanResult
from deepvm_core.pipeline.recommend_job import PlanVsRecommend
from deepvm_core.text import duration, usd, usd_per_hour
from deepvm_core.workload.speedup import SpeedupModel


def card(result: JobPlanResult, comparison: PlanVsRecommend | None,
         trace_note: str | None = None, pool_notes: tuple[str, ...] = (),
         offer: DeadlineOffer | None = None) -> None:
    """The budget holder's card: cost, finish time, the same cluster on demand and the saving,
    when it is done, how sure (and, with a deadline at risk, the deadline policy ``offer``),
    whether Recommend picks the same cluster, and why this one (and, when spot traces gave the
    figures, ``trace_note``); the plan's warnings (measurements not used, implausible measured
    speedups) at its foot."""
    with st.container(border=True, key="plan_card"):
        _card_body(result, comparison, offer)
        if trace_note and result.chosen is not None:
            st.markdown(words(trace_note), help="Map traces to pools on the Spot markets page.")
        for note in pool_notes:  # a mapped pool's type that took no part: said
            st.caption(words(note))
        for warning in result.warnings:
            st.warning(words(warning), icon=":material/warning:")


def estimate_to_keep(result: JobPlanResult, catalog: Catalog,
                     comparison: PlanVsRecommend | None) -> None:
    """The chosen plan's line items as a CSV and a page to print or save as PDF (issue 27),
    from the card's numbers (:mod:`deepvm_core.io.line_items`), with the storage per VM an
    input."""
    if result.chosen is None:
        return
    storage = st.number_input(
        "Storage per VM in the estimate, GB", min_value=0.0, max_value=MAX_STORAGE_GB_PER_VM,
        value=DEFAULT_STORAGE_GB_PER_VM, step=10.0, key="plan_storage_gb",
        help="Each VM's EBS gp3 volume, priced beside the plan's cost (0: none).")
    try:
        items = plan_line_items(result.chosen, catalog, storage_gb_per_vm=storage)
    except DeepVMError as exc:
        st.caption(words(f"No estimate to download: {exc}"))
        return
    sentences = (plan_summary(result, catalog),
                 *((comparison.sentence,) if comparison is not None else ()),
                 result.chosen.odds)
    left, right = st.columns(2)
    left.download_button("Download estimate (CSV)", line_items_csv(items),
                         file_name=f"deepvm-estimate-{catalog.name}.csv", mime="text/csv",
                         icon=":material/table:", key="plan_estimate_csv")
    right.download_button("Download summary (print or save as PDF)",
                          summary_html(f"Job plan on {catalog.name}",
                                       tuple(s for s in sentences if s), items),
                          file_name=f"deepvm-summary-{catalog.name}.html", mime="text/html",
                          icon=":material/print:", key="plan_summary_html")


def job_line(result: JobPlanResult) -> None:
    """The job in the workload's words (:meth:`Workload.describe`), and a transformer job's
    checkpoint size f when it is the job's own."""
    workload = result.workload
    st.markdown(words(f"**Your job:** {workload.describe(result.assumptions.reference_gpu)}."))
    if workload.kind == "transformer" and job_view.checkpoint_is_the_jobs():
        st.caption(words(f"Checkpoints of {workload.checkpoint_gb:,.1f} GB, the job's own "
                         "(trainable weights and optimizer states); the sidebar's checkpoint size "
                         "replaces it once changed."))


def memory_expander(result: JobPlanResult, expanded: bool = False) -> None:
    """Why GPU types are out for a transformer job's GPU memory, one line each."""
    out = job_frames.memory_out(result)
    if not out:
        return
    with st.expander(words(f"Why {len(out)} of the {len(result.assumptions.gpu_types)} GPU types "
                           "cannot run this job (GPU memory)"), expanded=expanded):
        st.markdown(words("\n".join(f"- **{gpu}**: {why}" for gpu, why in out)))


def _no_cluster(result: JobPlanResult) -> None:
    st.markdown("#### No cluster fits this job")
    job_line(result)
    widgets.gpu_filter_line(result.scenario.gpu_filter)
    why = result.explanation
    if why is not None:
        st.error(words(why.summary), icon=":material/block:")
        first = why.cheapest_configuration
        if why.cheapest_feasible_usd_per_hour is not None and first is not None:
            fits = " the job fits on" if result.workload.kind == "transformer" else " that fits"
            st.markdown(words(f"Lift PW to **{usd_per_hour(why.cheapest_feasible_usd_per_hour)}** "
                              f"for the first cluster{fits}: {first.describe()}."))
        if {"deadline", "job_budget"} & set(why.binding):
            st.markdown("**The nearest clusters** (expected to finish):")
            plain_view.dataframe(nearest.nearest_frame(result), hide_index=True,
                                 key="plan_nearest")
    memory_expander(result)


def _use_policy(policy: str) -> None:
    keys.SPOT_RECOVERY.set(policy)


def deadline_offer(offer: DeadlineOffer) -> None:
    """The deadline offer (issue 26): its sentence, the offered policy's numbers, every policy
    considered; on traces, a button that replans the pools with the policy offered (the
    planner's recovery policy, Spot markets)."""
    with st.container(key="plan_deadline_offer"):
        st.markdown(words(f":material/schedule: {offer.sentence()}"))
        o = offer.offer
        if o is not None:
            cost, p90, share = st.columns(3)
            cost.metric(words(f"Expected cost ({o.policy})"), usd(o.mean_cost_usd))
            p90.metric(words("P90 cost"), usd(o.cost_usd_p90))
            share.metric("Hours on demand", f"{o.on_demand_share:.0%}",
                         help="Share of the cluster's running hours bought on demand.")
        st.caption(words("Deadline policies considered: " + "; ".join(offer.lines()) + "."))
        if o is not None and offer.on_traces:
            st.button(f"Plan the pools with {o.policy}", key="plan_use_offer",
                      on_click=_use_policy, args=(o.policy,),
                      icon=":material/published_with_changes:")


def _card_body(result: JobPlanResult, comparison: PlanVsRecommend | None,
               offer: DeadlineOffer | None) -> None:
    chosen = result.chosen
    if chosen is None:
        _no_cluster(result)
        return
    mc = chosen.monte_carlo
    epochs = f"{result.workload.epochs:g} epoch{'s' if result.workload.epochs != 1 else ''}"
    cost = f"about **{usd(chosen.expected_cost_usd)}**"
    hours = f"done in about **{duration(chosen.expected_makespan_hours)}**"
    if mc is not None:
        cost += f" (P90 {usd(mc.cost_usd_p90)})"
        hours += f" (P90 {duration(mc.makespan_hours_p90)})"
    events = chosen.expected_interruptions
    st.caption(words(f"YOUR JOB · GOAL: {result.goal.upper()}"))
    st.markdown(words(f"### {epochs} of your job: {cost}, {hours}, "
                      f"{events:.1f} interruption{'s' if round(events, 1) != 1 else ''} expected"))
    job_line(result)
    widgets.gpu_filter_line(result.scenario.gpu_filter)
    config = chosen.configuration
    left, right = st.columns([0.55, 0.45], gap="large")
    left.markdown(words(f"**{widgets.headline(config)}**\n\n{widgets.cluster_lines(config)}"))
    a, b = right.columns(2)
    # the units in the labels: a value with its unit was cut in the narrow column (issue 27)
    a.metric("Hourly price (USD/h)", f"{config.hourly_price_usd:,.2f}")
    b.metric("Epoch time (s)", f"{chosen.epoch_seconds:,.1f}",
             help="Seconds per epoch on this cluster under the speedup model.")
    if mc is not None and mc.deadline_probability is not None:
        right.markdown(words(f"Chance to meet the {result.deadline_hours:g} h deadline: "
                             f"**{mc.deadline_probability:.0%}**"))
    if offer is not None:
        deadline_offer(offer)
    answer_view.budget_lines(chosen)
    price_notes.zone_caption(catalog_state.active_catalog().catalog, config,
                             result.pw_usd_per_hour, "plan_zone")
    if comparison is not None:
        answer_view.comparison_sentence(comparison.sentence, comparison.same)
    if state.presentation():
        return
    why = [f"Checkpoints every {chosen.checkpoint_interval_seconds:,.0f} s of compute "
           f"({chosen.checkpoints:,.0f} in all, {chosen.checkpoint_stall_seconds:.1f} s "
           "each)."]
    deepvm = result.policies.deepvm[0] if result.policies.deepvm else None
    if deepvm is not None and deepvm.does_not_finish is not None:
        why.insert(0, f"The paper's DeepVM pick ({deepvm.configuration.describe()}) "
                      f"{deepvm.does_not_finish}.")
    elif deepvm is not None and deepvm.index != chosen.index:
        ratio = deepvm.expected_cost_usd / chosen.expected_cost_usd
        why.insert(0, f"The paper's DeepVM pick ({deepvm.configuration.describe()}) would "
                      f"cost {usd(deepvm.expected_cost_usd)} ({ratio:.1f}× as much) "
                      f"and take {duration(deepvm.expected_makespan_hours)}.")
    st.markdown(words(" ".join(why)))
    memory_expander(result)


#: The comparison table's columns: short headers and fixed widths (px) so that all of it fits
#: the main column at a 1440 px wide window (issue 20 item 17); the help says the rest.
COMPARISON_COLUMNS = {
    "": st.column_config.TextColumn(width=195),
    "Configuration": st.column_config.TextColumn(width=245),
    "USD/h": st.column_config.NumberColumn(format=formatting.TABLE_USD_PER_HOUR, width=58),
    "Epoch s": st.column_config.NumberColumn(format="%.1f", width=62,
                                             help="Seconds per epoch on this cluster"),
    "Expected makespan": st.column_config.TextColumn("Time", width=62,
                                                     help="Expected makespan"),
    "P10–P90 makespan": st.column_config.TextColumn(
        "Time P10–P90", width=100, help="Makespan of the Monte Carlo runs, P10 to P90"),
    "Expected USD": st.column_config.NumberColumn("USD", format=formatting.TABLE_USD, width=55,
                                                  help="Expected job cost, USD"),
    "P10–P90 USD": st.column_config.TextColumn(
        width=90, help="Job cost of the Monte Carlo runs, P10 to P90"),
    "Events": st.column_config.NumberColumn(format="%.2f", width=52,
                                            help="Expected interruptions"),
    "Checkpoint every (s)": st.column_config.NumberColumn(
        "Ckpt s", format="%.0f", width=55, help="Seconds of compute between checkpoints"),
}


def comparison(result: JobPlanResult) -> None:
    """The top-k and the paper's policies side by side, as ``sky bench show`` does; a warning
    names those not expected to finish."""
    frame = job_frames.plan_comparison_frame(result)
    for reason, labels in job_frames.unfinished(frame).items():
        st.warning(words(f"{', '.join(labels)}: {reason}."), icon=":material/hourglass_disabled:")
    if (frame["Finishes?"] == "yes").all():  # else the warnings above say which do not
        frame = frame.drop(columns="Finishes?")
    plain_view.dataframe(frame, hide_index=True, key="plan_table", column_config=COMPARISON_COLUMNS)


def frontier(result: JobPlanResult) -> None:
    points = plan_compute.frontier_points(result, charts.MAX_CLOUD_POINTS)
    if points.finishing == 0:
        st.warning(words(f"None of the {result.size:,} feasible clusters is expected to finish "
                         "this job: there is no cost-vs-time frontier to draw."),
                   icon=":material/hourglass_disabled:")
        return
    frame = job_frames.frontier_frame(result, points.shown)
    plain_view.chart(charts.frontier_chart(frame, list(points.frontier), points.marks,
                                          result.size), key="plan_frontier")
    never = result.size - points.finishing
    left_out = (f" {never:,} cluster{'s are' if never != 1 else ' is'} not expected to finish "
                "and left out." if never else "")
    st.caption(words(f"{GLOSSARY['Pareto frontier']} Showing {len(points.shown):,} of "
                     f"{result.size:,} feasible clusters (the frontier and the marked ones always)."
                     f"{left_out}"))


def distribution(result: JobPlanResult, catalog: Catalog, speedup: SpeedupModel) -> None:
    chosen = result.chosen
    if chosen is None or result.trials == 0:
        return
    samples = plan_compute.job_samples(catalog, result, speedup, chosen.index, result.trials,
                                       result.seed)
    left, right = st.columns([0.6, 0.4])
    plain_view.chart(charts.distribution_chart(pd.Series(samples.makespan_hours[0]),
                                                result.deadline_hours), key="plan_cdf", to=left)
    mc = chosen.monte_carlo
    if mc is not None:
        right.markdown(
            words(f"**{mc.trials:,} simulated runs** of the chosen cluster (seed "
                  f"{result.seed}):\n\n- makespan P10 / P50 / P90: "
                  f"{duration(mc.makespan_hours_p10)} / {duration(mc.makespan_hours_p50)} / "
                  f"{duration(mc.makespan_hours_p90)}\n"
                  f"- cost P10 / P50 / P90: {usd(mc.cost_usd_p10)} / "
                  f"{usd(mc.cost_usd_p50)} / {usd(mc.cost_usd_p90)}\n"
                  "- interruptions per run: "
                  f"{mc.mean_interruptions:.2f} on average"))


def speedups(catalog: Catalog, speedup: SpeedupModel, chosen: str | None) -> None:
    curves, points = job_frames.speedup_frames(catalog, speedup, chosen)
    if curves.empty:
        st.caption("No measurements for this catalog's GPU types: upload some below.")
        return
    plain_view.chart(charts.speedup_chart(curves, points, chosen), key="plan_speedups")



def gpu_assumptions(result: JobPlanResult) -> None:
    """The plan's assumptions per GPU type (with a transformer job's GPU memory fit)."""
    transformer = result.workload.kind == "transformer"
    title = ("Per GPU type: MTBI, speed and GPU memory" if transformer else
             "Per GPU type: MTBI and speed")
    with st.expander(words(title), expanded=False):
        plain_view.dataframe(job_frames.gpu_assumptions_frame(result), hide_index=True,
                             key="plan_gpu_assumptions", column_config={
                                 "MTBI (h)": st.column_config.NumberColumn(format="%g"),
                                 "One-VM epoch (s)": st.column_config.NumberColumn(format="%.1f")})


def main() -> None:
    active = catalog_state.active_catalog()
    keys.PLAN_ACTIVE.set(True)
    scenario: Scenario = job_view.scenario_for_job(state.scenario())
    st.title("Plan a job")
    st.caption(words("From price per hour to the cost and time of a whole training job, with spot "
                     "interruptions. Estimates are exact expectations of the job model (Method "
                     "page), with a Monte Carlo run for the spread."))
    answer_slot = st.container()  # the answer first (above the fold), the inputs below it
    plan_inputs.job_widgets(active.catalog)
    plan_inputs.assumptions(active.catalog)
    try:
        inputs = job_view.job_inputs(active.catalog, scenario, keys.TOP_K.get())
        result = job_view.plan(active.catalog, scenario, inputs)
    except DeepVMError as exc:
        answer_slot.error(words(f"Cannot plan this job: {exc}"), icon=":material/error:")
        plan_calibration.calibrate(active)
        return
    versus = job_view.recommend_comparison(active.catalog, scenario, inputs, result)
    offer = plan_compute.deadline_offer(active.catalog, result,
                                        job_view.session_pools(active.catalog))
    with answer_slot:
        card(result, versus, job_view.trace_note(result, active.catalog),
             job_view.unused_pool_notes(result, active.catalog), offer)
        if result.chosen is not None:  # its epoch time scales with eFLOPS and the scaling curve
            gpu = provenance.gpu_of(active.catalog, result.chosen.configuration.gpu)
            if gpu is not None:
                provenance.gpu_sources_caption(gpu)
    for note in result.notes:
        st.info(words(note), icon=":material/info:")
    gpu_assumptions(result)
    if result.chosen is None:  # issue 20 item 18: no plan to download
        st.caption("The plan's download appears once a cluster fits the job.")
    else:
        text = price_notes.zoned_export(
            plan_compute.plan_text(result, active.catalog, datetime.now(UTC), versus, offer),
            active.catalog, result.chosen.configuration, inputs.pw)
        st.download_button("Download plan (JSON)", text,
                           file_name=f"deepvm-plan-{active.catalog.name}.json",
                           mime="application/json", icon=":material/download:",
                           key="plan_download")
        estimate_to_keep(result, active.catalog, versus)
    if result.size:
        frontier(result)
        st.subheader("The best clusters and the paper's policies")
        comparison(result)
        distribution(result, active.catalog, inputs.speedup)
    st.subheader("Speedup models")
    speedups(active.catalog, inputs.speedup,
             result.chosen.configuration.gpu if result.chosen is not None else None)
    plan_calibration.calibrate(active)


widgets.run_page(main)
