"""Deadline policies against the hindsight optimum (issue 26 item 4), on the development traces.

Reads the development traces from ``$DEEPVM_DEV_TRACES`` (default
``/work/shared/reference/data/spot-traces``) by path. The job: 10 compute hours checkpointed every
hour (9 segments of 1.01 h with a 36 s stall, a last of 1 h: C = 10.09 h), one pool per trace,
spot P = 1 USD/h, on demand P_fallback = 3 USD/h, nothing billed while waiting (P_od = 0).
Scenarios: deadline slack 8 % and 45 % over C, restart R 3 and 12 minutes.

1. Per trace and scenario, over ``STARTS`` start times: all on demand ``P_fallback (R + C)``, the
   hindsight optimum's mean cost (:func:`~deepvm_core.job.hindsight.hindsight_costs`), and each
   deadline policy's mean cost, shown as the share of the gap between all-on-demand and the
   optimum it saves: ``(OD - policy) / (OD - OPT)`` (100 % = the optimum, 0 % = on demand,
   negative = dearer than on demand), plus its missed deadlines.
2. Timings: one backtest of 200 starts per policy on the longest development trace (the most
   ticks), and the optimum's run time for those 200 starts. ``--timings`` prints these only.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np
from dev_traces import trace_files

from deepvm_core.job.backtest import BacktestJob
from deepvm_core.job.backtest_replay import backtest
from deepvm_core.job.hindsight import hindsight_costs
from deepvm_core.job.recovery import DEADLINE_POLICIES
from deepvm_core.market.trace import SpotTrace, load_trace

STARTS = int(os.environ.get("DEEPVM_BENCH_STARTS", "100"))
SEGMENTS, SEGMENT_H, LAST_H = 9, 1.01, 1.0
COMPUTE_H = SEGMENTS * SEGMENT_H + LAST_H
P, P_OD, P_FB = 1.0, 0.0, 3.0
SLACKS = (0.08, 0.45)
RESTARTS_MIN = (3.0, 12.0)


def job(restart_h: float) -> BacktestJob:
    return BacktestJob(full_segments=[SEGMENTS], full_segment_hours=[[SEGMENT_H]],
                       last_segment_hours=[[LAST_H]], restart_hours=[[restart_h]],
                       spot_vms=[[1]], price_usd_per_hour=[[P]], on_demand_usd_per_hour=[[P_OD]],
                       fallback_usd_per_hour=[[P_FB]])


def scenario(trace: SpotTrace, slack: float, restart_min: float,
             starts: int) -> tuple[float, float, dict[str, tuple[float, int]]]:
    r = restart_min / 60
    deadline = (1 + slack) * COMPUTE_H
    od = P_FB * (r + COMPUTE_H)
    out: dict[str, tuple[float, int]] = {}
    first = None
    for policy in DEADLINE_POLICIES:
        runs = backtest([trace], job(r), policy=policy, deadline_hours=deadline, starts=starts)
        first = runs.start_ticks
        missed = int(np.sum(runs.makespan_hours[0] > deadline + 1e-9))
        out[policy] = (float(runs.cost_usd[0].mean()), missed)
    assert first is not None
    opt = float(hindsight_costs(trace.counts >= 1, first, trace.gap_hours, COMPUTE_H, r,
                                deadline, P, P_OD, P_FB).mean())
    return od, opt, out


def main() -> int:
    files = trace_files()
    if not files:
        return 1
    policies = DEADLINE_POLICIES
    if "--timings" not in sys.argv[1:]:
        table(files, policies)
    timings(files, policies)
    return 0


def table(files: list[Path], policies: tuple[str, ...]) -> None:
    print(f"1. Share of the gap between all on demand and the hindsight optimum that each policy "
          f"saves (mean cost over {STARTS} starts; misses in brackets); job C = "
          f"{COMPUTE_H:.2f} h, P 1, P_fallback 3 USD/h\n")
    print("| trace | slack | R min | on demand $ | optimum $ | "
          + " | ".join(policies) + " |")
    print("|---|---:|---:|---:|---:|" + "---:|" * len(policies))
    wins = {p: 0 for p in policies}
    for f in files:
        trace = load_trace(f)
        name = f"{f.parent.name.split('-')[0]}/{f.stem}"
        for slack in SLACKS:
            for rmin in RESTARTS_MIN:
                od, opt, got = scenario(trace, slack, rmin, STARTS)
                gap = od - opt
                cells = []
                for p in policies:
                    cost, missed = got[p]
                    share = (od - cost) / gap if gap > 1e-9 else float("nan")
                    cells.append(f"{share:.0%}" + (f" ({missed})" if missed else ""))
                best = min(policies, key=lambda p: got[p][0])
                wins[best] += 1
                print(f"| {name} | {slack:.0%} | {rmin:g} | {od:.2f} | {opt:.2f} | "
                      + " | ".join(cells) + " |")
    print("\ncheapest policy per scenario: "
          + ", ".join(f"{p} {n}" for p, n in wins.items()))


def timings(files: list[Path], policies: tuple[str, ...]) -> None:
    traces = [load_trace(f) for f in files]
    longest = max(traces, key=lambda t: t.ticks)  # the most ticks: the heaviest to replay
    lf = files[traces.index(longest)]
    deadline = 1.45 * COMPUTE_H
    print(f"\n2. Timings on the longest trace ({lf.parent.name}/{lf.name}, {longest.ticks:,} "
          f"ticks of {longest.gap_seconds:g} s), 200 starts, slack 45 %, R 12 min:")
    for policy in ("wait", "failover", *policies):
        t0 = time.perf_counter()
        backtest([longest], job(0.2), policy=policy,  # type: ignore[arg-type]
                 deadline_hours=deadline, starts=200)
        print(f"   {policy:<17} {1000 * (time.perf_counter() - t0):8.1f} ms")
    t0 = time.perf_counter()
    first = (np.arange(200) * longest.ticks) // 200
    hindsight_costs(longest.counts >= 1, first, longest.gap_hours, COMPUTE_H, 0.2, deadline, P,
                    P_OD, P_FB)
    print(f"   hindsight optimum {1000 * (time.perf_counter() - t0):8.1f} ms")


if __name__ == "__main__":
    sys.exit(main())
