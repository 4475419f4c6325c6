"""Speedup models S_g(n) and the one-VM epoch time t_g(1) (``job-model.md``, "Epoch time").

n GPU VMs of type g take ``t_g(n) = t_g(1) / S_g(n)`` seconds per epoch. Three speedup models,
each with ``S_g(1) = 1``:

* ``paper``: ``S(n) = n K(n)`` with the scaling factor K of ``model.md`` (the proxy behind the
  paper's Z). A type without (a, b, c) has K = 1, so S(n) = n (source ``linear``).
* ``fitted`` (default): the logistic ``S(n) = c / (1 + exp(-a (n - b)))`` for n >= 2, fitted to
  measured speedups t(1)/t(n). A type without (a, b, c) gets ``S(n) = n`` (source ``linear``,
  to be flagged).
* ``measured``: the user's epoch times: ``S(n) = t(1) / t(n)`` interpolated linearly in n; past
  the largest measured n it stays at its last value (no extrapolated gain). Types without rows
  fall back to ``fitted``. The speedup is relative to t(1), so a type with rows but no row for
  one node is refused when the model is built (:class:`SpeedupModel`).

One VM: ``t_g(1) = t_ref1 ρ_g`` with ``t_ref1 = t_ref S_ref(n_ref)``; a workload without a
reference type (g_ref ``None``) measures t_ref on the fixed yardstick, one A10G
(:mod:`deepvm_core.workload.yardstick`, n_ref = 1), so ``t_ref1 = t_ref``. **t_ref is the only
absolute time** (``job-model.md``): a measurement table describes some workload (the bundled one
is the paper's ResNet on CIFAR-10), so it gives speedup shapes and relative one-VM times, never
the job's epoch time, and scaling t_ref by x scales every t_g(n) by x. The relative one-VM time
``ρ_g`` is ``t^m_g(1) / t^m_ref(1)`` when the table has one-node rows for both g and g_ref
(source ``measured``, with the table's name); otherwise ``eFLOPS(g_ref) / eFLOPS(g)`` (source
``eflops``, the paper's assumption); ``ρ_ref = 1`` (source ``reference``). Under the yardstick,
g_ref's one-node row is the table's one-A10G type's and ``eFLOPS(g_ref)`` is
:data:`~deepvm_core.workload.yardstick.YARDSTICK_EFLOPS` (696); no catalog type is the
reference.
:func:`reference_epoch_seconds_from_table` reads g_ref's one-node time from a table, for a user
whose table holds their own job ("use this as my epoch time").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np
import numpy.typing as npt

from deepvm_core.arrays import FloatArray
from deepvm_core.catalog import Catalog, GpuType, ScalingParams
from deepvm_core.errors import InputError, MeasurementsError, Problem, WorkloadError
from deepvm_core.hardware.measurements import InstanceMeasurements, MeasurementTable
from deepvm_core.model import fitted_speedup as fitted_speedup
from deepvm_core.model import scaling_factor
from deepvm_core.workload.workload import Workload, check_workload
from deepvm_core.workload.yardstick import YARDSTICK_EFLOPS, yardstick_rows

SpeedupModelName = Literal["paper", "fitted", "measured"]
SPEEDUP_MODELS: tuple[SpeedupModelName, ...] = get_args(SpeedupModelName)
#: What a type's speedup actually comes from; ``linear`` (S(n) = n) is to be flagged.
SpeedupSource = Literal["paper", "fitted", "measured", "linear"]
OneVmSource = Literal["measured", "reference", "eflops", "mfu"]


def _one_is_one(x: FloatArray, s: FloatArray) -> FloatArray:
    """S(1) = 1 in every model."""
    return np.where(x == 1.0, 1.0, s)


def paper_speedup(scaling: ScalingParams | None, nodes: npt.ArrayLike) -> FloatArray:
    """``paper``: ``S(n) = n K(n)`` (``S(1) = 1``; K = 1 without a fit)."""
    x = np.asarray(nodes, dtype=np.float64)
    return _one_is_one(x, x * scaling_factor(scaling, x))


def measured_speedup(rows: InstanceMeasurements, nodes: npt.ArrayLike) -> FloatArray:
    """``measured``: ``S(n) = t(1) / t(n)``, linear in n between measured node counts and flat
    past the largest one. ``rows`` must include one node.

    Raises:
        MeasurementsError: ``rows`` has no one-node time.
    """
    t1 = rows.one_node_epoch_seconds
    if t1 is None:
        raise MeasurementsError([_no_one_node(rows.instance)])
    x = np.asarray(nodes, dtype=np.float64)
    measured = t1 / rows.epoch_seconds_array()
    return _one_is_one(x, np.interp(x, rows.nodes_array(), measured))


def _no_one_node(instance: str) -> Problem:
    return Problem(instance, "nodes", None,
                   "no row with nodes 1: the measured speedup t(1)/t(n) needs the one-node "
                   "time; add it or use the fitted model")


@dataclass(frozen=True)
class SpeedupModel:
    """The speedup model a user picked, with their measurements (if any).

    Attributes:
        name: ``paper``, ``fitted`` (default) or ``measured``.
        measurements: measured epoch times of some workload; their one-node rows also give the
            relative one-VM times ρ_g (:func:`one_vm_epoch_seconds`), whatever ``name`` is.

    Raises:
        MeasurementsError: ``measured`` with a type whose rows lack one node (every such type
            is listed).
        InputError: an unknown ``name``.
    """

    name: SpeedupModelName = "fitted"
    measurements: MeasurementTable | None = None

    def __post_init__(self) -> None:
        if self.name not in SPEEDUP_MODELS:
            raise InputError("speedup_model", self.name,
                             f"must be one of {', '.join(SPEEDUP_MODELS)}")
        if self.name == "measured" and self.measurements is not None:
            missing = [_no_one_node(m.instance) for m in self.measurements.instances
                       if m.one_node_epoch_seconds is None]
            if missing:
                raise MeasurementsError(missing, self.measurements.source)

    def _rows(self, gpu: GpuType) -> InstanceMeasurements | None:
        return None if self.measurements is None else self.measurements.get(gpu.name)

    def source(self, gpu: GpuType) -> SpeedupSource:
        """Where ``gpu``'s speedup comes from under this model (``linear``: S(n) = n)."""
        if self.name == "measured" and self._rows(gpu) is not None:
            return "measured"
        if gpu.scaling is None:
            return "linear"
        return "paper" if self.name == "paper" else "fitted"

    def speedup(self, gpu: GpuType, nodes: npt.ArrayLike) -> FloatArray:
        """S_g(n) for an array of node counts (>= 1)."""
        rows = self._rows(gpu)
        if self.name == "measured" and rows is not None:
            return measured_speedup(rows, nodes)
        if self.name == "paper":
            return paper_speedup(gpu.scaling, nodes)
        return fitted_speedup(gpu.scaling, nodes)

    def one_node_epoch_seconds(self, gpu: GpuType) -> float | None:
        """The table's measured one-node time t^m_g(1) (of the table's workload), or ``None``."""
        rows = self._rows(gpu)
        return None if rows is None else rows.one_node_epoch_seconds


def reference_epoch_seconds_from_table(table: MeasurementTable,
                                       reference_gpu: str) -> float | None:
    """g_ref's one-node epoch time in ``table``, seconds, or ``None`` when it has no such row.

    For a user whose table holds epoch times of their own job: this is the value to take as
    t_ref (with n_ref = 1). The planner never does it by itself (t_ref is the only absolute
    time, module doc).
    """
    rows = table.get(reference_gpu)
    return None if rows is None else rows.one_node_epoch_seconds


@dataclass(frozen=True)
class OneVmTime:
    """t_g(1) of one GPU type and where its relative speed comes from.

    Attributes:
        gpu: GPU type name.
        epoch_seconds: t_g(1) = t_ref1 ρ_g, seconds per epoch on one VM, or ``None`` when
            unknown (no measured ρ_g and no eFLOPS for g or g_ref).
        source: where ρ_g comes from: ``measured`` (one-node rows of g and g_ref in one table),
            ``reference`` (g is g_ref: ρ = 1), ``eflops`` (``eFLOPS(g_ref) / eFLOPS(g)``; 696 /
            eFLOPS(g) under the yardstick), ``mfu`` (a transformer job: the ratio of the two
            types' FLOPs-per-token-at-MFU estimates, :mod:`deepvm_core.workload.throughput`), or
            ``None``.
        relative_time: ρ_g, t_g(1) / t_ref(1) (dimensionless), or ``None``.
        table: the measurement table's name (its source) when ``source`` is ``measured``.
    """

    gpu: str
    epoch_seconds: float | None
    source: OneVmSource | None
    relative_time: float | None = None
    table: str | None = None


def one_vm_epoch_seconds(workload: Workload, catalog: Catalog,
                         model: SpeedupModel) -> tuple[OneVmTime, ...]:
    """t_g(1) = t_ref1 ρ_g of every GPU type of ``catalog`` (catalog order; rule in the module
    docstring: a table's one-node times only give ρ_g, never the absolute time).

    Raises:
        WorkloadError: the workload does not fit the catalog (:func:`check_workload`).
    """
    reference = check_workload(workload, catalog)
    if reference is None:
        return _yardstick_times(workload, catalog, model)
    measured_ref = model.one_node_epoch_seconds(reference)
    s_ref = float(model.speedup(reference, np.array([workload.reference_nodes]))[0])
    if not s_ref > 0:
        raise WorkloadError([Problem("workload", "reference_nodes", workload.reference_nodes,
                                     f"the speedup of {reference.name} there is {s_ref!r}; "
                                     "t_ref1 = t_ref S_ref(n_ref) needs it > 0")])
    assert workload.reference_epoch_seconds is not None  # a cnn job's (Workload checks)
    t_ref1 = workload.reference_epoch_seconds * s_ref
    table = None if model.measurements is None else model.measurements.source
    times: list[OneVmTime] = []
    for g in catalog.gpu_types:
        measured = model.one_node_epoch_seconds(g)
        if g.name == reference.name:
            times.append(OneVmTime(g.name, t_ref1, "reference", 1.0))
        elif measured is not None and measured_ref is not None:
            rho = measured / measured_ref
            times.append(OneVmTime(g.name, t_ref1 * rho, "measured", rho, table))
        elif g.eflops is not None and reference.eflops is not None:
            rho = reference.eflops / g.eflops
            times.append(OneVmTime(g.name, t_ref1 * rho, "eflops", rho))
        else:
            times.append(OneVmTime(g.name, None, None))
    return tuple(times)


def _yardstick_times(workload: Workload, catalog: Catalog,
                     model: SpeedupModel) -> tuple[OneVmTime, ...]:
    """t_g(1) of every GPU type when t_ref is on the yardstick (one A10G, n_ref = 1):
    ``t_ref ρ_g`` with ρ_g from one-node rows of g and the table's one-A10G type, else
    ``YARDSTICK_EFLOPS / eFLOPS(g)``."""
    t_ref1 = workload.reference_epoch_seconds
    assert t_ref1 is not None  # a cnn job's (Workload checks)
    rows = yardstick_rows(model.measurements)
    measured_ref = None if rows is None else rows.one_node_epoch_seconds
    table = None if model.measurements is None else model.measurements.source
    times: list[OneVmTime] = []
    for g in catalog.gpu_types:
        measured = model.one_node_epoch_seconds(g)
        if measured is not None and measured_ref is not None:
            rho = measured / measured_ref
            times.append(OneVmTime(g.name, t_ref1 * rho, "measured", rho, table))
        elif g.eflops is not None:
            rho = YARDSTICK_EFLOPS / g.eflops
            times.append(OneVmTime(g.name, t_ref1 * rho, "eflops", rho))
        else:
            times.append(OneVmTime(g.name, None, None))
    return tuple(times)
