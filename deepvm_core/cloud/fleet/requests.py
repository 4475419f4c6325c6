"""EC2 Fleet request bodies of a plan, ``launch.txt``, and the export folder (or zip).

One EC2 Fleet cannot fix which launch template is spot and which on-demand (an override has no
market field), so a configuration becomes two ``CreateFleet`` requests of ``Type: instant``:

* ``spot-workers.json``: the spot GPU workers. ``TotalTargetCapacity`` = ``SpotTargetCapacity``
  = n_spot, ``DefaultTargetCapacityType: spot``; ``SpotOptions``: ``AllocationStrategy:
  price-capacity-optimized``, ``SingleAvailabilityZone`` and ``SingleInstanceType: true``,
  ``MinTargetCapacity`` = n_spot, so all workers land together in one AZ or none launch. One
  override per subnet (an ``instant`` fleet takes one subnet per override), so the allocation
  strategy can pick the deepest pool among the AZs.
* ``on-demand.json``: the anchor GPU VM (Single Anchor) or the memory nodes (Tiering), with
  ``OnDemandTargetCapacity``, ``SingleAvailabilityZone`` and ``MinTargetCapacity``. It belongs
  in the AZ where the workers landed (checkpoint traffic stays in one AZ; crossing AZs costs
  about 0.02 USD per GB): ``deepvm launch`` keeps only the subnets of that AZ, and
  ``launch.txt`` shows how to do it by hand.

``MaxPrice`` is never set (AWS discourages it for spot); ``MaxTotalPrice`` (USD per hour for
the whole fleet) only when the user asks. Every instance and both fleets carry the tags
``deepvm:plan``, ``deepvm:role`` and ``deepvm:catalog``. Every body is checked against
botocore's service model of ``CreateFleet`` before it is returned or written.

:func:`build_bundle` is pure (no AWS call, no file): the dashboard uses it as is.
"""

from __future__ import annotations

import functools
import io
import os
import re
import tempfile
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deepvm_core.cloud.fleet.errors import FleetInputError
from deepvm_core.cloud.fleet.target import (
    TAG_CATALOG,
    TAG_PLAN,
    TAG_ROLE,
    FleetPart,
    FleetPlan,
    plan_from_export,
)

SPOT_FILE = "spot-workers.json"
ON_DEMAND_FILE = "on-demand.json"
LAUNCH_FILE = "launch.txt"
EXPORT_FILE = "export.json"
BUNDLE_FILES = (SPOT_FILE, ON_DEMAND_FILE, LAUNCH_FILE)

SPOT_ALLOCATION_STRATEGY = "price-capacity-optimized"
ON_DEMAND_ALLOCATION_STRATEGY = "lowest-price"
DEFAULT_TEMPLATE_VERSION = "$Latest"

_TEMPLATE_ID = re.compile(r"^lt-[0-9a-f]{8,17}$")
_TEMPLATE_NAME = re.compile(r"^[a-zA-Z0-9().\-/_]{3,128}$")
_TEMPLATE_VERSION = re.compile(r"^(\$Latest|\$Default|[1-9][0-9]*)$")
_SUBNET_ID = re.compile(r"^subnet-[0-9a-f]{8,17}$")


# ----------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class TemplateRef:
    """A launch template by name or id (``lt-...``), and a version.

    Attributes:
        ref: the template's name or id.
        version: ``$Latest`` (default), ``$Default`` or a version number.
    """

    ref: str
    version: str = DEFAULT_TEMPLATE_VERSION

    @property
    def is_id(self) -> bool:
        """True when :attr:`ref` is a template id (``lt-0123...``)."""
        return bool(_TEMPLATE_ID.match(self.ref))

    def specification(self) -> dict[str, str]:
        """The ``LaunchTemplateSpecification`` of a fleet request."""
        key = "LaunchTemplateId" if self.is_id else "LaunchTemplateName"
        return {key: self.ref, "Version": self.version}

    def __str__(self) -> str:
        return f"{self.ref} ({self.version})"

    def argument(self) -> str:
        """How ``--gpu-template`` takes it back: ``NAME``, or ``NAME:VERSION`` when the
        version is not ``$Latest``."""
        return self.ref if self.version == DEFAULT_TEMPLATE_VERSION else \
            f"{self.ref}:{self.version}"


def parse_template(text: str, option: str = "--gpu-template") -> TemplateRef:
    """``NAME``, ``lt-ID``, ``NAME:VERSION`` or ``lt-ID:VERSION`` (version ``$Latest``,
    ``$Default`` or a number; default ``$Latest``)."""
    ref, _, version = text.strip().partition(":")
    version = version or DEFAULT_TEMPLATE_VERSION
    if version.lower() in ("latest", "default"):
        version = "$" + version.capitalize()
    if ref.startswith("lt-") and not _TEMPLATE_ID.match(ref):
        raise FleetInputError(f"{option} {text!r}: {ref!r} is not a launch template id "
                              "(lt- and 8 to 17 hex digits)")
    if not (_TEMPLATE_ID.match(ref) or _TEMPLATE_NAME.match(ref)):
        raise FleetInputError(f"{option} {text!r}: {ref!r} is not a launch template name (3 to "
                              "128 letters, digits and ( ) . - / _) or id (lt-...)")
    if not _TEMPLATE_VERSION.match(version):
        raise FleetInputError(f"{option} {text!r}: version {version!r} is not $Latest, "
                              "$Default or a number")
    return TemplateRef(ref, version)


def parse_subnets(values: Sequence[str] | None) -> tuple[str, ...]:
    """Subnet ids from repeated and comma-separated ``--subnet`` values, in order, once each."""
    subnets: list[str] = []
    for value in values or ():
        for item in value.split(","):
            subnet = item.strip()
            if not subnet:
                continue
            if not _SUBNET_ID.match(subnet):
                raise FleetInputError(f"--subnet {subnet!r} is not a subnet id (subnet- and 8 "
                                      "to 17 hex digits)")
            if subnet not in subnets:
                subnets.append(subnet)
    return tuple(subnets)


def _price_text(value: float | None, option: str) -> str | None:
    if value is None:
        return None
    if not value > 0 or value != value or value == float("inf"):
        raise FleetInputError(f"{option} {value!r} must be a positive number of USD per hour")
    return format(value, ".6g")


@dataclass(frozen=True)
class RequestOptions:
    """The user's choices for the fleet requests.

    Attributes:
        gpu_template: launch template of the GPU VMs (spot workers and the anchor).
        cpu_template: launch template of the memory nodes (Tiering only).
        subnets: subnet ids, one or more per AZ to diversify over; empty: the template's
            network settings (or the default VPC).
        spot_max_total_price_usd_per_hour: ``SpotOptions.MaxTotalPrice``; ``None``: not set.
        on_demand_max_total_price_usd_per_hour: ``OnDemandOptions.MaxTotalPrice``; ``None``:
            not set.
    """

    gpu_template: TemplateRef
    cpu_template: TemplateRef | None = None
    subnets: tuple[str, ...] = ()
    spot_max_total_price_usd_per_hour: float | None = None
    on_demand_max_total_price_usd_per_hour: float | None = None

    def template_for(self, part: FleetPart) -> TemplateRef:
        """The launch template of ``part``; an error when the plan needs a CPU template
        and none was given."""
        if part.uses_gpu_template:
            return self.gpu_template
        if self.cpu_template is None:
            raise FleetInputError(f"the configuration has {part.describe()}: give their launch "
                                  "template with --cpu-template")
        return self.cpu_template


# ----------------------------------------------------------------------------- bodies


def _tags(plan: FleetPlan, part: FleetPart) -> list[dict[str, str]]:
    return [{"Key": TAG_PLAN, "Value": plan.plan_id}, {"Key": TAG_ROLE, "Value": part.role},
            {"Key": TAG_CATALOG, "Value": plan.catalog_name}]


def part_request(plan: FleetPlan, part: FleetPart, options: RequestOptions,
                 subnets: Sequence[str] | None = None) -> dict[str, Any]:
    """The ``CreateFleet`` body of one part (validated).

    Args:
        subnets: the subnets of the overrides; default ``options.subnets``.
    """
    template = options.template_for(part)
    chosen_subnets = options.subnets if subnets is None else tuple(subnets)
    overrides: list[dict[str, Any]] = (
        [{"InstanceType": part.instance_type, "SubnetId": s} for s in chosen_subnets]
        or [{"InstanceType": part.instance_type}])
    n = part.count
    body: dict[str, Any] = {"Type": "instant"}
    if part.market == "spot":
        body["TargetCapacitySpecification"] = {
            "TotalTargetCapacity": n, "SpotTargetCapacity": n, "OnDemandTargetCapacity": 0,
            "DefaultTargetCapacityType": "spot"}
        spot: dict[str, Any] = {
            "AllocationStrategy": SPOT_ALLOCATION_STRATEGY, "SingleInstanceType": True,
            "SingleAvailabilityZone": True, "MinTargetCapacity": n}
        price = _price_text(options.spot_max_total_price_usd_per_hour,
                            "--spot-max-total-price")
        if price is not None:
            spot["MaxTotalPrice"] = price
        body["SpotOptions"] = spot
    else:
        body["TargetCapacitySpecification"] = {
            "TotalTargetCapacity": n, "OnDemandTargetCapacity": n, "SpotTargetCapacity": 0,
            "DefaultTargetCapacityType": "on-demand"}
        on_demand: dict[str, Any] = {
            "AllocationStrategy": ON_DEMAND_ALLOCATION_STRATEGY, "SingleInstanceType": True,
            "SingleAvailabilityZone": True, "MinTargetCapacity": n}
        price = _price_text(options.on_demand_max_total_price_usd_per_hour,
                            "--on-demand-max-total-price")
        if price is not None:
            on_demand["MaxTotalPrice"] = price
        body["OnDemandOptions"] = on_demand
    body["LaunchTemplateConfigs"] = [{
        "LaunchTemplateSpecification": template.specification(), "Overrides": overrides}]
    tags = _tags(plan, part)
    body["TagSpecifications"] = [{"ResourceType": "instance", "Tags": tags},
                                 {"ResourceType": "fleet", "Tags": list(tags)}]
    validate_request(body)
    return body


@functools.lru_cache(maxsize=1)
def _create_fleet_shape() -> Any:
    try:
        import botocore.session
    except ImportError:
        raise FleetInputError("botocore is needed to check fleet requests: pip install "
                              "'deepvm-studio[aws]'") from None
    model = botocore.session.get_session().get_service_model("ec2")
    return model.operation_model("CreateFleet").input_shape


def validate_request(body: Mapping[str, Any]) -> None:
    """Check ``body`` against botocore's EC2 service model of ``CreateFleet``; raises
    :class:`FleetInputError` with botocore's report when it does not fit."""
    from botocore.validate import ParamValidator

    report = ParamValidator().validate(dict(body), _create_fleet_shape())
    if report.has_errors():
        problems = "; ".join(report.generate_report().splitlines())
        raise FleetInputError(f"the CreateFleet request is invalid: {problems}")


@dataclass(frozen=True)
class FleetRequests:
    """The request bodies of a plan (``None`` for a part the plan does not have)."""

    plan: FleetPlan
    options: RequestOptions
    spot: dict[str, Any] | None
    on_demand: dict[str, Any] | None


def build_requests(plan: FleetPlan, options: RequestOptions) -> FleetRequests:
    """Both ``CreateFleet`` bodies of ``plan`` (validated)."""
    spot = part_request(plan, plan.spot, options) if plan.spot else None
    on_demand = part_request(plan, plan.on_demand, options) if plan.on_demand else None
    return FleetRequests(plan, options, spot, on_demand)


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
        words += ["--subnet", subnet]
    words += ["--region", region or plan.catalog_region]
    if options.spot_max_total_price_usd_per_hour is not None:
        words += ["--spot-max-total-price", f"{options.spot_max_total_price_usd_per_hour:g}"]
    if options.on_demand_max_total_price_usd_per_hour is not None:
        words += ["--on-demand-max-total-price",
                  f"{options.on_demand_max_total_price_usd_per_hour:g}"]
    return words


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
        "",
        "Files:",
    ]
    if plan.spot is not None:
        where = (f"over {len(options.subnets)} subnet(s)" if options.subnets
                 else "in the launch template's subnet (give --subnet to diversify)")
        lines += [f"  {SPOT_FILE:<18} {plan.spot.describe()}: all in one AZ or none "
                  f"(MinTargetCapacity {plan.spot.count}), {SPOT_ALLOCATION_STRATEGY} {where}"]
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
            fd, tmp_name = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
            temps.append((Path(tmp_name), folder / name))
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
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
