"""What the ``deepvm`` commands share: the parser class, exit codes, number checks and the
scenario options.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import Any, NoReturn

from deepvm_core.model import DEFAULT_MAX_NODES, MAX_NODES

#: Exit code of every user error (bad argument, missing or invalid file, infeasible input).
EXIT_USAGE = 2


class Parser(argparse.ArgumentParser):
    """argparse with a one-line error message (no usage dump) and exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def number(kind: type[int] | type[float], minimum: float | None = None, strict: bool = False,
            maximum: float | None = None) -> Callable[[str], Any]:
    """An argparse ``type``: ``kind(text)``, finite, within ``minimum`` (exclusive when
    ``strict``) and ``maximum``; otherwise a one-line error naming the value."""

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a {kind.__name__}") from None
        if isinstance(value, float) and not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
        if minimum is not None and (value <= minimum if strict else value < minimum):
            rel = ">" if strict else ">="
            raise argparse.ArgumentTypeError(f"{text!r} must be {rel} {minimum:g}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"{text!r} must be <= {maximum:g}")
        return value
    return parse


def add_scenario_args(p: argparse.ArgumentParser, *, with_pw: bool,
                       replayable: bool = False) -> None:
    p.add_argument("--catalog", required=not replayable,
                   help="catalog path (ours or the artifact's JSON) or a bundled catalog's name")
    if with_pw:
        p.add_argument("--pw", type=number(float, 0.0), required=not replayable,
                       help="pricing willingness, USD per hour")
    p.add_argument("--ckpt-gb", type=number(float, 0.0, strict=True), default=0.3,
                   help="checkpoint size, GB (default 0.3)")
    p.add_argument("--buffer", type=number(float, 0.0, strict=True), default=2.0,
                   help="checkpoints one memory node keeps in RAM (default 2)")
    p.add_argument("--no-quotas", action="store_true",
                   help="ignore the catalog's vCPU quotas (the paper's simulation mode)")
    p.add_argument("--max-nodes", type=number(int, 1, maximum=MAX_NODES),
                   default=DEFAULT_MAX_NODES,
                   help=f"cap on VM counts per role (default {DEFAULT_MAX_NODES}, at most "
                   f"{MAX_NODES:,})")


