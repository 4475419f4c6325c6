"""Forecasts of a job on one spot pool from a window of its trace (issue 25), by three models,
with bands that include how much the market moves.

**The job** on configurations (rows of a one-pool :class:`~deepvm_core.job.backtest.BacktestJob`):
K full segments of s hours (τ + δ), a last of ``s_last``, restart R, n spot VMs, the cluster's
price P and its on-demand part ``P_od``. A pool is up for n spot VMs as ``traces.md`` says
(:func:`~deepvm_core.market.trace_stats.up_threshold`); a row the trace cannot hold (n above a
count trace's largest count) is the caller's to refuse.

**The models** (``--model``):

* ``closed-form``: ``job-model.md``'s exact expectation (start-up wait included) with the
  window's MTBI and W (``traces.md``'s statistics). On a state trace (largest count 1) the
  cluster's rate is ``λ(n) = (1 + ρ (n - 1)) / MTBI`` with the workload's ρ; on a count trace
  ρ and one VM's MTBI are the trace's own (:func:`~deepvm_core.market.reclaims.
  estimate_per_vm_share`), W is measured for n VMs. A window that is never up: never finishes.
* ``renewal``: the market alternates up and down periods drawn (with replacement) from the
  window's own maximal up and down runs; a run starts at a random time (up with probability =
  the window's availability, in a length-biased up period with a uniform residual; else it
  first waits the residual of a length-biased down period), and the job runs as in the
  backtest (an attempt completes when it fits in the rest of the up period; else it is lost,
  counted as an interruption, and the next attempt restarts after the next down period).
  Seeded Monte Carlo, vectorised over rows and runs; a run still going after
  :data:`MAX_ROUNDS` up periods never finishes (infinite makespan).
* ``replay``: the ``wait`` backtest of the window itself (cyclic), ``traces.md``; its band
  replays each scenario's market from ``ceil(starts / S)`` start times.

**Point and band.** The point forecast (mean makespan, cost and events) is the model on the
whole window. The band (P10, P50, P90, deadline share) adds the uncertainty of MTBI and W
themselves: the window's one-day sub-windows (:func:`~deepvm_core.market.window.sub_windows`,
one every half day) each give an MTBI and a W; scenario s scales the window's by
``f_m = MTBI_s / MTBI`` and ``f_w = W_s / W``, and each model runs under every scenario, pooled
with equal weights: the closed form with ``λ / f_m`` and ``W f_w``, the renewal model with its
up periods times ``f_m`` and down periods times ``f_w``, the replay on the window warped the
same way (:func:`~deepvm_core.market.window.warp`). A sub-window that is never up is a scenario
in which the job never finishes. ``spread=False`` gives the band of the whole window alone.

**Why one file.** The three models share one job (the rows of a one-pool backtest job), one set
of market scenarios (the sub-windows' MTBI and W) and one band (P10-P90 and the deadline share
pooled over the scenarios); each model is a section of that pipeline, and split apart they
would hand the private draws and scenario tables across modules.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal, get_args

import numpy as np

from deepvm_core.arrays import BoolArray, FloatArray, IntArray
from deepvm_core.job.backtest import DEFAULT_STARTS, BacktestJob
from deepvm_core.job.backtest_replay import backtest
from deepvm_core.job.closed_form import expected_jobs
from deepvm_core.job.inputs import JobInputs
from deepvm_core.job.recovery import DEADLINE_POLICIES
from deepvm_core.job.spread import scenario_samples
from deepvm_core.market.reclaims import cluster_interruption_rate, estimate_per_vm_share
from deepvm_core.market.trace import SpotTrace, TraceError
from deepvm_core.market.trace_stats import (
    down_run_lengths,
    pool_statistics,
    up_run_lengths,
    up_threshold,
)
from deepvm_core.market.window import SUB_WINDOW_DAYS, SUB_WINDOW_STEP_DAYS, sub_windows, warp
from deepvm_core.units import SECONDS_PER_HOUR

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
#: A renewal run still going after this many up periods never finishes.
MAX_ROUNDS: Final = 20_000
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


@dataclass(frozen=True)
class _Draws:
    """Runs of each row: makespan and cost, shape (rows, runs), and mean events per row."""

    makespan: FloatArray
    cost: FloatArray
    events: FloatArray


def _column(job: BacktestJob, name: str) -> FloatArray:
    return np.asarray(getattr(job, name)[:, 0], dtype=np.float64)


# ----------------------------------------------------------------------------- closed form


def _rates_and_waits(trace: SpotTrace, spot_vms: IntArray,
                     per_vm_share: float) -> tuple[FloatArray, FloatArray, BoolArray]:
    """Per row, λ(n) and W from ``trace`` (module docstring), and whether it is ever up."""
    rates = np.zeros(spot_vms.size)
    waits = np.zeros(spot_vms.size)
    ever = np.zeros(spot_vms.size, dtype=bool)
    estimate = estimate_per_vm_share(trace) if trace.max_count > 1 else None
    one = pool_statistics(trace, 1)
    for n in np.unique(spot_vms):
        rows = spot_vms == n
        stats = pool_statistics(trace, int(n))
        ever[rows] = stats.availability > 0
        waits[rows] = stats.mean_wait_hours
        if estimate is not None and estimate.per_vm_share is not None:
            assert estimate.mtbi_hours is not None
            rates[rows] = cluster_interruption_rate(estimate.mtbi_hours,
                                                    estimate.per_vm_share, n)
        elif trace.max_count > 1:  # a count trace that cannot say: its own statistics at n
            rates[rows] = 0.0 if math.isinf(stats.mtbi_hours) else 1.0 / stats.mtbi_hours
        else:
            rates[rows] = (0.0 if math.isinf(one.mtbi_hours)
                           else cluster_interruption_rate(one.mtbi_hours, per_vm_share, n))
    return rates, waits, ever


def _closed_form_inputs(job: BacktestJob, rates: FloatArray, waits: FloatArray) -> JobInputs:
    s = _column(job, "full_segment_hours") * SECONDS_PER_HOUR
    last = _column(job, "last_segment_hours") * SECONDS_PER_HOUR
    k = job.full_segments.astype(np.int64)
    return JobInputs(epoch_seconds=s, compute_seconds=k * s + last,
                     checkpoint_stall_seconds=np.zeros(k.size), checkpoint_interval_seconds=s,
                     checkpoints=k, last_segment_seconds=last,
                     interruption_rate_per_hour=rates,
                     restart_hours=_column(job, "restart_hours"), wait_hours=waits,
                     price_usd_per_hour=_column(job, "price_usd_per_hour"),
                     on_demand_usd_per_hour=_column(job, "on_demand_usd_per_hour"))


def _closed_form_point(trace: SpotTrace, job: BacktestJob,
                       per_vm_share: float) -> tuple[FloatArray, FloatArray, FloatArray]:
    rates, waits, ever = _rates_and_waits(trace, job.spot_vms[:, 0], per_vm_share)
    est = expected_jobs(_closed_form_inputs(job, rates, waits))
    never = ~ever
    return (np.where(never, np.inf, est.expected_makespan_hours),
            np.where(never, np.inf, est.expected_cost_usd),
            np.where(never, np.inf, est.expected_interruptions))


def _scenario_draws(inputs: JobInputs, rates: FloatArray, waits: FloatArray, ever: BoolArray,
                    rng: np.random.Generator, trials: int) -> _Draws:
    """The closed form's runs under the scenarios (columns of ``rates`` and ``waits``); runs
    of a scenario that is never up never finish."""
    count = rates.shape[1]
    per = math.ceil(trials / count)
    d = scenario_samples(inputs, rates, waits, rng, per)
    never = np.repeat(~ever, per, axis=1)
    return _Draws(np.where(never, np.inf, d.makespan_hours), np.where(never, np.inf, d.cost_usd),
                  np.where(never, np.inf, d.interruptions).mean(axis=1))


# ----------------------------------------------------------------------------- scenarios


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
class _Scenarios:
    """Per scenario: the MTBI factor (infinite: no interruption), the W factor, and whether
    the market is ever up."""

    mtbi_factor: FloatArray
    wait_factor: FloatArray
    ever: BoolArray

    @property
    def size(self) -> int:
        return int(self.mtbi_factor.size)


def _scenarios(window: SpotTrace, parts: Sequence[SpotTrace], level: int) -> _Scenarios:
    """The factors of each sub-window against the whole window (module docstring)."""
    _, mtbi, wait = _level_stats(window, level)
    fm, fw, ever = [], [], []
    for p in parts:
        a, m, w = _level_stats(p, level)
        ever.append(a > 0)
        fm.append(1.0 if math.isinf(mtbi) else math.inf if math.isinf(m) else m / mtbi)
        fw.append(w / wait if wait > 0 else 1.0)
    return _Scenarios(np.array(fm), np.array(fw), np.array(ever, dtype=bool))


def scenario_markets(window: SpotTrace, level: int, *, days: float = SUB_WINDOW_DAYS,
                     step_days: float = SUB_WINDOW_STEP_DAYS) -> list[SpotTrace]:
    """The window's market under each scenario (module docstring): the window at ``level``
    warped by the scenario's MTBI and W factors (:func:`~deepvm_core.market.window.warp`),
    cut or repeated to the window's length so that pools line up; a scenario that is never
    up: a market that is never up."""
    sc = _scenarios(window, sub_windows(window, days, step_days), level)
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


def _levels(window: SpotTrace, job: BacktestJob) -> IntArray:
    """Per row, the count a tick needs to be up for its spot VMs."""
    n = job.spot_vms[:, 0].astype(np.int64)
    return n if window.max_count > 1 else np.ones_like(n)


# ----------------------------------------------------------------------------- renewal


@dataclass(frozen=True)
class _Periods:
    """The window's up and down periods (hours) at one level, the cumulative sums for
    length-biased draws, and per scenario the factors on them and the availability."""

    ups: FloatArray
    downs: FloatArray
    up_cum: FloatArray
    down_cum: FloatArray
    scenarios: _Scenarios
    availability: FloatArray

    @classmethod
    def of(cls, trace: SpotTrace, level: int, scenarios: _Scenarios) -> _Periods:
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
                       np.concatenate(([0.0], np.cumsum(downs))),
                       _Scenarios(np.ones(1), np.ones(1), np.ones(1, dtype=bool)),
                       np.array([availability]))
    zero = np.zeros(trials, dtype=np.int64)
    return _renewal_runs(periods, job, zero, zero, rng)[0]


def _renewal_draws(window: SpotTrace, job: BacktestJob, scenarios: dict[int, _Scenarios],
                   rng: np.random.Generator, trials: int) -> _Draws:
    """Runs of the renewal model, ``ceil(trials / S)`` per scenario and row; shape (rows,
    S x that)."""
    levels = _levels(window, job)
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
    return _Draws(makespan, cost, events.mean(axis=1))


def _renewal_runs(periods: _Periods, job: BacktestJob, row: IntArray, scenario: IntArray,
                  rng: np.random.Generator) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Makespan, cost and interruptions of one run per entry of ``row``/``scenario``."""
    size = row.size
    k = job.full_segments[row]
    s = _column(job, "full_segment_hours")[row]
    sl = _column(job, "last_segment_hours")[row]
    r = _column(job, "restart_hours")[row]
    price = _column(job, "price_usd_per_hour")[row]
    od = _column(job, "on_demand_usd_per_hour")[row]
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


# ----------------------------------------------------------------------------- replay


def _replay_draws(window: SpotTrace, job: BacktestJob, spread: bool, starts: int,
                  days: float, step_days: float) -> _Draws:
    """The ``wait`` backtest of the window (``spread`` False), or of its market under each
    scenario (:func:`scenario_markets`, runs pooled); a market that is never up (or never
    holds a segment): runs that never finish."""
    levels = _levels(window, job)
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
    return _Draws(makespan, cost, events.mean(axis=1))


# ----------------------------------------------------------------------------- forecast


def _percentiles(x: FloatArray) -> FloatArray:
    """numpy's linear percentiles of each row, where runs that never finish (infinite) count
    as the longest: a percentile among them is infinite, never NaN."""
    big = np.finfo(np.float64).max / 4  # an interpolation towards it is past 1e300
    q = np.percentile(np.where(np.isinf(x), big, x), PERCENTILES, axis=1)
    return np.asarray(np.where(q > 1e300, np.inf, q), dtype=np.float64)


def _band(draws: _Draws, deadline: float | None) -> tuple[FloatArray, ...]:
    mk = _percentiles(draws.makespan)
    cs = _percentiles(draws.cost)
    met = (np.full(draws.makespan.shape[0], np.nan) if deadline is None
           else np.mean(draws.makespan <= deadline, axis=1))
    return (*mk, *cs, met)


def _closed_form_draws(window: SpotTrace, job: BacktestJob, per_vm_share: float,
                       scenarios: dict[int, _Scenarios], rng: np.random.Generator,
                       trials: int) -> _Draws:
    rates, waits, ever = _rates_and_waits(window, job.spot_vms[:, 0], per_vm_share)
    levels = _levels(window, job)
    count = next(iter(scenarios.values())).size
    fm = np.ones((job.configurations, count))
    fw = np.ones((job.configurations, count))
    ok = np.ones((job.configurations, count), dtype=bool)
    for level, sc in scenarios.items():
        which = levels == level
        fm[which], fw[which], ok[which] = sc.mtbi_factor, sc.wait_factor, sc.ever
    inputs = _closed_form_inputs(job, rates, waits)
    return _scenario_draws(inputs, rates[:, None] / fm, waits[:, None] * fw, ok & ever[:, None],
                           rng, trials)


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
    levels = [int(v) for v in np.unique(_levels(window, job))]
    parts = sub_windows(window, sub_window_days, sub_window_step_days) if spread else [window]
    scenarios = {v: _scenarios(window, parts, v) for v in levels}
    flat = {v: _Scenarios(np.ones(1), np.ones(1), np.ones(1, dtype=bool)) for v in levels}
    if model == "closed-form":
        mean, cost, events = _closed_form_point(window, job, per_vm_share)
        band = _closed_form_draws(window, job, per_vm_share, scenarios, rng, trials)
    elif model == "renewal":
        whole = _renewal_draws(window, job, flat, rng, trials)
        mean, cost, events = whole.makespan.mean(axis=1), whole.cost.mean(axis=1), whole.events
        band = (whole if not spread
                else _renewal_draws(window, job, scenarios, rng, trials))
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
