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
plan derives them once. Without a job, speed is the example job's
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
from deepvm_core.units import SECONDS_PER_HOUR
from deepvm_core.workload.speedup import OneVmTime, SpeedupModel, one_vm_epoch_seconds
from deepvm_core.workload.workload import EXAMPLE_DESCRIPTION, Workload, example_workload
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
    """

    reference_gpu: str
    reference_one_vm_epoch_seconds: float
    one_vm_epoch_seconds: Mapping[str, float] = field(hash=False)
    speedup: SpeedupModel = field(hash=False)
    job_given: bool = True
    one_vm: tuple[OneVmTime, ...] = field(default=(), hash=False, repr=False)

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
    one_vm = one_vm_epoch_seconds(workload, catalog, model)
    times = {t.gpu: t.epoch_seconds for t in one_vm if t.epoch_seconds is not None}
    reference = next((t for t in one_vm if t.source == "reference"), None)
    if reference is None or reference.epoch_seconds is None:  # the yardstick: n_ref = 1
        return SpeedBasis(YARDSTICK_NAME, workload.reference_epoch_seconds, times, model,
                          job_given, one_vm)
    return SpeedBasis(reference.gpu, reference.epoch_seconds, times, model, job_given, one_vm)


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
