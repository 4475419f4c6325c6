"""The GPUs of a VM type: which chip, how many per VM, how much memory each (issue 24).

What a transformer job's memory fit and time need of a GPU type, found in this order:

1. **The catalog row's own fields**, when it has them: ``accelerator`` (SkyPilot's name, a key
   of ``data/accelerators.csv``), ``gpu_count`` (GPUs per VM) and ``gpu_memory_gb`` (GB per
   GPU), the names in :data:`CATALOG_FIELDS` (catalog schema version 3). The bundled AWS
   catalogs carry them on every GPU row (``data/README.md``); a row that has them is read as
   it is.
2. **Derived** from the instance type's name otherwise: the chip from its family
   (:func:`deepvm_core.hardware.accelerators.accelerator_of_instance`: ``p4d.24xlarge`` ->
   A100), the GPU count from the bundled table ``data/instance-gpus.csv``
   (:func:`instance_gpu_counts`), the memory per GPU from ``data/accelerators.csv``.

:attr:`GpuHardware.source` says which it was, field by field, and :attr:`GpuHardware.missing`
why a figure is unknown (the simulated catalog's types ``A``... have no chip at all).

``data/instance-gpus.csv`` (``instance_type,accelerator,gpus,source``) holds the GPU count of
every accelerator instance type of the SkyPilot snapshot the bundled 2025 catalogs are built
from, plus the few types the catalogs hold that it lacks; the ``source`` keys are
:data:`GPU_COUNT_SOURCES`. Its ``accelerator`` column repeats the chip of the family map, so a
test can check that the two agree.
"""

from __future__ import annotations

import csv
import functools
import io
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from deepvm_core.bundled import read_bundled_file
from deepvm_core.catalog import GpuType
from deepvm_core.catalog.schema import GPU_FIELDS
from deepvm_core.hardware.accelerators import (
    Accelerator,
    accelerator_of_instance,
    bundled_accelerators,
)

#: The fields a catalog row may carry its GPUs in: chip name, GPUs per VM, GB per GPU (the
#: catalog schema's :data:`~deepvm_core.catalog.schema.GPU_FIELDS`).
CATALOG_FIELDS: Final = GPU_FIELDS
#: What each ``source`` key of ``data/instance-gpus.csv`` stands for.
GPU_COUNT_SOURCES: Final[Mapping[str, str]] = {
    "SkyPilot": "skypilot-org/skypilot-catalog@001367d2 catalogs/v7/aws/vms.csv "
                "(AcceleratorName, AcceleratorCount)",
    "moto": "moto 5.2.5 ec2/resources/instance_types.json.gz (EC2 DescribeInstanceTypes "
            "GpuInfo)",
    "accelerators.csv": "data/accelerators.csv note: the type exposes one GPU (g3s.xlarge: one "
                        "GM204 of an M60 board; p2.xlarge: one GK210 die of a K80 board)",
}
#: ``source`` of a figure read from the catalog row.
FROM_CATALOG: Final = "catalog"


@dataclass(frozen=True)
class InstanceGpus:
    """One row of ``data/instance-gpus.csv``.

    Attributes:
        accelerator: the chip's name (a key of ``data/accelerators.csv``).
        gpus: GPUs (chips) per VM (>= 1).
        source: a key of :data:`GPU_COUNT_SOURCES`.
    """

    accelerator: str
    gpus: int
    source: str


def parse_instance_gpus(text: str) -> dict[str, InstanceGpus]:
    """The rows of a CSV in the format of ``data/instance-gpus.csv``, by instance type.

    Raises:
        ValueError: naming the line and field of a missing name, a GPU count that is not a
            whole number >= 1, an unknown source, or a duplicate instance type.
    """
    out: dict[str, InstanceGpus] = {}
    for line, row in enumerate(csv.DictReader(io.StringIO(text)), start=2):
        name = (row.get("instance_type") or "").strip()
        acc = (row.get("accelerator") or "").strip()
        gpus_text = (row.get("gpus") or "").strip()
        source = (row.get("source") or "").strip()
        where = f"instance-gpus line {line} ({name or '?'})"
        if not name or not acc:
            raise ValueError(f"{where}: instance_type and accelerator must not be empty")
        if not gpus_text.isdigit() or int(gpus_text) < 1:
            raise ValueError(f"{where}: gpus = {gpus_text!r} must be a whole number >= 1")
        if source not in GPU_COUNT_SOURCES:
            raise ValueError(f"{where}: source = {source!r} is not one of "
                             f"{', '.join(GPU_COUNT_SOURCES)}")
        if name in out:
            raise ValueError(f"{where}: duplicate instance type")
        out[name] = InstanceGpus(acc, int(gpus_text), source)
    return out


@functools.cache
def instance_gpu_counts() -> Mapping[str, InstanceGpus]:
    """The bundled table ``data/instance-gpus.csv``, by instance type."""
    return parse_instance_gpus(read_bundled_file("instance-gpus.csv").decode("utf-8"))


@dataclass(frozen=True)
class GpuHardware:
    """The GPUs of one VM type, as far as they are known.

    Attributes:
        instance_type: the VM type's name.
        accelerator: the chip's row of ``data/accelerators.csv``, or ``None`` (unknown chip).
        gpus_per_vm: GPUs (chips) per VM, or ``None``.
        memory_gb_per_gpu: device memory per GPU, GB (10^9 bytes), or ``None``.
        source: where the three came from, e.g. ``catalog`` or ``derived: chip A10G from
            family g5, 4 GPUs from data/instance-gpus.csv (SkyPilot), 24 GB from
            data/accelerators.csv``.
        missing: why a figure is unknown, or ``None`` when all three are known.
    """

    instance_type: str
    accelerator: Accelerator | None
    gpus_per_vm: int | None
    memory_gb_per_gpu: float | None
    source: str
    missing: str | None

    @property
    def chip(self) -> str:
        """The chip's name, ``?`` when unknown."""
        return self.accelerator.name if self.accelerator is not None else "?"

    def describe(self) -> str:
        """``4 x 24 GB`` (GPUs per VM x memory per GPU), ``?`` for an unknown figure."""
        gpus = "?" if self.gpus_per_vm is None else str(self.gpus_per_vm)
        memory = "?" if self.memory_gb_per_gpu is None else f"{self.memory_gb_per_gpu:g}"
        return f"{gpus} x {memory} GB"


def _gpus(count: int) -> str:
    return f"{count} GPU" if count == 1 else f"{count} GPUs"


def _catalog_value(row: object, name: str) -> object:
    return getattr(row, name, None)


def gpu_hardware(row: GpuType | str) -> GpuHardware:
    """The GPUs of one GPU type (a catalog row, or an instance type's name): the row's own
    fields where it has them, else derived (module docstring)."""
    name = row if isinstance(row, str) else row.name
    table = bundled_accelerators()
    given_acc, given_count, given_memory = (_catalog_value(row, f) for f in CATALOG_FIELDS)
    sources: list[str] = []
    missing: list[str] = []

    acc: Accelerator | None = None
    if isinstance(given_acc, str) and given_acc in table:
        acc = table[given_acc]
        sources.append(f"chip {acc.name} from the catalog")
    else:
        acc = accelerator_of_instance(name)
        family = name.partition(".")[0]
        if acc is not None:
            sources.append(f"chip {acc.name} from family {family}")
        elif isinstance(given_acc, str) and given_acc:
            missing.append(f"chip {given_acc!r} is not in data/accelerators.csv")
        elif "." not in name:
            missing.append(f"no accelerator model for {name!r} (not an AWS instance type "
                           "name such as g5.xlarge)")
        else:
            missing.append(f"no accelerator model for {name!r} (family {family} is not in "
                           "data/accelerators.csv)")

    gpus: int | None = None
    if isinstance(given_count, int) and not isinstance(given_count, bool) and given_count >= 1:
        gpus = given_count
        sources.append(f"{_gpus(gpus)} from the catalog")
    else:
        counted = instance_gpu_counts().get(name)
        if counted is not None:
            gpus = counted.gpus
            sources.append(f"{_gpus(gpus)} from data/instance-gpus.csv ({counted.source})")
        else:
            missing.append(f"no GPU count for {name!r} (not in data/instance-gpus.csv)")

    memory: float | None = None
    if isinstance(given_memory, int | float) and not isinstance(given_memory, bool) and (
            given_memory > 0):
        memory = float(given_memory)
        sources.append(f"{memory:g} GB from the catalog")
    elif acc is not None and acc.memory_gb is not None:
        memory = acc.memory_gb
        sources.append(f"{memory:g} GB from data/accelerators.csv")
    elif acc is not None:
        missing.append(f"no memory figure for {acc.name} in data/accelerators.csv")

    all_catalog = sources and all(s.endswith("from the catalog") for s in sources)
    source = FROM_CATALOG if all_catalog and not missing else (
        "derived: " + ", ".join(sources) if sources else "unknown")
    return GpuHardware(name, acc, gpus, memory, source, "; ".join(missing) or None)


def gpu_hardware_table(rows: Iterable[GpuType | str]) -> tuple[GpuHardware, ...]:
    """:func:`gpu_hardware` of every row, in order (a catalog's ``gpu_types``)."""
    return tuple(gpu_hardware(r) for r in rows)
