"""Benchmark: ``deepvm plan`` and ``deepvm recommend`` as processes, a transformer job (7B full
fine-tune, FSDP within a VM, 2B tokens) beside the example cnn job, on the newest bundled
us-east-1 catalog (50 GPU types). Prints figures.

    .venv/bin/python bench/bench_transformer.py [CATALOG]

Each command runs as its own process (``python -m deepvm_core.cli ...``, JSON to a pipe),
so the figure includes the interpreter's start and the imports, as a user sees it. Method:
median of 3 runs after one warm-up, PW 10 USD/h, Monte Carlo on (the CLI's default trials).
Issue 24's bar: the transformer job no slower than 2x the cnn job.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CATALOG = "aws-us-east-1-2025-h1"
TRANSFORMER = ("--workload", "transformer", "--params-b", "7", "--tokens-b", "2")


def run_ms(argv: list[str]) -> float:
    """Median wall time (ms) of 3 runs of ``deepvm argv`` after one warm-up; each must exit 0."""
    times = []
    for i in range(4):
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "deepvm_core.cli", *argv], cwd=ROOT,
                              capture_output=True, text=True, check=False)
        elapsed = (time.perf_counter() - start) * 1000.0
        if done.returncode != 0:
            raise SystemExit(f"deepvm {' '.join(argv)} failed: {done.stderr.strip()}")
        if i:
            times.append(elapsed)
    return statistics.median(times)


def main() -> None:
    catalog = sys.argv[1] if len(sys.argv) > 1 else CATALOG
    base = ["--catalog", catalog, "--pw", "10", "--format", "json"]
    print(f"catalog {catalog}, PW 10 USD/h, each a process, median of 3 after a warm-up")
    for command in ("recommend", "plan"):
        cnn = run_ms([command, *base])
        transformer = run_ms([command, *base, *TRANSFORMER])
        print(f"  {command:9s} cnn {cnn:7.0f} ms   transformer 7B {transformer:7.0f} ms   "
              f"ratio {transformer / cnn:.2f}")


if __name__ == "__main__":
    main()
