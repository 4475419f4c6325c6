"""The job the user plans (Plan a job page), read from the session, and its estimates.

Shared by the Plan a job page and the Recommend page (which shows the expected job cost and
time of its configurations once a job is set). Widgets live in the pages; this module only
turns the session's ``plan_*`` values into core objects and looks estimates up.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import streamlit as st

from dashboard import compute, formatting, keys, plain_view, plan_compute, url_plan
from dashboard.plain_view import words
from deepvm_core.catalog import Catalog
from deepvm_core.errors import DeepVMError
from deepvm_core.model import Arch, Configuration, Scenario
from deepvm_core.pipeline.plan import Goal, JobPlanResult
from deepvm_core.pipeline.recommend_job import PlanVsRecommend, RecommendJob
from deepvm_core.text import duration, usd
from deepvm_core.units import MINUTES_PER_HOUR
from deepvm_core.workload.speedup import (
    SpeedupModel,
    SpeedupModelName,
    reference_epoch_seconds_from_table,
)
from deepvm_core.workload.transformer import TransformerJob
from deepvm_core.workload.workload import (
    AUTO,
    Workload,
    example_workload,
    job_checkpoint_gb,
)
from deepvm_core.workload.yardstick import yardstick_type

if TYPE_CHECKING:
    from dashboard.spot_compute import PoolSet
    from deepvm_core.hardware.coverage import TypeTable
    from deepvm_core.hardware.measurements import MeasurementTable


@dataclass(frozen=True)
class JobInputs:
    """What the planner needs besides the catalog and scenario."""

    workload: Workload
    speedup: SpeedupModel
    pw: float | None
    goal: Goal
    deadline: float | None
    budget: float | None
    trials: int
    seed: int
    top_k: int


def speedup_model(name: SpeedupModelName) -> SpeedupModel:
    """The session's speedup model, with the one measurements table in use: the upload's rows
    of the types it measures well (with a trusted fit, or one the user confirmed), else the
    bundled file (:func:`dashboard.plan_compute.measurements_in_use`)."""
    return SpeedupModel(name, measurements_in_use()[0])


def measurements_in_use() -> tuple[MeasurementTable, tuple[TypeTable, ...]]:
    """:func:`dashboard.plan_compute.measurements_in_use` of the session's upload and whether the
    user confirmed its untrusted fits."""
    upload = keys.PLAN_MEASUREMENTS.get()
    confirmed = upload is not None and keys.PLAN_MEASUREMENTS_CONFIRMED.get() == upload
    return plan_compute.measurements_in_use(upload, confirmed)


def transformer_job() -> TransformerJob | None:
    """The session's transformer job (Plan a job's job kind ``transformer``), or ``None`` for a
    cnn job (raises a WorkloadError naming a bad field)."""
    job = {name: key.get() for name, key in keys.PLAN.items()}
    if job["workload"] != "transformer":
        return None
    return TransformerJob(
        params_b=float(job["params_b"]), tokens_b=float(job["tokens_b"]),
        epochs=float(job["tf_epochs"]), method=job["method"], sharding=job["sharding"],
        shard_across_vms=bool(job["shard_across_vms"]), seq_len=int(job["seq_len"]),
        micro_batch=int(job["micro_batch"]),
        activation_checkpointing=bool(job["activation_checkpointing"]))


def checkpoint_is_the_jobs() -> bool:
    """The sidebar's checkpoint size f is at its default, so a transformer job's own checkpoint
    is used (as ``deepvm plan`` without ``--ckpt-gb``)."""
    return bool(keys.CHECKPOINT_GB.get() == keys.CHECKPOINT_GB.default)


def scenario_for_job(scenario: Scenario) -> Scenario:
    """``scenario`` with f the session's job's (:func:`job_checkpoint_gb`): a transformer
    job's own checkpoint while the sidebar's f is at its default, else the sidebar's. The
    scenario as it is without a job, for a cnn job, or when the job cannot be built (its error
    is the page's)."""
    if not keys.PLAN_ACTIVE.get() or not checkpoint_is_the_jobs():
        return scenario
    try:
        job = transformer_job()
    except DeepVMError:
        return scenario
    if job is None:
        return scenario
    return replace(scenario, checkpoint_gb=job_checkpoint_gb(job, None))


def job_inputs(catalog: Catalog, scenario: Scenario, top_k: int) -> JobInputs:
    """The job of the session (raises a DeepVMError naming a bad field); f is ``scenario``'s
    (:func:`scenario_for_job` gives a transformer job's own)."""
    job = {name: key.get() for name, key in keys.PLAN.items()}
    known = {g.name for g in catalog.gpu_types}
    overrides = {name: hours for name, hours in keys.PLAN_MTBI.get().items() if name in known}
    common: dict[str, Any] = dict(
        reference_nodes=int(job["ref_nodes"]), checkpoint_gb=scenario.checkpoint_gb,
        restart_hours=float(job["restart_min"]) / MINUTES_PER_HOUR,
        wait_hours=(None if float(job["wait_min"]) < 0  # url_plan.BUCKET_WAIT_MIN: the bucket's
                    else float(job["wait_min"]) / MINUTES_PER_HOUR),
        disk_gb_per_second=float(job["disk_gbps"]),
        checkpoint_fixed_seconds=float(job["ckpt_fixed_s"]),
        mtbi_hours_by_gpu=overrides, mtbi_scale=float(job["mtbi_scale"]))
    transformer = transformer_job()
    if transformer is not None:
        every = int(job["tf_ckpt_every"])
        measured = float(job["tokens_per_second"]) or None
        # a measurement names its type: "" is the top spot-FLOPP type, as the input says
        reference = job["ref"] or (reference_type(catalog) if measured else None)
        workload = Workload.for_transformer(
            transformer, tokens_per_second=measured, reference_gpu=reference,
            checkpoint_every_epochs=AUTO if every == 0 else every, **common)
    else:
        every = int(job["ckpt_every"])
        workload = Workload(
            epochs=float(job["epochs"]), reference_epoch_seconds=float(job["epoch_s"]),
            reference_gpu=job["ref"] or None,
            checkpoint_every_epochs=AUTO if every == 0 else every, **common)
    return JobInputs(
        workload=workload, speedup=speedup_model(job["speedup"]),
        pw=None if job["pw_off"] else scenario.pw_usd_per_hour, goal=job["goal"],
        deadline=float(job["deadline_h"]) or None, budget=float(job["budget_usd"]) or None,
        trials=int(job["trials"]), seed=int(job["seed"]), top_k=top_k)


def session_pools(catalog: Catalog) -> PoolSet | None:
    """The pools mapped on the Spot markets page that can be used with ``catalog`` (that
    page lists the others), or ``None``."""
    mapping = keys.SPOT_POOLS.get()
    if not any(name.strip() for name in mapping.values()):
        return None
    from dashboard import spot_compute

    pools, _ = spot_compute.build_pools(catalog, spot_compute.trace_root(), mapping)
    return pools if pools.pools else None


def reference_type(catalog: Catalog) -> str | None:
    """The plan's reference GPU type g_ref: the one the user picked, else the catalog's
    one-A10G type that stands for the yardstick
    (:func:`deepvm_core.workload.yardstick.yardstick_type`); ``None`` when there is none."""
    picked = keys.PLAN["ref"].get()
    if picked:
        return str(picked)
    standin = yardstick_type(catalog)
    return None if standin is None else standin.name


def plan(catalog: Catalog, scenario: Scenario, inputs: JobInputs) -> JobPlanResult:
    """The cached plan of ``inputs``; the configurations of types with pools (Spot markets
    page) are evaluated by a backtest."""
    return plan_compute.job_plan(catalog, scenario, inputs.workload, pw=inputs.pw,
                                 speedup=inputs.speedup, goal=inputs.goal, deadline=inputs.deadline,
                                 budget=inputs.budget, trials=inputs.trials, seed=inputs.seed,
                                 top_k=inputs.top_k, pools=session_pools(catalog),
                                 recovery=keys.SPOT_RECOVERY.get())


def trace_note(result: JobPlanResult, catalog: Catalog) -> str | None:
    """The budget holder's line when spot traces gave the chosen figures, or ``None``."""
    pools = session_pools(catalog)
    if pools is None:
        return None
    from dashboard import spot_compute

    return spot_compute.card_note(result, pools)


def unused_pool_notes(result: JobPlanResult, catalog: Catalog) -> tuple[str, ...]:
    """Why a mapped pool's type took no part in the plan, one sentence each
    (:func:`deepvm_core.pipeline.pool_types.unused_pool_types`); empty without pools."""
    pools = session_pools(catalog)
    if pools is None:
        return ()
    from deepvm_core.pipeline.pool_types import unused_pool_types

    found = unused_pool_types(result, catalog, [p.gpu for p in pools.pools])
    return tuple(f"{why[0].upper()}{why[1:]}." for why in found)


def candidate_index(result: JobPlanResult, config: Configuration) -> int | None:
    """The candidate of ``result`` that is ``config``, or ``None``."""
    t = result.candidates
    if not len(t):
        return None
    gpu = next((i for i, g in enumerate(t.gpus) if g.name == config.gpu), -1)
    cpu = next((i for i, w in enumerate(t.cpus) if w.name == config.cpu), -1)
    arch = Arch.of(config.architecture)
    hit = np.flatnonzero((t.architecture == arch) & (t.gpu == gpu) & (t.cpu == cpu)
                         & (t.n == config.gpu_vms) & (t.m == config.memory_nodes))
    return int(hit[0]) if hit.size else None


def job_summary(result: JobPlanResult, config: Configuration) -> str | None:
    """``about 0.39 USD and 0.14 h for 30 epochs`` for ``config``, or ``None``."""
    index = candidate_index(result, config)
    if index is None:
        return None
    reason = result.estimate(index).does_not_finish
    if reason is not None:  # "does not finish: an interruption every ..."
        return reason
    cost = float(result.expected_cost_usd[index])
    hours = float(result.expected_makespan_hours[index])
    return (f"about {usd(cost)} and {duration(hours)} for "
            f"{result.workload.epochs:g} epochs")


@dataclass(frozen=True)
class SessionJob:
    """The job every number of a page is about.

    Attributes:
        job: the job and its speed basis (``None`` when the catalog has no GPU type with a
            known speed).
        inputs: the Plan a job page's inputs once a job is set; ``None`` for the example job.
        problem: why the user's job could not be used (then the example job is), or ``None``.
    """

    job: RecommendJob | None
    inputs: JobInputs | None
    problem: str | None = None

    @property
    def whose(self) -> str:
        return "Your job" if self.inputs is not None else "The example job"


def session_job(catalog: Catalog, scenario: Scenario, top_k: int) -> SessionJob:
    """The job set on Plan a job (or by a link); else the core's example job, whose speed basis
    is the core's default (no measurement table), as ``deepvm recommend`` without a job. The
    example job does not depend on the scenario (its estimates take the recommendation's
    checkpoint size f), so it and its basis are derived once per catalog."""
    problem = None
    if keys.PLAN_ACTIVE.get():
        try:
            inputs = job_inputs(catalog, scenario, top_k)
            return SessionJob(compute.the_job(catalog, inputs.workload, inputs.speedup), inputs)
        except DeepVMError as exc:
            problem = (f"Your job cannot be used here: {exc}. The example job is used "
                       "instead.")
    try:
        example = compute.the_job(catalog, example_workload(), SpeedupModel(), example=True)
    except DeepVMError:
        return SessionJob(None, None, problem)
    return SessionJob(example, None, problem)


def recommend_comparison(catalog: Catalog, scenario: Scenario, inputs: JobInputs,
                         result: JobPlanResult) -> PlanVsRecommend | None:
    """Plan a job's answer against Recommend's pick for the same scenario and job (the
    sidebar's objective and solver), or ``None`` when PW is off (Recommend needs a PW) or the
    job does not fit the catalog."""
    if inputs.pw is None or result.chosen is None:
        return None
    try:
        job = compute.the_job(catalog, inputs.workload, inputs.speedup)
        rec = compute.job_recommendation(catalog, scenario, keys.SOLVER.get(), keys.TOP_K.get(),
                                         job)
    except DeepVMError:
        return None
    return compute.plan_vs_recommend(result, rec, catalog, job)


def recommend_panel(result: JobPlanResult, configs: list[Configuration],
                    baselines: dict[str, Configuration | None] | None = None) -> None:
    """On Recommend, once a job is set: the expected job cost and time of its configurations
    and of the ``baselines`` (label -> configuration), the Plan a job page's job at this
    page's PW (``result``, its plan)."""
    if not configs:
        return
    import pandas as pd  # after the card (first load of Recommend, issue 9)

    rows = []
    labelled = [(f"#{i}", c) for i, c in enumerate(configs, 1)]
    labelled += [(label, c) for label, c in (baselines or {}).items() if c is not None]
    for label, config in labelled:
        index = candidate_index(result, config)
        if index is None:
            continue
        done = bool(result.finishes[index])  # else no number: it is not expected to finish
        rows.append({"": label, "Configuration": config.describe().rsplit(",", 1)[0],
                     "USD/h": config.hourly_price_usd,
                     "Expected job cost (USD)": float(result.expected_cost_usd[index])
                     if done else None,
                     "Expected makespan": duration(
                         float(result.expected_makespan_hours[index])) if done else None,
                     "Finishes?": "yes" if done else "does not finish"})
    with st.container(border=True, key="rec_job"):
        st.markdown(words(f"**Your job** ({result.workload.epochs:g} epochs, set on *Plan a job*) "
                          "on the recommended cluster: "
                          + (job_summary(result, configs[0]) or "not estimated") + "."))
        plain_view.dataframe(pd.DataFrame(rows), hide_index=True, key="rec_job_table",
                             column_config={
            "USD/h": st.column_config.NumberColumn(format=formatting.TABLE_USD_PER_HOUR),
            "Expected job cost (USD)": st.column_config.NumberColumn(
                format=formatting.TABLE_USD)})


# ----------------------------------------------------------------------------- epoch-time offer


@dataclass(frozen=True)
class EpochTimeOffer:
    """What the Plan page offers for an uploaded table of the user's own epoch times: g_ref's
    one-node time in the file as the job's epoch time t_ref (with n_ref = 1).

    Attributes:
        reference_gpu: g_ref (the page's choice, or the catalog's one-A10G type).
        seconds: the file's one-node epoch time of g_ref, or ``None`` when it has none.
        problem: why it cannot be used as the epoch time (out of the field's bounds), or
            ``None``.
    """

    reference_gpu: str
    seconds: float | None
    problem: str | None = None

    @property
    def in_use(self) -> bool:
        """The job's epoch time is this one already (measured on one g_ref VM)."""
        plan = keys.PLAN
        return (self.seconds is not None and float(plan["epoch_s"].get()) == self.seconds
                and int(plan["ref_nodes"].get()) == 1
                and (plan["ref"].get() or None) in (None, self.reference_gpu))


def epoch_time_offer(catalog: Catalog, name: str, text: str) -> EpochTimeOffer | None:
    """The offer for the measurements CSV ``(name, text)``; ``None`` when the catalog has no
    reference type."""
    reference = reference_type(catalog)
    if reference is None:
        return None
    seconds = reference_epoch_seconds_from_table(plan_compute.measurements_table(name, text),
                                                 reference)
    p = url_plan.PLAN_PARAM_BY_NAME["epoch_s"]
    if seconds is not None and not p.low <= seconds <= p.high:
        return EpochTimeOffer(reference, seconds, f"Seconds per epoch {seconds:g} from {name} "
                              f"is outside {p.low:g}..{p.high:g}; the epoch time stays as typed.")
    return EpochTimeOffer(reference, seconds)


def use_epoch_time(reference_gpu: str, seconds: float) -> None:
    """Take ``seconds`` on one ``reference_gpu`` VM as the job's epoch time (a button's
    callback: before the widgets are drawn)."""
    keys.PLAN["epoch_s"].set(float(seconds))
    keys.PLAN["ref_nodes"].set(1)
    keys.PLAN["ref"].set(reference_gpu)
