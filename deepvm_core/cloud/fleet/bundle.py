"""What ``deepvm export --to ec2-fleet`` writes: the two request bodies
(:mod:`~deepvm_core.cloud.fleet.requests`) as ``spot-workers.json`` and ``on-demand.json``,
``launch.txt`` (what the files are, and the ``deepvm`` and AWS CLI commands that launch, check
and tear the plan down), and the export folder or its zip.

:func:`build_bundle` is pure (no AWS call, no file): the dashboard uses it as is;
:func:`write_bundle` writes the folder, all or nothing (:mod:`deepvm_core.files`).
"""

from __future__ import annotations

import io
import os
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deepvm_core.cloud.fleet.errors import FleetInputError
from deepvm_core.cloud.fleet.requests import (
    POOL_ALLOCATION_STRATEGY,
    SPOT_ALLOCATION_STRATEGY,
    FleetRequests,
    RequestOptions,
    build_requests,
    effective_spot_cap,
)
from deepvm_core.cloud.fleet.target import (
    TAG_CATALOG,
    TAG_PLAN,
    TAG_ROLE,
    FleetPlan,
    plan_from_export,
)
from deepvm_core.cloud.fleet.zones import DEFAULT_SPOT_ZONES
from deepvm_core.files import write_temp_beside

SPOT_FILE = "spot-workers.json"
ON_DEMAND_FILE = "on-demand.json"
LAUNCH_FILE = "launch.txt"
EXPORT_FILE = "export.json"
BUNDLE_FILES = (SPOT_FILE, ON_DEMAND_FILE, LAUNCH_FILE)


# ----------------------------------------------------------------------------- launch.txt


def _shell_words(words: Sequence[str]) -> str:
    import shlex

    return " ".join(shlex.quote(w) for w in words)


def launch_command(plan: FleetPlan, options: RequestOptions, export_name: str,
                   region: str | None = None) -> list[str]:
    """The ``deepvm launch`` command line of these options (without ``--yes``)."""
    words = ["deepvm", "launch", export_name, "--gpu-template",
             options.gpu_template.argument()]
    if options.cpu_template is not None and plan.on_demand is not None \
            and not plan.on_demand.uses_gpu_template:
        words += ["--cpu-template", options.cpu_template.argument()]
    for subnet in options.subnets:
        zone = options.subnet_zones.get(subnet)
        words += ["--subnet", f"{subnet}@{zone}" if zone else subnet]
    words += ["--region", region or plan.catalog_region]
    if options.spot_zones != DEFAULT_SPOT_ZONES:
        words += ["--spot-zones", options.spot_zones]
    if options.spot_max_total_price_usd_per_hour is not None:
        words += ["--spot-max-total-price", f"{options.spot_max_total_price_usd_per_hour:g}"]
    elif not options.cap_spot_at_pw:
        words += ["--no-spot-price-cap"]
    if options.on_demand_max_total_price_usd_per_hour is not None:
        words += ["--on-demand-max-total-price",
                  f"{options.on_demand_max_total_price_usd_per_hour:g}"]
    return words


def zone_lines(requests: FleetRequests, region: str) -> list[str]:
    """``launch.txt``'s lines on the spot price cap and the planned zone (zone ID), and how to
    resolve the zone ID by hand (:mod:`~deepvm_core.cloud.fleet.zones`)."""
    plan, options = requests.plan, requests.options
    if plan.spot is None:
        return []
    cap = effective_spot_cap(plan, options)
    lines = [f"Spot cap:      MaxTotalPrice {cap:g} USD/h for the spot workers together"
             + (" (PW minus the on-demand part)" if options.spot_max_total_price_usd_per_hour
                is None else "") if cap is not None else "Spot cap:      none"]
    if plan.planned_zone_id and not plan.pool_zones:
        zone = plan.planned_zone_id
        how = {"planned": f"pins it ({zone})", "any": "does not restrict the zones",
               "by-price": f"orders the zones by price ({', '.join(plan.spot_zone_ids)}, "
                           "capacity-optimized-prioritized)"}[options.spot_zones]
        lines += [
            f"Spot zone:     {zone}, a zone ID (the same in every account): the plan's spot "
            "price is that zone's.",
            f"               'deepvm launch' resolves it to your account's zone name and {how}.",
            "               By hand: ZONE=$(aws ec2 describe-availability-zones --region "
            f"{region} --zone-ids {zone} --query 'AvailabilityZones[0].ZoneName' --output "
            "text), then keep only subnets in $ZONE (or add \"AvailabilityZone\": \"$ZONE\" to "
            f"each override of {SPOT_FILE}).",
        ]
    return lines


def launch_text(requests: FleetRequests, export_name: str = EXPORT_FILE,
                region: str | None = None) -> str:
    """The ``launch.txt`` of ``requests``: what the files are and the commands that launch,
    check and tear down the plan with ``deepvm`` or with the AWS CLI."""
    plan, options = requests.plan, requests.options
    region = region or plan.catalog_region
    pid = plan.plan_id
    flt = f"Name=tag:{TAG_PLAN},Values={pid}"
    live = "Name=instance-state-name,Values=pending,running,stopping,stopped"
    cmd = _shell_words(launch_command(plan, options, export_name, region))
    lines = [
        f"DeepVM Studio: EC2 Fleet requests of plan {pid}",
        "",
        f"Configuration: {plan.summary}",
        f"               ({plan.chosen_from} of {export_name}, sha256 {plan.export_sha256})",
        f"Catalog:       {plan.catalog_name} ({plan.catalog_region}, prices of "
        f"{plan.prices_date}): {plan.hourly_price_usd:.4f} USD/h at those prices",
        f"Tags:          {TAG_PLAN}={pid}, {TAG_ROLE}=<role>, {TAG_CATALOG}="
        f"{plan.catalog_name} on every instance and fleet",
        *zone_lines(requests, region),
        "",
        "Files:",
    ]
    if plan.spot is not None:
        where = (f"over {len(options.subnets)} subnet(s)" if options.subnets
                 else "in the launch template's subnet (give --subnet to diversify)")
        strategy = SPOT_ALLOCATION_STRATEGY
        if plan.pool_zones:
            strategy = POOL_ALLOCATION_STRATEGY
            where = (f"over the subnets of the spot pools' zones, in failover order "
                     f"{', '.join(plan.pool_zones)}")
        lines += [f"  {SPOT_FILE:<18} {plan.spot.describe()}: all in one AZ or none "
                  f"(MinTargetCapacity {plan.spot.count}), {strategy} {where}"]
    if plan.on_demand is not None:
        lines += [f"  {ON_DEMAND_FILE:<18} {plan.on_demand.describe()}"
                  + (": in the workers' AZ (step 3 below)" if plan.spot else "")]
    lines += [f"  {LAUNCH_FILE:<18} this file", ""]
    if not options.subnets:
        lines += ["No subnets were given: the fleets use the launch template's network settings "
                  "(or the default VPC),", "which may pin one AZ and leave the spot strategy "
                  "one pool. Export again with --subnet, once per AZ.", ""]
    lines += [
        "Launch with deepvm: it checks every count, puts the on-demand part in the workers' AZ",
        "and terminates everything of the plan when a step falls short (a dry run first):",
        "",
        f"  {cmd}",
        f"  {cmd} --yes",
        f"  deepvm status --plan {pid} --region {region}",
        f"  deepvm teardown --plan {pid} --region {region} --yes",
        "",
        "Or by hand with the AWS CLI, from this folder (check every count yourself: an",
        "instant fleet may launch fewer instances than asked and list why under \"Errors\"):",
        "",
    ]
    step = 1
    if plan.spot is not None:
        lines += [
            f"  {step}. Spot workers; expect {plan.spot.count} instance ids under \"Instances\":",
            f"     aws ec2 create-fleet --region {region} --cli-input-json file://{SPOT_FILE}",
            "",
        ]
        step += 1
    if plan.on_demand is not None and plan.spot is not None:
        lines += [
            f"  {step}. The workers' availability zone:",
            f"     AZ=$(aws ec2 describe-instances --region {region} --filters {flt} "
            f"Name=tag:{TAG_ROLE},Values=spot-worker {live} --query "
            "'Reservations[].Instances[].Placement.AvailabilityZone' --output text "
            "| tr '\\t' '\\n' | sort -u)",
            "",
        ]
        step += 1
        if options.subnets:
            subnets = " ".join(options.subnets)
            lines += [
                f"  {step}. The on-demand part in that AZ only (keep the overrides of its "
                "subnets; needs jq):",
                f"     KEEP=$(aws ec2 describe-subnets --region {region} --subnet-ids {subnets} "
                "--filters Name=availability-zone,Values=\"$AZ\" --query 'Subnets[].SubnetId' "
                "--output json)",
                "     jq --argjson keep \"$KEEP\" '.LaunchTemplateConfigs[].Overrides |= "
                f"map(select(.SubnetId as $s | $keep | index($s)))' {ON_DEMAND_FILE} "
                "> on-demand-in-az.json",
            ]
        else:
            lines += [
                f"  {step}. The on-demand part in that AZ only (needs jq):",
                "     jq --arg az \"$AZ\" '.LaunchTemplateConfigs[].Overrides |= "
                f"map(. + {{AvailabilityZone: $az}})' {ON_DEMAND_FILE} > on-demand-in-az.json",
            ]
        lines += [
            f"     aws ec2 create-fleet --region {region} --cli-input-json "
            "file://on-demand-in-az.json",
            f"     expect {plan.on_demand.count} instance id(s) under \"Instances\".",
            "",
        ]
        step += 1
    elif plan.on_demand is not None:
        lines += [
            f"  {step}. {plan.on_demand.describe()}; expect {plan.on_demand.count} instance "
            "id(s) under \"Instances\":",
            f"     aws ec2 create-fleet --region {region} --cli-input-json "
            f"file://{ON_DEMAND_FILE}",
            "",
        ]
        step += 1
    lines += [
        f"  {step}. Teardown (or when a step fell short): terminate every instance of the plan:",
        f"     aws ec2 describe-instances --region {region} --filters {flt} {live} "
        "--query 'Reservations[].Instances[].InstanceId' --output text "
        f"| xargs -r aws ec2 terminate-instances --region {region} --instance-ids",
        "",
    ]
    return "\n".join(lines)


# ----------------------------------------------------------------------------- bundle


@dataclass(frozen=True)
class FleetBundle:
    """What ``deepvm export --to ec2-fleet`` writes.

    Attributes:
        requests: the plan, the options and both bodies.
        files: file name -> content (``spot-workers.json``, ``on-demand.json`` when the plan
            has that part, ``launch.txt``).
        export_name: how ``launch.txt`` names the export file.
        export_data: the export file's bytes (added to the zip as ``export.json``).
    """

    requests: FleetRequests
    files: dict[str, bytes]
    export_name: str
    export_data: bytes = field(repr=False)

    @property
    def plan(self) -> FleetPlan:
        """The plan of the bundle."""
        return self.requests.plan

    def zip_bytes(self) -> bytes:
        """A zip of the folder ``deepvm-fleet-<plan id>/`` with the files and the export
        (``export.json``)."""
        folder = f"deepvm-fleet-{self.plan.plan_id}"
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for name, data in sorted(self.files.items()):
                archive.writestr(f"{folder}/{name}", data)
            archive.writestr(f"{folder}/{EXPORT_FILE}", self.export_data)
        return buffer.getvalue()


def _json_bytes(body: Mapping[str, Any]) -> bytes:
    import json

    return (json.dumps(body, indent=2) + "\n").encode("utf-8")


def build_bundle(export: Mapping[str, Any], options: RequestOptions, *,
                 data: bytes | None = None, export_name: str = EXPORT_FILE,
                 region: str | None = None) -> FleetBundle:
    """The fleet requests, ``launch.txt`` and (:meth:`FleetBundle.zip_bytes`) a zip of an
    export document. Pure: no AWS call, no file.

    Args:
        export: the export document (``deepvm recommend --format json``).
        options: launch templates, subnets, price caps.
        data: the export file's bytes (its SHA-256 gives the plan id); default the bytes the
            CLI and the dashboard write for ``export``.
        export_name: how ``launch.txt`` names the export file.
        region: the launch region in the commands; default the export's catalog region.
    """
    from deepvm_core.cloud.fleet.target import export_bytes

    raw = export_bytes(export) if data is None else data
    plan = plan_from_export(export, raw)
    requests = build_requests(plan, options)
    files: dict[str, bytes] = {}
    if requests.spot is not None:
        files[SPOT_FILE] = _json_bytes(requests.spot)
    if requests.on_demand is not None:
        files[ON_DEMAND_FILE] = _json_bytes(requests.on_demand)
    files[LAUNCH_FILE] = launch_text(requests, export_name, region).encode("utf-8")
    return FleetBundle(requests, files, export_name, raw)


def write_bundle(bundle: FleetBundle, out_dir: str | os.PathLike[str]) -> list[Path]:
    """Write the bundle's files into ``out_dir`` (created if needed), all or nothing: every
    file goes to a temporary file first, then each is renamed into place. A bundle file of an
    earlier export that this bundle does not have (``spot-workers.json`` of a plan without spot
    workers) is removed. Returns the written paths."""
    folder = Path(out_dir)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FleetInputError(f"cannot create {str(folder)!r}: {exc.strerror}") from None
    temps: list[tuple[Path, Path]] = []
    try:
        for name, data in bundle.files.items():
            temps.append((write_temp_beside(folder / name, data), folder / name))
        for tmp, target in temps:
            os.replace(tmp, target)
    except OSError as exc:
        for tmp, _ in temps:
            tmp.unlink(missing_ok=True)
        raise FleetInputError(f"cannot write into {str(folder)!r}: {exc.strerror}") from None
    for name in BUNDLE_FILES:
        if name not in bundle.files:
            (folder / name).unlink(missing_ok=True)
    return [target for _, target in temps]
