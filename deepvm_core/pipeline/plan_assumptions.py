"""What a job plan assumes, and the notes that say so (:func:`deepvm_core.pipeline.plan.plan_job`
builds both once per plan).

:func:`plan_assumptions` reads the job's speed basis (its one-VM times, derived once) and the
market's MTBI estimates into a :class:`~deepvm_core.job.result.PlanAssumptions`;
:func:`odds_by_gpu` says where each GPU type's closed-form odds come from; :func:`plan_notes`
is the plan's notes: the catalog's, the speedup, MTBI and capacity-wait assumptions, the
per-VM share, PW off (:data:`NO_PW_NOTE`) and the memory fit. Pure: no I/O, no UI.
"""

from __future__ import annotations

from typing import Final

from deepvm_core.catalog import Catalog
from deepvm_core.job.odds import bucket_odds
from deepvm_core.job.result import GpuAssumption, PlanAssumptions
from deepvm_core.market.mtbi import (
    ADVISOR_BUCKET_MTBI_HOURS,
    DEFAULT_MTBI_HOURS,
    DEFAULT_WAIT_HOURS,
    mtbi_estimates,
)
from deepvm_core.recommend.explain import catalog_notes
from deepvm_core.workload.memory import fit_note
from deepvm_core.workload.speed import SpeedBasis
from deepvm_core.workload.workload import Workload

NO_PW_NOTE: Final = ("PW is off: the paper's policies (DeepVM, NoScale, Cost-First, "
                     "Performance-First) choose within a price per hour, so they are not "
                     "computed; give a PW to compare them")


def plan_assumptions(catalog: Catalog, workload: Workload, basis: SpeedBasis) -> PlanAssumptions:
    """What the plan assumes, from the job's speed basis (its one-VM times, derived once)."""
    speedup = basis.speedup
    fit = {v.instance_type: v.reason for v in basis.memory}
    gpus = tuple(
        GpuAssumption(
            gpu=m.gpu, mtbi_hours=m.mtbi_hours, mtbi_source=m.mtbi_source,
            interruption_bucket=m.interruption_bucket, speedup_source=speedup.source(g),
            one_vm_epoch_seconds=t.epoch_seconds, one_vm_source=t.source,
            relative_one_vm_time=t.relative_time, one_vm_table=t.table,
            memory_fit=fit.get(g.name), wait_hours=m.wait_hours, wait_source=m.wait_source)
        for g, m, t in zip(catalog.gpu_types, mtbi_estimates(workload, catalog), basis.one_vm,
                           strict=True))
    return PlanAssumptions(
        speedup=speedup.name,
        measurements_source=None if speedup.measurements is None
        else speedup.measurements.source,
        reference_gpu=basis.reference_gpu,
        checkpoint_every_epochs=workload.checkpoint_every_epochs,
        restart_hours=float(workload.restart_hours),
        wait_hours=None if workload.wait_hours is None else float(workload.wait_hours),
        disk_gb_per_s=float(workload.disk_gb_per_second),
        checkpoint_fixed_seconds=float(workload.checkpoint_fixed_seconds),
        mtbi_scale=float(workload.mtbi_scale),
        gpu_types=gpus,
        per_vm_share=float(workload.per_vm_share),
    )


def odds_by_gpu(assumptions: PlanAssumptions) -> dict[str, str]:
    """GPU type -> where its closed-form odds come from (:func:`bucket_odds`)."""
    return {g.gpu: bucket_odds(g.interruption_bucket, user_mtbi=g.mtbi_source == "user",
                               user_wait=g.wait_source == "user")
            for g in assumptions.gpu_types}


def plan_notes(catalog: Catalog, assumptions: PlanAssumptions, solvable: set[str],
               pw: float | None, basis: SpeedBasis) -> tuple[str, ...]:
    """The plan's notes on what it assumed, for the GPU types in ``solvable`` (``pw``
    ``None``: PW off, :data:`NO_PW_NOTE`)."""
    notes = list(catalog_notes(catalog))
    gpus = [g for g in assumptions.gpu_types if g.gpu in solvable]
    linear = [g.gpu for g in gpus if g.speedup_source == "linear"]
    if linear:
        notes.append("no scaling fit, speedup S(n) = n assumed for: " + ", ".join(linear))
    if assumptions.speedup == "measured":
        fallback = [g.gpu for g in gpus if g.speedup_source != "measured"]
        if fallback:
            notes.append("no measurements, the fitted speedup used for: " + ", ".join(fallback))
    default = [g.gpu for g in gpus if g.mtbi_source == "default"]
    if default:
        notes.append(f"no Spot Advisor bucket, the default MTBI ({DEFAULT_MTBI_HOURS:g} h "
                     f"before the scale, the 10-15 % bucket) assumed for: " + ", ".join(default))
    if any(g.mtbi_source == "advisor" for g in gpus):
        hours = "/".join(f"{h:g}" for h in ADVISOR_BUCKET_MTBI_HOURS)
        notes.append(f"MTBI from Spot Advisor buckets ({hours} h, one spot VM) is an "
                     "assumption, not a measurement: set it per type or scale it to test the "
                     "sensitivity")
    if any(g.wait_source != "user" for g in gpus):
        notes.append(f"capacity wait W from the Spot Advisor bucket ({DEFAULT_WAIT_HOURS:g} h "
                     "in every bucket, measured on >20 % traces), also before the first "
                     "attempt of a job that starts inside an outage; P10-P90 ranges from a "
                     "bucket spread over the markets the bucket holds")
    if assumptions.per_vm_share > 0:
        notes.append(f"interruptions grow with the cluster: n spot VMs are interrupted "
                     f"1 + {assumptions.per_vm_share:g} (n - 1) times as often as one "
                     "(per-VM share ρ, an assumption)")
    if pw is None:
        notes.append(NO_PW_NOTE)
    if basis.transformer is not None:
        notes.append(fit_note(basis.memory, basis.transformer))
    return tuple(notes)
