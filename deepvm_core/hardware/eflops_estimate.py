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

The same form, with both exponents fitted per workload class (a ResNet-50 or a
transformer), is :mod:`deepvm_core.hardware.class_eflops`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

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
    return fit_k_with(measured, table, throughput_index)


def fit_k_with(measured: Mapping[str, float], table: Mapping[str, Accelerator],
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
