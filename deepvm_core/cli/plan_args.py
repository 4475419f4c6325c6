"""The arguments of ``deepvm plan`` and ``deepvm calibrate``: their parsers (the job's own
arguments are :mod:`deepvm_core.cli.job_args`'s, shared with ``recommend``), the workload that
``plan``'s options give, and ``calibrate``'s exit codes. Every default shown is the core's.
"""

from __future__ import annotations

import argparse
from typing import Any, Final

from deepvm_core.cli.common import add_scenario_args, number
from deepvm_core.cli.job_args import (
    add_job_arguments,
    checkpoint_gb_from_args,
    transformer_from_args,
)
from deepvm_core.cli.traces import add_plan_pool_args
from deepvm_core.defaults import field_default
from deepvm_core.errors import EXIT_USAGE
from deepvm_core.hardware.calibrate import MIN_TRUSTED_R_SQUARED
from deepvm_core.job.montecarlo import DEFAULT_TRIALS
from deepvm_core.job.objectives import DEFAULT_FASTEST_TOLERANCE, DEFAULT_GOAL
from deepvm_core.market.mtbi import DEFAULT_WAIT_HOURS
from deepvm_core.pipeline.plan import DEFAULT_SEED, GOALS
from deepvm_core.recommend.recommendation import DEFAULT_TOP_K, TOP_K_RANGE
from deepvm_core.units import MINUTES_PER_HOUR
from deepvm_core.workload.workload import (
    AUTO,
    EXAMPLE_EPOCH_SECONDS,
    EXAMPLE_EPOCHS,
    MAX_CHECKPOINT_FIXED_SECONDS,
    MAX_RESTART_HOURS,
    MAX_WAIT_HOURS,
    Workload,
)

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
    "disk_gb_per_second", "checkpoint_fixed_seconds", "mtbi_scale", "per_vm_share")}



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
    _add_minutes(job, "--restart-min", "restart after an interruption R", MAX_RESTART_HOURS,
                 f"default {w['restart_hours'] * MINUTES_PER_HOUR:g}", "the restart R")
    _add_minutes(job, "--wait-min", "mean capacity wait W after an interruption (and before "
                 "the first attempt of a job that starts inside an outage)", MAX_WAIT_HOURS,
                 "default: each type's Spot Advisor bucket, "
                 f"{DEFAULT_WAIT_HOURS * MINUTES_PER_HOUR:g}", "the capacity wait W")
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
    job.add_argument("--per-vm-share", type=number(float, 0.0, maximum=1.0),
                     default=w["per_vm_share"], metavar="RHO",
                     help="share of one VM's reclaims that take that VM alone: n spot VMs are "
                          "interrupted 1 + RHO (n - 1) times as often as one (default "
                          f"{w['per_vm_share']:g}; 0: one event takes every spot VM)")
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
    common: dict[str, Any] = dict(
        reference_gpu=args.ref_type, reference_nodes=args.ref_nodes,
        checkpoint_gb=checkpoint_gb_from_args(args), disk_gb_per_second=args.disk_gbps,
        checkpoint_fixed_seconds=args.ckpt_fixed_s, mtbi_hours_by_gpu=mtbi,
        mtbi_scale=args.mtbi_scale, per_vm_share=args.per_vm_share, **given)
    transformer = transformer_from_args(args)
    if transformer is not None:
        # k: Daly's interval unless asked (Workload.for_transformer's default)
        return Workload.for_transformer(transformer, tokens_per_second=args.tokens_per_second,
                                        **common)
    return Workload(
        epochs=EXAMPLE_EPOCHS if args.epochs is None else args.epochs,
        reference_epoch_seconds=(EXAMPLE_EPOCH_SECONDS if args.epoch_seconds is None
                                 else args.epoch_seconds), **common)


def _add_minutes(group: argparse._ArgumentGroup, flag: str, what: str, max_hours: float,
                 default: str, bound_name: str) -> None:
    """A duration option taken in minutes (the workload holds hours), bounded by
    ``max_hours``; without a default, so that an absent option keeps the workload's own
    value exactly (``default`` says what that is in the help)."""
    group.add_argument(flag, type=number(
        float, 0.0, maximum=max_hours * MINUTES_PER_HOUR,
        bound=f" ({max_hours:g} h, the bound on {bound_name})"),
        help=f"{what}, minutes ({default}; at most {max_hours * MINUTES_PER_HOUR:g})")
