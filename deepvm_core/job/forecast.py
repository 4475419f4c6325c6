"""Forecasts of a job on one spot pool from a window of its trace (issue 25), by three models,
with bands that include how much the market moves.

**The job** on configurations (rows of a one-pool :class:`~deepvm_core.job.backtest.BacktestJob`):
K full segments of s hours (τ + δ), a last of ``s_last``, restart R, n spot VMs, the cluster's
price P and its on-demand part ``P_od``. A pool is up for n spot VMs as ``traces.md`` says
(:func:`~deepvm_core.market.trace_stats.up_threshold`); a row the trace cannot hold (n above a
count trace's largest count) is the caller's to refuse.

**The models** (``--model``), each in its module:

* ``closed-form``: ``job-model.md``'s exact expectation with the window's MTBI and W
  (:mod:`~deepvm_core.job.forecast_closed_form`).
* ``renewal``: a seeded Monte Carlo of the market as alternating up and down periods drawn
  from the window's own runs (:mod:`~deepvm_core.job.forecast_renewal`).
* ``replay``: the ``wait`` backtest of the window itself (cyclic), ``traces.md``; its band
  replays each scenario's market from ``ceil(starts / S)`` start times (here).

**Point and band.** The point forecast (mean makespan, cost and events) is the model on the
whole window. The band (P10, P50, P90, deadline share) adds the uncertainty of MTBI and W
themselves: each model runs under every market scenario (the window's one-day sub-windows'
MTBI and W, :mod:`~deepvm_core.job.forecast_scenarios`), pooled with equal weights: the closed
form with ``λ / f_m`` and ``W f_w``, the renewal model with its up periods times ``f_m`` and
down periods times ``f_w``, the replay on the window warped the same way
(:func:`~deepvm_core.market.window.warp`). A sub-window that is never up is a scenario in which
the job never finishes. ``spread=False`` gives the band of the whole window alone.

This module holds the models' names, the replay, the band and :func:`forecast`, which runs
them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final, Literal, get_args

import numpy as np

from deepvm_core.arrays import FloatArray
from deepvm_core.job.backtest import DEFAULT_STARTS, BacktestJob
from deepvm_core.job.backtest_replay import backtest
from deepvm_core.job.forecast_closed_form import closed_form_draws, closed_form_point
from deepvm_core.job.forecast_renewal import renewal_draws
from deepvm_core.job.forecast_scenarios import (
    Draws,
    Scenarios,
    row_levels,
    scenario_factors,
    scenario_markets,
)
from deepvm_core.job.recovery import DEADLINE_POLICIES
from deepvm_core.market.trace import SpotTrace, TraceError
from deepvm_core.market.trace_stats import up_threshold
from deepvm_core.market.window import SUB_WINDOW_DAYS, SUB_WINDOW_STEP_DAYS, sub_windows

ForecastModel = Literal["closed-form", "renewal", "replay"]
FORECAST_MODELS: Final[tuple[ForecastModel, ...]] = get_args(ForecastModel)
#: The model ``plan --pool`` uses unless told: the best of the rolling-origin evaluation
#: (:func:`deepvm_core.job.rolling.best_model`; tests/test_rolling.py checks it).
DEFAULT_TRACE_MODEL: Final[ForecastModel] = "renewal"


def trace_model(model: str | None, recovery: str) -> ForecastModel:
    """The model a plan with traces uses: ``model`` when given; else the replay for the
    ``deadline`` recovery policy (the only model with an on-demand fallback) and
    :data:`DEFAULT_TRACE_MODEL` otherwise.

    Raises:
        TraceError: an unknown model, or the deadline policy with another model.
    """
    if model is None:
        return "replay" if recovery in DEADLINE_POLICIES else DEFAULT_TRACE_MODEL
    for known in FORECAST_MODELS:
        if model == known:
            if recovery in DEADLINE_POLICIES and known != "replay":
                raise TraceError("model", f"the {recovery} policy (on-demand fallback) is "
                                          f"replayed only: use the replay, not the {known}")
            return known
    raise TraceError("model", f"{model!r}: must be one of {', '.join(FORECAST_MODELS)}")


#: Monte Carlo runs per row of the closed form's and the renewal model's bands.
DEFAULT_FORECAST_TRIALS: Final = 2000
PERCENTILES: Final = (10.0, 50.0, 90.0)


@dataclass(frozen=True)
class Forecast:
    """A model's forecast of the job on one pool, per row (1-D arrays).

    Attributes:
        model: ``closed-form``, ``renewal`` or ``replay``.
        mean_makespan_hours, mean_cost_usd, mean_interruptions: the point forecast (the model
            on the whole window); infinite when the job never finishes there.
        makespan_hours_p10, makespan_hours_p50, makespan_hours_p90: the band, hours.
        cost_usd_p10, cost_usd_p50, cost_usd_p90: the band of the cost, USD.
        deadline_met: share of the band's runs within the deadline, or ``None`` without one.
        runs: runs per row behind the band.
    """

    model: ForecastModel
    mean_makespan_hours: FloatArray
    mean_cost_usd: FloatArray
    mean_interruptions: FloatArray
    makespan_hours_p10: FloatArray
    makespan_hours_p50: FloatArray
    makespan_hours_p90: FloatArray
    cost_usd_p10: FloatArray
    cost_usd_p50: FloatArray
    cost_usd_p90: FloatArray
    deadline_met: FloatArray | None
    runs: int


# ----------------------------------------------------------------------------- replay


def _replay_draws(window: SpotTrace, job: BacktestJob, spread: bool, starts: int,
                  days: float, step_days: float) -> Draws:
    """The ``wait`` backtest of the window (``spread`` False), or of its market under each
    scenario (:func:`~deepvm_core.job.forecast_scenarios.scenario_markets`, runs pooled); a
    market that is never up (or never holds a segment): runs that never finish."""
    levels = row_levels(window, job)
    rows = job.configurations
    parts: list[tuple[FloatArray, FloatArray, FloatArray]] = []
    for level in np.unique(levels):
        which = np.flatnonzero(levels == level)
        sub = job.rows(which)
        if spread:  # the scenario markets are state traces: one VM up means all
            markets = scenario_markets(window, int(level), days=days, step_days=step_days)
            sub = BacktestJob(**{**{f: getattr(sub, f) for f in sub.__dataclass_fields__},
                                 "spot_vms": np.ones_like(sub.spot_vms)})
        else:
            markets = [window]
        per = min(math.ceil(starts / len(markets)), window.ticks)  # about ``starts`` in all
        shape = (rows, len(markets) * per)
        if not parts:
            parts = [(np.full(shape, np.inf), np.full(shape, np.inf), np.full(shape, np.inf))]
        makespan, cost, events = parts[0]
        for j, market in enumerate(markets):
            try:
                runs = backtest([market], sub, policy="wait", starts=per)
            except TraceError:
                continue
            cols = slice(j * per, (j + 1) * per)
            makespan[which, cols] = runs.makespan_hours
            cost[which, cols] = runs.cost_usd
            events[which, cols] = runs.interruptions
    makespan, cost, events = parts[0]
    return Draws(makespan, cost, events.mean(axis=1))


# ----------------------------------------------------------------------------- band


def _percentiles(x: FloatArray) -> FloatArray:
    """numpy's linear percentiles of each row, where runs that never finish (infinite) count
    as the longest: a percentile among them is infinite, never NaN."""
    big = np.finfo(np.float64).max / 4  # an interpolation towards it is past 1e300
    q = np.percentile(np.where(np.isinf(x), big, x), PERCENTILES, axis=1)
    return np.asarray(np.where(q > 1e300, np.inf, q), dtype=np.float64)


def _band(draws: Draws, deadline: float | None) -> tuple[FloatArray, ...]:
    mk = _percentiles(draws.makespan)
    cs = _percentiles(draws.cost)
    met = (np.full(draws.makespan.shape[0], np.nan) if deadline is None
           else np.mean(draws.makespan <= deadline, axis=1))
    return (*mk, *cs, met)


def forecast(window: SpotTrace, job: BacktestJob, model: ForecastModel, *,
             per_vm_share: float = 0.0, seed: int = 0, trials: int = DEFAULT_FORECAST_TRIALS,
             starts: int = DEFAULT_STARTS, deadline_hours: float | None = None,
             spread: bool = True, sub_window_days: float = SUB_WINDOW_DAYS,
             sub_window_step_days: float = SUB_WINDOW_STEP_DAYS) -> Forecast:
    """``model``'s forecast of ``job`` (one pool: ``job`` has one column) on ``window``
    (module docstring). Seeded; deterministic for the replay.

    Raises:
        TraceError: a bad model, a job of more than one pool, or a row with more spot VMs than
            a count trace's largest count.
    """
    if model not in FORECAST_MODELS:
        raise TraceError("model", f"{model!r}: must be one of {', '.join(FORECAST_MODELS)}")
    if job.pools != 1:
        raise TraceError("pools", f"a forecast is of one pool, not {job.pools}")
    if window.max_count > 1:
        up_threshold(window, int(job.spot_vms.max()))  # raises, naming the trace
    rng = np.random.default_rng(seed)
    levels = [int(v) for v in np.unique(row_levels(window, job))]
    parts = sub_windows(window, sub_window_days, sub_window_step_days) if spread else [window]
    scenarios = {v: scenario_factors(window, parts, v) for v in levels}
    flat = {v: Scenarios.single() for v in levels}
    if model == "closed-form":
        mean, cost, events = closed_form_point(window, job, per_vm_share)
        band = closed_form_draws(window, job, per_vm_share, scenarios, rng, trials)
    elif model == "renewal":
        whole = renewal_draws(window, job, flat, rng, trials)
        mean, cost, events = whole.makespan.mean(axis=1), whole.cost.mean(axis=1), whole.events
        band = (whole if not spread
                else renewal_draws(window, job, scenarios, rng, trials))
    else:
        whole = _replay_draws(window, job, False, starts, sub_window_days,
                              sub_window_step_days)
        mean, cost, events = whole.makespan.mean(axis=1), whole.cost.mean(axis=1), whole.events
        band = whole if not spread else _replay_draws(window, job, True, starts,
                                                      sub_window_days, sub_window_step_days)
    p10, p50, p90, c10, c50, c90, met = _band(band, deadline_hours)
    return Forecast(model=model, mean_makespan_hours=np.asarray(mean, dtype=np.float64),
                    mean_cost_usd=np.asarray(cost, dtype=np.float64),
                    mean_interruptions=np.asarray(events, dtype=np.float64),
                    makespan_hours_p10=p10, makespan_hours_p50=p50, makespan_hours_p90=p90,
                    cost_usd_p10=c10, cost_usd_p50=c50, cost_usd_p90=c90,
                    deadline_met=None if deadline_hours is None else met,
                    runs=int(band.makespan.shape[1]))
