"""A transformer training job, described the way people describe theirs (issue 24).

"Fine-tune a 7B model on 2B tokens with LoRA, FSDP within the VM, sequence length 4096":
:class:`TransformerJob` holds those figures and checks them when it is built; every bad field is
listed with its value in one :class:`~deepvm_core.errors.WorkloadError`. The memory it needs
per GPU is :mod:`deepvm_core.workload.memory`'s, its time without a measurement
:mod:`deepvm_core.workload.throughput`'s.

**Model shape.** Memory and FLOPs need the hidden size h and the layer count L besides the
parameter count N. A dense decoder has about ``N = 12 L h^2`` parameters outside its
embeddings (attention 4h^2 and MLP 8h^2 per layer: the per-layer terms of EleutherAI's
``calc_transformer_flops.py``, source key EC in ``llm-training-sources.md``). Given neither h
nor L, the job takes ``h / L = 128`` (:data:`HIDDEN_PER_LAYER`, the ratio of the 7B-8B models
in the sources: MPT-7B and Llama 3 8B both have L = 32, h = 4096), so
``h = (128 N / 12)^(1/3)`` and ``L = h / 128``, not rounded. Given one, the other follows
from ``N = 12 L h^2``; given both, they are used as they are.

**Tokens.** ``tokens_b`` is the whole job's tokens, in billions; ``epochs`` splits them into
the job model's epochs (``job-model.md``: E epochs of ``tokens_b / epochs`` billion tokens
each), so "3 epochs of 0.5B tokens" is ``tokens_b=1.5, epochs=3``
(:meth:`TransformerJob.from_epochs`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, get_args

from deepvm_core.errors import Problem, WorkloadError

Method = Literal["full", "lora", "qlora"]
Sharding = Literal["none", "fsdp"]
#: The training methods: full fine-tune (or pretraining) with AdamW in mixed precision, LoRA on
#: frozen bf16 weights, QLoRA on frozen 4-bit weights.
METHODS: Final[tuple[Method, ...]] = get_args(Method)
#: How model states are split within a VM: ``none`` (every GPU holds a whole replica, plain
#: data parallelism) or ``fsdp`` (FSDP ``FULL_SHARD`` = ZeRO-3: weights, gradients and optimizer
#: states sharded over the GPUs of a replica).
SHARDINGS: Final[tuple[Sharding, ...]] = get_args(Sharding)

#: ``h / L`` of a model given by its parameter count alone (module docstring).
HIDDEN_PER_LAYER: Final = 128.0
#: Parameters per layer in units of h^2 (attention 4 h^2 + MLP 8 h^2).
PARAMS_PER_LAYER_H2: Final = 12.0

#: Default sequence length, tokens: the length of MosaicML's benchmark table (MF) and of the
#: middle of Qwen's memory profile (QWEN).
DEFAULT_SEQ_LEN: Final = 2048
#: Default micro-batch per GPU, sequences.
DEFAULT_MICRO_BATCH: Final = 1
#: Activation checkpointing (full recomputation) is on by default: it is how the sources fit
#: large models (MF's 30B and 70B rows, torchtitan's 70B rows), keeps one layer input per layer
#: instead of every activation, and costs one more forward pass (8N instead of 6N FLOPs per
#: token, STAS).
DEFAULT_ACTIVATION_CHECKPOINTING: Final = True
#: Default sharding within a VM: FSDP, as the fine-tuning recipes of the sources run (MF,
#: torchtitan). A job that fits one GPU still runs on one.
DEFAULT_SHARDING: Final[Sharding] = "fsdp"
#: Trainable adapter parameters of LoRA and QLoRA as a fraction of the base model's: an
#: assumption (no source gives a total): rank 8-64 adapters on the attention and MLP
#: projections are 0.1-2 % of the base [D: 2 r (d_in + d_out) per adapted matrix]; 1 % keeps
#: the adapter's optimizer memory from being understated.
DEFAULT_ADAPTER_FRACTION: Final = 0.01

#: The example transformer job (issue 24's): a 7B-parameter model trained on 2B tokens, whose
#: full fine-tune needs 112 GB of GPU memory for its model states alone. The dashboard starts
#: its transformer inputs here; the other fields are :class:`TransformerJob`'s defaults.
EXAMPLE_PARAMS_B: Final = 7.0
EXAMPLE_TOKENS_B: Final = 2.0

#: Upper bounds that catch unit slips (parameters and tokens are in billions).
MAX_PARAMS_B: Final = 10_000.0
MAX_TOKENS_B: Final = 1_000_000.0
MAX_SEQ_LEN: Final = 1_048_576
MAX_MICRO_BATCH: Final = 4096
MAX_HIDDEN_SIZE: Final = 1_000_000
MAX_LAYERS: Final = 10_000
#: Each bounded field's upper bound, by field name: what the constructor checks, and what the
#: CLI's options and the dashboard's inputs accept (``epochs`` shares the tokens' bound).
TRANSFORMER_MAX: Final[Mapping[str, float]] = {
    "params_b": MAX_PARAMS_B, "tokens_b": MAX_TOKENS_B, "epochs": MAX_TOKENS_B,
    "seq_len": MAX_SEQ_LEN, "micro_batch": MAX_MICRO_BATCH, "hidden_size": MAX_HIDDEN_SIZE,
    "layers": MAX_LAYERS}

_WHERE = "transformer job"


def _positive(problems: list[Problem], name: str, value: object, maximum: float,
              unit: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        problems.append(Problem(_WHERE, name, value, "must be a number"))
    elif not math.isfinite(value) or value <= 0:
        problems.append(Problem(_WHERE, name, value, "must be a finite number greater than 0"))
    elif value > maximum:
        problems.append(Problem(_WHERE, name, value, f"must be at most {maximum:g} {unit}"))


def _whole(problems: list[Problem], name: str, value: object, maximum: float,
           optional: bool = False) -> None:
    if optional and value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= maximum:
        problems.append(Problem(_WHERE, name, value,
                                f"must be a whole number from 1 to {int(maximum):,}"))


@dataclass(frozen=True, kw_only=True)
class TransformerJob:
    """A transformer training or fine-tuning job.

    Attributes:
        params_b: N, parameters of the model, billions (> 0).
        tokens_b: tokens the whole job trains on, billions (> 0).
        epochs: how many epochs ``tokens_b`` is split into (> 0; the job model's E).
        method: ``full`` (AdamW, mixed precision), ``lora`` or ``qlora``.
        sharding: ``none`` or ``fsdp`` within a VM (:data:`SHARDINGS`).
        shard_across_vms: True lets one replica's FSDP shards span several VMs (needed when one
            VM's GPUs cannot hold it); False keeps every replica inside one VM (data
            parallelism across VMs).
        seq_len: tokens per sequence.
        micro_batch: sequences per GPU per step.
        activation_checkpointing: full recomputation on (True) or off.
        hidden_size: h, or ``None`` to derive it (module docstring).
        layers: L, or ``None`` to derive it.
        adapter_fraction: trainable adapter parameters / base parameters, LoRA and QLoRA only
            (0 < f <= 1).
    """

    params_b: float
    tokens_b: float
    epochs: float = 1.0
    method: Method = "full"
    sharding: Sharding = DEFAULT_SHARDING
    shard_across_vms: bool = False
    seq_len: int = DEFAULT_SEQ_LEN
    micro_batch: int = DEFAULT_MICRO_BATCH
    activation_checkpointing: bool = DEFAULT_ACTIVATION_CHECKPOINTING
    hidden_size: int | None = None
    layers: int | None = None
    adapter_fraction: float = DEFAULT_ADAPTER_FRACTION

    def __post_init__(self) -> None:
        problems: list[Problem] = []
        for name, unit in (("params_b", "billion parameters"), ("tokens_b", "billion tokens"),
                           ("epochs", "epochs")):
            _positive(problems, name, getattr(self, name), TRANSFORMER_MAX[name], unit)
        if self.method not in METHODS:
            problems.append(Problem(_WHERE, "method", self.method,
                                    f"must be one of {', '.join(METHODS)}"))
        if self.sharding not in SHARDINGS:
            problems.append(Problem(_WHERE, "sharding", self.sharding,
                                    f"must be one of {', '.join(SHARDINGS)}"))
        for name in ("shard_across_vms", "activation_checkpointing"):
            if not isinstance(getattr(self, name), bool):
                problems.append(Problem(_WHERE, name, getattr(self, name),
                                        "must be true or false"))
        if self.shard_across_vms is True and self.sharding == "none":
            problems.append(Problem(_WHERE, "shard_across_vms", True,
                                    "needs sharding 'fsdp' (without sharding a replica is one "
                                    "GPU)"))
        for name in ("seq_len", "micro_batch", "hidden_size", "layers"):
            _whole(problems, name, getattr(self, name), TRANSFORMER_MAX[name],
                   optional=name in ("hidden_size", "layers"))
        _positive(problems, "adapter_fraction", self.adapter_fraction, 1.0, "")
        if problems:
            raise WorkloadError(problems, _WHERE)

    @classmethod
    def from_epochs(cls, *, epochs: float, tokens_per_epoch_b: float,
                    **fields: Any) -> TransformerJob:
        """A job of ``epochs`` epochs of ``tokens_per_epoch_b`` billion tokens each.

        Raises:
            WorkloadError: as the constructor; a bad ``tokens_per_epoch_b`` is named.
        """
        problems: list[Problem] = []
        _positive(problems, "tokens_per_epoch_b", tokens_per_epoch_b, MAX_TOKENS_B,
                  "billion tokens")
        _positive(problems, "epochs", epochs, MAX_TOKENS_B, "epochs")
        if problems:
            raise WorkloadError(problems, _WHERE)
        return cls(tokens_b=epochs * tokens_per_epoch_b, epochs=epochs, **fields)

    @property
    def params(self) -> float:
        """N, parameters."""
        return self.params_b * 1e9

    @property
    def tokens(self) -> float:
        """Tokens of the whole job."""
        return self.tokens_b * 1e9

    @property
    def tokens_per_epoch(self) -> float:
        """Tokens of one epoch."""
        return self.tokens / self.epochs

    @property
    def trainable_params(self) -> float:
        """Parameters the optimizer updates: all of them (``full``), else the adapter's."""
        return self.params if self.method == "full" else self.adapter_fraction * self.params

    def shape(self) -> tuple[float, float]:
        """``(h, L)``: as given, or derived from N (module docstring; not rounded)."""
        per_layer = PARAMS_PER_LAYER_H2
        if self.hidden_size is not None and self.layers is not None:
            return float(self.hidden_size), float(self.layers)
        if self.hidden_size is not None:
            h = float(self.hidden_size)
            return h, self.params / (per_layer * h * h)
        if self.layers is not None:
            layers = float(self.layers)
            return math.sqrt(self.params / (per_layer * layers)), layers
        h = (HIDDEN_PER_LAYER * self.params / per_layer) ** (1.0 / 3.0)
        return h, h / HIDDEN_PER_LAYER

    def describe(self) -> str:
        """One line: ``7B full, FSDP within a VM, 2B tokens in 1 epoch, seq 2048 x micro-batch
        1, activation checkpointing on``."""
        method = {"full": "full", "lora": "LoRA", "qlora": "QLoRA"}[self.method]
        sharding = "no sharding" if self.sharding == "none" else (
            "FSDP across VMs" if self.shard_across_vms else "FSDP within a VM")
        epochs = f"{self.epochs:g} epoch{'s' if self.epochs != 1 else ''}"
        return (f"{self.params_b:g}B {method}, {sharding}, {self.tokens_b:g}B tokens in "
                f"{epochs}, seq {self.seq_len} x micro-batch {self.micro_batch}, activation "
                f"checkpointing {'on' if self.activation_checkpointing else 'off'}")
