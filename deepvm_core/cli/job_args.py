"""The job's command-line arguments, shared by ``deepvm plan`` and ``deepvm recommend``.

``add_job_arguments`` adds E (``--epochs``), t_ref (``--epoch-seconds``), g_ref
(``--ref-type``), n_ref (``--ref-nodes``), the speedup model (``--speedup``) and a measurement
table (``--measurements``). Without ``--epochs``/``--epoch-seconds`` the job is the core's
example (:data:`~deepvm_core.workload.workload.EXAMPLE_EPOCHS` epochs of
:data:`~deepvm_core.workload.workload.EXAMPLE_EPOCH_SECONDS` s), said in the help. A
measurement table gives speedup shapes and relative one-VM times, never the job's epoch time
(``job-model.md``).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from deepvm_core.cli.common import number
from deepvm_core.errors import DeepVMError
from deepvm_core.hardware.measurements import (
    MeasurementTable,
    bundled_measurements_paths,
    load_measurements,
)
from deepvm_core.workload.speedup import SPEEDUP_MODELS, SpeedupModel
from deepvm_core.workload.workload import EXAMPLE_EPOCH_SECONDS, EXAMPLE_EPOCHS
from deepvm_core.workload.yardstick import YARDSTICK_NAME


def add_job_arguments(group: Any, *, example_by_default: bool = True) -> None:
    """Add the job's arguments to an argparse parser or group.

    ``example_by_default``: without ``--epochs``/``--epoch-seconds`` the job is the core's
    example (``plan``); otherwise they default to ``None``, meaning no job (``recommend``).
    """
    epochs = EXAMPLE_EPOCHS if example_by_default else None
    seconds = EXAMPLE_EPOCH_SECONDS if example_by_default else None
    example = (f"default {EXAMPLE_EPOCHS:g}, the example job" if example_by_default
               else "gives a job estimate of the pick")
    group.add_argument("--epochs", type=number(float, 0.0, strict=True),
                       default=epochs, help=f"epochs E of the job (> 0; {example})")
    group.add_argument("--epoch-seconds", type=number(float, 0.0, strict=True),
                       default=seconds,
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
