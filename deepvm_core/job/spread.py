"""Bands that include the uncertainty of MTBI and W themselves (issue 25).

The Monte Carlo of :mod:`deepvm_core.job.montecarlo` draws runs of one market with known λ and
W; its P10-P90 says how runs vary when the market is exactly as assumed. The market is not
known that well: the development traces of one Spot Advisor bucket vary 6x either way from week
to week, and a trace's own recent days differ from its next week. So a plan's band is a
**mixture**: each configuration has S scenarios ``(λ_s, W_s)``, equally likely, and its runs
are drawn ``ceil(trials / S)`` per scenario (the reported trials are that times S).

* **From a bucket** (:func:`bucket_scenarios`): the bucket's spread
  (:data:`~deepvm_core.market.mtbi.BUCKET_SPREAD`, ten (MTBI factor, W factor) pairs from the
  development traces) on the types whose MTBI or W comes from a bucket; a value the user gave
  keeps factor 1 (it is theirs to know).
* **From a trace**, the trace models build their own scenarios from sub-windows of the recent
  window (:mod:`deepvm_core.job.forecast_scenarios`).

The closed form (the expected values of a plan) keeps the central λ and W; the mixture changes
the percentiles (and the Monte Carlo mean, which is the mixture's).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

import numpy as np
import numpy.typing as npt

from deepvm_core.arrays import FloatArray
from deepvm_core.job.inputs import JobInputs
from deepvm_core.job.montecarlo import (
    DEFAULT_TRIALS,
    JobSamples,
    MonteCarloSummary,
    check_trials,
    sample_jobs,
    summarize,
)
from deepvm_core.market.mtbi import BUCKET_SPREAD, MtbiSource

#: The sources of an MTBI or W that the bucket's spread applies to.
FROM_BUCKET: tuple[MtbiSource, ...] = ("advisor", "default")


def bucket_scenarios(plan: JobInputs, mtbi_from_bucket: npt.ArrayLike,
                     wait_from_bucket: npt.ArrayLike,
                     spread: Sequence[tuple[float, float]] = BUCKET_SPREAD,
                     ) -> tuple[FloatArray, FloatArray]:
    """Per configuration of ``plan``, the S = len(spread) scenarios ``(λ / f_m, W f_w)``; factor
    1 where the MTBI (``mtbi_from_bucket`` False) or W is the user's. Shapes (configurations,
    S)."""
    f = np.asarray(spread, dtype=np.float64)
    m = np.where(np.asarray(mtbi_from_bucket, dtype=bool)[:, None], f[None, :, 0], 1.0)
    w = np.where(np.asarray(wait_from_bucket, dtype=bool)[:, None], f[None, :, 1], 1.0)
    rates = plan.interruption_rate_per_hour[:, None] / m
    waits = plan.wait_hours[:, None] * w
    return np.asarray(rates, dtype=np.float64), np.asarray(waits, dtype=np.float64)


def scenario_samples(plan: JobInputs, rates: FloatArray, waits: FloatArray,
                     rng: np.random.Generator, per_scenario: int) -> JobSamples:
    """Draws of every configuration of ``plan`` under its scenarios (``rates``, ``waits`` of
    shape (configurations, S)), ``per_scenario`` runs each: arrays (configurations,
    S x per_scenario), scenario by scenario."""
    count = rates.shape[1]
    expanded = JobInputs(**{name: np.repeat(getattr(plan, name), count)
                            for name in plan.__dataclass_fields__
                            if name not in ("interruption_rate_per_hour", "wait_hours")},
                         interruption_rate_per_hour=rates.ravel(), wait_hours=waits.ravel())
    d = sample_jobs(expanded, rng, per_scenario)
    shape = (plan.size, count * per_scenario)
    return JobSamples(d.makespan_hours.reshape(shape), d.cost_usd.reshape(shape),
                      d.interruptions.reshape(shape))


def simulate_scenarios(plan: JobInputs, rates: FloatArray, waits: FloatArray,
                       rng: np.random.Generator, *, trials: int = DEFAULT_TRIALS,
                       deadline_hours: float | None = None,
                       max_cells: int = 2_000_000) -> MonteCarloSummary:
    """Monte Carlo statistics of the mixture (module docstring): ``ceil(trials / S)`` runs per
    scenario; :attr:`MonteCarloSummary.trials` is that times S.

    Raises:
        InputError: bad ``trials`` or deadline (:func:`check_trials`).
        ValueError: scenario arrays whose shape is not (configurations, S).
    """
    check_trials(trials, deadline_hours)
    rates = np.asarray(rates, dtype=np.float64)
    waits = np.asarray(waits, dtype=np.float64)
    if rates.ndim != 2 or rates.shape != waits.shape or rates.shape[0] != plan.size:
        raise ValueError(f"scenarios of shape {rates.shape} and {waits.shape} for "
                         f"{plan.size} configurations")
    count = rates.shape[1]
    per = math.ceil(trials / count)
    step = max(1, max_cells // (per * count))

    def chunks() -> Iterator[JobSamples]:
        for start in range(0, plan.size, step):
            rows = slice(start, start + step)
            part = JobInputs(**{name: getattr(plan, name)[rows]
                                for name in plan.__dataclass_fields__})
            yield scenario_samples(part, rates[rows], waits[rows], rng, per)

    return summarize(chunks(), per * count, deadline_hours)
