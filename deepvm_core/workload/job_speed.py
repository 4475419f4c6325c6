"""A job's speed basis (:class:`~deepvm_core.workload.speed.SpeedBasis`): its one-VM times
t_g(1) = t_ref1 ρ_g under its speedup model (:func:`~deepvm_core.workload.speedup.
one_vm_epoch_seconds`), so that ``recommend`` and the plan rank and report the job's own
training speed."""

from __future__ import annotations

from deepvm_core.catalog import Catalog
from deepvm_core.workload.speed import SpeedBasis
from deepvm_core.workload.speedup import SpeedupModel, one_vm_epoch_seconds
from deepvm_core.workload.workload import Workload, check_workload


def speed_basis(catalog: Catalog, workload: Workload,
                speedup: SpeedupModel | None = None) -> SpeedBasis:
    """The speed basis of ``workload`` under ``speedup`` (default: ``fitted`` without
    measurements) on ``catalog``.

    Raises:
        WorkloadError: the workload does not fit the catalog.
    """
    model = SpeedupModel() if speedup is None else speedup
    reference = check_workload(workload, catalog)
    times = {t.gpu: t.epoch_seconds for t in one_vm_epoch_seconds(workload, catalog, model)
             if t.epoch_seconds is not None}
    return SpeedBasis(reference.name, times[reference.name], times, model)
