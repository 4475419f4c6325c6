"""Seeded synthetic availability traces for tests, one home: alternating up (1) and down (0)
runs whose lengths in ticks are geometric."""

from __future__ import annotations

import numpy as np


def alternating_runs(seed: int, ticks: int, mean_up: float, mean_down: float, *,
                     random_start: bool = False) -> list[int]:
    """``ticks`` values of alternating runs, up runs of mean ``mean_up`` ticks and down runs of
    mean ``mean_down``; the first run is up, or with ``random_start`` up or down at random (one
    draw of the same generator, before the runs)."""
    rng = np.random.default_rng(seed)
    out: list[int] = []
    state = int(rng.random() < 0.5) if random_start else 1
    while len(out) < ticks:
        out += [state] * int(rng.geometric(1.0 / (mean_up if state else mean_down)))
        state = 1 - state
    return out[:ticks]


#: Tick lengths (seconds) the backtest's property tests draw: the public traces' (32 s, 195 s,
#: 600 s), a quarter hour and an hour.
TICK_SECONDS = (32.0, 195.0, 600.0, 900.0, 3600.0)


def draw_shape(data, gap_seconds: float, max_ticks: int) -> tuple[float, int, int]:
    """The tick in hours, and 1-3 pools of 2-``max_ticks`` ticks drawn from hypothesis'
    ``data`` (the shape of the backtest's property tests' traces)."""
    from hypothesis import strategies as st

    return (gap_seconds / 3600, data.draw(st.integers(1, 3)),
            data.draw(st.integers(2, max_ticks)))
