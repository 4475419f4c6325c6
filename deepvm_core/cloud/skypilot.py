"""Catalogs from SkyPilot's public AWS catalog (``catalogs/v7/aws/vms.csv``, also v8).

SkyPilot (``skypilot-org/skypilot-catalog``) refreshes one CSV per cloud from the provider's
APIs. Its AWS file has a row per instance type and availability zone:
``InstanceType, AcceleratorName, AcceleratorCount, vCPUs, MemoryGiB, GpuInfo, Price, SpotPrice,
Region, AvailabilityZone`` (USD per hour, Linux; zones as zone IDs such as ``use1-az1``). The
columns are read by name, so a file that adds columns (schema v8) reads the same; the ones
listed in :data:`REQUIRED_COLUMNS` must be there.

One catalog per region (:func:`build_catalog`), every choice returned as a note:

* **Prices.** ``on_demand_usd_per_hour``: the type's ``Price`` (the lowest when zones
  disagree); ``spot_by_zone_usd_per_hour``: each zone's ``SpotPrice``; ``spot_usd_per_hour``:
  their aggregate as in ``deepvm fetch`` (cheapest zone, or the median). A zone without a spot
  price is skipped; a type without any spot price or without an on-demand price is left out.
  When a zone has two rows (p4de.24xlarge: ``A100`` with a spot price and ``A100-80GB``
  without), the row with a spot price is used.
* **Kind.** A row with an accelerator is a GPU type when its accelerator is a training chip of
  ``data/accelerators.csv`` (found by name, else by the instance family: trn2 has no name);
  inference chips, graphics GPUs and FPGAs are left out with the table's reason. A row without
  an accelerator is a CPU type (a memory-node candidate).
* **eFLOPS and scaling** (:mod:`deepvm_core.hardware.unmeasured`, the rule ``deepvm fetch``
  follows too): the base catalog's measured (or edited) value when it has the type, else
  the estimate :func:`deepvm_core.hardware.eflops_estimate.vm_eflops` (``estimated: ...``) and
  the step-model prior of :mod:`deepvm_core.hardware.scaling_prior` (``scaling_source``
  ``prior: ...``); a training chip without an estimate (Trainium) has ``null`` ("needs
  eFLOPS").
* **Network, quotas, saturation.** Network bandwidth from the base catalog, else the bundled
  table ``data/instance-network.csv`` (EC2 DescribeInstanceTypes data); a type in neither is
  left out. Quotas and the saturation table are the base catalog's.
* **GPUs** (catalog schema version 3): ``accelerator`` is the chip's name in
  ``data/accelerators.csv`` (found as for the kind), ``gpu_count`` the ``AcceleratorCount``
  (``GpuInfo``'s count when it has none) and ``gpu_memory_gb`` the memory of one GPU from
  ``GpuInfo`` (MiB, read as the datasheet's GB:
  :func:`deepvm_core.cloud.aws.instance_types.gpu_memory_gb`), else the table's (Trainium has
  no ``GpuInfo``). ``GpuInfo`` is a Python literal (single quotes), read with
  :func:`ast.literal_eval` up to :data:`MAX_GPU_INFO_CHARS` characters; one that cannot be read
  is named in a note and the table's figures are used.
* **Interruption buckets** from a Spot Instance Advisor file when given.
* **Checks.** The built catalog passes the catalog's validation (``catalog validate``'s
  errors: a bad file is refused, naming the field and value; ``AcceleratorCount`` and
  ``vCPUs`` must be whole numbers, at most
  :data:`~deepvm_core.catalog.rules.MAX_GPUS_PER_VM` GPUs), and a type with a value that looks
  like a typo (:func:`deepvm_core.hardware.typos.typo_warnings`: a spot price above on-demand
  or below AWS's 90 % floor, ...) is left out, each named in a note with its field and value.

**Why one module (over 400 lines).** One file format read into one catalog: the column
checks, the price choices and the notes each depend on the same rows, in the order above.
"""

from __future__ import annotations

import ast
import csv
import io
import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from deepvm_core.bundled import bundled_network_gbps
from deepvm_core.catalog.catalog import Catalog
from deepvm_core.catalog.rules import MAX_GPUS_PER_VM
from deepvm_core.catalog.schema import SCHEMA_VERSION, quota_rows, saturation_rows
from deepvm_core.catalog.types import DEFAULT_SATURATION, GpuType
from deepvm_core.catalog.validation import parse_catalog
from deepvm_core.cloud.aws.client import MalformedAnswer
from deepvm_core.cloud.aws.instance_types import (
    GpuInfo,
    gpu_row_fields,
    quota_family,
    read_gpu_info,
)
from deepvm_core.errors import DeepVMError
from deepvm_core.hardware.accelerators import (
    Accelerator,
    accelerator_for_family,
    bundled_accelerators,
)
from deepvm_core.hardware.scaling_prior import DEFAULT_STEP_MODEL, StepModel
from deepvm_core.hardware.typos import row_typo_warnings, typo_warnings
from deepvm_core.hardware.unmeasured import gpu_throughput_fields

#: The columns an importer needs (read by name).
REQUIRED_COLUMNS: tuple[str, ...] = (
    "InstanceType", "AcceleratorName", "AcceleratorCount", "vCPUs", "MemoryGiB", "Price",
    "SpotPrice", "Region", "AvailabilityZone")
#: An AWS instance type name (``g4dn.xlarge``, ``p5en.48xlarge``, ``p6-b200.48xlarge``).
_AWS_TYPE = re.compile(r"^[a-z][a-z0-9-]*\.[a-z0-9-]+$")
#: An AWS region name (``us-east-1``, ``ap-southeast-3``).
_AWS_REGION = re.compile(r"^[a-z]{2}(-gov)?-[a-z]+-\d$")
#: The longest ``GpuInfo`` cell read (SkyPilot's are under 200 characters).
MAX_GPU_INFO_CHARS = 4096
SpotAggregate = str


class SkyPilotError(DeepVMError, ValueError):
    """A SkyPilot file that cannot be imported (one line, naming the file and the field)."""


@dataclass(frozen=True)
class VmRow:
    """One row of ``vms.csv``: one instance type in one availability zone.

    Attributes:
        instance: instance type; accelerator: SkyPilot's accelerator name (may be empty);
        count: accelerators per VM (0 without); vcpus; memory_gib: RAM, GiB;
        price: on-demand USD/hour or ``None``; spot: spot USD/hour or ``None``;
        region; zone: zone ID; line: line number in the file; gpu_info: the ``GpuInfo`` cell
        as written (``""`` without; read by :func:`parse_gpu_info`).
    """

    instance: str
    accelerator: str
    count: int
    vcpus: int
    memory_gib: float
    price: float | None
    spot: float | None
    region: str
    zone: str
    line: int
    gpu_info: str = ""


def parse_gpu_info(text: str) -> GpuInfo | None:
    """The ``GpuInfo`` cell of a row (a Python literal such as ``{'Gpus': [{'Name': 'A100',
    'Count': 8, 'MemoryInfo': {'SizeInMiB': 40960}}], ...}``); ``None`` for an empty cell or
    ``None``.

    Raises:
        ValueError: the cell is longer than :data:`MAX_GPU_INFO_CHARS` or not such a literal.
    """
    text = text.strip()
    if not text or text == "None":
        return None
    if len(text) > MAX_GPU_INFO_CHARS:
        raise ValueError(f"longer than {MAX_GPU_INFO_CHARS} characters")
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise ValueError("not a literal object") from None
    if not isinstance(value, Mapping):
        raise ValueError("not an object")
    return read_gpu_info(value)


def _float(raw: str, field: str, line: int, source: str, *, optional: bool) -> float | None:
    text = raw.strip()
    if not text:
        if optional:
            return None
        raise SkyPilotError(f"{source} line {line}: {field} is empty")
    try:
        value = float(text)
    except ValueError:
        raise SkyPilotError(f"{source} line {line}: {field} {text!r} is not a number") from None
    if not value > 0 or value == float("inf"):
        if optional and value == 0:
            return None
        raise SkyPilotError(f"{source} line {line}: {field} {text!r} must be a finite number "
                            "greater than 0")
    return value


def _whole(raw: str, field: str, line: int, source: str, *, optional: bool,
           most: int | None = None, what: str = "") -> int | None:
    """:func:`_float`, which must also be a whole number (at most ``most``)."""
    value = _float(raw, field, line, source, optional=optional)
    if value is None:
        return None
    if value != int(value) or (most is not None and value > most):
        span = f"{what} from 1 to {most}" if most is not None else what
        raise SkyPilotError(f"{source} line {line}: {field} {raw.strip()!r} must be a whole "
                            f"number{' of ' + span if span else ''}")
    return int(value)


def parse_vms_csv(text: str, source: str = "vms.csv") -> tuple[VmRow, ...]:
    """The rows of a SkyPilot AWS ``vms.csv``.

    Raises:
        SkyPilotError: missing columns, a bad number, no rows, or a file of another cloud
            (instance types or regions that are not AWS names).
    """
    reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff")))
    missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or ())]
    if missing:
        raise SkyPilotError(f"{source}: not a SkyPilot vms.csv: missing column(s) "
                            f"{', '.join(missing)} (needs {', '.join(REQUIRED_COLUMNS)})")
    rows = []
    for line, raw in enumerate(reader, start=2):
        name = (raw["InstanceType"] or "").strip()
        region = (raw["Region"] or "").strip()
        if not _AWS_TYPE.match(name) or not _AWS_REGION.match(region):
            raise SkyPilotError(
                f"{source} line {line}: InstanceType {name!r} in Region {region!r} is not an "
                "AWS instance type and region; only SkyPilot's AWS catalog "
                "(catalogs/v7/aws/vms.csv) can be imported (GCP and Azure rows do not map to "
                "AWS quotas, bandwidths and Spot Advisor buckets)")
        count = _whole(raw["AcceleratorCount"] or "", "AcceleratorCount", line, source,
                       optional=True, most=MAX_GPUS_PER_VM, what="GPUs")
        vcpus = _whole(raw["vCPUs"] or "", "vCPUs", line, source, optional=False)
        memory = _float(raw["MemoryGiB"] or "", "MemoryGiB", line, source, optional=False)
        assert vcpus is not None
        assert memory is not None
        rows.append(VmRow(
            instance=name, accelerator=(raw["AcceleratorName"] or "").strip(),
            count=count or 0, vcpus=vcpus, memory_gib=memory,
            price=_float(raw["Price"] or "", "Price", line, source, optional=True),
            spot=_float(raw["SpotPrice"] or "", "SpotPrice", line, source, optional=True),
            region=region, zone=(raw["AvailabilityZone"] or "").strip(), line=line,
            gpu_info=raw.get("GpuInfo") or ""))
    if not rows:
        raise SkyPilotError(f"{source}: no rows")
    return tuple(rows)


def accelerator_of(row: VmRow) -> Accelerator | None:
    """The accelerator model of a row: by SkyPilot's name, else by the instance family."""
    table = bundled_accelerators()
    if row.accelerator in table:
        return table[row.accelerator]
    return accelerator_for_family(row.instance.split(".", 1)[0])


def _aggregate(prices: Sequence[float], how: SpotAggregate) -> float:
    if how == "min":
        return min(prices)
    if how == "median":
        return float(statistics.median(prices))
    raise SkyPilotError(f"spot aggregate {how!r} must be min or median")


@dataclass(frozen=True)
class _Type:
    """The rows of one instance type in one region, merged."""

    first: VmRow
    on_demand: tuple[float, ...]
    spot_by_zone: Mapping[str, float]
    duplicate_zones: tuple[str, ...]


def _merge(rows: Sequence[VmRow]) -> dict[str, _Type]:
    by_type: dict[str, list[VmRow]] = {}
    for r in rows:
        by_type.setdefault(r.instance, []).append(r)
    out = {}
    for name, group in by_type.items():
        zones: dict[str, float] = {}
        seen: set[str] = set()
        dup: list[str] = []
        for r in group:
            if r.zone in seen:
                dup.append(r.zone)
            seen.add(r.zone)
            if r.spot is not None and r.zone:
                zones[r.zone] = min(r.spot, zones.get(r.zone, r.spot))
        with_gpu = [r for r in group if r.count > 0 and r.spot is not None] or group
        out[name] = _Type(with_gpu[0], tuple(sorted({r.price for r in group if r.price})),
                          dict(sorted(zones.items())), tuple(sorted(set(dup))))
    return out


def catalog_name(region: str, date: str) -> str:
    """``aws-<region>-<date>``: the name (and file stem) of an imported catalog."""
    return f"aws-{region}-{date}"


def _gpu_fields(t: _Type, acc: Accelerator, base_row: GpuType | None, network: float,
                step: StepModel, notes: dict[str, list[str]]) -> dict[str, Any]:
    row, missing = gpu_throughput_fields(acc, t.first.count, base_row, network,
                                         t.first.instance.split(".")[0], step)
    if missing is not None:
        notes.setdefault(f"needs eFLOPS, {missing}", []).append(t.first.instance)
    return row


def _gpus(t: _Type, acc: Accelerator, notes: dict[str, list[str]]) -> dict[str, Any]:
    """The row's ``accelerator``, ``gpu_count`` and ``gpu_memory_gb`` (module docstring)."""
    try:
        info = parse_gpu_info(t.first.gpu_info)
    except ValueError as exc:
        info = None
        notes.setdefault("GpuInfo not read, data/accelerators.csv used", []).append(
            f"{t.first.instance} (line {t.first.line}: {exc})")
    fields, said = gpu_row_fields(acc, t.first.count or None, info)
    for note in said:
        notes.setdefault(note, []).append(t.first.instance)
    return fields


def build_catalog_dict(rows: Sequence[VmRow], region: str, *, date: str, source: str,
                       base: Catalog | None, spot_aggregate: SpotAggregate = "min",
                       buckets: Mapping[str, int] | None = None,
                       step: StepModel = DEFAULT_STEP_MODEL
                       ) -> tuple[dict[str, Any], tuple[str, ...]]:
    """Our catalog format (a dict) for ``region`` and the notes (module docstring).

    Raises:
        SkyPilotError: the file has no row for ``region`` (the regions it has are named).
    """
    mine = [r for r in rows if r.region == region]
    if not mine:
        regions = sorted({r.region for r in rows})
        raise SkyPilotError(f"region {region!r}: no rows in {source} (it has "
                            f"{', '.join(regions)})")
    base_types = {t.name: t for t in (*base.gpu_types, *base.cpu_types)} if base else {}
    network_table = bundled_network_gbps()
    notes: dict[str, list[str]] = {}
    for key in ("left out, no on-demand price", "left out, no spot price in any zone",
                "left out, no network bandwidth (base catalog or data/instance-network.csv)",
                "two rows for one zone (the row with a spot price is used)",
                "several on-demand prices (the lowest is used)",
                "no Spot Instance Advisor interruption bucket"):
        notes[key] = []
    notes_left: dict[str, list[str]] = {}
    gpu_rows: list[dict[str, Any]] = []
    cpu_rows: list[dict[str, Any]] = []
    for name, t in sorted(_merge(mine).items()):
        acc = accelerator_of(t.first) if t.first.count > 0 or t.first.accelerator else None
        if acc is not None and not acc.trains:
            notes_left.setdefault(f"left out, {acc.note}", []).append(name)
            continue
        if (t.first.count > 0 or t.first.accelerator) and acc is None:
            notes_left.setdefault("left out, accelerator not in data/accelerators.csv",
                                  []).append(f"{name} ({t.first.accelerator or 'no name'})")
            continue
        base_row = base_types.get(name)
        network = base_row.network_gbps if base_row else network_table.get(name)
        if not t.on_demand:
            notes["left out, no on-demand price"].append(name)
            continue
        if not t.spot_by_zone:
            notes["left out, no spot price in any zone"].append(name)
            continue
        if network is None:
            notes["left out, no network bandwidth (base catalog or "
                  "data/instance-network.csv)"].append(name)
            continue
        if t.duplicate_zones:
            notes["two rows for one zone (the row with a spot price is used)"].append(
                f"{name} ({', '.join(t.duplicate_zones)})")
        if len(t.on_demand) > 1:
            notes["several on-demand prices (the lowest is used)"].append(name)
        try:
            family = base_row.family if base_row else quota_family(name)
        except MalformedAnswer as exc:
            raise SkyPilotError(f"{source}: {exc}") from None
        row: dict[str, Any] = {
            "name": name, "family": family,
            "on_demand_usd_per_hour": t.on_demand[0],
            "spot_usd_per_hour": _aggregate(list(t.spot_by_zone.values()), spot_aggregate),
            "vcpus": t.first.vcpus, "memory_gib": t.first.memory_gib,
            "network_gbps": network, "spot_by_zone_usd_per_hour": dict(t.spot_by_zone)}
        if acc is None:
            cpu_rows.append(row)
            continue
        base_gpu = base_row if isinstance(base_row, GpuType) else None
        row.update(_gpu_fields(t, acc, base_gpu, network, step, notes_left))
        row.update(_gpus(t, acc, notes_left))
        if buckets is not None:
            row["interruption_bucket"] = buckets.get(name)
            if row["interruption_bucket"] is None:
                notes["no Spot Instance Advisor interruption bucket"].append(name)
        gpu_rows.append(row)
    out_notes = [f"{k}: {', '.join(v)}" for k, v in {**notes, **notes_left}.items() if v]
    if base is not None:
        families = sorted({r["family"] for r in (*gpu_rows, *cpu_rows)})
        unlimited = [f for f in families if base.quota(f) is None]
        out_notes.append(f"quotas are the base catalog's ({base.name}), not your account's"
                         + (f"; no quota (unlimited) for family {', '.join(unlimited)}"
                            if unlimited else ""))
    if buckets is None:
        out_notes.append("no Spot Instance Advisor data for this region: every interruption "
                         "bucket is unknown (the job model applies its default)")
    estimated = sum(1 for r in gpu_rows if "eflops_source" in r)
    how = "cheapest zone" if spot_aggregate == "min" else "median over zones"
    text = (f"{source}; region {region}. Prices: SkyPilot's Price (on-demand) and SpotPrice per "
            f"zone (spot_usd_per_hour = {how}). "
            f"eFLOPS: {len(gpu_rows) - estimated} GPU type(s) measured (base catalog), "
            f"{estimated} estimated from data/accelerators.csv "
            "(deepvm_core.hardware.eflops_estimate); scaling (a, b, c) measured where the base "
            "catalog has them, else the step-model prior (deepvm_core.hardware.scaling_prior). "
            "Network: base catalog, else data/instance-network.csv. "
            + (f"Quotas and saturation table: base catalog {base.name} (not your account's). "
               if base else "No quotas. ")
            + ("Interruption buckets: the bundled Spot Instance Advisor excerpt or the file "
               "given." if buckets is not None else ""))
    data: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION, "name": catalog_name(region, date),
        "provider": "aws", "region": region, "prices_date": date, "source": text.strip(),
        "gpu_types": gpu_rows, "cpu_types": cpu_rows,
        "quotas": quota_rows(base.quotas if base else ()),
        "network_saturation": saturation_rows(base.saturation if base else DEFAULT_SATURATION),
    }
    return data, tuple(out_notes)


def build_catalog(rows: Sequence[VmRow], region: str, **kwargs: Any
                  ) -> tuple[Catalog, tuple[str, ...]]:
    """:func:`build_catalog_dict`, validated.

    Raises:
        SkyPilotError: no rows for the region, or the built catalog is invalid.
    """
    data, notes = build_catalog_dict(rows, region, **kwargs)
    source = f"imported catalog {data['name']}"
    try:
        catalog = parse_catalog(data, source=source)
        said: list[str] = []
        # a type's own typos first: a price 50x too high also puts its peers out of range
        for check in (row_typo_warnings, typo_warnings):
            typos = check(catalog)
            if typos:
                out = {p.where for p in typos}
                data = {**data, **{key: [r for r in data[key] if r["name"] not in out]
                                   for key in ("gpu_types", "cpu_types")}}
                said += [f"left out, implausible (a typo in the file?): {p}" for p in typos]
                catalog = parse_catalog(data, source=source)
        return catalog, notes + tuple(said)
    except DeepVMError as exc:
        raise SkyPilotError(f"the catalog built for region {region} is invalid: {exc}") from None
