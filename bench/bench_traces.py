"""Spot traces (issue 15): backtest timings and the model-against-backtest tables.

Reads the development traces from ``$DEEPVM_DEV_TRACES`` (default: the shared folder
``/work/shared/reference/data/spot-traces``) by path; they are not part of the project. Prints:

1. the backtest of one plan (the Table IV job at 3,000 epochs, PW 3, the bundled AWS catalog's
   chosen cluster) on the worst development trace (lowest availability), 1,000 starts, each
   policy, in process (goal < 0.3 s each);
2. per development trace, the closed form with MTBI and W from the first half, the empirical
   renewal model from the first half, and the ``wait`` backtest of the second half, for a
   reference job of 10 compute hours checkpointed every hour (stall 36 s, restart 6 min).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from dev_traces import trace_files

from deepvm_core.catalog.store import load_catalog
from deepvm_core.io.plan_json import plan_to_dict
from deepvm_core.job.backtest_replay import backtest
from deepvm_core.job.trace_models import ReferenceJob, check_models
from deepvm_core.market.pools import make_pool
from deepvm_core.market.trace import load_trace
from deepvm_core.market.trace_stats import pool_statistics
from deepvm_core.model import Scenario
from deepvm_core.pipeline.backtest_plan import PlannedCluster, backtest_job
from deepvm_core.pipeline.plan import plan_job
from deepvm_core.pipeline.replay_hook import replay_hook
from deepvm_core.workload.speedup import SpeedupModel
from deepvm_core.workload.workload import Workload

REFERENCE_JOB = ReferenceJob(full_segments=9, segment_hours=1.01, last_segment_hours=1.0,
                             restart_hours=0.1)


def bench_backtest(files: list[Path]) -> None:
    catalog = load_catalog("aws-us-east-1-2023-10")
    workload = Workload(epochs=3000, reference_epoch_seconds=61.16, reference_gpu="g4dn.xlarge")
    result = plan_job(catalog, Scenario(3.0, 0.3, 2.0), workload, pw_usd_per_hour=3.0,
                      speedup=SpeedupModel("fitted"), trials=0)
    plan = plan_to_dict(result, catalog)
    worst = min(files, key=lambda f: pool_statistics(load_trace(f)).availability)
    gpu = plan["chosen"]["gpu"]["name"]
    pool = make_pool(catalog, f"{gpu}@{worst.stem}", load_trace(worst))
    _, job = backtest_job(catalog, PlannedCluster.of_estimate(result.chosen), [pool], 0.1)
    deadline = 1.5 * plan["chosen"]["estimate"]["compute_hours"]
    print(f"1. {plan['chosen']['summary']}: {plan['chosen']['estimate']['compute_hours']:.2f} "
          f"compute hours, {job.full_segments[0]} checkpoints; worst trace {worst.parent.name}/"
          f"{worst.name}; 1,000 starts")
    for policy in ("wait", "failover", "deadline"):
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            runs = backtest([pool.trace], job, policy=policy, starts=1000,
                            deadline_hours=deadline)
            best = min(best, time.perf_counter() - t0)
        s = runs.summary()
        print(f"   {policy:<9} {best * 1000:7.1f} ms   mean makespan "
              f"{s.mean_makespan_hours[0]:.1f} h, P90 {s.makespan_hours_p90[0]:.1f} h, mean "
              f"cost {s.mean_cost_usd[0]:.2f} USD, fell back {s.fell_back[0]:.0%}")


def bench_plan_with_pools(files: list[Path]) -> None:
    catalog = load_catalog("aws-us-east-1-2023-10")
    workload = Workload(epochs=3000, reference_epoch_seconds=61.16, reference_gpu="g4dn.xlarge")
    zones = sorted(f for f in files if f.parent.name.startswith("preemption"))
    traces = {f.stem.split("_")[0]: load_trace(f) for f in zones}
    pools = [make_pool(catalog, f"{g.name}@{zone}", trace)
             for g in catalog.gpu_types for zone, trace in traces.items()]
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        result = plan_job(catalog, Scenario(3.0, 0.3, 2.0), workload, pw_usd_per_hour=3.0,
                          speedup=SpeedupModel("fitted"), trials=0,
                          replay=replay_hook(catalog, pools, recovery="failover",
                                             model="replay"))
        best = min(best, time.perf_counter() - t0)
    assert result.replay is not None
    print(f"\nplan_job with pools for all {len(catalog.gpu_types)} GPU types "
          f"({len(traces)} preemption-trace zones each; {result.size} candidates, "
          f"{int(result.replay.evaluated.sum())} backtested), failover, 200 starts: "
          f"{best:.2f} s (goal < 3 s); chosen {result.chosen.describe() if result.chosen else '-'}")


#: Where ``--write-data`` keeps the model-against-backtest table for the Method page (results
#: on the development traces, not the traces themselves).
MODEL_CHECK_CSV = Path(__file__).resolve().parents[1] / "data" / "trace-model-check.csv"
MODEL_CHECK_COLUMNS = ("trace", "availability", "mtbi_hours", "wait_hours", "backtest_hours",
                       "closed_form_hours", "closed_form_error", "renewal_hours",
                       "renewal_error")


def model_tables(files: list[Path], write_data: bool = False) -> None:
    print("\n2. Reference job: 10 compute hours, a checkpoint every hour (36 s), restart "
          "6 min; models from the first half, backtest (wait, 200 starts) of the second half")
    print("| trace | avail. | MTBI h | W h | backtest h | closed form h | error | renewal h | "
          "error |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    rows: list[str] = [",".join(MODEL_CHECK_COLUMNS)]
    for f in files:
        m = check_models(load_trace(f), REFERENCE_JOB)
        rows.append(",".join([f"{f.parent.name.split('-')[0]}/{f.stem}",
                              *(f"{v:.6g}" for v in (
                                  m.availability, m.mtbi_hours, m.wait_hours, m.backtest_hours,
                                  m.closed_form_hours, m.closed_form_error, m.renewal_hours,
                                  m.renewal_error))]))
        bt = f"{m.backtest_hours:.1f}" if m.backtest_hours != float("inf") else "never runs"
        cfe = "-" if m.closed_form_error != m.closed_form_error else f"{m.closed_form_error:+.0%}"
        rne = "-" if m.renewal_error != m.renewal_error else f"{m.renewal_error:+.0%}"
        print(f"| {f.parent.name.split('-')[0]}/{f.stem} | {m.availability:.2f} | "
              f"{m.mtbi_hours:.2f} | {m.wait_hours:.2f} | {bt} | {m.closed_form_hours:.1f} | "
              f"{cfe} | {m.renewal_hours:.1f} | {rne} |")
    if write_data:
        MODEL_CHECK_CSV.write_text("\n".join(rows) + "\n", encoding="utf-8")
        print(f"written: {MODEL_CHECK_CSV}")


def main() -> int:
    files = trace_files()
    if not files:
        return 1
    bench_backtest(files)
    bench_plan_with_pools(files)
    model_tables(files, write_data="--write-data" in sys.argv[1:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
