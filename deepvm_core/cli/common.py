"""What the ``deepvm`` commands share: the parser class, number checks, the scenario options
and the core's defaults.

Every default a command shows comes from the core (a dataclass field's default or a named
constant), never typed again here: :func:`deepvm_core.defaults.field_default` reads a field's
default.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from deepvm_core.catalog import Catalog
from deepvm_core.catalog.gpu_filter import (
    ANY_GPU,
    MAX_GPU_MEMORY_GB,
    MAX_GPUS_PER_VM,
    GpuFilter,
    split_accelerators,
)
from deepvm_core.catalog.store import DEFAULT_CATALOG, PAPER_CATALOG
from deepvm_core.defaults import field_default
from deepvm_core.errors import EXIT_USAGE, InputError
from deepvm_core.market.zones import (
    CAPACITY_WEIGHTED_NOTE,
    DEFAULT_ZONE_PRICE,
    ZONE_PRICE_RULES,
    zone_priced_catalog,
)
from deepvm_core.model import MAX_NODES, OBJECTIVES, Scenario
from deepvm_core.search.gpu_filter import resolve_gpu_models


class Parser(argparse.ArgumentParser):
    """argparse with a one-line error message (no usage dump) and exit code 2; every
    ``deepvm`` parser (and the standalone ``fetch`` and ``launch`` ones) is one."""

    def error(self, message: str) -> NoReturn:
        text = " ".join(message.split())
        self.exit(EXIT_USAGE, f"{self.prog}: error: {text} (see {self.prog} --help)\n")


def run_standalone(parser: argparse.ArgumentParser, argv: Sequence[str] | None,
                   run: Callable[[argparse.Namespace], int]) -> int:
    """A command module run on its own (``python -m deepvm_core.cli.fetch``): parse ``argv``
    and run; argparse's own exits (``--help``, a usage error) return their code."""
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    return run(args)


def number(kind: type[int] | type[float], minimum: float | None = None, strict: bool = False,
           maximum: float | None = None, bound: str = "") -> Callable[[str], Any]:
    """An argparse ``type``: ``kind(text)``, finite, within ``minimum`` (exclusive when
    ``strict``) and ``maximum`` (``bound`` says where that bound comes from); otherwise a
    one-line error naming the value."""

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            noun = "whole number" if kind is int else "number"
            raise argparse.ArgumentTypeError(f"{text!r} is not a {noun}") from None
        if isinstance(value, float) and not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
        if minimum is not None and (value <= minimum if strict else value < minimum):
            rel = ">" if strict else ">="
            raise argparse.ArgumentTypeError(f"{text!r} must be {rel} {minimum:g}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"{text!r} must be <= {maximum:g}{bound}")
        return value
    return parse


def pw_or_none(text: str) -> float | None:
    """``--pw`` of ``deepvm plan``: a price per hour >= 0, or ``none`` (PW off)."""
    if text.strip().lower() == "none":
        return None
    value: float = number(float, 0.0)(text)
    return value


def add_scenario_args(p: argparse.ArgumentParser, *, with_pw: bool, replayable: bool = False,
                      pw_off: bool = False, objective_help: str | None = None) -> None:
    """The scenario's options (:class:`~deepvm_core.model.Scenario`), defaults from its fields.

    Args:
        with_pw: add ``--pw``; ``pw_off`` lets it be ``none`` (``deepvm plan``).
        replayable: ``--catalog`` and ``--pw`` are optional (``recommend --replay``).
        objective_help: add ``--objective`` with this help.
    """
    p.add_argument("--catalog", default=None if replayable else DEFAULT_CATALOG,
                   help="catalog path (ours or the artifact's JSON) or a bundled catalog's name "
                        f"(default {DEFAULT_CATALOG}; the paper's: {PAPER_CATALOG})")
    if with_pw and pw_off:
        p.add_argument("--pw", type=pw_or_none, required=True, metavar="USD|none",
                       help="pricing willingness, USD per hour; 'none': no price bound (the "
                            "paper's policies are then not computed)")
    elif with_pw:
        p.add_argument("--pw", type=number(float, 0.0), required=not replayable,
                       help="pricing willingness, USD per hour")
    ckpt = field_default(Scenario, "checkpoint_gb")
    buffer = field_default(Scenario, "buffer_checkpoints")
    nodes = field_default(Scenario, "max_nodes")
    p.add_argument("--ckpt-gb", type=number(float, 0.0, strict=True),
                   help=f"checkpoint size f, GB (default {ckpt:g}; a transformer job's own: "
                        "its trainable weights and optimizer states)")
    p.add_argument("--buffer", type=number(float, 0.0, strict=True), default=buffer,
                   help=f"checkpoints one memory node keeps in RAM (default {buffer:g})")
    p.add_argument("--no-quotas", action="store_true",
                   help="ignore the catalog's vCPU quotas (the paper's simulation mode)")
    p.add_argument("--max-nodes", type=number(int, 1, maximum=MAX_NODES), default=nodes,
                   help=f"cap on VM counts per role (default {nodes}, at most {MAX_NODES:,})")
    p.add_argument("--zone-price", choices=ZONE_PRICE_RULES, default=DEFAULT_ZONE_PRICE,
                   help="spot price of a type with per-zone prices: the cheapest zone's or the "
                        f"median over its zones (default {DEFAULT_ZONE_PRICE}; launch pins the "
                        "cheapest zone either way). " + CAPACITY_WEIGHTED_NOTE)
    if objective_help is not None:
        p.add_argument("--objective", choices=OBJECTIVES,
                       default=field_default(Scenario, "objective"), help=objective_help)
    add_gpu_filter_args(p.add_argument_group(
        "GPU filters (the scenario's GpuFilter: only the GPU types that pass all of them are "
        "searched)"))


def add_gpu_filter_args(g: argparse._ActionsContainer) -> None:
    """``--gpus``, ``--min-gpu-memory-gb`` and ``--gpus-per-vm``
    (:class:`~deepvm_core.catalog.gpu_filter.GpuFilter`; unset: any)."""
    g.add_argument("--gpus", type=_accelerator_list, default=ANY_GPU.accelerators,
                   metavar="MODEL[,MODEL...]",
                   help="only these GPU models, comma-separated, any case (A100,H100; "
                        "data/accelerators.csv's names, as SkyPilot's: A100 is the 40 GB "
                        "chip, A100-80GB the other); default: any")
    g.add_argument("--min-gpu-memory-gb", type=number(float, 0.0, strict=True,
                                                      maximum=MAX_GPU_MEMORY_GB),
                   default=ANY_GPU.min_gpu_memory_gb, metavar="GB",
                   help="only GPUs with at least this much memory each, GB (80); default: any")
    g.add_argument("--gpus-per-vm", type=number(int, 1, maximum=MAX_GPUS_PER_VM),
                   default=ANY_GPU.gpus_per_vm, metavar="N",
                   help="only VMs with exactly this many GPUs (8); default: any")


def _accelerator_list(text: str) -> tuple[str, ...]:
    """``--gpus``: the names of a comma-separated list (checked against the catalog later)."""
    try:
        names = split_accelerators(text)
    except InputError as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: {str(exc).partition(': ')[2]}") from None
    if not names:
        raise argparse.ArgumentTypeError(f"{text!r} names no GPU model")
    return names


def gpu_filter_from_args(args: argparse.Namespace, catalog: Catalog | None) -> GpuFilter:
    """The :class:`GpuFilter` of :func:`add_gpu_filter_args`'s options; ``--gpus`` names
    spelled as the known models do (:func:`~deepvm_core.search.gpu_filter.resolve_gpu_models`
    of ``catalog``).

    Raises:
        InputError: a name that is no known model (``--gpus = 'A1000': ... did you mean
            A100 ...``).
    """
    names = getattr(args, "gpus", ())
    try:
        models = resolve_gpu_models(names, catalog)
    except InputError as exc:
        raise InputError("--gpus", exc.value, str(exc).partition(": ")[2]) from None
    return GpuFilter(models, getattr(args, "min_gpu_memory_gb", None),
                     getattr(args, "gpus_per_vm", None))


def scenario_from_args(args: argparse.Namespace, pw_usd_per_hour: float,
                       catalog: Catalog | None = None,
                       checkpoint_gb: float | None = None) -> Scenario:
    """The :class:`Scenario` of :func:`add_scenario_args`'s options (``--objective`` if the
    command has it, else the scenario's default), its GPU filter's names checked against
    ``catalog`` (:func:`gpu_filter_from_args`); ``checkpoint_gb``: f when the command resolved
    it (a transformer job's own), else ``--ckpt-gb`` or the default."""
    ckpt = checkpoint_gb if checkpoint_gb is not None else (
        field_default(Scenario, "checkpoint_gb") if args.ckpt_gb is None else args.ckpt_gb)
    return Scenario(pw_usd_per_hour, ckpt, args.buffer,
                    getattr(args, "objective", field_default(Scenario, "objective")),
                    not args.no_quotas, args.max_nodes, gpu_filter_from_args(args, catalog))


def zone_priced_from_args(catalog: Catalog, args: argparse.Namespace) -> Catalog:
    """``catalog`` priced by ``--zone-price`` (:func:`~deepvm_core.market.zones.
    zone_priced_catalog`; the same catalog under the default rule of the bundled ones)."""
    return zone_priced_catalog(catalog, getattr(args, "zone_price", DEFAULT_ZONE_PRICE))
