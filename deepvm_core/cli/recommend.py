"""``deepvm recommend``, ``sweep``, ``flopp`` and ``catalog validate/convert``."""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path
from typing import Any, TextIO

from deepvm_core.catalog import Catalog, GpuType
from deepvm_core.catalog.artifact import catalog_to_artifact_dict
from deepvm_core.catalog.catalog import catalog_to_dict
from deepvm_core.catalog.store import load_catalog
from deepvm_core.cli.accelerator_table import accelerator_section
from deepvm_core.cli.catalog_import import add_import_parser, run_import
from deepvm_core.cli.catalog_quotas import add_quotas_parser, run_quotas
from deepvm_core.cli.common import (
    Parser,
    add_scenario_args,
    number,
    scenario_from_args,
    zone_priced_from_args,
)
from deepvm_core.cli.job_args import add_job_arguments, checkpoint_gb_from_args
from deepvm_core.cli.recommend_table import recommend_job, render_recommendation
from deepvm_core.errors import EXIT_USAGE, CatalogError, DeepVMError
from deepvm_core.files import write_json_atomic
from deepvm_core.hardware.typos import typo_warnings
from deepvm_core.io.export import recommendation_to_dict
from deepvm_core.io.recommend_export import with_job_estimate
from deepvm_core.io.replay import read_export, replay
from deepvm_core.io.zone_record import spot_zone_record, with_spot_zone
from deepvm_core.model import (
    DEFAULT_OBJECTIVE,
    Configuration,
    flopp_ranking,
)
from deepvm_core.recommend.recommendation import (
    DEFAULT_SOLVER,
    DEFAULT_TOP_K,
    SOLVERS,
    TOP_K_RANGE,
    recommend,
)
from deepvm_core.recommend.sweep import FIG3_PW_GRID, pw_grid, sweep
from deepvm_core.search.solvers import ILP_TIME_LIMIT_S

#: ``recommend --replay``: the export's recommendation came out differently.
EXIT_DIFFERS = 1
#: The commands this module runs.
RECOMMEND_COMMANDS = ("recommend", "sweep", "flopp", "catalog")


def add_recommend_parsers(sub: Any) -> None:
    """Add ``recommend``, ``sweep``, ``flopp`` and ``catalog`` to ``deepvm``'s subparsers."""
    rec = sub.add_parser("recommend", help="recommend configurations for one scenario")
    add_scenario_args(rec, with_pw=True, replayable=True,
                      objective_help=f"speed: the job's epochs per hour (default "
                      f"{DEFAULT_OBJECTIVE}); paper: the paper's Z; performance: eFLOPS * n * "
                      "K(n)")
    rec.add_argument("--replay", metavar="EXPORT.json",
                     help="run the recommendation of an export (this command's JSON) again, "
                     "with its inputs and catalog (found unchanged by name and sha256, else "
                     "rebuilt from the rows it holds), and say whether it matches: exit 0 when "
                     "it does, 1 when it differs, 2 on a bad file; takes no --catalog or --pw, "
                     "and the other scenario options are the export's")
    rec.add_argument("--top", type=number(int, TOP_K_RANGE[0]),
                     default=DEFAULT_TOP_K, help=f"how many (default {DEFAULT_TOP_K})")
    rec.add_argument("--solver", choices=SOLVERS, default=DEFAULT_SOLVER,
                     help=f"enumerate (exact enumeration) or ilp (PuLP integer program, same "
                     f"ranking, slower: 0.45-1.25 s on the 2025 catalogs); "
                     f"default {DEFAULT_SOLVER}")
    rec.add_argument("--time-limit", type=number(float, 0.0, strict=True),
                     default=ILP_TIME_LIMIT_S, metavar="SECONDS",
                     help=f"time budget of the integer program (default {ILP_TIME_LIMIT_S:g}); "
                     "when it proves no optimum within it, the exact enumeration answers and a "
                     "note says so")
    rec.add_argument("--format", choices=("table", "json"), default="table")
    add_job_arguments(rec.add_argument_group(
        "the job (optional: speed then uses its epoch time, and the JSON holds its estimate)"),
        example_by_default=False)

    sw = sub.add_parser("sweep", help="every policy over a PW range (the paper's Fig. 3)")
    add_scenario_args(sw, with_pw=False)
    start, stop, step = FIG3_PW_GRID
    sw.add_argument("--pw-start", type=number(float, 0.0), default=start)
    sw.add_argument("--pw-stop", type=number(float, 0.0), default=stop)
    sw.add_argument("--pw-step", type=number(float, 0.0, strict=True), default=step)
    sw.add_argument("--format", choices=("csv", "json"), default="csv")

    fl = sub.add_parser("flopp", help="the FLOPP ranking of a catalog's GPU types")
    fl.add_argument("--catalog", required=True)
    fl.add_argument("--format", choices=("table", "json"), default="table")

    cat = sub.add_parser("catalog", help="validate, convert or import catalog files, or "
                                         "give one your AWS account's quotas")
    cat_sub = cat.add_subparsers(dest="catalog_command", required=True, parser_class=Parser)
    val = cat_sub.add_parser("validate", help="check a catalog; list every problem")
    val.add_argument("path")
    conv = cat_sub.add_parser("convert", help="convert between our format and the artifact's")
    conv.add_argument("input")
    conv.add_argument("output")
    conv.add_argument("--to", choices=("ours", "artifact"), default="ours",
                      help="output format (default: ours)")
    add_import_parser(cat_sub)
    add_quotas_parser(cat_sub)


# ----------------------------------------------------------------------------- commands


def _load(name: str) -> Catalog:
    try:
        return load_catalog(name)
    except CatalogError as exc:
        first = exc.problems[0] if exc.problems else "unknown problem"
        more = len(exc.problems) - 1
        extra = f" (+{more} more; run 'deepvm catalog validate {name}')" if more else ""
        raise DeepVMError(f"catalog {name!r} is invalid: {first}{extra}") from None


def _cmd_replay(args: argparse.Namespace, out: TextIO) -> int:
    doc = read_export(args.replay)
    result = replay(doc)
    if args.format == "json":
        out.write(json.dumps({"matches": result.matches,
                              "differences": list(result.differences),
                              "catalog": result.catalog_origin, "notes": list(result.notes),
                              "replayed": result.replayed}, indent=2) + "\n")
        return 0 if result.matches else EXIT_DIFFERS
    s = result.recommendation.scenario
    out.write(f"Replayed {args.replay}: catalog {result.catalog_origin}; PW "
              f"{s.pw_usd_per_hour:g} USD/h, checkpoint {s.checkpoint_gb:g} GB x buffer "
              f"{s.buffer_checkpoints:g}; objective {s.objective}; quotas "
              f"{'on' if s.use_quotas else 'off'}; node cap {s.max_nodes}; top "
              f"{result.recommendation.top_k}; solver {result.recommendation.solver}"
              f"{'; ' + s.gpu_filter.clause() if s.gpu_filter.active else ''}\n")
    if result.matches:
        chosen = result.replayed["chosen"]
        out.write(f"matches: the same {len(result.replayed['deepvm'])} configurations and "
                  f"prices; chosen: {chosen['summary'] if chosen else 'none'}\n")
    else:
        out.write(f"differs: {len(result.differences)} configuration(s)\n")
        out.writelines(f"  {line}\n" for line in result.differences)
    out.writelines(f"Note: {line}\n" for line in (*result.notes, *result.recommendation.notes))
    return 0 if result.matches else EXIT_DIFFERS


#: Marks a type whose eFLOPS is estimated, not measured, in the table outputs.
ESTIMATED_MARK = "*"


def _estimated(catalog: Catalog, c: Configuration | str | None) -> bool:
    """True when the GPU type of ``c`` (a configuration or a type name) has an estimated (not
    measured) eFLOPS."""
    if c is None:
        return False
    gpu = catalog.instance(c if isinstance(c, str) else c.gpu)
    return isinstance(gpu, GpuType) and gpu.eflops_source.startswith("estimated")


def _estimate_footnote(catalog: Catalog, shown: list[Configuration | None]) -> str | None:
    names = sorted({c.gpu for c in shown if c is not None and _estimated(catalog, c)})
    if not names:
        return None
    return (f"{ESTIMATED_MARK} eFLOPS estimated from the accelerator model "
            f"(data/accelerators.csv), not measured: {', '.join(names)}")


def _cmd_recommend(args: argparse.Namespace, out: TextIO) -> int:
    if args.replay is not None:
        return _cmd_replay(args, out)
    catalog = zone_priced_from_args(_load(args.catalog), args)
    scenario = scenario_from_args(args, args.pw, catalog, checkpoint_gb_from_args(args))
    job = recommend_job(args, catalog)
    rec = recommend(catalog, scenario, args.solver, top_k=args.top,
                    time_limit_s=args.time_limit, speed=None if job is None else job.speed)
    if args.format == "json":
        doc = with_spot_zone(recommendation_to_dict(rec, catalog), catalog, rec.best,
                             args.zone_price, scenario.pw_usd_per_hour)
        if job is not None:
            doc = with_job_estimate(doc, rec, catalog, job)
        out.write(json.dumps(doc, indent=2) + "\n")
        return 0
    shown = [*rec.deepvm, rec.best_single_anchor, rec.best_tiering,
             *(rec.policy(p) for p in ("deepvm_noscale", "cost_first", "performance_first"))]
    out.write(render_recommendation(rec, catalog, job,
                                    mark=lambda c: ESTIMATED_MARK if _estimated(catalog, c)
                                    else "", footnote=_estimate_footnote(catalog, shown)))
    zone = spot_zone_record(catalog, rec.best, args.zone_price, scenario.pw_usd_per_hour)
    if zone:  # only for a type with per-zone prices
        out.write(f"Zone: {zone['sentence']}\n")
    section = accelerator_section(rec)
    if section:
        out.write("\n" + section)
    return 0


def _cmd_sweep(args: argparse.Namespace, out: TextIO) -> int:
    catalog = zone_priced_from_args(_load(args.catalog), args)
    scenario = scenario_from_args(args, args.pw_start, catalog)
    result = sweep(catalog, scenario, pw_grid(args.pw_start, args.pw_stop, args.pw_step))
    rows = result.rows()
    if args.format == "json":
        out.write(json.dumps({"catalog": {"name": catalog.name, "sha256": catalog.sha256},
                              "normaliser_performance": result.normaliser,
                              "rows": rows}, indent=2) + "\n")
    else:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]) if rows else ["pw_usd_per_hour"],
                                lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return 0


def _cmd_flopp(args: argparse.Namespace, out: TextIO) -> int:
    catalog = _load(args.catalog)
    rows = flopp_ranking(catalog)
    if args.format == "json":
        out.write(json.dumps([r.__dict__ for r in rows], indent=2) + "\n")
        return 0
    out.write(f"{'rank':>4}  {'GPU type':<14} {'eFLOPS':>8} {'spot $/h':>9} {'OD $/h':>8} "
              f"{'spot FLOPP':>12} {'OD FLOPP':>12} {'OD rank':>7}\n")
    for r in rows:
        mark = ESTIMATED_MARK if _estimated(catalog, r.name) else ""
        out.write(f"{r.spot_rank:>4}  {r.name + mark:<14} {r.eflops:>8g} "
                  f"{r.spot_usd_per_hour:>9.4f} "
                  f"{r.on_demand_usd_per_hour:>8.4f} {r.spot_flopp:>12.4g} "
                  f"{r.on_demand_flopp:>12.4g} {r.on_demand_rank:>7}\n")
    if any(g.eflops_source.startswith("estimated") for g in catalog.gpu_types):
        out.write(f"{ESTIMATED_MARK} eFLOPS estimated from the accelerator model "
                  "(data/accelerators.csv), not measured\n")
    return 0


def _cmd_catalog(args: argparse.Namespace, out: TextIO) -> int:
    if args.catalog_command == "import":
        return run_import(args, stdout=out)
    if args.catalog_command == "quotas":
        return run_quotas(args, stdout=out)
    if args.catalog_command == "validate":
        try:
            catalog = load_catalog(args.path)
        except CatalogError as exc:  # one problem on one line; more, one per line
            out.write((exc.one_line() if len(exc.problems) == 1 else str(exc)) + "\n")
            return EXIT_USAGE
        out.write(f"OK: {catalog.name} ({catalog.provider}, {catalog.region}, prices "
                  f"{catalog.prices_date}): {len(catalog.gpu_types)} GPU types, "
                  f"{len(catalog.cpu_types)} CPU types, {len(catalog.quotas)} quotas, "
                  f"{len(catalog.saturation)} saturation steps; sha256 {catalog.sha256}\n")
        for w in (*catalog.warnings, *typo_warnings(catalog)):
            out.write(f"warning: {w}\n")
        return 0
    catalog = _load(args.input)
    data = catalog_to_artifact_dict(catalog) if args.to == "artifact" else catalog_to_dict(catalog)
    if Path(args.output).resolve() == Path(args.input).resolve():
        raise DeepVMError("output must differ from input (the input is never overwritten)")
    try:
        write_json_atomic(args.output, data)
    except OSError as exc:
        raise DeepVMError(f"cannot write {args.output!r}: {exc.strerror}") from None
    out.write(f"wrote {args.output} ({args.to} format)\n")
    return 0




def run_recommend_command(args: argparse.Namespace, out: TextIO) -> int:
    """Run one of :data:`RECOMMEND_COMMANDS`; returns the exit code."""
    if args.command == "recommend":
        return _cmd_recommend(args, out)
    if args.command == "sweep":
        return _cmd_sweep(args, out)
    if args.command == "flopp":
        return _cmd_flopp(args, out)
    return _cmd_catalog(args, out)
