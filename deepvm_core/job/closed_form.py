"""Exact expectations of makespan, interruptions and cost (``job-model.md``, "Exact
expectations"), vectorised over configurations.

The process: a segment of s hours (``τ + δ``, or the last segment's compute time) is retried
until one attempt runs s hours without an event; events come as a Poisson process of rate λ
per hour while the spot VMs are up. The first attempt of a segment starts right after a
checkpoint; every attempt after an event waits W for capacity, then restarts for R and runs s,
so it is ``R + s`` long. With ``c = R + s`` and ``q0 = 1 - e^{-λs}``:

* ``E1(s) = (e^{λc} - 1) (1/λ + W)``: expected time from the start of an attempt with a restart
  to the end of the segment;
* ``E0(s) = (1 - e^{-λs}) / λ + q0 (W + E1(s))``: expected wall time of the segment;
* ``F0(s) = q0 e^{λc}``: expected number of events in the segment;
* ``U0(s) = E0(s) - W F0(s) = (1 - e^{-λs}) / λ + q0 (e^{λc} - 1) / λ``: expected hours the spot
  VMs are up (billed).

**The start-up wait** (issue 25). The market alternates up periods, which end at rate λ, and
outages of mean W; a job started at a random time finds it inside an outage with the stationary
probability ``π = λW / (1 + λW)`` (= W / (MTBI + W), the share of time the market is down) and
then first waits the rest of that outage. Outages are exponential in this model (memoryless),
so the rest has mean W again: the expected start-up wait is ``S = π W``. It is billed like every
wait (the on-demand part only) and is no event; no restart follows it (nothing was lost).

Sums over the segments give the makespan ``T = S + Σ E0``, the events ``N = Σ F0`` and the cost
``C = P (T - N W - S) + P_od (N W + S) = P Σ U0 + P_od (N W + S)`` (hours, USD). Each
expectation is linear in the waits and the number of events does not depend on them, so the
formulas hold whatever the waits' distribution with mean W; the Monte Carlo draws them
exponential (:mod:`deepvm_core.job.montecarlo`). λ = 0 is exact (``E0 = s``, ``S = 0``,
``F0 = 0``); small λ s uses ``expm1`` through ``(1 - e^{-x}) / x`` and ``(e^x - 1) / x`` so
nothing cancels; huge λ s overflows to infinity, never to NaN.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from deepvm_core.arrays import FloatArray, IntArray
from deepvm_core.job.inputs import JobInputs
from deepvm_core.units import SECONDS_PER_HOUR


def _down_ratio(x: FloatArray) -> FloatArray:
    """``(1 - e^{-x}) / x`` for x >= 0 (1 at x = 0), without cancellation."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x > 0, -np.expm1(-x) / x, 1.0)


def _up_ratio(x: FloatArray) -> FloatArray:
    """``(e^x - 1) / x`` for x >= 0 (1 at x = 0); infinite when e^x overflows."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.where(x > 0, np.expm1(x) / x, 1.0)


@dataclass(frozen=True)
class SegmentExpectations:
    """Expectations for one segment of each configuration.

    Attributes:
        makespan_hours: E0(s), wall hours including failures, waits and restarts.
        restart_attempt_hours: E1(s), hours from the start of an attempt with a restart.
        interruptions: F0(s), expected events.
        up_hours: U0(s) = E0 - W F0, hours the spot VMs are up (billed at P).
    """

    makespan_hours: FloatArray
    restart_attempt_hours: FloatArray
    interruptions: FloatArray
    up_hours: FloatArray


def start_down_probability(rate_per_hour: npt.ArrayLike,
                           wait_hours: npt.ArrayLike) -> FloatArray:
    """π = λW / (1 + λW): the probability that a job started at a random time finds the market
    in an outage (0 when λ or W is 0; 1 at λ = ∞ with W > 0)."""
    lam = np.asarray(rate_per_hour, dtype=np.float64)
    w = np.asarray(wait_hours, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        x = np.where((lam > 0) & (w > 0), lam * w, 0.0)
        return np.asarray(np.where(np.isinf(x), 1.0, x / (1.0 + x)), dtype=np.float64)


def startup_wait_hours(rate_per_hour: npt.ArrayLike, wait_hours: npt.ArrayLike) -> FloatArray:
    """S = π W: the expected wait before a job's first attempt, hours (module docstring)."""
    w = np.asarray(wait_hours, dtype=np.float64)
    return np.asarray(start_down_probability(rate_per_hour, w) * w, dtype=np.float64)


def segment_expectations(segment_hours: npt.ArrayLike, rate_per_hour: npt.ArrayLike,
                         restart_hours: npt.ArrayLike,
                         wait_hours: npt.ArrayLike) -> SegmentExpectations:
    """E0, E1, F0 and U0 of a segment of ``segment_hours`` (formulas in the module docstring).

    All arguments broadcast; ``rate_per_hour`` λ >= 0 (0: nothing is interrupted).
    """
    s = np.asarray(segment_hours, dtype=np.float64)
    lam = np.asarray(rate_per_hour, dtype=np.float64)
    r = np.asarray(restart_hours, dtype=np.float64)
    w = np.asarray(wait_hours, dtype=np.float64)
    c = r + s
    with np.errstate(over="ignore", invalid="ignore"):
        q0 = -np.expm1(-lam * s)
        growth = np.expm1(lam * c)  # e^{λc} - 1 (mean failed restart attempts per failure)
        first = s * _down_ratio(lam * s)  # (1 - e^{-λs}) / λ, s at λ = 0
        loop_up = c * _up_ratio(lam * c)  # (e^{λc} - 1) / λ, c at λ = 0
        e1 = loop_up + np.where(w > 0, growth * w, 0.0)
        fails = q0 > 0
        e0 = first + np.where(fails, q0 * (w + e1), 0.0)
        f0 = np.where(fails, q0 * (growth + 1.0), 0.0)
        u0 = first + np.where(fails, q0 * loop_up, 0.0)
    return SegmentExpectations(np.asarray(e0, dtype=np.float64),
                               np.asarray(e1, dtype=np.float64),
                               np.asarray(f0, dtype=np.float64),
                               np.asarray(u0, dtype=np.float64))


@dataclass(frozen=True)
class JobEstimates:
    """Expected outcome of the job on every configuration (1-D arrays of one length).

    Attributes:
        epoch_seconds: t_g(n), seconds per epoch.
        compute_hours: T_c, compute hours without checkpoints or failures.
        checkpoint_stall_seconds: δ, seconds per checkpoint.
        checkpoint_interval_seconds: τ, compute seconds between checkpoints.
        checkpoints: checkpoints taken (segments - 1).
        expected_makespan_hours: T = S + Σ E0, expected wall hours from start to end.
        expected_cost_usd: C = P (T - N W - S) + P_od (N W + S), expected USD.
        expected_interruptions: N, expected interruption events.
        expected_startup_wait_hours: S = π W, the expected wait before the first attempt.
    """

    epoch_seconds: FloatArray
    compute_hours: FloatArray
    checkpoint_stall_seconds: FloatArray
    checkpoint_interval_seconds: FloatArray
    checkpoints: IntArray
    expected_makespan_hours: FloatArray
    expected_cost_usd: FloatArray
    expected_interruptions: FloatArray
    expected_startup_wait_hours: FloatArray | None = None


def expected_jobs(plan: JobInputs) -> JobEstimates:
    """Closed-form T, N and C of every configuration of ``plan`` (start-up wait included)."""
    lam, r, w = plan.interruption_rate_per_hour, plan.restart_hours, plan.wait_hours
    full = segment_expectations(plan.full_segment_seconds / SECONDS_PER_HOUR, lam, r, w)
    last = segment_expectations(plan.last_segment_seconds / SECONDS_PER_HOUR, lam, r, w)
    k = plan.checkpoints.astype(np.float64)
    has_full = plan.checkpoints > 0
    with np.errstate(invalid="ignore", over="ignore"):
        makespan = np.where(has_full, k * full.makespan_hours, 0.0) + last.makespan_hours
        events = np.where(has_full, k * full.interruptions, 0.0) + last.interruptions
        up = np.where(has_full, k * full.up_hours, 0.0) + last.up_hours
        start = startup_wait_hours(lam, w)
        makespan = makespan + start
        waited = np.where(w > 0, events * w, 0.0) + start
        cost = (np.where(plan.price_usd_per_hour > 0, plan.price_usd_per_hour * up, 0.0)
                + np.where(plan.on_demand_usd_per_hour > 0,
                           plan.on_demand_usd_per_hour * waited, 0.0))
    return JobEstimates(
        epoch_seconds=plan.epoch_seconds,
        compute_hours=plan.compute_seconds / SECONDS_PER_HOUR,
        checkpoint_stall_seconds=plan.checkpoint_stall_seconds,
        checkpoint_interval_seconds=plan.checkpoint_interval_seconds,
        checkpoints=plan.checkpoints,
        expected_makespan_hours=np.asarray(makespan, dtype=np.float64),
        expected_cost_usd=np.asarray(cost, dtype=np.float64),
        expected_interruptions=np.asarray(events, dtype=np.float64),
        expected_startup_wait_hours=np.asarray(start, dtype=np.float64),
    )
