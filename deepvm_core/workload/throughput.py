"""Time of a transformer job without a measurement, and with one (issue 24).

    time = FLOPs per token x tokens / (MFU x peak x GPUs)

with the peak the chip's dense FP16/BF16 tensor TFLOPS (``data/accelerators.csv``; the FP32
peak on a chip without tensor cores) and GPUs those of the VMs the job runs on. Source keys are
those of ``llm-training-sources.md`` (shared reference).

**FLOPs per token** (:func:`flops_per_token`), N parameters, L layers, h hidden, s sequence:

    F = m N + a L h s

* ``m = 6`` for a full fine-tune or pretraining: forward 2N, backward 4N (EB [R]: C = 6PD).
* ``m = 4`` for LoRA and QLoRA: the frozen weights need no weight gradients, which are half of
  the backward's 4N [D from EB's split]. NVIDIA's own accounting agrees: Llama 2 7B SFT runs at
  682 model TFLOP/s and 17,120 tokens/s per GPU, LoRA at 673 and 25,206 (NEMO [R]), i.e.
  (673 / 25,206) / (682 / 17,120) = 0.67 = 4/6 of the FLOPs per token. The adapter's own
  FLOPs are negligible (1 % of the parameters).
* ``a = 12``: attention over the sequence, forward ``4 L h s`` (MF [R]: ``n_layers * 2 * 2 *
  d_model * seq_len**2`` per sequence) and twice that backward, for every method (attention
  has no weights; its backward is all activation gradients). The sources' check: ``6N + 12 L h
  s`` reproduces torchtitan's and MosaicML's published MFUs (section 3 [D]).
* Activation recomputation repeats the forward: ``m + 2`` and ``a + 4`` (STAS [R]: the factor
  4 instead of 3 "with activation/gradient checkpointing"; 8N for a full fine-tune).
* QLoRA also dequantises its 4-bit base on every use: its tokens/s are :data:`QLORA_SPEED`
  times LoRA's (median of three published pairs, below).

**MFU** (:func:`mfu_for`): the share of the peak the counted FLOPs run at, from published rows
without recomputation (where model and hardware FLOPs utilisation coincide), per chip class
(:data:`MFU_EVIDENCE`): the median of the class's rows, its range their minimum and maximum.
A chip without published LLM training figures (T4, A10G, L4, L40S, B200 in BF16, ...) takes
the median of every row, with their whole range, and says so; Trainium gets no estimate (the
NVIDIA figures do not transfer, as for the eFLOPS estimate).

Checks against published rows (7B, seq 2048, 8 GPUs): MosaicML's MPT-7B on A100 40GB with
recomputation ran 3,679 tokens/s per GPU (MF [R]); the estimate gives 0.611 x 312 TFLOPS /
(8 x 6.66e9 + 16 x 32 x 4096 x 2048) = 3,311 (-10 %: recomputation runs at a higher HFU than
the rows without it). On H100 without recomputation MF ran 10,643; the estimate gives 0.418 x
989 / (6 x 6.66e9 + 12 x 32 x 4096 x 2048) = 9,578 (-10 %).

**A measurement wins** (:class:`TokensMeasurement`): tokens/s measured on n_ref VMs of g_ref.
On g_ref itself the job runs at that rate (per VM: measured / n_ref); on another type g at
that rate times the estimate's ratio ``(GPUs x MFU x peak)_g / (...)_g_ref``, as ``t_ref``
sets every epoch time today (``job-model.md``).

**VMs.** n VMs run n times one VM's tokens/s here (every GPU computes: replicas tile the VMs,
:mod:`deepvm_core.workload.memory`); the job model's speedup S_g(n) replaces that linear
ideal once wired in, from the one-VM time (``vms=1``).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from deepvm_core.catalog import GpuType
from deepvm_core.errors import Problem, WorkloadError
from deepvm_core.hardware.accelerators import Accelerator
from deepvm_core.units import SECONDS_PER_HOUR
from deepvm_core.workload.gpu_hardware import GpuHardware, gpu_hardware
from deepvm_core.workload.transformer import TransformerJob

#: FLOPs per parameter per token: forward + backward (``m`` of the module docstring).
FULL_FLOPS_PER_PARAM: Final = 6.0
ADAPTER_FLOPS_PER_PARAM: Final = 4.0
#: Attention FLOPs per L h s per token (``a``).
ATTENTION_FLOPS: Final = 12.0
#: What recomputation adds: one more forward pass (2 per parameter, 4 per L h s).
RECOMPUTE_FLOPS_PER_PARAM: Final = 2.0
RECOMPUTE_ATTENTION_FLOPS: Final = 4.0
#: QLoRA's tokens/s over LoRA's on the same GPU (dequantisation of the 4-bit base): median of
#: Qwen-7B on one A100 (QWEN: 7.0 against 5.2 s/it, 5.2 / 7.0 = 0.743), torchtune's Llama 3.2
#: 3B on one A100 (TTUNE: 8,035 / 8,210 = 0.979) and Llama 3.1 8B on one RTX 4090 (TTUNE:
#: 2,413 / 3,083 = 0.783).
QLORA_SPEED_PAIRS: Final = (5.2 / 7.0, 8035.0 / 8210.0, 2413.0 / 3083.0)
QLORA_SPEED: Final = statistics.median(QLORA_SPEED_PAIRS)


@dataclass(frozen=True)
class MfuEvidence:
    """One published MFU figure (no activation recomputation, BF16, dense peak).

    Attributes:
        chip_class: the chips it stands for (``A100``, ``H100``, ``V100``).
        mfu: the utilisation, a fraction.
        source: the key of ``llm-training-sources.md``.
        setting: model, sequence, GPUs, parallelism.
    """

    chip_class: str
    mfu: float
    source: str
    setting: str


#: The published rows without recomputation (``llm-training-sources.md`` section 4).
MFU_EVIDENCE: Final[tuple[MfuEvidence, ...]] = (
    MfuEvidence("A100", 0.5986, "MF", "A100 80GB, MPT-1B, seq 2048, 8 GPUs, FSDP"),
    MfuEvidence("A100", 0.6211, "MF", "A100 80GB, MPT-3B, seq 2048, 8 GPUs, FSDP"),
    MfuEvidence("A100", 0.6423, "MF", "A100 80GB, MPT-7B, seq 2048, 8 GPUs, FSDP"),
    MfuEvidence("A100", 0.5957, "MF", "A100 80GB, MPT-13B, seq 2048, 8 GPUs, FSDP"),
    MfuEvidence("A100", 0.611, "TT-A", "A100 80GB, Llama 2 13B, seq 4096, 64 GPUs, FSDP2"),
    MfuEvidence("H100", 0.4182, "MF", "H100 80GB, MPT-1B, seq 2048, 8 GPUs, FSDP"),
    MfuEvidence("H100", 0.4373, "MF", "H100 80GB, MPT-3B, seq 2048, 16 GPUs, FSDP"),
    MfuEvidence("H100", 0.4644, "MF", "H100 80GB, MPT-7B, seq 2048, 8 GPUs, FSDP"),
    MfuEvidence("H100", 0.3979, "MF", "H100 80GB, MPT-13B, seq 2048, 8 GPUs, FSDP"),
    MfuEvidence("H100", 0.3986, "MF", "H100 80GB, MPT-13B, seq 2048, 64 GPUs, FSDP"),
    MfuEvidence("V100", 0.48, "ADLR", "V100 (DGX-2H), GPT-2 1.2B, 1 GPU"),
)
#: The evidence class of each chip that has one. The H200 has the H100's compute peak (989
#: TFLOPS) and no BF16 LLM figure of its own (TT-200 is FP8): it takes the H100's rows.
MFU_CLASS_OF: Final[Mapping[str, str]] = {
    "A100": "A100", "A100-80GB": "A100", "H100": "H100", "H200": "H100",
    "V100": "V100", "V100-32GB": "V100"}
#: Chips with no estimate at all (the NVIDIA figures do not transfer).
NO_MFU_CHIPS: Final = ("Trainium", "Trainium2")


@dataclass(frozen=True)
class Mfu:
    """The MFU a chip is estimated at.

    Attributes:
        value: the point estimate, a fraction (the median of the rows used).
        low, high: the range of those rows.
        published: True when the chip's class has rows of its own; False when it takes every
            row's median (an assumption).
        basis: one line naming the rows and sources, e.g. ``published for the A100 class:
            median of 5 rows (MF, TT-A), 60-64 %``.
    """

    value: float
    low: float
    high: float
    published: bool
    basis: str


def _mfu_of(rows: list[MfuEvidence], published: bool, label: str) -> Mfu:
    values = [r.mfu for r in rows]
    sources = ", ".join(dict.fromkeys(r.source for r in rows))
    low, high = min(values), max(values)
    span = f"{100 * low:.0f}-{100 * high:.0f} %" if high > low else f"{100 * low:.0f} %"
    return Mfu(statistics.median(values), low, high, published,
               f"{label}: median of {len(rows)} row{'s' if len(rows) != 1 else ''} "
               f"({sources}), {span}")


def mfu_for(acc: Accelerator) -> Mfu | None:
    """The MFU of ``acc`` (module docstring), or ``None`` for a chip without an estimate (not
    a training chip, no peak, or Trainium)."""
    if not acc.trains or acc.mixed_precision_tflops is None or acc.name in NO_MFU_CHIPS:
        return None
    chip_class = MFU_CLASS_OF.get(acc.name)
    if chip_class is not None:
        rows = [r for r in MFU_EVIDENCE if r.chip_class == chip_class]
        return _mfu_of(rows, True, f"published for the {chip_class} class")
    return _mfu_of(list(MFU_EVIDENCE), False,
                   f"assumed for {acc.name} (no published LLM training figure): every row")


def flops_per_token(job: TransformerJob) -> float:
    """Training FLOPs per token of ``job`` (module docstring; QLoRA's dequantisation is not a
    FLOP and enters through :data:`QLORA_SPEED`)."""
    h, layers = job.shape()
    per_param = FULL_FLOPS_PER_PARAM if job.method == "full" else ADAPTER_FLOPS_PER_PARAM
    attention = ATTENTION_FLOPS
    if job.activation_checkpointing:
        per_param += RECOMPUTE_FLOPS_PER_PARAM
        attention += RECOMPUTE_ATTENTION_FLOPS
    return per_param * job.params + attention * layers * h * job.seq_len


@dataclass(frozen=True)
class TokensMeasurement:
    """Tokens per second of the user's job, measured on ``vms`` VMs of ``instance_type``.

    Attributes:
        tokens_per_second: the whole cluster's (> 0).
        instance_type: the GPU type of the measurement (g_ref).
        vms: its VMs (n_ref, whole number >= 1).
    """

    tokens_per_second: float
    instance_type: str
    vms: int = 1

    def __post_init__(self) -> None:
        problems: list[Problem] = []
        tps = self.tokens_per_second
        if isinstance(tps, bool) or not isinstance(tps, int | float) or not (
                math.isfinite(tps) and tps > 0):
            problems.append(Problem("measurement", "tokens_per_second", tps,
                                    "must be a finite number greater than 0"))
        if not isinstance(self.instance_type, str) or not self.instance_type.strip():
            problems.append(Problem("measurement", "instance_type", self.instance_type,
                                    "must be a GPU type name"))
        if isinstance(self.vms, bool) or not isinstance(self.vms, int) or self.vms < 1:
            problems.append(Problem("measurement", "vms", self.vms,
                                    "must be a whole number >= 1"))
        if problems:
            raise WorkloadError(problems, "measurement")


@dataclass(frozen=True)
class TransformerTime:
    """How long a transformer job takes on ``vms`` VMs of one type.

    Attributes:
        instance_type: the VM type.
        vms: the VMs (n VMs: n times one VM, module docstring).
        tokens_per_second: the cluster's, or ``None`` without an estimate.
        epoch_seconds: seconds per epoch (``tokens per epoch / tokens_per_second``), or
            ``None``.
        job_hours: hours of the whole job, or ``None``.
        job_hours_low, job_hours_high: the range from the MFU's range (equal to
            ``job_hours`` for a measured type), or ``None``.
        measured: True when the time is the user's measurement (on g_ref itself or scaled to
            this type).
        basis: one line: how the figure was made, with its sources.
    """

    instance_type: str
    vms: int
    tokens_per_second: float | None
    epoch_seconds: float | None
    job_hours: float | None
    job_hours_low: float | None
    job_hours_high: float | None
    measured: bool
    basis: str


def _estimate(job: TransformerJob, hw: GpuHardware) -> tuple[float, Mfu, float] | str:
    """``(tokens/s of one VM at the MFU's value, the MFU, peak TFLOPS)``, or why there is
    none."""
    acc = hw.accelerator
    if acc is None or hw.gpus_per_vm is None:
        return f"no estimate for {hw.instance_type}: {hw.missing}"
    mfu = mfu_for(acc)
    peak = acc.mixed_precision_tflops
    if mfu is None or peak is None:
        why = ("no published LLM training figure, and the NVIDIA figures do not transfer"
               if acc.name in NO_MFU_CHIPS else "not a training chip with a compute peak")
        return f"no estimate for {hw.instance_type}: {acc.name} has no MFU ({why})"
    speed = QLORA_SPEED if job.method == "qlora" else 1.0
    flops = mfu.value * peak * 1e12 * hw.gpus_per_vm
    return flops * speed / flops_per_token(job), mfu, peak


def _time(job: TransformerJob, name: str, vms: int, vm_tps: float | None, low: float | None,
          high: float | None, measured: bool, basis: str) -> TransformerTime:
    if vm_tps is None:
        return TransformerTime(name, vms, None, None, None, None, None, measured, basis)
    tps = vm_tps * vms

    def hours(rate: float | None) -> float | None:
        return None if rate is None else job.tokens / (rate * vms) / SECONDS_PER_HOUR

    return TransformerTime(name, vms, tps, job.tokens_per_epoch / tps, hours(vm_tps),
                           hours(high), hours(low), measured, basis)


def _estimated_time(job: TransformerJob, hw: GpuHardware, vms: int) -> TransformerTime:
    estimate = _estimate(job, hw)
    if isinstance(estimate, str):
        return _time(job, hw.instance_type, vms, None, None, None, False, estimate)
    rate, mfu, peak = estimate
    low, high = rate * mfu.low / mfu.value, rate * mfu.high / mfu.value
    qlora = f" x {QLORA_SPEED:.3f} (QLoRA)" if job.method == "qlora" else ""
    gpus = f"{hw.gpus_per_vm} GPU{'s' if hw.gpus_per_vm != 1 else ''}"
    basis = (f"estimated: {flops_per_token(job) / 1e9:.4g} GFLOP/token at MFU "
             f"{100 * mfu.value:.0f} % ({mfu.basis}) of {peak:g} TFLOPS x {gpus}{qlora}")
    return _time(job, hw.instance_type, vms, rate, low, high, False, basis)


def transformer_times(job: TransformerJob, gpu_types: Iterable[GpuType | str | GpuHardware],
                      vms: int = 1,
                      measurement: TokensMeasurement | None = None
                      ) -> tuple[TransformerTime, ...]:
    """The time of ``job`` on ``vms`` VMs of every GPU type, in order (module docstring).

    Raises:
        WorkloadError: ``vms`` is not a whole number >= 1.
    """
    if isinstance(vms, bool) or not isinstance(vms, int) or vms < 1:
        raise WorkloadError([Problem("transformer time", "vms", vms,
                                     "must be a whole number >= 1")], "transformer time")
    hardware = [g if isinstance(g, GpuHardware) else gpu_hardware(g) for g in gpu_types]
    if measurement is None:
        return tuple(_estimated_time(job, hw, vms) for hw in hardware)
    ref_type = measurement.instance_type
    ref_hw = next((h for h in hardware if h.instance_type == ref_type), None)
    ref = _estimate(job, ref_hw if ref_hw is not None else gpu_hardware(ref_type))
    per_vm = measurement.tokens_per_second / measurement.vms
    note = (f"{measurement.tokens_per_second:,.0f} tokens/s measured on {measurement.vms} x "
            f"{ref_type}")
    out = []
    for hw in hardware:
        estimate = _estimate(job, hw)
        if hw.instance_type == ref_type:
            out.append(_time(job, hw.instance_type, vms, per_vm, per_vm, per_vm, True,
                             f"measured: {note}"))
        elif isinstance(estimate, str):
            out.append(_time(job, hw.instance_type, vms, None, None, None, False, estimate))
        elif isinstance(ref, str):
            out.append(_time(job, hw.instance_type, vms, None, None, None, False,
                             f"no time: {note}, but {ref_type} has no estimate to scale it "
                             "to other types by"))
        else:
            ratio = estimate[0] / ref[0]
            rate = per_vm * ratio
            out.append(_time(job, hw.instance_type, vms, rate, rate, rate, True,
                             f"measured, scaled: {note}, x {ratio:.3g} (the estimate's ratio, "
                             "GPUs x MFU x peak)"))
    return tuple(out)


def transformer_epoch_seconds(job: TransformerJob, gpu_type: GpuType | str | GpuHardware,
                              vms: int = 1,
                              measurement: TokensMeasurement | None = None) -> float | None:
    """Seconds per epoch of ``job`` on ``vms`` VMs of ``gpu_type`` (``None`` without an
    estimate): with ``vms=1``, the job model's one-VM epoch time t_g(1)."""
    return transformer_times(job, [gpu_type], vms, measurement)[0].epoch_seconds


def transformer_job_hours(job: TransformerJob, gpu_type: GpuType | str | GpuHardware,
                          vms: int = 1,
                          measurement: TokensMeasurement | None = None) -> float | None:
    """Hours of the whole job on ``vms`` VMs of ``gpu_type`` (``None`` without an estimate)."""
    return transformer_times(job, [gpu_type], vms, measurement)[0].job_hours
