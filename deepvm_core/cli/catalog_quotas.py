"""``deepvm catalog quotas``: an existing catalog with this AWS account's own EC2 vCPU quotas
(Service Quotas ``ListServiceQuotas``), written as a new catalog; the input is never changed.

Wiring: :func:`add_quotas_parser` adds ``quotas`` to the ``catalog`` sub-parsers;
:func:`run_quotas` returns 0, or 2 with one line on stderr (a bad argument, a missing or invalid
catalog, no credentials, access denied, throttling, an unreachable endpoint). The method is
:mod:`deepvm_core.cloud.aws.quotas`.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

from deepvm_core.cli.common import number
from deepvm_core.cloud.aws.client import DEFAULT_MAX_ATTEMPTS
from deepvm_core.cloud.aws.quotas import catalog_with_account_quotas
from deepvm_core.errors import DeepVMError
from deepvm_core.home import describe_catalog_dir

PROG = "deepvm catalog quotas"


def add_quotas_parser(catalog_subparsers: Any) -> argparse.ArgumentParser:
    """Add ``quotas`` to the ``catalog`` sub-parsers; returns it."""
    parser: argparse.ArgumentParser = catalog_subparsers.add_parser(
        "quotas", help="a catalog with this AWS account's own vCPU quotas (Service Quotas)",
        description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("catalog", metavar="CATALOG",
                        help="the catalog: a path (ours or the artifact's JSON) or a bundled name")
    parser.add_argument("--region", metavar="REGION",
                        help="AWS region whose quotas are read (default: the catalog's region)")
    parser.add_argument("--profile", help="AWS profile of the shared config (default: the "
                                          "standard credential chain)")
    parser.add_argument("--out", metavar="PATH",
                        help="a .json file, or a folder (default: "
                             f"{describe_catalog_dir('fetched')}); the catalog is named "
                             "<name>-quotas-<UTC time>")
    parser.add_argument("--max-attempts", type=number(int, 1, maximum=20),
                        default=DEFAULT_MAX_ATTEMPTS, metavar="N",
                        help=f"attempts per request, retries included (default: "
                             f"{DEFAULT_MAX_ATTEMPTS})")
    parser.set_defaults(func=run_quotas)
    return parser


def run_quotas(args: argparse.Namespace, *, stdout: TextIO | None = None,
               stderr: TextIO | None = None) -> int:
    """Run ``catalog quotas``: 0, or 2 with one line on stderr; prints the path and the rows."""
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    try:
        catalog, path, notes = catalog_with_account_quotas(
            args.catalog, region=args.region, out=args.out, profile=args.profile,
            max_attempts=args.max_attempts)
    except DeepVMError as exc:
        print(f"{PROG}: error: {' '.join(str(exc).split())}", file=stderr)
        return 2
    print(f"{path}  ({catalog.name}: {len(catalog.quotas)} quota rows)", file=stdout)
    for q in catalog.quotas:
        print(f"  {q.family}: {q.on_demand_vcpus} on-demand / {q.spot_vcpus} spot vCPUs",
              file=stdout)
    for note in notes:
        print(f"  note: {note}", file=stdout)
    return 0
