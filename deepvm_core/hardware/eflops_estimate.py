"""An eFLOPS estimate for GPU types nobody has measured, from the accelerator model.

A measured eFLOPS always wins (the artifact's, a calibration's, a user's edit); this estimate
fills the rest (``eflops_source`` ``estimated: <model>``).

**One GPU.** The artifact's workload behaves like mixed-precision training: its measured ratios
(A10G/T4 = 696/377 = 1.85, half-M60/T4 = 100/377 = 0.27) follow memory bandwidth and the FP16
tensor peak (1.88 and 1.92), not the FP32 peak (3.85 and 0.60). So

    E_1(g) = k * C_g^w * B_g^(1 - w)

with ``C_g`` the dense FP16/BF16 tensor TFLOPS (the FP32 peak on a chip without tensor cores:
K80, M60), ``B_g`` the memory bandwidth (GB/s), both from ``data/accelerators.csv``.

* ``w`` is fixed from a public benchmark pair that separates the two terms: the V100 and the A10
  have the same tensor peak (125 TFLOPS) and bandwidths 900 and 600 GB/s; Lambda's ResNet-50
  AMP training runs them at 833 and 638 img/s, so
  ``1 - w = ln(833 / 638) / ln(900 / 600) = 0.658`` and ``w = 0.342``.
* ``k`` (eFLOPS per TFLOPS^w (GB/s)^(1-w)) is the one parameter fitted on the catalog's measured
  types: ``k = exp(mean(ln(E_measured / (C^w B^(1-w)))))``.

**A VM of m GPUs.** Per-GPU mini-batches, gradients averaged over the VM's GPU link by a ring
all-reduce (the step model of :mod:`deepvm_core.hardware.scaling_prior`, with no latency term:
inside a VM it is microseconds):

    t_c     = tau G / E_1                                seconds per mini-batch
    eta(m)  = t_c / (t_c + 2 (m - 1) / m * G / L)        intra-node efficiency
    E_vm    = m * E_1 * eta(m)

with ``L`` the per-GPU link bandwidth (GB/s: PCIe Gen3 15.75, Gen4 31.5, NVLink 300-1800) and
``G`` the gradient size (GB), ``tau`` as calibrated there.

:func:`leave_one_out` reports the error of ``k`` fitted without the type it predicts, and
:func:`benchmark_comparison` the estimate's ratios beside published single-GPU training
benchmarks' (relative to the A10).

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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from deepvm_core.hardware.accelerators import Accelerator, bundled_accelerators
from deepvm_core.hardware.scaling_prior import DEFAULT_STEP_MODEL, StepModel

#: Lambda's ResNet-50 AMP training, img/s (lambdal/deeplearning-benchmark@aa5addb6,
#: pytorch/csv_v1_v2/pytorch-train-throughput-fp16.csv): V100 16GB and A10 (150 W).
_V100_AMP, _A10_AMP = 833.0, 638.0
#: The exponent w of the compute term (module docstring).
COMPUTE_EXPONENT = 1.0 - math.log(_V100_AMP / _A10_AMP) / math.log(900.0 / 600.0)
#: The artifact's measured eFLOPS of single-GPU types, by accelerator (the bundled catalog
#: aws-us-east-1-2023-10: g3s.xlarge, g4dn.xlarge, g5.xlarge): the calibration of ``k``.
MEASURED_SINGLE_GPU: Mapping[str, float] = {"M60": 100.0, "T4": 377.0, "A10G": 696.0}
#: What ``eflops_source`` says for an estimate.
ESTIMATE_LABEL = f"estimated: k C^{COMPUTE_EXPONENT:.2f} B^{1 - COMPUTE_EXPONENT:.2f}"

#: Published single-GPU training throughputs (lambdal/deeplearning-benchmark@aa5addb6,
#: pytorch/csv_v1_v2/pytorch-train-throughput-fp16.csv; H200: pytorch-train-throughput-v2-fp16
#: .csv): (our accelerator, Lambda's row, ResNet-50 AMP img/s, BERT-large SQuAD FP16 seq/s).
#: The A10 row is the reference; our A10G row carries the A10's peaks.
TRAINING_BENCHMARKS: tuple[tuple[str, str, float, float], ...] = (
    ("A10G", "A10 (150 W)", 638.0, 42.0),
    ("V100", "V100 16GB", 833.0, 57.0),
    ("A100", "A100 40GB PCIe", 1396.0, 117.0),
    ("A100-80GB", "A100 80GB SXM4", 1582.0, 152.0),
    ("H100", "H100 80GB SXM5", 2791.0, 311.0),
    ("H200", "H200 141GB SXM", 3079.0, 350.0),
    ("B200", "B200 192GB SXM", 3076.0, 523.0),
)


def throughput_index(acc: Accelerator, w: float = COMPUTE_EXPONENT) -> float | None:
    """``C^w B^(1-w)`` of one chip, or ``None`` without the figures."""
    c, b = acc.mixed_precision_tflops, acc.memory_bandwidth_gb_per_s
    if c is None or b is None:
        return None
    return float(c**w * b ** (1.0 - w))


def fit_k(measured: Mapping[str, float],
          accelerators: Mapping[str, Accelerator] | None = None) -> float:
    """``k = exp(mean(ln(E / index)))`` over ``measured`` (accelerator name -> eFLOPS).

    Raises:
        ValueError: no measured type, or one without the figures of the model.
    """
    table = bundled_accelerators() if accelerators is None else accelerators
    return _fit_k_with(measured, table, throughput_index)


def _fit_k_with(measured: Mapping[str, float], table: Mapping[str, Accelerator],
                index_of: Callable[[Accelerator], float | None]) -> float:
    """``k = exp(mean(ln(E / index)))`` with the index ``index_of`` (:func:`fit_k`)."""
    logs = []
    for name, eflops in measured.items():
        index = index_of(table[name]) if name in table else None
        if index is None:
            raise ValueError(f"eFLOPS calibration: {name} has no tensor/FP32 peak or bandwidth")
        logs.append(math.log(eflops / index))
    if not logs:
        raise ValueError("eFLOPS calibration: no measured type")
    return math.exp(sum(logs) / len(logs))


@functools.cache
def default_k() -> float:
    """``k`` fitted on :data:`MEASURED_SINGLE_GPU`."""
    return fit_k(MEASURED_SINGLE_GPU)


def single_gpu_eflops(acc: Accelerator, k: float | None = None) -> float | None:
    """``E_1 = k C^w B^(1-w)`` of one chip, or ``None`` when the chip has no estimate
    (not a training chip, no figures, or not a CUDA GPU: Trainium)."""
    if not acc.trains or acc.name.startswith("Trainium"):
        return None
    index = throughput_index(acc)
    return None if index is None else (default_k() if k is None else k) * index


def intra_node_efficiency(acc: Accelerator, gpus: int, e1: float,
                          step: StepModel = DEFAULT_STEP_MODEL) -> float:
    """``eta(m) = t_c / (t_c + 2 (m - 1) / m G / L)`` (module docstring); 1 for one GPU.
    (``eta`` does not depend on ``G``: ``t_c`` grows with it as fast as the traffic.)"""
    if gpus <= 1 or acc.link_gb_per_s is None:
        return 1.0
    t_c = step.tau * step.gradient_gb / e1
    return t_c / (t_c + 2.0 * (gpus - 1) / gpus * step.gradient_gb / acc.link_gb_per_s)


def vm_eflops(acc: Accelerator, gpus: int, k: float | None = None,
              step: StepModel = DEFAULT_STEP_MODEL) -> float | None:
    """``E_vm = m E_1 eta(m)``: the estimated eFLOPS of a VM with ``gpus`` chips, or ``None``."""
    e1 = single_gpu_eflops(acc, k)
    if e1 is None:
        return None
    return gpus * e1 * intra_node_efficiency(acc, gpus, e1, step)


@dataclass(frozen=True)
class LooRow:
    """One measured type predicted by ``k`` fitted on the others.

    Attributes:
        accelerator: the chip; measured: its measured eFLOPS; estimated: the prediction;
        error: estimated / measured - 1.
    """

    accelerator: str
    measured: float
    estimated: float
    error: float


def leave_one_out(measured: Mapping[str, float] = MEASURED_SINGLE_GPU) -> tuple[LooRow, ...]:
    """Leave-one-out error of the estimate on the measured types."""
    table = bundled_accelerators()
    rows = []
    for name, value in measured.items():
        k = fit_k({n: v for n, v in measured.items() if n != name})
        index = throughput_index(table[name])
        assert index is not None  # fit_k checked every measured chip
        rows.append(LooRow(name, value, k * index, k * index / value - 1.0))
    return tuple(rows)


@dataclass(frozen=True)
class BenchmarkRow:
    """The estimate's ratio to the A10 beside published training benchmarks' ratios.

    Attributes:
        accelerator: our row; benchmark_row: the benchmark's GPU;
        estimate_ratio: E_1 / E_1(A10G); resnet50_amp_ratio, bert_large_fp16_ratio: the
        benchmark's throughput / the A10's.
    """

    accelerator: str
    benchmark_row: str
    estimate_ratio: float
    resnet50_amp_ratio: float
    bert_large_fp16_ratio: float


def benchmark_comparison() -> tuple[BenchmarkRow, ...]:
    """:data:`TRAINING_BENCHMARKS` beside the estimate, relative to the A10 (first row)."""
    table = bundled_accelerators()
    ref_name, _, ref_img, ref_seq = TRAINING_BENCHMARKS[0]
    ref = single_gpu_eflops(table[ref_name])
    assert ref is not None
    rows = []
    for name, row, img, seq in TRAINING_BENCHMARKS[1:]:
        e1 = single_gpu_eflops(table[name])
        assert e1 is not None
        rows.append(BenchmarkRow(name, row, e1 / ref, img / ref_img, seq / ref_seq))
    return tuple(rows)


# --- One calibration per workload class (module docstring) ---

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
    k = _fit_k_with(measured, table, cal.index)
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
