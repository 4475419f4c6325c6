"""Wall-clock timing of the benchmarks, one home: a call run once to warm up, then timed."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def timed(fn: Callable[[], object], repeat: int) -> tuple[float, float, object]:
    """Median and minimum wall time (ms) of ``repeat`` calls of ``fn`` after one warm-up call,
    and what the warm-up call returned."""
    result = fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times), min(times), result
