"""``deepvm traces stats``, ``deepvm traces fetch`` and ``deepvm backtest``: spot traces from
the command line (``traces.md``).

Wiring into the main CLI (``deepvm_core/cli.py``)::

    add_traces_parsers(subparsers)                # adds "traces" and "backtest"
    if args.command in TRACES_COMMANDS:
        return run_traces_command(args)

``traces stats FILE... --nodes N`` prints each pool's availability, interruptions, MTBI and mean
wait for a cluster of N spot VMs. ``backtest PLAN.json --pool TYPE@ZONE=FILE ...`` replays the
plan's ``chosen`` configuration and job (its epoch time, checkpoint interval, stall and
checkpoint count, as the plan JSON reports them) on the pools, in the order given (the failover
order; ``wait`` uses the first), and prints the distribution of makespan and cost. Every user
error ends with one line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Sequence
from typing import Any, Final, TextIO

import numpy as np

from deepvm_core.catalog import Catalog
from deepvm_core.catalog.store import load_catalog, load_catalog_named
from deepvm_core.cli.common import number
from deepvm_core.errors import EXIT_USAGE, DeepVMError
from deepvm_core.home import SPOT_TRACES_VARIABLE, spot_traces_dir
from deepvm_core.io.backtest_doc import runs_to_dict
from deepvm_core.io.plan_reader import (
    check_plan_price,
    plan_field,
    plan_restart_hours,
    planned_cluster,
    read_plan,
)
from deepvm_core.job.backtest import (
    DEFAULT_STARTS,
    MAX_STARTS,
    RECOVERY_POLICIES,
    starts_note,
)
from deepvm_core.job.estimate import ReplayEstimates
from deepvm_core.job.forecast import DEFAULT_TRACE_MODEL, FORECAST_MODELS
from deepvm_core.job.inputs import ClusterArrays, JobInputs
from deepvm_core.job.odds import window_words
from deepvm_core.job.recovery import DEADLINE_POLICIES
from deepvm_core.job.result import JobPlanResult
from deepvm_core.market.pool_prices import make_regional_pool
from deepvm_core.market.pools import Pool, check_pools, user_pool_name
from deepvm_core.market.reclaims import estimate_per_vm_share
from deepvm_core.market.trace import TraceError, load_trace
from deepvm_core.market.trace_fetch import fetch_traces
from deepvm_core.market.trace_stats import pool_statistics
from deepvm_core.market.window import (
    DEFAULT_WINDOW_DAYS,
    WHOLE_TRACE,
    parse_window_days,
    recent_window,
)
from deepvm_core.pipeline.backtest_plan import replay
from deepvm_core.pipeline.pool_types import unused_pool_types
from deepvm_core.pipeline.replay_hook import replay_hook
from deepvm_core.units import MINUTES_PER_HOUR
from deepvm_core.workload.workload import MAX_RESTART_HOURS

TRACES_COMMANDS: Final = ("traces", "backtest")
def _pool_arg(text: str) -> tuple[str, str]:
    name, sep, path = text.partition("=")
    if not sep or not path:
        raise argparse.ArgumentTypeError(f"{text!r} is not TYPE@ZONE=FILE")
    try:
        user_pool_name(name)
    except TraceError as exc:
        raise argparse.ArgumentTypeError(exc.reason) from None
    return name.strip(), path


def _window_arg(text: str) -> float | None:
    """``--window-days``: ``all`` (None) or days > 0."""
    try:
        return parse_window_days(text)
    except TraceError as exc:
        raise argparse.ArgumentTypeError(exc.reason) from None


def add_window_arg(p: Any) -> None:
    """``--window-days`` (``traces stats``, ``backtest``, ``plan --pool``)."""
    p.add_argument("--window-days", type=_window_arg, default=DEFAULT_WINDOW_DAYS,
                   metavar="DAYS", help="read the last DAYS days of each trace (default "
                   f"{DEFAULT_WINDOW_DAYS:g}: markets change from week to week); "
                   f"'{WHOLE_TRACE}': the whole trace")


def add_traces_parsers(subparsers: Any) -> None:
    """Add ``traces`` (``stats``) and ``backtest`` to an ``argparse`` sub-parsers object."""
    tr = subparsers.add_parser("traces", help="spot traces: statistics of pools")
    sub = tr.add_subparsers(dest="traces_command", required=True,
                            parser_class=type(tr))
    st = sub.add_parser("stats", help="availability, interruptions, MTBI and mean wait of "
                                      "each trace for a cluster of N spot VMs")
    st.add_argument("files", nargs="+", metavar="FILE", help="trace files (JSON)")
    st.add_argument("--nodes", type=number(int, 1), required=True, metavar="N",
                    help="spot VMs of the cluster (a count trace needs >= N VMs up)")
    add_window_arg(st)
    st.add_argument("--format", choices=("table", "json"), default="table")

    fe = sub.add_parser("fetch", help="download the public spot traces (skypilot-org/"
                                      "spot-traces; $DEEPVM_SPOT_TRACES_URL sets the base address)")
    fe.add_argument("--out", metavar="DIR", help="folder to write them under (default: "
                    f"${SPOT_TRACES_VARIABLE}, else $DEEPVM_HOME/spot-traces, else the per-user "
                    "data folder's spot-traces; the dashboard's Spot markets page reads it)")

    bt = subparsers.add_parser(
        "backtest", help="replay a plan's chosen cluster and job on spot traces",
        description="Replay the chosen configuration of a plan (deepvm plan --format json) on "
                    "spot traces from many start times; --pool order is the failover order.")
    bt.add_argument("plan", metavar="PLAN.json")
    bt.add_argument("--pool", type=_pool_arg, action="append", required=True,
                    metavar="TYPE@ZONE=FILE", help="a pool and its trace (repeat)")
    bt.add_argument("--policy", "--recovery", dest="policy", choices=RECOVERY_POLICIES,
                    default="failover",
                    help="wait (first pool only), failover (default), deadline (failover plus "
                         "an on-demand fallback) or uniform-progress (spot when up, on demand "
                         "only to keep up with the line to the deadline); the last two need "
                         "--deadline-hours")
    bt.add_argument("--deadline-hours", type=number(float, 0.0, strict=True), metavar="H")
    bt.add_argument("--starts", type=number(int, 1, maximum=MAX_STARTS), default=DEFAULT_STARTS,
                    help=f"start times (default {DEFAULT_STARTS})")
    bt.add_argument("--restart-min", type=number(float, 0.0,
                                                 maximum=MAX_RESTART_HOURS * MINUTES_PER_HOUR,
                                                 bound=" minutes, the R a plan accepts"),
                    metavar="R", help="restart R, minutes, at most "
                    f"{MAX_RESTART_HOURS * MINUTES_PER_HOUR:,.0f} as a plan accepts (default: "
                    "the plan's)")
    bt.add_argument("--catalog", help="catalog for prices (default: the plan's, by name)")
    add_window_arg(bt)
    bt.add_argument("--format", choices=("table", "json"), default="table")


def add_plan_pool_args(p: argparse.ArgumentParser) -> None:
    """``deepvm plan``'s ``--pool`` and ``--recovery`` (``traces.md``)."""
    g = p.add_argument_group("spot traces")
    g.add_argument("--pool", type=_pool_arg, action="append", default=[],
                   metavar="TYPE@ZONE=FILE",
                   help="a spot market and its trace (repeat): every configuration of TYPE "
                        "is then evaluated by a backtest over TYPE's pools, ordered per "
                        "configuration by their single-pool mean makespan")
    g.add_argument("--recovery", choices=RECOVERY_POLICIES, default="failover",
                   help="recovery policy of those backtests (default failover; "
                        f"{' and '.join(DEADLINE_POLICIES)} need --deadline-hours and the "
                        "replay)")
    g.add_argument("--model", choices=FORECAST_MODELS,
                   help="how the traces forecast the job: replay (a backtest over the pools, "
                        "with --recovery), renewal (resampled up and down periods) or "
                        "closed-form (the traces' MTBI and W); renewal and closed form use each "
                        "configuration's best pool. Default: the best of the rolling-origin "
                        f"evaluation, {DEFAULT_TRACE_MODEL} (docs/method.md); the replay with "
                        "a deadline policy")
    add_window_arg(g)


def plan_pools(args: argparse.Namespace, catalog: Catalog) -> list[Pool]:
    """The pools of ``deepvm plan``'s ``--pool`` options (each priced from its region), read
    once for the plan's backtests and its deadline offer."""
    return [make_regional_pool(catalog, name, load_trace(path)) for name, path in args.pool]


def plan_replay(args: argparse.Namespace, catalog: Catalog, pools: Sequence[Pool],
                ) -> Callable[[ClusterArrays, JobInputs], ReplayEstimates] | None:
    """The backtest hook of ``deepvm plan`` for its ``--pool`` options (``pools``), or
    ``None``."""
    if not args.pool:
        return None
    if args.recovery in DEADLINE_POLICIES and args.deadline_hours is None:
        raise DeepVMError(f"--recovery {args.recovery} needs --deadline-hours H")
    if args.recovery in DEADLINE_POLICIES and args.model not in (None, "replay"):
        raise DeepVMError(f"--recovery {args.recovery} is replayed only: use --model replay")
    return replay_hook(catalog, pools, recovery=args.recovery,
                       deadline_hours=args.deadline_hours, model=args.model,
                       window_days=args.window_days,
                       per_vm_share=getattr(args, "per_vm_share", 0.0), seed=args.seed)


def replay_note(result: JobPlanResult, catalog: Catalog | None = None,
                pool_types: Sequence[str] = ()) -> str:
    """Lines under ``deepvm plan``'s table saying which rows the backtest evaluated, and
    which of ``pool_types`` (the ``--pool`` types) no configuration of the plan has, and why
    (:func:`~deepvm_core.pipeline.pool_types.unused_pool_types`)."""
    unused = "" if catalog is None else "".join(
        f"Note: {why}\n" for why in unused_pool_types(result, catalog, pool_types))
    r = result.replay
    if r is None or not r.evaluated.any():
        return unused
    types = sorted({result.candidates.configuration(int(i)).gpu
                    for i in np.flatnonzero(r.evaluated)})
    how = {"replay": f"a backtest ({r.recovery})", "renewal": "the renewal model",
           "closed-form": "the closed form on the traces' MTBI and W"}[r.model]
    note = (f"Note: {', '.join(types)} evaluated on spot traces, {window_words(r.window_days)}, "
            f"by {how}: expected h and $ are its means; the P10-P90 ranges ({r.runs} runs) "
            "include how the traces' MTBI and W moved from day to day; the other types by the "
            "closed form\n")
    refused = [i for i, why in enumerate(r.refusals) if why]
    if refused:
        note += (f"Note: {len(refused)} configuration(s) cannot run on the traces (more spot "
                 "VMs than a count trace holds) or never finish on them (an attempt longer "
                 "than the pools ever stay up): left out\n")
    return note + unused


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _cmd_stats(args: argparse.Namespace, out: TextIO) -> int:
    rows = []
    for path in args.files:
        whole = load_trace(path)
        t = recent_window(whole, args.window_days)
        s = pool_statistics(t, args.nodes)
        share = estimate_per_vm_share(t)
        rows.append({"file": path, "gap_seconds": s.gap_seconds, "ticks": s.ticks,
                     "days": s.days, "trace_days": whole.days,
                     "availability": s.availability,
                     "interruptions": s.interruptions, "mtbi_hours": _finite(s.mtbi_hours),
                     "mean_wait_hours": s.mean_wait_hours,
                     "per_vm_share": share.per_vm_share})
    if args.format == "json":
        out.write(json.dumps({"window_days": args.window_days, "pools": rows}, indent=2)
                  + "\n")
        return 0
    width = max(len("file"), *(len(r["file"]) for r in rows))
    out.write(f"{'file':<{width}}  {'gap s':>6} {'ticks':>9} {'days':>7} {'avail.':>7} "
              f"{'events':>7} {'MTBI h':>8} {'wait h':>7} {'per-VM':>7}\n")
    for r in rows:
        mtbi = "-" if r["mtbi_hours"] is None else f"{r['mtbi_hours']:.2f}"
        rho = "-" if r["per_vm_share"] is None else f"{r['per_vm_share']:.3f}"
        out.write(f"{r['file']:<{width}}  {r['gap_seconds']:>6g} {r['ticks']:>9,} "
                  f"{r['days']:>7.2f} {r['availability']:>7.3f} {r['interruptions']:>7} "
                  f"{mtbi:>8} {r['mean_wait_hours']:>7.2f} {rho:>7}\n")
    window = ("each whole trace" if args.window_days is None
              else f"{window_words(args.window_days)} of each trace")
    out.write(f"Window: {window} (--window-days); "
              "per-VM: the share of one VM's reclaims that take it alone, from a count trace "
              "(n = 1 against n = its largest count)\n")
    return 0


def _cmd_backtest(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.policy in DEADLINE_POLICIES and args.deadline_hours is None:
        raise DeepVMError(f"--policy {args.policy} needs --deadline-hours H")
    plan = read_plan(args.plan)
    catalog = (load_catalog(args.catalog) if args.catalog else load_catalog_named(
        plan_field(plan, args.plan, "catalog", "name"), f"{args.plan}: catalog.name"))
    pools = [make_regional_pool(catalog, name, recent_window(load_trace(path), args.window_days))
             for name, path in args.pool]
    check_pools(pools)
    restart = (plan_restart_hours(plan, args.plan)
               if args.restart_min is None else args.restart_min / MINUTES_PER_HOUR)
    cluster = planned_cluster(plan, args.plan)
    check_plan_price(cluster, catalog, args.plan)
    inputs, runs = replay(catalog, cluster, pools, restart, args.policy,
                          deadline_hours=args.deadline_hours, starts=args.starts)
    used = pools[:1] if args.policy == "wait" else pools
    inputs.update({"policy": args.policy, "deadline_hours": args.deadline_hours,
                   "window_days": args.window_days,
                   "starts": int(runs.start_ticks.size),
                   "pools": [{"name": p.name, "file": path, "gap_seconds": p.trace.gap_seconds,
                              "spot_usd_per_hour": p.spot_usd_per_hour}
                             for p, (_, path) in zip(pools, args.pool, strict=True)]})
    capped = starts_note(args.starts, int(runs.start_ticks.size))
    if capped is not None:  # the start times asked, capped by the traces: said
        err.write(f"deepvm backtest: warning: --starts {args.starts}: {capped}.\n")
    result = runs_to_dict(runs)
    if args.format == "json":
        out.write(json.dumps({"inputs": inputs, "result": result}, indent=2) + "\n")
        return 0
    mk, cost = result["makespan_hours"], result["cost_usd"]
    out.write(f"Backtest of {plan_field(plan, args.plan, 'chosen', 'summary')}\n"
              f"Job: {inputs['compute_hours']:.3f} compute hours, {cluster.checkpoints} "
              f"checkpoints, restart {restart * MINUTES_PER_HOUR:g} min; policy {args.policy}"
              + (f", deadline {args.deadline_hours:g} h" if args.deadline_hours else "")
              + f"; pools {', '.join(p.name for p in used)}, {window_words(args.window_days)}"
              f"; {result['runs']} starts\n\n")
    out.write(f"makespan h: mean {mk['mean']:.2f}, P10 {mk['p10']:.2f}, P50 {mk['p50']:.2f}, "
              f"P90 {mk['p90']:.2f}, max {mk['max']:.2f}\n"
              f"cost USD:   mean {cost['mean']:.2f}, P90 {cost['p90']:.2f}\n"
              f"spot hours {result['spot_hours_mean']:.2f} mean; interruptions "
              f"{result['interruptions_mean']:.2f} mean; fell back {result['fell_back']:.1%}"
              + (f"; deadline met {result['deadline_met']:.1%}" if "deadline_met" in result
                 else "") + "\n")
    return 0


def run_traces_command(args: argparse.Namespace, *, stdout: TextIO | None = None,
                       stderr: TextIO | None = None) -> int:
    """Run ``traces ...`` or ``backtest`` with parsed ``args``: 0, or 2 with one line on
    stderr."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    try:
        if args.command == "backtest":
            return _cmd_backtest(args, out, err)
        if args.traces_command == "fetch":
            for path in fetch_traces(args.out or spot_traces_dir()):
                out.write(f"wrote {path}\n")
            return 0
        return _cmd_stats(args, out)
    except DeepVMError as exc:
        err.write(f"deepvm {args.command}: error: {' '.join(str(exc).split())}\n")
        return EXIT_USAGE
    except BrokenPipeError:
        return 0
