"""Plan a job: what a training job costs in total and when it is done, with spot reclaims.

Inputs (the job, its assumptions) -> :func:`deepvm_core.job.plan_job` (cached in
:mod:`compute`) -> the budget-holder card, the cost-vs-time frontier, the comparison table, the
Monte Carlo distribution, the speedup models, and the plan's JSON. Calibration of the scaling
fits from a measurements CSV is at the bottom.
"""

from __future__ import annotations

import hashlib
import math
from datetime import UTC, datetime

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from dashboard import (
    answer,
    answer_view,
    charts,
    compute,
    formatting,
    job_frames,
    job_view,
    keys,
    nearest,
    price_notes,
    provenance,
    state,
    typed_inputs,
    uploads,
    url,
    widgets,
)
from dashboard.glossary import GLOSSARY
from deepvm_core.catalog import Catalog
from deepvm_core.errors import DeepVMError
from deepvm_core.model import Scenario
from deepvm_core.pipeline.plan import GOALS, JobPlanResult
from deepvm_core.pipeline.recommend_job import PlanVsRecommend
from deepvm_core.units import MINUTES_PER_HOUR
from deepvm_core.workload.speedup import SpeedupModel
from deepvm_core.workload.workload import (
    MAX_CHECKPOINT_FIXED_SECONDS,
    MAX_RESTART_HOURS,
    MAX_WAIT_HOURS,
)

MTBI_SCALES = (0.25, 0.5, 1.0, 2.0, 4.0)
SPEEDUP_LABELS = {"fitted": "Fitted logistic (default)", "measured": "Measured points",
                  "paper": "Paper's n·K(n)"}
GOAL_LABELS = {"cheapest": "Cheapest job", "fastest": "Fastest job"}


# ----------------------------------------------------------------------------- inputs


#: The core's bounds on R, W and δ0 (:mod:`deepvm_core.workload.workload`) in the inputs' units: a
#: typed value past them is refused next to the input (a URL's value is kept, and the plan's
#: error names the bound, issue 16).
TYPED_HIGH = {"restart_min": MAX_RESTART_HOURS * MINUTES_PER_HOUR,
              "wait_min": MAX_WAIT_HOURS * MINUTES_PER_HOUR,
              "ckpt_fixed_s": MAX_CHECKPOINT_FIXED_SECONDS}


def _number(column: DeltaGenerator, name: str, label: str, *, step: float, fmt: str = "%g",
            help: str | None = None, unit: str = "") -> None:
    """The number input of the job's input ``name`` (its key is ``keys.PLAN[name]``); a typed
    value outside its bounds is refused in words (:mod:`dashboard.typed_inputs`)."""
    p = url.PLAN_PARAM_BY_NAME[name]
    high = min(p.high, TYPED_HIGH.get(name, math.inf))
    if p.kind == "int":
        typed_inputs.number(column, label, keys.PLAN[name], p.low, high, unit=unit, whole=True,
                            step=int(step), help=help)
    else:
        typed_inputs.number(column, label, keys.PLAN[name], p.low, high, unit=unit, step=step,
                            format=fmt, help=help)


def job_inputs(catalog: Catalog) -> None:
    """The job's widgets, keyed by :data:`dashboard.keys.PLAN`."""
    plan = keys.PLAN
    gpus = [g.name for g in catalog.solvable_gpu_types]
    with st.container(border=True, key="plan_inputs"):
        a, b, c, d = st.columns(4)
        _number(a, "epochs", "Epochs", step=1.0, help="How many epochs the job trains.")
        _number(b, "epoch_s", "Seconds per epoch (measured)", step=1.0, fmt="%.2f",
                help="Your measurement: seconds per epoch on the reference cluster.")
        options = ["", *gpus]
        if plan["ref"].get() not in options:
            st.warning(f"Reference type {plan['ref'].get()!r} is not a GPU type of this "
                       "catalog; using the top spot-FLOPP type.", icon=":material/warning:")
            plan["ref"].set("")
        c.selectbox("Measured on GPU type", options, key=plan["ref"].name,
                    persist_state=keys.PERSIST, format_func=lambda n: n or "top spot-FLOPP type",
                    help="The type of your measurement; other types follow eFLOPS.")
        _number(d, "ref_nodes", "… on this many VMs", step=1)
        presentation = state.presentation()
        a, b, c, spare = st.columns(4)
        _number(a, "ckpt_every", "Checkpoint every k epochs (0: auto, Daly)", step=1,
                help=GLOSSARY["Daly interval"])
        b.radio("Goal", GOALS, horizontal=True, key=plan["goal"].name,
                persist_state=keys.PERSIST, format_func=GOAL_LABELS.__getitem__)
        c.toggle("No hourly spending cap" if presentation else "PW off (any hourly price)",
                 key=plan["pw_off"].name, persist_state=keys.PERSIST,
                 help="Quotas and the node cap still bound the clusters; the paper's policies "
                      "need a PW and are then not shown.")
        a, b, c, d = st.columns(4)
        _number(a, "deadline_h", "Deadline, hours (0: none)", step=1.0,
                help="Keep clusters whose expected makespan is within it.")
        _number(b, "budget_usd", "Job budget, USD (0: none)", step=10.0,
                help="Keep clusters whose expected job cost is within it.")
        # The research knobs: folded away in presentation mode (same keys, same values).
        knobs = (st.expander("Research settings: speedup model, Monte Carlo runs, seed")
                 if presentation else None)
        if knobs is not None:
            c, d, e = knobs.columns(3)
        else:
            e = spare
        e.selectbox("Speedup model", list(SPEEDUP_LABELS), key=plan["speedup"].name,
                    persist_state=keys.PERSIST, format_func=SPEEDUP_LABELS.__getitem__,
                    help=GLOSSARY["Speedup model"])
        _number(c, "trials", "Monte Carlo runs (0: none)", step=1000)
        _number(d, "seed", "Seed", step=1)
        if (float(plan["epochs"].get()), float(plan["epoch_s"].get())) == (
                float(plan["epochs"].default), float(plan["epoch_s"].default)):
            st.caption(f"The job above is an example, {answer.EXAMPLE_JOB}.")


def assumptions(catalog: Catalog) -> None:
    """R, W, D, δ0, the MTBI per GPU type (editable) and the MTBI scale."""
    scale = keys.PLAN["mtbi_scale"]
    with st.expander("Assumptions: interruptions, restarts, checkpoints", expanded=False):
        st.caption("These are assumptions, not measurements: change them to see how much the "
                   "answer depends on them. " + GLOSSARY["MTBI"])
        a, b, c, d = st.columns(4)
        _number(a, "restart_min", "Restart R (min)", step=1.0, unit=" min",
                help="Relaunch, rejoin and restore after an interruption (billed).")
        _number(b, "wait_min", "Capacity wait W (min)", step=1.0, unit=" min",
                help="Until spot VMs are back after an interruption (spot VMs not billed).")
        _number(c, "disk_gbps", "Anchor disk D (GB/s)", step=0.05, fmt="%.3f", unit=" GB/s",
                help="Single Anchor: the anchor writes each checkpoint to its disk.")
        _number(d, "ckpt_fixed_s", "Fixed checkpoint cost δ0 (s)", step=1.0, unit=" s")
        if float(scale.get()) not in MTBI_SCALES:
            scale.set(scale.default)
        st.select_slider("MTBI scale (sensitivity)", MTBI_SCALES, key=scale.name,
                         persist_state=keys.PERSIST, format_func=lambda x: f"× {x:g}",
                         help="Multiplies every MTBI: × 0.25 is four times as many "
                              "interruptions.")
        mtbi_table(catalog)


def mtbi_table(catalog: Catalog) -> None:
    """The MTBI per GPU type, editable as text (``1e-9`` is read as typed; the bound is the
    core's); a refused cell goes back to the value in use, and the page says why."""
    frame = job_frames.mtbi_frame(catalog, keys.PLAN_MTBI.get())
    edited = st.data_editor(
        frame, hide_index=True, key=f"plan_mtbi_editor_{keys.PLAN_MTBI_VERSION.get()}",
        disabled=[c for c in frame.columns if c != job_frames.MTBI_COLUMN],
        column_config={job_frames.MTBI_COLUMN: st.column_config.TextColumn(
            help="Hours between interruptions of one spot VM, before the scale: any number "
                 "> 0 (1e-9 and 0.005 are read as typed).")})
    for why in keys.PLAN_MTBI_REFUSED.get():
        st.markdown(f":red[{why}; the value in use is kept.]")
    overrides, refused = job_frames.mtbi_overrides(catalog, edited, keys.PLAN_MTBI.get())
    if refused:
        keys.PLAN_MTBI_REFUSED.set(refused)
        keys.PLAN_MTBI_VERSION.set(keys.PLAN_MTBI_VERSION.get() + 1)  # show the value in use
    elif overrides != keys.PLAN_MTBI.get():
        keys.PLAN_MTBI_REFUSED.set([])
    if refused or overrides != keys.PLAN_MTBI.get():
        keys.PLAN_MTBI.set(overrides)
        st.rerun()


# ----------------------------------------------------------------------------- results


def card(result: JobPlanResult, comparison: PlanVsRecommend | None,
         trace_note: str | None = None) -> None:
    """The budget holder's card: cost, finish time, the same cluster on demand and the saving,
    when it is done, how sure, whether Recommend picks the same cluster, and why this one (and,
    when spot traces gave the figures, ``trace_note``); the plan's warnings (measurements not
    used, implausible measured speedups) at its foot."""
    with st.container(border=True, key="plan_card"):
        _card_body(result, comparison)
        if trace_note and result.chosen is not None:
            st.markdown(trace_note, help="Map traces to pools on the Spot markets page.")
        for warning in result.warnings:
            st.warning(warning, icon=":material/warning:")


def _card_body(result: JobPlanResult, comparison: PlanVsRecommend | None) -> None:
    chosen = result.chosen
    if chosen is None:
        st.markdown("#### No cluster fits this job")
        if result.explanation is not None:
            st.error(result.explanation.summary, icon=":material/block:")
            if {"deadline", "job_budget"} & set(result.explanation.binding):
                st.markdown("**The nearest clusters** (expected to finish):")
                st.dataframe(nearest.nearest_frame(result), hide_index=True,
                             key="plan_nearest")
        return
    mc = chosen.monte_carlo
    epochs = f"{result.workload.epochs:g} epoch{'s' if result.workload.epochs != 1 else ''}"
    cost = f"about **{formatting.usd(chosen.expected_cost_usd)}**"
    hours = f"done in about **{formatting.duration(chosen.expected_makespan_hours)}**"
    if mc is not None:
        cost += f" (P90 {formatting.usd(mc.cost_usd_p90)})"
        hours += f" (P90 {formatting.duration(mc.makespan_hours_p90)})"
    events = chosen.expected_interruptions
    st.caption(f"YOUR JOB · GOAL: {result.goal.upper()}")
    st.markdown(f"### {epochs} of your job: {cost}, {hours}, "
                f"{events:.1f} interruption{'s' if round(events, 1) != 1 else ''} expected")
    config = chosen.configuration
    left, right = st.columns([0.55, 0.45], gap="large")
    left.markdown(f"**{widgets.headline(config)}**\n\n{widgets.cluster_lines(config)}")
    a, b = right.columns(2)
    a.metric("Hourly price", formatting.usd_per_hour(config.hourly_price_usd))
    b.metric("Epoch time", f"{chosen.epoch_seconds:,.1f} s",
             help="Seconds per epoch on this cluster under the speedup model.")
    if mc is not None and mc.deadline_probability is not None:
        right.markdown(f"Chance to meet the {result.deadline_hours:g} h deadline: "
                       f"**{mc.deadline_probability:.0%}**")
    answer_view.budget_lines(chosen)
    price_notes.zone_caption(state.active_catalog().catalog, config, result.pw_usd_per_hour,
                             "plan_zone")
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
                      f"cost {formatting.usd(deepvm.expected_cost_usd)} ({ratio:.1f}× as much) "
                      f"and take {formatting.duration(deepvm.expected_makespan_hours)}.")
    st.markdown(" ".join(why))


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
        st.warning(f"{', '.join(labels)}: {reason}.", icon=":material/hourglass_disabled:")
    if (frame["Finishes?"] == "yes").all():  # else the warnings above say which do not
        frame = frame.drop(columns="Finishes?")
    st.dataframe(frame, hide_index=True, key="plan_table", column_config=COMPARISON_COLUMNS)


def frontier(result: JobPlanResult) -> None:
    points = compute.frontier_points(result, charts.MAX_CLOUD_POINTS)
    if points.finishing == 0:
        st.warning(f"None of the {result.size:,} feasible clusters is expected to finish this "
                   "job: there is no cost-vs-time frontier to draw.",
                   icon=":material/hourglass_disabled:")
        return
    frame = job_frames.frontier_frame(result, points.shown)
    st.plotly_chart(charts.frontier_chart(frame, list(points.frontier), points.marks,
                                          result.size), key="plan_frontier")
    never = result.size - points.finishing
    left_out = (f" {never:,} cluster{'s are' if never != 1 else ' is'} not expected to finish "
                "and left out." if never else "")
    st.caption(f"{GLOSSARY['Pareto frontier']} Showing {len(points.shown):,} of "
               f"{result.size:,} feasible clusters (the frontier and the marked ones always)."
               f"{left_out}")


def distribution(result: JobPlanResult, catalog: Catalog, speedup: SpeedupModel) -> None:
    chosen = result.chosen
    if chosen is None or result.trials == 0:
        return
    samples = compute.job_samples(catalog, result, speedup, chosen.index, result.trials,
                                  result.seed)
    left, right = st.columns([0.6, 0.4])
    left.plotly_chart(charts.distribution_chart(pd.Series(samples.makespan_hours[0]),
                                                result.deadline_hours), key="plan_cdf")
    mc = chosen.monte_carlo
    if mc is not None:
        right.markdown(
            f"**{mc.trials:,} simulated runs** of the chosen cluster (seed {result.seed}):\n\n"
            f"- makespan P10 / P50 / P90: {formatting.duration(mc.makespan_hours_p10)} / "
            f"{formatting.duration(mc.makespan_hours_p50)} / "
            f"{formatting.duration(mc.makespan_hours_p90)}\n"
            f"- cost P10 / P50 / P90: {formatting.usd(mc.cost_usd_p10)} / "
            f"{formatting.usd(mc.cost_usd_p50)} / {formatting.usd(mc.cost_usd_p90)}\n"
            "- interruptions per run: "
            f"{mc.mean_interruptions:.2f} on average")


def speedups(catalog: Catalog, speedup: SpeedupModel) -> None:
    curves, points = job_frames.speedup_frames(catalog, speedup)
    if curves.empty:
        st.caption("No measurements for this catalog's GPU types: upload some below.")
        return
    st.plotly_chart(charts.speedup_chart(curves, points), key="plan_speedups")


def offer_epoch_time(catalog: Catalog, name: str, text: str) -> None:
    """For an uploaded table of the user's own epoch times: one click takes g_ref's one-node
    time from it as the job's epoch time (nothing happens without the click)."""
    offer = job_view.epoch_time_offer(catalog, name, text)
    if offer is None:
        return
    if offer.seconds is None:
        st.caption(f"{name} has no one-node time of {offer.reference_gpu} (the reference type): "
                   "your epoch time stays as typed.")
    elif offer.problem is not None:
        st.error(offer.problem, icon=":material/error:")
    elif offer.in_use:
        st.success(f"Your epoch time is {offer.reference_gpu}'s one-node time from {name}: "
                   f"{offer.seconds:g} s.", icon=":material/check:")
    else:
        st.button(f"Use {offer.reference_gpu}'s one-node time from this file as my epoch time "
                  f"({offer.seconds:g} s on 1 VM)", key="plan_use_epoch_time",
                  icon=":material/timer:", on_click=job_view.use_epoch_time,
                  args=(offer.reference_gpu, offer.seconds))


def measurements_in_use(catalog: Catalog) -> None:
    """Which measurements the plan uses for each GPU type of ``catalog``: the upload's rows
    only for the types it measures well, the bundled rows for the others (and why)."""
    _, tables = compute.measurements_in_use(keys.PLAN_MEASUREMENTS.get())
    st.markdown("**Measurements in use**, per GPU type:")
    st.dataframe(job_frames.measurements_in_use_frame(catalog, tables), hide_index=True,
                 key="plan_measurements_in_use")


def calibrate(active: state.ActiveCatalog) -> None:
    """Fit (a, b, c) per GPU type to a measurements CSV and use the fits in the catalog."""
    with st.expander("Calibrate: fit the scaling curves to your measurements"):
        st.caption("A CSV with the columns instance,nodes,epoch_seconds (seconds per epoch of "
                   "one job on 1..N VMs of each GPU type). The bundled file is the paper's "
                   "ResNet-50 measurements.")
        upload = st.file_uploader("Measurements CSV", type=["csv"], key="plan_csv",
                                  max_upload_size=uploads.TRANSPORT_MB)
        if upload is not None:
            text = upload.getvalue().decode("utf-8", errors="replace")
            try:
                compute.measurements_table(upload.name, text)
            except DeepVMError as exc:
                st.error(f"{upload.name} was not loaded: {exc}", icon=":material/error:")
            else:
                if keys.PLAN_MEASUREMENTS.get() != (upload.name, text):  # the plan above reads
                    keys.PLAN_MEASUREMENTS.set((upload.name, text))  # them: plan again
                    st.rerun()
        name, text = keys.PLAN_MEASUREMENTS.get() or compute.bundled_measurements()
        measurements_in_use(active.catalog)
        ref = job_view.reference_type(active.catalog)  # the plan's reference type
        if keys.PLAN_MEASUREMENTS.get() is not None:
            offer_epoch_time(active.catalog, name, text)
        eflops = st.toggle("Also calibrate relative eFLOPS from the one-node times",
                           key=keys.PLAN_CALIBRATE_EFLOPS.name,
                           help=f"Relative to the plan's reference type ({ref})." if ref else
                           None)
        try:
            cal = compute.calibration(active.catalog, name, text, ref if eflops else None)
        except DeepVMError as exc:
            st.error(f"Cannot calibrate from {name}: {exc}", icon=":material/error:")
            return
        for warning in compute.unused_measurements(active.catalog, name, text):
            st.warning(warning, icon=":material/warning:")
        if not cal.fits:
            st.info("Nothing to calibrate: no measured type is a GPU type of this catalog.",
                    icon=":material/info:")
            st.button("Use these fits in the working catalog", key="plan_use_fits",
                      icon=":material/check:", disabled=True, help="There are no fits.")
            return
        st.dataframe(job_frames.fits_frame(cal), hide_index=True, key="plan_fits")
        confirmed = True
        if cal.warnings:
            st.warning("These fits are not trusted; check the measurements before using them:"
                       "\n\n" + "\n".join(f"- {w}" for w in cal.warnings),
                       icon=":material/warning:")
            digest = hashlib.sha256(f"{active.catalog.sha256}{name}{text}".encode()).hexdigest()
            confirmed = st.checkbox("Use them anyway: I have checked the measurements",
                                    key=f"plan_cal_confirm_{digest[:12]}")
        if st.button("Use these fits in the working catalog", key="plan_use_fits",
                     icon=":material/check:", disabled=not confirmed):
            state.use_edited_catalog(active, cal.catalog)
            st.success("The working catalog now carries these fits (see the catalog editor).")


def main() -> None:
    active = state.active_catalog()
    scenario: Scenario = state.scenario()
    keys.PLAN_ACTIVE.set(True)
    st.title("Plan a job")
    st.caption("From price per hour to the cost and time of a whole training job, with spot "
               "interruptions. Estimates are exact expectations of the job model (Method "
               "page), with a Monte Carlo run for the spread.")
    answer_slot = st.container()  # the answer first (above the fold), the inputs below it
    job_inputs(active.catalog)
    assumptions(active.catalog)
    try:
        inputs = job_view.job_inputs(active.catalog, scenario, keys.TOP_K.get())
        result = job_view.plan(active.catalog, scenario, inputs)
    except DeepVMError as exc:
        answer_slot.error(f"Cannot plan this job: {exc}", icon=":material/error:")
        calibrate(active)
        return
    with answer_slot:
        card(result, job_view.recommend_comparison(active.catalog, scenario, inputs, result),
             job_view.trace_note(result, active.catalog))
        if result.chosen is not None:  # its epoch time scales with eFLOPS and the scaling curve
            gpu = provenance.gpu_of(active.catalog, result.chosen.configuration.gpu)
            if gpu is not None:
                provenance.gpu_sources_caption(gpu)
    for note in result.notes:
        st.info(note, icon=":material/info:")
    if result.chosen is None:  # issue 20 item 18: no plan to download
        st.caption("The plan's download appears once a cluster fits the job.")
    else:
        text = compute.plan_text(result, active.catalog, datetime.now(UTC))
        st.download_button("Download plan (JSON)", text,
                           file_name=f"deepvm-plan-{active.catalog.name}.json",
                           mime="application/json", icon=":material/download:",
                           key="plan_download")
    if result.size:
        frontier(result)
        st.subheader("The best clusters and the paper's policies")
        comparison(result)
        distribution(result, active.catalog, inputs.speedup)
    st.subheader("Speedup models")
    speedups(active.catalog, inputs.speedup)
    calibrate(active)


widgets.run_page(main)
