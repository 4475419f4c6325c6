"""Benchmark on the newest bundled us-east-1 catalog (SkyPilot import): prints figures.

    .venv/bin/python bench/bench_gpus.py [CATALOG]

``recommend`` with the exact enumeration and with the integer program at PW 3, 10 and 50
(quotas on, the CLI's defaults; the enumeration also with quotas off), and the job planner's
closed form plus frontier (``plan_job`` without Monte Carlo) at the same PWs. Goals:
recommend <= 0.5 s at every PW, plan <= 1 s. Method: median of 3 runs after a warm-up
(as ``bench_job.py``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]

from timing import timed

from deepvm_core.catalog.store import load_catalog
from deepvm_core.model import Scenario
from deepvm_core.pipeline.plan import plan_job
from deepvm_core.recommend.recommendation import recommend
from deepvm_core.search.candidates import build_candidates
from deepvm_core.workload.speedup import SpeedupModel
from deepvm_core.workload.workload import Workload

CATALOG = "aws-us-east-1-2025-h1"
PWS = (3.0, 10.0, 50.0)


def median_ms(fn: Callable[[], object]) -> float:
    """Median wall time (ms) of 3 calls after one warm-up (:func:`timing.timed`)."""
    return timed(fn, 3)[0]


def main() -> None:
    catalog = load_catalog(sys.argv[1] if len(sys.argv) > 1 else CATALOG)
    print(f"{catalog.name}: {len(catalog.solvable_gpu_types)} solvable GPU types, "
          f"{len(catalog.cpu_types)} CPU types")
    workload = Workload(epochs=30, reference_epoch_seconds=61.16,
                        reference_gpu="g4dn.xlarge")
    for pw in PWS:
        scenario = Scenario(pw)
        table = build_candidates(catalog, scenario)
        enum_ms = median_ms(lambda s=scenario: recommend(catalog, s, "enumerate"))  # type: ignore[misc]
        rec = recommend(catalog, scenario, "ilp")
        ilp_ms = median_ms(lambda s=scenario: recommend(catalog, s, "ilp"))  # type: ignore[misc]
        plan_ms = median_ms(lambda s=scenario, p=pw: plan_job(  # type: ignore[misc]
            catalog, s, workload, pw_usd_per_hour=p, speedup=SpeedupModel("fitted"),
            trials=0))
        print(f"PW {pw:>4g}: {len(table):>9,} candidates  recommend enumerate {enum_ms:8.1f} ms"
              f"  ilp {ilp_ms:8.1f} ms (solved by {rec.solved_by})"
              f"  plan (closed form + frontier) {plan_ms:8.1f} ms")
        for note in rec.notes:
            if "integer program" in note or "enumeration" in note:
                print(f"         note: {note}")
        free = Scenario(pw, use_quotas=False)
        free_ms = median_ms(lambda s=free: recommend(catalog, s, "enumerate"))  # type: ignore[misc]
        print(f"          quotas off: {len(build_candidates(catalog, free)):>9,} candidates  "
              f"recommend enumerate {free_ms:8.1f} ms")


if __name__ == "__main__":
    main()
