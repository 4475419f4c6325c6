"""Pure parsers of AWS answers: no I/O, no boto3, easy to test.

Each parser takes what an AWS operation (or the Spot Instance Advisor) returned as plain
Python data and raises :class:`MalformedAnswer` when it does not have the expected shape.

**Which AWS data.**

* Specs: EC2 ``DescribeInstanceTypes`` (filter ``instance-type``, so globs such as ``g5.*``
  work and a type a region does not offer is reported instead of failing the call). vCPUs are
  ``VCpuInfo.DefaultVCpus``; memory is ``MemoryInfo.SizeInMiB / 1024`` GiB; a type with
  ``GpuInfo`` is a GPU type, any other a CPU type (memory node).
* Network: ``NetworkInfo.NetworkPerformance``. ``"25 Gigabit"`` and ``"Up to 25 Gigabit"``
  are 25 Gbit/s (the burst value, as the bundled catalog and the DeepVM artifact use it);
  ``"4x 100 Gigabit"`` is 400. Qualitative levels are mapped to the numbers of
  :data:`QUALITATIVE_NETWORK_GBPS` (``Moderate`` 0.3 and ``High`` 1.7 are the artifact's
  measured values for c3.xlarge and c4.xlarge) and each mapped value is listed in the notes.
* Spot: EC2 ``DescribeSpotPriceHistory`` (``Linux/UNIX``, ``StartTime`` = now minus a window,
  6 hours by default): the latest price of each availability zone is kept in
  ``spot_by_zone_usd_per_hour``; ``spot_usd_per_hour`` is their minimum (the cheapest zone,
  default) or their median.
* Interruption buckets (``deepvm fetch --spot-advisor``): the AWS Spot Instance Advisor's
  public JSON file, ``spot_advisor`` -> region -> ``Linux`` -> type -> ``{"s": savings %,
  "r": bucket index}``; :func:`parse_spot_advisor` keeps ``r``, an index into
  :data:`~deepvm_core.catalog.types.INTERRUPTION_BUCKET_LABELS`. It is not part of any boto3
  API.
* On-demand: the Price List API ``GetProducts`` (service ``AmazonEC2``; ``TERM_MATCH`` on
  ``instanceType``, ``regionCode``, ``operatingSystem`` = Linux, ``tenancy`` = Shared,
  ``preInstalledSw`` = NA, ``capacitystatus`` = Used), one instance type per request: the USD
  price per hour of ``terms.OnDemand.*.priceDimensions.*.pricePerUnit``. The Pricing client
  lives in a pricing region (``us-east-1`` by default) whatever the catalog's region.

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

import json
import math
import re
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from deepvm_core.catalog.types import INTERRUPTION_BUCKET_LABELS

#: The product description spot prices are read for.
SPOT_PRODUCT_DESCRIPTION = "Linux/UNIX"

SpotAggregate = Literal["min", "median"]
SPOT_AGGREGATES: tuple[SpotAggregate, ...] = ("min", "median")

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

#: The Pricing API attributes an on-demand Linux price is selected by.
PRICING_FILTERS: Mapping[str, str] = {
    "operatingSystem": "Linux",
    "tenancy": "Shared",
    "preInstalledSw": "NA",
    "capacitystatus": "Used",
}

#: The operating system whose Spot Instance Advisor buckets are read.
SPOT_ADVISOR_OS = "Linux"

_GIGABIT_RE = re.compile(
    r"^\s*(?:up\s+to\s+)?(?:(\d+)\s*x\s*)?(\d+(?:\.\d+)?)\s*gigabit\s*$", re.IGNORECASE)


class MalformedAnswer(ValueError):
    """An AWS answer does not have the shape this module expects (raised by the parsers)."""


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


def _get(mapping: object, *keys: str) -> Any:
    value = mapping
    for key in keys:
        if not isinstance(value, Mapping) or key not in value:
            return None
        value = value[key]
    return value


def parse_instance_type(raw: Mapping[str, Any]) -> InstanceSpec:
    """An :class:`InstanceSpec` from one ``DescribeInstanceTypes`` item.

    Raises:
        MalformedAnswer: a required field (type, vCPUs, memory, network) is missing or wrong.
    """
    name = raw.get("InstanceType") if isinstance(raw, Mapping) else None
    if not isinstance(name, str) or not name:
        raise MalformedAnswer("an instance type without InstanceType")
    vcpus = _get(raw, "VCpuInfo", "DefaultVCpus")
    if isinstance(vcpus, bool) or not isinstance(vcpus, int) or vcpus < 1:
        raise MalformedAnswer(f"{name}: VCpuInfo.DefaultVCpus {vcpus!r} is not a vCPU count")
    memory_mib = _get(raw, "MemoryInfo", "SizeInMiB")
    if isinstance(memory_mib, bool) or not isinstance(memory_mib, (int, float)) or (
            memory_mib <= 0):
        raise MalformedAnswer(f"{name}: MemoryInfo.SizeInMiB {memory_mib!r} is not a size")
    network_text = _get(raw, "NetworkInfo", "NetworkPerformance")
    try:
        network = parse_network_gbps(network_text)
    except MalformedAnswer as exc:
        # A level this module does not know yet: the network cards' peak bandwidth, if given.
        cards = _get(raw, "NetworkInfo", "NetworkCards")
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


def _timestamp(value: object) -> datetime:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise MalformedAnswer(f"spot price timestamp {value!r} is not a time") from None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    raise MalformedAnswer(f"spot price timestamp {value!r} is not a time")


def latest_spot_by_zone(
    history: Iterable[Mapping[str, Any]],
) -> dict[str, dict[str, float]]:
    """``{instance type: {availability zone: USD/hour}}``: the latest price of each zone.

    Items are ``DescribeSpotPriceHistory`` entries (``InstanceType``, ``AvailabilityZone``,
    ``SpotPrice`` as text, ``Timestamp``). Of two entries with the same timestamp the later one
    in the answer wins. Non-positive prices are ignored.

    Raises:
        MalformedAnswer: an entry without type, zone, a numeric price or a timestamp.
    """
    latest: dict[tuple[str, str], tuple[datetime, float]] = {}
    for item in history:
        name = item.get("InstanceType") if isinstance(item, Mapping) else None
        zone = item.get("AvailabilityZone") if isinstance(item, Mapping) else None
        if not isinstance(name, str) or not name or not isinstance(zone, str) or not zone:
            raise MalformedAnswer(f"a spot price entry without type or zone: {item!r:.200}")
        try:
            price = float(item.get("SpotPrice"))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise MalformedAnswer(
                f"{name} in {zone}: spot price {item.get('SpotPrice')!r} is not a number"
            ) from None
        if not math.isfinite(price):
            raise MalformedAnswer(f"{name} in {zone}: spot price {price!r} is not finite")
        when = _timestamp(item.get("Timestamp"))
        if price <= 0:
            continue
        key = (name, zone)
        if key not in latest or when >= latest[key][0]:
            latest[key] = (when, price)
    out: dict[str, dict[str, float]] = {}
    for (name, zone), (_, price) in sorted(latest.items()):
        out.setdefault(name, {})[zone] = price
    return out


def aggregate_spot_usd_per_hour(
    by_zone_usd_per_hour: Mapping[str, float], how: SpotAggregate = "min"
) -> float:
    """One spot price from per-zone prices: the cheapest zone (``min``) or the ``median``.

    Raises:
        ValueError: no prices, or an unknown aggregate.
    """
    prices = list(by_zone_usd_per_hour.values())
    if not prices:
        raise ValueError("no spot prices to aggregate")
    if how == "min":
        return min(prices)
    if how == "median":
        return float(statistics.median(prices))
    raise ValueError(f"spot aggregate {how!r} must be one of {', '.join(SPOT_AGGREGATES)}")


def _product_matches(attributes: Mapping[str, Any], instance_type: str, region: str | None) -> bool:
    if attributes.get("instanceType") not in (None, instance_type):
        return False
    if region is not None and attributes.get("regionCode") not in (None, region):
        return False
    for key, wanted in PRICING_FILTERS.items():
        if attributes.get(key) not in (None, wanted):
            return False
    # Capacity Blocks and other market options carry their own prices.
    return attributes.get("marketoption") in (None, "OnDemand")


def parse_on_demand_usd_per_hour(
    price_list: Iterable[str | Mapping[str, Any]],
    instance_type: str,
    region: str | None = None,
) -> tuple[float | None, tuple[str, ...]]:
    """The on-demand USD/hour of ``instance_type`` from ``GetProducts`` price-list items.

    Each item is a JSON string (as the API returns it) or its parsed object. Products whose
    attributes do not match (another type, region, OS, tenancy, software, capacity status or
    market option) are skipped; only ``terms.OnDemand`` hourly (``Hrs``) dimensions with a
    positive ``pricePerUnit.USD`` count. Returns ``(price or None, notes)``: with several
    distinct prices, the lowest, and a note saying so.

    Raises:
        MalformedAnswer: an item is not JSON, or a price is not a number.
    """
    prices: set[float] = set()
    for item in price_list:
        if isinstance(item, (str, bytes)):
            try:
                product = json.loads(item)
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                reason = exc.msg if isinstance(exc, json.JSONDecodeError) else exc.reason
                raise MalformedAnswer(f"a price-list item is not JSON ({reason})") from None
        else:
            product = item
        if not isinstance(product, Mapping):
            raise MalformedAnswer("a price-list item is not a JSON object")
        attributes = _get(product, "product", "attributes")
        if not isinstance(attributes, Mapping):
            raise MalformedAnswer("a price-list item has no product.attributes")
        if not _product_matches(attributes, instance_type, region):
            continue
        offers = _get(product, "terms", "OnDemand") or {}
        if not isinstance(offers, Mapping):
            raise MalformedAnswer("terms.OnDemand of a price-list item is not an object")
        for offer in offers.values():
            dimensions = _get(offer, "priceDimensions") or {}
            if not isinstance(dimensions, Mapping):
                raise MalformedAnswer("priceDimensions of a price-list item is not an object")
            for dim in dimensions.values():
                unit = str(_get(dim, "unit") or "").lower()
                if unit not in ("hrs", "hours", "hr", "hour"):
                    continue
                raw = _get(dim, "pricePerUnit", "USD")
                try:
                    usd = float(raw)
                except (TypeError, ValueError):
                    raise MalformedAnswer(
                        f"{instance_type}: pricePerUnit.USD {raw!r} is not a number") from None
                if not math.isfinite(usd):
                    raise MalformedAnswer(f"{instance_type}: pricePerUnit.USD {raw!r} "
                                          "is not finite")
                if usd > 0:
                    prices.add(usd)
    if not prices:
        return None, ()
    notes: tuple[str, ...] = ()
    if len(prices) > 1:
        listed = ", ".join(f"{p:g}" for p in sorted(prices))
        notes = (f"{instance_type}: several on-demand Linux prices ({listed} USD/h); "
                 "the lowest is used",)
    return min(prices), notes


def parse_spot_advisor(data: object) -> dict[str, dict[str, int]]:
    """``{region: {instance type: interruption bucket}}`` from the Spot Instance Advisor's JSON
    (:data:`SPOT_ADVISOR_OS` only; a region without it maps to ``{}``).

    The bucket is the advisor's ``r``, an index 0..4 whose meaning the file's ``ranges`` list
    states; when that list is present its labels must be :data:`INTERRUPTION_BUCKET_LABELS`
    (so that an index still means what the catalog says it means).

    Raises:
        MalformedAnswer: not the advisor's shape, a bucket that is not a whole number 0..4, or
            ranges that changed meaning.
    """
    if not isinstance(data, Mapping) or not isinstance(data.get("spot_advisor"), Mapping):
        raise MalformedAnswer("the Spot Instance Advisor data has no 'spot_advisor' object")
    ranges = data.get("ranges")
    if ranges is not None:
        labels = {r.get("index"): r.get("label") for r in ranges if isinstance(r, Mapping)} if (
            isinstance(ranges, list)) else {}
        expected = dict(enumerate(INTERRUPTION_BUCKET_LABELS))
        if labels != expected:
            raise MalformedAnswer(f"the Spot Instance Advisor's interruption ranges {labels!r} "
                                  f"are not the expected {expected!r}")
    out: dict[str, dict[str, int]] = {}
    for region, systems in data["spot_advisor"].items():
        if not isinstance(systems, Mapping):
            raise MalformedAnswer(f"Spot Instance Advisor region {region!r} is not an object")
        types = systems.get(SPOT_ADVISOR_OS, {})
        if not isinstance(types, Mapping):
            raise MalformedAnswer(f"Spot Instance Advisor {region}/{SPOT_ADVISOR_OS} is not an "
                                  "object")
        buckets: dict[str, int] = {}
        for name, entry in types.items():
            bucket = entry.get("r") if isinstance(entry, Mapping) else None
            if isinstance(bucket, bool) or not isinstance(bucket, int) or not (
                    0 <= bucket < len(INTERRUPTION_BUCKET_LABELS)):
                raise MalformedAnswer(f"Spot Instance Advisor {region}/{SPOT_ADVISOR_OS}/{name}: "
                                      f"bucket {bucket!r} is not a whole number from 0 to 4")
            buckets[str(name)] = bucket
        out[str(region)] = dict(sorted(buckets.items()))
    return out
