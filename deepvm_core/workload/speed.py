"""Training speed, the per-hour objective ``speed`` (``job-model.md``, "Training speed").

A cluster of n GPU VMs of type g trains the job at ``speed = 3600 / t_g(n) = 3600 S_g(n) /
t_g(1)`` epochs per hour, with ``t_g(1) = t_ref1 ρ_g`` and the speedup model in force
(``fitted`` by default). Speed depends on (g, n) only: not on the architecture (n counts every
GPU VM, the Single Anchor's anchor included) nor on the memory-node type, exactly like Z and
performance, so the candidate domain holds it per GPU row and every solver ranks by it as by
the others. ``speed_noscale`` takes S(n) = n (DeepVM-NoScale under ``speed``).

``speed / speed of one g_ref VM = S_g(n) t_ref1 / t_g(1) = S_g(n) / ρ_g`` (dimensionless), the
figure a person reads as "x one g_ref VM": it does not depend on t_ref.

A :class:`SpeedBasis` holds what speed is computed from. :func:`default_speed_basis` is the
example job's (no job given: :data:`EXAMPLE_EPOCHS` epochs of :data:`EXAMPLE_EPOCH_SECONDS` s
on one VM of the catalog's top spot-FLOPP type, ``fitted``, ρ_g from eFLOPS); a job's basis is
built in the job model (:func:`deepvm_core.workload.job_speed.speed_basis`), which may use a
measurement table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, Protocol

import numpy as np
import numpy.typing as npt

from deepvm_core.arrays import FloatArray
from deepvm_core.catalog import Catalog, GpuType
from deepvm_core.model import fitted_speedup, flopp_ranking
from deepvm_core.units import SECONDS_PER_HOUR

#: The example job, used wherever the user has not given theirs (the CLI's defaults,
#: docs/cli.md, the dashboard's Plan page, the benchmarks, speed without a job): a
#: ResNet-50-sized job, 90 epochs of 960 s on one VM of the reference type, i.e. 24 hours of
#: training on one VM. An example, not a measurement: edit the epoch time to yours. The
#: reference type of docs/cli.md is :data:`EXAMPLE_REFERENCE_GPU` (the example leaves g_ref
#: to its default, the catalog's top spot-FLOPP type, which it is on the bundled AWS catalogs).
EXAMPLE_EPOCHS: Final = 90.0
EXAMPLE_EPOCH_SECONDS: Final = 960.0
EXAMPLE_REFERENCE_GPU: Final = "g4dn.xlarge"
EXAMPLE_DESCRIPTION: Final = ("an example, a ResNet-50-sized job: 90 epochs of 960 s on one VM "
                              "of the reference type (24 h); edit the epoch time to yours")


class SpeedupCurve(Protocol):
    """S_g(n): what a speed basis needs of a speedup model
    (:class:`deepvm_core.workload.speedup.SpeedupModel` is one)."""

    @property
    def name(self) -> str:
        """The model's name (``paper``, ``fitted``, ``measured``)."""
        ...

    def speedup(self, gpu: GpuType, nodes: npt.ArrayLike) -> FloatArray:
        """S_g(n) for an array of node counts (>= 1)."""
        ...


@dataclass(frozen=True)
class FittedCurve:
    """The ``fitted`` speedup without measurements (the example job's)."""

    name: str = "fitted"

    def speedup(self, gpu: GpuType, nodes: npt.ArrayLike) -> FloatArray:
        """S_g(n) of the fitted model (:func:`~deepvm_core.model.fitted_speedup`)."""
        return fitted_speedup(gpu.scaling, nodes)


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
        job_given: False when the basis is the example job's (no job given).
    """

    reference_gpu: str
    reference_one_vm_epoch_seconds: float
    one_vm_epoch_seconds: Mapping[str, float] = field(hash=False)
    speedup: SpeedupCurve = field(hash=False)
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
        return np.asarray(SECONDS_PER_HOUR * np.asarray(s, dtype=np.float64) / t1,
                          dtype=np.float64)


def default_speed_basis(catalog: Catalog) -> SpeedBasis | None:
    """The example job's speed basis on ``catalog``: g_ref the top spot-FLOPP type (stage 2),
    t_ref1 = :data:`EXAMPLE_EPOCH_SECONDS`, ρ_g = eFLOPS(g_ref) / eFLOPS(g), the ``fitted``
    speedup; ``None`` when no GPU type has eFLOPS (then speed is unknown, and the ``speed``
    objective refused)."""
    ranking = flopp_ranking(catalog)
    if not ranking:
        return None
    reference = catalog.instance(ranking[0].name)
    assert isinstance(reference, GpuType)
    assert reference.eflops is not None
    t_ref1 = EXAMPLE_EPOCH_SECONDS
    times = {g.name: t_ref1 * (reference.eflops / g.eflops) for g in catalog.gpu_types
             if g.eflops is not None}
    times[reference.name] = t_ref1
    return SpeedBasis(reference.name, t_ref1, times, FittedCurve(), job_given=False)


def example_speed_note(basis: SpeedBasis) -> str:
    """The note saying that speed is the example job's (no job given)."""
    return (f"speed is the example job's ({EXAMPLE_DESCRIPTION}), shown as a multiple of one "
            f"{basis.reference_gpu} VM; give your job's epochs and epoch time for its own")
