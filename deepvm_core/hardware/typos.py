"""Catalog values that look like typos, every rule (issue 27, finding 3): the catalog's own
(:func:`deepvm_core.catalog.plausibility.plausibility_warnings`: prices, vCPUs, memory,
network) and a GPU type's eFLOPS against the accelerator table's estimate.

**eFLOPS.** A GPU type whose accelerator the table knows (``data/accelerators.csv``, by its
``accelerator`` field else its AWS family) has an estimate of its eFLOPS
(:func:`~deepvm_core.hardware.eflops_estimate.vm_eflops`, the ResNet-50 calibration of the
artifact's eFLOPS). An eFLOPS more than :data:`EFLOPS_ESTIMATE_FACTOR` (5) times above or
below it is named: the estimate and published training benchmarks disagree by at most 3.1x
(B200, ResNet-50 AMP: :func:`~deepvm_core.hardware.eflops_estimate.benchmark_comparison`), so
5x is no workload's difference, while an extra or a missing zero is 10x.
"""

from __future__ import annotations

from typing import Final

from deepvm_core.catalog import Catalog, GpuType
from deepvm_core.catalog.plausibility import plausibility_warnings, row_warnings
from deepvm_core.errors import Problem
from deepvm_core.hardware.accelerators import (
    Accelerator,
    accelerator_of_instance,
    bundled_accelerators,
)
from deepvm_core.hardware.eflops_estimate import vm_eflops

#: eFLOPS this many times above or below the accelerator table's estimate is named.
EFLOPS_ESTIMATE_FACTOR: Final = 5.0


def _accelerator(gpu: GpuType) -> Accelerator | None:
    table = bundled_accelerators()
    if gpu.accelerator is not None and gpu.accelerator in table:
        return table[gpu.accelerator]
    return accelerator_of_instance(gpu.name)


def eflops_estimate_warnings(catalog: Catalog) -> list[Problem]:
    """GPU types whose eFLOPS is far from the accelerator table's estimate (module doc)."""
    out: list[Problem] = []
    for g in catalog.gpu_types:
        acc = _accelerator(g)
        if acc is None or g.eflops is None:
            continue
        gpus = g.gpu_count or 1
        estimate = vm_eflops(acc, gpus)
        if estimate is None:
            continue
        ratio = g.eflops / estimate
        if ratio > EFLOPS_ESTIMATE_FACTOR or ratio < 1.0 / EFLOPS_ESTIMATE_FACTOR:
            chips = f"one {acc.name}" if gpus == 1 else f"{gpus} x {acc.name}"
            out.append(Problem(g.name, "eflops", g.eflops,
                               f"is {ratio:.3g}x the estimate {estimate:.0f} of {chips} from "
                               f"the accelerator table (data/accelerators.csv; a measurement "
                               f"is within {EFLOPS_ESTIMATE_FACTOR:g}x of it): a typo?"))
    return out


def typo_warnings(catalog: Catalog, base: Catalog | None = None) -> tuple[Problem, ...]:
    """Every value of ``catalog`` that looks like a typo: the catalog's rules (against
    ``base``, the catalog it was edited from, when given) and the eFLOPS estimate's."""
    return (*plausibility_warnings(catalog, base), *eflops_estimate_warnings(catalog))


def row_typo_warnings(catalog: Catalog) -> tuple[Problem, ...]:
    """The rules of :func:`typo_warnings` that read one type's own values and a fixed
    reference only (:func:`~deepvm_core.catalog.plausibility.row_warnings` and the eFLOPS
    estimate's): leaving the types they name out of a catalog clears them, whatever else it
    holds."""
    return (*row_warnings(catalog), *eflops_estimate_warnings(catalog))
