"""Assembly: fetched specs and prices -> our catalog format, validated.

Types, families, quotas and the saturation table carried over from a base catalog; eFLOPS and
scaling fits by the rule of :mod:`deepvm_core.hardware.unmeasured` (the base catalog's measured
values, else the estimate from ``data/accelerators.csv`` and the step-model prior, marked by
``eflops_source`` and ``scaling_source``); interruption buckets from the Spot Instance Advisor
when it was read (never carried over: they belong to a region and a month); every choice made
on the way (types left out and why, mapped network values, estimated types, GPU types that need
eFLOPS or have no bucket) is returned as a note.

**Kind.** A type with ``GpuInfo`` is a GPU type. A type whose instance family is in
``data/accelerators.csv`` without ``GpuInfo`` is a GPU type when its chip trains (Trainium: kept
with eFLOPS ``null``, "needs eFLOPS", so it stays out of the search and is never taken for a
memory node), and is left out with the table's reason otherwise (Inferentia, FPGAs, ...);
a GPU type whose chip does not train (the table's ``trains`` ``no``) is left out too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from deepvm_core.catalog import DEFAULT_SATURATION, Catalog, GpuType
from deepvm_core.catalog.schema import SCHEMA_VERSION, quota_rows, saturation_rows
from deepvm_core.catalog.validation import parse_catalog
from deepvm_core.cloud.aws.instance_types import QUALITATIVE_NETWORK_GBPS, InstanceSpec
from deepvm_core.cloud.aws.pricing import DEFAULT_PRICING_REGION
from deepvm_core.cloud.aws.spot_advisor import SPOT_ADVISOR_OS
from deepvm_core.cloud.aws.spot_prices import (
    DEFAULT_SPOT_WINDOW_HOURS,
    SPOT_PRODUCT_DESCRIPTION,
    SpotAggregate,
    aggregate_spot_usd_per_hour,
)
from deepvm_core.errors import CatalogError, FetchError
from deepvm_core.hardware.accelerators import accelerator_of_instance
from deepvm_core.hardware.unmeasured import gpu_throughput_fields


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
    spot_advisor: Mapping[str, Mapping[str, int]] | None = None,
    spot_advisor_source: str = "",
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """Our catalog format (a dict for :func:`~deepvm_core.catalog.validation.parse_catalog`)
    and notes.

    A type without an on-demand price or without a spot price is left out (noted), and so is a
    type of a non-training accelerator (module docstring, "Kind"). A type of ``base`` keeps
    its family; a GPU type keeps ``base``'s measured eFLOPS and scaling fit, else gets the
    estimate and the prior (:func:`~deepvm_core.hardware.unmeasured.gpu_throughput_fields`),
    else eFLOPS ``null`` ("needs eFLOPS", with the reason). Quotas and the saturation table are
    ``base``'s.

    ``spot_advisor`` is :func:`~deepvm_core.cloud.aws.spot_advisor.parse_spot_advisor`'s result
    (``None``: not read): each GPU type gets its bucket in ``region``, or ``null`` (noted: the
    job model applies its default). ``spot_advisor_source`` names where and when it was read, for
    ``source``.
    """
    base_types = {t.name: t for t in (*base.gpu_types, *base.cpu_types)} if base else {}
    notes: list[str] = []
    gpu_rows: list[dict[str, Any]] = []
    cpu_rows: list[dict[str, Any]] = []
    no_od, no_spot, needs_eflops, mapped, kind_changed = [], [], [], [], []
    no_bucket: list[str] = []
    estimated: list[str] = []
    prior: list[str] = []
    not_training: dict[str, list[str]] = {}
    buckets = None if spot_advisor is None else spot_advisor.get(region, {})
    kept: list[InstanceSpec] = []
    for spec in specs:
        acc = accelerator_of_instance(spec.name)
        if acc is not None and not acc.trains:
            not_training.setdefault(acc.note or acc.name, []).append(spec.name)
            continue
        is_gpu = spec.is_gpu or acc is not None
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
        if base_row is not None and isinstance(base_row, GpuType) != is_gpu:
            kind_changed.append(spec.name)
        if is_gpu:
            fields, missing = gpu_throughput_fields(
                acc, spec.gpu_count, base_row if isinstance(base_row, GpuType) else None,
                spec.network_gbps, spec.name.partition(".")[0])
            row.update(fields)
            if missing is not None:
                needs_eflops.append(f"{spec.name} ({missing})")
            if "eflops_source" in fields and acc is not None:
                estimated.append(f"{spec.name} ({spec.gpu_count} x {acc.name})")
            if "scaling_source" in fields:
                prior.append(spec.name)
            if buckets is not None:
                row["interruption_bucket"] = buckets.get(spec.name)
                if row["interruption_bucket"] is None:
                    no_bucket.append(spec.name)
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
    notes.extend(f"left out, {why}: {', '.join(names)}" for why, names in not_training.items())
    if estimated:
        notes.append("eFLOPS estimated from the accelerator model (data/accelerators.csv), not "
                     "measured (eflops_source 'estimated: ...'): " + ", ".join(estimated))
    if prior:
        notes.append("scaling (a, b, c) from the step-model prior, not a measured curve "
                     "(scaling_source 'prior: ...'): " + ", ".join(prior))
    if needs_eflops:
        notes.append("needs eFLOPS (kept, left out of solving until you give it): "
                     + ", ".join(needs_eflops))
    if mapped:
        notes.append("network level mapped to a number: " + "; ".join(mapped))
    if kind_changed:
        notes.append("GPU/CPU kind differs from the base catalog (AWS's GpuInfo is followed): "
                     + ", ".join(kind_changed))
    if spot_advisor is not None and region not in spot_advisor:
        notes.append(f"the Spot Instance Advisor has no data for {region}: no GPU type has an "
                     "interruption bucket (the job model applies its default)")
    elif no_bucket:
        notes.append("no Spot Instance Advisor interruption bucket (the job model applies its "
                     "default): " + ", ".join(no_bucket))
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
        + (f"Measured eFLOPS and scaling parameters, quotas and the network-saturation table "
           f"from base catalog {base.name}; " if base else "No base catalog: no quotas; ")
        + "eFLOPS of other GPU types estimated from data/accelerators.csv (eflops_source), "
        "scaling from the step-model prior (scaling_source). "
        + (f"Interruption buckets: AWS Spot Instance Advisor ({spot_advisor_source}; "
           f"{SPOT_ADVISOR_OS}). " if spot_advisor is not None else
           "Interruption buckets: not read (deepvm fetch --spot-advisor reads them). ")
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
        "quotas": quota_rows(base.quotas if base else ()),
        "network_saturation": saturation_rows(saturation),
    }
    return data, tuple(notes)


def assemble_catalog(**kwargs: Any) -> tuple[Catalog, tuple[str, ...]]:
    """:func:`assemble_catalog_dict` (same arguments), validated: the catalog and the notes.

    Raises:
        FetchError: the assembled catalog is invalid (kind ``invalid``).
    """
    data, notes = assemble_catalog_dict(**kwargs)
    try:
        catalog = parse_catalog(data, source=f"fetched catalog {data['name']}")
    except CatalogError as exc:
        raise FetchError(f"the catalog fetched for region {data['region']} is invalid: {exc}",
                         region=data["region"], kind="invalid") from None
    return catalog, notes
