"""The closed-form model of a forecast (``--model closed-form``, :mod:`deepvm_core.job.forecast`).

``job-model.md``'s exact expectation (start-up wait included) with the window's MTBI and W
(``traces.md``'s statistics). On a state trace (largest count 1) the cluster's rate is
``λ(n) = (1 + ρ (n - 1)) / MTBI`` with the workload's ρ; on a count trace ρ and one VM's MTBI
are the trace's own (:func:`~deepvm_core.market.reclaims.estimate_per_vm_share`), W is measured
for n VMs. A window that is never up: never finishes. Under a scenario
(:mod:`~deepvm_core.job.forecast_scenarios`) the rate is ``λ / f_m`` and the wait ``W f_w``,
sampled by :func:`~deepvm_core.job.spread.scenario_samples`.
"""

from __future__ import annotations

import math

import numpy as np

from deepvm_core.arrays import BoolArray, FloatArray, IntArray
from deepvm_core.job.backtest import BacktestJob
from deepvm_core.job.closed_form import expected_jobs
from deepvm_core.job.forecast_scenarios import Draws, Scenarios, pool_column, row_levels
from deepvm_core.job.inputs import JobInputs
from deepvm_core.job.spread import scenario_samples
from deepvm_core.market.reclaims import cluster_interruption_rate, estimate_per_vm_share
from deepvm_core.market.trace import SpotTrace
from deepvm_core.market.trace_stats import pool_statistics
from deepvm_core.units import SECONDS_PER_HOUR


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
    s = pool_column(job, "full_segment_hours") * SECONDS_PER_HOUR
    last = pool_column(job, "last_segment_hours") * SECONDS_PER_HOUR
    k = job.full_segments.astype(np.int64)
    return JobInputs(epoch_seconds=s, compute_seconds=k * s + last,
                     checkpoint_stall_seconds=np.zeros(k.size), checkpoint_interval_seconds=s,
                     checkpoints=k, last_segment_seconds=last,
                     interruption_rate_per_hour=rates,
                     restart_hours=pool_column(job, "restart_hours"), wait_hours=waits,
                     price_usd_per_hour=pool_column(job, "price_usd_per_hour"),
                     on_demand_usd_per_hour=pool_column(job, "on_demand_usd_per_hour"))


def closed_form_point(trace: SpotTrace, job: BacktestJob,
                      per_vm_share: float) -> tuple[FloatArray, FloatArray, FloatArray]:
    """The point forecast per row: mean makespan (hours), cost (USD) and interruptions;
    infinite where the window is never up."""
    rates, waits, ever = _rates_and_waits(trace, job.spot_vms[:, 0], per_vm_share)
    est = expected_jobs(_closed_form_inputs(job, rates, waits))
    never = ~ever
    return (np.where(never, np.inf, est.expected_makespan_hours),
            np.where(never, np.inf, est.expected_cost_usd),
            np.where(never, np.inf, est.expected_interruptions))


def _scenario_draws(inputs: JobInputs, rates: FloatArray, waits: FloatArray, ever: BoolArray,
                    rng: np.random.Generator, trials: int) -> Draws:
    """The closed form's runs under the scenarios (columns of ``rates`` and ``waits``); runs
    of a scenario that is never up never finish."""
    count = rates.shape[1]
    per = math.ceil(trials / count)
    d = scenario_samples(inputs, rates, waits, rng, per)
    never = np.repeat(~ever, per, axis=1)
    return Draws(np.where(never, np.inf, d.makespan_hours), np.where(never, np.inf, d.cost_usd),
                 np.where(never, np.inf, d.interruptions).mean(axis=1))


def closed_form_draws(window: SpotTrace, job: BacktestJob, per_vm_share: float,
                      scenarios: dict[int, Scenarios], rng: np.random.Generator,
                      trials: int) -> Draws:
    """The band's runs: ``ceil(trials / S)`` per scenario and row, under the scenarios of
    each row's level; shape (rows, S x that)."""
    rates, waits, ever = _rates_and_waits(window, job.spot_vms[:, 0], per_vm_share)
    levels = row_levels(window, job)
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
