"""Plan a job: what a training job costs in total and when it is done, with spot reclaims.

Inputs (the job, its assumptions) -> :func:`deepvm_core.job.plan_job` (cached in
:mod:`compute`) -> the budget-holder card, the cost-vs-time frontier, the comparison table, the
Monte Carlo distribution, the speedup models, and the plan's JSON. Calibration of the scaling
fits from a measurements CSV is at the bottom.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

import numpy as np
import pandas as pd
import streamlit as st

import charts
import compute
import job_view
import state
import url
import widgets
from deepvm_core.catalog import Catalog
from deepvm_core.catalog.types import INTERRUPTION_BUCKET_LABELS
from deepvm_core.errors import DeepVMError
from deepvm_core.job import (
    PLAN_POLICIES,
    JobPlanResult,
    PlanEstimate,
    SpeedupModel,
    fitted_speedup,
    paper_speedup,
)
from deepvm_core.job.planner import PLAN_POLICY_LABELS
from deepvm_core.job.unused import unused_measurements_warnings
from deepvm_core.model import Scenario
from glossary import GLOSSARY
from job_view import format_hours

MTBI_SCALES = (0.25, 0.5, 1.0, 2.0, 4.0)
SPEEDUP_LABELS = {"fitted": "Fitted logistic (default)", "measured": "Measured points",
                  "paper": "Paper's n·K(n)"}


# ----------------------------------------------------------------------------- inputs


def _keep(name: str, widget_value: object) -> None:
    """Store a widget's value in its persistent ``plan_<name>`` key (widgets are dropped when
    the page is left; the ``plan_*`` keys and the URL keep the job)."""
    st.session_state[url.PLAN_PARAM_BY_NAME[name].key] = widget_value


def _number(column, name: str, label: str, *, step: float, fmt: str = "%g",
            help: str | None = None) -> None:
    p = url.PLAN_PARAM_BY_NAME[name]
    ss = st.session_state
    integer = p.kind == "int"
    high = None if p.high == float("inf") else (int(p.high) if integer else p.high)
    value = column.number_input(
        label, min_value=int(p.low) if integer else p.low, max_value=high,
        value=int(ss[p.key]) if integer else float(ss[p.key]), step=int(step) if integer
        else step, format=None if integer else fmt, key=f"planw_{name}", help=help)
    _keep(name, value)


def job_inputs(catalog: Catalog) -> None:
    """The job's widgets; their values go to the ``plan_*`` session keys."""
    ss = st.session_state
    gpus = [g.name for g in catalog.solvable_gpu_types]
    with st.container(border=True):
        a, b, c, d = st.columns(4)
        _number(a, "epochs", "Epochs", step=1.0, help="How many epochs the job trains.")
        _number(b, "epoch_s", "Seconds per epoch (measured)", step=1.0, fmt="%.2f",
                help="Your measurement: seconds per epoch on the reference cluster.")
        options = ["", *gpus]
        if ss.plan_ref and ss.plan_ref not in options:
            st.warning(f"Reference type {ss.plan_ref!r} is not a GPU type of this catalog; "
                       "using the top spot-FLOPP type.", icon=":material/warning:")
            ss.plan_ref = ""
        ref = c.selectbox("Measured on GPU type", options, index=options.index(ss.plan_ref),
                          format_func=lambda n: n or "top spot-FLOPP type", key="planw_ref",
                          help="The type of your measurement; other types follow eFLOPS.")
        _keep("ref", ref)
        _number(d, "ref_nodes", "… on this many VMs", step=1)
        a, b, c, d = st.columns(4)
        speedup = a.selectbox("Speedup model", list(SPEEDUP_LABELS),
                              index=list(SPEEDUP_LABELS).index(ss.plan_speedup),
                              format_func=SPEEDUP_LABELS.get, key="planw_speedup",
                              help=GLOSSARY["Speedup model"])
        _keep("speedup", speedup)
        _number(b, "ckpt_every", "Checkpoint every k epochs (0: auto, Daly)", step=1,
                help=GLOSSARY["Daly interval"])
        goal = c.radio("Goal", ("cheapest", "fastest"), horizontal=True,
                       index=("cheapest", "fastest").index(ss.plan_goal), key="planw_goal",
                       format_func={"cheapest": "Cheapest job", "fastest": "Fastest job"}.get)
        _keep("goal", goal)
        pw_off = d.toggle("PW off (any hourly price)", value=bool(ss.plan_pw_off),
                          key="planw_pw_off", help="Quotas and the node cap still bound the "
                          "clusters; the paper's policies need a PW and are then not shown.")
        _keep("pw_off", pw_off)
        a, b, c, d = st.columns(4)
        _number(a, "deadline_h", "Deadline, hours (0: none)", step=1.0,
                help="Keep clusters whose expected makespan is within it.")
        _number(b, "budget_usd", "Job budget, USD (0: none)", step=10.0,
                help="Keep clusters whose expected job cost is within it.")
        _number(c, "trials", "Monte Carlo runs (0: none)", step=1000)
        _number(d, "seed", "Seed", step=1)


def assumptions(catalog: Catalog) -> None:
    """R, W, D, δ0, the MTBI per GPU type (editable) and the MTBI scale."""
    ss = st.session_state
    with st.expander("Assumptions: interruptions, restarts, checkpoints", expanded=False):
        st.caption("These are assumptions, not measurements: change them to see how much the "
                   "answer depends on them. " + GLOSSARY["MTBI"])
        a, b, c, d = st.columns(4)
        _number(a, "restart_min", "Restart R (min)", step=1.0,
                help="Relaunch, rejoin and restore after an interruption (billed).")
        _number(b, "wait_min", "Capacity wait W (min)", step=1.0,
                help="Until spot VMs are back after an interruption (spot VMs not billed).")
        _number(c, "disk_gbps", "Anchor disk D (GB/s)", step=0.05, fmt="%.3f",
                help="Single Anchor: the anchor writes each checkpoint to its disk.")
        _number(d, "ckpt_fixed_s", "Fixed checkpoint cost δ0 (s)", step=1.0)
        scale = st.select_slider("MTBI scale (sensitivity)", MTBI_SCALES,
                                 value=float(ss.plan_mtbi_scale)
                                 if float(ss.plan_mtbi_scale) in MTBI_SCALES else 1.0,
                                 format_func=lambda x: f"× {x:g}", key="planw_mtbi_scale",
                                 help="Multiplies every MTBI: × 0.25 is four times as many "
                                      "interruptions.")
        _keep("mtbi_scale", scale)
        defaults = job_view.default_mtbi_hours(catalog)
        frame = pd.DataFrame([{
            "GPU type": g.name,
            "Spot Advisor bucket": (INTERRUPTION_BUCKET_LABELS[g.interruption_bucket]
                                    if g.interruption_bucket is not None else "none"),
            "Source": "user" if g.name in ss.plan_mtbi else defaults[g.name][1],
            "MTBI (h, before the scale)": float(ss.plan_mtbi.get(g.name,
                                                                 defaults[g.name][0])),
        } for g in catalog.gpu_types])
        edited = st.data_editor(
            frame, hide_index=True, key="plan_mtbi_editor", disabled=["GPU type",
                                                                     "Spot Advisor bucket",
                                                                     "Source"],
            column_config={"MTBI (h, before the scale)": st.column_config.NumberColumn(
                min_value=0.01, max_value=100_000.0, step=0.5, format="%.2f")})
        overrides = {}
        for row in edited.itertuples(index=False):
            hours = float(row[3])
            name = str(row[0])
            if np.isfinite(hours) and hours > 0 and hours != defaults[name][0]:
                overrides[name] = hours
        if overrides != ss.plan_mtbi:
            ss.plan_mtbi = overrides
            st.rerun()


# ----------------------------------------------------------------------------- results


def card(result: JobPlanResult) -> None:
    """The budget holder's card: cost, finish time, how sure, and why this cluster."""
    chosen = result.chosen
    with st.container(border=True, key="plan_card"):
        if chosen is None:
            st.markdown("#### No cluster fits this job")
            if result.explanation is not None:
                st.error(result.explanation.summary, icon=":material/block:")
            return
        mc = chosen.monte_carlo
        epochs = f"{result.workload.epochs:g} epoch{'s' if result.workload.epochs != 1 else ''}"
        cost = f"about **{chosen.expected_cost_usd:,.2f} USD**"
        hours = f"done in about **{format_hours(chosen.expected_makespan_hours)}**"
        if mc is not None:
            cost += f" (P90 {mc.cost_usd_p90:,.2f} USD)"
            hours += f" (P90 {format_hours(mc.makespan_hours_p90)})"
        events = chosen.expected_interruptions
        st.caption(f"YOUR JOB · GOAL: {result.goal.upper()}")
        st.markdown(f"### {epochs} of your job: {cost}, {hours}, "
                    f"{events:.1f} interruption{'s' if round(events, 1) != 1 else ''} expected")
        config = chosen.configuration
        left, right = st.columns([0.55, 0.45], gap="large")
        left.markdown(f"**{widgets.headline(config)}**\n\n{widgets.cluster_lines(config)}")
        a, b = right.columns(2)
        a.metric("Hourly price", f"{config.hourly_price_usd:.4f} USD")
        b.metric("Epoch time", f"{chosen.epoch_seconds:,.1f} s",
                 help="Seconds per epoch on this cluster under the speedup model.")
        if mc is not None and mc.deadline_probability is not None:
            right.markdown(f"Chance to meet the {result.deadline_hours:g} h deadline: "
                           f"**{mc.deadline_probability:.0%}**")
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
                          f"cost {deepvm.expected_cost_usd:,.2f} USD ({ratio:.1f}× as much) and "
                          f"take {format_hours(deepvm.expected_makespan_hours)}.")
        st.markdown(" ".join(why))


def _row(label: str, e: PlanEstimate) -> dict[str, object]:
    mc = e.monte_carlo
    if e.does_not_finish is not None:  # no numbers that mean nothing: the reason instead
        return {"": label, "Configuration": e.configuration.describe().rsplit(",", 1)[0],
                "USD/h": e.configuration.hourly_price_usd, "Epoch s": e.epoch_seconds,
                "Expected h": None, "P10–P90 h": "", "Expected USD": None, "P10–P90 USD": "",
                "Events": None, "Checkpoint every (s)": e.checkpoint_interval_seconds,
                "Finishes?": e.does_not_finish}
    return {
        "": label,
        "Configuration": e.configuration.describe().rsplit(",", 1)[0],
        "USD/h": e.configuration.hourly_price_usd,
        "Epoch s": e.epoch_seconds,
        "Expected h": e.expected_makespan_hours,
        "P10–P90 h": f"{mc.makespan_hours_p10:.3f}–{mc.makespan_hours_p90:.3f}" if mc else "",
        "Expected USD": e.expected_cost_usd,
        "P10–P90 USD": f"{mc.cost_usd_p10:,.2f}–{mc.cost_usd_p90:,.2f}" if mc else "",
        "Events": e.expected_interruptions,
        "Checkpoint every (s)": e.checkpoint_interval_seconds,
        "Finishes?": "yes",
    }


def comparison(result: JobPlanResult) -> None:
    """The top-k and the paper's policies side by side, as ``sky bench show`` does."""
    rows = [_row(f"best {i}", e) for i, e in enumerate(result.best, 1)]
    for name in PLAN_POLICIES:
        if name == "deepvm":
            rows += [_row(f"{PLAN_POLICY_LABELS[name]} #{i}", e)
                     for i, e in enumerate(result.policies.deepvm, 1)]
        elif (e := result.policies.policy(name)) is not None:
            rows.append(_row(PLAN_POLICY_LABELS[name], e))
    unfinished = sorted({str(r["Finishes?"]) for r in rows if r["Finishes?"] != "yes"})
    for reason in unfinished:
        labels = ", ".join(str(r[""]) for r in rows if r["Finishes?"] == reason)
        st.warning(f"{labels}: {reason}.", icon=":material/hourglass_disabled:")
    st.dataframe(pd.DataFrame(rows), hide_index=True, key="plan_table", column_config={
        "USD/h": st.column_config.NumberColumn(format="%.4f"),
        "Epoch s": st.column_config.NumberColumn(format="%.1f"),
        "Expected h": st.column_config.NumberColumn(format="%.3f"),
        "Expected USD": st.column_config.NumberColumn(format="%.2f"),
        "Events": st.column_config.NumberColumn(format="%.2f"),
        "Checkpoint every (s)": st.column_config.NumberColumn(format="%.0f")})


def frontier(result: JobPlanResult) -> None:
    cost = pd.Series(result.expected_cost_usd)
    hours = pd.Series(result.expected_makespan_hours)
    finite = np.flatnonzero(result.finishes & np.isfinite(cost.to_numpy())
                            & (cost.to_numpy() > 0))
    never = result.size - int(np.count_nonzero(result.finishes))
    if finite.size == 0:
        st.warning(f"None of the {result.size:,} feasible clusters is expected to finish this "
                   "job: there is no cost-vs-time frontier to draw.",
                   icon=":material/hourglass_disabled:")
        return
    marks: dict[int, str] = {}
    for name in reversed(PLAN_POLICIES):
        e = (result.policies.deepvm[0] if name == "deepvm" and result.policies.deepvm
             else result.policies.policy(name) if name != "deepvm" else None)
        if e is not None and e.does_not_finish is None:  # not expected to finish: no point
            marks[e.index] = name
    if result.chosen is not None:
        marks[result.chosen.index] = "best"
    keep = set(int(i) for i in result.frontier) | set(marks)
    cloud = finite
    if cloud.size > charts.MAX_CLOUD_POINTS:  # a fixed sample: the same picture each rerun
        cloud = np.sort(np.random.default_rng(0).choice(cloud, charts.MAX_CLOUD_POINTS,
                                                        replace=False))
    shown = np.union1d(cloud, np.array(sorted(keep), dtype=np.int64))
    labels = pd.Series({int(i): result.label(int(i)) for i in shown})
    fig = charts.frontier_chart(cost.loc[shown], hours.loc[shown], labels,
                                [int(i) for i in result.frontier if int(i) in labels.index],
                                marks, result.size)
    st.plotly_chart(fig, key="plan_frontier")
    left_out = (f" {never:,} cluster{'s are' if never != 1 else ' is'} not expected to finish "
                "and left out." if never else "")
    st.caption(f"{GLOSSARY['Pareto frontier']} Showing {len(shown):,} of {result.size:,} "
               f"feasible clusters (the frontier and the marked ones always).{left_out}")


def distribution(result: JobPlanResult, catalog: Catalog, speedup: SpeedupModel) -> None:
    chosen = result.chosen
    if chosen is None or result.trials == 0:
        return
    samples = compute.job_samples(catalog, result, speedup, chosen.index, result.trials,
                                  result.seed)
    left, right = st.columns([0.6, 0.4])
    left.plotly_chart(charts.distribution_chart(pd.Series(samples.makespan_hours[0]),
                                                pd.Series(samples.cost_usd[0]),
                                                result.deadline_hours), key="plan_cdf")
    mc = chosen.monte_carlo
    if mc is not None:
        right.markdown(
            f"**{mc.trials:,} simulated runs** of the chosen cluster (seed {result.seed}):\n\n"
            f"- makespan P10 / P50 / P90: {format_hours(mc.makespan_hours_p10)} / "
            f"{format_hours(mc.makespan_hours_p50)} / {format_hours(mc.makespan_hours_p90)}\n"
            f"- cost P10 / P50 / P90: {mc.cost_usd_p10:,.2f} / {mc.cost_usd_p50:,.2f} / "
            f"{mc.cost_usd_p90:,.2f} USD\n- interruptions per run: "
            f"{mc.mean_interruptions:.2f} on average")


def speedups(catalog: Catalog, speedup: SpeedupModel) -> None:
    measurements = speedup.measurements
    names = [g for g in catalog.gpu_types
             if measurements is not None and measurements.get(g.name) is not None]
    if not names:
        st.caption("No measurements for this catalog's GPU types: upload some below.")
        return
    n = np.arange(1, 33)
    curves, points = [], []
    for g in names:
        rows = measurements.get(g.name) if measurements else None
        if g.scaling is not None:
            curves += [{"type": g.name, "model": "paper", "n": int(k), "speedup": float(s)}
                       for k, s in zip(n, paper_speedup(g.scaling, n), strict=True)]
            curves += [{"type": g.name, "model": "fitted", "n": int(k), "speedup": float(s)}
                       for k, s in zip(n, fitted_speedup(g.scaling, n), strict=True)]
        measured = SpeedupModel("measured", measurements).speedup(g, n)
        curves += [{"type": g.name, "model": "measured", "n": int(k), "speedup": float(s)}
                   for k, s in zip(n, measured, strict=True)]
        if rows is not None:
            t1 = dict(zip(rows.nodes, rows.epoch_seconds, strict=True)).get(1)
            if t1:
                points += [{"type": g.name, "n": k, "speedup": t1 / t}
                           for k, t in zip(rows.nodes, rows.epoch_seconds, strict=True)]
    st.plotly_chart(charts.speedup_chart(pd.DataFrame(curves), pd.DataFrame(
        points, columns=["type", "n", "speedup"])), key="plan_speedups")


def calibrate(active: state.ActiveCatalog) -> None:
    """Fit (a, b, c) per GPU type to a measurements CSV and use the fits in the catalog."""
    ss = st.session_state
    with st.expander("Calibrate: fit the scaling curves to your measurements"):
        st.caption("A CSV with the columns instance,nodes,epoch_seconds (seconds per epoch of "
                   "one job on 1..N VMs of each GPU type). The bundled file is the paper's "
                   "ResNet-50 measurements.")
        upload = st.file_uploader("Measurements CSV", type=["csv"], key="plan_csv")
        if upload is not None:
            text = upload.getvalue().decode("utf-8", errors="replace")
            try:
                compute.measurements_table(upload.name, text)
            except DeepVMError as exc:
                st.error(f"{upload.name} was not loaded: {exc}", icon=":material/error:")
            else:
                if ss.plan_measurements != (upload.name, text):  # the plan above reads them:
                    ss.plan_measurements = (upload.name, text)  # plan again with them
                    st.rerun()
        name, text = ss.plan_measurements or compute.bundled_measurements()
        st.markdown(f"Measurements in use: **{name}**")
        eflops = st.toggle("Also calibrate relative eFLOPS from the one-node times",
                           key="plan_cal_eflops")
        ref = next((g.name for g in active.catalog.solvable_gpu_types), None)
        try:
            cal = compute.calibration(active.catalog, name, text, ref if eflops else None)
        except DeepVMError as exc:
            st.error(f"Cannot calibrate from {name}: {exc}", icon=":material/error:")
            return
        for warning in unused_measurements_warnings(active.catalog,
                                                    compute.measurements_table(name, text)):
            st.warning(warning, icon=":material/warning:")
        if not cal.fits:
            st.info("Nothing to calibrate: no measured type is a GPU type of this catalog.",
                    icon=":material/info:")
            return
        st.dataframe(pd.DataFrame([{
            "GPU type": f.instance, "a": f.params.a, "b": f.params.b, "c": f.params.c,
            "R²": round(f.r_squared, 4) + 0.0, "RMSE": f.rmse, "points": f.points,
            "Trusted?": "no" if f.warnings else "yes"} for f in cal.fits]),
            hide_index=True, key="plan_fits")
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
    ss = st.session_state
    active = state.active_catalog()
    scenario: Scenario = state.scenario()
    ss.plan_active = True
    st.title("Plan a job")
    st.caption("From price per hour to the cost and time of a whole training job, with spot "
               "interruptions. Estimates are exact expectations of the job model (Method "
               "page), with a Monte Carlo run for the spread.")
    job_inputs(active.catalog)
    assumptions(active.catalog)
    try:
        inputs = job_view.job_inputs(active.catalog, scenario, int(ss.sb_top))
        result = job_view.plan(active.catalog, scenario, inputs)
    except DeepVMError as exc:
        st.error(f"Cannot plan this job: {exc}", icon=":material/error:")
        calibrate(active)
        return
    card(result)
    for warning in result.warnings:
        st.warning(warning, icon=":material/warning:")
    for note in result.notes:
        st.info(note, icon=":material/info:")
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
