"""``deepvm export --to ec2-fleet``, ``deepvm launch``, ``deepvm status``, ``deepvm teardown``.

Wiring into the main CLI::

    from deepvm_core.cli.launch import LAUNCH_COMMANDS, run_launch_command
    from deepvm_core.cli.launch_args import add_launch_parsers
    add_launch_parsers(subparsers)
    ...
    if args.command in LAUNCH_COMMANDS:
        return run_launch_command(args)

Progress goes to stderr, one line per step; results to stdout. Exit codes are in
:data:`~deepvm_core.cli.launch_args.EXIT_CODES_HELP` (shown by ``--help``). This module also
runs on its own: ``python -m deepvm_core.cli.launch launch EXPORT.json --gpu-template NAME``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TextIO

from deepvm_core.cli.common import Parser, run_standalone
from deepvm_core.cli.launch_args import add_launch_parsers, aws_settings, request_options
from deepvm_core.cloud.fleet.bundle import build_bundle, write_bundle
from deepvm_core.cloud.fleet.ec2 import Ec2, check_region, redact
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
from deepvm_core.cloud.fleet.requests import RequestOptions, effective_spot_cap
from deepvm_core.cloud.fleet.target import FleetPlan, check_plan_id, plan_from_export, read_export
from deepvm_core.errors import EXIT_USAGE, DeepVMError

LAUNCH_COMMANDS = ("export", "launch", "status", "teardown")


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
    options = request_options(args)
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
    options = request_options(args)
    for part in plan.parts:
        options.template_for(part)  # a missing --cpu-template fails before any AWS call
    settings = aws_settings(args)
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
    ec2 = Ec2.open(aws_settings(args))
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
    ec2 = Ec2.open(aws_settings(args))
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
    :data:`~deepvm_core.cli.launch_args.EXIT_CODES_HELP`). Errors are one line on stderr."""
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
    return run_standalone(parser, argv, run_launch_command)


if __name__ == "__main__":
    sys.exit(main())
