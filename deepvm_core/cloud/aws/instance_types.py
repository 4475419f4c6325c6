"""EC2 ``DescribeInstanceTypes``: the call, and the specs it gives (vCPUs, memory, network, GPUs,
quota family). The parsers are pure (no I/O, no boto3) and raise
:class:`~deepvm_core.cloud.aws.client.MalformedAnswer` for an answer of the wrong shape.

**Specs.** The call filters on ``instance-type``, so globs such as ``g5.*`` work and a type a
region does not offer is reported instead of failing the call. vCPUs are
``VCpuInfo.DefaultVCpus``; memory is ``MemoryInfo.SizeInMiB / 1024`` GiB; a type with
``GpuInfo`` is a GPU type, any other a CPU type (memory node).

**Network** (``NetworkInfo.NetworkPerformance``). ``"25 Gigabit"`` and ``"Up to 25 Gigabit"``
are 25 Gbit/s (the burst value, as the bundled catalog and the DeepVM artifact use it);
``"4x 100 Gigabit"`` is 400. Qualitative levels are mapped to the numbers of
:data:`QUALITATIVE_NETWORK_GBPS` (``Moderate`` 0.3 and ``High`` 1.7 are the artifact's measured
values for c3.xlarge and c4.xlarge) and each mapped value is listed in the notes.

**Quota family** (:func:`quota_family`; a type of the base catalog keeps the base catalog's
family instead, see :mod:`deepvm_core.cloud.aws.assemble`): the AWS on-demand quota group of its
family prefix where AWS has a group of its own (``inf`` -> ``Inf``, ``trn`` -> ``Trn``,
``dl`` -> ``DL``, ``hpc`` -> ``HPC``, ``mac`` -> ``Mac``, ``vt`` and ``gr`` -> ``G``,
``im``/``is`` -> ``I``; see :data:`FAMILY_PREFIXES`), else the first letter upper-cased
(``g4dn.xlarge`` -> ``G``, ``p4d.24xlarge`` -> ``P``, ``c5.xlarge`` -> ``C``), which is the
bundled catalog's convention.
AWS puts A, C, D, H, I, M, R, T and Z in one "Standard" on-demand quota; the catalog keeps a
letter per family, as the bundled catalog does, so edit the quotas to match an account.
"""

from __future__ import annotations

import fnmatch
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from deepvm_core.cloud.aws.client import MalformedAnswer, answer_field, chunks

#: Network levels AWS states in words, as Gbit/s. ``Moderate`` and ``High`` are the DeepVM
#: artifact's measured values (c3.xlarge 0.3, c4.xlarge 1.7, as in the bundled catalog); the
#: lower levels are conservative guesses below ``Moderate``. Every use is listed in the notes.
QUALITATIVE_NETWORK_GBPS: Mapping[str, float] = {
    "very low": 0.05,
    "low": 0.1,
    "low to moderate": 0.1,
    "moderate": 0.3,
    "high": 1.7,
}

#: Family prefixes (the letters before the generation digit) with an AWS quota group of their
#: own, mapped to that group; every other prefix maps to its first letter upper-cased.
FAMILY_PREFIXES: Mapping[str, str] = {
    "inf": "Inf",
    "trn": "Trn",
    "dl": "DL",
    "hpc": "HPC",
    "mac": "Mac",
    "vt": "G",
    "gr": "G",
    "im": "I",
    "is": "I",
}

_GIGABIT_RE = re.compile(
    r"^\s*(?:up\s+to\s+)?(?:(\d+)\s*x\s*)?(\d+(?:\.\d+)?)\s*gigabit\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class NetworkBandwidth:
    """A parsed ``NetworkPerformance`` string.

    Attributes:
        gbps: bandwidth, Gbit/s.
        mapped: True when the text was a qualitative level mapped to a documented number.
        burst: True when AWS gave an "Up to" (burst) value.
    """

    gbps: float
    mapped: bool = False
    burst: bool = False


@dataclass(frozen=True)
class InstanceSpec:
    """Specs of one instance type, from ``DescribeInstanceTypes``.

    Attributes:
        name: instance type (``g4dn.xlarge``).
        family: quota family (see the module docstring).
        vcpus: default vCPUs.
        memory_gib: RAM, GiB.
        network_gbps: network bandwidth, Gbit/s.
        network_text: AWS's ``NetworkPerformance`` text it was read from.
        network_mapped: True when ``network_text`` was a qualitative level.
        gpu_model: ``"NVIDIA T4"``, or ``None`` for a CPU type.
        gpu_count: GPUs per instance (0 for a CPU type).
        gpu_memory_gib: GPU memory of the whole instance, GiB, or ``None``.
    """

    name: str
    family: str
    vcpus: int
    memory_gib: float
    network_gbps: float
    network_text: str
    network_mapped: bool = False
    gpu_model: str | None = None
    gpu_count: int = 0
    gpu_memory_gib: float | None = None

    @property
    def is_gpu(self) -> bool:
        """True for a GPU type (AWS reported ``GpuInfo``)."""
        return self.gpu_count > 0

    def gpu_text(self) -> str:
        """``"1 x NVIDIA T4 (16 GiB)"``, or ``""`` for a CPU type."""
        if not self.is_gpu:
            return ""
        memory = f" ({round(self.gpu_memory_gib, 1):g} GiB)" if self.gpu_memory_gib else ""
        return f"{self.gpu_count} x {self.gpu_model}{memory}"


def parse_network_gbps(text: str) -> NetworkBandwidth:
    """Bandwidth in Gbit/s of an EC2 ``NetworkPerformance`` text.

    ``"25 Gigabit"`` and ``"Up to 25 Gigabit"`` -> 25 (``burst`` for the latter),
    ``"4x 100 Gigabit"`` -> 400, ``"High"`` -> 1.7 (``mapped``, see
    :data:`QUALITATIVE_NETWORK_GBPS`).

    Raises:
        MalformedAnswer: the text is neither a Gigabit value nor a known level.
    """
    if not isinstance(text, str) or not text.strip():
        raise MalformedAnswer(f"network performance {text!r} is empty")
    level = " ".join(text.lower().split())
    if level in QUALITATIVE_NETWORK_GBPS:
        return NetworkBandwidth(QUALITATIVE_NETWORK_GBPS[level], mapped=True)
    match = _GIGABIT_RE.match(text)
    if not match:
        raise MalformedAnswer(f"network performance {text!r} is not understood")
    lanes = int(match.group(1)) if match.group(1) else 1
    gbps = lanes * float(match.group(2))
    if not math.isfinite(gbps) or gbps <= 0:
        raise MalformedAnswer(f"network performance {text!r} is not a positive bandwidth")
    return NetworkBandwidth(gbps, burst=level.startswith("up to"))


def quota_family(instance_type: str) -> str:
    """The quota family of an instance type (``g4dn.xlarge`` -> ``G``, ``inf2.xlarge`` ->
    ``Inf``); see :data:`FAMILY_PREFIXES` and the module docstring."""
    family_part = instance_type.split(".", 1)[0].lower()
    prefix = re.match(r"[a-z]*", family_part)
    letters = prefix.group(0) if prefix else ""
    if not letters:
        raise MalformedAnswer(f"instance type {instance_type!r} has no family letters")
    return FAMILY_PREFIXES.get(letters, letters[0].upper())


def parse_instance_type(raw: Mapping[str, Any]) -> InstanceSpec:
    """An :class:`InstanceSpec` from one ``DescribeInstanceTypes`` item.

    Raises:
        MalformedAnswer: a required field (type, vCPUs, memory, network) is missing or wrong.
    """
    name = raw.get("InstanceType") if isinstance(raw, Mapping) else None
    if not isinstance(name, str) or not name:
        raise MalformedAnswer("an instance type without InstanceType")
    vcpus = answer_field(raw, "VCpuInfo", "DefaultVCpus")
    if isinstance(vcpus, bool) or not isinstance(vcpus, int) or vcpus < 1:
        raise MalformedAnswer(f"{name}: VCpuInfo.DefaultVCpus {vcpus!r} is not a vCPU count")
    memory_mib = answer_field(raw, "MemoryInfo", "SizeInMiB")
    if isinstance(memory_mib, bool) or not isinstance(memory_mib, (int, float)) or (
            memory_mib <= 0):
        raise MalformedAnswer(f"{name}: MemoryInfo.SizeInMiB {memory_mib!r} is not a size")
    network_text = answer_field(raw, "NetworkInfo", "NetworkPerformance")
    try:
        network = parse_network_gbps(network_text)
    except MalformedAnswer as exc:
        # A level this module does not know yet: the network cards' peak bandwidth, if given.
        cards = answer_field(raw, "NetworkInfo", "NetworkCards")
        peaks = [c.get("PeakBandwidthInGbps") for c in cards or () if isinstance(c, Mapping)]
        gbps = [float(p) for p in peaks
                if isinstance(p, int | float) and not isinstance(p, bool) and p > 0]
        if not peaks or len(gbps) != len(peaks):
            raise MalformedAnswer(f"{name}: {exc}") from None
        network = NetworkBandwidth(sum(gbps), mapped=True)
        network_text = f"{network_text} (network cards' peak bandwidth used)"
    gpu_model: str | None = None
    gpu_count = 0
    gpu_memory_gib: float | None = None
    gpu_info = raw.get("GpuInfo")
    if isinstance(gpu_info, Mapping):
        gpus = gpu_info.get("Gpus") or []
        models = []
        for gpu in gpus if isinstance(gpus, list) else []:
            count = gpu.get("Count", 0) if isinstance(gpu, Mapping) else 0
            gpu_count += count if isinstance(count, int) and not isinstance(count, bool) else 0
            model = " ".join(str(gpu.get(k)) for k in ("Manufacturer", "Name")
                             if isinstance(gpu, Mapping) and gpu.get(k))
            if model:
                models.append(model)
        gpu_count = max(gpu_count, 1)
        gpu_model = ", ".join(dict.fromkeys(models)) or "unknown GPU"
        total_mib = gpu_info.get("TotalGpuMemoryInMiB")
        if isinstance(total_mib, (int, float)) and not isinstance(total_mib, bool) and (
                total_mib > 0):
            gpu_memory_gib = total_mib / 1024
    return InstanceSpec(
        name=name,
        family=quota_family(name),
        vcpus=vcpus,
        memory_gib=memory_mib / 1024,
        network_gbps=network.gbps,
        network_text=network_text,
        network_mapped=network.mapped,
        gpu_model=gpu_model,
        gpu_count=gpu_count,
        gpu_memory_gib=gpu_memory_gib,
    )


def describe_instance_types(
    ec2: Any, names_or_patterns: Sequence[str], *, page_size: int = 100
) -> list[dict[str, Any]]:
    """Every ``DescribeInstanceTypes`` item whose type matches a name or glob of
    ``names_or_patterns`` (filter ``instance-type``; all pages). A type the region does not
    offer is simply absent. Raises botocore's exceptions (see :class:`Caller`)."""
    items: dict[str, dict[str, Any]] = {}
    paginator = ec2.get_paginator("describe_instance_types")
    for chunk in chunks(list(names_or_patterns)):
        pages = paginator.paginate(Filters=[{"Name": "instance-type", "Values": chunk}],
                                   PaginationConfig={"PageSize": page_size})
        for page in pages:
            found = page.get("InstanceTypes")
            if not isinstance(found, list):
                if found is None and "NextToken" not in page:
                    continue  # an empty answer carries no list
                raise MalformedAnswer("DescribeInstanceTypes answer without InstanceTypes list")
            for item in found:
                if isinstance(item, Mapping) and isinstance(item.get("InstanceType"), str):
                    items[item["InstanceType"]] = dict(item)
                else:
                    raise MalformedAnswer("an InstanceTypes item without InstanceType")
    wanted = list(names_or_patterns)
    return [items[n] for n in sorted(items)
            if any(fnmatch.fnmatchcase(n, p) for p in wanted)]

