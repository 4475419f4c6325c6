"""One configuration's job estimate: the closed form's expectations, the on-demand baseline,
the Monte Carlo (or backtest) statistics, and why a cluster is not expected to finish, read from
per-candidate arrays (:func:`estimate_at`). The job plan (:mod:`deepvm_core.job.result`) and a
recommendation's job estimate (:mod:`deepvm_core.pipeline.recommend_job`) both read their
estimates here. Pure data; no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from deepvm_core.arrays import BoolArray, FloatArray
from deepvm_core.job.baseline import on_demand_baseline_at
from deepvm_core.job.closed_form import JobEstimates
from deepvm_core.job.finish import finishes, unfinished_reason
from deepvm_core.job.inputs import JobInputs
from deepvm_core.job.odds import NO_SPOT, trace_odds
from deepvm_core.model import Configuration
from deepvm_core.search.tables import CandidateTable
from deepvm_core.units import SECONDS_PER_HOUR

__all__ = ["EstimateParts", "MonteCarloEstimate", "PlanArrays", "PlanEstimate",
           "ReplayEstimates", "estimate_at", "unfinished_reason_of"]


@dataclass(frozen=True)
class MonteCarloEstimate:
    """Monte Carlo statistics of one configuration.

    Attributes:
        trials: runs simulated.
        mean_makespan_hours, makespan_hours_p10, makespan_hours_p50, makespan_hours_p90: the
            sample mean and percentiles of the makespan, hours.
        mean_cost_usd, cost_usd_p10, cost_usd_p50, cost_usd_p90: the same for the cost, USD.
        mean_interruptions: mean interruption events per run.
        deadline_probability: share of runs done within the deadline, or ``None`` without one.
    """

    trials: int
    mean_makespan_hours: float
    makespan_hours_p10: float
    makespan_hours_p50: float
    makespan_hours_p90: float
    mean_cost_usd: float
    cost_usd_p10: float
    cost_usd_p50: float
    cost_usd_p90: float
    mean_interruptions: float
    deadline_probability: float | None


@dataclass(frozen=True)
class PlanEstimate:
    """One configuration and what the job costs and takes on it.

    Attributes:
        index: its position in the candidates (:attr:`~deepvm_core.job.result.JobPlanResult.
            candidates`) (and in every per-candidate
            array of the result).
        configuration: the cluster.
        epoch_seconds: t_g(n), seconds per epoch.
        compute_hours: T_c, compute hours without checkpoints or failures.
        checkpoint_stall_seconds: δ, seconds one checkpoint stalls training.
        checkpoint_interval_seconds: τ, compute seconds between checkpoints (infinite: one
            segment, nothing is interrupted).
        checkpoints: checkpoints taken.
        expected_makespan_hours: T, expected wall hours (closed form).
        expected_cost_usd: C, expected USD (closed form).
        expected_interruptions: N, expected interruption events (closed form).
        within_limits: T <= the deadline and C <= the budget (True when none is given);
            False when the cluster does not finish.
        monte_carlo: the Monte Carlo statistics, or ``None`` (trials 0, or not simulated).
        evaluated_by: ``closed_form``, or ``backtest`` (``renewal``, ``trace_closed_form``)
            when spot traces of its GPU type gave T, C and the percentiles (``traces.md``;
            :class:`ReplayEstimates`).
        pools: the pools replayed, in failover order (``TYPE@ZONE``; empty: closed form).
        recovery: the recovery policy of the backtest (``wait``, ``failover``, ``deadline``).
        on_demand_makespan_hours: T_od, the same cluster with every VM on demand (no
            interruptions), hours (:mod:`deepvm_core.job.baseline`).
        on_demand_cost_usd: C_od, its cost, USD.
        does_not_finish: ``None``, or why the cluster is not expected to finish
            (:mod:`deepvm_core.job.finish`), or why it cannot run on the pools given (a
            cluster larger than a count trace's largest count, or an attempt longer than the
            pools ever stay up); its T, C and N are then not
            meaningful numbers and are never shown as such.
        odds: where the percentiles and expectations come from, in one sentence
            (:mod:`deepvm_core.job.odds`): a bucket's assumptions or the traces.
    """

    index: int
    configuration: Configuration
    epoch_seconds: float
    compute_hours: float
    checkpoint_stall_seconds: float
    checkpoint_interval_seconds: float
    checkpoints: int
    expected_makespan_hours: float
    expected_cost_usd: float
    expected_interruptions: float
    within_limits: bool
    monte_carlo: MonteCarloEstimate | None
    on_demand_makespan_hours: float = float("nan")
    on_demand_cost_usd: float = float("nan")
    does_not_finish: str | None = None
    evaluated_by: str = "closed_form"
    pools: tuple[str, ...] = ()
    recovery: str | None = None
    odds: str = ""

    def describe(self) -> str:
        """The configuration in one line (``TR: 17 x g4dn.xlarge spot + 1 x c5.xlarge, ...``)."""
        return self.configuration.describe()


def unfinished_reason_of(estimates: JobEstimates, plan: JobInputs | None, index: int) -> str | None:
    """Why candidate ``index`` is not expected to finish, or ``None`` when it finishes."""
    if bool(finishes(estimates.expected_makespan_hours[index])):
        return None
    compute = float(estimates.compute_hours[index])
    if plan is None:
        return unfinished_reason(mtbi_hours=None, restart_hours=0.0, segment_hours=0.0,
                                 compute_hours=compute)
    rate = float(plan.interruption_rate_per_hour[index])
    full = int(plan.checkpoints[index]) > 0
    segment = float(plan.full_segment_seconds[index] if full
                    else plan.last_segment_seconds[index]) / SECONDS_PER_HOUR
    return unfinished_reason(mtbi_hours=(1.0 / rate if math.isfinite(rate) else 0.0) if rate > 0
                             else None,
                             restart_hours=float(plan.restart_hours[index]),
                             segment_hours=segment, compute_hours=compute)


class PlanArrays(Protocol):
    """The per-candidate arrays an estimate is read from: a :class:`~deepvm_core.job.result.
    JobPlanResult`, or :class:`EstimateParts` while the result is being built."""

    @property
    def estimates(self) -> JobEstimates: ...
    @property
    def candidates(self) -> CandidateTable: ...
    @property
    def within_limits(self) -> BoolArray: ...
    @property
    def job_plan(self) -> JobInputs | None: ...
    @property
    def replay(self) -> ReplayEstimates | None: ...
    @property
    def odds_by_gpu(self) -> Mapping[str, str]: ...


def estimate_at(result: PlanArrays, index: int,
                monte_carlo: MonteCarloEstimate | None) -> PlanEstimate:
    """The estimate of candidate ``index`` from the per-candidate arrays."""
    est, table = result.estimates, result.candidates
    od_hours, od_cost = on_demand_baseline_at(table, est, index)
    replay = result.replay
    refused = None if replay is None else replay.refusal(index)
    reason = refused or unfinished_reason_of(est, result.job_plan, index)
    hit = replay is not None and bool(replay.evaluated[index])
    config = table.configuration(index)
    odds = (replay.odds(index) if hit and replay is not None
            else result.odds_by_gpu.get(config.gpu, "") if config.gpu_spot else NO_SPOT)
    return PlanEstimate(
        index=index,
        configuration=config,
        epoch_seconds=float(est.epoch_seconds[index]),
        compute_hours=float(est.compute_hours[index]),
        checkpoint_stall_seconds=float(est.checkpoint_stall_seconds[index]),
        checkpoint_interval_seconds=float(est.checkpoint_interval_seconds[index]),
        checkpoints=int(est.checkpoints[index]),
        expected_makespan_hours=float(est.expected_makespan_hours[index]),
        expected_cost_usd=float(est.expected_cost_usd[index]),
        expected_interruptions=float(est.expected_interruptions[index]),
        within_limits=bool(result.within_limits[index]),
        monte_carlo=None if reason else monte_carlo,
        does_not_finish=reason,
        evaluated_by=replay.evaluated_by if hit and replay is not None else "closed_form",
        pools=replay.pools[index] if hit and replay is not None else (),
        recovery=replay.recovery if hit and replay is not None else None,
        on_demand_makespan_hours=od_hours,
        on_demand_cost_usd=od_cost,
        odds=odds,
    )


@dataclass(frozen=True)
class ReplayEstimates:
    """Backtests of some candidates on spot traces (``traces.md``), per candidate (1-D arrays
    of the candidates' length, NaN where not evaluated); built by
    :func:`deepvm_core.pipeline.replay_hook.backtest_candidates`.

    Attributes:
        recovery: the recovery policy. runs: start times per candidate.
        evaluated: True where a backtest gave the numbers.
        pools: per candidate, the pool names in failover order (empty: not evaluated).
        mean_makespan_hours, makespan_hours_p10, makespan_hours_p50, makespan_hours_p90: hours.
        mean_cost_usd, cost_usd_p10, cost_usd_p50, cost_usd_p90: USD.
        mean_interruptions: per run. deadline_met: share of runs within the deadline, or
            ``None`` without one.
        model: ``replay`` (backtests), ``renewal`` or ``closed-form`` (from the traces'
            statistics), issue 25.
        window_days: the recent window of the traces used, days, or ``None`` (whole traces).
        refusals: per candidate, why it cannot run on its type's pools (a cluster larger than
            every count trace allows, or an attempt longer than any pool stays up), or
            ``None``; empty: none refused.
    """

    recovery: str
    runs: int
    evaluated: BoolArray
    pools: tuple[tuple[str, ...], ...]
    mean_makespan_hours: FloatArray
    makespan_hours_p10: FloatArray
    makespan_hours_p50: FloatArray
    makespan_hours_p90: FloatArray
    mean_cost_usd: FloatArray
    cost_usd_p10: FloatArray
    cost_usd_p50: FloatArray
    cost_usd_p90: FloatArray
    mean_interruptions: FloatArray
    deadline_met: FloatArray | None
    model: str = "replay"
    window_days: float | None = None
    refusals: tuple[str | None, ...] = ()

    @property
    def evaluated_by(self) -> str:
        """:attr:`PlanEstimate.evaluated_by` of the evaluated candidates: ``backtest``,
        ``renewal`` or ``trace_closed_form``."""
        return {"replay": "backtest", "renewal": "renewal"}.get(self.model,
                                                                "trace_closed_form")

    def refusal(self, index: int) -> str | None:
        """Why candidate ``index`` cannot run on its pools, or ``None``."""
        return self.refusals[index] if self.refusals else None

    def odds(self, index: int) -> str:
        """Where candidate ``index``'s numbers come from (:func:`trace_odds`)."""
        return trace_odds(self.model, self.pools[index], self.window_days)

    def monte_carlo(self, index: int) -> MonteCarloEstimate:
        """Candidate ``index``'s backtest in the form of Monte Carlo statistics."""
        met = None if self.deadline_met is None else float(self.deadline_met[index])
        return MonteCarloEstimate(
            trials=self.runs, mean_makespan_hours=float(self.mean_makespan_hours[index]),
            makespan_hours_p10=float(self.makespan_hours_p10[index]),
            makespan_hours_p50=float(self.makespan_hours_p50[index]),
            makespan_hours_p90=float(self.makespan_hours_p90[index]),
            mean_cost_usd=float(self.mean_cost_usd[index]),
            cost_usd_p10=float(self.cost_usd_p10[index]),
            cost_usd_p50=float(self.cost_usd_p50[index]),
            cost_usd_p90=float(self.cost_usd_p90[index]),
            mean_interruptions=float(self.mean_interruptions[index]),
            deadline_probability=met)


@dataclass(frozen=True)
class EstimateParts:
    """What :func:`estimate_at` reads before the result exists (the plan, a recommendation's
    job estimate)."""

    estimates: JobEstimates
    candidates: CandidateTable
    deadline_hours: float | None
    budget_usd: float | None
    within_limits: BoolArray
    job_plan: JobInputs | None = None
    replay: ReplayEstimates | None = None
    odds_by_gpu: Mapping[str, str] = field(default_factory=dict)
