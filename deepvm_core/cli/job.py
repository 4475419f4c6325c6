"""``deepvm plan`` and ``deepvm calibrate``: the job planner and the scaling calibration from
the command line.

Wiring into the main CLI (``deepvm_core/cli/``)::

    add_plan_parsers(subparsers)                  # cli.plan_args: "plan" and "calibrate"
    if args.command in PLAN_COMMANDS:
        return run_plan_command(args)

``plan`` runs :func:`deepvm_core.pipeline.plan.plan_job` and prints a comparison table
(:func:`deepvm_core.cli.plan_table.render_plan_table`) or the plan JSON
(:func:`~deepvm_core.io.plan_json.plan_to_dict`, which ``deepvm export --to ec2-fleet`` and
``deepvm launch`` read). ``calibrate`` fits the logistic scaling curve of every measured GPU
type (optionally eFLOPS too), prints each fit with R², RMSE and points, and writes the
calibrated catalog atomically.

Every user error (bad number, unknown type, malformed CSV, invalid catalog) ends with one line
on stderr (``deepvm plan: error: ...``) and exit code 2. ``calibrate`` writes only trusted fits
unless ``--force`` (else exit 1, :data:`~deepvm_core.cli.plan_args.CALIBRATE_EXIT_CODES`).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Final, TextIO

from deepvm_core.catalog import Catalog
from deepvm_core.catalog.store import load_catalog, save_catalog
from deepvm_core.cli.common import scenario_from_args, zone_priced_from_args
from deepvm_core.cli.job_args import (
    checkpoint_gb_from_args,
    load_measurements_arg,
    speedup_from_args,
)
from deepvm_core.cli.plan_args import EXIT_NOT_WRITTEN, workload_from_args
from deepvm_core.cli.plan_table import render_plan_table
from deepvm_core.cli.traces import plan_pools, plan_replay, replay_note
from deepvm_core.errors import (
    EXIT_USAGE,
    CatalogError,
    DeepVMError,
    MeasurementsError,
    WorkloadError,
)
from deepvm_core.hardware.calibrate import calibrate_catalog
from deepvm_core.hardware.unused import unused_measurements_warnings
from deepvm_core.io.plan_json import plan_to_dict
from deepvm_core.io.zone_record import spot_zone_record, with_spot_zone
from deepvm_core.market.pools import split_pool_name
from deepvm_core.model import DEFAULT_OBJECTIVE
from deepvm_core.pipeline.deadline_offer import deadline_offer
from deepvm_core.pipeline.plan import plan_job
from deepvm_core.pipeline.pool_types import unused_pool_types
from deepvm_core.pipeline.recommend_job import compare_plan_with_recommendation, recommend_job
from deepvm_core.recommend.recommendation import recommend

PLAN_COMMANDS: Final = ("plan", "calibrate")


def _one_line(exc: DeepVMError) -> str:
    """The error in one line: for lists of problems, the first and how many more."""
    if isinstance(exc, (WorkloadError, MeasurementsError, CatalogError)) and exc.problems:
        more = len(exc.problems) - 1
        extra = f" (+{more} more)" if more else ""
        first = " ".join(str(exc.problems[0]).split())
        prefix = "" if first.startswith(exc.source) else f"{exc.source}: "
        return f"{prefix}{first}{extra}"
    return " ".join(str(exc).split())


def _load_catalog(name: str) -> Catalog:
    try:
        return load_catalog(name)
    except CatalogError as exc:
        raise DeepVMError(f"catalog {name!r} is invalid: {_one_line(exc)}") from None



def _cmd_plan(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    catalog = zone_priced_from_args(_load_catalog(args.catalog), args)
    speedup = speedup_from_args(args)
    mtbi: dict[str, float] = {}
    for name, hours in args.mtbi:
        if name in mtbi:
            raise DeepVMError(f"--mtbi {name} is given twice")
        mtbi[name] = hours
    workload = workload_from_args(args, mtbi)
    scenario = scenario_from_args(args, 0.0 if args.pw is None else args.pw, catalog,
                                  checkpoint_gb_from_args(args))
    pools = plan_pools(args, catalog)
    result = plan_job(catalog, scenario, workload, pw_usd_per_hour=args.pw, speedup=speedup,
                      goal=args.goal, deadline_hours=args.deadline_hours,
                      budget_usd=args.budget_usd, trials=args.trials, seed=args.seed,
                      top_k=args.top, replay=plan_replay(args, catalog, pools),
                      fastest_tolerance=args.fastest_tolerance)
    pool_types = [split_pool_name(name)[0] for name, _ in args.pool]
    offer = deadline_offer(result, catalog, pools=pools, window_days=args.window_days)
    comparison = None
    if args.pw is not None:  # Recommend needs a PW
        job = recommend_job(catalog, workload, speedup)
        rec = recommend(catalog, replace(scenario, objective=DEFAULT_OBJECTIVE), top_k=1,
                        speed=job.speed)
        comparison = compare_plan_with_recommendation(result, rec, catalog, job)
    if args.format == "json":  # the warnings are in the JSON and, for a reader, on stderr
        doc = with_spot_zone(plan_to_dict(result, catalog, comparison=comparison,
                                          deadline_offer=offer), catalog,
                             None if result.chosen is None else result.chosen.configuration,
                             args.zone_price, args.pw)
        out.write(json.dumps(doc, indent=2) + "\n")
        for warning in result.warnings:
            err.write(f"deepvm plan: warning: {warning}\n")
        for why in unused_pool_types(result, catalog, pool_types):
            err.write(f"deepvm plan: note: {why}\n")
    else:
        out.write(render_plan_table(result, catalog))
        out.write(replay_note(result, catalog, pool_types))
        zone = None if result.chosen is None else spot_zone_record(
            catalog, result.chosen.configuration, args.zone_price, args.pw)
        if zone:  # only for a type with per-zone prices
            out.write(f"Zone: {zone['sentence']}\n")
        if comparison is not None:
            out.write(f"Recommend ({DEFAULT_OBJECTIVE}): {comparison.sentence}\n")
        if offer is not None:
            out.write(f"Deadline: {offer.sentence()}\n")
            out.writelines(f"  {line}\n" for line in offer.lines())
    return 0


def _cmd_calibrate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    force = bool(getattr(args, "force", False))
    catalog = _load_catalog(args.catalog)
    table = load_measurements_arg(args.measurements)
    if Path(args.out).exists() and Path(args.out).resolve() == Path(args.catalog).resolve():
        raise DeepVMError("--out must differ from --catalog (the input is never overwritten)")
    reference: str | None = args.eflops
    if reference == "":  # the measured type with a one-node time and the most eFLOP per spot USD
        measured = {m.instance for m in table.instances if m.one_node_epoch_seconds}
        usable = [g for g in catalog.gpu_types if g.name in measured and g.eflops is not None]
        if not usable:
            raise DeepVMError("--eflops: no measured GPU type of the catalog has eFLOPS and a "
                              "one-node time; name the reference: --eflops TYPE")
        reference = min(usable, key=lambda g: (-(g.eflops or 0.0) / g.spot_usd_per_hour,
                                               g.name)).name
    result = calibrate_catalog(catalog, table, eflops_reference=reference)
    unused = unused_measurements_warnings(catalog, table)
    if not result.fits:
        raise DeepVMError(f"nothing to calibrate. {unused[0] if unused else table.source}")
    out.write(f"Scaling fits from {table.source} (points with n >= 2; S(1) = 1):\n")
    width = max([len("instance")] + [len(f.instance) for f in result.fits])
    out.write(f"{'instance':<{width}}  {'a':>10} {'b':>10} {'c':>10} {'R²':>7} {'RMSE':>8} "
              f"{'points':>6}\n")
    for f in result.fits:
        p = f.params
        r2 = round(f.r_squared, 4) + 0.0  # never "-0.0000"
        out.write(f"{f.instance:<{width}}  {p.a:>10.6g} {p.b:>10.6g} {p.c:>10.6g} "
                  f"{r2:>7.4f} {f.rmse:>8.4f} {f.points:>6}{'  !' if f.warnings else ''}\n")
    for e in result.eflops:
        before = "-" if e.eflops_before is None else f"{e.eflops_before:g}"
        out.write(f"eFLOPS {e.instance}: {before} -> {e.eflops_after:.6g} (relative to "
                  f"{reference})\n")
    for warning in (*unused, *result.warnings):
        err.write(f"deepvm calibrate: warning: {warning}\n")
    if result.warnings and not force:
        err.write(f"deepvm calibrate: {args.out} not written: a fit is not trusted; check the "
                  "measurements, or write it anyway with --force\n")
        return EXIT_NOT_WRITTEN
    try:
        save_catalog(result.catalog, args.out)
    except OSError as exc:
        raise DeepVMError(f"cannot write {args.out!r}: {exc.strerror}") from None
    out.write(f"wrote {args.out}\n")
    return 0


def run_plan_command(args: argparse.Namespace, *, stdout: TextIO | None = None,
                     stderr: TextIO | None = None) -> int:
    """Run ``plan`` or ``calibrate`` with parsed ``args``: 0, or 2 with one line on stderr
    (``calibrate``: also 1, fits printed but not written, :data:`CALIBRATE_EXIT_CODES`)."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    try:
        if args.command == "plan":
            return _cmd_plan(args, out, err)
        return _cmd_calibrate(args, out, err)
    except DeepVMError as exc:
        err.write(f"deepvm {args.command}: error: {_one_line(exc)}\n")
        return EXIT_USAGE
    except BrokenPipeError:
        return 0
