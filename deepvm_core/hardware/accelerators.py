"""Accelerator models: the chips AWS rents, with their peak figures and a source for each.

The table is the bundled file ``data/accelerators.csv`` (one row per accelerator, keyed by the
name SkyPilot's catalog gives it: ``T4``, ``A100-80GB``, ...). Columns, per chip:

* ``peak_fp32_tflops``: peak FP32 (non-tensor) TFLOPS;
* ``tensor_fp16_tflops``: dense (no sparsity) FP16/BF16 tensor-core TFLOPS, empty for a chip
  without tensor cores (K80, M60);
* ``memory_gb``: device memory, GB; ``memory_bandwidth_gb_per_s``: peak memory bandwidth, GB/s;
* ``intra_node_link``, ``link_gb_per_s``: how the GPUs of one VM talk (PCIe or NVLink) and the
  per-GPU, per-direction bandwidth, GB/s;
* ``trains``: ``yes`` for a training chip; ``no`` rows (Inferentia, FPGAs, ...) are listed only
  so that an importer can say why their instance types are left out (``note``);
* ``source_*``: the source of each number, keys of :data:`SOURCES` (comma-separated); a number
  without one does not load (:func:`parse_accelerators` raises).

The file is read through :func:`deepvm_core.bundled.read_bundled_file`, the one place that
knows where bundled tables live.
"""

from __future__ import annotations

import csv
import functools
import io
from collections.abc import Mapping
from dataclasses import dataclass

from deepvm_core.bundled import read_bundled_file

#: The source behind each ``source_*`` key of ``data/accelerators.csv``. The first eight are
#: the public sources collected in the shared reference's ``gpu-throughput-sources.md``.
SOURCES: Mapping[str, str] = {
    "P": "Paperspace/cnn-benchmarks@df524d3e README.md spec table (per GPU / per die)",
    "W": "winston-zhang-orz/gpu-specs@097f0fb3 specs.md (datasheet-derived)",
    "H": "geoffxy/habitat@5f01e523 analyzer/habitat/analysis/mlp/devices.csv",
    "S": "stas00/ml-engineering@744d01e1 compute/accelerator/README.md (dense TFLOPS, memory)",
    "G": "dstackai/gpuhunt@35841515 src/gpuhunt/_internal/constraints.py (memory)",
    "B": "baseten.co, 'NVIDIA A10 vs A10G for ML model inference' (A10G memory, bandwidth)",
    "AWS": "AWS Neuron docs trn1-arch.rst (Neuron 2.9.1): Trainium per-chip figures",
    "W (A10)": "winston-zhang-orz/gpu-specs@097f0fb3 specs.md, A10 row (used for the A10G)",
    "PCIe": "PCI Express base specification: x16 per direction, Gen3 15.75 GB/s, Gen4 31.5 GB/s",
    "NV-V100": "NVIDIA V100 datasheet: NVLink 300 GB/s per GPU",
    "NV-A100": "NVIDIA A100 datasheet: NVLink 600 GB/s per GPU",
    "NV-H100": "NVIDIA H100/H200 SXM datasheets: NVLink 900 GB/s per GPU",
    "NV-B200": "NVIDIA B200 datasheet: NVLink 1.8 TB/s per GPU",
}


@dataclass(frozen=True)
class Accelerator:
    """One accelerator model (per chip; per GPU die for K80, per GPU for M60).

    Attributes:
        name: SkyPilot's accelerator name (``A100-80GB``).
        aws_families: AWS instance families that carry it (``("p4de",)``).
        trains: True for a training chip; False ones are left out of the search (``note``).
        peak_fp32_tflops: peak FP32 TFLOPS, or ``None`` (not a training chip).
        tensor_fp16_tflops: dense FP16/BF16 tensor TFLOPS, ``None`` without tensor cores.
        memory_gb: device memory, GB.
        memory_bandwidth_gb_per_s: peak memory bandwidth, GB/s.
        intra_node_link: ``PCIe3``, ``PCIe4``, ``NVLink2``...
        link_gb_per_s: per-GPU bandwidth of that link, GB/s per direction, or ``None``.
        sources: the source key of each number (``{"peak_fp32_tflops": "W", ...}``).
        note: what else to know (assumptions, why a chip is left out).
    """

    name: str
    aws_families: tuple[str, ...]
    trains: bool
    peak_fp32_tflops: float | None
    tensor_fp16_tflops: float | None
    memory_gb: float | None
    memory_bandwidth_gb_per_s: float | None
    intra_node_link: str
    link_gb_per_s: float | None
    sources: Mapping[str, str]
    note: str

    @property
    def mixed_precision_tflops(self) -> float | None:
        """The compute peak mixed-precision training runs at: the dense FP16 tensor peak, or
        the FP32 peak on a chip without tensor cores (Kepler, Maxwell: no fast FP16)."""
        return self.tensor_fp16_tflops if self.tensor_fp16_tflops is not None else (
            self.peak_fp32_tflops)


#: The source column of each number column: a row with a number must name its source.
SOURCE_OF: Mapping[str, str] = {
    "peak_fp32_tflops": "source_fp32",
    "tensor_fp16_tflops": "source_tensor",
    "memory_gb": "source_memory",
    "memory_bandwidth_gb_per_s": "source_bandwidth",
    "link_gb_per_s": "source_link",
}


def _number(text: str) -> float | None:
    return float(text) if text.strip() else None


def source_problem(column: str, value: float | None, source: str) -> str | None:
    """Why a number of ``column`` lacks a known source (``None`` when it has one, or when there
    is no number): its source cell must list keys of :data:`SOURCES`, comma-separated."""
    if value is None:
        return None
    refs = [r.strip() for r in source.split(",") if r.strip()]
    if not refs:
        return f"{column} = {value:g} has no source ({SOURCE_OF[column]} is empty)"
    unknown = [r for r in refs if r not in SOURCES]
    if unknown:
        return (f"{column} = {value:g}: source {', '.join(unknown)} is not one of SOURCES "
                f"({SOURCE_OF[column]})")
    return None


def parse_accelerators(text: str) -> dict[str, Accelerator]:
    """The accelerators of a CSV in the format of ``data/accelerators.csv``, by name.

    Raises:
        ValueError: a row with a missing name, a number that does not parse, or a number
            without a known source (:func:`source_problem`).
    """
    out: dict[str, Accelerator] = {}
    for line, row in enumerate(csv.DictReader(io.StringIO(text)), start=2):
        name = (row.get("accelerator") or "").strip()
        if not name:
            raise ValueError(f"accelerators line {line}: accelerator: empty name")
        try:
            numbers = {k: _number(row.get(k) or "") for k in (
                "peak_fp32_tflops", "tensor_fp16_tflops", "memory_gb",
                "memory_bandwidth_gb_per_s", "link_gb_per_s")}
        except ValueError as exc:
            raise ValueError(f"accelerators line {line} ({name}): {exc}") from None
        for column, value in numbers.items():
            problem = source_problem(column, value, row.get(SOURCE_OF[column]) or "")
            if problem is not None:
                raise ValueError(f"accelerators line {line} ({name}): {problem}")
        out[name] = Accelerator(
            name=name,
            aws_families=tuple((row.get("aws_families") or "").split()),
            trains=(row.get("trains") or "").strip() == "yes",
            peak_fp32_tflops=numbers["peak_fp32_tflops"],
            tensor_fp16_tflops=numbers["tensor_fp16_tflops"],
            memory_gb=numbers["memory_gb"],
            memory_bandwidth_gb_per_s=numbers["memory_bandwidth_gb_per_s"],
            intra_node_link=(row.get("intra_node_link") or "").strip(),
            link_gb_per_s=numbers["link_gb_per_s"],
            sources={k.removeprefix("source_"): v for k, v in row.items()
                     if k.startswith("source_") and v},
            note=(row.get("note") or "").strip(),
        )
    return out


@functools.cache
def bundled_accelerators() -> Mapping[str, Accelerator]:
    """The bundled accelerator table (``data/accelerators.csv``), by SkyPilot name."""
    return parse_accelerators(read_bundled_file("accelerators.csv").decode("utf-8"))


def accelerator_for_family(family: str) -> Accelerator | None:
    """The accelerator of an AWS instance family (``g4dn`` -> T4), or ``None``."""
    for acc in bundled_accelerators().values():
        if family in acc.aws_families:
            return acc
    return None


def accelerator_of_instance(instance_type: str) -> Accelerator | None:
    """The accelerator of an AWS instance type, by its family (the name before the first
    ``.``: ``p4d.24xlarge`` -> A100), or ``None`` (a family the table does not list, or a
    name that is not an AWS instance type, such as the simulated catalog's ``A``)."""
    family, dot, _ = instance_type.partition(".")
    return accelerator_for_family(family) if dot else None
