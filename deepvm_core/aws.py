"""Live AWS catalogs: instance specs and prices fetched from EC2 and the AWS Price List API.

No Streamlit here, and nothing connects at import time. The module has four layers:

1. **Raw calls** (:func:`describe_instance_types`, :func:`describe_spot_price_history`,
   :func:`get_products`): one boto3 operation each, every page followed, plain dicts out. Every
   botocore failure becomes a :class:`FetchError` that names the operation and the region.
2. **Pure parsing** (:func:`parse_network_gbps`, :func:`quota_family`,
   :func:`parse_instance_type`, :func:`latest_spot_by_zone`, :func:`aggregate_spot_usd_per_hour`,
   :func:`parse_on_demand_usd_per_hour`): no I/O, easy to test.
3. **Assembly** (:func:`assemble_catalog_dict`): our catalog format (``schema_version`` 1),
   eFLOPS, scaling fits, quotas and the saturation table carried over from a base catalog, then
   validated by :func:`~deepvm_core.catalog.parse_catalog`.
4. **Atomic write** (:func:`write_fetched_catalogs`): only after every region succeeded; a
   failed or partial fetch writes nothing.

:func:`fetch_catalogs` runs the four for one or more regions; :func:`compare_regions` ranks the
best recommendation of each region for one scenario.

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
* On-demand: the Price List API ``GetProducts`` (service ``AmazonEC2``; ``TERM_MATCH`` on
  ``instanceType``, ``regionCode``, ``operatingSystem`` = Linux, ``tenancy`` = Shared,
  ``preInstalledSw`` = NA, ``capacitystatus`` = Used), one instance type per request: the USD
  price per hour of ``terms.OnDemand.*.priceDimensions.*.pricePerUnit``. The Pricing client
  lives in a pricing region (``us-east-1`` by default) whatever the catalog's region.

**Quota family.** A type listed in the base catalog keeps the base catalog's family (so its
quotas still apply). Any other type gets the AWS on-demand quota group of its family prefix
where AWS has a group of its own (``inf`` -> ``Inf``, ``trn`` -> ``Trn``, ``dl`` -> ``DL``,
``hpc`` -> ``HPC``, ``mac`` -> ``Mac``, ``vt`` and ``gr`` -> ``G``, ``im``/``is`` -> ``I``;
see :data:`FAMILY_PREFIXES`), else the first letter upper-cased (``g4dn.xlarge`` -> ``G``,
``p4d.24xlarge`` -> ``P``, ``c5.xlarge`` -> ``C``), which is the bundled catalog's convention.
AWS puts A, C, D, H, I, M, R, T and Z in one "Standard" on-demand quota; the catalog keeps a
letter per family, as the bundled catalog does, so edit the quotas to match an account.

**boto3.** The standard credential chain (environment, shared files, ``profile``, SSO, ...),
explicit connect/read timeouts and adaptive retries (``total_max_attempts`` attempts in all),
and no ``endpoint_url``: boto3's own endpoint settings (``AWS_ENDPOINT_URL_EC2``,
``AWS_ENDPOINT_URL_PRICING``, the config file) keep working. Credentials never appear in a
catalog, a note, a log line or an error message: messages are passed through
:func:`sanitize_message`.
"""

from __future__ import annotations

import fnmatch
import json
import logging
import math
import os
import re
import statistics
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal, NoReturn

from deepvm_core.catalog import (
    DATA_DIR,
    DEFAULT_SATURATION,
    SCHEMA_VERSION,
    Catalog,
    GpuType,
    catalog_to_dict,
    load_catalog,
    parse_catalog,
    write_json_atomic,
)
from deepvm_core.errors import CatalogError, DeepVMError, InputError
from deepvm_core.model import Configuration, Scenario
from deepvm_core.policies import Recommendation, recommend
from deepvm_core.ranking import rank_configurations
from deepvm_core.store import fetched_dir

logger = logging.getLogger(__name__)

# ----------------------------------------------------------------------------- constants

#: The base catalog used when none is given: eFLOPS, scaling, quotas and types come from it.
DEFAULT_BASE_CATALOG = "aws-us-east-1-2023-10"
#: Region of the Pricing API client (the API is served from a few regions only).
DEFAULT_PRICING_REGION = "us-east-1"
#: Regions that serve the Price List API.
PRICING_REGIONS = ("us-east-1", "eu-central-1", "ap-south-1")
#: How far back spot price history is read, hours.
DEFAULT_SPOT_WINDOW_HOURS = 6.0
#: Attempts per request in all (the first one included), adaptive retry mode.
DEFAULT_MAX_ATTEMPTS = 5
DEFAULT_CONNECT_TIMEOUT_S = 5.0
DEFAULT_READ_TIMEOUT_S = 30.0
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

_REGION_RE = re.compile(r"^[a-z]{2}(-[a-z]+)+-\d{1,2}$")
_TYPE_RE = re.compile(r"^[a-z0-9*?][a-z0-9.*?\-]{0,63}$")
_GIGABIT_RE = re.compile(
    r"^\s*(?:up\s+to\s+)?(?:(\d+)\s*x\s*)?(\d+(?:\.\d+)?)\s*gigabit\s*$", re.IGNORECASE)
_CHUNK = 50  # instance types per DescribeInstanceTypes / DescribeSpotPriceHistory request

ProgressCallback = Callable[[str, int, int], None]


# ----------------------------------------------------------------------------- errors


class FetchError(DeepVMError):
    """A fetch failed; nothing was written.

    Attributes:
        operation: the AWS operation that failed (``DescribeSpotPriceHistory``), or ``None``.
        region: the catalog region it failed for, or ``None``.
        kind: ``credentials``, ``unreachable``, ``timeout``, ``throttled``, ``access_denied``,
            ``server_error``, ``malformed``, ``no_offers``, ``invalid``, ``write`` or ``other``.
    """

    def __init__(self, message: str, *, operation: str | None = None,
                 region: str | None = None, kind: str = "other") -> None:
        super().__init__(message)
        self.operation = operation
        self.region = region
        self.kind = kind


class MalformedAnswer(ValueError):
    """An AWS answer does not have the shape this module expects (raised by the parsers)."""


# ----------------------------------------------------------------------------- sanitizing

_SECRET_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b(?:AKIA|ASIA|AROA|AIDA|ANPA|ABIA|ACCA)[A-Z0-9]{12,}\b"), "[REDACTED]"),
    (re.compile(r"(Credential=)[^\s,\"']+", re.IGNORECASE), r"\1[REDACTED]"),
    (re.compile(r"(Signature=)[0-9a-fA-F]+", re.IGNORECASE), r"\1[REDACTED]"),
    (re.compile(r"((?:X-Amz-)?Security-?Token[=:]\s*)[^\s,\"'&]+", re.IGNORECASE),
     r"\1[REDACTED]"),
    (re.compile(r"((?:aws_)?secret_access_key[\"']?\s*[=:]\s*[\"']?)[^\s,\"'&]+", re.IGNORECASE),
     r"\1[REDACTED]"),
    (re.compile(r"(://)[^/@\s]+@"), r"\1[REDACTED]@"),
)


def sanitize_message(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` without credentials: the given secret values, AWS access key ids, SigV4
    credential scopes and signatures, session tokens and passwords in URLs are redacted."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "[REDACTED]")
    for pattern, replacement in _SECRET_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def _session_secrets(session: Any) -> tuple[str, ...]:
    """The credential values of ``session`` (to redact them), or nothing when unresolvable."""
    try:
        creds = session.get_credentials()
        if creds is None:
            return ()
        frozen = creds.get_frozen_credentials()
    except Exception:  # resolving credentials may fail in any way here; redact what we can
        return ()
    return tuple(s for s in (frozen.access_key, frozen.secret_key, frozen.token) if s)


# ----------------------------------------------------------------------------- results


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


@dataclass(frozen=True)
class RegionFetch:
    """What one region's fetch produced.

    Attributes:
        region: the AWS region (``us-east-1``).
        catalog: the validated catalog.
        path: where it was written, or ``None`` when the fetch did not write.
        instance_specs: the specs of the types in the catalog (GPU model, count, memory too).
        notes: what the user should know: types dropped and why, mapped network values,
            GPU types that need eFLOPS, where quotas come from.
    """

    region: str
    catalog: Catalog
    path: Path | None
    instance_specs: tuple[InstanceSpec, ...]
    notes: tuple[str, ...]


@dataclass(frozen=True)
class FetchResult:
    """The result of :func:`fetch_catalogs`: one :class:`RegionFetch` per region, in order.

    Attributes:
        regions: per region results.
        fetched_at: UTC timestamp of the fetch (ISO 8601, ``Z``).
        base_catalog: name of the base catalog, or ``None``.
        spot_aggregate: ``min`` or ``median``.
    """

    regions: tuple[RegionFetch, ...]
    fetched_at: str
    base_catalog: str | None
    spot_aggregate: SpotAggregate

    @property
    def catalog(self) -> Catalog:
        """The first region's catalog (the only one of a single-region fetch)."""
        return self.regions[0].catalog

    @property
    def path(self) -> Path | None:
        """The first region's file."""
        return self.regions[0].path

    @property
    def paths(self) -> tuple[Path, ...]:
        """Every file written."""
        return tuple(r.path for r in self.regions if r.path is not None)

    @property
    def notes(self) -> tuple[str, ...]:
        """Every region's notes, each prefixed with its region."""
        return tuple(f"{r.region}: {n}" for r in self.regions for n in r.notes)

    def catalogs_by_region(self) -> dict[str, Catalog]:
        """``{region: catalog}``, the input of :func:`compare_regions`."""
        return {r.region: r.catalog for r in self.regions}


# ----------------------------------------------------------------------------- layer 2: parsing


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
        if not peaks or not all(isinstance(p, (int, float)) and p > 0 for p in peaks):
            raise MalformedAnswer(f"{name}: {exc}") from None
        network = NetworkBandwidth(float(sum(peaks)), mapped=True)
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
                raise MalformedAnswer(f"a price-list item is not JSON ({exc.msg})") from None
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
                    usd = float(raw)  # type: ignore[arg-type]
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


# ----------------------------------------------------------------------------- layer 1: raw calls


def _chunks(items: Sequence[str], size: int = _CHUNK) -> Iterator[list[str]]:
    for start in range(0, len(items), size):
        yield list(items[start:start + size])


@dataclass
class _Caller:
    """Runs boto3 calls and turns every failure into a :class:`FetchError`."""

    session: Any
    max_attempts: int
    _secrets: tuple[str, ...] | None = field(default=None, repr=False)

    def secrets(self) -> tuple[str, ...]:
        if self._secrets is None:
            self._secrets = _session_secrets(self.session)
        return self._secrets

    def fail(self, exc: BaseException, operation: str, region: str,
             label: str | None = None) -> NoReturn:
        raise _translate(exc, operation, region, self.max_attempts, self.secrets(),
                         label=label) from None


_THROTTLING = {"Throttling", "ThrottlingException", "ThrottledException", "RequestLimitExceeded",
               "TooManyRequestsException", "RequestThrottled", "RequestThrottledException",
               "SlowDown", "PriorRequestNotComplete", "EC2ThrottledException",
               "BandwidthLimitExceeded", "ProvisionedThroughputExceededException",
               "LimitExceededException"}
_DENIED = {"AccessDenied", "AccessDeniedException", "UnauthorizedOperation", "Blocked",
           "UnauthorizedException", "NotAuthorized", "Forbidden"}
_REJECTED_CREDENTIALS = {"AuthFailure", "InvalidClientTokenId", "UnrecognizedClientException",
                         "SignatureDoesNotMatch", "IncompleteSignature", "ExpiredToken",
                         "ExpiredTokenException", "RequestExpired", "InvalidAccessKeyId",
                         "MissingAuthenticationToken", "InvalidSignatureException"}
_REGION_NOT_ENABLED = {"OptInRequired", "InvalidRegion", "UnsupportedOperation"}
_DETAIL_CHARS = 300  # longest piece of an AWS message quoted in an error

_IAM_ACTIONS = {
    "DescribeInstanceTypes": "ec2:DescribeInstanceTypes",
    "DescribeSpotPriceHistory": "ec2:DescribeSpotPriceHistory",
    "GetProducts": "pricing:GetProducts",
}


def _aws_errors() -> tuple[type[BaseException], ...]:
    """The exceptions a boto3 call or a parser of this module raises for a failed fetch
    (anything else is a bug and propagates)."""
    from botocore.exceptions import BotoCoreError, ClientError
    from botocore.parsers import ResponseParserError

    return (BotoCoreError, ClientError, ResponseParserError, MalformedAnswer)


def _translate(exc: BaseException, operation: str, region: str, max_attempts: int,
               secrets: Sequence[str], *, label: str | None = None) -> FetchError:
    """A :class:`FetchError` (one line, credentials redacted) for a failed boto3 call.

    ``operation`` is the AWS operation name (``GetProducts``); ``label`` how the message names
    it (``Pricing GetProducts (pricing endpoint us-east-1)``), by default ``operation``.
    """
    from botocore import exceptions as bx
    from botocore.parsers import ResponseParserError

    where = f"{label or operation} for region {region}"
    # Redact before shortening, so that no part of a secret survives a cut.
    detail = sanitize_message(" ".join(str(exc).split()), secrets)
    if len(detail) > _DETAIL_CHARS:
        detail = detail[:_DETAIL_CHARS] + "..."
    kind = "other"
    if isinstance(exc, bx.NoCredentialsError):
        kind = "credentials"
        reason = ("no AWS credentials found (looked in the environment, the shared config and "
                  "credentials files, SSO and instance metadata): set AWS_ACCESS_KEY_ID and "
                  "AWS_SECRET_ACCESS_KEY, pass a profile, or run 'aws sso login'")
    elif isinstance(exc, (bx.PartialCredentialsError, bx.ProfileNotFound, bx.SSOError,
                          bx.TokenRetrievalError, bx.CredentialRetrievalError,
                          bx.InvalidConfigError)):
        kind = "credentials"
        reason = f"AWS credentials could not be loaded: {detail}"
    elif isinstance(exc, (bx.ConnectTimeoutError, bx.EndpointConnectionError,
                          bx.ProxyConnectionError, bx.SSLError)):
        kind = "unreachable"
        reason = f"the endpoint could not be reached after {max_attempts} attempt(s): {detail}"
    elif isinstance(exc, bx.ReadTimeoutError):
        kind = "timeout"
        reason = f"no answer in time after {max_attempts} attempt(s): {detail}"
    elif isinstance(exc, bx.ClientError):
        error = exc.response.get("Error", {}) if isinstance(exc.response, Mapping) else {}
        code = str(error.get("Code") or "Unknown")
        message = sanitize_message(" ".join(str(error.get("Message") or "").split()), secrets)
        meta = exc.response.get("ResponseMetadata", {}) if isinstance(exc.response,
                                                                      Mapping) else {}
        status = meta.get("HTTPStatusCode")
        attempts = int(meta.get("RetryAttempts") or 0) + 1
        if len(message) > _DETAIL_CHARS:
            message = message[:_DETAIL_CHARS] + "..."
        said = f" ({code}: {message})" if message else f" ({code})"
        if code in _THROTTLING or status == 429:
            kind = "throttled"
            reason = (f"throttled by AWS after {attempts} attempt(s){said}; try again later "
                      "or with fewer instance types")
        elif code in _REJECTED_CREDENTIALS:
            kind = "credentials"
            reason = (f"AWS rejected the credentials{said}; check them, or refresh them "
                      "('aws sso login' for SSO)")
        elif code in _REGION_NOT_ENABLED:
            kind = "access_denied"
            reason = f"the region is not enabled or not supported for this account{said}"
        elif code in _DENIED or status == 403:
            kind = "access_denied"
            action = _IAM_ACTIONS.get(operation, operation)
            reason = f"access denied{said}; the credentials need the IAM permission {action}"
        elif isinstance(status, int) and status >= 500:
            kind = "server_error"
            reason = f"AWS answered HTTP {status} after {attempts} attempt(s){said}"
        else:
            reason = f"AWS refused the request (HTTP {status}){said}"
    elif isinstance(exc, (ResponseParserError, MalformedAnswer)):
        kind = "malformed"
        reason = f"malformed answer: {detail}"
    elif isinstance(exc, bx.BotoCoreError):
        reason = detail
    else:
        reason = f"{type(exc).__name__}: {detail}"
    message = sanitize_message(f"{where} failed: {reason}. Nothing was written.", secrets)
    return FetchError(message, operation=operation, region=region, kind=kind)


def describe_instance_types(
    ec2: Any, names_or_patterns: Sequence[str], *, page_size: int = 100
) -> list[dict[str, Any]]:
    """Every ``DescribeInstanceTypes`` item whose type matches a name or glob of
    ``names_or_patterns`` (filter ``instance-type``; all pages). A type the region does not
    offer is simply absent. Raises botocore's exceptions (see :class:`_Caller`)."""
    items: dict[str, dict[str, Any]] = {}
    paginator = ec2.get_paginator("describe_instance_types")
    for chunk in _chunks(list(names_or_patterns)):
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


def describe_spot_price_history(
    ec2: Any, instance_types: Sequence[str], start_time: datetime,
    *, product_description: str = SPOT_PRODUCT_DESCRIPTION, page_size: int = 1000,
) -> list[dict[str, Any]]:
    """Every ``DescribeSpotPriceHistory`` entry of ``instance_types`` since ``start_time``
    (all pages). Raises botocore's exceptions."""
    entries: list[dict[str, Any]] = []
    paginator = ec2.get_paginator("describe_spot_price_history")
    for chunk in _chunks(list(instance_types)):
        pages = paginator.paginate(
            InstanceTypes=chunk, ProductDescriptions=[product_description],
            StartTime=start_time, PaginationConfig={"PageSize": page_size})
        for page in pages:
            found = page.get("SpotPriceHistory", [])
            if not isinstance(found, list):
                raise MalformedAnswer("SpotPriceHistory is not a list")
            entries.extend(dict(e) if isinstance(e, Mapping) else e for e in found)
    return entries


def get_products(
    pricing: Any, instance_type: str, region: str, *, page_size: int = 100
) -> list[str]:
    """The ``PriceList`` JSON strings of Linux, shared-tenancy, on-demand ``instance_type`` in
    ``region`` from ``GetProducts`` (all pages). Raises botocore's exceptions, and
    :class:`MalformedAnswer` when a page has no ``PriceList`` list."""
    filters = [{"Type": "TERM_MATCH", "Field": "instanceType", "Value": instance_type},
               {"Type": "TERM_MATCH", "Field": "regionCode", "Value": region}]
    filters += [{"Type": "TERM_MATCH", "Field": k, "Value": v} for k, v in PRICING_FILTERS.items()]
    paginator = pricing.get_paginator("get_products")
    out: list[str] = []
    for page in paginator.paginate(ServiceCode="AmazonEC2", Filters=filters,
                                   FormatVersion="aws_v1",
                                   PaginationConfig={"PageSize": page_size}):
        found = page.get("PriceList")
        if not isinstance(found, list):
            raise MalformedAnswer("GetProducts answer without a PriceList list")
        out.extend(found)
    return out


# ----------------------------------------------------------------------------- layer 3: assembly


def fetched_catalog_name(region: str, fetched_at: datetime) -> str:
    """The name (and file stem) of a fetched catalog: ``aws-us-east-1-20261122T015425Z``."""
    return f"aws-{region}-{fetched_at.astimezone(UTC).strftime('%Y%m%dT%H%M%SZ')}"


def _fmt_gbps(x: float) -> str:
    return f"{x:g} Gbps"


def assemble_catalog_dict(
    *,
    region: str,
    specs: Sequence[InstanceSpec],
    spot_by_type: Mapping[str, Mapping[str, float]],
    on_demand_by_type: Mapping[str, float],
    base: Catalog | None,
    fetched_at: datetime,
    spot_aggregate: SpotAggregate = "min",
    spot_window_hours: float = DEFAULT_SPOT_WINDOW_HOURS,
    pricing_region: str = DEFAULT_PRICING_REGION,
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """Our catalog format (a dict for :func:`~deepvm_core.catalog.parse_catalog`) and notes.

    A type without an on-demand price or without a spot price is left out (noted). A type of
    ``base`` keeps its family, eFLOPS and scaling fit; a GPU type not in ``base`` has eFLOPS
    ``null`` ("needs eFLOPS"). Quotas and the saturation table are ``base``'s.
    """
    base_types = {t.name: t for t in (*base.gpu_types, *base.cpu_types)} if base else {}
    notes: list[str] = []
    gpu_rows: list[dict[str, Any]] = []
    cpu_rows: list[dict[str, Any]] = []
    no_od, no_spot, needs_eflops, mapped, kind_changed = [], [], [], [], []
    kept: list[InstanceSpec] = []
    for spec in specs:
        if spec.name not in on_demand_by_type:
            no_od.append(spec.name)
            continue
        zones = spot_by_type.get(spec.name) or {}
        if not zones:
            no_spot.append(spec.name)
            continue
        kept.append(spec)
        base_row = base_types.get(spec.name)
        row: dict[str, Any] = {
            "name": spec.name,
            "family": base_row.family if base_row else spec.family,
            "on_demand_usd_per_hour": on_demand_by_type[spec.name],
            "spot_usd_per_hour": aggregate_spot_usd_per_hour(zones, spot_aggregate),
            "vcpus": spec.vcpus,
            "memory_gib": spec.memory_gib,
            "network_gbps": spec.network_gbps,
            "spot_by_zone_usd_per_hour": dict(sorted(zones.items())),
        }
        if spec.network_mapped:
            mapped.append(f"{spec.name} '{spec.network_text}' -> {_fmt_gbps(spec.network_gbps)}")
        if base_row is not None and isinstance(base_row, GpuType) != spec.is_gpu:
            kind_changed.append(spec.name)
        if spec.is_gpu:
            if isinstance(base_row, GpuType):
                row["eflops"] = base_row.eflops
                row["scaling"] = (None if base_row.scaling is None else {
                    "a": base_row.scaling.a, "b": base_row.scaling.b, "c": base_row.scaling.c})
            else:
                row["eflops"] = None
                row["scaling"] = None
            if row["eflops"] is None:
                needs_eflops.append(spec.name)
            gpu_rows.append(row)
        else:
            cpu_rows.append(row)
    window = f"{spot_window_hours:g} h"
    if no_od:
        notes.append("left out, no on-demand Linux price (Pricing GetProducts): "
                     + ", ".join(no_od))
    if no_spot:
        notes.append(f"left out, no {SPOT_PRODUCT_DESCRIPTION} spot price in the last {window} "
                     "(DescribeSpotPriceHistory): " + ", ".join(no_spot))
    if needs_eflops:
        notes.append("needs eFLOPS (kept, left out of solving until you give it): "
                     + ", ".join(needs_eflops))
    if mapped:
        notes.append("network level mapped to a number: " + "; ".join(mapped))
    if kind_changed:
        notes.append("GPU/CPU kind differs from the base catalog (AWS's GpuInfo is followed): "
                     + ", ".join(kind_changed))
    families = sorted({r["family"] for r in (*gpu_rows, *cpu_rows)})
    if base is not None:
        unlimited = [f for f in families if base.quota(f) is None]
        notes.append(f"quotas are the base catalog's ({base.name}), not read from your account"
                     + (f"; no quota (unlimited) for family {', '.join(unlimited)}"
                        if unlimited else ""))
    stamp = fetched_at.astimezone(UTC)
    iso = stamp.strftime("%Y-%m-%dT%H:%M:%SZ")
    gpus_text = "; ".join(f"{s.name} {s.gpu_text()}" for s in kept if s.is_gpu)
    aggregate_text = "cheapest zone" if spot_aggregate == "min" else "median over zones"
    source = (
        f"Fetched live from AWS at {iso}. Specs: EC2 DescribeInstanceTypes in {region}. "
        f"Spot: EC2 DescribeSpotPriceHistory ({SPOT_PRODUCT_DESCRIPTION}, latest price per "
        f"availability zone over the last {window}; spot_usd_per_hour = {aggregate_text}). "
        f"On-demand: AWS Price List API GetProducts (pricing endpoint {pricing_region}; Linux, "
        "shared tenancy, no pre-installed software, capacity status Used). Network: "
        "'Up to N Gigabit' taken as N Gbps; levels in words mapped ("
        + ", ".join(f"{k} {v:g}" for k, v in QUALITATIVE_NETWORK_GBPS.items()) + " Gbps). "
        + (f"eFLOPS, scaling parameters, quotas and the network-saturation table from base "
           f"catalog {base.name}. " if base else
           "No base catalog: every GPU type needs eFLOPS; no quotas. ")
        + (f"GPUs: {gpus_text}." if gpus_text else "")
    ).strip()
    saturation = base.saturation if base else DEFAULT_SATURATION
    data: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "name": fetched_catalog_name(region, fetched_at),
        "provider": "aws",
        "region": region,
        "prices_date": iso,
        "source": source,
        "gpu_types": gpu_rows,
        "cpu_types": cpu_rows,
        "quotas": [{"family": q.family, "on_demand_vcpus": q.on_demand_vcpus,
                    "spot_vcpus": q.spot_vcpus} for q in (base.quotas if base else ())],
        "network_saturation": [{"bandwidth_gbps": s.bandwidth_gbps, "max_gpu_vms": s.max_gpu_vms}
                               for s in saturation],
    }
    return data, tuple(notes)


# ----------------------------------------------------------------------------- layer 4: write


def _is_bundled_path(path: Path) -> bool:
    try:
        return path.resolve().parent == DATA_DIR.resolve()
    except OSError:
        return False


def write_fetched_catalogs(catalogs: Sequence[Catalog], targets: Sequence[Path]) -> list[Path]:
    """Write each catalog to its target atomically; when one write fails, the files this call
    already wrote are removed (a fetch is all or nothing). Bundled catalogs are refused.

    Raises:
        FetchError: a target is a bundled catalog, or a write failed (kind ``write``).
    """
    for target in targets:
        if _is_bundled_path(target):
            raise FetchError(f"refusing to overwrite the bundled catalog {target.name}; choose "
                             "another output. Nothing was written.", kind="write")
    written: list[tuple[Path, bytes | None]] = []
    try:
        for catalog, target in zip(catalogs, targets, strict=True):
            previous = target.read_bytes() if target.is_file() else None
            write_json_atomic(target, catalog_to_dict(catalog))
            written.append((target, previous))
    except OSError as exc:
        for path, previous in reversed(written):
            if previous is None:
                path.unlink(missing_ok=True)
            else:
                _restore_bytes(path, previous)
        raise FetchError(f"writing the fetched catalog failed: {exc.strerror or exc}. "
                         "Nothing was written.", kind="write") from None
    return [p for p, _ in written]


def _restore_bytes(path: Path, content: bytes) -> None:
    """Restore ``content`` to ``path`` atomically (used to roll back a partial write)."""
    tmp = path.with_name(f".{path.name}.restore.tmp")
    tmp.write_bytes(content)
    os.replace(tmp, path)


# ----------------------------------------------------------------------------- orchestration


def validate_regions(regions: Iterable[str]) -> tuple[str, ...]:
    """The regions, de-duplicated in order. Raises :class:`InputError` for a bad name."""
    out: list[str] = []
    for region in regions:
        region = str(region).strip().lower()
        if not _REGION_RE.match(region):
            raise InputError("region", region, "is not an AWS region name (like us-east-1)")
        if region not in out:
            out.append(region)
    if not out:
        raise InputError("region", "", "give at least one AWS region")
    return tuple(out)


def validate_instance_types(names: Iterable[str]) -> tuple[str, ...]:
    """Instance type names or globs (``g5.*``), de-duplicated. Raises :class:`InputError`."""
    out: list[str] = []
    for name in names:
        for part in str(name).replace(",", " ").split():
            part = part.strip().lower()
            if not _TYPE_RE.match(part):
                raise InputError("instance_types", part,
                                 "is not an instance type or glob (like g5.xlarge or g5.*)")
            if part not in out:
                out.append(part)
    if not out:
        raise InputError("instance_types", "", "give at least one instance type or glob")
    return tuple(out)


def _resolve_base(base: Catalog | str | os.PathLike[str] | None) -> Catalog | None:
    if base is None or isinstance(base, Catalog):
        return base
    return load_catalog(base)


def _target_paths(out: str | os.PathLike[str] | None, names: Sequence[str]) -> list[Path]:
    if out is not None and str(out).lower().endswith(".json"):
        if len(names) != 1:
            raise InputError("out", str(out), "a .json file takes one region; give a folder "
                             "for several regions")
        return [Path(out)]
    folder = Path(out) if out is not None else fetched_dir()
    paths = []
    for name in names:
        path = folder / f"{name}.json"
        suffix = 2
        while path.exists():
            path = folder / f"{name}-{suffix}.json"
            suffix += 1
        paths.append(path)
    return paths


def _client_config(max_attempts: int, connect_timeout_s: float, read_timeout_s: float) -> Any:
    from botocore.config import Config

    # "total_max_attempts" counts the first attempt; botocore's "max_attempts" key would count
    # retries only (max_attempts=2 means 3 requests).
    return Config(connect_timeout=connect_timeout_s, read_timeout=read_timeout_s,
                  retries={"mode": "adaptive", "total_max_attempts": max_attempts},
                  user_agent_extra="deepvm-studio")


class _Progress:
    """Reports ``progress(step, done, total)``: ``begin`` a step, ``detail`` inside it, ``end``
    it (``done`` counts finished steps)."""

    def __init__(self, callback: ProgressCallback | None, total: int) -> None:
        self.callback = callback
        self.total = total
        self.done = 0

    def begin(self, label: str) -> None:
        self.detail(label)

    def detail(self, label: str) -> None:
        if self.callback is not None:
            self.callback(label, self.done, self.total)

    def end(self) -> None:
        self.done = min(self.done + 1, self.total)


def _fetch_region(
    *,
    session: Any,
    caller: _Caller,
    config: Any,
    region: str,
    wanted: Sequence[str],
    base: Catalog | None,
    now: datetime,
    spot_aggregate: SpotAggregate,
    spot_window_hours: float,
    pricing_region: str,
    progress: _Progress,
) -> tuple[Catalog, tuple[InstanceSpec, ...], tuple[str, ...]]:
    """Layers 1-3 for one region: the validated catalog, the specs kept, and notes."""
    notes: list[str] = []
    # --- specs
    progress.begin(f"{region}: instance types (EC2 DescribeInstanceTypes)")
    try:
        ec2 = session.client("ec2", region_name=region, config=config)
        raw_types = describe_instance_types(ec2, wanted)
    except _aws_errors() as exc:  # translated, naming the operation and the region
        caller.fail(exc, "DescribeInstanceTypes", region, "EC2 DescribeInstanceTypes")
    specs: list[InstanceSpec] = []
    not_understood: list[str] = []
    for item in raw_types:
        try:
            specs.append(parse_instance_type(item))
        except MalformedAnswer as exc:
            not_understood.append(str(exc))
    if not_understood and not specs:
        caller.fail(MalformedAnswer("; ".join(not_understood)), "DescribeInstanceTypes", region,
                    "EC2 DescribeInstanceTypes")
    if not_understood:
        notes.append("left out, specs not understood (DescribeInstanceTypes): "
                     + "; ".join(not_understood))
    found = {s.name for s in specs}
    answered = {str(item.get("InstanceType")) for item in raw_types}
    missing = [w for w in wanted if not any(fnmatch.fnmatchcase(n, w) for n in answered)]
    if missing:
        notes.append(f"not offered in {region} (DescribeInstanceTypes): " + ", ".join(missing))
    if not specs:
        raise FetchError(f"EC2 DescribeInstanceTypes for region {region} found none of the "
                         f"requested instance types ({', '.join(wanted)}). Nothing was written.",
                         operation="DescribeInstanceTypes", region=region, kind="no_offers")
    names = [s.name for s in specs]
    progress.end()
    # --- spot
    progress.begin(f"{region}: spot prices (EC2 DescribeSpotPriceHistory)")
    start = now - timedelta(hours=spot_window_hours)
    try:
        history = describe_spot_price_history(ec2, names, start)
        spot = {n: z for n, z in latest_spot_by_zone(history).items() if n in found}
    except _aws_errors() as exc:
        caller.fail(exc, "DescribeSpotPriceHistory", region, "EC2 DescribeSpotPriceHistory")
    if not spot:
        raise FetchError(f"EC2 DescribeSpotPriceHistory for region {region} returned no "
                         f"{SPOT_PRODUCT_DESCRIPTION} spot price for any of {len(names)} "
                         f"instance type(s) in the last {spot_window_hours:g} h. Nothing was "
                         "written.", operation="DescribeSpotPriceHistory", region=region,
                         kind="no_offers")
    progress.end()
    # --- on-demand
    label = f"Pricing GetProducts (pricing endpoint {pricing_region})"
    progress.begin(f"{region}: on-demand prices (Pricing GetProducts)")
    priced = [n for n in names if n in spot]
    on_demand: dict[str, float] = {}
    try:
        pricing = session.client("pricing", region_name=pricing_region, config=config)
        for i, name in enumerate(priced, start=1):
            progress.detail(f"{region}: on-demand prices (Pricing GetProducts) "
                            f"{i}/{len(priced)}: {name}")
            price, price_notes = parse_on_demand_usd_per_hour(
                get_products(pricing, name, region), name, region)
            notes.extend(price_notes)
            if price is not None:
                on_demand[name] = price
    except _aws_errors() as exc:
        caller.fail(exc, "GetProducts", region, label)
    if not on_demand:
        raise FetchError(f"{label} for region {region} found no on-demand Linux offer for any "
                         f"of {len(priced)} instance type(s). Nothing was written.",
                         operation="GetProducts", region=region, kind="no_offers")
    progress.end()
    # --- assembly and validation
    data, assembly_notes = assemble_catalog_dict(
        region=region, specs=specs, spot_by_type=spot, on_demand_by_type=on_demand, base=base,
        fetched_at=now, spot_aggregate=spot_aggregate, spot_window_hours=spot_window_hours,
        pricing_region=pricing_region)
    notes.extend(assembly_notes)
    try:
        catalog = parse_catalog(data, source=f"fetched catalog {data['name']}")
    except CatalogError as exc:
        raise FetchError(f"the catalog fetched for region {region} is invalid: {exc}",
                         region=region, kind="invalid") from None
    kept = {t.name for t in (*catalog.gpu_types, *catalog.cpu_types)}
    return catalog, tuple(s for s in specs if s.name in kept), tuple(notes)


def fetch_catalogs(
    regions: Sequence[str] | str,
    *,
    base: Catalog | str | os.PathLike[str] | None = DEFAULT_BASE_CATALOG,
    instance_types: Sequence[str] | None = None,
    profile: str | None = None,
    spot_aggregate: SpotAggregate = "min",
    spot_window_hours: float = DEFAULT_SPOT_WINDOW_HOURS,
    pricing_region: str = DEFAULT_PRICING_REGION,
    out: str | os.PathLike[str] | None = None,
    write: bool = True,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S,
    read_timeout_s: float = DEFAULT_READ_TIMEOUT_S,
    progress: ProgressCallback | None = None,
    now: datetime | None = None,
) -> FetchResult:
    """Fetch one catalog per region from AWS and write them (all, or none on failure).

    Args:
        regions: AWS regions (``us-east-1``); one catalog each.
        base: the base catalog (a :class:`Catalog`, a path or a bundled name) whose eFLOPS,
            scaling fits, quotas and saturation table carry over, and whose types are fetched
            when ``instance_types`` is not given; ``None`` for none.
        instance_types: names or globs (``g5.*``) to fetch instead of the base's types.
        profile: an AWS profile of the shared config (``None``: the default chain).
        spot_aggregate: ``min`` (cheapest availability zone) or ``median``.
        spot_window_hours: how far back spot history is read.
        pricing_region: region of the Pricing API endpoint (one of :data:`PRICING_REGIONS`).
        out: a folder, or a ``.json`` file for a single region (default: ``store.fetched_dir()``).
        write: False to fetch and validate only (``RegionFetch.path`` is ``None``).
        max_attempts: attempts per request in all (adaptive retries); 1 = no retry.
        connect_timeout_s, read_timeout_s: socket timeouts, seconds.
        progress: called as ``progress(step, done, total)`` when a step starts, during the
            on-demand step (one call per instance type) and at the end (``done == total``).
            There are ``3 * len(regions) + 1`` steps (the last one writes).
        now: the fetch time (tests); default now, UTC.

    Raises:
        FetchError: a call failed (operation and region named, credentials redacted), a region
            has no offers, or writing failed. Nothing is written then.
        InputError: a bad region, instance type, aggregate or setting.
        DeepVMError: the base catalog cannot be loaded.
    """
    region_list = validate_regions([regions] if isinstance(regions, str) else regions)
    if spot_aggregate not in SPOT_AGGREGATES:
        raise InputError("spot_aggregate", spot_aggregate,
                         f"must be one of {', '.join(SPOT_AGGREGATES)}")
    if isinstance(max_attempts, bool) or not (isinstance(max_attempts, int)
                                              and 1 <= max_attempts <= 20):
        raise InputError("max_attempts", max_attempts, "must be a whole number from 1 to 20")
    if not (isinstance(spot_window_hours, (int, float)) and 0 < spot_window_hours <= 24 * 90):
        raise InputError("spot_window_hours", spot_window_hours,
                         "must be more than 0 and at most 2160 (90 days)")
    if pricing_region not in PRICING_REGIONS:
        raise InputError("pricing_region", pricing_region,
                         f"must be one of {', '.join(PRICING_REGIONS)}")
    for name, value in (("connect_timeout_s", connect_timeout_s),
                        ("read_timeout_s", read_timeout_s)):
        if not (isinstance(value, (int, float)) and 0 < value <= 600):
            raise InputError(name, value, "must be more than 0 and at most 600 seconds")
    if out is not None and str(out).lower().endswith(".json") and len(region_list) != 1:
        raise InputError("out", str(out), "a .json file takes one region; give a folder for "
                         "several regions")
    base_catalog = _resolve_base(base)
    if instance_types is not None:
        wanted = validate_instance_types(instance_types)
    elif base_catalog is not None:
        wanted = tuple(t.name for t in (*base_catalog.gpu_types, *base_catalog.cpu_types))
        if not wanted:
            raise InputError("base", base_catalog.name, "has no instance types to fetch")
    else:
        raise InputError("instance_types", None, "give instance types or a base catalog")
    fetched_at = (now or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0)
    targets = (_target_paths(out, [fetched_catalog_name(r, fetched_at) for r in region_list])
               if write else [])
    for target in targets:  # before any request: a bad destination costs no fetch
        if _is_bundled_path(target):
            raise FetchError(f"refusing to overwrite the bundled catalog {target.name}; choose "
                             "another output. Nothing was written.", kind="write")

    import boto3
    from botocore import exceptions as bx

    try:
        session = boto3.session.Session(profile_name=profile)
    except bx.ProfileNotFound:
        raise FetchError(f"the AWS profile {profile!r} is not in the shared config or "
                         "credentials file. Nothing was written.", kind="credentials") from None
    except bx.BotoCoreError as exc:
        raise FetchError(sanitize_message(f"the AWS session could not be created: {exc}. "
                                          "Nothing was written."),
                         kind="credentials") from None
    caller = _Caller(session, max_attempts)
    config = _client_config(max_attempts, connect_timeout_s, read_timeout_s)
    progress_ = _Progress(progress, 3 * len(region_list) + 1)

    results: list[tuple[str, Catalog, tuple[InstanceSpec, ...], tuple[str, ...]]] = []
    for region in region_list:
        logger.info("fetching an AWS catalog for %s (%d instance type patterns)", region,
                    len(wanted))
        results.append((region, *_fetch_region(
            session=session, caller=caller, config=config, region=region, wanted=wanted,
            base=base_catalog, now=fetched_at, spot_aggregate=spot_aggregate,
            spot_window_hours=spot_window_hours, pricing_region=pricing_region,
            progress=progress_)))

    paths: list[Path | None] = [None] * len(results)
    if write:
        progress_.begin("writing catalogs")
        paths = list(write_fetched_catalogs([catalog for _, catalog, _, _ in results], targets))
        for path in paths:
            logger.info("wrote fetched catalog %s", path)
    progress_.done = progress_.total
    progress_.detail("done")
    return FetchResult(
        regions=tuple(RegionFetch(region, catalog, path, specs, notes)
                      for (region, catalog, specs, notes), path in zip(results, paths,
                                                                        strict=True)),
        fetched_at=fetched_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
        base_catalog=base_catalog.name if base_catalog else None,
        spot_aggregate=spot_aggregate,
    )


# ----------------------------------------------------------------------------- comparison


@dataclass(frozen=True)
class RegionComparison:
    """The best recommendation of one region for a scenario.

    Attributes:
        region: the region.
        catalog_name: its catalog.
        best: the DeepVM first choice, or ``None`` when nothing is feasible.
        hourly_price_usd: its price, USD per hour, or ``None``.
        performance: its performance (eFLOPS * n * K(n)), or ``None``.
        objective_value: its value under the scenario's objective, or ``None``.
        explanation: why nothing is feasible (``None`` when ``best`` is set).
        recommendation: the full :class:`~deepvm_core.policies.Recommendation`.
    """

    region: str
    catalog_name: str
    best: Configuration | None
    hourly_price_usd: float | None
    performance: float | None
    objective_value: float | None
    explanation: str | None
    recommendation: Recommendation


def compare_regions(
    catalogs_by_region: Mapping[str, Catalog], scenario: Scenario
) -> list[RegionComparison]:
    """The best recommendation per region for the same PW, checkpoint and buffer.

    Rows are ranked like stage 4 (objective descending, then lower hourly price, ...);
    regions where nothing is feasible come last, by name.
    """
    rows: list[RegionComparison] = []
    for region, catalog in catalogs_by_region.items():
        rec = recommend(catalog, scenario, top_k=1)
        best = rec.best
        rows.append(RegionComparison(
            region=region,
            catalog_name=catalog.name,
            best=best,
            hourly_price_usd=best.hourly_price_usd if best else None,
            performance=best.performance if best else None,
            objective_value=best.objective_value(scenario.objective) if best else None,
            explanation=(rec.explanation.summary if rec.explanation else
                         "nothing is feasible") if best is None else None,
            recommendation=rec,
        ))
    feasible = sorted((r for r in rows if r.best is not None), key=lambda r: r.region)
    order = rank_configurations([r.best for r in feasible if r.best], scenario.objective)
    return [feasible[i] for i in order] + sorted(
        (r for r in rows if r.best is None), key=lambda r: r.region)
