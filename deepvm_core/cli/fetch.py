"""``deepvm fetch``: fetch live AWS catalogs from the command line.

Wiring into the main CLI is one line each::

    from deepvm_core.cli.fetch import add_fetch_parser
    add_fetch_parser(subparsers)        # adds "fetch"; sets args.func = run_fetch
    ...
    return args.func(args)              # or: if args.command == "fetch": return run_fetch(args)

``run_fetch`` returns 0 on success and 2 with one line on stderr on failure (bad arguments,
no credentials, an unreachable endpoint, throttling, access denied, a malformed answer, a
region without offers). ``--quotas`` replaces the base catalog's quotas by the account's own
(Service Quotas ``ListServiceQuotas``: :mod:`deepvm_core.cloud.aws.quotas`). ``--spot-advisor``
first reads each GPU type's interruption bucket
from the AWS Spot Instance Advisor (``$DEEPVM_SPOT_ADVISOR_URL`` overrides where); when that
fails, nothing else is fetched and nothing is written. ``--diff`` then prints, per region, the
price changes against the base catalog (:func:`deepvm_core.catalog.diff.price_diff`). A progress bar
goes to stderr only when stderr is a terminal. This module also runs on its own:
``python -m deepvm_core.cli.fetch --region us-east-1``.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from deepvm_core.catalog import Catalog
from deepvm_core.catalog.diff import DiffStatus, PriceChange, price_diff, summarize_price_diff
from deepvm_core.catalog.store import load_catalog
from deepvm_core.catalog.types import INTERRUPTION_BUCKET_LABELS
from deepvm_core.cli.common import Parser, run_standalone
from deepvm_core.cloud.aws import (
    DEFAULT_BASE_CATALOG,
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_PRICING_REGION,
    DEFAULT_SPOT_WINDOW_HOURS,
    PRICING_REGIONS,
    SPOT_AGGREGATES,
    FetchResult,
    fetch_catalogs,
    validate_instance_types,
)
from deepvm_core.cloud.aws.quotas import fetch_catalogs_with_quotas
from deepvm_core.defaults import field_default
from deepvm_core.errors import EXIT_USAGE, DeepVMError
from deepvm_core.home import describe_catalog_dir
from deepvm_core.model import Scenario
from deepvm_core.pipeline.regions_job import compare_regions_for_job
from deepvm_core.text import duration, usd

PROG = "deepvm fetch"
DESCRIPTION = (
    "Fetch instance specs (EC2 DescribeInstanceTypes), spot prices (EC2 "
    "DescribeSpotPriceHistory, Linux/UNIX, latest per availability zone) and on-demand prices "
    "(AWS Price List API) for one or more regions, and write one catalog per region to the "
    "per-user fetched-catalog folder (see --out; never the package). Measured eFLOPS, scaling "
    "parameters and quotas carry over from the base catalog (--quotas reads the account's own "
    "quotas instead); other GPU types get an eFLOPS "
    "estimated from data/accelerators.csv and the step-model scaling prior (marked "
    "eflops_source and scaling_source); --spot-advisor adds the Spot "
    "Instance Advisor's interruption buckets. Credentials come from the standard AWS chain "
    "(environment, profile, SSO); endpoint settings such as AWS_ENDPOINT_URL_EC2 are honoured. "
    "Nothing is written when any part fails.")


def add_fetch_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``fetch`` sub-command to an ``argparse`` sub-parsers object; returns it."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "fetch",
        help="fetch a live AWS catalog (specs, spot and on-demand prices)",
        description=DESCRIPTION,
    )
    configure_fetch_parser(parser)
    return parser


def configure_fetch_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the ``fetch`` options to ``parser`` (used by :func:`add_fetch_parser` and
    :func:`main`)."""
    parser.add_argument("--region", dest="regions", action="append", required=True,
                        metavar="REGION",
                        help="AWS region to fetch (repeat for several: one catalog each)")
    parser.add_argument("--base", default=DEFAULT_BASE_CATALOG, metavar="CATALOG",
                        help="base catalog (bundled name or path) whose types are fetched and "
                             "whose eFLOPS, scaling and quotas carry over; 'none' for no base "
                             f"(default: {DEFAULT_BASE_CATALOG})")
    parser.add_argument("--instance-types", nargs="+", metavar="TYPE",
                        help="instance types or globs to fetch instead of the base catalog's "
                             "(g5.xlarge 'g4dn.*')")
    parser.add_argument("--profile", help="AWS profile of the shared config (default: the "
                                          "standard credential chain)")
    parser.add_argument("--spot-aggregate", choices=SPOT_AGGREGATES, default="min",
                        help="spot price from the per-zone prices: min = cheapest zone "
                             "(default), median")
    parser.add_argument("--spot-window-hours", type=float, default=DEFAULT_SPOT_WINDOW_HOURS,
                        metavar="H", help="spot price history window, hours (default: "
                                          f"{DEFAULT_SPOT_WINDOW_HOURS:g})")
    parser.add_argument("--pricing-region", choices=PRICING_REGIONS,
                        default=DEFAULT_PRICING_REGION,
                        help="endpoint region of the AWS Price List API (default: "
                             f"{DEFAULT_PRICING_REGION})")
    parser.add_argument("--max-attempts", type=int, default=DEFAULT_MAX_ATTEMPTS, metavar="N",
                        help="attempts per request, retries included (default: "
                             f"{DEFAULT_MAX_ATTEMPTS})")
    parser.add_argument("--out", metavar="PATH",
                        help="output folder, or a .json file for a single region (default: "
                             f"{describe_catalog_dir('fetched')})")
    parser.add_argument("--spot-advisor", action="store_true",
                        help="also read each GPU type's interruption bucket (0-4) from the AWS "
                             "Spot Instance Advisor's public data (Linux; the URL can be set "
                             "with $DEEPVM_SPOT_ADVISOR_URL); without it the buckets are empty")
    parser.add_argument("--quotas", action="store_true",
                        help="read this account's own EC2 vCPU quotas in each region (Service "
                             "Quotas ListServiceQuotas; needs servicequotas:ListServiceQuotas) "
                             "into the catalog instead of the base catalog's: each family gets "
                             "its AWS quota group's value (data/README.md, Quotas)")
    parser.add_argument("--diff", action="store_true",
                        help="after fetching, print each region's price changes against the "
                             "base catalog (old -> new USD/h and %%); unchanged types are "
                             "counted, not listed")
    parser.add_argument("--compare-pw", type=float, metavar="USD_PER_HOUR",
                        help="after fetching, print the best recommendation of each region "
                             "for this pricing willingness")
    ckpt = field_default(Scenario, "checkpoint_gb")
    buffer = field_default(Scenario, "buffer_checkpoints")
    parser.add_argument("--ckpt-gb", type=float, default=ckpt,
                        help=f"checkpoint size for --compare-pw, GB (default: {ckpt:g})")
    parser.add_argument("--buffer", type=float, default=buffer,
                        help=f"buffer size for --compare-pw, checkpoints (default: {buffer:g})")
    parser.set_defaults(func=run_fetch, command="fetch")
    return parser


class ProgressBar:
    """``progress(step, done, total)`` drawn as one self-erasing line on a terminal stream."""

    def __init__(self, stream: TextIO, width: int = 24) -> None:
        self.stream = stream
        self.width = width
        self.drawn = False

    def __call__(self, step: str, done: int, total: int) -> None:
        filled = int(self.width * done / total) if total else self.width
        columns = shutil.get_terminal_size((80, 24)).columns
        line = f"[{'#' * filled}{'.' * (self.width - filled)}] {done}/{total} {step}"
        self.stream.write("\r\x1b[K" + line[: max(columns - 1, 10)])
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        """Erase the bar."""
        if self.drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.drawn = False


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _print_result(result: FetchResult, out: TextIO) -> None:
    for r in result.regions:
        gpus, cpus = len(r.catalog.gpu_types), len(r.catalog.cpu_types)
        where = f" -> {r.path}" if r.path else ""
        print(f"{r.region}: {gpus + cpus} instance types ({gpus} GPU, {cpus} CPU), catalog "
              f"{r.catalog.name}{where}", file=out)
        for note in r.notes:
            print(f"  note: {note}", file=out)
        buckets = [f"{g.name} {g.interruption_bucket} "
                   f"({INTERRUPTION_BUCKET_LABELS[g.interruption_bucket]})"
                   for g in r.catalog.gpu_types if g.interruption_bucket is not None]
        if result.spot_advisor_url and buckets:
            print("  interruption buckets (Spot Instance Advisor): " + ", ".join(buckets),
                  file=out)


def _price(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def _change(old: float | None, new: float | None, percent: float | None) -> str:
    text = f"{_price(old)} -> {_price(new)}"
    return text + (f" ({percent:+.1f}%)" if percent is not None else "")


def format_price_diff(changes: Sequence[PriceChange]) -> list[str]:
    """Lines of a compact table of ``changes`` (unchanged types left out) and a summary line:
    per type its kind, status, on-demand and spot ``old -> new`` USD/hour with the change in
    percent, and its note."""
    rows = [(c.name, c.kind.upper(), c.status,
             _change(c.on_demand_old, c.on_demand_new, c.on_demand_change_pct),
             _change(c.spot_old, c.spot_new, c.spot_change_pct), c.note)
            for c in changes if c.status != DiffStatus.SAME]
    lines = []
    if rows:
        header = ("type", "kind", "status", "on-demand USD/h", "spot USD/h", "note")
        widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]
        for row in (header, *rows):
            lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True))
                         .rstrip())
    counts = summarize_price_diff(changes)
    median = counts.median_spot_change_pct
    lines.append(f"{counts.fetched} fetched: {counts.changed} changed, {counts.unchanged} "
                 f"unchanged, {counts.added} added, {counts.missing} missing"
                 + (f", {counts.needs_eflops} need eFLOPS" if counts.needs_eflops else "")
                 + (f"; median spot change {median:+.1f}%" if median is not None else ""))
    return lines


def _print_diff(result: FetchResult, base: Catalog, requested: Sequence[str] | None,
                out: TextIO) -> None:
    for r in result.regions:
        print(f"{r.region}: price changes against {base.name}:", file=out)
        for line in format_price_diff(price_diff(base, r.catalog, requested)):
            print(f"  {line}", file=out)


def _print_comparison(result: FetchResult, args: argparse.Namespace, out: TextIO) -> None:
    scenario = Scenario(args.compare_pw, checkpoint_gb=args.ckpt_gb,
                        buffer_checkpoints=args.buffer)
    print(f"best per region at PW {args.compare_pw:g} USD/h, checkpoint "
          f"{args.ckpt_gb:g} GB, buffer {args.buffer:g}:", file=out)
    for row in compare_regions_for_job(result.catalogs_by_region(), scenario):
        text = row.best.describe() if row.best else f"nothing feasible: {row.explanation}"
        if row.job_hours is not None and row.job_cost_usd is not None:
            text += (f"; the example job: {duration(row.job_hours)}, {usd(row.job_cost_usd)} "
                     "expected")
        print(f"  {row.region}: {text}", file=out)


def run_fetch(args: argparse.Namespace, *, stdout: TextIO | None = None,
              stderr: TextIO | None = None) -> int:
    """Run ``fetch`` with parsed ``args``: 0 on success, 2 (one line on stderr) on failure."""
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    bar = ProgressBar(stderr) if _isatty(stderr) else None
    base = None if str(args.base).strip().lower() == "none" else args.base
    if args.diff and base is None:
        print(f"{PROG}: error: --diff compares with the base catalog; give one with --base",
              file=stderr)
        return EXIT_USAGE
    diff_base: Catalog | None = None
    try:
        if args.diff and base is not None:  # once: the fetch's base and the diff's old prices
            diff_base = load_catalog(base)
        if args.compare_pw is not None:
            Scenario(args.compare_pw, checkpoint_gb=args.ckpt_gb,
                     buffer_checkpoints=args.buffer)  # check before any network call
        fetch = fetch_catalogs_with_quotas if args.quotas else fetch_catalogs
        result = fetch(
            args.regions, base=diff_base if diff_base is not None else base,
            instance_types=args.instance_types, profile=args.profile,
            spot_aggregate=args.spot_aggregate, spot_window_hours=args.spot_window_hours,
            pricing_region=args.pricing_region, out=args.out, max_attempts=args.max_attempts,
            progress=bar, spot_advisor=args.spot_advisor)
    except DeepVMError as exc:
        if bar:
            bar.close()
        print(f"{PROG}: error: {_one_line(str(exc))}", file=stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        if bar:
            bar.close()
        print(f"{PROG}: interrupted; nothing was written", file=stderr)
        return 130
    if bar:
        bar.close()
    _print_result(result, stdout)
    if diff_base is not None:
        requested = (validate_instance_types(args.instance_types) if args.instance_types
                     else None)
        _print_diff(result, diff_base, requested, stdout)
    if args.compare_pw is not None:
        _print_comparison(result, args, stdout)
    return 0


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def main(argv: Sequence[str] | None = None) -> int:
    """``deepvm fetch`` on its own (``python -m deepvm_core.cli.fetch``)."""
    parser = configure_fetch_parser(Parser(prog=PROG, description=DESCRIPTION))
    return run_standalone(parser, argv, run_fetch)


if __name__ == "__main__":
    sys.exit(main())
