"""The renewal model of a forecast (``--model renewal``, :mod:`deepvm_core.job.forecast`).

The market alternates up and down periods drawn (with replacement) from the window's own
maximal up and down runs; a run starts at a random time (up with probability = the window's
availability, in a length-biased up period with a uniform residual; else it first waits the
residual of a length-biased down period), and the job runs as in the backtest (an attempt
completes when it fits in the rest of the up period; else it is lost, counted as an
interruption, and the next attempt restarts after the next down period). Seeded Monte Carlo,
vectorised over rows and runs; a run still going after :data:`MAX_ROUNDS` up periods never
finishes (infinite makespan). Under a scenario
(:mod:`~deepvm_core.job.forecast_scenarios`) the up periods are times ``f_m`` and the down
periods times ``f_w``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

import numpy as np

from deepvm_core.arrays import FloatArray, IntArray
from deepvm_core.job.backtest import BacktestJob
from deepvm_core.job.forecast_scenarios import Draws, Scenarios, pool_column, row_levels
from deepvm_core.market.trace import SpotTrace
from deepvm_core.market.trace_stats import down_run_lengths, up_run_lengths

#: A renewal run still going after this many up periods never finishes.
MAX_ROUNDS: Final = 20_000


@dataclass(frozen=True)
class _Periods:
    """The window's up and down periods (hours) at one level, the cumulative sums for
    length-biased draws, and per scenario the factors on them and the availability."""

    ups: FloatArray
    downs: FloatArray
    up_cum: FloatArray
    down_cum: FloatArray
    scenarios: Scenarios
    availability: FloatArray

    @classmethod
    def of(cls, trace: SpotTrace, level: int, scenarios: Scenarios) -> _Periods:
        up = np.asarray(trace.counts >= level, dtype=bool)
        ups = up_run_lengths(up).astype(np.float64) * trace.gap_hours
        downs = down_run_lengths(up).astype(np.float64) * trace.gap_hours
        u = ups.sum() * scenarios.mtbi_factor
        d = downs.sum() * scenarios.wait_factor
        with np.errstate(invalid="ignore"):
            avail = np.where(np.isinf(u), 1.0, u / (u + d))
        avail = np.where(scenarios.ever, np.nan_to_num(avail, nan=0.0), 0.0)
        return cls(ups, downs, np.concatenate(([0.0], np.cumsum(ups))),
                   np.concatenate(([0.0], np.cumsum(downs))), scenarios, avail)

    def draw(self, rng: np.random.Generator, scenario: IntArray, *, up: bool,
             biased: bool) -> FloatArray:
        """One period per run (uniform, or length-biased), times its scenario's factor."""
        values, cum = (self.ups, self.up_cum) if up else (self.downs, self.down_cum)
        factor = (self.scenarios.mtbi_factor if up else self.scenarios.wait_factor)[scenario]
        if values.size == 0:
            return np.zeros(scenario.size)
        if biased:
            pick = np.searchsorted(cum, rng.random(scenario.size) * cum[-1], side="right") - 1
        else:
            pick = (rng.random(scenario.size) * values.size).astype(np.int64)
        return np.asarray(values[np.clip(pick, 0, values.size - 1)] * factor, dtype=np.float64)


def renewal_makespans_of(ups: FloatArray, downs: FloatArray, availability: float,
                         job: BacktestJob, rng: np.random.Generator, trials: int) -> FloatArray:
    """Makespans (hours) of ``trials`` runs of the renewal model (module docstring) of the
    one-row, one-pool ``job`` on a market of these up and down periods (hours, the runs of a
    trace) and availability: the model's one implementation, which
    :mod:`deepvm_core.job.trace_models` uses too."""
    periods = _Periods(np.asarray(ups, dtype=np.float64), np.asarray(downs, dtype=np.float64),
                       np.concatenate(([0.0], np.cumsum(ups))),
                       np.concatenate(([0.0], np.cumsum(downs))), Scenarios.single(),
                       np.array([availability]))
    zero = np.zeros(trials, dtype=np.int64)
    return _renewal_runs(periods, job, zero, zero, rng)[0]


def renewal_draws(window: SpotTrace, job: BacktestJob, scenarios: dict[int, Scenarios],
                  rng: np.random.Generator, trials: int) -> Draws:
    """Runs of the renewal model, ``ceil(trials / S)`` per scenario and row; shape (rows,
    S x that)."""
    levels = row_levels(window, job)
    count = next(iter(scenarios.values())).size
    per = math.ceil(trials / count)
    runs = count * per
    rows = job.configurations
    makespan, cost, events = np.zeros((rows, runs)), np.zeros((rows, runs)), np.zeros((rows, runs))
    for level, sc in scenarios.items():
        which = np.flatnonzero(levels == level)
        periods = _Periods.of(window, level, sc)
        scenario = np.tile(np.repeat(np.arange(count), per), which.size)
        m, c, e = _renewal_runs(periods, job, np.repeat(which, runs), scenario, rng)
        makespan[which] = m.reshape(which.size, runs)
        cost[which] = c.reshape(which.size, runs)
        events[which] = e.reshape(which.size, runs)
    return Draws(makespan, cost, events.mean(axis=1))


def _renewal_runs(periods: _Periods, job: BacktestJob, row: IntArray, scenario: IntArray,
                  rng: np.random.Generator) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Makespan, cost and interruptions of one run per entry of ``row``/``scenario``."""
    size = row.size
    k = job.full_segments[row]
    s = pool_column(job, "full_segment_hours")[row]
    sl = pool_column(job, "last_segment_hours")[row]
    r = pool_column(job, "restart_hours")[row]
    price = pool_column(job, "price_usd_per_hour")[row]
    od = pool_column(job, "on_demand_usd_per_hour")[row]
    t, spot, wait, inter = np.zeros(size), np.zeros(size), np.zeros(size), np.zeros(size)
    never = ~periods.scenarios.ever[scenario] | (periods.ups.size == 0)
    calm = ~never & ((periods.downs.size == 0)
                     | np.isinf(periods.scenarios.mtbi_factor[scenario]))
    whole = k * s + sl
    t[calm] = whole[calm]
    spot[calm] = whole[calm]
    done = never | calm
    starts_up = rng.random(size) < periods.availability[scenario]
    first_wait = np.where(starts_up, 0.0, periods.draw(rng, scenario, up=False, biased=True)
                          * rng.random(size))
    period = np.where(starts_up, periods.draw(rng, scenario, up=True, biased=True)
                      * rng.random(size), periods.draw(rng, scenario, up=True, biased=False))
    live = np.flatnonzero(~done)  # the runs still going, compacted every round
    lk, ls, lsl, lr, sc = k[live], s[live], sl[live], r[live], scenario[live]
    lt, lwait = first_wait[live].copy(), first_wait[live].copy()
    lspot, linter = np.zeros(live.size), np.zeros(live.size)
    lseg = np.zeros(live.size, dtype=np.int64)
    lrestart = np.zeros(live.size, dtype=bool)
    lperiod = period[live]
    for _ in range(MAX_ROUNDS):
        if live.size == 0:
            break
        full = lseg < lk
        first = np.where(lrestart, lr, 0.0) + np.where(full, ls, lsl)
        fits = first <= lperiod
        left = np.maximum(lk - lseg - 1, 0)
        fit = np.where(fits & full, np.floor((lperiod - first) / ls), 0).astype(np.int64)
        m = np.minimum(left, fit)
        end = first + m * ls + np.where(full, lsl, 0.0)
        finish = fits & (~full | ((m == left) & (end <= lperiod)))
        at = np.where(full, end, first)
        gone = live[finish]
        t[gone] = lt[finish] + at[finish]
        spot[gone] = lspot[finish] + at[finish]
        wait[gone] = lwait[finish]
        inter[gone] = linter[finish]
        done[gone] = True
        go = ~finish
        live, lk, ls, lsl, lr, sc = live[go], lk[go], ls[go], lsl[go], lr[go], sc[go]
        u = lperiod[go]
        lseg = np.where(fits[go], lseg[go] + 1 + m[go], lseg[go])
        lrestart = np.ones(live.size, dtype=bool)
        down = periods.draw(rng, sc, up=False, biased=False)
        lt = lt[go] + u + down
        lspot = lspot[go] + u
        lwait = lwait[go] + down
        linter = linter[go] + 1
        lperiod = periods.draw(rng, sc, up=True, biased=False)
    lost = never | ~done
    cost = price * spot + od * wait
    for x in (t, cost, inter):
        x[lost] = np.inf
    return t, cost, inter
