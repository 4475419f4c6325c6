"""The arguments of ``deepvm export --to ec2-fleet``, ``deepvm launch``, ``deepvm status`` and
``deepvm teardown``: their parsers (with the exit codes in every ``--help``), and the fleet
request options and AWS settings they give. The commands are :mod:`deepvm_core.cli.launch`'s.
"""

from __future__ import annotations

import argparse
import textwrap
from typing import Any

from deepvm_core.cloud.fleet.ec2 import (
    DEFAULT_MAX_ATTEMPTS,
    RETRY_MODES,
    AwsSettings,
    check_region,
)
from deepvm_core.cloud.fleet.requests import (
    RequestOptions,
    parse_subnet_zones,
    parse_subnets,
    parse_template,
)
from deepvm_core.cloud.fleet.zones import DEFAULT_SPOT_ZONES, SPOT_ZONE_MODES

EXIT_CODES_HELP = """exit codes:
  0    done (a dry run, a launch, a status, a teardown)
  1    launch failed after it began, and everything the plan launched was terminated;
       teardown could not confirm every instance shutting-down or terminated in time
  2    user error, nothing launched: bad argument or export, unknown launch template or
       subnet, no credentials, the plan already running, an AWS call refused before launch
  3    launch failed and the rollback could not confirm every instance terminated: the
       message lists them; run 'deepvm teardown --plan ID --yes'
  130  interrupted (Ctrl-C); a launch in progress is rolled back first"""

CHOSEN_HELP = ("The configuration launched is the export's 'chosen' one, else its first DeepVM "
               "recommendation ('deepvm[0]'). The plan id, tagged deepvm:plan on every "
               "instance and fleet with deepvm:role and deepvm:catalog, is the first 12 hex "
               "digits of the export file's SHA-256.")



def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} must be a positive number")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be >= 1")
    return value


def _add_request_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("export", metavar="EXPORT.json",
                   help="the JSON of 'deepvm recommend --format json' or of the dashboard's "
                        "'Download configuration'")
    p.add_argument("--gpu-template", required=True, metavar="NAME|lt-ID[:VERSION]",
                   help="launch template of the GPU VMs (spot workers, anchor), by name or id; "
                        "version $Latest unless given (NAME:3, NAME:$Default)")
    p.add_argument("--cpu-template", metavar="NAME|lt-ID[:VERSION]",
                   help="launch template of the memory nodes (needed for Tiering)")
    p.add_argument("--subnet", action="append", metavar="SUBNET[@ZONE]",
                   help="subnet to launch into; repeat (or separate with commas), one or more "
                        "per availability zone: the spot request is diversified over them "
                        "(launch default: the region's default subnets, one per AZ); a plan "
                        "with spot pools uses only its pools' zones, in failover order (export "
                        "needs each subnet's zone, SUBNET@ZONE)")
    p.add_argument("--spot-max-total-price", type=_positive_float, metavar="USD_PER_HOUR",
                   help="SpotOptions.MaxTotalPrice: most the spot workers may cost together, "
                        "USD per hour (default: PW minus the on-demand part, so that the "
                        "cluster stays within PW)")
    p.add_argument("--no-spot-price-cap", action="store_true",
                   help="set no SpotOptions.MaxTotalPrice (AWS discourages spot price caps)")
    p.add_argument("--spot-zones", choices=SPOT_ZONE_MODES, default=DEFAULT_SPOT_ZONES,
                   help="where the spot workers go when the catalog has per-zone prices: "
                        "'planned' pins the zone whose price the plan used (its zone ID "
                        "resolved to your account's zone name), 'by-price' orders every zone "
                        "by price (capacity-optimized-prioritized), 'any' does not restrict "
                        f"them (default: {DEFAULT_SPOT_ZONES})")
    p.add_argument("--on-demand-max-total-price", type=_positive_float, metavar="USD_PER_HOUR",
                   help="OnDemandOptions.MaxTotalPrice, USD per hour (default: not set)")


def _add_aws_args(p: argparse.ArgumentParser, region_help: str) -> None:
    p.add_argument("--region", help=region_help)
    p.add_argument("--profile", help="AWS profile of the shared config (default: the standard "
                                     "credential chain; AWS_ENDPOINT_URL_EC2 is honoured)")
    p.add_argument("--max-attempts", type=_positive_int, default=DEFAULT_MAX_ATTEMPTS,
                   metavar="N", help="botocore attempts per call, retries included (default: "
                                     f"{DEFAULT_MAX_ATTEMPTS}); throttling is retried further")
    p.add_argument("--retry-mode", choices=RETRY_MODES, default="standard",
                   help="botocore retry mode (default: standard)")


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """Wraps the description, keeps the epilog (the exit codes) as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("exit codes:"):
            return super()._fill_text(text, width, indent)
        return textwrap.fill(" ".join(text.split()), width, initial_indent=indent,
                             subsequent_indent=indent, break_on_hyphens=False)


def _command(subparsers: Any, name: str, summary: str, description: str) -> Any:
    """One of these commands' parsers: ``summary`` in the command list, ``description`` wrapped
    and the exit codes kept as written (:class:`_Formatter`)."""
    return subparsers.add_parser(name, help=summary, description=description,
                                 formatter_class=_Formatter, epilog=EXIT_CODES_HELP)


def add_launch_parsers(subparsers: Any) -> None:
    """Add ``export``, ``launch``, ``status`` and ``teardown`` to ``argparse`` sub-parsers."""
    ex = _command(
        subparsers, "export",
        "write EC2 Fleet requests (and launch.txt) for an export's configuration",
        "Write the two CreateFleet request bodies of an export's configuration "
        "(spot-workers.json: the spot GPU workers, all in one AZ or none; on-demand.json: the "
        "anchor or the memory nodes) and launch.txt with the 'aws ec2 create-fleet "
        "--cli-input-json' commands, into --out. Every body is checked against botocore's "
        "CreateFleet model first; no AWS call. " + CHOSEN_HELP)
    ex.add_argument("--to", required=True, choices=("ec2-fleet",), help="output kind")
    _add_request_args(ex)
    ex.add_argument("--out", required=True, metavar="DIR", help="output folder")
    ex.add_argument("--region", help="region in launch.txt's commands (default: the export's "
                                     "catalog region)")

    la = _command(
        subparsers, "launch", "launch an export's configuration on EC2 (a dry run without --yes)",
        "Without --yes: check the launch templates, subnets and that the plan is not running, "
        "send both CreateFleet requests with DryRun, print what would launch and its hourly "
        "price; nothing is launched. With --yes: launch the spot workers, check that exactly "
        "n_spot run in one AZ, then launch the on-demand part in that AZ and check it; if any "
        "step falls short or fails, terminate everything the plan launched and exit 1. "
        + CHOSEN_HELP)
    _add_request_args(la)
    _add_aws_args(la, "AWS region (default: the export's catalog region)")
    la.add_argument("--yes", action="store_true", help="really launch (default: dry run)")
    la.add_argument("--wait-seconds", type=_positive_float, default=600.0, metavar="S",
                    help="how long to wait for each part to run (default: 600)")

    st = _command(
        subparsers, "status", "list a launched plan's instances by role, state and AZ",
        "List the instances tagged deepvm:plan=ID: role, id, type, lifecycle, state, "
        "availability zone.")
    st.add_argument("--plan", required=True, metavar="ID", help="plan id (from launch)")
    _add_aws_args(st, "AWS region (default: the profile's)")

    td = _command(
        subparsers, "teardown", "terminate a launched plan's instances (a listing without --yes)",
        "Terminate every pending, running, stopping or stopped instance tagged deepvm:plan=ID "
        "and wait until each is shutting-down or terminated. Without --yes: list what would be "
        "terminated, terminate nothing.")
    td.add_argument("--plan", required=True, metavar="ID", help="plan id (from launch)")
    _add_aws_args(td, "AWS region (default: the profile's)")
    td.add_argument("--yes", action="store_true", help="really terminate (default: list only)")
    td.add_argument("--wait-seconds", type=_positive_float, default=300.0, metavar="S",
                    help="how long to wait for shutting-down or terminated (default: 300)")



def request_options(args: argparse.Namespace) -> RequestOptions:
    """The fleet request options of ``--gpu-template``, ``--cpu-template``, ``--subnet`` and the
    price caps."""
    return RequestOptions(
        gpu_template=parse_template(args.gpu_template, "--gpu-template"),
        cpu_template=(parse_template(args.cpu_template, "--cpu-template")
                      if args.cpu_template else None),
        subnets=parse_subnets(args.subnet),
        spot_max_total_price_usd_per_hour=args.spot_max_total_price,
        on_demand_max_total_price_usd_per_hour=args.on_demand_max_total_price,
        subnet_zones=parse_subnet_zones(args.subnet),
        cap_spot_at_pw=not args.no_spot_price_cap, spot_zones=args.spot_zones)


def aws_settings(args: argparse.Namespace) -> AwsSettings:
    """The AWS session settings of ``--region``, ``--profile``, ``--max-attempts`` and
    ``--retry-mode``."""
    return AwsSettings(region=check_region(args.region) if args.region else None,
                       profile=args.profile, max_attempts=args.max_attempts,
                       retry_mode=args.retry_mode)

