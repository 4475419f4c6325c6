"""Training speed, the per-hour objective ``speed`` (``job-model.md``, "Training speed").

A cluster of n GPU VMs of type g trains the job at ``speed = 3600 / t_g(n) = 3600 S_g(n) /
t_g(1)`` epochs per hour, with ``t_g(1) = t_ref1 ρ_g`` and the speedup model in force
(``fitted`` by default; :mod:`deepvm_core.job.speedup`). Speed depends on (g, n) only: not on
the architecture (n counts every GPU VM, the Single Anchor's anchor included) nor on the
memory-node type, exactly like Z and performance, so the candidate domain holds it per GPU row
and every solver ranks by it as by the others. ``speed_noscale`` takes S(n) = n (DeepVM-NoScale
under ``speed``).

``speed / speed of one g_ref VM = S_g(n) t_ref1 / t_g(1) = S_g(n) / ρ_g`` (dimensionless), the
figure a person reads as "x one g_ref VM": it does not depend on t_ref. Without a job, speed
uses the example workload (:func:`~deepvm_core.job.workload.example_workload`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from deepvm_core.catalog import Catalog, GpuType
from deepvm_core.errors import DeepVMError

if TYPE_CHECKING:
    from deepvm_core.job.speedup import SpeedupModel
    from deepvm_core.job.workload import Workload

FloatArray = npt.NDArray[np.float64]
SECONDS_PER_HOUR = 3600.0


@dataclass(frozen=True)
class SpeedBasis:
    """What speed is computed from: the job's one-VM times and the speedup model.

    Attributes:
        reference_gpu: g_ref, the reference GPU type's name.
        reference_one_vm_epoch_seconds: t_ref1 = t_ref S_ref(n_ref), seconds per epoch on one
            g_ref VM.
        one_vm_epoch_seconds: t_g(1) per GPU type name, seconds (types without a known time
            are absent: their speed is unknown).
        speedup: the speedup model S_g(n).
        job_given: False when the basis is the example workload's (no job given).
    """

    reference_gpu: str
    reference_one_vm_epoch_seconds: float
    one_vm_epoch_seconds: Mapping[str, float] = field(hash=False)
    speedup: SpeedupModel = field(hash=False)
    job_given: bool = True

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
        return SECONDS_PER_HOUR * np.asarray(s, dtype=np.float64) / t1


def speed_basis(catalog: Catalog, workload: Workload | None = None,
                speedup: SpeedupModel | None = None) -> SpeedBasis:
    """The speed basis of ``workload`` (default: the example job) under ``speedup`` (default:
    ``fitted`` without measurements) on ``catalog``.

    Raises:
        WorkloadError: the workload does not fit the catalog (e.g. no GPU type with eFLOPS to
            default g_ref to).
    """
    from deepvm_core.job.speedup import SpeedupModel, one_vm_epoch_seconds
    from deepvm_core.job.workload import check_workload, example_workload

    model = SpeedupModel() if speedup is None else speedup
    job = example_workload() if workload is None else workload
    reference = check_workload(job, catalog)
    times = {t.gpu: t.epoch_seconds for t in one_vm_epoch_seconds(job, catalog, model)
             if t.epoch_seconds is not None}
    return SpeedBasis(reference.name, times[reference.name], times, model,
                      job_given=workload is not None)


def default_speed_basis(catalog: Catalog) -> SpeedBasis | None:
    """The example job's speed basis on ``catalog``, or ``None`` when the catalog has no GPU
    type to take as g_ref (then speed is unknown, and the ``speed`` objective refused)."""
    try:
        return speed_basis(catalog)
    except DeepVMError:
        return None


def example_speed_note(basis: SpeedBasis) -> str:
    """The note saying that speed is the example job's (no job given)."""
    from deepvm_core.job.workload import EXAMPLE_DESCRIPTION

    return (f"speed is the example job's ({EXAMPLE_DESCRIPTION}), shown as a multiple of one "
            f"{basis.reference_gpu} VM; give your job's epochs and epoch time for its own")
