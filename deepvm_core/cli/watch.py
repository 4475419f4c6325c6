"""``deepvm ledger PLAN`` (a watched plan's ledger: table or JSON) and ``deepvm watch PLAN.json``
(the controller, :mod:`deepvm_core.cloud.fleet.watch`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from deepvm_core.cli.launch_args import (
    CHOSEN_HELP,
    _add_aws_args,
    _add_request_args,
    _command,
    _positive_float,
    aws_settings,
    request_options,
)
from deepvm_core.cloud.fleet.ec2 import Ec2, redact
from deepvm_core.cloud.fleet.errors import LaunchFailed
from deepvm_core.cloud.fleet.ledger_file import ledger_path, read_ledger
from deepvm_core.cloud.fleet.ledger_report import (
    ledger_table,
    ledger_to_dict,
    summarize,
    summary_lines,
)
from deepvm_core.cloud.fleet.manage import LIVE_STATES, PollSettings, plan_instances
from deepvm_core.cloud.fleet.target import PLAN_ID_PATTERN, plan_from_export, read_export
from deepvm_core.cloud.fleet.watch import (
    DEFAULT_INTERVAL_SECONDS,
    DEFAULT_POLICY,
    WatchSettings,
    open_controller,
)
from deepvm_core.cloud.fleet.watch_lock import acquire_lock, release_lock
from deepvm_core.cloud.fleet.watch_progress import check_progress_path, open_progress
from deepvm_core.cloud.fleet.watch_setup import watch_setup
from deepvm_core.errors import EXIT_USAGE, DeepVMError
from deepvm_core.io.plan_reader import read_plan
from deepvm_core.job.recovery import DEADLINE_POLICIES, RECOVERY_POLICIES

WATCH_COMMANDS = ("ledger", "watch")


def plan_id_of_argument(text: str) -> str:
    """A plan id, or the id of the export file ``text``."""
    if PLAN_ID_PATTERN.match(text) and not Path(text).is_file():
        return text
    doc, data = read_export(text)
    return plan_from_export(doc, data).plan_id


def add_watch_parsers(subparsers: Any) -> None:
    """``deepvm ledger PLAN [--format table|json]``."""
    p = subparsers.add_parser(
        "ledger", help="a watched plan's ledger: cost, hours, reclaims, progress, "
                       "counterfactuals",
        description="Print the ledger 'deepvm watch' keeps for a plan in the per-user folder "
                    "(<home>/ledgers/PLAN_ID.jsonl): the cost so far, the workers' spot and "
                    "on-demand hours, the reclaims, the progress, the same cluster on demand "
                    "and every policy replayed on the availability the controller observed; "
                    "then every record. Reads the file only, never AWS.")
    p.add_argument("plan", metavar="PLAN", help="a plan id, or the plan JSON launched")
    p.add_argument("--format", choices=("table", "json"), default="table",
                   help="output format (default: table)")

    w = _command(
        subparsers, "watch", "carry out a recovery policy on a launched plan (a dry run "
                             "without --yes)",
        "Poll the plan's instances by tag every --interval seconds; when the spot workers are "
        "reclaimed, call the recovery policy (the same function the backtest replays) and "
        "carry out its action with the launch code of 'deepvm launch': spot again in a pool's "
        "zone, the workers on demand, back to spot, or wait. Every observation and action goes "
        "to the plan's ledger (see 'deepvm ledger'). It does not restart the training process: "
        "the launch template must start or resume the job on boot. Without --yes: one "
        "observation and what it would do, no change. A second watch of the same plan refuses "
        "to run while the first holds the lock; a restarted watch resumes from the ledger. "
        "The plan must be a plan JSON (deepvm plan --format json). " + CHOSEN_HELP)
    _add_request_args(w)
    _add_aws_args(w, "AWS region (default: the plan's catalog region)")
    w.add_argument("--policy", choices=RECOVERY_POLICIES,
                   help="recovery policy (default: the plan's chosen.estimate.recovery, else "
                        f"{DEFAULT_POLICY})")
    w.add_argument("--deadline-hours", type=_positive_float, metavar="H",
                   help="deadline, hours from the start of the watch (deadline policies)")
    w.add_argument("--interval", type=_positive_float, default=DEFAULT_INTERVAL_SECONDS,
                   metavar="S", help="seconds between two polls, the policies' tick (default: "
                                     f"{DEFAULT_INTERVAL_SECONDS:g})")
    w.add_argument("--progress", metavar="FILE",
                   help="the job's progress file, a local path or s3://BUCKET/KEY (read in "
                        "--region with the same AWS settings): one line DONE/TOTAL (epochs "
                        "checkpointed) or a fraction 0-1 (default, and while it cannot be "
                        "read: estimated from the time the workers ran)")
    w.add_argument("--yes", action="store_true", help="act (default: say what it would do)")
    w.add_argument("--wait-seconds", type=_positive_float, default=600.0, metavar="S",
                   help="how long to wait for a launch to run (default: 600)")


def _cmd_ledger(args: argparse.Namespace, out: TextIO) -> int:
    ledger = read_ledger(ledger_path(plan_id_of_argument(args.plan)))
    if args.format == "json":
        out.write(json.dumps(ledger_to_dict(ledger), indent=2) + "\n")
        return 0
    for line in summary_lines(summarize(ledger)):
        out.write(line + "\n")
    out.write("\n")
    for line in ledger_table(ledger):
        out.write(line + "\n")
    return 0


def _cmd_watch(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    doc = read_plan(args.export)
    _, data = read_export(args.export)
    plan = plan_from_export(doc, data)
    options = request_options(args)
    recorded = (doc["chosen"].get("estimate") or {}).get("recovery")
    policy = args.policy or (recorded if recorded in RECOVERY_POLICIES else DEFAULT_POLICY)
    if policy in DEADLINE_POLICIES and args.deadline_hours is None:
        raise DeepVMError(f"--policy {policy} needs --deadline-hours H")
    if args.progress is not None:
        check_progress_path(args.progress)

    def say(line: str) -> None:
        err.write(f"deepvm watch: {redact(line)}\n")
        err.flush()

    aws = aws_settings(args)
    ec2 = Ec2.open(aws, default_region=plan.catalog_region)
    progress_file = (None if args.progress is None
                     else open_progress(args.progress, region=ec2.region, aws=aws))
    zones = plan.pool_zones or tuple(sorted({
        i.availability_zone for i in plan_instances(ec2, plan.plan_id, LIVE_STATES)
        if i.role == "spot-worker"}))[:1]

    def make_setup(started_at: float) -> Any:
        return watch_setup(doc, args.export, plan, region=ec2.region, policy=policy,
                           deadline_hours=args.deadline_hours,
                           interval_seconds=args.interval, started_at=started_at, zones=zones)

    settings = WatchSettings(yes=args.yes, progress_file=progress_file,
                             launch_poll=PollSettings(wait_timeout_s=args.wait_seconds))
    lock = acquire_lock(plan.plan_id) if args.yes else None
    try:
        controller = open_controller(ec2, plan, make_setup, options, settings, progress=say)
        say(f"plan {plan.plan_id}: {plan.summary}; policy {policy}; pools "
            f"{', '.join(controller.setup.pools)}; every {args.interval:g} s; ledger "
            f"{controller.path}")
        reports = controller.run()
    except LaunchFailed as exc:
        say(f"error: {exc}")
        return exc.exit_code
    finally:
        if lock is not None:
            release_lock(lock)
    last = reports[-1] if reports else None
    if not args.yes:
        out.write(f"Plan {plan.plan_id}: {plan.summary}; policy {policy}\n")
        if last is not None:
            out.write(f"Now ({last.hours:.2f} h into the watch) the policy would "
                      f"{last.text.removeprefix('would ')}.\n")
        out.write("Nothing was changed; add --yes to watch and act.\n")
        return 0
    if last is not None and last.done:
        out.write(f"Plan {plan.plan_id}: {last.text}. See 'deepvm ledger {plan.plan_id}'; "
                  f"tear the plan down with 'deepvm teardown --plan {plan.plan_id} --region "
                  f"{ec2.region} --yes'\n")
    return 0


def run_watch_command(args: argparse.Namespace, *, stdout: TextIO | None = None,
                      stderr: TextIO | None = None) -> int:
    """Run ``ledger`` or ``watch``; a user error is one line on stderr and exit 2."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    try:
        if args.command == "ledger":
            return _cmd_ledger(args, out)
        return _cmd_watch(args, out, err)
    except DeepVMError as exc:
        err.write(f"deepvm {args.command}: error: {' '.join(str(exc).split())}\n")
        return EXIT_USAGE
