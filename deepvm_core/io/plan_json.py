"""The job plan as JSON (``deepvm plan --format json`` and the dashboard's "Download plan"):
:func:`plan_to_dict`. Each configuration keeps the keys of ``recommend``'s JSON plus an
``estimate`` object.
"""

from __future__ import annotations

import math
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from deepvm_core.catalog import Catalog
from deepvm_core.io.documents import AssumptionsDoc, EstimateDoc, PlanConfigurationDoc
from deepvm_core.io.export import (
    EXPORT_SCHEMA_VERSION,
    configuration_to_dict,
    explanation_to_dict,
    gpu_filter_to_dict,
    tool_version,
)
from deepvm_core.job.baseline import (
    confidence_in_words,
    on_demand_offer,
    savings,
    slow_warning,
)
from deepvm_core.job.deadline_offer import DeadlineOffer
from deepvm_core.job.estimate import PlanEstimate
from deepvm_core.job.result import PLAN_KIND, JobPlanResult, PlanAssumptions
from deepvm_core.model import Objective
from deepvm_core.pipeline.recommend_job import PlanVsRecommend
from deepvm_core.text import duration, usd


def _finite(x: float) -> float | None:
    """JSON has no infinity or NaN: those become ``null``."""
    return x if math.isfinite(x) else None


def estimate_to_dict(e: PlanEstimate) -> EstimateDoc:
    """The ``estimate`` object of one configuration (see :func:`plan_to_dict`)."""
    finishes = e.does_not_finish is None
    saved_usd, saved_percent = savings(e.expected_cost_usd, e.on_demand_cost_usd)
    doc: EstimateDoc = {
        "epoch_seconds": e.epoch_seconds,
        "compute_hours": e.compute_hours,
        "checkpoint_stall_seconds": e.checkpoint_stall_seconds,
        "checkpoint_interval_seconds": _finite(e.checkpoint_interval_seconds),
        "checkpoints": e.checkpoints,
        "expected_makespan_hours": _finite(e.expected_makespan_hours),
        "expected_cost_usd": _finite(e.expected_cost_usd),
        "expected_interruptions": _finite(e.expected_interruptions),
        "within_limits": e.within_limits,
        "evaluated_by": e.evaluated_by,
        "pools": list(e.pools),
        "recovery": e.recovery,
        "odds": e.odds,
        "on_demand_same_cluster": {"cost_usd": _finite(e.on_demand_cost_usd),
                                   "makespan_hours": _finite(e.on_demand_makespan_hours)},
        "savings_vs_on_demand_usd": _finite(saved_usd) if finishes else None,
        "savings_vs_on_demand_percent": (None if saved_percent is None or not finishes
                                         else _finite(saved_percent)),
        "slow_warning": slow_warning(e.expected_makespan_hours, e.on_demand_makespan_hours,
                                     e.on_demand_cost_usd) if finishes else None,
    }
    if e.does_not_finish is not None:  # T, C and N are null: the reason says why
        doc.update({"expected_makespan_hours": None, "expected_cost_usd": None,
                    "expected_interruptions": None, "does_not_finish": e.does_not_finish})
    mc = e.monte_carlo
    if mc is not None:
        doc.update({
            "trials": mc.trials,
            "makespan_hours_p10": _finite(mc.makespan_hours_p10),
            "makespan_hours_p50": _finite(mc.makespan_hours_p50),
            "makespan_hours_p90": _finite(mc.makespan_hours_p90),
            "cost_usd_p10": _finite(mc.cost_usd_p10),
            "cost_usd_p50": _finite(mc.cost_usd_p50),
            "cost_usd_p90": _finite(mc.cost_usd_p90),
            "mean_interruptions": _finite(mc.mean_interruptions),
        })
        if mc.deadline_probability is not None:
            doc["deadline_probability"] = mc.deadline_probability
        doc["confidence"] = confidence_in_words(mc.makespan_hours_p90, mc.cost_usd_p90,
                                                mc.mean_makespan_hours, mc.mean_cost_usd)
    return doc


def estimate_in_words(e: PlanEstimate) -> tuple[str, ...]:
    """What a budget holder reads about one estimate: expected time and cost against the same
    cluster on demand, the Monte Carlo confidence (when simulated) and the 1.5x warning."""
    if e.does_not_finish is not None:
        return (f"Not expected to finish: {e.does_not_finish}. The same cluster on demand: "
                f"{duration(e.on_demand_makespan_hours)} and {usd(e.on_demand_cost_usd)}.",)
    saved_usd, saved_percent = savings(e.expected_cost_usd, e.on_demand_cost_usd)
    share = "" if saved_percent is None else f", {abs(saved_percent):.0f} %"
    lines = [f"Expected {duration(e.expected_makespan_hours)} and {usd(e.expected_cost_usd)}; "
             f"the same cluster on demand: {duration(e.on_demand_makespan_hours)} and "
             f"{usd(e.on_demand_cost_usd)} ({'saves' if saved_usd >= 0 else 'spot costs'} "
             f"{usd(abs(saved_usd))}{share}{'' if saved_usd >= 0 else ' more'})."]
    mc = e.monte_carlo
    if mc is not None:
        lines.append(confidence_in_words(mc.makespan_hours_p90, mc.cost_usd_p90,
                                         mc.mean_makespan_hours, mc.mean_cost_usd))
    if e.odds:
        lines.append(f"Odds: {e.odds}.")
    offer = on_demand_offer(e.expected_cost_usd, e.on_demand_cost_usd,
                            e.on_demand_makespan_hours)
    if offer is not None:
        lines.append(offer)
    warning = slow_warning(e.expected_makespan_hours, e.on_demand_makespan_hours,
                           e.on_demand_cost_usd)
    if warning is not None:
        lines.append(f"Warning: {warning}")
    return tuple(lines)


def plan_summary(result: JobPlanResult, catalog: Catalog) -> str:
    """The plan JSON's first line, for a person: the job, the chosen cluster (how many VMs),
    its expected cost and time, and against the same cluster on demand."""
    w = result.workload
    what = w.describe(result.assumptions.reference_gpu)
    if result.scenario.gpu_filter.active:
        what += f" ({result.scenario.gpu_filter.clause()})"
    e = result.chosen
    if e is None:
        why = result.explanation.summary if result.explanation else "nothing qualifies"
        return f"Job plan for {what} on {catalog.name}: no cluster. {why}"
    c = e.configuration
    return (f"Job plan for {what} on {catalog.name}, goal {result.goal}: {c.describe()} "
            f"({c.total_vms} VMs). " + " ".join(estimate_in_words(e)))


def plan_configuration_to_dict(e: PlanEstimate | None, objective: Objective, *,
                               noscale: bool = False) -> PlanConfigurationDoc | None:
    """A configuration as ``recommend``'s JSON has it, plus its ``estimate``."""
    if e is None:
        return None
    base = configuration_to_dict(e.configuration, objective, noscale=noscale)
    assert base is not None  # a configuration, not None
    return PlanConfigurationDoc(**base, estimate=estimate_to_dict(e))


def assumptions_to_dict(a: PlanAssumptions) -> AssumptionsDoc:
    """The ``assumptions`` object of the plan JSON."""
    return {
        "speedup": a.speedup,
        "measurements": a.measurements_source,
        "reference_gpu": a.reference_gpu,
        "checkpoint_every_epochs": a.checkpoint_every_epochs,
        "restart_hours": a.restart_hours,
        "wait_hours": a.wait_hours,
        "disk_gb_per_s": a.disk_gb_per_s,
        "checkpoint_fixed_seconds": a.checkpoint_fixed_seconds,
        "mtbi_scale": a.mtbi_scale,
        "per_vm_share": a.per_vm_share,
        "gpu_types": {g.gpu: {
            "mtbi_hours": g.mtbi_hours,
            "mtbi_source": g.mtbi_source,
            "wait_hours": g.wait_hours,
            "wait_source": g.wait_source,
            "interruption_bucket": g.interruption_bucket,
            "speedup_source": g.speedup_source,
            "one_vm_epoch_seconds": g.one_vm_epoch_seconds,
            "one_vm_source": g.one_vm_source,
            "relative_speed_source": g.one_vm_source,
            "relative_speed_table": g.one_vm_table,
            "relative_one_vm_time": g.relative_one_vm_time,
            "memory_fit": g.memory_fit,
        } for g in a.gpu_types},
    }


def deadline_offer_to_dict(offer: DeadlineOffer) -> dict[str, Any]:
    """The plan JSON's ``deadline_offer`` (see :func:`plan_to_dict`)."""
    return {
        "policy": None if offer.offer is None else offer.offer.policy,
        "deadline_hours": offer.deadline_hours,
        "target": offer.target,
        "chance": offer.chance,
        "evaluated_on": "traces" if offer.on_traces else "job_model",
        "pools": list(offer.pools),
        "mtbi_hours": _finite(offer.mtbi_hours),
        "wait_hours": _finite(offer.wait_hours),
        "sentence": offer.sentence(),
        "considered": [{
            "policy": p.policy, "runs": p.runs, "deadline_met": p.deadline_met,
            "mean_cost_usd": _finite(p.mean_cost_usd), "cost_usd_p90": _finite(p.cost_usd_p90),
            "on_demand_share": p.on_demand_share,
            "mean_makespan_hours": _finite(p.mean_makespan_hours)} for p in offer.considered],
    }


def plan_to_dict(result: JobPlanResult, catalog: Catalog, *,
                 timestamp: datetime | None = None,
                 comparison: PlanVsRecommend | None = None,
                 deadline_offer: DeadlineOffer | None = None) -> dict[str, Any]:
    """The plan JSON (``deepvm plan --format json``, the dashboard's export).

    Keys: ``schema_version``, ``tool``, ``tool_version``, ``kind`` (``job-plan``),
    ``generated_at`` (only with ``timestamp``), ``inputs``, ``catalog``, ``assumptions``,
    ``best`` (top-k), ``policies`` (``deepvm`` list, ``deepvm_performance``,
    ``deepvm_noscale``, ``cost_first``, ``performance_first``; ``null``/empty with PW off),
    ``frontier`` (by increasing expected cost), ``chosen`` (= ``best[0]``, what
    ``deepvm export``/``launch`` read), ``explanation`` (only when ``best`` is empty),
    ``notes`` and ``warnings`` (inputs that were ignored). ``inputs.gpu_filter`` only when the
    scenario has a GPU filter (as in ``recommend``'s JSON). Every configuration has the keys
    of ``recommend``'s JSON plus ``estimate``. Infinite or undefined numbers are ``null``; an
    estimate of a cluster that is not expected to finish has ``null`` makespan, cost and
    interruptions and a ``does_not_finish`` reason. With ``comparison`` (the plan against
    Recommend's pick, :func:`deepvm_core.pipeline.recommend_job.compare_plan_with_recommendation`),
    ``recommend_comparison``: ``same_cluster`` and its ``sentence``. With ``deadline_offer``
    (the deadline is at risk, :func:`deepvm_core.pipeline.deadline_offer.deadline_offer`),
    ``deadline_offer``: the ``policy`` offered (``null``: none meets the target), its
    parameters (``deadline_hours``, ``target``), the plan's ``chance``, where the runs come from
    and every policy considered, priced.
    """
    s, w = result.scenario, result.workload
    obj = s.objective
    doc: dict[str, Any] = {
        "summary": plan_summary(result, catalog),
        "schema_version": EXPORT_SCHEMA_VERSION,
        "tool": "deepvm-studio",
        "tool_version": tool_version(),
        "kind": PLAN_KIND,
    }
    if timestamp is not None:
        doc["generated_at"] = timestamp.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    pol = result.policies
    doc.update({
        "inputs": {
            "pw_usd_per_hour": result.pw_usd_per_hour,
            "checkpoint_gb": s.checkpoint_gb,
            "buffer_checkpoints": s.buffer_checkpoints,
            "objective": obj,
            "use_quotas": s.use_quotas,
            "max_nodes": s.max_nodes,
            "top_k": result.top_k,
            "goal": result.goal,
            "deadline_hours": result.deadline_hours,
            "budget_usd": result.budget_usd,
            "trials": result.trials,
            "seed": result.seed,
            "epochs": w.epochs,
            "reference_epoch_seconds": w.reference_epoch_seconds,
            "reference_gpu": w.reference_gpu,
            "reference_nodes": w.reference_nodes,
            "workload": w.kind,
            "transformer": None if w.transformer is None else asdict(w.transformer),
            "tokens_per_second": w.tokens_per_second,
            "checkpoint_every_epochs": w.checkpoint_every_epochs,
            "mtbi_hours_by_gpu": dict(w.mtbi_hours_by_gpu),
        },
        "catalog": {
            "name": catalog.name,
            "sha256": result.catalog_sha256,
            "provider": catalog.provider,
            "region": catalog.region,
            "prices_date": catalog.prices_date,
        },
        "assumptions": assumptions_to_dict(result.assumptions),
        "best": [plan_configuration_to_dict(e, obj) for e in result.best],
        "policies": {
            "deepvm": [plan_configuration_to_dict(e, "paper") for e in pol.deepvm],
            "deepvm_performance": plan_configuration_to_dict(pol.deepvm_performance,
                                                             "performance"),
            "deepvm_noscale": plan_configuration_to_dict(pol.deepvm_noscale, "paper",
                                                         noscale=True),
            "cost_first": plan_configuration_to_dict(pol.cost_first, obj),
            "performance_first": plan_configuration_to_dict(pol.performance_first, obj),
        },
        "frontier": [plan_configuration_to_dict(result.estimate(int(i)), obj)
                     for i in result.frontier],
        "chosen": plan_configuration_to_dict(result.chosen, obj),
    })
    if s.gpu_filter.active:
        doc["inputs"]["gpu_filter"] = gpu_filter_to_dict(s.gpu_filter)
    if result.explanation is not None:
        doc["explanation"] = explanation_to_dict(result.explanation, obj)
    doc["notes"] = list(result.notes)
    doc["warnings"] = list(result.warnings)
    if comparison is not None:
        doc["recommend_comparison"] = {"same_cluster": comparison.same,
                                       "sentence": comparison.sentence}
    if deadline_offer is not None:
        doc["deadline_offer"] = deadline_offer_to_dict(deadline_offer)
    return doc

