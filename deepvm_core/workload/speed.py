"""Training speed, the per-hour objective ``speed`` (``job-model.md``, "Training speed"): a
job's speed basis, the one home of it.

A cluster of n GPU VMs of type g trains the job at ``speed = 3600 / t_g(n) = 3600 S_g(n) /
t_g(1)`` epochs per hour, with ``t_g(1) = t_ref1 ρ_g`` (:func:`~deepvm_core.workload.speedup.
one_vm_epoch_seconds`) and the speedup model in force (``fitted`` by default). Speed depends on
(g, n) only: not on the architecture (n counts every GPU VM, the Single Anchor's anchor
included) nor on the memory-node type, exactly like Z and performance, so the candidate domain
holds it per GPU row and every solver ranks by it as by the others. ``speed_noscale`` takes
S(n) = n (DeepVM-NoScale under ``speed``).

``speed / speed of one g_ref VM = S_g(n) t_ref1 / t_g(1) = S_g(n) / ρ_g`` (dimensionless), the
figure a person reads as "x one g_ref": it does not depend on t_ref. Without a named reference
type g_ref is the fixed yardstick, one A10G (:mod:`deepvm_core.workload.yardstick`): "x one
A10G", the same in every catalog.

A :class:`SpeedBasis` holds what speed is computed from: the job's one-VM times, derived once
(:func:`speed_basis`, which checks the workload against the catalog), and its speedup model. The
job model reads the same times (:func:`deepvm_core.job.inputs.job_inputs` with ``basis``), so a
plan derives them once.

A transformer job (:attr:`~deepvm_core.workload.workload.Workload.transformer`) gets its one-VM
times from :mod:`deepvm_core.workload.throughput` (FLOPs per token at a published MFU, or the
user's tokens/s scaled by that estimate's ratio between types) and its GPU memory fit from
:mod:`deepvm_core.workload.memory`: a type that cannot hold one replica is not admitted
(:meth:`SpeedBasis.admits`: the candidate domain leaves it out, and the explanation says why),
and a replica sharded over k VMs admits only n = k, 2k, ... VMs (:meth:`SpeedBasis.replica_vms`).
A measurement on n_ref VMs gives one VM's tokens/s as ``tokens/s / S_ref(n_ref)``, as t_ref1 does
for a cnn job. Without a job, speed is the example job's
(:func:`~deepvm_core.workload.workload.example_workload`): :func:`default_speed_basis` is that
workload's basis, marked ``job_given`` False.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from deepvm_core.arrays import FloatArray
from deepvm_core.catalog import Catalog, GpuType
from deepvm_core.errors import Problem, WorkloadError
from deepvm_core.units import SECONDS_PER_HOUR
from deepvm_core.workload.memory import MemoryVerdict, memory_fit, no_fit_reason
from deepvm_core.workload.speedup import OneVmTime, SpeedupModel, one_vm_epoch_seconds
from deepvm_core.workload.throughput import TokensMeasurement, transformer_times
from deepvm_core.workload.transformer import TransformerJob
from deepvm_core.workload.workload import (
    EXAMPLE_DESCRIPTION,
    Workload,
    check_workload,
    example_workload,
)
from deepvm_core.workload.yardstick import YARDSTICK_NAME

__all__ = ["SpeedBasis", "default_speed_basis", "example_speed_note", "speed_basis"]


@dataclass(frozen=True)
class SpeedBasis:
    """What speed is computed from: the job's one-VM times and the speedup model.

    Attributes:
        reference_gpu: g_ref, the reference GPU type's name, or the yardstick's
            (:data:`~deepvm_core.workload.yardstick.YARDSTICK_NAME`, ``A10G``) when the
            workload names none.
        reference_one_vm_epoch_seconds: t_ref1 = t_ref S_ref(n_ref), seconds per epoch on one
            g_ref VM (on one A10G under the yardstick).
        one_vm_epoch_seconds: t_g(1) per GPU type name, seconds (types without a known time
            are absent: their speed is unknown).
        speedup: the speedup model S_g(n).
        job_given: False when the basis is the example job's (no job given).
        one_vm: t_g(1) of every GPU type of the catalog, in catalog order, with where its
            relative time comes from (:class:`~deepvm_core.workload.speedup.OneVmTime`).
        memory: a transformer job's memory verdict of every GPU type, in catalog order
            (empty for a cnn job: every type admitted).
        transformer: the transformer job the basis is for, or ``None`` (a cnn job).
    """

    reference_gpu: str
    reference_one_vm_epoch_seconds: float
    one_vm_epoch_seconds: Mapping[str, float] = field(hash=False)
    speedup: SpeedupModel = field(hash=False)
    job_given: bool = True
    one_vm: tuple[OneVmTime, ...] = field(default=(), hash=False, repr=False)
    memory: tuple[MemoryVerdict, ...] = field(default=(), hash=False, repr=False)
    transformer: TransformerJob | None = field(default=None, hash=False, repr=False)

    def admits(self, gpu: str) -> bool:
        """Whether the job can run on GPU type ``gpu`` at all (a cnn job: always; a
        transformer job: when one replica fits in its GPUs' memory and the job has a time
        there)."""
        return self.replica_vms(gpu) is not None

    def replica_vms(self, gpu: str) -> int | None:
        """VMs of type ``gpu`` one replica spans (1 unless a sharded replica needs more;
        clusters are then whole numbers of replicas), or ``None`` when the job does not fit."""
        if not self.memory:
            return 1
        verdict = next((v for v in self.memory if v.instance_type == gpu), None)
        if verdict is None or not verdict.fits or gpu not in self.one_vm_epoch_seconds:
            return None  # no room for a replica, or no time for the job
        return verdict.vms_per_replica or 1

    def no_fit_reason(self) -> str | None:
        """``None`` when some GPU type holds the job; else why none does (a transformer
        job only)."""
        job = self.transformer
        if job is None or not self.memory:
            return None
        return no_fit_reason(self.memory, job)


    @property
    def reference_epochs_per_hour(self) -> float:
        """The speed of one g_ref VM, epochs per hour: ``3600 / t_ref1``."""
        return SECONDS_PER_HOUR / self.reference_one_vm_epoch_seconds

    def epochs_per_hour(self, gpu: GpuType, nodes: npt.ArrayLike, *,
                        noscale: bool = False) -> FloatArray:
        """``3600 S_g(n) / t_g(1)`` epochs per hour for an array of node counts (S(n) = n if
        ``noscale``); NaN when t_g(1) is unknown."""
        x = np.asarray(nodes, dtype=np.float64)
        t1 = self.one_vm_epoch_seconds.get(gpu.name)
        if t1 is None:
            return np.full(x.shape, np.nan)
        s = x if noscale else self.speedup.speedup(gpu, x)
        return np.asarray(SECONDS_PER_HOUR * np.asarray(s, dtype=np.float64) / t1,
                          dtype=np.float64)


def speed_basis(catalog: Catalog, workload: Workload, speedup: SpeedupModel | None = None, *,
                job_given: bool = True) -> SpeedBasis:
    """The speed basis of ``workload`` under ``speedup`` (default: ``fitted`` without
    measurements) on ``catalog``: its one-VM times, derived once. ``job_given`` False marks the
    example job's (:func:`default_speed_basis`).

    Raises:
        WorkloadError: the workload does not fit the catalog.
    """
    model = SpeedupModel() if speedup is None else speedup
    if workload.transformer is not None:
        return _transformer_basis(catalog, workload, model, job_given)
    one_vm = one_vm_epoch_seconds(workload, catalog, model)
    times = {t.gpu: t.epoch_seconds for t in one_vm if t.epoch_seconds is not None}
    reference = next((t for t in one_vm if t.source == "reference"), None)
    if reference is None or reference.epoch_seconds is None:  # the yardstick: n_ref = 1
        assert workload.reference_epoch_seconds is not None  # a cnn job's (Workload checks)
        return SpeedBasis(YARDSTICK_NAME, workload.reference_epoch_seconds, times, model,
                          job_given, one_vm)
    return SpeedBasis(reference.gpu, reference.epoch_seconds, times, model, job_given, one_vm)


def _transformer_basis(catalog: Catalog, workload: Workload, model: SpeedupModel,
                       job_given: bool) -> SpeedBasis:
    """A transformer job's basis (module docstring): memory verdicts and one-VM times of every
    GPU type; g_ref the measured type, else the admitted type with the most tokens per spot
    USD (the type with the most GPU memory per VM when none is admitted)."""
    job = workload.transformer
    assert job is not None
    check_workload(workload, catalog)  # names: g_ref, MTBI overrides
    gpus = catalog.gpu_types
    verdicts = memory_fit(gpus, job)
    measurement = None
    if workload.tokens_per_second is not None and workload.reference_gpu is not None:
        reference = next(g for g in gpus if g.name == workload.reference_gpu)
        s_ref = float(model.speedup(reference, np.array([workload.reference_nodes]))[0])
        measurement = TokensMeasurement(workload.tokens_per_second / s_ref, reference.name)
    times = transformer_times(job, gpus, 1, measurement)
    fits = {v.instance_type for v in verdicts if v.fits}
    known = [(g, t) for g, t in zip(gpus, times, strict=True) if t.epoch_seconds is not None]
    if not known:
        why = times[0].basis if times else "the catalog has no GPU type"
        raise WorkloadError([Problem("workload", "transformer", job.describe(),
                                     f"no GPU type of the catalog has a time for it: {why}")])
    if workload.reference_gpu is not None:
        ref_name = workload.reference_gpu
        if not any(g.name == ref_name for g, _ in known):
            why = next(t.basis for t in times if t.instance_type == ref_name)
            raise WorkloadError([Problem("workload", "reference_gpu", ref_name,
                                         f"has no time for this job: {why}")])
    else:
        admitted = [(g, t) for g, t in known if g.name in fits]
        if admitted:
            ref_name = max(admitted, key=lambda p: (
                (p[1].tokens_per_second or 0.0) / p[0].spot_usd_per_hour, p[0].name))[0].name
        else:
            ref_name = max(known, key=lambda p: (_vm_memory_gb(verdicts, p[0].name),
                                                 p[0].name))[0].name
    t_ref1 = next(t.epoch_seconds for g, t in known if g.name == ref_name)
    assert t_ref1 is not None
    one_vm = tuple(
        OneVmTime(g.name, t.epoch_seconds if g.name in fits else None,
                  ("reference" if g.name == ref_name else "mfu")
                  if g.name in fits and t.epoch_seconds is not None else None,
                  None if t.epoch_seconds is None or g.name not in fits
                  else t.epoch_seconds / t_ref1)
        for g, t in zip(gpus, times, strict=True))
    seconds = {t.gpu: t.epoch_seconds for t in one_vm if t.epoch_seconds is not None}
    return SpeedBasis(ref_name, t_ref1, seconds, model, job_given, one_vm, verdicts, job)


def _vm_memory_gb(verdicts: tuple[MemoryVerdict, ...], gpu: str) -> float:
    v = next(v for v in verdicts if v.instance_type == gpu)
    return (v.gpus_per_vm or 0) * (v.gpu_memory_gb or 0.0)


def default_speed_basis(catalog: Catalog) -> SpeedBasis | None:
    """The example job's speed basis on ``catalog``: :func:`speed_basis` of
    :func:`~deepvm_core.workload.workload.example_workload` (on the yardstick, one A10G; the
    ``fitted`` speedup, ρ_g from eFLOPS), ``job_given`` False; ``None`` when no GPU type has
    eFLOPS (then speed is unknown, and the ``speed`` objective refused)."""
    if not catalog.solvable_gpu_types:
        return None
    return speed_basis(catalog, example_workload(), job_given=False)


def example_speed_note(basis: SpeedBasis) -> str:
    """The note saying that speed is the example job's (no job given)."""
    return (f"speed is the example job's ({EXAMPLE_DESCRIPTION}), in epochs per hour and as a "
            f"multiple of one {basis.reference_gpu}; give your job's epochs and epoch time for "
            "its own")
