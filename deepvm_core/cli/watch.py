"""``deepvm ledger PLAN`` (a watched plan's ledger: table or JSON) and ``deepvm watch PLAN.json``
(the controller, :mod:`deepvm_core.cloud.fleet.watch`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from deepvm_core.cloud.fleet.ledger import ledger_path, read_ledger
from deepvm_core.cloud.fleet.ledger_report import (
    ledger_table,
    ledger_to_dict,
    summarize,
    summary_lines,
)
from deepvm_core.cloud.fleet.target import PLAN_ID_PATTERN, plan_from_export, read_export
from deepvm_core.errors import EXIT_USAGE, DeepVMError

WATCH_COMMANDS = ("ledger",)


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


def run_watch_command(args: argparse.Namespace, *, stdout: TextIO | None = None,
                      stderr: TextIO | None = None) -> int:
    """Run ``ledger`` or ``watch``; a user error is one line on stderr and exit 2."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    try:
        return _cmd_ledger(args, out)
    except DeepVMError as exc:
        err.write(f"deepvm {args.command}: error: {' '.join(str(exc).split())}\n")
        return EXIT_USAGE
