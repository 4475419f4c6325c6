"""Benchmark of the job model's Monte Carlo: prints figures (no pass/fail).

    .venv/bin/python bench/bench_job.py

10 configurations x 10,000 trials of the job process (``deepvm_core.job.simulate_jobs``): the
bundled AWS catalog's g4dn.xlarge and g5.xlarge clusters, Tiering and Single Anchor, 30 epochs,
a checkpoint every epoch, MTBI 2 h to 32 h, one hour of capacity wait. The target is < 300 ms.
Also times the closed form on 100,000 configurations and the Pareto frontier on them.

The job planner (``plan_job``), step by step, with the sweep's method (median of repeats after
a warm-up): candidate table (every feasible configuration, unpruned), cluster arrays and job
plan, closed form, frontier, then the whole ``plan_job`` without Monte Carlo and with 10,000
trials. Targets for the closed form and the frontier over every candidate: < 20 ms on the
simulated catalog at PW 10, quotas off; < 1 s on the 100 x 100 synthetic catalog
(``bench/synthetic.py``) at the same PW.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]

from synthetic import synthetic_catalog
from timing import timed

from deepvm_core.catalog import Catalog
from deepvm_core.catalog.store import load_catalog
from deepvm_core.job.closed_form import expected_jobs
from deepvm_core.job.inputs import ClusterArrays, JobInputs, job_inputs
from deepvm_core.job.montecarlo import simulate_jobs
from deepvm_core.job.objectives import pareto_frontier
from deepvm_core.model import Arch, Scenario
from deepvm_core.pipeline.job_arrays import cluster_arrays
from deepvm_core.pipeline.plan import plan_job
from deepvm_core.search.candidates import build_candidates
from deepvm_core.workload.speedup import SpeedupModel
from deepvm_core.workload.workload import EXAMPLE_EPOCH_SECONDS, EXAMPLE_EPOCHS, Workload


def ten_configurations() -> JobInputs:
    catalog = load_catalog("aws-us-east-1-2023-10")
    n = np.array([17, 16, 8, 4, 2, 17, 7, 12, 24, 32])
    arch = np.array([Arch.TIERING, Arch.SINGLE_ANCHOR] * 5)
    gpu = np.array([1, 1, 1, 1, 1, 2, 2, 2, 2, 2])
    spot = np.where(arch == Arch.TIERING, n, n - 1)
    gpus = [catalog.gpu_types[g] for g in gpu]
    m = np.where(arch == Arch.TIERING, n // 20 + 1, 0)
    od = np.where(arch == Arch.TIERING, m * 0.17, [g.on_demand_usd_per_hour for g in gpus])
    price = od + spot * np.array([g.spot_usd_per_hour for g in gpus])
    clusters = ClusterArrays(architecture=arch, gpu_index=gpu, n_gpu=n, n_spot=spot,
                             memory_nodes=m, gpu_network_gbps=[g.network_gbps for g in gpus],
                             memory_network_gbps=np.full(10, 10.0), price_usd_per_hour=price,
                             on_demand_usd_per_hour=od)
    workload = Workload(epochs=30, reference_epoch_seconds=61.155439,
                        reference_gpu="g4dn.xlarge", wait_hours=1.0,
                        mtbi_hours_by_gpu={"g4dn.xlarge": 2.0, "g5.xlarge": 32.0})
    return job_inputs(workload, catalog, clusters)


def bench_planner(catalog: Catalog, pw: float, repeat: int, target_ms: float) -> None:
    """``plan_job`` on ``catalog`` at PW ``pw``, quotas off, step by step."""
    scenario = Scenario(pw, 0.3, 2.0, use_quotas=False)
    workload = Workload(epochs=EXAMPLE_EPOCHS, reference_epoch_seconds=EXAMPLE_EPOCH_SECONDS)
    speedup = SpeedupModel("fitted")
    table = build_candidates(catalog, scenario, pw_usd_per_hour=pw, memory_node_choices=None)
    plan = job_inputs(workload, catalog, cluster_arrays(catalog, table), speedup)
    est = expected_jobs(plan)
    rank = np.empty(len(table), dtype=np.int64)
    rank[table.rank_order("paper")] = np.arange(len(table))
    steps: list[tuple[str, Callable[[], object]]] = [
        ("candidate table (unpruned)", lambda: build_candidates(
            catalog, scenario, pw_usd_per_hour=pw, memory_node_choices=None)),
        ("cluster arrays + job plan", lambda: job_inputs(
            workload, catalog, cluster_arrays(catalog, table), speedup)),
        ("closed form", lambda: expected_jobs(plan)),
        ("model.md rank", lambda: table.rank_order("paper")),
        ("frontier", lambda: pareto_frontier(est.expected_cost_usd, est.expected_makespan_hours,
                                             rank=rank)),
    ]
    print(f"== plan_job: {catalog.name}, PW {pw:g}, quotas off, {len(table):,} candidates ==")
    core = 0.0
    for label, fn in steps:
        med, low, _ = timed(fn, repeat)
        if label != "candidate table (unpruned)":
            core += med
        print(f"  {label:<28} median {med:8.2f} ms  min {low:8.2f} ms")
    print(f"  {'estimates + frontier':<28} median {core:8.2f} ms (sum of the steps after the "
          f"table; target < {target_ms:g} ms)")
    for trials in (0, 10_000):
        med, low, _ = timed(lambda t=trials: plan_job(  # type: ignore[misc]
            catalog, scenario, workload, pw_usd_per_hour=pw, speedup=speedup, trials=t),
            repeat)
        print(f"  plan_job, {trials:>6,} trials       median {med:8.2f} ms  min {low:8.2f} ms")


def main() -> None:
    bench_planner(load_catalog("paper-simulated"), 10.0, 20, 20.0)
    bench_planner(synthetic_catalog(), 10.0, 5, 1000.0)
    plan = ten_configurations()
    med, low, _ = timed(lambda: simulate_jobs(plan, np.random.default_rng(7), trials=10_000,
                                           deadline_hours=1.0), 20)
    print(f"Monte Carlo, 10 configurations x 10,000 trials: median {med:.1f} ms, "
          f"min {low:.1f} ms (target < 300 ms)")
    mc = simulate_jobs(plan, np.random.default_rng(7), trials=10_000)
    exact = expected_jobs(plan)
    z = (mc.mean_makespan_hours - exact.expected_makespan_hours) / mc.makespan_std_error_hours
    print(f"  mean makespan vs closed form: largest |z| = {np.nanmax(np.abs(z)):.2f}")

    rng = np.random.default_rng(1)
    size = 100_000
    big = JobInputs.from_segments(
        compute_seconds=rng.uniform(600, 360_000, size),
        checkpoint_interval_seconds=rng.uniform(60, 7200, size),
        checkpoint_stall_seconds=rng.uniform(0, 60, size),
        interruption_rate_per_hour=rng.choice([0.0, 1 / 32, 1 / 8, 1 / 2], size),
        restart_hours=0.1, wait_hours=0.5, price_usd_per_hour=rng.uniform(0.5, 10, size),
        on_demand_usd_per_hour=0.2)
    med, low, _ = timed(lambda: expected_jobs(big), 10)
    print(f"closed form, {size:,} configurations: median {med:.1f} ms, min {low:.1f} ms")
    est = expected_jobs(big)
    med, low, _ = timed(lambda: pareto_frontier(est.expected_cost_usd,
                                             est.expected_makespan_hours), 10)
    print(f"Pareto frontier, {size:,} configurations: median {med:.1f} ms, min {low:.1f} ms")


if __name__ == "__main__":
    main()
