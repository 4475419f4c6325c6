"""``deepvm catalog import``: build catalogs from a provider catalog file (SkyPilot's AWS
``vms.csv``), one per region.

Wiring: :func:`add_import_parser` adds ``import`` to the ``catalog`` sub-parsers and sets
``args.func``; :func:`run_import` returns 0, or 2 with one line on stderr (bad input, a URL
that cannot be read, a region the file does not have). Nothing is written unless every region
was built. The method is :mod:`deepvm_core.cloud.skypilot`.
"""

from __future__ import annotations

import argparse
import http.client
import sys
import threading
import time
import urllib.error
import urllib.request
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from deepvm_core.catalog import Catalog
from deepvm_core.catalog.store import PAPER_CATALOG
from deepvm_core.cloud.aws.client import MalformedAnswer
from deepvm_core.cloud.aws.fetch import write_fetched_catalogs
from deepvm_core.cloud.aws.inputs import target_paths, validate_regions
from deepvm_core.cloud.aws.spot_advisor import parse_spot_advisor
from deepvm_core.cloud.skypilot import build_catalog, parse_vms_csv
from deepvm_core.errors import EXIT_USAGE, DeepVMError, FetchError, InputError
from deepvm_core.hardware.scaling_prior import DEFAULT_GRADIENT_GB, DEFAULT_STEP_MODEL

PROG = "deepvm catalog import"
#: Seconds a URL may take in all (connect, headers and the whole body: a deadline, not a
#: time-out per read).
DEFAULT_TIMEOUT_S = 20.0
#: The longest ``--timeout`` accepted, seconds (an hour).
MAX_TIMEOUT_S = 3600.0
#: The longest ``--date`` accepted, characters (it is part of each catalog's name and file).
MAX_DATE_CHARS = 40
#: The largest file read, bytes (SkyPilot's whole AWS vms.csv is about 3 MB).
MAX_SOURCE_BYTES = 64 * 2**20
#: Bytes read per chunk of a URL (the deadline is checked between chunks).
_CHUNK_BYTES = 64 * 2**10
#: The formats ``--format`` accepts.
FORMATS: tuple[str, ...] = ("skypilot",)
#: The default base catalog (its measured eFLOPS and scaling fits, quotas and saturation win).
DEFAULT_BASE = PAPER_CATALOG


def _read_url(where: str, timeout_s: float, deadline: float) -> bytes:
    """The body at ``where``, read in chunks until ``deadline`` (``time.monotonic()``)."""
    request = urllib.request.Request(where, headers={"User-Agent": "deepvm-studio"})
    chunks: list[bytes] = []
    size = 0
    with urllib.request.urlopen(request, timeout=timeout_s) as response:
        while time.monotonic() < deadline:
            chunk = response.read1(_CHUNK_BYTES)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_SOURCE_BYTES:
                return b"".join(chunks)  # the caller says it is too large
    raise TimeoutError


def _fetch(where: str, timeout_s: float) -> bytes:
    """:func:`_read_url` in a daemon thread, waited for ``timeout_s`` in all: a server that
    sends a byte now and then (each read answered in time) cannot hold the import longer."""
    deadline = time.monotonic() + timeout_s
    result: list[bytes] = []
    failure: list[BaseException] = []

    def work() -> None:
        try:
            result.append(_read_url(where, timeout_s, deadline))
        except Exception as exc:  # noqa: BLE001 - re-raised in the caller's thread
            failure.append(exc)

    thread = threading.Thread(target=work, name="catalog-import-read", daemon=True)
    thread.start()
    thread.join(timeout_s)
    if failure:
        raise failure[0]
    if not result:
        raise TimeoutError
    return result[0]


def read_source(where: str, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> str:
    """The text of a local file or an ``http(s)://`` URL (UTF-8); a URL must be read within
    ``timeout_s`` seconds in all.

    Raises:
        FetchError: the file or URL cannot be read (timed out, refused, HTTP error, not a
            valid address, too big, not UTF-8).
    """
    scheme = where.split(":", 1)[0].lower() if "://" in where else ""
    try:
        if scheme in ("http", "https"):
            body = _fetch(where, timeout_s)
        elif scheme:
            raise FetchError(f"{where}: only http://, https:// or a local file can be read",
                             kind="other")
        else:
            with open(where, "rb") as handle:
                body = handle.read(MAX_SOURCE_BYTES + 1)
    except urllib.error.HTTPError as exc:
        raise FetchError(f"{where}: the server answered HTTP {exc.code} ({exc.reason})",
                         kind="other") from None
    except urllib.error.URLError as exc:
        raise FetchError(f"{where}: cannot be reached ({exc.reason}); timeout {timeout_s:g} s",
                         kind="unreachable") from None
    except TimeoutError:
        raise FetchError(f"{where}: timed out after {timeout_s:g} s", kind="timeout") from None
    except (http.client.InvalidURL, ValueError) as exc:
        raise FetchError(f"{where}: not a valid address ({exc})", kind="other") from None
    except http.client.HTTPException as exc:
        raise FetchError(f"{where}: the server's answer cannot be read ({exc!r})",
                         kind="malformed") from None
    except OSError as exc:
        raise FetchError(f"{where}: cannot be read ({exc.strerror or exc})",
                         kind="other") from None
    if len(body) > MAX_SOURCE_BYTES:
        raise FetchError(f"{where}: larger than {MAX_SOURCE_BYTES // 2**20} MiB", kind="other")
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        raise FetchError(f"{where}: not UTF-8 text", kind="malformed") from None


def configure_import_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the ``import`` options to ``parser``."""
    parser.add_argument("source", metavar="FILE_OR_URL",
                        help="SkyPilot's AWS vms.csv (schema v7 or v8): a file or an https URL")
    parser.add_argument("--format", choices=FORMATS, required=True,
                        help="the file's format (skypilot: SkyPilot's catalogs/v7/aws/vms.csv)")
    parser.add_argument("--region", dest="regions", action="append", required=True,
                        metavar="REGION", help="AWS region (repeat for several: one catalog each)")
    parser.add_argument("--base", default=DEFAULT_BASE, metavar="CATALOG",
                        help="catalog whose measured eFLOPS and scaling fits, network, quotas "
                             f"and saturation table win; 'none' for none (default: {DEFAULT_BASE})")
    parser.add_argument("--out", metavar="PATH",
                        help="output folder, or a .json file for a single region (default: "
                             "where 'deepvm fetch' writes)")
    parser.add_argument("--force", action="store_true",
                        help="overwrite the .json file --out names when it exists")
    parser.add_argument("--date", metavar="TEXT",
                        help="the prices' date, in the names (aws-<region>-<date>) and "
                             f"prices_date, at most {MAX_DATE_CHARS} characters (default: "
                             "today, UTC)")
    parser.add_argument("--source-label", metavar="TEXT",
                        help="where the file comes from, for each catalog's source "
                             "(default: the file or URL)")
    parser.add_argument("--spot-advisor", metavar="FILE_OR_URL",
                        help="a Spot Instance Advisor JSON file for interruption buckets "
                             "(default: none, every bucket unknown)")
    parser.add_argument("--spot-aggregate", choices=("min", "median"), default="min",
                        help="spot price from the per-zone prices (default: min)")
    parser.add_argument("--gradient-gb", type=float, default=DEFAULT_GRADIENT_GB, metavar="GB",
                        help="gradient size of the workload for the scaling prior, GB "
                             f"(default: {DEFAULT_GRADIENT_GB:g}, ResNet-50)")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="S",
                        help=f"seconds a URL may take in all, at most {MAX_TIMEOUT_S:g} "
                             f"(default: {DEFAULT_TIMEOUT_S:g})")
    parser.set_defaults(func=run_import)
    return parser


def add_import_parser(catalog_subparsers: Any) -> argparse.ArgumentParser:
    """Add ``import`` to the ``catalog`` sub-parsers; returns it."""
    parser: argparse.ArgumentParser = catalog_subparsers.add_parser(
        "import", help="build catalogs from SkyPilot's AWS vms.csv, one per region",
        description=__doc__.split("\n\n")[0] if __doc__ else None)
    return configure_import_parser(parser)


def _buckets(where: str | None, timeout_s: float) -> dict[str, dict[str, int]] | None:
    if where is None:
        return None
    import json

    try:
        return parse_spot_advisor(json.loads(read_source(where, timeout_s=timeout_s)))
    except RecursionError:
        raise FetchError(f"--spot-advisor {where}: nested too deeply to be a Spot Instance "
                         "Advisor file", kind="malformed") from None
    except (ValueError, MalformedAnswer) as exc:
        raise FetchError(f"--spot-advisor {where}: {exc}", kind="malformed") from None


def import_catalogs(args: argparse.Namespace) -> tuple[list[Catalog], list[tuple[str, ...]]]:
    """Build every region's catalog (nothing written).

    Raises:
        DeepVMError: bad input, an unreadable file, a region the file does not have.
    """
    from dataclasses import replace

    from deepvm_core.catalog.store import load_catalog

    regions = validate_regions(args.regions)
    if not (args.gradient_gb > 0 and args.gradient_gb < float("inf")):
        raise InputError("gradient_gb", args.gradient_gb, "must be a number greater than 0")
    if not (args.timeout > 0 and args.timeout <= MAX_TIMEOUT_S):
        raise InputError("timeout", args.timeout,
                         f"must be a number of seconds in (0, {MAX_TIMEOUT_S:g}]")
    date = args.date or datetime.now(UTC).strftime("%Y-%m-%d")
    if not date.strip() or "/" in date or "\\" in date or len(date) > MAX_DATE_CHARS:
        raise InputError("date", date, f"must be a non-empty text without slashes, at most "
                                       f"{MAX_DATE_CHARS} characters")
    base = None if str(args.base).strip().lower() == "none" else load_catalog(args.base)
    buckets = _buckets(args.spot_advisor, args.timeout)
    rows = parse_vms_csv(read_source(args.source, timeout_s=args.timeout), args.source)
    step = replace(DEFAULT_STEP_MODEL, gradient_gb=args.gradient_gb)
    label = args.source_label or f"SkyPilot AWS vms.csv ({args.source})"
    catalogs, notes = [], []
    for region in regions:
        catalog, region_notes = build_catalog(
            rows, region, date=date, source=label, base=base,
            spot_aggregate=args.spot_aggregate,
            buckets=None if buckets is None else buckets.get(region), step=step)
        catalogs.append(catalog)
        notes.append(region_notes)
    return catalogs, notes


def run_import(args: argparse.Namespace, *, stdout: TextIO | None = None,
               stderr: TextIO | None = None) -> int:
    """Run ``catalog import``: 0, or 2 with one line on stderr; prints the paths written."""
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    try:
        catalogs, notes = import_catalogs(args)
        paths = write_fetched_catalogs(
            catalogs, target_paths(Path(args.out) if args.out else None,
                                    [c.name for c in catalogs], overwrite=args.force))
    except DeepVMError as exc:
        print(f"{PROG}: error: {' '.join(str(exc).split())}", file=stderr)
        return EXIT_USAGE
    for catalog, path, region_notes in zip(catalogs, paths, notes, strict=True):
        estimated = sum(1 for g in catalog.gpu_types if g.eflops_source.startswith("estimated"))
        print(f"{path}  ({catalog.region}: {len(catalog.gpu_types)} GPU types, {estimated} "
              f"with estimated eFLOPS; {len(catalog.cpu_types)} CPU types)", file=stdout)
        for note in region_notes:
            print(f"  note: {note}", file=stdout)
    return 0
