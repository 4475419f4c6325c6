"""``deepvm plan`` and ``deepvm calibrate``: the job planner and the scaling calibration from
the command line.

Wiring into the main CLI (``deepvm_core/cli/``)::

    add_plan_parsers(subparsers)                  # adds "plan" and "calibrate"
    if args.command in PLAN_COMMANDS:
        return run_plan_command(args)

``plan`` runs :func:`deepvm_core.pipeline.plan.plan_job` and prints a comparison table (the best
configurations and the paper's policies: hourly price, epoch time, expected makespan and
cost, their P10-P90 ranges, events, checkpoint interval; then the assumptions and flags) or
the plan JSON (:func:`~deepvm_core.io.plan_json.plan_to_dict`, which ``deepvm export --to
ec2-fleet`` and ``deepvm launch`` read). ``calibrate`` fits the logistic scaling curve of every
measured GPU type (optionally eFLOPS too), prints each fit with R², RMSE and points, and writes
the calibrated catalog atomically.

Every user error (bad number, unknown type, malformed CSV, invalid catalog) ends with one line
on stderr (``deepvm plan: error: ...``) and exit code 2. ``calibrate`` writes only trusted fits
unless ``--force`` (else exit 1, :data:`CALIBRATE_EXIT_CODES`); the plan table never prints
``inf`` or ``nan``: a cluster that is not expected to finish says why under the table.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, Final, TextIO

from deepvm_core.catalog import Catalog
from deepvm_core.catalog.store import load_catalog, save_catalog
from deepvm_core.catalog.types import INTERRUPTION_BUCKET_LABELS
from deepvm_core.cli.common import (
    add_scenario_args,
    number,
    scenario_from_args,
    zone_priced_from_args,
)
from deepvm_core.cli.job_args import add_job_arguments, load_measurements_arg, speedup_from_args
from deepvm_core.cli.traces import add_plan_pool_args, plan_replay, replay_note
from deepvm_core.defaults import field_default
from deepvm_core.errors import (
    EXIT_USAGE,
    CatalogError,
    DeepVMError,
    MeasurementsError,
    WorkloadError,
)
from deepvm_core.hardware.calibrate import MIN_TRUSTED_R_SQUARED, calibrate_catalog
from deepvm_core.hardware.unused import unused_measurements_warnings
from deepvm_core.io.plan_json import estimate_in_words, plan_to_dict
from deepvm_core.io.zone_record import spot_zone_record, with_spot_zone
from deepvm_core.job.montecarlo import DEFAULT_TRIALS
from deepvm_core.job.objectives import DEFAULT_FASTEST_TOLERANCE, DEFAULT_GOAL
from deepvm_core.model import DEFAULT_OBJECTIVE, Configuration
from deepvm_core.pipeline.plan import (
    DEFAULT_SEED,
    GOALS,
    PLAN_POLICY_LABELS,
    JobPlanResult,
    PlanEstimate,
    plan_job,
)
from deepvm_core.pipeline.recommend_job import compare_plan_with_recommendation, recommend_job
from deepvm_core.recommend.recommendation import DEFAULT_TOP_K, TOP_K_RANGE, recommend
from deepvm_core.units import MINUTES_PER_HOUR
from deepvm_core.workload.workload import (
    AUTO,
    MAX_CHECKPOINT_FIXED_SECONDS,
    MAX_RESTART_HOURS,
    MAX_WAIT_HOURS,
    Workload,
)

PLAN_COMMANDS: Final = ("plan", "calibrate")
#: ``deepvm calibrate``: the fits were printed but not written (a fit is not trusted).
EXIT_NOT_WRITTEN: Final = 1
CALIBRATE_EXIT_CODES: Final = f"""exit codes:
  0  the calibrated catalog was written (every fit trusted, or --force)
  {EXIT_NOT_WRITTEN}  the fits were printed, nothing was written: a fit is not trusted (R² below
     {MIN_TRUSTED_R_SQUARED:g}, or a parameter at a bound of the fit); check the measurements,
     or write it anyway with --force
  {EXIT_USAGE}  bad input (file, catalog, measurements, a fit that cannot be made), one line on
     stderr"""
#: The workload's defaults by field name (``deepvm plan`` shows and uses them).
_WORKLOAD_DEFAULTS: Final = {name: field_default(Workload, name) for name in (
    "reference_nodes", "checkpoint_every_epochs", "restart_hours", "wait_hours",
    "disk_gb_per_second", "checkpoint_fixed_seconds", "mtbi_scale")}


# ----------------------------------------------------------------------------- parsing


def _mtbi(text: str) -> tuple[str, float]:
    """``--mtbi TYPE=HOURS``."""
    name, sep, hours = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is not TYPE=HOURS (e.g. g4dn.xlarge=4)")
    value: float = number(float, 0.0, strict=True)(hours)
    return name.strip(), value


def add_plan_parsers(subparsers: Any) -> None:
    """Add ``plan`` and ``calibrate`` to an ``argparse`` sub-parsers object."""
    p = subparsers.add_parser(
        "plan", help="plan a training job: expected cost and makespan of every cluster",
        description="Estimate a training job's expected makespan and cost on every feasible "
                    "cluster (spot interruptions, checkpoints and restarts included), pick "
                    "the cheapest or fastest, and compare with the paper's policies. Monte "
                    "Carlo percentiles for the best and the policies.")
    add_scenario_args(p, with_pw=True, pw_off=True,
                      objective_help="the final tie-break's order (model.md): paper (Z, "
                                     "default) or performance")
    w = _WORKLOAD_DEFAULTS
    job = p.add_argument_group("the job")
    add_job_arguments(job)
    ckpt = job.add_mutually_exclusive_group()
    ckpt.add_argument("--ckpt-every-epochs", type=number(int, 1), metavar="K",
                      help=f"a checkpoint every K epochs (default "
                           f"{w['checkpoint_every_epochs']})")
    ckpt.add_argument("--ckpt-auto", action="store_true",
                      help="Daly's checkpoint interval from the MTBI and the stall")
    # Minutes are converted to the workload's hours only when given, so that a default is the
    # workload's own value exactly.
    job.add_argument("--restart-min", type=number(
                         float, 0.0, maximum=MAX_RESTART_HOURS * MINUTES_PER_HOUR,
                         bound=f" ({MAX_RESTART_HOURS:g} h, the bound on the restart R)"),
                     help="restart after an interruption R, minutes (default "
                          f"{w['restart_hours'] * MINUTES_PER_HOUR:g}, at most "
                          f"{MAX_RESTART_HOURS * MINUTES_PER_HOUR:g})")
    job.add_argument("--wait-min", type=number(
                         float, 0.0, maximum=MAX_WAIT_HOURS * MINUTES_PER_HOUR,
                         bound=f" ({MAX_WAIT_HOURS:g} h, the bound on the capacity wait W)"),
                     help="capacity wait after an interruption W, minutes (default "
                          f"{w['wait_hours'] * MINUTES_PER_HOUR:g}, at most "
                          f"{MAX_WAIT_HOURS * MINUTES_PER_HOUR:g})")
    job.add_argument("--disk-gbps", type=number(float, 0.0, strict=True),
                     default=w["disk_gb_per_second"],
                     help=f"anchor disk write bandwidth D, GB/s (default "
                          f"{w['disk_gb_per_second']:g})")
    job.add_argument("--ckpt-fixed-s", type=number(
                         float, 0.0, maximum=MAX_CHECKPOINT_FIXED_SECONDS,
                         bound=" (the bound on the fixed checkpoint cost δ0)"),
                     default=w["checkpoint_fixed_seconds"],
                     help=f"fixed cost of one checkpoint δ0, seconds (default "
                          f"{w['checkpoint_fixed_seconds']:g}, at most "
                          f"{MAX_CHECKPOINT_FIXED_SECONDS:g})")
    job.add_argument("--mtbi", type=_mtbi, action="append", default=[], metavar="TYPE=HOURS",
                     help="mean hours between interruptions of TYPE's spot market (repeat); "
                          "default from its Spot Advisor bucket")
    job.add_argument("--mtbi-scale", type=number(float, 0.0, strict=True),
                     default=w["mtbi_scale"],
                     help=f"factor on every MTBI, the sensitivity (default {w['mtbi_scale']:g})")
    goal = p.add_argument_group("the goal")
    goal.add_argument("--goal", choices=GOALS, default=DEFAULT_GOAL,
                      help="cheapest (least expected cost) or fastest (least expected "
                           f"makespan); default {DEFAULT_GOAL}")
    goal.add_argument("--fastest-tolerance", type=number(float, 0.0, maximum=1.0),
                      default=DEFAULT_FASTEST_TOLERANCE, metavar="SHARE",
                      help="with --goal fastest: clusters within this share of the least "
                           "expected makespan count as equally fast, and the cheapest wins "
                           f"(default {DEFAULT_FASTEST_TOLERANCE:g}; 0: the least makespan "
                           "whatever it costs)")
    goal.add_argument("--deadline-hours", type=number(float, 0.0, strict=True),
                      metavar="H", help="only clusters whose expected makespan is <= H (with "
                                        "either goal); also the Monte Carlo deadline "
                                        "probability")
    goal.add_argument("--budget-usd", type=number(float, 0.0, strict=True),
                      metavar="B", help="only clusters whose expected cost is <= B (with "
                                        "either goal)")
    goal.add_argument("--trials", type=number(int, 0), default=DEFAULT_TRIALS,
                      help=f"Monte Carlo runs per simulated cluster (default {DEFAULT_TRIALS}; "
                           "0: none)")
    goal.add_argument("--seed", type=number(int, 0), default=DEFAULT_SEED,
                      help=f"Monte Carlo seed (default {DEFAULT_SEED})")
    goal.add_argument("--top", type=number(int, TOP_K_RANGE[0]),
                      default=DEFAULT_TOP_K,
                      help=f"how many best clusters, and DeepVM's top-k (default "
                           f"{DEFAULT_TOP_K})")
    add_plan_pool_args(p)
    p.add_argument("--format", choices=("table", "json"), default="table")

    c = subparsers.add_parser(
        "calibrate", help="fit scaling curves (and eFLOPS) from measured epoch times",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Fit S(n) = c / (1 + exp(-a (n - b))) to each measured GPU type's speedups "
                    "t(1)/t(n) (points with n >= 2), print R², RMSE and points per fit, and "
                    "write the catalog with the new fits (atomically).",
        epilog=CALIBRATE_EXIT_CODES)
    c.add_argument("measurements", metavar="MEASUREMENTS.csv",
                   help="instance,nodes,epoch_seconds rows (a path or a bundled name)")
    c.add_argument("--catalog", required=True, help="catalog to calibrate (path or name)")
    c.add_argument("--out", required=True, metavar="FILE.json", help="where to write it")
    c.add_argument("--eflops", nargs="?", const="", default=None, metavar="REF",
                   help="also set eFLOPS(g) = eFLOPS(REF) t_REF(1) / t_g(1) (REF default: the "
                        "top spot-FLOPP measured type)")
    c.add_argument("--force", action="store_true",
                   help=f"write even when a fit is not trusted (R² below "
                        f"{MIN_TRUSTED_R_SQUARED:g}, or a parameter at a bound of the fit)")


# ----------------------------------------------------------------------------- helpers


def workload_from_args(args: argparse.Namespace, mtbi: dict[str, float]) -> Workload:
    """The :class:`Workload` of ``deepvm plan``'s options: each one not given is the
    workload's own default."""
    given: dict[str, Any] = {}
    if args.ckpt_auto:
        given["checkpoint_every_epochs"] = AUTO
    elif args.ckpt_every_epochs is not None:
        given["checkpoint_every_epochs"] = args.ckpt_every_epochs
    if args.restart_min is not None:
        given["restart_hours"] = args.restart_min / MINUTES_PER_HOUR
    if args.wait_min is not None:
        given["wait_hours"] = args.wait_min / MINUTES_PER_HOUR
    return Workload(
        epochs=args.epochs, reference_epoch_seconds=args.epoch_seconds,
        reference_gpu=args.ref_type, reference_nodes=args.ref_nodes,
        checkpoint_gb=args.ckpt_gb, disk_gb_per_second=args.disk_gbps,
        checkpoint_fixed_seconds=args.ckpt_fixed_s, mtbi_hours_by_gpu=mtbi,
        mtbi_scale=args.mtbi_scale, **given)


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


def _short(c: Configuration) -> str:
    """``TR 17 x g4dn.xlarge + 1 x c5.xlarge`` / ``SA 1+15 x g4dn.xlarge``."""
    if c.architecture == "single_anchor":
        return f"SA 1+{c.gpu_spot} x {c.gpu}"
    return f"TR {c.gpu_spot} x {c.gpu} + {c.memory_nodes} x {c.cpu}"


def _fmt(x: float | None, spec: str) -> str:
    """``x`` in ``spec``; ``-`` for ``None``, infinity or NaN (never printed)."""
    if x is None or not math.isfinite(x):
        return "-"
    return format(x, spec)


def _range(low: float, high: float, spec: str) -> str:
    if not (math.isfinite(low) and math.isfinite(high)):
        return "-"
    return f"{_fmt(low, spec)}-{_fmt(high, spec)}"


_COLUMNS: Final = (("", "<"), ("configuration", "<"), ("$/h", ">"), ("epoch s", ">"),
                   ("exp. h", ">"), ("P10-P90 h", ">"), ("exp. $", ">"), ("P10-P90 $", ">"),
                   ("events", ">"), ("ckpt every", ">"))


def _row(label: str, e: PlanEstimate) -> list[str]:
    mc = e.monte_carlo
    interval = e.checkpoint_interval_seconds
    ckpt = "never" if not math.isfinite(interval) or e.checkpoints == 0 else (
        f"{interval:.0f} s" if interval < 600 else f"{interval / 60:.0f} min")
    if e.does_not_finish is not None:  # no numbers: the reason is printed under the table
        return [label, _short(e.configuration), f"{e.configuration.hourly_price_usd:.4f}",
                _fmt(e.epoch_seconds, ".1f"), "no finish", "-", "-", "-", "-", ckpt]
    return [
        label, _short(e.configuration), f"{e.configuration.hourly_price_usd:.4f}",
        _fmt(e.epoch_seconds, ".1f"), _fmt(e.expected_makespan_hours, ".3f"),
        _range(mc.makespan_hours_p10, mc.makespan_hours_p90, ".3f") if mc else "-",
        _fmt(e.expected_cost_usd, ".2f"),
        _range(mc.cost_usd_p10, mc.cost_usd_p90, ".2f") if mc else "-",
        _fmt(e.expected_interruptions, ".2f"), ckpt,
    ]


def _table(rows: list[list[str]]) -> str:
    head = [name for name, _ in _COLUMNS]
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    lines = []
    for r in [head, *rows]:
        cells = [f"{cell:{align}{w}}" for cell, (_, align), w in zip(r, _COLUMNS, widths,
                                                                       strict=True)]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"


def _labelled(result: JobPlanResult) -> list[tuple[str, PlanEstimate]]:
    """The table's rows: the best, then the paper's policies, each with its label."""
    rows = [(f"best {i}" if len(result.best) > 1 else "best", e)
            for i, e in enumerate(result.best, 1)]
    if result.policies.computed:
        for i, e in enumerate(result.policies.deepvm, 1):
            rows.append((f"DeepVM {i}" if i > 1 else "DeepVM", e))
        for name, found in result.policies.items()[1:]:
            if found is not None:
                rows.append((PLAN_POLICY_LABELS[name], found))
    return rows


def render_plan_table(result: JobPlanResult, catalog: Catalog) -> str:
    """The ``--format table`` text of a plan."""
    w, s, a = result.workload, result.scenario, result.assumptions
    pw = "off" if result.pw_usd_per_hour is None else f"{result.pw_usd_per_hour:g} USD/h"
    limits = [f"deadline {result.deadline_hours:g} h" if result.deadline_hours else "",
              f"budget {result.budget_usd:g} USD" if result.budget_usd else ""]
    limit_text = ", ".join(x for x in limits if x)
    out = [f"Catalog {catalog.name} ({catalog.region}, prices {catalog.prices_date}); PW {pw}, "
           f"checkpoint {s.checkpoint_gb:g} GB x buffer {s.buffer_checkpoints:g}; quotas "
           f"{'on' if s.use_quotas else 'off'}; {result.size} feasible clusters\n",
           f"Job: {w.epochs:g} epochs, {w.reference_epoch_seconds:g} s per epoch on "
           f"{w.reference_nodes} x {a.reference_gpu}; goal {result.goal}"
           f"{' (' + limit_text + ')' if limit_text else ''}; Monte Carlo "
           f"{result.trials} trials, seed {result.seed}\n\n"]
    rows = [_row(label, e) for label, e in _labelled(result)]
    if rows:
        out.append(_table(rows))
    unfinished: dict[str, list[str]] = {}
    for label, e in _labelled(result):
        if e.does_not_finish is not None:
            unfinished.setdefault(f"{_short(e.configuration)}: {e.does_not_finish}",
                                  []).append(label)
    for reason, labels in unfinished.items():
        out.append(f"{', '.join(labels)}: {reason}\n")
    if result.explanation is not None:
        out.append(f"Nothing qualifies. {result.explanation.summary}\n")
    if result.policies.computed:
        missing = [PLAN_POLICY_LABELS[n] for n, e in result.policies.items() if e is None]
        if missing and result.size:
            out.append(f"No configuration for: {', '.join(missing)}\n")
    if result.chosen is not None:
        out.append(f"\nChosen: {result.chosen.describe()}\n")
        out.extend(f"  {line}\n" for line in estimate_in_words(result.chosen))
    source = f" ({a.measurements_source})" if a.measurements_source else ""
    every = ("Daly's interval" if a.checkpoint_every_epochs == AUTO
             else f"every {a.checkpoint_every_epochs} epoch(s)")
    out.append(f"\nAssumptions: speedup {a.speedup}{source}; checkpoint {every}; restart "
               f"{a.restart_hours * MINUTES_PER_HOUR:g} min, wait "
               f"{a.wait_hours * MINUTES_PER_HOUR:g} min, disk {a.disk_gb_per_s:g} GB/s, "
               f"fixed checkpoint cost {a.checkpoint_fixed_seconds:g} s, MTBI x "
               f"{a.mtbi_scale:g}\n")
    for g in a.gpu_types:
        bucket = ("no bucket" if g.interruption_bucket is None
                  else f"bucket {INTERRUPTION_BUCKET_LABELS[g.interruption_bucket]}")
        one = _fmt(g.one_vm_epoch_seconds, ".2f")
        out.append(f"  {g.gpu}: MTBI {g.mtbi_hours:g} h ({g.mtbi_source}, {bucket}); speedup "
                   f"{g.speedup_source}; one VM {one} s per epoch ({g.one_vm_source or '-'}"
                   f"{' ' + g.one_vm_table if g.one_vm_table else ''})\n")
    for note in result.notes:
        out.append(f"Note: {note}\n")
    for warning in result.warnings:
        out.append(f"Warning: {warning}\n")
    return "".join(out)


# ----------------------------------------------------------------------------- commands


def _cmd_plan(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    catalog = zone_priced_from_args(_load_catalog(args.catalog), args)
    speedup = speedup_from_args(args)
    mtbi: dict[str, float] = {}
    for name, hours in args.mtbi:
        if name in mtbi:
            raise DeepVMError(f"--mtbi {name} is given twice")
        mtbi[name] = hours
    workload = workload_from_args(args, mtbi)
    scenario = scenario_from_args(args, 0.0 if args.pw is None else args.pw)
    result = plan_job(catalog, scenario, workload, pw_usd_per_hour=args.pw, speedup=speedup,
                      goal=args.goal, deadline_hours=args.deadline_hours,
                      budget_usd=args.budget_usd, trials=args.trials, seed=args.seed,
                      top_k=args.top, replay=plan_replay(args, catalog),
                      fastest_tolerance=args.fastest_tolerance)
    comparison = None
    if args.pw is not None:  # Recommend needs a PW
        job = recommend_job(catalog, workload, speedup)
        rec = recommend(catalog, replace(scenario, objective=DEFAULT_OBJECTIVE), top_k=1,
                        speed=job.speed)
        comparison = compare_plan_with_recommendation(result, rec, catalog, job)
    if args.format == "json":  # the warnings are in the JSON and, for a reader, on stderr
        doc = with_spot_zone(plan_to_dict(result, catalog), catalog,
                             None if result.chosen is None else result.chosen.configuration,
                             args.zone_price, args.pw)
        if comparison is not None:
            doc["recommend_comparison"] = {"same_cluster": comparison.same,
                                           "sentence": comparison.sentence}
        out.write(json.dumps(doc, indent=2) + "\n")
        for warning in result.warnings:
            err.write(f"deepvm plan: warning: {warning}\n")
    else:
        out.write(render_plan_table(result, catalog))
        out.write(replay_note(result))
        zone = None if result.chosen is None else spot_zone_record(
            catalog, result.chosen.configuration, args.zone_price, args.pw)
        if zone:  # only for a type with per-zone prices
            out.write(f"Zone: {zone['sentence']}\n")
        if comparison is not None:
            out.write(f"Recommend ({DEFAULT_OBJECTIVE}): {comparison.sentence}\n")
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
