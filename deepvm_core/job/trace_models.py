"""Models against backtests (``traces.md``, "Models against backtests"): how well a model that
only sees the first half of a trace predicts the backtest of the second half.

For one pool and one job (K full segments of ``s = τ + δ`` hours, a last of ``s_last``, restart
R), the trace is cut at ``L // 2``:

* **closed form:** MTBI and W estimated on the first half
  (:func:`~deepvm_core.market.trace_stats.pool_statistics`), then ``job-model.md``'s exact
  expectation ``T = S + K E0(s) + E0(s_last)`` with ``λ = 1 / MTBI`` and the start-up wait
  ``S = π W`` (``E0`` and ``S`` from :mod:`~deepvm_core.job.closed_form`);
* **empirical renewal:** the market alternates up and down periods drawn (with replacement) from
  the first half's own maximal up and down runs (hours); a run starts at a random time, so it
  starts up with probability = the first half's availability, in an up period drawn by length
  (length-biased) with a uniform residual, else waits the residual of a length-biased down
  period first; the job then runs as in the backtest (an attempt completes when it fits the
  rest of the up period; else it is lost and the next attempt restarts). Seeded Monte Carlo,
  vectorised over trials, one round per up period;
* **truth:** the ``wait`` backtest of the second half
  (:func:`~deepvm_core.job.backtest_replay.backtest`), its mean makespan.

The error of a model is ``(predicted - backtest) / backtest`` (NaN when the second half never
lets the job run: its backtest is infinite).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from deepvm_core.arrays import FloatArray
from deepvm_core.job.backtest import BacktestJob
from deepvm_core.job.backtest_replay import backtest
from deepvm_core.job.closed_form import segment_expectations, startup_wait_hours
from deepvm_core.job.forecast_renewal import renewal_makespans_of
from deepvm_core.market.trace import SpotTrace, TraceError
from deepvm_core.market.trace_stats import (
    down_run_lengths,
    pool_statistics,
    up_run_lengths,
    up_ticks,
)


@dataclass(frozen=True)
class ReferenceJob:
    """A job for comparing models: ``full_segments`` segments of ``segment_hours`` (τ + δ),
    a last one of ``last_segment_hours``, restart ``restart_hours``."""

    full_segments: int
    segment_hours: float
    last_segment_hours: float
    restart_hours: float


@dataclass(frozen=True)
class ModelCheck:
    """One pool: the first half's MTBI and W (hours), the closed form's and the renewal
    model's mean makespan from them, and the second half's backtest mean makespan (hours)."""

    mtbi_hours: float
    wait_hours: float
    availability: float
    closed_form_hours: float
    renewal_hours: float
    backtest_hours: float

    @property
    def closed_form_error(self) -> float:
        """(closed form - backtest) / backtest (NaN when the backtest is infinite)."""
        if not np.isfinite(self.backtest_hours):
            return float("nan")
        return self.closed_form_hours / self.backtest_hours - 1.0

    @property
    def renewal_error(self) -> float:
        """(renewal - backtest) / backtest (NaN when the backtest is infinite)."""
        if not np.isfinite(self.backtest_hours):
            return float("nan")
        return self.renewal_hours / self.backtest_hours - 1.0


def closed_form_makespan(job: ReferenceJob, mtbi_hours: float, wait_hours: float) -> float:
    """``S + K E0(s) + E0(s_last)`` with λ = 1 / MTBI (0 when MTBI is infinite) and the
    start-up wait ``S = π W`` (issue 25), hours."""
    lam = 0.0 if not np.isfinite(mtbi_hours) else 1.0 / mtbi_hours
    full = segment_expectations(job.segment_hours, lam, job.restart_hours, wait_hours)
    last = segment_expectations(job.last_segment_hours, lam, job.restart_hours, wait_hours)
    return float(startup_wait_hours(lam, wait_hours) + job.full_segments * full.makespan_hours
                 + last.makespan_hours)


def renewal_makespans(job: ReferenceJob, ups: FloatArray, downs: FloatArray,
                      availability: float, rng: np.random.Generator,
                      trials: int = 4000) -> FloatArray:
    """Makespans (hours) of ``trials`` runs of the empirical renewal model (module doc), by
    :func:`~deepvm_core.job.forecast_renewal.renewal_makespans_of` (a run still going after its
    round limit never finishes: infinite)."""
    if ups.size == 0:
        raise TraceError("trace", "no up period in the first half: nothing to resample")
    one = BacktestJob(np.array([job.full_segments]), np.array([[job.segment_hours]]),
                      np.array([[job.last_segment_hours]]), np.array([[job.restart_hours]]),
                      np.array([[1]]), np.array([[1.0]]), np.array([[0.0]]), np.array([[1.0]]))
    return renewal_makespans_of(ups, downs, availability, one, rng, trials)


def check_models(trace: SpotTrace, job: ReferenceJob, *, seed: int = 0,
                 starts: int = 200) -> ModelCheck:
    """The closed form and the renewal model from the first half of ``trace`` against the
    ``wait`` backtest of its second half (a cluster of one spot VM)."""
    half = trace.ticks // 2
    first = SpotTrace(trace.source + " (first half)", trace.gap_seconds, trace.counts[:half])
    second = SpotTrace(trace.source + " (second half)", trace.gap_seconds, trace.counts[half:])
    stats = pool_statistics(first, 1)
    up = up_ticks(first, 1)
    g = first.gap_hours
    ups = up_run_lengths(up).astype(np.float64) * g
    downs = down_run_lengths(up).astype(np.float64) * g
    renewal = renewal_makespans(job, ups, downs, stats.availability,
                                np.random.default_rng(seed))
    bt_job = BacktestJob(np.array([job.full_segments]), np.array([[job.segment_hours]]),
                         np.array([[job.last_segment_hours]]), np.array([[job.restart_hours]]),
                         np.array([[1]]), np.array([[1.0]]), np.array([[0.0]]),
                         np.array([[1.0]]))
    try:
        truth = float(backtest([second], bt_job, policy="wait", starts=starts)
                      .makespan_hours.mean())
    except TraceError:  # the second half is never up (or never holds a segment)
        truth = float("inf")
    return ModelCheck(mtbi_hours=stats.mtbi_hours, wait_hours=stats.mean_wait_hours,
                      availability=stats.availability,
                      closed_form_hours=closed_form_makespan(job, stats.mtbi_hours,
                                                             stats.mean_wait_hours),
                      renewal_hours=float(renewal.mean()),
                      backtest_hours=truth)
