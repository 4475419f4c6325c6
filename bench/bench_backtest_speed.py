"""The backtest's speed (issue 26): 200 starts of the reference job (10 compute hours, a
checkpoint every hour, stall 36 s, restart 6 min) per recovery policy on the longest development
trace (and, for failover-type policies, on the four preemption-trace zones as one failover list),
deadline 1.5 x the compute hours. Best of 3, milliseconds. Reads the development traces from
``$DEEPVM_DEV_TRACES`` (default ``/work/shared/reference/data/spot-traces``) by path.
"""

from __future__ import annotations

import sys
import time

import numpy as np
from dev_traces import trace_files

from deepvm_core.job.backtest import RECOVERY_POLICIES, BacktestJob
from deepvm_core.job.backtest_replay import backtest
from deepvm_core.market.trace import load_trace
from deepvm_core.market.trace_stats import pool_statistics


def reference_job(pools: int) -> BacktestJob:
    """9 full segments of 1.01 h, a last of 1 h, R = 0.1 h; P 1, P_od 0, P_fallback 3."""
    return BacktestJob(full_segments=[9], full_segment_hours=[[1.01] * pools],
                       last_segment_hours=[[1.0] * pools], restart_hours=[[0.1] * pools],
                       spot_vms=[[1] * pools], price_usd_per_hour=[[1.0] * pools],
                       on_demand_usd_per_hour=[[0.0] * pools],
                       fallback_usd_per_hour=[[3.0] * pools])


def main() -> int:
    files = trace_files()
    if not files:
        return 1
    traces = [load_trace(f) for f in files]
    longest = max(t.ticks for t in traces)
    pick = [t for t in traces if t.ticks == longest]
    worst = min(pick, key=lambda t: pool_statistics(t).availability)
    print(f"longest traces: {len(pick)} of {longest:,} ticks ({worst.gap_seconds:g} s); "
          f"single pool = the least available, {pool_statistics(worst).availability:.2f}")
    deadline = 1.5 * 10.0
    total = 0.0
    for policy in RECOVERY_POLICIES:
        for label, pools in (("1 pool", [worst]), (f"{len(pick)} pools", pick)):
            if policy == "wait" and len(pools) > 1:
                continue
            best = float("inf")
            for _ in range(3):
                t0 = time.perf_counter()
                runs = backtest(pools, reference_job(len(pools)), policy=policy, starts=200,
                                deadline_hours=deadline)
                best = min(best, time.perf_counter() - t0)
            total += best
            s = runs.summary()
            print(f"{policy:<17} {label:<8} {best * 1000:8.1f} ms   mean makespan "
                  f"{s.mean_makespan_hours[0]:6.2f} h, mean cost {s.mean_cost_usd[0]:6.2f}, "
                  f"met {np.nan if s.deadline_met is None else s.deadline_met[0]:.3f}")
    print(f"total {total * 1000:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
