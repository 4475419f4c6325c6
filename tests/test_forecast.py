"""Forecasts from a recent window (issue 25): windows and warps (market/window.py) and the
three models with their bands (job/forecast.py), on seeded synthetic traces. Expected values
by hand, from the oracles (tests/job_oracle.py, tests/traces_oracle.py) or from the backtest
itself where the model is defined as that backtest."""

from __future__ import annotations

import math

import numpy as np
import pytest

from deepvm_core.job.backtest import BacktestJob
from deepvm_core.job.backtest_replay import backtest
from deepvm_core.job.forecast import FORECAST_MODELS, forecast
from deepvm_core.job.forecast_scenarios import scenario_markets
from deepvm_core.market.trace import SpotTrace, TraceError
from deepvm_core.market.window import (
    DEFAULT_WINDOW_DAYS,
    parse_window_days,
    recent_window,
    sub_windows,
    warp,
)
from tests import job_oracle
from tests.synthetic_traces import alternating_runs

HOUR = 3600.0


def synthetic(seed: int, ticks: int, mean_up: float, mean_down: float,
              gap: float = 600.0) -> SpotTrace:
    """Alternating up and down runs of geometric lengths (ticks), seeded."""
    return SpotTrace(f"synthetic-{seed}", gap, np.asarray(
        alternating_runs(seed, ticks, mean_up, mean_down), dtype=np.int64))


def one_pool_job(hours: float, spot_vms: int = 1, segment: float = 1.0,
                 restart: float = 0.1) -> BacktestJob:
    full = math.ceil(hours / segment) - 1
    return BacktestJob(np.array([full]), np.array([[segment]]),
                       np.array([[hours - full * segment]]), np.array([[restart]]),
                       np.array([[spot_vms]]), np.array([[2.0]]), np.array([[0.5]]),
                       np.array([[3.0]]))


def test_the_recent_window_is_the_last_days():
    week = 7 * 144  # 10-minute ticks
    trace = SpotTrace("t", 600.0, np.arange(3 * week, dtype=np.int64) % 2)
    assert DEFAULT_WINDOW_DAYS == 7.0
    last = recent_window(trace)
    assert last.ticks == week
    assert np.array_equal(last.counts, trace.counts[-week:])
    assert recent_window(trace, None) is trace
    assert recent_window(trace, 100.0) is trace  # longer than the trace: all of it
    assert recent_window(trace, 0.5).ticks == 72
    assert parse_window_days("all") is None
    assert parse_window_days(" 3.5 ") == 3.5
    for bad in ("0", "-1", "nan", "inf", "week"):
        with pytest.raises(TraceError, match="window_days"):
            parse_window_days(bad)


def test_sub_windows_are_days_every_half_day():
    trace = SpotTrace("t", 600.0, np.ones(7 * 144, dtype=np.int64))
    parts = sub_windows(trace)
    # one day = 144 ticks, every 72 ticks: starts 0, 72, ..., 864 (= 1008 - 144): 13
    assert [p.ticks for p in parts] == [144] * 13
    assert len(parts) == 13
    short = SpotTrace("t", 600.0, np.ones(100, dtype=np.int64))
    assert sub_windows(short) == [short]


def test_a_warp_scales_up_and_down_runs():
    up = np.array([1, 1, 0, 1, 1, 1, 0, 0], dtype=bool)
    w = warp(up, 60.0, 2.0, 0.5, "t")
    # runs: up 2 -> 4, down 1 -> max(1, round(0.5)) = 1, up 3 -> 6, down 2 -> 1
    assert w.counts.tolist() == [1] * 4 + [0] + [1] * 6 + [0]
    assert warp(up, 60.0, math.inf, 1.0, "t").counts.tolist() == [1]


def test_the_closed_form_forecast_is_the_oracle_with_the_windows_mtbi_and_w():
    trace = synthetic(1, 2000, mean_up=12, mean_down=6)
    up = trace.counts >= 1
    events = int(np.count_nonzero(up[:-1] & ~up[1:]))
    mtbi = np.count_nonzero(up) * trace.gap_hours / events
    downs, run = [], 0
    for u in up:
        if not u:
            run += 1
        elif run:
            downs.append(run)
            run = 0
    if run:
        downs.append(run)
    wait = float(np.mean(downs)) * trace.gap_hours
    f = forecast(trace, one_pool_job(10.0, spot_vms=3), "closed-form", per_vm_share=0.2)
    # a state trace: 3 spot VMs at (1 + 0.2 * 2) / MTBI
    want = job_oracle.expected_job(10 * HOUR, HOUR, 0.0, 1.4 / mtbi, 0.1, wait, 2.0, 0.5)
    assert float(f.mean_makespan_hours[0]) == pytest.approx(want.makespan_h, rel=1e-9)
    assert float(f.mean_cost_usd[0]) == pytest.approx(want.cost_usd, rel=1e-9)
    assert f.makespan_hours_p10[0] < f.makespan_hours_p50[0] < f.makespan_hours_p90[0]


def test_the_replay_forecast_is_the_backtest_of_the_window():
    trace = synthetic(2, 1500, mean_up=20, mean_down=5)
    job = one_pool_job(6.0)
    f = forecast(trace, job, "replay", spread=False)
    runs = backtest([trace], job, policy="wait").makespan_hours[0]
    assert float(f.mean_makespan_hours[0]) == pytest.approx(float(runs.mean()), rel=1e-12)
    assert float(f.makespan_hours_p90[0]) == pytest.approx(float(np.percentile(runs, 90)))


def test_the_renewal_forecast_is_near_the_replay_on_a_long_renewal_market():
    trace = synthetic(3, 40_000, mean_up=18, mean_down=6)
    job = one_pool_job(8.0)
    renewal = forecast(trace, job, "renewal", seed=4, trials=8000, spread=False)
    replay = forecast(trace, job, "replay", starts=2000, spread=False)
    assert float(renewal.mean_makespan_hours[0]) == pytest.approx(
        float(replay.mean_makespan_hours[0]), rel=0.08)


def test_always_up_and_never_up_windows():
    up = SpotTrace("up", 600.0, np.ones(500, dtype=np.int64))
    down = SpotTrace("down", 600.0, np.zeros(500, dtype=np.int64))
    job = one_pool_job(5.0)
    for model in FORECAST_MODELS:
        f = forecast(up, job, model)
        assert float(f.mean_makespan_hours[0]) == pytest.approx(5.0, rel=1e-12), model
        assert float(f.makespan_hours_p90[0]) == pytest.approx(5.0, rel=1e-12), model
        g = forecast(down, job, model)
        assert math.isinf(float(g.mean_makespan_hours[0])), model
        assert math.isinf(float(g.makespan_hours_p10[0])), model


def test_the_band_with_the_days_scenarios_is_wider_than_the_window_alone():
    # a market that is good for three days and bad for four: the days differ
    good = synthetic(5, 3 * 144, mean_up=60, mean_down=3)
    bad = synthetic(6, 4 * 144, mean_up=4, mean_down=8)
    trace = SpotTrace("mixed", 600.0, np.concatenate((good.counts, bad.counts)))
    job = one_pool_job(10.0)
    for model in FORECAST_MODELS:
        narrow = forecast(trace, job, model, spread=False)
        wide = forecast(trace, job, model)
        assert float(wide.mean_makespan_hours[0]) == float(narrow.mean_makespan_hours[0])
        width = float(wide.makespan_hours_p90[0] - wide.makespan_hours_p10[0])
        assert width > float(narrow.makespan_hours_p90[0] - narrow.makespan_hours_p10[0]), model


def test_scenario_markets_keep_the_windows_length_and_scale_its_periods():
    trace = synthetic(7, 7 * 144, mean_up=10, mean_down=5)
    markets = scenario_markets(trace, 1)
    assert len(markets) == 13
    assert {m.ticks for m in markets} == {trace.ticks}


def test_a_count_trace_too_small_for_the_cluster_is_refused():
    trace = SpotTrace("count", 600.0, np.array([4, 4, 3, 4, 2, 4] * 50))
    with pytest.raises(TraceError, match="larger than the trace's largest count"):
        forecast(trace, one_pool_job(2.0, spot_vms=5), "replay")
    f = forecast(trace, one_pool_job(2.0, spot_vms=4), "closed-form")
    assert math.isfinite(float(f.mean_makespan_hours[0]))
