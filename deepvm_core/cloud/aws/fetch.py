"""Fetch orchestration: one catalog per region, then an all-or-nothing atomic write.

:func:`fetch_catalogs` validates its inputs (:mod:`deepvm_core.cloud.aws.inputs`), reads the
interruption buckets when asked (:mod:`deepvm_core.cloud.aws.spot_advisor`), then for each
region reads and parses the specs (:mod:`deepvm_core.cloud.aws.instance_types`), the spot
prices (:mod:`deepvm_core.cloud.aws.spot_prices`) and the on-demand prices
(:mod:`deepvm_core.cloud.aws.pricing`), through one session
(:mod:`deepvm_core.cloud.aws.client`), and builds a validated catalog
(:mod:`deepvm_core.cloud.aws.assemble`); only when every region succeeded does
:func:`write_fetched_catalogs` write the files. A failed or partial fetch writes nothing. What
it returns is :mod:`deepvm_core.cloud.aws.fetch_result`'s.
"""

from __future__ import annotations

import fnmatch
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from deepvm_core.bundled import is_bundled
from deepvm_core.catalog import Catalog
from deepvm_core.catalog.store import PAPER_CATALOG, save_catalog
from deepvm_core.cloud.aws.assemble import assemble_catalog, fetched_catalog_name
from deepvm_core.cloud.aws.client import (
    DEFAULT_CONNECT_TIMEOUT_S,
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_READ_TIMEOUT_S,
    Connection,
    MalformedAnswer,
    aws_errors,
    connect,
    sanitize_message,
)
from deepvm_core.cloud.aws.fetch_result import FetchResult, RegionFetch
from deepvm_core.cloud.aws.inputs import (
    resolve_base,
    target_paths,
    validate_instance_types,
    validate_regions,
)
from deepvm_core.cloud.aws.instance_types import (
    InstanceSpec,
    describe_instance_types,
    parse_instance_type,
)
from deepvm_core.cloud.aws.pricing import (
    DEFAULT_PRICING_REGION,
    PRICING_REGIONS,
    get_products,
    parse_on_demand_usd_per_hour,
)
from deepvm_core.cloud.aws.spot_advisor import read_spot_advisor, url_secrets
from deepvm_core.cloud.aws.spot_advisor import spot_advisor_url as default_spot_advisor_url
from deepvm_core.cloud.aws.spot_prices import (
    DEFAULT_SPOT_WINDOW_HOURS,
    SPOT_AGGREGATES,
    SPOT_PRODUCT_DESCRIPTION,
    SpotAggregate,
    describe_spot_price_history,
    latest_spot_by_zone,
)
from deepvm_core.errors import FetchError, InputError
from deepvm_core.files import write_bytes_atomic

logger = logging.getLogger(__name__)

#: The base catalog used when none is given: eFLOPS, scaling, quotas and types come from it.
DEFAULT_BASE_CATALOG = PAPER_CATALOG


ProgressCallback = Callable[[str, int, int], None]

# ----------------------------------------------------------------------------- write


def refuse_bundled(targets: Sequence[Path]) -> None:
    """Refuse to write over a bundled catalog.

    Raises:
        FetchError: a target is a bundled catalog (kind ``write``).
    """
    for target in targets:
        if is_bundled(target):
            raise FetchError(f"refusing to overwrite the bundled catalog {target.name}; choose "
                             "another output. Nothing was written.", kind="write")


def write_fetched_catalogs(catalogs: Sequence[Catalog], targets: Sequence[Path]) -> list[Path]:
    """Write each catalog to its target atomically; when one write fails, the files this call
    already wrote are removed (a fetch is all or nothing). Bundled catalogs are refused.

    Raises:
        FetchError: a target is a bundled catalog, or a write failed (kind ``write``).
    """
    refuse_bundled(targets)
    written: list[tuple[Path, bytes | None]] = []
    try:
        for catalog, target in zip(catalogs, targets, strict=True):
            previous = target.read_bytes() if target.is_file() else None
            save_catalog(catalog, target)
            written.append((target, previous))
    except OSError as exc:
        for path, previous in reversed(written):
            if previous is None:
                path.unlink(missing_ok=True)
            else:
                write_bytes_atomic(path, previous)
        raise FetchError(f"writing the fetched catalog failed: {exc.strerror or exc}. "
                         "Nothing was written.", kind="write") from None
    return [p for p, _ in written]


# ----------------------------------------------------------------------------- orchestration

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
    connection: Connection,
    region: str,
    wanted: Sequence[str],
    base: Catalog | None,
    now: datetime,
    spot_aggregate: SpotAggregate,
    spot_window_hours: float,
    pricing_region: str,
    spot_advisor: Mapping[str, Mapping[str, int]] | None,
    spot_advisor_source: str,
    progress: _Progress,
) -> tuple[Catalog, tuple[InstanceSpec, ...], tuple[str, ...]]:
    """Layers 1-3 for one region: the validated catalog, the specs kept, and notes."""
    notes: list[str] = []
    caller = connection.caller
    # --- specs
    progress.begin(f"{region}: instance types (EC2 DescribeInstanceTypes)")
    try:
        ec2 = connection.client("ec2", region)
        raw_types = describe_instance_types(ec2, wanted)
    except aws_errors() as exc:  # translated, naming the operation and the region
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
    except aws_errors() as exc:
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
        pricing = connection.client("pricing", pricing_region)
        for i, name in enumerate(priced, start=1):
            progress.detail(f"{region}: on-demand prices (Pricing GetProducts) "
                            f"{i}/{len(priced)}: {name}")
            price, price_notes = parse_on_demand_usd_per_hour(
                get_products(pricing, name, region), name, region)
            notes.extend(price_notes)
            if price is not None:
                on_demand[name] = price
    except aws_errors() as exc:
        caller.fail(exc, "GetProducts", region, label)
    if not on_demand:
        raise FetchError(f"{label} for region {region} found no on-demand Linux offer for any "
                         f"of {len(priced)} instance type(s). Nothing was written.",
                         operation="GetProducts", region=region, kind="no_offers")
    progress.end()
    # --- assembly and validation
    catalog, assembly_notes = assemble_catalog(
        region=region, specs=specs, spot_by_type=spot, on_demand_by_type=on_demand, base=base,
        fetched_at=now, spot_aggregate=spot_aggregate, spot_window_hours=spot_window_hours,
        pricing_region=pricing_region, spot_advisor=spot_advisor,
        spot_advisor_source=spot_advisor_source)
    notes.extend(assembly_notes)
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
    spot_advisor: bool = False,
    spot_advisor_url: str | None = None,
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
            There are ``3 * len(regions) + 1`` steps (the last one writes), one more with
            ``spot_advisor``.
        now: the fetch time (tests); default now, UTC.
        spot_advisor: also read each GPU type's interruption bucket from the AWS Spot Instance
            Advisor (:func:`~deepvm_core.cloud.aws.spot_advisor.read_spot_advisor`, before any
            AWS call); without it every bucket
            is ``None``.
        spot_advisor_url: where to read it (default
            :func:`~deepvm_core.cloud.aws.spot_advisor.spot_advisor_url`:
            ``$DEEPVM_SPOT_ADVISOR_URL`` or AWS's public file).

    Raises:
        FetchError: a call failed (operation and region named, credentials redacted), a region
            has no offers, or writing failed. Nothing is written then.
        InputError: a bad region, instance type, aggregate or setting.
        CatalogNotFoundError, CatalogError: the base catalog is missing or invalid.
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
    base_catalog = resolve_base(base)
    if instance_types is not None:
        wanted = validate_instance_types(instance_types)
    elif base_catalog is not None:
        wanted = tuple(t.name for t in (*base_catalog.gpu_types, *base_catalog.cpu_types))
        if not wanted:
            raise InputError("base", base_catalog.name, "has no instance types to fetch")
    else:
        raise InputError("instance_types", None, "give instance types or a base catalog")
    fetched_at = (now or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0)
    targets = (target_paths(out, [fetched_catalog_name(r, fetched_at) for r in region_list])
               if write else [])
    refuse_bundled(targets)  # before any request: a bad destination costs no fetch

    progress_ = _Progress(progress, 3 * len(region_list) + 1 + int(spot_advisor))
    advisor: dict[str, dict[str, int]] | None = None
    advisor_url = spot_advisor_url or default_spot_advisor_url()
    advisor_url = sanitize_message(advisor_url, url_secrets(advisor_url))
    if spot_advisor:
        progress_.begin("interruption buckets (Spot Instance Advisor)")
        advisor = read_spot_advisor(spot_advisor_url, max_attempts=max_attempts,
                                    timeout_s=read_timeout_s)
        progress_.end()

    connection = connect(profile=profile, max_attempts=max_attempts,
                         connect_timeout_s=connect_timeout_s, read_timeout_s=read_timeout_s)

    results: list[tuple[str, Catalog, tuple[InstanceSpec, ...], tuple[str, ...]]] = []
    for region in region_list:
        logger.info("fetching an AWS catalog for %s (%d instance type patterns)", region,
                    len(wanted))
        results.append((region, *_fetch_region(
            connection=connection, region=region, wanted=wanted,
            base=base_catalog, now=fetched_at, spot_aggregate=spot_aggregate,
            spot_window_hours=spot_window_hours, pricing_region=pricing_region,
            spot_advisor=advisor, progress=progress_,
            spot_advisor_source=f"{advisor_url}, read at {fetched_at:%Y-%m-%dT%H:%M:%SZ}")))

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
        spot_advisor_url=advisor_url if spot_advisor else None,
    )


