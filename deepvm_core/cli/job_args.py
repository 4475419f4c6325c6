"""The job's command-line arguments, shared by ``deepvm plan`` and ``deepvm recommend``.

``add_job_arguments`` adds E (``--epochs``), t_ref (``--epoch-seconds``), g_ref
(``--ref-type``), n_ref (``--ref-nodes``), the speedup model (``--speedup``) and a measurement
table (``--measurements``). Without ``--epochs``/``--epoch-seconds`` the job is the core's
example (:data:`~deepvm_core.workload.workload.EXAMPLE_EPOCHS` epochs of
:data:`~deepvm_core.workload.workload.EXAMPLE_EPOCH_SECONDS` s), said in the help. A
measurement table gives speedup shapes and relative one-VM times, never the job's epoch time
(``job-model.md``).

A transformer job (``--workload transformer``, issue 24) is described by its model and tokens
instead: ``--params-b``, ``--tokens-b``, ``--method``, ``--sharding`` (``--shard-across-vms``),
``--seq-len``, ``--micro-batch``, ``--activation-checkpointing`` and, when measured,
``--tokens-per-second`` on ``--ref-nodes`` VMs of ``--ref-type`` (:func:`transformer_from_args`).
Its defaults are :class:`~deepvm_core.workload.transformer.TransformerJob`'s.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from deepvm_core.cli.common import number
from deepvm_core.defaults import field_default
from deepvm_core.errors import DeepVMError
from deepvm_core.hardware.measurements import (
    MeasurementTable,
    bundled_measurements_paths,
    load_measurements,
)
from deepvm_core.workload.speedup import SPEEDUP_MODELS, SpeedupModel
from deepvm_core.workload.transformer import (
    METHODS,
    SHARDINGS,
    TRANSFORMER_MAX,
    TransformerJob,
)
from deepvm_core.workload.workload import (
    EXAMPLE_EPOCH_SECONDS,
    EXAMPLE_EPOCHS,
    WORKLOAD_KINDS,
    job_checkpoint_gb,
)
from deepvm_core.workload.yardstick import YARDSTICK_NAME

#: The transformer job's options (flag, field of TransformerJob); ``--tokens-per-second`` is
#: the workload's.
TRANSFORMER_FLAGS = (("--params-b", "params_b"), ("--tokens-b", "tokens_b"),
                     ("--method", "method"), ("--sharding", "sharding"),
                     ("--shard-across-vms", "shard_across_vms"), ("--seq-len", "seq_len"),
                     ("--micro-batch", "micro_batch"),
                     ("--activation-checkpointing", "activation_checkpointing"),
                     ("--tokens-per-second", "tokens_per_second"))


def add_job_arguments(group: Any, *, example_by_default: bool = True) -> None:
    """Add the job's arguments to an argparse parser or group.

    ``example_by_default``: without ``--epochs``/``--epoch-seconds`` the job is the core's
    example (``plan``); otherwise they default to ``None``, meaning no job (``recommend``).
    """
    example = (f"default {EXAMPLE_EPOCHS:g}, the example job; a transformer job's default "
               f"{field_default(TransformerJob, 'epochs'):g}" if example_by_default
               else "gives a job estimate of the pick")
    group.add_argument("--epochs", type=number(float, 0.0, strict=True),
                       help=f"epochs E of the job (> 0; {example})")
    group.add_argument("--epoch-seconds", type=number(float, 0.0, strict=True),
                       help="measured seconds per epoch t_ref of YOUR job on --ref-nodes VMs of "
                            "--ref-type, the only absolute time"
                            + (f" (default {EXAMPLE_EPOCH_SECONDS:g}: an example, a "
                               f"ResNet-50-sized job of about a day on one {YARDSTICK_NAME}; "
                               "edit it to yours)"
                               if example_by_default else ""))
    group.add_argument("--ref-type", metavar="TYPE",
                       help="GPU type of that measurement (default: none, the epoch time is on "
                            f"one {YARDSTICK_NAME} GPU, the same in every catalog)")
    group.add_argument("--ref-nodes", type=number(int, 1), default=1,
                       help="VMs of that measurement (default 1)")
    group.add_argument("--speedup", choices=SPEEDUP_MODELS, default="fitted",
                       help="speedup model S(n): fitted (default, the logistic), paper (n K(n)) "
                            "or measured (needs --measurements)")
    group.add_argument("--measurements", metavar="FILE.csv",
                       help="measured epoch times (instance,nodes,epoch_seconds), a path or a "
                            "bundled name (" + ", ".join(bundled_measurements_paths()) + "); "
                            "its one-node rows give relative one-VM speeds, never the job's "
                            "epoch time")
    _add_transformer_arguments(group)


def _add_transformer_arguments(group: Any) -> None:
    """``--workload`` and the transformer job's options (module docstring)."""
    d = {name: field_default(TransformerJob, name) for name in (
        "method", "sharding", "seq_len", "micro_batch", "activation_checkpointing")}
    group.add_argument("--workload", choices=WORKLOAD_KINDS, default=WORKLOAD_KINDS[0],
                       help="the kind of job: cnn (default: the paper's data-parallel job, "
                            "given by --epochs and --epoch-seconds) or transformer (an LLM "
                            "pretraining or fine-tune, given by --params-b and --tokens-b: GPU "
                            "memory decides which types can run it)")
    group.add_argument("--params-b",
                       type=number(float, 0.0, strict=True, maximum=TRANSFORMER_MAX["params_b"]),
                       metavar="B", help="transformer: billions of parameters of the model")
    group.add_argument("--tokens-b",
                       type=number(float, 0.0, strict=True, maximum=TRANSFORMER_MAX["tokens_b"]),
                       metavar="B", help="transformer: billions of tokens the whole job trains "
                                         "on (split into --epochs)")
    group.add_argument("--method", choices=METHODS,
                       help=f"transformer: full (AdamW, mixed precision), lora or qlora "
                            f"(default {d['method']})")
    group.add_argument("--sharding", choices=SHARDINGS,
                       help=f"transformer: none (a whole replica per GPU) or fsdp (ZeRO-3 over "
                            f"a VM's GPUs; default {d['sharding']})")
    group.add_argument("--shard-across-vms", action="store_const", const=True,
                       help="transformer: let one FSDP replica span several VMs when one VM's "
                            "GPUs cannot hold it (clusters are then whole replicas)")
    group.add_argument("--seq-len", type=number(int, 1, maximum=TRANSFORMER_MAX["seq_len"]),
                       help=f"transformer: tokens per sequence (default {d['seq_len']})")
    group.add_argument("--micro-batch", type=number(int, 1, maximum=TRANSFORMER_MAX["micro_batch"]),
                       help=f"transformer: sequences per GPU per step (default "
                            f"{d['micro_batch']})")
    group.add_argument("--activation-checkpointing", choices=("on", "off"),
                       help="transformer: full activation recomputation (default "
                            f"{'on' if d['activation_checkpointing'] else 'off'})")
    group.add_argument("--tokens-per-second", type=number(float, 0.0, strict=True),
                       metavar="TPS",
                       help="transformer: YOUR job's measured tokens per second on --ref-nodes "
                            "VMs of --ref-type (which it needs); wins over the estimate (FLOPs "
                            "per token at a published MFU)")


def checkpoint_gb_from_args(args: argparse.Namespace) -> float:
    """f, GB: ``--ckpt-gb`` when given, else a transformer job's own checkpoint
    (:func:`~deepvm_core.workload.workload.job_checkpoint_gb`), else the scenario's
    default."""
    return job_checkpoint_gb(transformer_from_args(args), args.ckpt_gb)


def transformer_from_args(args: argparse.Namespace) -> TransformerJob | None:
    """The transformer job of ``--workload transformer`` and its options, or ``None`` for a
    cnn job.

    Raises:
        DeepVMError: a transformer option without ``--workload transformer``, a transformer
            job without ``--params-b``/``--tokens-b`` or with ``--epoch-seconds``, or
            ``--tokens-per-second`` without ``--ref-type``.
    """
    given = [flag for flag, name in TRANSFORMER_FLAGS if getattr(args, name) is not None]
    if args.workload != "transformer":
        if given:
            raise DeepVMError(f"{', '.join(given)}: only for --workload transformer (the "
                              "job is cnn)")
        return None
    missing = [flag for flag in ("--params-b", "--tokens-b")
               if getattr(args, flag[2:].replace("-", "_")) is None]
    if missing:
        raise DeepVMError(f"--workload transformer needs {' and '.join(missing)} (the model's "
                          "billions of parameters and the job's billions of tokens)")
    if args.epoch_seconds is not None:
        raise DeepVMError("--epoch-seconds is a cnn job's time; a transformer job's comes from "
                          "--tokens-per-second (measured) or the estimate")
    if args.tokens_per_second is not None and args.ref_type is None:
        raise DeepVMError("--tokens-per-second needs --ref-type, the GPU type it was measured "
                          "on (with --ref-nodes VMs)")
    fields = {name: getattr(args, name) for _, name in TRANSFORMER_FLAGS[2:-1]
              if getattr(args, name) is not None}
    if "activation_checkpointing" in fields:
        fields["activation_checkpointing"] = fields["activation_checkpointing"] == "on"
    if args.epochs is not None:
        fields["epochs"] = args.epochs
    return TransformerJob(params_b=args.params_b, tokens_b=args.tokens_b, **fields)


def load_measurements_arg(name: str) -> MeasurementTable:
    """``--measurements``: a path, or a bundled table's name."""
    bundled = bundled_measurements_paths()
    path = Path(name)
    if not path.exists() and name in bundled:
        path = bundled[name]
    if not path.exists():
        raise DeepVMError(f"measurements {name!r}: no such file or bundled name (bundled: "
                          f"{', '.join(bundled) or 'none'})")
    table = load_measurements(path)
    if name in bundled and path == bundled[name]:
        return MeasurementTable(table.instances, name)
    return table


def speedup_from_args(args: argparse.Namespace) -> SpeedupModel:
    """The speedup model of ``--speedup`` and ``--measurements``."""
    measurements = None if args.measurements is None else load_measurements_arg(args.measurements)
    if args.speedup == "measured" and measurements is None:
        bundled = ", ".join(bundled_measurements_paths())
        raise DeepVMError(f"--speedup measured needs --measurements FILE.csv (bundled: "
                          f"{bundled})")
    return SpeedupModel(args.speedup, measurements)
