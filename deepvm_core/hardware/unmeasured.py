"""eFLOPS and scaling of a GPU type that a catalog builder writes (``deepvm catalog import``,
``deepvm fetch``): the base catalog's value, else the estimate and the prior.

One rule for both builders:

* **eFLOPS.** The base catalog's row's value when it has one that is not itself an estimate
  (``measured``, or a user's ``edited`` value, kept with its ``eflops_source``); else the
  estimate :func:`deepvm_core.hardware.eflops_estimate.vm_eflops` of the type's accelerator and
  GPU count, rounded to 0.1 (``eflops_source`` ``estimated: k C^0.34 B^0.66 (8 x A100)``); else
  ``null`` ("needs eFLOPS": no accelerator model, or a chip without an estimate, such as
  Trainium), with the reason.
* **Scaling.** The base catalog's (a, b, c) when it has them and they are not a prior; else,
  with an eFLOPS, the step-model prior of :mod:`deepvm_core.hardware.scaling_prior` at the
  type's network bandwidth, rounded to 6 decimals (``scaling_source`` ``prior: ..., G 0.1
  GB``); else ``null``.

A base value that is an estimate or a prior is computed again: the accelerator table, the GPU
count or the bandwidth may have changed since.
"""

from __future__ import annotations

from typing import Any

from deepvm_core.catalog.types import MEASURED, GpuType
from deepvm_core.hardware.accelerators import Accelerator
from deepvm_core.hardware.eflops_estimate import ESTIMATE_LABEL, vm_eflops
from deepvm_core.hardware.scaling_prior import (
    DEFAULT_STEP_MODEL,
    PRIOR_LABEL,
    StepHardware,
    StepModel,
    prior_scaling,
)


def is_derived(source: str) -> bool:
    """True for an ``eflops_source`` or ``scaling_source`` this module writes (an estimate or
    a prior), False for a measured or edited value."""
    return source.startswith((ESTIMATE_LABEL.split(":", 1)[0], PRIOR_LABEL.split(":", 1)[0]))


def missing_eflops_reason(acc: Accelerator | None, family: str) -> str:
    """Why a GPU type of instance family ``family`` has no eFLOPS estimate."""
    if acc is None:
        return f"no accelerator model for family {family} in data/accelerators.csv"
    return f"no estimate for {acc.name} (see its note in data/accelerators.csv)"


def gpu_throughput_fields(acc: Accelerator | None, gpus: int, base_row: GpuType | None,
                          network_gbps: float, family: str,
                          step: StepModel = DEFAULT_STEP_MODEL
                          ) -> tuple[dict[str, Any], str | None]:
    """The row fields ``eflops``, ``scaling`` and, when not measured, ``eflops_source`` and
    ``scaling_source`` of one GPU type (module docstring), and why it has no eFLOPS (``None``
    when it has one).

    Args:
        acc: the type's accelerator model (``None``: not in ``data/accelerators.csv``).
        gpus: its GPUs (chips) per VM.
        base_row: the base catalog's row of the same name, or ``None``.
        network_gbps: its network bandwidth, Gbit/s (the prior's ``BW``).
        family: its instance family, for the reason.
    """
    row: dict[str, Any] = {}
    missing = None
    if base_row is not None and base_row.eflops is not None and not is_derived(
            base_row.eflops_source):
        row["eflops"] = base_row.eflops
        if base_row.eflops_source != MEASURED:
            row["eflops_source"] = base_row.eflops_source
    else:
        estimate = None if acc is None else vm_eflops(acc, gpus, step=step)
        row["eflops"] = None if estimate is None else round(estimate, 1)
        if estimate is None:
            missing = missing_eflops_reason(acc, family)
        else:
            assert acc is not None
            row["eflops_source"] = f"{ESTIMATE_LABEL} ({gpus} x {acc.name})"
    if base_row is not None and base_row.scaling is not None and not is_derived(
            base_row.scaling_source):
        s = base_row.scaling
        row["scaling"] = {"a": s.a, "b": s.b, "c": s.c}
        if base_row.scaling_source != MEASURED:
            row["scaling_source"] = base_row.scaling_source
    elif row["eflops"] is not None:
        s = prior_scaling(step, StepHardware(row["eflops"], gpus, network_gbps))
        row["scaling"] = {"a": round(s.a, 6), "b": round(s.b, 6), "c": round(s.c, 6)}
        row["scaling_source"] = f"{PRIOR_LABEL}, G {step.gradient_gb:g} GB"
    else:
        row["scaling"] = None
    return row, missing
