"""One eFLOPS calibration per workload class (issue 24): the estimate of
:mod:`deepvm_core.hardware.eflops_estimate` with both exponents fitted per class.

**One calibration per workload class** (issue 24). Which GPU wins depends on the workload: on
Lambda's benchmarks the H100 runs ResNet-50 at 4.37x an A10 and BERT-large at 7.40x, where the
estimate above says 6.29x. A class calibration frees both exponents,

    E_1(g) = k_c * C_g^a_c * B_g^b_c,

and fits ``(a_c, b_c)`` by least squares on ``ln`` throughput with one intercept per group of
evidence (each group is compared only within itself: it has its own units):

* ``cnn``: Lambda's ResNet-50 AMP img/s of the A10, V100, A100 40 GB, A100 80 GB, H100 and H200
  (:data:`TRAINING_BENCHMARKS`), and the artifact's measured eFLOPS of the M60, T4 and A10G
  (:data:`MEASURED_SINGLE_GPU`, a CNN too);
* ``transformer``: Lambda's BERT-large SQuAD FP16 seq/s of the same six GPUs (no measured
  transformer eFLOPS exists).

The B200 row is held out of both fits and shown beside them: its ResNet-50 AMP figure (3076
img/s) equals the H200's although its peaks are 2.3x (compute) and 1.7x (bandwidth) higher, a
sign of another bottleneck. ``k_c`` is fitted on the measured types as above, so a class's
eFLOPS stay on the artifact's scale. :func:`class_leave_one_out` (each measured type predicted
by a calibration fitted without it) and :func:`class_benchmark_comparison` (each public ratio
in-sample and with its row left out of the fit) are the class's two error tables.

The catalog builders still write the single estimate above (``ESTIMATE_LABEL``); the class
calibrations are what a workload of that class is ranked with once wired in.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from deepvm_core.hardware.accelerators import Accelerator, bundled_accelerators
from deepvm_core.hardware.eflops_estimate import (
    MEASURED_SINGLE_GPU,
    TRAINING_BENCHMARKS,
    LooRow,
    fit_k_with,
    intra_node_efficiency,
)
from deepvm_core.hardware.scaling_prior import DEFAULT_STEP_MODEL, StepModel

#: A workload class: ``cnn`` (the paper's data-parallel CNN) or ``transformer`` (LLM
#: pretraining or fine-tuning).
WorkloadClass = Literal["cnn", "transformer"]
#: Every workload class, the default first.
WORKLOAD_CLASSES: Final[tuple[WorkloadClass, ...]] = ("cnn", "transformer")
#: The column of :data:`TRAINING_BENCHMARKS` each class is fitted on, and its name.
CLASS_BENCHMARK: Final[Mapping[WorkloadClass, tuple[int, str]]] = {
    "cnn": (2, "ResNet-50 AMP"), "transformer": (3, "BERT-large FP16")}
#: The benchmark rows the classes are fitted on (the A10 reference and the V100, A100 40/80 GB,
#: H100, H200); the other rows of :data:`TRAINING_BENCHMARKS` (B200) are held out.
FITTED_BENCHMARK_CHIPS: Final = ("A10G", "V100", "A100", "A100-80GB", "H100", "H200")
#: Whether a class's exponents also use the artifact's measured eFLOPS (a CNN workload).
_USES_MEASURED: Final[Mapping[WorkloadClass, bool]] = {"cnn": True, "transformer": False}


@dataclass(frozen=True)
class ClassCalibration:
    """``E_1 = k C^a B^b`` of one workload class (module docstring).

    Attributes:
        workload_class: ``cnn`` or ``transformer``.
        compute_exponent: ``a``, on the dense FP16/BF16 tensor TFLOPS (FP32 without tensor
            cores).
        bandwidth_exponent: ``b``, on the memory bandwidth, GB/s.
        k: eFLOPS per TFLOPS^a (GB/s)^b, fitted on the measured types.
        benchmark_chips: the benchmark rows ``(a, b)`` were fitted on.
        measured_chips: the measured types in the exponents' fit (empty for ``transformer``)
            and in ``k``'s, by accelerator name.
    """

    workload_class: WorkloadClass
    compute_exponent: float
    bandwidth_exponent: float
    k: float
    benchmark_chips: tuple[str, ...]
    measured_chips: tuple[str, ...]

    @property
    def label(self) -> str:
        """What an estimate of this class says of itself: ``estimated (transformer): k
        C^0.34 B^0.71``."""
        return (f"estimated ({self.workload_class}): k C^{self.compute_exponent:.2f} "
                f"B^{self.bandwidth_exponent:.2f}")

    def index(self, acc: Accelerator) -> float | None:
        """``C^a B^b`` of one chip, or ``None`` without the figures."""
        c, b = acc.mixed_precision_tflops, acc.memory_bandwidth_gb_per_s
        if c is None or b is None:
            return None
        return float(c**self.compute_exponent * b**self.bandwidth_exponent)

    def single_gpu_eflops(self, acc: Accelerator) -> float | None:
        """``E_1 = k C^a B^b`` of one chip, or ``None`` (no estimate: as
        :func:`single_gpu_eflops`)."""
        if not acc.trains or acc.name.startswith("Trainium"):
            return None
        index = self.index(acc)
        return None if index is None else self.k * index


def _least_squares_2(rows: Sequence[tuple[float, float, float]]) -> tuple[float, float]:
    """``(a, b)`` minimising ``sum (a x + b y - z)^2`` over rows ``(x, y, z)`` (the 2 x 2
    normal equations).

    Raises:
        ValueError: the rows do not determine both exponents.
    """
    sxx = sum(x * x for x, _, _ in rows)
    syy = sum(y * y for _, y, _ in rows)
    sxy = sum(x * y for x, y, _ in rows)
    sxz = sum(x * z for x, _, z in rows)
    syz = sum(y * z for _, y, z in rows)
    det = sxx * syy - sxy * sxy
    if len(rows) < 2 or abs(det) <= 1e-12 * max(sxx * syy, 1e-300):
        raise ValueError("eFLOPS class calibration: the evidence does not determine both "
                         "exponents")
    return (sxz * syy - syz * sxy) / det, (syz * sxx - sxz * sxy) / det


def _centred(points: Sequence[tuple[float, float, float]]) -> list[tuple[float, float, float]]:
    """``(ln C, ln B, ln throughput)`` of one group of evidence, each centred on the group's
    mean (the group's own intercept)."""
    logs = [(math.log(c), math.log(b), math.log(z)) for c, b, z in points]
    n = len(logs)
    means = [sum(p[i] for p in logs) / n for i in range(3)]
    return [(x - means[0], y - means[1], z - means[2]) for x, y, z in logs]


def _peaks(acc: Accelerator) -> tuple[float, float]:
    c, b = acc.mixed_precision_tflops, acc.memory_bandwidth_gb_per_s
    if c is None or b is None:
        raise ValueError(f"eFLOPS class calibration: {acc.name} has no tensor/FP32 peak or "
                         "bandwidth")
    return c, b


def calibrate_class(workload_class: WorkloadClass,
                    measured: Mapping[str, float] = MEASURED_SINGLE_GPU,
                    benchmark_chips: Sequence[str] = FITTED_BENCHMARK_CHIPS,
                    accelerators: Mapping[str, Accelerator] | None = None) -> ClassCalibration:
    """The calibration of ``workload_class`` on the given evidence (module docstring):
    ``benchmark_chips`` rows of :data:`TRAINING_BENCHMARKS` (the class's column), and
    ``measured`` eFLOPS by accelerator (in the exponents' fit for ``cnn``, in ``k`` for both).

    Raises:
        ValueError: an unknown class, a chip without figures, or too little evidence.
    """
    if workload_class not in CLASS_BENCHMARK:
        raise ValueError(f"workload class {workload_class!r}: must be one of "
                         f"{', '.join(WORKLOAD_CLASSES)}")
    table = bundled_accelerators() if accelerators is None else accelerators
    column, _ = CLASS_BENCHMARK[workload_class]
    bench = [(*_peaks(table[row[0]]), float(row[column]))
             for row in TRAINING_BENCHMARKS if row[0] in benchmark_chips]
    rows = _centred(bench)
    if _USES_MEASURED[workload_class] and len(measured) >= 2:
        rows += _centred([(*_peaks(table[name]), value) for name, value in measured.items()])
    a, b = _least_squares_2(rows)
    cal = ClassCalibration(workload_class, a, b, 1.0, tuple(r[0] for r in TRAINING_BENCHMARKS
                                                             if r[0] in benchmark_chips),
                           tuple(measured))
    k = fit_k_with(measured, table, cal.index)
    return ClassCalibration(workload_class, a, b, k, cal.benchmark_chips, cal.measured_chips)


@functools.cache
def class_calibration(workload_class: WorkloadClass) -> ClassCalibration:
    """The calibration of ``workload_class`` on the default evidence."""
    return calibrate_class(workload_class)


def class_single_gpu_eflops(acc: Accelerator, workload_class: WorkloadClass) -> float | None:
    """``E_1`` of one chip under the class's calibration, or ``None`` (no estimate)."""
    return class_calibration(workload_class).single_gpu_eflops(acc)


def class_vm_eflops(acc: Accelerator, gpus: int, workload_class: WorkloadClass,
                    step: StepModel = DEFAULT_STEP_MODEL) -> float | None:
    """``E_vm = m E_1 eta(m)`` (as :func:`vm_eflops`) under the class's calibration."""
    e1 = class_single_gpu_eflops(acc, workload_class)
    if e1 is None:
        return None
    return gpus * e1 * intra_node_efficiency(acc, gpus, e1, step)


def class_leave_one_out(workload_class: WorkloadClass,
                        measured: Mapping[str, float] = MEASURED_SINGLE_GPU
                        ) -> tuple[LooRow, ...]:
    """Each measured type predicted by the class's calibration fitted without it (``k``
    always; for ``cnn`` the exponents too, as the type is part of their evidence)."""
    table = bundled_accelerators()
    rows = []
    for name, value in measured.items():
        cal = calibrate_class(workload_class, {n: v for n, v in measured.items() if n != name})
        estimate = cal.single_gpu_eflops(table[name])
        assert estimate is not None  # the calibration checked every measured chip
        rows.append(LooRow(name, value, estimate, estimate / value - 1.0))
    return tuple(rows)


@dataclass(frozen=True)
class ClassBenchmarkRow:
    """A class's estimate beside the public ratio of its benchmark, relative to the A10.

    Attributes:
        accelerator: our row; benchmark_row: the benchmark's GPU.
        public_ratio: the benchmark's throughput / the A10's.
        estimate_ratio: E_1 / E_1(A10G) under the class's calibration.
        error: estimate_ratio / public_ratio - 1.
        held_out_ratio: the same with this row left out of the exponents' fit (equal to
            ``estimate_ratio`` for a row that is not fitted).
        held_out_error: held_out_ratio / public_ratio - 1.
        fitted: True when the row is part of the class's fit.
    """

    accelerator: str
    benchmark_row: str
    public_ratio: float
    estimate_ratio: float
    error: float
    held_out_ratio: float
    held_out_error: float
    fitted: bool


def class_benchmark_comparison(workload_class: WorkloadClass) -> tuple[ClassBenchmarkRow, ...]:
    """:data:`TRAINING_BENCHMARKS` (the class's column) beside the class's estimate, relative
    to the A10 (first row), in-sample and with the row left out."""
    table = bundled_accelerators()
    column, _ = CLASS_BENCHMARK[workload_class]
    ref = TRAINING_BENCHMARKS[0]

    def ratio(cal: ClassCalibration, name: str) -> float:
        e, e_ref = cal.index(table[name]), cal.index(table[ref[0]])
        assert e is not None  # the calibration checked both chips
        assert e_ref is not None
        return e / e_ref

    full = class_calibration(workload_class)
    rows = []
    for bench in TRAINING_BENCHMARKS[1:]:
        name, public = bench[0], float(bench[column]) / float(ref[column])
        fitted = name in full.benchmark_chips
        held = calibrate_class(workload_class, benchmark_chips=[
            c for c in full.benchmark_chips if c != name]) if fitted else full
        estimate, held_ratio = ratio(full, name), ratio(held, name)
        rows.append(ClassBenchmarkRow(name, bench[1], public, estimate, estimate / public - 1.0,
                                      held_ratio, held_ratio / public - 1.0, fitted))
    return tuple(rows)


def class_mean_abs_error(workload_class: WorkloadClass) -> float:
    """Mean ``|error|`` of the class's estimate over its fitted benchmark rows (a fraction)."""
    errors = [abs(r.error) for r in class_benchmark_comparison(workload_class) if r.fitted]
    return sum(errors) / len(errors)
