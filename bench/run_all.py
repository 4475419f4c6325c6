"""Benchmarks of DeepVM Studio's core: prints figures (no pass/fail).

    .venv/bin/python bench/run_all.py            (or: make bench)

1. one ``recommend`` on each bundled catalog with each solver (Table IV scenario);
2. the paper's Fig. 3 sweep: PW 0..10 step 0.1, five policies, simulated catalog, quotas off;
3. the same sweep on a generated catalog of 100 GPU and 100 CPU types;
4. the performance objective's mean gain over the paper's objective on the Fig. 3 sweep.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from naive_loop import best_z_naive  # noqa: E402
from synthetic import synthetic_catalog  # noqa: E402

from deepvm_core.model import Scenario  # noqa: E402
from deepvm_core.policies import SOLVERS, recommend  # noqa: E402
from deepvm_core.solvers.enumeration import build_candidates  # noqa: E402
from deepvm_core.store import load_catalog  # noqa: E402
from deepvm_core.sweep import pw_grid, sweep  # noqa: E402

try:
    import deepvm_core.solvers.ilp  # noqa: F401

    HAVE_ILP = True
except ImportError:
    HAVE_ILP = False


def timed(fn: Callable[[], object], repeat: int) -> tuple[float, float, object]:
    """Median and minimum wall time (ms) of ``repeat`` calls after one warm-up."""
    result = fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times), min(times), result


def main() -> None:
    print("== recommend (PW 3 USD/h, f 0.3 GB, s 2, top-3, quotas on) ==")
    for name in ("aws-us-east-1-2023-10", "paper-simulated"):
        catalog = load_catalog(name)
        for solver in [s for s in SOLVERS if s != "ilp" or HAVE_ILP]:
            scenario = Scenario(3.0, 0.3, 2.0)
            med, low, rec = timed(lambda c=catalog, s=scenario, v=solver: recommend(c, s, v),
                                  5 if solver == "ilp" else 50)
            best = rec.best.describe() if rec.best else "none"
            print(f"{name:<24} {solver:<10} median {med:8.2f} ms  min {low:8.2f} ms  -> {best}")
    sim = load_catalog("paper-simulated")
    hard = Scenario(10.0, 0.3, 2.0, use_quotas=False)
    for solver in [s for s in SOLVERS if s != "ilp" or HAVE_ILP]:
        med, low, rec = timed(lambda v=solver: recommend(sim, hard, v), 5)
        print(f"{'paper-simulated PW 10, no quotas':<34} {solver:<10} median {med:8.2f} ms  "
              f"min {low:8.2f} ms  -> {rec.best.describe()}")

    pws = pw_grid(0.0, 10.0, 0.1)
    scenario = Scenario(0.0, 0.3, 2.0, use_quotas=False)
    print("\n== Fig. 3 sweep: 101 PWs x 5 policies, quotas off ==")
    for catalog in (sim, synthetic_catalog(100, 100)):
        size = len(build_candidates(catalog, scenario))
        med, low, result = timed(lambda c=catalog: sweep(c, scenario, pws), 20)
        print(f"{catalog.name:<24} {len(catalog.gpu_types):>3} GPU x {len(catalog.cpu_types):>3}"
              f" CPU types, {size:>9,} configurations: median {med:8.2f} ms  min {low:8.2f} ms")
        if catalog is sim:
            fig3 = result

    print("\n== for scale: a naive (v, w, n, m) loop, artifact style, one PW (5.0) ==")
    start = time.perf_counter()
    z = best_z_naive(sim, 5.0, 0.3, 2.0)
    one = time.perf_counter() - start
    ours = fig3.configurations["deepvm"][fig3.pws.index(5.0)]
    print(f"one PW {one:.2f} s (x {len(pws)} PWs = about {one * len(pws) / 60:.1f} min); "
          f"same best Z as the sweep: {abs(z - ours.z_paper) <= 1e-9 * z}")

    a, b = fig3.performance("deepvm_performance"), fig3.performance("deepvm")
    ok = b > 0
    ratio = a[ok] / b[ok]
    print("\n== performance objective vs the paper's Z on the Fig. 3 sweep ==")
    print(f"mean gain {100 * (ratio.mean() - 1):.1f} %, largest {ratio.max():.2f}x, "
          f"better at {int((ratio > 1 + 1e-9).sum())} of {int(ok.sum())} PWs, never worse: "
          f"{bool((ratio >= 1 - 1e-12).all())}")


if __name__ == "__main__":
    main()
