"""The market scenarios of a forecast's band (:mod:`deepvm_core.job.forecast`), and what its
three models share about the rows of the one-pool job and their runs.

**Scenarios.** The band adds the uncertainty of MTBI and W themselves: the window's one-day
sub-windows (:func:`~deepvm_core.market.window.sub_windows`, one every half day) each give an
MTBI and a W; scenario s scales the window's by ``f_m = MTBI_s / MTBI`` and ``f_w = W_s / W``
(:func:`scenario_factors`), and each model runs under every scenario, pooled with equal
weights. A sub-window that is never up is a scenario in which the job never finishes; the
replay runs on the window warped the same way (:func:`scenario_markets`).

**Rows.** A row is up when the count reaches its level (:func:`row_levels`: its spot VMs on a
count trace, 1 on a state trace); a model's runs of the rows are :class:`Draws`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from deepvm_core.arrays import BoolArray, FloatArray, IntArray
from deepvm_core.job.backtest import BacktestJob
from deepvm_core.market.trace import SpotTrace
from deepvm_core.market.trace_stats import down_run_lengths
from deepvm_core.market.window import SUB_WINDOW_DAYS, SUB_WINDOW_STEP_DAYS, sub_windows, warp


@dataclass(frozen=True)
class Draws:
    """Runs of each row: makespan and cost, shape (rows, runs), and mean events per row."""

    makespan: FloatArray
    cost: FloatArray
    events: FloatArray


def pool_column(job: BacktestJob, name: str) -> FloatArray:
    """The one pool's column ``name`` of ``job``, per row."""
    return np.asarray(getattr(job, name)[:, 0], dtype=np.float64)


def row_levels(window: SpotTrace, job: BacktestJob) -> IntArray:
    """Per row, the count a tick needs to be up for its spot VMs."""
    n = job.spot_vms[:, 0].astype(np.int64)
    return n if window.max_count > 1 else np.ones_like(n)


def _level_stats(trace: SpotTrace, level: int) -> tuple[float, float, float]:
    """Availability, MTBI and mean wait (hours) of ``trace`` for ticks up when the count is
    at least ``level`` (``traces.md``'s statistics, without refusing a short count)."""
    up = np.asarray(trace.counts >= level, dtype=bool)
    events = int(np.count_nonzero(up[:-1] & ~up[1:]))
    up_hours = float(np.count_nonzero(up)) * trace.gap_hours
    downs = down_run_lengths(up)
    return (float(np.count_nonzero(up)) / trace.ticks,
            up_hours / events if events else math.inf,
            float(downs.mean()) * trace.gap_hours if downs.size else 0.0)


@dataclass(frozen=True)
class Scenarios:
    """Per scenario: the MTBI factor (infinite: no interruption), the W factor, and whether
    the market is ever up."""

    mtbi_factor: FloatArray
    wait_factor: FloatArray
    ever: BoolArray

    @property
    def size(self) -> int:
        return int(self.mtbi_factor.size)

    @classmethod
    def single(cls) -> Scenarios:
        """One scenario: the window itself (both factors 1, up)."""
        return cls(np.ones(1), np.ones(1), np.ones(1, dtype=bool))


def scenario_factors(window: SpotTrace, parts: Sequence[SpotTrace], level: int) -> Scenarios:
    """The factors of each sub-window against the whole window (module docstring)."""
    _, mtbi, wait = _level_stats(window, level)
    fm, fw, ever = [], [], []
    for p in parts:
        a, m, w = _level_stats(p, level)
        ever.append(a > 0)
        fm.append(1.0 if math.isinf(mtbi) else math.inf if math.isinf(m) else m / mtbi)
        fw.append(w / wait if wait > 0 else 1.0)
    return Scenarios(np.array(fm), np.array(fw), np.array(ever, dtype=bool))


def scenario_markets(window: SpotTrace, level: int, *, days: float = SUB_WINDOW_DAYS,
                     step_days: float = SUB_WINDOW_STEP_DAYS) -> list[SpotTrace]:
    """The window's market under each scenario (module docstring): the window at ``level``
    warped by the scenario's MTBI and W factors (:func:`~deepvm_core.market.window.warp`),
    cut or repeated to the window's length so that pools line up; a scenario that is never
    up: a market that is never up."""
    sc = scenario_factors(window, sub_windows(window, days, step_days), level)
    up = np.asarray(window.counts >= level, dtype=bool)
    out: list[SpotTrace] = []
    for fm, fw, ok in zip(sc.mtbi_factor, sc.wait_factor, sc.ever, strict=True):
        if not ok:
            counts = np.zeros(window.ticks, dtype=np.int64)
        else:
            counts = np.resize(warp(up, window.gap_seconds, float(fm), float(fw),
                                    window.source).counts, window.ticks)
        counts.setflags(write=False)
        out.append(SpotTrace(f"{window.source} (scenario {len(out) + 1})", window.gap_seconds,
                             counts))
    return out
