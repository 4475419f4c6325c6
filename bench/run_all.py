"""Benchmarks of DeepVM Studio's core: prints figures (no pass/fail).

    .venv/bin/python bench/run_all.py            (or: make bench)

1. one ``recommend`` on each bundled catalog with each solver (Table IV scenario), and the
   integer program on the simulated catalog at larger PWs;
2. the paper's Fig. 3 sweep: PW 0..10 step 0.1, five policies, simulated catalog, quotas off;
3. the same sweep on a generated catalog of 100 GPU and 100 CPU types, and the candidate table
   there: pruned (what the sweep uses) and unpruned with no budget (what the job planner uses);
4. for scale: the test oracle (model.md in plain Python loops) at one PW;
5. the performance objective's mean gain over the paper's objective on the Fig. 3 sweep;
6. the limits (issue 9): a catalog at the size limit (loading, FLOPP, recommend with both
   solvers, the sweep) and the bundled catalogs at the node cap;
7. ``bench/bench_limits.py``: the calls whose wall time the tests used to assert;
8. ``bench/bench_transformer.py``: ``deepvm plan`` and ``recommend`` as processes, a 7B
   transformer job beside the example cnn job.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(Path(__file__).resolve().parent), str(REPO)]

import bench_limits
import bench_transformer
from synthetic import synthetic_catalog
from timing import timed

from deepvm_core.catalog import MAX_CPU_TYPES, MAX_GPU_TYPES
from deepvm_core.catalog.catalog import catalog_to_dict
from deepvm_core.catalog.store import load_catalog
from deepvm_core.catalog.validation import catalog_from_json_text
from deepvm_core.model import MAX_NODES, Scenario, flopp_ranking
from deepvm_core.recommend.recommendation import SOLVERS, Recommendation, recommend
from deepvm_core.recommend.sweep import SweepResult, pw_grid, sweep
from deepvm_core.search.candidates import build_candidates
from deepvm_core.search.tables import CandidateTable
from tests import oracle


def best_of(rec: object) -> str:
    assert isinstance(rec, Recommendation)
    return rec.best.describe() if rec.best else "none"


def main() -> None:
    print("== recommend (PW 3 USD/h, f 0.3 GB, s 2, top-3, quotas on) ==")
    for name in ("aws-us-east-1-2023-10", "paper-simulated"):
        catalog = load_catalog(name)
        for solver in SOLVERS:
            scenario = Scenario(3.0, 0.3, 2.0)
            med, low, rec = timed(partial(recommend, catalog, scenario, solver),
                                  5 if solver == "ilp" else 50)
            print(f"{name:<24} {solver:<10} median {med:8.2f} ms  min {low:8.2f} ms  -> "
                  f"{best_of(rec)}")
    sim = load_catalog("paper-simulated")
    for pw in (10.0, 50.0):
        hard = Scenario(pw, 0.3, 2.0, use_quotas=False)
        for solver in SOLVERS:
            med, low, rec = timed(partial(recommend, sim, hard, solver), 3 if pw > 10 else 5)
            print(f"{f'paper-simulated PW {pw:g}, no quotas':<34} {solver:<10} median "
                  f"{med:8.2f} ms  min {low:8.2f} ms  -> {best_of(rec)}")

    pws = pw_grid(0.0, 10.0, 0.1)
    scenario = Scenario(0.0, 0.3, 2.0, use_quotas=False)
    print("\n== Fig. 3 sweep: 101 PWs x 5 policies, quotas off ==")
    fig3: SweepResult | None = None
    fig3_ms = 0.0
    synthetic = synthetic_catalog(100, 100)
    for catalog in (sim, synthetic):
        med, low, result = timed(partial(sweep, catalog, scenario, pws), 20)
        print(f"{catalog.name:<24} {len(catalog.gpu_types):>3} GPU x {len(catalog.cpu_types):>3}"
              f" CPU types: median {med:8.2f} ms  min {low:8.2f} ms")
        if catalog is sim:
            assert isinstance(result, SweepResult)
            fig3, fig3_ms = result, med
    print("\n== candidate table, synthetic-100x100, quotas off, no budget ==")
    for label, choices in (("cheapest memory node per (v, n)", 1), ("unpruned", None)):
        med, low, table = timed(partial(build_candidates, synthetic, scenario,
                                        memory_node_choices=choices), 10)
        assert isinstance(table, CandidateTable)
        print(f"{label:<34} {len(table):>9,} configurations: median {med:8.2f} ms  "
              f"min {low:8.2f} ms")
    assert fig3 is not None

    print("\n== for scale: the test oracle (model.md in Python loops), one PW (5.0) ==")
    start = time.perf_counter()
    (best,) = oracle.top_k(sim, Scenario(5.0, 0.3, 2.0, "paper", use_quotas=False), 1)
    one = time.perf_counter() - start
    ours = fig3.configurations["deepvm"][fig3.pws.index(5.0)]
    same = ours is not None and abs(best.z - ours.z_paper) <= 1e-9 * best.z
    print(f"one PW {one * 1e3:.0f} ms, so {len(pws)} PWs about {one * len(pws):.1f} s against "
          f"{fig3_ms:.0f} ms for the sweep of every policy; same best Z as the sweep: {same}")

    a, b = fig3.performance("deepvm_performance"), fig3.performance("deepvm")
    ok = b > 0
    ratio = a[ok] / b[ok]
    print("\n== performance objective vs the paper's Z on the Fig. 3 sweep ==")
    print(f"mean gain {100 * (ratio.mean() - 1):.1f} %, largest {ratio.max():.2f}x, "
          f"better at {int((ratio > 1 + 1e-9).sum())} of {int(ok.sum())} PWs, never worse: "
          f"{bool((ratio >= 1 - 1e-12).all())}")


def limits() -> None:
    """Section 6: the core at the catalog size limit and at the node cap."""
    import json

    largest = synthetic_catalog(MAX_GPU_TYPES, MAX_CPU_TYPES)
    text = json.dumps(catalog_to_dict(largest), indent=2)
    print(f"\n== at the size limit: {MAX_GPU_TYPES:,} GPU x {MAX_CPU_TYPES:,} CPU types "
          f"({len(text) / 1e6:.2f} MB), 256 nodes, quotas off ==")
    cases: list[tuple[str, Callable[[], object], int]] = [
        ("load + validate the file", partial(catalog_from_json_text, text), 3),
        ("FLOPP ranking", partial(flopp_ranking, largest), 3),
    ]
    for pw, top in ((3.0, 3), (100.0, 3), (1e6, 3), (1e6, 100)):
        scenario = Scenario(pw, 0.3, 2.0, use_quotas=False)
        cases.append((f"recommend enumerate PW {pw:g} top {top}",
                      partial(recommend, largest, scenario, "enumerate", top_k=top), 3))
    cases.append(("recommend ilp PW 3 (falls back)",
                  partial(recommend, largest, Scenario(3.0, 0.3, 2.0, use_quotas=False), "ilp"),
                  1))
    cases.append(("sweep PW 0..10 step 0.1", partial(
        sweep, largest, Scenario(0.0, 0.3, 2.0, use_quotas=False), pw_grid(0.0, 10.0, 0.1)), 3))
    for label, call, repeat in cases:
        med, low, result = timed(call, repeat)
        extra = ""
        if isinstance(result, Recommendation):
            extra = f"  solved by {result.solved_by}"
        print(f"{label:<40} median {med:8.1f} ms  min {low:8.1f} ms{extra}")
    print(f"\n== the node cap ({MAX_NODES:,} per role), quotas off, PW 1000 and 10000 ==")
    for name in ("aws-us-east-1-2023-10", "paper-simulated"):
        catalog = load_catalog(name)
        for pw in (1000.0, 10000.0):
            scenario = Scenario(pw, 0.3, 2.0, use_quotas=False, max_nodes=MAX_NODES)
            for solver in SOLVERS:
                med, low, rec = timed(partial(recommend, catalog, scenario, solver), 3)
                assert isinstance(rec, Recommendation)
                print(f"{name:<24} PW {pw:>6g} {solver:<10} median {med:8.1f} ms  min "
                      f"{low:8.1f} ms  solved by {rec.solved_by}")


if __name__ == "__main__":
    main()
    limits()
    bench_limits.main()
    bench_transformer.main()
