"""GPU memory of a transformer job, and which VM types can hold it (issue 24).

Bytes per GPU of one replica sharded over g GPUs (g = 1: unsharded), in GB (10^9 bytes), with
N parameters, T trainable ones, s the sequence length, b the micro-batch, h the hidden size and
L the layers (:meth:`~deepvm_core.workload.transformer.TransformerJob.shape`). Source keys are
those of ``llm-training-sources.md`` (shared reference), section 2.

**Model states** (weights + gradients + optimizer states of the whole replica), bytes per
parameter, ZeRO's accounting of mixed-precision Adam, ``(2 + 2 + K) N`` with K = 12 (ZeRO
paper as quoted [S]; DS [R]: "4b params, 4b grads, 4b momentum and 4b variance" = 16):

* ``full``: weights 2 N (bf16), gradients 2 N (bf16), optimizer 12 N (fp32 master copy,
  momentum, variance: 4 + 4 + 4, EC [R]) = 16 N. (HF and EC count gradients in fp32, 18 N;
  16 N is the lower of the published totals.)
* ``lora``: the frozen base in bf16, 2 N, no gradients or optimizer states for it; the adapter
  ``T = adapter_fraction N`` at 16 T (2 + 2 + 12). [D: the sources publish no LoRA total, see
  section 2.1.]
* ``qlora``: the frozen base in NF4 with double-quantised constants, (4 + 0.127) / 8 = 0.516
  bytes per parameter [D from the QLoRA paper's figures, S], plus the adapter's 16 T.

**Sharding.** FSDP ``FULL_SHARD`` is ZeRO-3 (ACC [R]), which divides weights, gradients and
optimizer states by the g GPUs of the replica (EC, DS [R]). A sharded replica also holds one
gathered layer at a time: DS's ``largest_layer_memory = 4 * largest_layer_params`` bytes [R],
with a layer of 12 h^2 parameters, so ``48 h^2`` bytes per GPU when g > 1.

**Activations** (per GPU, whatever the sharding; 16-bit activations):

* checkpointing off: ``34 s b h L`` bytes. Korthikanti's per-layer ``s b h (34 + 5 a s / h)``
  (KOR, as implemented in EC [R]) without its ``5 a s / h`` term, the s x s attention scores,
  which fused attention kernels (FlashAttention, PyTorch SDPA) do not keep but recompute (MF
  [R]: FlashAttention's recompute raises attention's FLOP multiplier from 4 to 5). Check:
  torchtitan's Llama 3.1 8B with FSDP on 8 H100 at micro-batch 2, seq 8192 (TT-H [R], selective
  recomputation, which keeps about this much) measured 82.4 GiB; this model gives 84.9 GiB.
* checkpointing on (full recomputation): ``2 s b h L + 34 s b h``: the bf16 input of every
  layer (STAS [R]: checkpoints = dtype_size x num_layers x bs x seqlen x hidden) and one
  layer's activations while it is recomputed and back-propagated.

The logits, ``4 b s V`` bytes for a vocabulary of V (STAS), are not counted (0.26 GB at
s = 2048, b = 1, V = 32,000).

**Runtime.** :data:`RUNTIME_RESERVE_GB` per GPU for the CUDA context and kernels: HF [R],
"the kernels alone take up 1.3GB" (1343 MB on a V100; "1-2GB").

So ``need(g) = states / g + activations + runtime (+ 48 h^2 when g > 1)``, and a GPU of
``memory_gb`` holds it when ``need(g) <= memory_gb`` (the datasheet figure of
``data/accelerators.csv``, read as 10^9 bytes; no further margin).

**Fewest GPUs of a replica.** Replicas tile VMs: without sharding a replica is one GPU; with
FSDP it is sharded over a divisor of the VM's GPU count (1, 2, 4, 8 on an 8-GPU VM), or, when
one VM's GPUs are too few, over whole VMs (g = v x GPUs per VM). The fewest such g with
``need(g) <= memory_gb`` is :func:`fewest_gpus_per_replica`; a VM type fits the job when that
replica stays inside one VM, or spans v VMs and the job allows it (``shard_across_vms``).
:func:`memory_fit` gives the verdict and its reason for every GPU type of a catalog at once.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from deepvm_core.arrays import FloatArray, IntArray
from deepvm_core.catalog import GpuType
from deepvm_core.workload.gpu_hardware import GpuHardware, gpu_hardware
from deepvm_core.workload.transformer import TransformerJob

#: Bytes per parameter of bf16 weights, bf16 gradients and the AdamW states (fp32 master
#: copy, momentum, variance) in mixed precision (ZeRO's 2 + 2 + 12).
WEIGHT_BYTES: Final = 2.0
GRADIENT_BYTES: Final = 2.0
OPTIMIZER_BYTES: Final = 12.0
#: Bytes per parameter of a QLoRA base: 4-bit NF4 plus 0.127 bits of double-quantised
#: constants, (4 + 0.127) / 8.
QLORA_WEIGHT_BYTES: Final = (4.0 + 0.127) / 8.0
#: Bytes per s b h of one layer's activations, without the attention scores (module docstring).
ACTIVATION_BYTES_PER_LAYER: Final = 34.0
#: Bytes per s b h of one layer's checkpointed input (bf16).
CHECKPOINT_BYTES_PER_LAYER: Final = 2.0
#: Bytes of the gathered layer of a sharded replica, per h^2: 4 bytes x 12 h^2 parameters.
GATHERED_LAYER_BYTES_PER_H2: Final = 48.0
#: CUDA context and kernels per GPU, GB.
RUNTIME_RESERVE_GB: Final = 1.3
_GB: Final = 1e9
#: Relative slack when comparing a need with a capacity (float noise only).
_SLACK: Final = 1e-12


@dataclass(frozen=True)
class MemoryBreakdown:
    """The memory of one replica sharded over ``gpus`` GPUs, GB.

    Attributes:
        gpus: g, the GPUs one replica's model states are sharded over (1: unsharded).
        weights_gb, gradients_gb, optimizer_gb: the replica's model states, whole (before
            sharding).
        activations_gb: per GPU.
        gathered_layer_gb: per GPU, the gathered layer of a sharded replica (0 when g = 1).
        runtime_gb: per GPU, CUDA context and kernels.
    """

    gpus: int
    weights_gb: float
    gradients_gb: float
    optimizer_gb: float
    activations_gb: float
    gathered_layer_gb: float
    runtime_gb: float

    @property
    def states_gb(self) -> float:
        """Weights + gradients + optimizer states of the whole replica, GB."""
        return self.weights_gb + self.gradients_gb + self.optimizer_gb

    @property
    def per_gpu_gb(self) -> float:
        """What each of the replica's GPUs holds, GB."""
        return (self.states_gb / self.gpus + self.activations_gb + self.gathered_layer_gb
                + self.runtime_gb)

    @property
    def replica_gb(self) -> float:
        """What the replica holds on all its GPUs, GB (``per_gpu_gb x gpus``)."""
        return self.per_gpu_gb * self.gpus


def model_states_gb(job: TransformerJob) -> tuple[float, float, float]:
    """``(weights, gradients, optimizer)`` of the whole replica, GB (module docstring)."""
    trainable = job.trainable_params
    if job.method == "full":
        weights = WEIGHT_BYTES * job.params
    else:
        base = WEIGHT_BYTES if job.method == "lora" else QLORA_WEIGHT_BYTES
        weights = base * job.params + WEIGHT_BYTES * trainable
    return weights / _GB, GRADIENT_BYTES * trainable / _GB, OPTIMIZER_BYTES * trainable / _GB


def activations_gb(job: TransformerJob) -> float:
    """Activation memory per GPU, GB (module docstring)."""
    h, layers = job.shape()
    sbh = float(job.seq_len) * job.micro_batch * h
    if job.activation_checkpointing:
        return (CHECKPOINT_BYTES_PER_LAYER * layers + ACTIVATION_BYTES_PER_LAYER) * sbh / _GB
    return ACTIVATION_BYTES_PER_LAYER * layers * sbh / _GB


def gathered_layer_gb(job: TransformerJob) -> float:
    """The gathered layer of a sharded replica, GB per GPU: ``48 h^2`` bytes."""
    h, _ = job.shape()
    return GATHERED_LAYER_BYTES_PER_H2 * h * h / _GB


def memory_breakdown(job: TransformerJob, gpus: int = 1) -> MemoryBreakdown:
    """The memory of one replica of ``job`` sharded over ``gpus`` GPUs (1: unsharded).

    Raises:
        ValueError: ``gpus`` < 1, or > 1 for a job without sharding.
    """
    if gpus < 1 or (gpus > 1 and job.sharding == "none"):
        raise ValueError(f"gpus = {gpus}: must be 1 without sharding, >= 1 with FSDP")
    weights, gradients, optimizer = model_states_gb(job)
    return MemoryBreakdown(gpus, weights, gradients, optimizer, activations_gb(job),
                           gathered_layer_gb(job) if gpus > 1 else 0.0, RUNTIME_RESERVE_GB)


def per_gpu_gb(job: TransformerJob, gpus: npt.ArrayLike) -> FloatArray:
    """``need(g)``, GB per GPU, for an array of shard counts g >= 1 (vectorised
    :attr:`MemoryBreakdown.per_gpu_gb`)."""
    g = np.asarray(gpus, dtype=np.float64)
    states = sum(model_states_gb(job))
    fixed = activations_gb(job) + RUNTIME_RESERVE_GB
    return np.asarray(states / g + fixed + np.where(g > 1, gathered_layer_gb(job), 0.0),
                      dtype=np.float64)


def _divisors(n: int) -> IntArray:
    return np.array([d for d in range(1, n + 1) if n % d == 0], dtype=np.int64)


def fewest_gpus_per_replica(job: TransformerJob, memory_gb: npt.ArrayLike,
                            gpus_per_vm: npt.ArrayLike) -> IntArray:
    """The fewest GPUs one replica needs on chips of ``memory_gb`` GB in VMs of
    ``gpus_per_vm`` GPUs (arrays of equal length, one entry per VM type): 1 without
    sharding, else a divisor of ``gpus_per_vm`` or a multiple of it (module docstring); 0
    where no such count holds the job (without sharding: one GPU is too small; with FSDP:
    activations and runtime alone fill a GPU). It may exceed ``gpus_per_vm``.
    """
    memory = np.asarray(memory_gb, dtype=np.float64)
    per_vm = np.asarray(gpus_per_vm, dtype=np.int64)
    capacity = memory * (1.0 + _SLACK)
    one = per_gpu_gb(job, 1)[()] <= capacity
    out = np.where(one, 1, 0).astype(np.int64)
    if job.sharding == "none":
        return out
    states = sum(model_states_gb(job))
    room = capacity - (activations_gb(job) + RUNTIME_RESERVE_GB + gathered_layer_gb(job))
    possible = ~one & (room > 0)
    needed = np.full(memory.shape, np.inf)
    needed[possible] = states / room[possible]  # continuous shard count, > 1 where possible
    for m in np.unique(per_vm[possible]):
        rows = possible & (per_vm == m)
        divisors = _divisors(int(m))
        need = needed[rows]
        index = np.searchsorted(divisors, need * (1.0 - _SLACK))
        within = index < len(divisors)
        whole_vms = m * np.ceil(need * (1.0 - _SLACK) / m)
        chosen = np.where(within, divisors[np.minimum(index, len(divisors) - 1)], whole_vms)
        out[rows] = np.maximum(chosen, 2).astype(np.int64)
    return out


@dataclass(frozen=True)
class MemoryVerdict:
    """Whether one VM type can hold a job, and why.

    Attributes:
        instance_type: the VM type.
        fits: True when a replica fits its GPUs under the job's sharding (inside one VM,
            or across VMs when the job allows it).
        gpus_per_replica: the fewest GPUs one replica needs on this chip
            (:func:`fewest_gpus_per_replica`; may exceed the VM's GPUs), or ``None`` when no
            count holds it or the hardware is unknown.
        vms_per_replica: VMs one replica spans at that count, or ``None``.
        needed_gb_per_gpu: GB per GPU at ``gpus_per_replica``; where no count holds the job,
            at the most the job allows on one VM (1 GPU without sharding, all of the VM's GPUs
            with FSDP); ``None`` for unknown hardware.
        replica_gb: ``needed_gb_per_gpu x`` that GPU count, or ``None``.
        gpus_per_vm: the VM's GPUs, or ``None``.
        gpu_memory_gb: GB per GPU, or ``None``.
        reason: one sentence, e.g. ``needs 136 GB per replica with FSDP over 16 GPUs;
            p3.16xlarge has 8 x 16 GB``.
        hardware_source: where the GPU figures came from (:class:`GpuHardware`).
    """

    instance_type: str
    fits: bool
    gpus_per_replica: int | None
    vms_per_replica: int | None
    needed_gb_per_gpu: float | None
    replica_gb: float | None
    gpus_per_vm: int | None
    gpu_memory_gb: float | None
    reason: str
    hardware_source: str


def _gb(value: float) -> str:
    return f"{value:.0f}" if value >= 100 else f"{value:.1f}"


def _layout(job: TransformerJob, gpus: int, vms: int = 1) -> str:
    """``with FSDP over 8 GPUs`` (``on 2 VMs`` when ``vms`` > 1), or ``without sharding``."""
    if job.sharding == "none":
        return "without sharding (one GPU per replica)"
    if gpus == 1:
        return "on 1 GPU"
    return f"with FSDP over {gpus} GPUs" + (f" on {vms} VMs" if vms > 1 else "")


def _verdict(job: TransformerJob, hw: GpuHardware, fewest: int) -> MemoryVerdict:
    name, has = hw.instance_type, hw.describe()
    per_vm, memory = hw.gpus_per_vm, hw.memory_gb_per_gpu
    assert per_vm is not None  # the caller checks hardware first
    assert memory is not None
    if fewest == 0:
        most = 1 if job.sharding == "none" else per_vm
        need = memory_breakdown(job, most)
        if job.sharding == "none":
            reason = f"needs {_gb(need.per_gpu_gb)} GB per GPU {_layout(job, 1)}; {name} has {has}"
            hint = int(fewest_gpus_per_replica(dataclasses.replace(job, sharding="fsdp"),
                                               [memory], [per_vm])[0])
            if 1 < hint <= per_vm:
                reason += f" (FSDP over {hint} GPUs would hold it)"
        else:
            floor = need.activations_gb + need.runtime_gb + gathered_layer_gb(job)
            reason = (f"needs {_gb(floor)} GB per GPU for activations (seq {job.seq_len} x "
                      f"micro-batch {job.micro_batch}) and the runtime before any model "
                      f"state; {name} has {has}")
        return MemoryVerdict(name, False, None, None, need.per_gpu_gb, need.replica_gb,
                             per_vm, memory, reason, hw.source)
    need = memory_breakdown(job, fewest)
    vms = math.ceil(fewest / per_vm)
    fits = vms == 1 or job.shard_across_vms
    if fits:
        reason = (f"fits: needs {_gb(need.per_gpu_gb)} GB per GPU "
                  f"{_layout(job, fewest, vms)}; {name} has {has}")
    else:
        reason = (f"needs {_gb(need.replica_gb)} GB per replica {_layout(job, fewest)}; "
                  f"{name} has {has} (sharded across VMs, a replica would span {vms})")
    return MemoryVerdict(name, fits, fewest, vms, need.per_gpu_gb, need.replica_gb, per_vm,
                         memory, reason, hw.source)


def _unknown(hw: GpuHardware) -> MemoryVerdict:
    acc = hw.accelerator
    if acc is not None and not acc.trains:
        reason = (f"{hw.instance_type} has {acc.name} chips, which do not train "
                  f"(data/accelerators.csv: {acc.note})")
    else:
        reason = f"cannot tell whether {hw.instance_type} holds the job: {hw.missing}"
    return MemoryVerdict(hw.instance_type, False, None, None, None, None, hw.gpus_per_vm,
                         hw.memory_gb_per_gpu, reason, hw.source)


def memory_fit(gpu_types: Iterable[GpuType | str | GpuHardware],
               job: TransformerJob) -> tuple[MemoryVerdict, ...]:
    """The verdict of every GPU type (catalog rows, instance type names, or their
    :class:`GpuHardware`), in order: computed for all types at once.

    A type whose chip, GPU count or memory is unknown, or whose chip does not train, does not
    fit, and its reason says why.
    """
    hardware = [g if isinstance(g, GpuHardware) else gpu_hardware(g) for g in gpu_types]
    known: dict[int, tuple[float, int]] = {
        i: (hw.memory_gb_per_gpu, hw.gpus_per_vm) for i, hw in enumerate(hardware)
        if hw.gpus_per_vm is not None and hw.memory_gb_per_gpu is not None and (
            hw.accelerator is None or hw.accelerator.trains)}
    fewest = fewest_gpus_per_replica(
        job, [m for m, _ in known.values()], [n for _, n in known.values()]
    ) if known else np.zeros(0, dtype=np.int64)
    by_index = dict(zip(known, fewest.tolist(), strict=True))
    return tuple(_verdict(job, hw, by_index[i]) if i in by_index else _unknown(hw)
                 for i, hw in enumerate(hardware))


def no_fit_reason(verdicts: Sequence[MemoryVerdict], job: TransformerJob) -> str | None:
    """``None`` when some type holds the job; else one sentence saying that none does, with the
    verdict of the type with the most GPU memory per VM."""
    if any(v.fits for v in verdicts):
        return None
    if not verdicts:
        return f"no GPU type to hold the job ({job.describe()})"
    sized = [v for v in verdicts if v.gpus_per_vm is not None and v.gpu_memory_gb is not None]
    if not sized:
        return f"no GPU type holds the job ({job.describe()}): {verdicts[0].reason}"
    largest = max(sized, key=lambda v: ((v.gpus_per_vm or 0) * (v.gpu_memory_gb or 0.0),
                                        v.gpu_memory_gb or 0.0))
    return (f"none of the {len(verdicts)} GPU types holds the job ({job.describe()}); with "
            f"the most GPU memory per VM: {largest.reason}")
