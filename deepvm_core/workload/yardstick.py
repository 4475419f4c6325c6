"""The fixed yardstick of every job's epoch time (issue 24, "One yardstick everywhere").

A workload that names no reference type (``Workload.reference_gpu`` ``None``) gives its epoch
time as **seconds per epoch on one A10G GPU** on the artifact's eFLOPS scale
(:data:`YARDSTICK_EFLOPS`, the artifact's measured g5.xlarge,
:data:`deepvm_core.hardware.eflops_estimate.MEASURED_SINGLE_GPU`). The yardstick is not a VM
type of any catalog, so the same job is the same compute in every catalog and region: a type of
``E`` eFLOPS takes ``t_g(1) = t_ref1 * YARDSTICK_EFLOPS / E`` seconds per epoch on one VM, or
``t_ref1 * t^m_g(1) / t^m_A10G(1)`` when a measurement table has one-node rows of g and of a
one-A10G type (:func:`yardstick_rows`; :func:`deepvm_core.workload.speedup.one_vm_epoch_seconds`).

Speed is shown in absolute units (epochs per hour, job hours); where a ratio helps it reads
"x one A10G" (:data:`YARDSTICK_NAME`).
"""

from __future__ import annotations

from typing import Final

from deepvm_core.catalog import Catalog, GpuType
from deepvm_core.hardware.eflops_estimate import MEASURED_SINGLE_GPU
from deepvm_core.hardware.measurements import InstanceMeasurements, MeasurementTable
from deepvm_core.workload.gpu_hardware import gpu_hardware

__all__ = ["YARDSTICK_CHOICE", "YARDSTICK_EFLOPS", "YARDSTICK_NAME", "is_yardstick_type",
           "yardstick_rows", "yardstick_type"]

#: The yardstick's accelerator: one GPU of this chip (``data/accelerators.csv``).
YARDSTICK_NAME: Final = "A10G"
#: Its eFLOPS on the artifact's scale: the artifact's measured g5.xlarge (one A10G), 696.
YARDSTICK_EFLOPS: Final = MEASURED_SINGLE_GPU[YARDSTICK_NAME]
#: How a form names the yardstick as the choice of "measured on" (no reference type).
YARDSTICK_CHOICE: Final = f"one {YARDSTICK_NAME} GPU (the yardstick)"


def is_yardstick_type(gpu: GpuType | str) -> bool:
    """Whether a VM type (a catalog row or an instance type's name) is one yardstick GPU: one
    A10G and nothing else."""
    hw = gpu_hardware(gpu)
    return hw.accelerator is not None and hw.accelerator.name == YARDSTICK_NAME and (
        hw.gpus_per_vm == 1)


def yardstick_rows(table: MeasurementTable | None) -> InstanceMeasurements | None:
    """The rows of a one-A10G type with a one-node time in ``table`` (the first by name), or
    ``None``: the measured yardstick of relative one-VM times."""
    if table is None:
        return None
    rows = sorted((m for m in table.instances
                   if m.one_node_epoch_seconds is not None and is_yardstick_type(m.instance)),
                  key=lambda m: m.instance)
    return rows[0] if rows else None


def yardstick_type(catalog: Catalog) -> GpuType | None:
    """The cheapest (spot, then name) one-A10G type of ``catalog``, or ``None``: the VM a page
    offers when it needs a catalog type for the yardstick (an uploaded table's one-node time as
    the epoch time, relative eFLOPS calibration)."""
    types = [g for g in catalog.gpu_types if is_yardstick_type(g)]
    return min(types, key=lambda g: (g.spot_usd_per_hour, g.name)) if types else None
