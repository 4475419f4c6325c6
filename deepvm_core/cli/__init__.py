"""The ``deepvm`` command line: recommend, sweep, flopp, catalog validate/convert, fetch,
launch/status/teardown, plan and calibrate.

Every user error (bad argument, missing or invalid file, infeasible input) ends with a one-line
message on stderr and exit code 2, never a traceback. This module holds the parser and
:func:`main` (the ``deepvm`` entry point); the commands live in ``recommend``, ``fetch``,
``launch`` and ``job``, and what they share in ``common``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from deepvm_core.catalog.store import DEFAULT_CATALOG
from deepvm_core.cli.common import Parser
from deepvm_core.cli.fetch import add_fetch_parser, run_fetch
from deepvm_core.cli.job import PLAN_COMMANDS, run_plan_command
from deepvm_core.cli.launch import LAUNCH_COMMANDS, run_launch_command
from deepvm_core.cli.launch_args import add_launch_parsers
from deepvm_core.cli.plan_args import add_plan_parsers
from deepvm_core.cli.recommend import (
    RECOMMEND_COMMANDS,
    add_recommend_parsers,
    run_recommend_command,
)
from deepvm_core.cli.traces import TRACES_COMMANDS, add_traces_parsers, run_traces_command
from deepvm_core.cli.watch import WATCH_COMMANDS, add_watch_parsers, run_watch_command
from deepvm_core.errors import EXIT_USAGE, CatalogError, DeepVMError


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``deepvm``."""
    parser = Parser(prog="deepvm", description=(
        "DeepVM Studio: cost-efficient spot/on-demand clusters for distributed training."))
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    add_recommend_parsers(sub)
    add_fetch_parser(sub)
    add_launch_parsers(sub)
    add_plan_parsers(sub)
    add_traces_parsers(sub)
    add_watch_parsers(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``deepvm``; returns the exit code (0 ok, 2 user error)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "recommend":
        given = [f"--{name}" for name in ("catalog", "pw") if getattr(args, name) is not None]
        if args.replay is not None and given:
            parser.error(f"recommend --replay takes the scenario from the export; drop "
                         f"{' and '.join(given)}")
        if args.replay is None and args.pw is None:
            parser.error("recommend needs --pw (or --replay EXPORT.json)")
        if args.replay is None and args.catalog is None:
            args.catalog = DEFAULT_CATALOG
    out = sys.stdout
    try:
        if args.command in RECOMMEND_COMMANDS:
            return run_recommend_command(args, out)
        if args.command == "fetch":
            return run_fetch(args)
        if args.command in LAUNCH_COMMANDS:
            return run_launch_command(args)
        if args.command in PLAN_COMMANDS:
            return run_plan_command(args)
        if args.command in TRACES_COMMANDS:
            return run_traces_command(args)
        if args.command in WATCH_COMMANDS:
            return run_watch_command(args)
        raise AssertionError(f"unknown command {args.command!r}")
    except DeepVMError as exc:
        message = " ".join(str(exc).split()) if not isinstance(exc, CatalogError) else str(
            exc).splitlines()[0]
        sys.stderr.write(f"deepvm: error: {message}\n")
        return EXIT_USAGE
    except BrokenPipeError:
        return 0

