"""Timings that used to be wall-clock asserts in the tests: prints figures (no pass/fail).

    .venv/bin/python bench/bench_limits.py       (bench/run_all.py runs it last)

The tests keep each call's functional assertion (what is raised, which solver answered, what
the note says); how long the call takes is measured here, where a loaded machine only makes a
figure larger instead of failing a test. The figure each test used to bound is in brackets.

1. Monte Carlo at extreme rates, λ (R + s) from 50 to 1e4, 10,000 trials  [< 2 s]
   (tests/test_job_montecarlo.py::test_extreme_rates_terminate);
2. the integer program: CBC stopped by a 1.5 s time limit on a 24,000-binary program
   [< 1.5 + 6 s]; a program too large for the budget, refused before it is built [< 1 s];
   a catalog at the size limit whose saturation constraints are too many [< 2 s]
   (tests/test_ilp.py);
3. a search space past the row bound, refused [< 1 s]; issue 9's scenario, which falls back to
   the enumeration [< 2 s] (tests/test_policies.py);
4. a catalog over the row limits, refused before its rows are validated [< 2 s]
   (tests/test_catalog_input_bounds.py).

The size-limit timings of tests/test_scale.py (recommend, sweep, FLOPP) are section 6 of
bench/run_all.py.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(Path(__file__).resolve().parent), str(REPO)]

from synthetic import synthetic_catalog

from deepvm_core.catalog import MAX_CPU_TYPES, MAX_GPU_TYPES, Catalog
from deepvm_core.catalog.store import load_catalog
from deepvm_core.catalog.validation import catalog_from_json_text
from deepvm_core.errors import CatalogError, InputError, SolverTimeoutError
from deepvm_core.job.inputs import JobInputs
from deepvm_core.job.montecarlo import simulate_jobs
from deepvm_core.model import MAX_NODES, Scenario
from deepvm_core.recommend.recommendation import recommend
from deepvm_core.search.candidates import build_domain
from deepvm_core.search.solvers import ilp, ilp_program
from tests.factories import catalog_dict, cpu_row, gpu_row


def seconds(call: Callable[[], object], expect: type[BaseException] | None = None,
            repeat: int = 3) -> tuple[float, float]:
    """Median and minimum wall time (s) of ``repeat`` calls; ``expect``: the call must raise it."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        try:
            call()
        except BaseException as error:
            if expect is None or not isinstance(error, expect):
                raise
        else:
            if expect is not None:
                raise AssertionError(f"{call} did not raise {expect.__name__}")
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times)


def ilp_top3(catalog: Catalog, scenario: Scenario, **options: float) -> object:
    """The integer program's top 3, the domain built first as ``recommend`` builds it."""
    domain = build_domain(catalog, scenario, pw_usd_per_hour=scenario.pw_usd_per_hour)
    return ilp.solve_top_k(domain, scenario.objective, 3, **options)


def row(label: str, bound: str, figures: tuple[float, float]) -> None:
    med, low = figures
    print(f"{label:<58} median {med * 1e3:8.1f} ms  min {low * 1e3:8.1f} ms  "
          f"(test bound was {bound})")


def main() -> None:
    print("\n== wall times the tests no longer assert ==")
    hours = np.array([1.0, 5.0, 100.0, 0.01])
    plan = JobInputs.from_segments(compute_seconds=100.0 * 3600,
                                 checkpoint_interval_seconds=hours * 3600,
                                 checkpoint_stall_seconds=30.0,
                                 interruption_rate_per_hour=np.array([50.0, 10.0, 100.0, 2.0]),
                                 restart_hours=0.1, wait_hours=1.0, price_usd_per_hour=2.0,
                                 on_demand_usd_per_hour=0.5)
    row("Monte Carlo, extreme rates, 10,000 trials", "2 s", seconds(
        lambda: simulate_jobs(plan, np.random.default_rng(0), trials=10_000)))

    aws = load_catalog("aws-us-east-1-2023-10")
    saved = ilp_program.ILP_SIZE_PER_SECOND
    ilp_program.ILP_SIZE_PER_SECOND = 10**9  # build the 24,000-binary program anyway
    try:
        huge = Scenario(1000.0, use_quotas=False, max_nodes=4500)
        row("ILP: CBC stopped by a 1.5 s limit (24,000 binaries)", "1.5 + 6 s", seconds(
            lambda: ilp_top3(aws, huge, time_limit_s=1.5), SolverTimeoutError, 1))
    finally:
        ilp_program.ILP_SIZE_PER_SECOND = saved
    capped = Scenario(1000.0, use_quotas=False, max_nodes=MAX_NODES)
    row("ILP: program too large for the budget, not built", "1 s", seconds(
        lambda: ilp_top3(aws, capped), SolverTimeoutError))
    largest = synthetic_catalog(MAX_GPU_TYPES, MAX_CPU_TYPES)
    row("ILP: too many saturation constraints, not built", "2 s", seconds(
        lambda: ilp_top3(largest, Scenario(3.0, use_quotas=False)),
        SolverTimeoutError))

    wide = synthetic_catalog(60, 10)
    row("recommend: 1.2 million rows, refused", "1 s", seconds(
        lambda: recommend(wide, Scenario(1e6, use_quotas=False, max_nodes=MAX_NODES)),
        InputError))
    row("recommend ilp: issue 9 scenario, falls back to enumerate", "2 s", seconds(
        lambda: recommend(aws, capped, "ilp")))

    text = json.dumps(catalog_dict(gpus=[gpu_row(f"g{i}") for i in range(10_000)],
                                   cpus=[cpu_row(f"c{i}") for i in range(MAX_CPU_TYPES + 1)]))
    row(f"catalog over the row limits ({len(text) / 1e6:.1f} MB), refused", "2 s", seconds(
        lambda: catalog_from_json_text(text, source="upload.json"), CatalogError))


if __name__ == "__main__":
    main()
