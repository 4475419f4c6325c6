"""Seeded Monte Carlo of the job process (``job-model.md``, "Monte Carlo"), vectorised over
trials and configurations.

The process is the closed form's (:mod:`deepvm_core.job.closed_form`): a segment of s hours is
retried until an attempt runs without an event; events come at rate λ while the spot VMs are
up; after an event the elapsed time is lost, the cluster waits for capacity, then every retry
is ``R + s`` long. Outages are exponential with mean W (the model of the closed form's
start-up wait): each wait after an event is one, and a run starts inside an outage with
probability ``π = λW / (1 + λW)`` and then first waits one more (no restart after it).

Instead of looping over attempt rounds (unbounded when λ s is large), the sampler draws the
outcome of a whole group of K identical segments at once, which is the same distribution:

* first attempts that fail: ``F ~ Binomial(K, 1 - e^{-λs})``;
* failed attempts with a restart: the failures before success of each failed segment are
  geometric with success probability ``e^{-λ(R+s)}``, so their sum over F segments is
  ``G ~ NegativeBinomial(F, e^{-λ(R+s)})``, drawn as ``Poisson(Gamma(F, e^{λ(R+s)} - 1))``;
* each failed attempt's elapsed time is an exponential of rate λ truncated at its length
  (s or R + s); the sum of n of them is drawn exactly for n < :data:`EXACT_SUM_LIMIT` and as a
  gamma with the exact mean and variance above (by then the sum is close to normal);
* time up (billed at P) ``U = K s + F R + (elapsed times of failed attempts)``; events
  ``F + G``; waits ``V ~ Gamma(F + G, W)`` (the sum of that many exponentials of mean W) plus
  the start-up wait ``S`` (``Exp(W)`` with probability π, else 0); makespan ``U + V + S``;
  cost ``P U + P_od (V + S)``.

A job has at most two groups (the full segments τ + δ and the last one), so a run costs a few
array operations whatever λ is; Poisson means above 1e12 are used as the count itself (relative
error 1e-6) and infinities propagate. The mean of every quantity is exact; only the shape of a
sum of many truncated exponentials is approximated.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, fields
from typing import Final

import numpy as np

from deepvm_core.arrays import FloatArray, IntArray
from deepvm_core.errors import InputError
from deepvm_core.job.closed_form import start_down_probability
from deepvm_core.job.inputs import JobInputs
from deepvm_core.units import SECONDS_PER_HOUR

#: Sums of fewer truncated exponentials than this are drawn exactly, one draw each.
EXACT_SUM_LIMIT = 32
#: Poisson draws with a larger mean are replaced by the mean (relative error < 1e-6).
_POISSON_MEAN_LIMIT = 1e12
#: Percentiles reported.
PERCENTILES = (10.0, 50.0, 90.0)

#: Monte Carlo runs per configuration unless told (:func:`simulate_jobs`, ``plan_job``).
DEFAULT_TRIALS = 10_000


def _truncated_exp_moments(x: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Mean and variance of Exp(λ) truncated at c, divided by c and c², as functions of
    ``x = λ c``: ``1/x - 1/(e^x - 1)`` and ``1/x² - e^x / (e^x - 1)²`` (series below 1e-2)."""
    small = x < 1e-2
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        mean = np.where(small, 0.5 - x / 12.0 + x**3 / 720.0,
                        1.0 / x - 1.0 / np.expm1(x))
        var = np.where(small, 1.0 / 12.0 - x**2 / 240.0 + x**4 / 6048.0,
                       1.0 / x**2 - 1.0 / (np.expm1(x) * -np.expm1(-x)))
    return mean, var


def _truncated_exp_sums(rng: np.random.Generator, counts: FloatArray, length: FloatArray,
                        rate: FloatArray) -> FloatArray:
    """Sum of ``counts`` exponentials of rate ``rate`` truncated at ``length`` (elementwise)."""
    flat_n, flat_c, flat_l = (a.ravel() for a in np.broadcast_arrays(counts, length, rate))
    out = np.zeros(flat_n.size, dtype=np.float64)
    small = (flat_n > 0) & (flat_n < EXACT_SUM_LIMIT)
    if np.any(small):
        where = np.flatnonzero(small)
        owner = np.repeat(where, flat_n[where].astype(np.int64))
        x = flat_l[owner] * flat_c[owner]
        u = rng.random(owner.size)
        # inverse CDF of Exp(λ) truncated at c: -log(1 - u (1 - e^{-x})) / λ, scaled by c / x
        with np.errstate(divide="ignore", invalid="ignore"):
            frac = np.where(x > 0, -np.log1p(u * np.expm1(-x)) / x, u)
        out += np.bincount(owner, weights=flat_c[owner] * frac, minlength=flat_n.size)
    big = flat_n >= EXACT_SUM_LIMIT
    if np.any(big):
        n, c = flat_n[big], flat_c[big]
        m, v = _truncated_exp_moments(flat_l[big] * c)
        finite = np.isfinite(n)
        shape = np.where(finite, n * m * m / v, 1.0)
        draws = rng.gamma(shape, np.where(finite, c * v / m, 1.0))
        out[big] = np.where(finite, draws, np.inf)
    return out.reshape(np.shape(counts))


def _sample_group(rng: np.random.Generator, segments: IntArray,
                  segment_hours: FloatArray, rate: FloatArray, restart: FloatArray,
                  trials: int) -> tuple[FloatArray, FloatArray]:
    """Up hours and events of ``segments`` identical segments, shape (configurations, trials).

    Arguments are per configuration, shape (configurations, 1)."""
    shape = (segments.shape[0], trials)
    with np.errstate(over="ignore"):
        q0 = -np.expm1(-rate * segment_hours)
        growth = np.expm1(rate * (restart + segment_hours))
    first_fail = rng.binomial(np.broadcast_to(segments, shape),
                              np.broadcast_to(q0, shape)).astype(np.float64)
    loops = first_fail > 0
    growth_b = np.broadcast_to(growth, shape)
    mixing = np.zeros(shape)
    finite_growth = np.isfinite(growth_b)
    ok = loops & finite_growth
    if np.any(ok):
        mixing[ok] = rng.gamma(first_fail[ok], growth_b[ok])
    mixing[loops & ~finite_growth] = np.inf
    retries = mixing.copy()
    draw = (mixing > 0) & (mixing < _POISSON_MEAN_LIMIT)
    if np.any(draw):
        retries[draw] = rng.poisson(mixing[draw])
    rate_b = np.broadcast_to(rate, shape)
    up = (segments * segment_hours + first_fail * restart
          + _truncated_exp_sums(rng, first_fail, np.broadcast_to(segment_hours, shape), rate_b)
          + _truncated_exp_sums(rng, retries, np.broadcast_to(restart + segment_hours, shape),
                                rate_b))
    return up, first_fail + retries


def _waits(rng: np.random.Generator, events: FloatArray, wait: FloatArray) -> FloatArray:
    """The sum of ``events`` exponential waits of mean ``wait`` (elementwise): a gamma draw;
    0 without events or with W = 0, infinite with infinite events."""
    shape = np.broadcast_shapes(events.shape, wait.shape)
    n = np.broadcast_to(events, shape)
    w = np.broadcast_to(wait, shape)
    out = np.zeros(shape)
    draw = (n > 0) & (w > 0)
    finite = draw & np.isfinite(n)
    if np.any(finite):
        out[finite] = rng.gamma(n[finite], w[finite])
    out[draw & ~np.isfinite(n)] = np.inf
    return out


def _startup_waits(rng: np.random.Generator, rate: FloatArray, wait: FloatArray,
                   trials: int) -> FloatArray:
    """Per run, the wait before the first attempt: ``Exp(W)`` with probability
    ``π = λW / (1 + λW)``, else 0; shape (configurations, trials)."""
    pi = start_down_probability(rate, wait)
    shape = (pi.shape[0], trials)
    down = rng.random(shape) < pi
    w = np.broadcast_to(wait, shape)
    out = np.zeros(shape)
    if np.any(down):
        out[down] = rng.exponential(w[down])
    return out


@dataclass(frozen=True)
class JobSamples:
    """Raw Monte Carlo draws, shape (configurations, trials).

    Attributes:
        makespan_hours: wall hours of each trial.
        cost_usd: USD of each trial, ``P U + P_od (waits)``.
        interruptions: events of each trial.
    """

    makespan_hours: FloatArray
    cost_usd: FloatArray
    interruptions: FloatArray


def sample_jobs(plan: JobInputs, rng: np.random.Generator, trials: int) -> JobSamples:
    """Draw ``trials`` runs of every configuration of ``plan`` with ``rng``."""
    col = {name: getattr(plan, name)[:, None] for name in (
        "interruption_rate_per_hour", "restart_hours", "wait_hours", "price_usd_per_hour",
        "on_demand_usd_per_hour")}
    rate, restart, wait = (col["interruption_rate_per_hour"], col["restart_hours"],
                           col["wait_hours"])
    full_up, full_events = _sample_group(
        rng, plan.checkpoints[:, None], plan.full_segment_seconds[:, None] / SECONDS_PER_HOUR,
        rate, restart, trials)
    last_up, last_events = _sample_group(
        rng, np.ones((plan.size, 1), dtype=np.int64),
        plan.last_segment_seconds[:, None] / SECONDS_PER_HOUR, rate, restart, trials)
    up = full_up + last_up
    events = full_events + last_events
    waited = _waits(rng, events, wait) + _startup_waits(rng, rate, wait, trials)
    with np.errstate(invalid="ignore"):
        cost = (np.where(col["price_usd_per_hour"] > 0, col["price_usd_per_hour"] * up, 0.0)
                + np.where(col["on_demand_usd_per_hour"] > 0,
                           col["on_demand_usd_per_hour"] * waited, 0.0))
    return JobSamples(up + waited, cost, events)


@dataclass(frozen=True)
class MonteCarloSummary:
    """Monte Carlo statistics per configuration (1-D arrays of one length).

    Attributes:
        trials: runs per configuration.
        mean_makespan_hours, makespan_std_error_hours: sample mean of T and its standard error.
        makespan_hours_p10, makespan_hours_p50, makespan_hours_p90: percentiles of T.
        mean_cost_usd, cost_std_error_usd: sample mean of C and its standard error.
        cost_usd_p10, cost_usd_p50, cost_usd_p90: percentiles of C.
        mean_interruptions, interruptions_std_error: sample mean of N and its standard error.
        deadline_hours: the deadline asked for, or ``None``.
        deadline_probability: share of runs with T <= deadline, or ``None``.
    """

    trials: int
    mean_makespan_hours: FloatArray
    makespan_std_error_hours: FloatArray
    makespan_hours_p10: FloatArray
    makespan_hours_p50: FloatArray
    makespan_hours_p90: FloatArray
    mean_cost_usd: FloatArray
    cost_std_error_usd: FloatArray
    cost_usd_p10: FloatArray
    cost_usd_p50: FloatArray
    cost_usd_p90: FloatArray
    mean_interruptions: FloatArray
    interruptions_std_error: FloatArray
    deadline_hours: float | None
    deadline_probability: FloatArray | None


#: Per sampled quantity of :class:`JobSamples`: the fields of :class:`MonteCarloSummary` that
#: hold its mean, its standard error and (``<name>_p10``, ``_p50``, ``_p90``) its percentiles
#: (``None``: none kept).
_STATISTICS: Final = (
    ("makespan_hours", "mean_makespan_hours", "makespan_std_error_hours", "makespan_hours"),
    ("cost_usd", "mean_cost_usd", "cost_std_error_usd", "cost_usd"),
    ("interruptions", "mean_interruptions", "interruptions_std_error", None),
)


def _mean_and_error(x: FloatArray) -> tuple[FloatArray, FloatArray]:
    with np.errstate(invalid="ignore", over="ignore"):
        mean = x.mean(axis=1)
        if x.shape[1] < 2:
            return mean, np.full(x.shape[0], np.nan)
        return mean, x.std(axis=1, ddof=1) / np.sqrt(x.shape[1])


def check_trials(trials: object, deadline_hours: object) -> None:
    """The checks of :func:`simulate_jobs`' ``trials`` and ``deadline_hours``.

    Raises:
        InputError: ``trials`` < 1 or a deadline that is not a number >= 0.
    """
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
        raise InputError("trials", trials, "must be a whole number >= 1")
    if deadline_hours is not None and (
            isinstance(deadline_hours, bool) or not isinstance(deadline_hours, (int, float))
            or not deadline_hours >= 0):
        raise InputError("deadline_hours", deadline_hours, "must be a number >= 0 or None")


def simulate_jobs(plan: JobInputs, rng: np.random.Generator, *, trials: int = DEFAULT_TRIALS,
                  deadline_hours: float | None = None,
                  max_cells: int = 2_000_000) -> MonteCarloSummary:
    """Monte Carlo statistics of every configuration of ``plan`` (``trials`` runs each).

    ``rng`` is the caller's seeded generator (``np.random.default_rng(seed)``): the same plan,
    trials and generator state give the same numbers. Configurations are processed in chunks
    of at most ``max_cells`` draws per array.

    Raises:
        InputError: ``trials`` < 1 or a deadline that is not a number >= 0.
    """
    check_trials(trials, deadline_hours)
    step = max(1, max_cells // trials)

    def chunks() -> Iterator[JobSamples]:
        for start in range(0, plan.size, step):
            part = JobInputs(**{name: getattr(plan, name)[start:start + step]
                              for name in plan.__dataclass_fields__})
            yield sample_jobs(part, rng, trials)

    return summarize(chunks(), trials, deadline_hours)


def summarize(draws: Iterable[JobSamples], trials: int,
              deadline_hours: float | None) -> MonteCarloSummary:
    """The statistics of chunks of draws (configurations in order, ``trials`` runs each)."""
    stats: dict[str, list[FloatArray]] = {}

    def keep(name: str, value: FloatArray) -> None:
        stats.setdefault(name, []).append(value)

    for chunk in draws:
        for quantity, mean_field, error_field, percentile_field in _STATISTICS:
            x = getattr(chunk, quantity)
            mean, error = _mean_and_error(x)
            keep(mean_field, mean)
            keep(error_field, error)
            if percentile_field is not None:
                with np.errstate(invalid="ignore"):  # inf - inf between infinite draws
                    quantiles = np.percentile(x, PERCENTILES, axis=1)
                for p, q in zip(PERCENTILES, quantiles, strict=True):
                    keep(f"{percentile_field}_p{p:.0f}", q)
        if deadline_hours is not None:
            keep("deadline_probability", np.mean(chunk.makespan_hours <= deadline_hours, axis=1))

    def joined(name: str) -> FloatArray:
        parts = stats.get(name, [])
        return np.concatenate(parts) if parts else np.empty(0)

    arrays = [f.name for f in fields(MonteCarloSummary)
              if f.name not in ("trials", "deadline_hours", "deadline_probability")]
    return MonteCarloSummary(
        trials=trials, **{name: joined(name) for name in arrays},
        deadline_hours=None if deadline_hours is None else float(deadline_hours),
        deadline_probability=None if deadline_hours is None else joined("deadline_probability"),
    )
