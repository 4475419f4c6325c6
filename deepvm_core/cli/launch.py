"""``deepvm export --to ec2-fleet``, ``deepvm launch``, ``deepvm status``, ``deepvm teardown``.

Wiring into the main CLI::

    from deepvm_core.cli.launch import LAUNCH_COMMANDS, add_launch_parsers, run_launch_command
    add_launch_parsers(subparsers)
    ...
    if args.command in LAUNCH_COMMANDS:
        return run_launch_command(args)

Progress goes to stderr, one line per step; results to stdout. Exit codes are in
:data:`EXIT_CODES_HELP` (shown by ``--help``). This module also runs on its own:
``python -m deepvm_core.cli.launch launch EXPORT.json --gpu-template NAME``.
"""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
from collections.abc import Sequence
from typing import Any, TextIO

from deepvm_core.cli.common import Parser
from deepvm_core.cloud.fleet.bundle import build_bundle, write_bundle
from deepvm_core.cloud.fleet.ec2 import (
    DEFAULT_MAX_ATTEMPTS,
    RETRY_MODES,
    AwsSettings,
    Ec2,
    check_region,
    redact,
)
from deepvm_core.cloud.fleet.errors import (
    EXIT_INTERRUPTED,
    EXIT_LAUNCH_FAILED,
    EXIT_OK,
    EXIT_ROLLBACK_INCOMPLETE,
    LaunchFailed,
    TeardownIncomplete,
)
from deepvm_core.cloud.fleet.manage import (
    PollSettings,
    format_instances,
    plan_status,
    sort_key,
    summarize,
    teardown,
)
from deepvm_core.cloud.fleet.requests import (
    RequestOptions,
    effective_spot_cap,
    parse_subnet_zones,
    parse_subnets,
    parse_template,
)
from deepvm_core.cloud.fleet.target import FleetPlan, check_plan_id, plan_from_export, read_export
from deepvm_core.cloud.fleet.zones import DEFAULT_SPOT_ZONES, SPOT_ZONE_MODES
from deepvm_core.errors import EXIT_USAGE, DeepVMError

LAUNCH_COMMANDS = ("export", "launch", "status", "teardown")

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


def add_launch_parsers(subparsers: Any) -> None:
    """Add ``export``, ``launch``, ``status`` and ``teardown`` to ``argparse`` sub-parsers."""
    raw = _Formatter
    ex = subparsers.add_parser(
        "export", help="write EC2 Fleet requests (and launch.txt) for an export's configuration",
        formatter_class=raw, epilog=EXIT_CODES_HELP,
        description="Write the two CreateFleet request bodies of an export's configuration "
                    "(spot-workers.json: the spot GPU workers, all in one AZ or none; "
                    "on-demand.json: the anchor or the memory nodes) and launch.txt with the "
                    "'aws ec2 create-fleet --cli-input-json' commands, into --out. Every body "
                    "is checked against botocore's CreateFleet model first; no AWS call. "
                    + CHOSEN_HELP)
    ex.add_argument("--to", required=True, choices=("ec2-fleet",), help="output kind")
    _add_request_args(ex)
    ex.add_argument("--out", required=True, metavar="DIR", help="output folder")
    ex.add_argument("--region", help="region in launch.txt's commands (default: the export's "
                                     "catalog region)")

    la = subparsers.add_parser(
        "launch", help="launch an export's configuration on EC2 (a dry run without --yes)",
        formatter_class=raw, epilog=EXIT_CODES_HELP,
        description="Without --yes: check the launch templates, subnets and that the plan is "
                    "not running, send both CreateFleet requests with DryRun, print what would "
                    "launch and its hourly price; nothing is launched. With --yes: launch the "
                    "spot workers, check that exactly n_spot run in one AZ, then launch the "
                    "on-demand part in that AZ and check it; if any step falls short or fails, "
                    "terminate everything the plan launched and exit 1. " + CHOSEN_HELP)
    _add_request_args(la)
    _add_aws_args(la, "AWS region (default: the export's catalog region)")
    la.add_argument("--yes", action="store_true", help="really launch (default: dry run)")
    la.add_argument("--wait-seconds", type=_positive_float, default=600.0, metavar="S",
                    help="how long to wait for each part to run (default: 600)")

    st = subparsers.add_parser(
        "status", help="list a launched plan's instances by role, state and AZ",
        formatter_class=raw, epilog=EXIT_CODES_HELP,
        description="List the instances tagged deepvm:plan=ID: role, id, type, lifecycle, "
                    "state, availability zone.")
    st.add_argument("--plan", required=True, metavar="ID", help="plan id (from launch)")
    _add_aws_args(st, "AWS region (default: the profile's)")

    td = subparsers.add_parser(
        "teardown", help="terminate a launched plan's instances (a listing without --yes)",
        formatter_class=raw, epilog=EXIT_CODES_HELP,
        description="Terminate every pending, running, stopping or stopped instance tagged "
                    "deepvm:plan=ID and wait until each is shutting-down or terminated. "
                    "Without --yes: list what would be terminated, terminate nothing.")
    td.add_argument("--plan", required=True, metavar="ID", help="plan id (from launch)")
    _add_aws_args(td, "AWS region (default: the profile's)")
    td.add_argument("--yes", action="store_true", help="really terminate (default: list only)")
    td.add_argument("--wait-seconds", type=_positive_float, default=300.0, metavar="S",
                    help="how long to wait for shutting-down or terminated (default: 300)")


# ----------------------------------------------------------------------------- commands


class _Out:
    """stdout for results, stderr for progress and errors (prefixed ``deepvm CMD:``)."""

    def __init__(self, command: str, stdout: TextIO, stderr: TextIO) -> None:
        self.prefix = f"deepvm {command}"
        self.stdout = stdout
        self.stderr = stderr

    def print(self, line: str = "") -> None:
        print(line, file=self.stdout)

    def progress(self, line: str) -> None:
        print(f"{self.prefix}: {redact(line)}", file=self.stderr, flush=True)

    def error(self, message: str) -> None:
        print(f"{self.prefix}: error: {redact(message)}", file=self.stderr, flush=True)


def _options(args: argparse.Namespace) -> RequestOptions:
    return RequestOptions(
        gpu_template=parse_template(args.gpu_template, "--gpu-template"),
        cpu_template=(parse_template(args.cpu_template, "--cpu-template")
                      if args.cpu_template else None),
        subnets=parse_subnets(args.subnet),
        spot_max_total_price_usd_per_hour=args.spot_max_total_price,
        on_demand_max_total_price_usd_per_hour=args.on_demand_max_total_price,
        subnet_zones=parse_subnet_zones(args.subnet),
        cap_spot_at_pw=not args.no_spot_price_cap, spot_zones=args.spot_zones)


def _settings(args: argparse.Namespace) -> AwsSettings:
    return AwsSettings(region=check_region(args.region) if args.region else None,
                       profile=args.profile, max_attempts=args.max_attempts,
                       retry_mode=args.retry_mode)


def _price_line(plan: FleetPlan, options: RequestOptions) -> str:
    caps = []
    spot_cap = effective_spot_cap(plan, options) if plan.spot is not None else None
    if spot_cap is not None:
        caps.append(f"spot capped at {spot_cap:g} USD/h")
    if options.on_demand_max_total_price_usd_per_hour is not None:
        caps.append(f"on-demand capped at {options.on_demand_max_total_price_usd_per_hour:g} "
                    "USD/h")
    return (f"Hourly price: {plan.hourly_price_usd:.4f} USD/h at the prices of catalog "
            f"{plan.catalog_name} ({plan.prices_date}); spot prices change; "
            + (", ".join(caps) if caps else "no price cap"))


def _cmd_export(args: argparse.Namespace, out: _Out) -> int:
    doc, data = read_export(args.export)
    options = _options(args)
    # launch.txt's commands run from the output folder: name the export relative to it.
    export_name = os.path.relpath(os.path.abspath(args.export), os.path.abspath(args.out))
    bundle = build_bundle(doc, options, data=data, export_name=export_name,
                          region=check_region(args.region) if args.region else None)
    paths = write_bundle(bundle, args.out)
    plan = bundle.plan
    out.print(f"Plan {plan.plan_id}: {plan.summary} ({plan.chosen_from} of {args.export})")
    for path in paths:
        out.print(f"wrote {path}")
    if not options.subnets:
        out.print("note: no --subnet given: the fleets use the launch template's network "
                  "settings; give --subnet once per AZ to diversify the spot request")
    return EXIT_OK


def _cmd_launch(args: argparse.Namespace, out: _Out) -> int:
    from deepvm_core.cloud.fleet.launch import launch, prepare

    doc, data = read_export(args.export)
    plan = plan_from_export(doc, data)
    options = _options(args)
    for part in plan.parts:
        options.template_for(part)  # a missing --cpu-template fails before any AWS call
    settings = _settings(args)
    ec2 = Ec2.open(settings, default_region=plan.catalog_region)
    out.progress(f"plan {plan.plan_id}: {plan.summary} ({plan.chosen_from} of {args.export}); "
                 f"region {ec2.region}")
    if ec2.region != plan.catalog_region:
        out.progress(f"note: the prices are the catalog's ({plan.catalog_region}), not "
                     f"{ec2.region}'s")
    try:
        pre = prepare(ec2, plan, options, progress=out.progress)
    except KeyboardInterrupt:
        out.error("interrupted; nothing was launched")
        return EXIT_INTERRUPTED
    plan = pre.plan  # the spot workers' zones resolved (--spot-zones)
    templates = {part.role: options.template_for(part) for part in plan.parts}
    azs = ", ".join(pre.availability_zones)
    where = "default subnets" if pre.default_subnets else "subnets"
    if not args.yes:
        out.print(f"Plan {plan.plan_id}: {plan.summary}")
        out.print(f"Region {ec2.region}; {len(pre.subnet_azs)} {where} in {azs}")
        if plan.pool_zones and plan.planned_zone_id and args.spot_zones != "any":
            ids = (plan.spot_zone_ids if args.spot_zones == "by-price"
                   else (plan.planned_zone_id,))
            out.print(f"Spot zone(s): zone ID {', '.join(ids)} is {', '.join(plan.pool_zones)} "
                      "in this account (capacity-optimized-prioritized)")
        elif plan.pool_zones:
            out.print(f"Spot pools of the plan, in failover order: "
                      f"{', '.join(plan.pool_zones)} (capacity-optimized-prioritized)")
        out.print("Would launch, in this order:")
        step = 1
        if plan.spot is not None:
            out.print(f"  {step}. {plan.spot.describe()} from launch template "
                      f"{templates[plan.spot.role]}: all in one AZ or none")
            step += 1
        if plan.on_demand is not None:
            place = "in the workers' AZ" if plan.spot is not None else "in one AZ"
            out.print(f"  {step}. {plan.on_demand.describe()} from launch template "
                      f"{templates[plan.on_demand.role]}: {place}")
        out.print(_price_line(plan, options))
        out.print("DryRun: AWS would accept the CreateFleet request(s). Nothing was launched; "
                  "add --yes to launch.")
        return EXIT_OK
    poll = PollSettings(wait_timeout_s=args.wait_seconds)
    try:
        result = launch(ec2, pre, poll=poll, progress=out.progress)
    except KeyboardInterrupt:  # a second Ctrl-C, during the rollback
        out.error(f"interrupted during the rollback: instances of plan {plan.plan_id} may "
                  f"still run; run 'deepvm teardown --plan {plan.plan_id} --region "
                  f"{ec2.region} --yes'")
        return EXIT_ROLLBACK_INCOMPLETE
    except LaunchFailed as exc:
        out.error(str(exc))
        if not exc.rollback.complete:
            out.error(f"run 'deepvm teardown --plan {plan.plan_id} --region {ec2.region} "
                      "--yes' and check the EC2 console")
        return exc.exit_code
    out.print(f"Launched plan {plan.plan_id} in {result.availability_zone} ({ec2.region}): "
              f"{len(result.instances)} instances, {plan.hourly_price_usd:.4f} USD/h at the "
              "catalog's prices")
    for launched in result.parts:
        out.print(f"  {launched.part.describe()}: fleet {launched.fleet_id}")
    for line in format_instances(sorted(result.instances, key=sort_key)):
        out.print(f"  {line}")
    out.print(f"Status:   deepvm status --plan {plan.plan_id} --region {ec2.region}")
    out.print(f"Teardown: deepvm teardown --plan {plan.plan_id} --region {ec2.region} --yes")
    return EXIT_OK


def _cmd_status(args: argparse.Namespace, out: _Out) -> int:
    plan_id = check_plan_id(args.plan)
    ec2 = Ec2.open(_settings(args))
    status = plan_status(ec2, plan_id)
    if not status.instances:
        out.print(f"Plan {plan_id} in {ec2.region}: no instances (never launched here, or "
                  "terminated long ago)")
        return EXIT_OK
    out.print(f"Plan {plan_id} in {ec2.region}: {len(status.instances)} instance(s), "
              f"{len(status.live)} live; {summarize(status.instances)}")
    for line in format_instances(status.instances):
        out.print(f"  {line}")
    return EXIT_OK


def _cmd_teardown(args: argparse.Namespace, out: _Out) -> int:
    plan_id = check_plan_id(args.plan)
    ec2 = Ec2.open(_settings(args))
    poll = PollSettings(terminate_timeout_s=args.wait_seconds)
    try:
        result = teardown(ec2, plan_id, yes=args.yes, poll=poll, progress=out.progress)
    except TeardownIncomplete as exc:
        out.error(str(exc))
        return EXIT_LAUNCH_FAILED
    if not result.targets:
        out.print(f"Plan {plan_id} in {ec2.region}: nothing to terminate (no pending, running, "
                  "stopping or stopped instance)")
        return EXIT_OK
    if result.dry_run:
        out.print(f"Would terminate {len(result.targets)} instance(s) of plan {plan_id} in "
                  f"{ec2.region}: {summarize(result.targets)}")
        for line in format_instances(result.targets):
            out.print(f"  {line}")
        out.print("Nothing was terminated; add --yes to terminate them.")
        return EXIT_OK
    after = [i for i in plan_status(ec2, plan_id).instances if i.instance_id in
             set(result.terminated)]
    out.print(f"Terminated {len(result.terminated)} instance(s) of plan {plan_id} in "
              f"{ec2.region}: {summarize(after)}")
    return EXIT_OK


def run_launch_command(args: argparse.Namespace, *, stdout: TextIO | None = None,
                       stderr: TextIO | None = None) -> int:
    """Run ``export``, ``launch``, ``status`` or ``teardown``; returns the exit code (see
    :data:`EXIT_CODES_HELP`). Errors are one line on stderr."""
    out = _Out(args.command, stdout or sys.stdout, stderr or sys.stderr)
    commands = {"export": _cmd_export, "launch": _cmd_launch, "status": _cmd_status,
                "teardown": _cmd_teardown}
    try:
        return commands[args.command](args, out)
    except DeepVMError as exc:
        out.error(str(exc))
        return EXIT_USAGE
    except KeyboardInterrupt:
        out.error("interrupted")
        return EXIT_INTERRUPTED


def main(argv: Sequence[str] | None = None) -> int:
    """These commands on their own (``python -m deepvm_core.cli.launch``)."""
    parser = Parser(prog="deepvm", description="EC2 Fleet: export, launch, status, "
                                                       "teardown")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    add_launch_parsers(sub)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    return run_launch_command(args)


if __name__ == "__main__":
    sys.exit(main())
