"""Benchmark of the job model's Monte Carlo: prints figures (no pass/fail).

    .venv/bin/python bench/bench_job.py

10 configurations x 10,000 trials of the job process (``deepvm_core.job.simulate_jobs``): the
bundled AWS catalog's g4dn.xlarge and g5.xlarge clusters, Tiering and Single Anchor, 30 epochs,
a checkpoint every epoch, MTBI 2 h to 32 h, one hour of capacity wait. The target is < 300 ms.
Also times the closed form on 100,000 configurations and the Pareto frontier on them.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import numpy as np

from deepvm_core.job import (
    SINGLE_ANCHOR,
    TIERING,
    ClusterArrays,
    JobPlan,
    Workload,
    expected_jobs,
    pareto_frontier,
    plan_jobs,
    simulate_jobs,
)
from deepvm_core.store import load_catalog


def timed(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Median and minimum wall time (ms) of ``repeat`` calls after one warm-up."""
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times), min(times)


def ten_configurations() -> JobPlan:
    catalog = load_catalog("aws-us-east-1-2023-10")
    n = np.array([17, 16, 8, 4, 2, 17, 7, 12, 24, 32])
    arch = np.array([TIERING, SINGLE_ANCHOR] * 5)
    gpu = np.array([1, 1, 1, 1, 1, 2, 2, 2, 2, 2])
    spot = np.where(arch == TIERING, n, n - 1)
    gpus = [catalog.gpu_types[g] for g in gpu]
    m = np.where(arch == TIERING, n // 20 + 1, 0)
    od = np.where(arch == TIERING, m * 0.17, [g.on_demand_usd_per_hour for g in gpus])
    price = od + spot * np.array([g.spot_usd_per_hour for g in gpus])
    clusters = ClusterArrays(architecture=arch, gpu_index=gpu, n_gpu=n, n_spot=spot,
                             memory_nodes=m, gpu_network_gbps=[g.network_gbps for g in gpus],
                             memory_network_gbps=np.full(10, 10.0), price_usd_per_hour=price,
                             on_demand_usd_per_hour=od)
    workload = Workload(epochs=30, reference_epoch_seconds=61.155439,
                        reference_gpu="g4dn.xlarge", wait_hours=1.0,
                        mtbi_hours_by_gpu={"g4dn.xlarge": 2.0, "g5.xlarge": 32.0})
    return plan_jobs(workload, catalog, clusters)


def main() -> None:
    plan = ten_configurations()
    med, low = timed(lambda: simulate_jobs(plan, np.random.default_rng(7), trials=10_000,
                                           deadline_hours=1.0), 20)
    print(f"Monte Carlo, 10 configurations x 10,000 trials: median {med:.1f} ms, "
          f"min {low:.1f} ms (target < 300 ms)")
    mc = simulate_jobs(plan, np.random.default_rng(7), trials=10_000)
    exact = expected_jobs(plan)
    z = (mc.mean_makespan_hours - exact.expected_makespan_hours) / mc.makespan_std_error_hours
    print(f"  mean makespan vs closed form: largest |z| = {np.nanmax(np.abs(z)):.2f}")

    rng = np.random.default_rng(1)
    size = 100_000
    big = JobPlan.from_segments(
        compute_seconds=rng.uniform(600, 360_000, size),
        checkpoint_interval_seconds=rng.uniform(60, 7200, size),
        checkpoint_stall_seconds=rng.uniform(0, 60, size),
        interruption_rate_per_hour=rng.choice([0.0, 1 / 32, 1 / 8, 1 / 2], size),
        restart_hours=0.1, wait_hours=0.5, price_usd_per_hour=rng.uniform(0.5, 10, size),
        on_demand_usd_per_hour=0.2)
    med, low = timed(lambda: expected_jobs(big), 10)
    print(f"closed form, {size:,} configurations: median {med:.1f} ms, min {low:.1f} ms")
    est = expected_jobs(big)
    med, low = timed(lambda: pareto_frontier(est.expected_cost_usd,
                                             est.expected_makespan_hours), 10)
    print(f"Pareto frontier, {size:,} configurations: median {med:.1f} ms, min {low:.1f} ms")


if __name__ == "__main__":
    main()
