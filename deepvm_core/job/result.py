"""The job planner's result objects (:func:`deepvm_core.pipeline.plan.plan_job` builds them):
one configuration's estimate, the paper's policies, the assumptions, and the whole result with
its per-candidate arrays. Pure data; no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

import numpy as np

from deepvm_core.arrays import BoolArray, FloatArray, IntArray
from deepvm_core.errors import InputError
from deepvm_core.job.baseline import on_demand_baseline_at
from deepvm_core.job.closed_form import JobEstimates
from deepvm_core.job.finish import finishes, unfinished_reason
from deepvm_core.job.inputs import JobInputs
from deepvm_core.job.objectives import Goal
from deepvm_core.job.odds import NO_SPOT, trace_odds
from deepvm_core.market.mtbi import MtbiSource
from deepvm_core.model import Configuration, Scenario
from deepvm_core.recommend.recommendation import POLICY_LABELS, Explanation
from deepvm_core.search.tables import CandidateTable
from deepvm_core.units import SECONDS_PER_HOUR
from deepvm_core.workload.speedup import OneVmSource, SpeedupModelName, SpeedupSource
from deepvm_core.workload.workload import CheckpointEvery, Workload

#: The paper's policies a plan estimates, in display order (labels: :data:`PLAN_POLICY_LABELS`).
PLAN_POLICIES: Final = ("deepvm", "deepvm_performance", "deepvm_noscale", "cost_first",
                        "performance_first")
PLAN_POLICY_LABELS: Final = {name: POLICY_LABELS[name] for name in PLAN_POLICIES}
#: ``kind`` of the plan JSON (the recommend export has none).
PLAN_KIND: Final = "job-plan"

# ----------------------------------------------------------------------------- results


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
        index: its position in :attr:`JobPlanResult.candidates` (and in every per-candidate
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
        evaluated_by: ``closed_form``, or ``backtest`` when spot traces of its GPU type gave T,
            C and the percentiles (``traces.md``; :class:`ReplayEstimates`).
        pools: the pools replayed, in failover order (``TYPE@ZONE``; empty: closed form).
        recovery: the recovery policy of the backtest (``wait``, ``failover``, ``deadline``).
        on_demand_makespan_hours: T_od, the same cluster with every VM on demand (no
            interruptions), hours (:mod:`deepvm_core.job.baseline`).
        on_demand_cost_usd: C_od, its cost, USD.
        does_not_finish: ``None``, or why the cluster is not expected to finish
            (:mod:`deepvm_core.job.finish`), or why it cannot run on the pools given (a
            cluster larger than a count trace's largest count); its T, C and N are then not
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


@dataclass(frozen=True)
class PolicyEstimates:
    """The paper's policies within PW, each with its estimate.

    Attributes:
        deepvm: DeepVM with the paper's Z, the top-k (empty when nothing is feasible or PW is
            off).
        deepvm_performance: DeepVM with the performance objective, or ``None``.
        deepvm_noscale: DeepVM-NoScale, or ``None``.
        cost_first: Cost-First, or ``None``.
        performance_first: Performance-First, or ``None``.
        computed: False when PW is off (the policies need a PW; see the module docstring).
    """

    deepvm: tuple[PlanEstimate, ...]
    deepvm_performance: PlanEstimate | None
    deepvm_noscale: PlanEstimate | None
    cost_first: PlanEstimate | None
    performance_first: PlanEstimate | None
    computed: bool

    def policy(self, name: str) -> PlanEstimate | None:
        """The estimate of policy ``name`` (:data:`PLAN_POLICIES`; ``deepvm``: its first)."""
        if name == "deepvm":
            return self.deepvm[0] if self.deepvm else None
        if name not in PLAN_POLICIES:
            raise InputError("policy", name, f"must be one of {', '.join(PLAN_POLICIES)}")
        found: PlanEstimate | None = getattr(self, name)
        return found

    def items(self) -> tuple[tuple[str, PlanEstimate | None], ...]:
        """(policy name, estimate) pairs in :data:`PLAN_POLICIES` order (DeepVM: its first)."""
        return tuple((name, self.policy(name)) for name in PLAN_POLICIES)


@dataclass(frozen=True)
class GpuAssumption:
    """What the plan assumes about one GPU type.

    Attributes:
        gpu: GPU type name.
        mtbi_hours: mean hours between interruption events, after ``mtbi_scale``.
        mtbi_source: ``advisor`` (Spot Advisor bucket), ``user`` (override) or ``default``
            (no bucket: the 10-15 % default, an assumption).
        interruption_bucket: the Spot Advisor bucket index 0..4, or ``None``.
        speedup_source: where S_g(n) comes from: ``paper``, ``fitted``, ``measured`` or
            ``linear`` (no fit: S(n) = n, flagged).
        one_vm_epoch_seconds: t_g(1), seconds per epoch on one VM, or ``None`` (unknown).
        one_vm_source: where t_g(1)'s relative speed ρ_g comes from: ``measured`` (a
            table's one-node rows of g and g_ref), ``reference`` (g is g_ref), ``eflops`` or
            ``None``.
        relative_one_vm_time: ρ_g = t_g(1) / t_ref(1) (dimensionless), or ``None``.
        one_vm_table: the measurement table's name when ``one_vm_source`` is ``measured``.
        wait_hours: W, the mean capacity wait, hours.
        wait_source: ``advisor`` (the bucket's), ``user`` (the workload's) or ``default``.
    """

    gpu: str
    mtbi_hours: float
    mtbi_source: MtbiSource
    interruption_bucket: int | None
    speedup_source: SpeedupSource
    one_vm_epoch_seconds: float | None
    one_vm_source: OneVmSource | None
    relative_one_vm_time: float | None = None
    one_vm_table: str | None = None
    wait_hours: float = 0.0
    wait_source: MtbiSource = "user"


@dataclass(frozen=True)
class PlanAssumptions:
    """The assumptions behind every estimate (show them as such).

    Attributes:
        speedup: the speedup model's name (``paper``, ``fitted``, ``measured``).
        measurements_source: where the measurements come from, or ``None``.
        reference_gpu: g_ref, the type of the reference epoch time.
        checkpoint_every_epochs: k, or ``"auto"`` (Daly's interval).
        restart_hours: R. wait_hours: W, or ``None``: each type's bucket default (its
        :attr:`GpuAssumption.wait_hours`). disk_gb_per_s: D, GB/s.
        checkpoint_fixed_seconds: δ0. mtbi_scale: the factor on every MTBI.
        gpu_types: per GPU type of the catalog, in catalog order.
        per_vm_share: ρ, the share of one VM's reclaims that take that VM alone.
    """

    speedup: SpeedupModelName
    measurements_source: str | None
    reference_gpu: str
    checkpoint_every_epochs: CheckpointEvery
    restart_hours: float
    wait_hours: float | None
    disk_gb_per_s: float
    checkpoint_fixed_seconds: float
    mtbi_scale: float
    gpu_types: tuple[GpuAssumption, ...]
    per_vm_share: float = 0.0


@dataclass(frozen=True, eq=False)
class JobPlanResult:
    """Everything :func:`plan_job` found; per-candidate arrays share one index.

    Attributes:
        scenario: f, s, quotas, node cap and the tie-break objective (its PW is not read).
        workload: the job.
        pw_usd_per_hour: the PW the candidates are priced within, or ``None`` (off).
        goal: ``cheapest`` or ``fastest``.
        deadline_hours: the deadline on expected makespan, or ``None``.
        budget_usd: the budget on expected cost, or ``None``.
        trials: Monte Carlo runs per simulated configuration (0: none).
        seed: the Monte Carlo seed.
        top_k: how many best configurations (and DeepVM's top-k) were asked for.
        catalog_name, catalog_sha256: which catalog, exactly.
        candidates: every feasible configuration (:class:`CandidateTable`).
        estimates: the closed form on every candidate (:class:`JobEstimates`).
        rank: per candidate, its position in ``model.md``'s order (0 first).
        frontier: indices of the Pareto frontier, by increasing expected cost.
        within_limits: per candidate, True when T <= deadline and C <= budget (each when
            given; a NaN estimate never qualifies).
        best: the top-k by the goal within the limits, best first (empty: see explanation).
        policies: the paper's policies.
        monte_carlo: candidate index -> Monte Carlo statistics, for the simulated ones (the
            best, the policies; empty with ``trials`` 0).
        assumptions: the assumptions behind the estimates.
        notes: flags for the user (types with S(n) = n, default MTBI, PW off, ...).
        explanation: why ``best`` is empty, or ``None``.
        warnings: inputs that were not used and should have been (measurements of types
            the catalog does not have, with close names); show them as warnings.
        job_plan: the per-candidate job plan the estimates come from (λ, R, segments), for
            the reason a cluster does not finish; ``None`` when not kept.
        replay: the candidates evaluated on spot traces, or ``None``.
        odds_by_gpu: GPU type -> where the odds of its closed-form estimates come from
            (:func:`~deepvm_core.job.odds.bucket_odds`).
    """

    scenario: Scenario
    workload: Workload
    pw_usd_per_hour: float | None
    goal: Goal
    deadline_hours: float | None
    budget_usd: float | None
    trials: int
    seed: int
    top_k: int
    catalog_name: str
    catalog_sha256: str
    candidates: CandidateTable
    estimates: JobEstimates
    rank: IntArray
    frontier: IntArray
    within_limits: BoolArray
    best: tuple[PlanEstimate, ...]
    policies: PolicyEstimates
    monte_carlo: Mapping[int, MonteCarloEstimate]
    assumptions: PlanAssumptions
    notes: tuple[str, ...]
    explanation: Explanation | None
    warnings: tuple[str, ...] = ()
    job_plan: JobInputs | None = None
    replay: ReplayEstimates | None = None
    odds_by_gpu: Mapping[str, str] = field(default_factory=dict)

    @property
    def finishes(self) -> BoolArray:
        """Per candidate, True when it is expected to finish (:func:`finishes`)."""
        return finishes(self.estimates.expected_makespan_hours)

    @property
    def chosen(self) -> PlanEstimate | None:
        """The chosen configuration: ``best[0]``, or ``None``."""
        return self.best[0] if self.best else None

    @property
    def size(self) -> int:
        """Number of candidates."""
        return len(self.candidates)

    @property
    def expected_cost_usd(self) -> FloatArray:
        """Per candidate, C (USD)."""
        return self.estimates.expected_cost_usd

    @property
    def expected_makespan_hours(self) -> FloatArray:
        """Per candidate, T (hours)."""
        return self.estimates.expected_makespan_hours

    @property
    def price_usd_per_hour(self) -> FloatArray:
        """Per candidate, the hourly price (USD per hour)."""
        return self.candidates.price_usd_per_hour

    @property
    def architecture(self) -> IntArray:
        """Per candidate, the architecture code (0 Single Anchor, 1 Tiering)."""
        return self.candidates.architecture

    @property
    def frontier_mask(self) -> BoolArray:
        """Per candidate, True on the Pareto frontier."""
        mask = np.zeros(self.size, dtype=bool)
        mask[self.frontier] = True
        return mask

    def configuration(self, index: int) -> Configuration:
        """The configuration of candidate ``index``."""
        return self.candidates.configuration(index)

    def label(self, index: int) -> str:
        """Candidate ``index`` in one line (``SA: 16 x g4dn.xlarge (...), 2.8930 USD/h``)."""
        return self.candidates.configuration(index).describe()

    def estimate(self, index: int) -> PlanEstimate:
        """The estimate of candidate ``index`` (with Monte Carlo statistics when it was
        simulated, see :attr:`monte_carlo`)."""
        return _estimate(self, int(index), self.monte_carlo.get(int(index)))

    def marks(self) -> dict[int, tuple[str, ...]]:
        """Candidate index -> what it is: ``best`` (best[0]), ``best_2``... and the policy
        names of :data:`PLAN_POLICIES` (``deepvm`` its first, ``deepvm_2``... the others)."""
        marks: dict[int, list[str]] = {}
        for i, e in enumerate(self.best):
            marks.setdefault(e.index, []).append("best" if i == 0 else f"best_{i + 1}")
        for i, e in enumerate(self.policies.deepvm):
            marks.setdefault(e.index, []).append("deepvm" if i == 0 else f"deepvm_{i + 1}")
        for name in PLAN_POLICIES[1:]:
            found = self.policies.policy(name)
            if found is not None:
                marks.setdefault(found.index, []).append(name)
        return {k: tuple(v) for k, v in marks.items()}



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
    return unfinished_reason(mtbi_hours=1.0 / rate if rate > 0 else None,
                             restart_hours=float(plan.restart_hours[index]),
                             segment_hours=segment, compute_hours=compute)


def _estimate(result: JobPlanResult | _Parts, index: int,
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
        configuration=table.configuration(index),
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
        mean_makespan_hours, makespan_p10_hours, makespan_p50_hours, makespan_p90_hours: hours.
        mean_cost_usd, cost_p10_usd, cost_p50_usd, cost_p90_usd: USD.
        mean_interruptions: per run. deadline_met: share of runs within the deadline, or
            ``None`` without one.
        model: ``replay`` (backtests), ``renewal`` or ``closed-form`` (from the traces'
            statistics), issue 25.
        window_days: the recent window of the traces used, days, or ``None`` (whole traces).
        refusals: per candidate, why it cannot run on its type's pools (a cluster larger than
            every count trace allows), or ``None``; empty: none refused.
    """

    recovery: str
    runs: int
    evaluated: BoolArray
    pools: tuple[tuple[str, ...], ...]
    mean_makespan_hours: FloatArray
    makespan_p10_hours: FloatArray
    makespan_p50_hours: FloatArray
    makespan_p90_hours: FloatArray
    mean_cost_usd: FloatArray
    cost_p10_usd: FloatArray
    cost_p50_usd: FloatArray
    cost_p90_usd: FloatArray
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
            makespan_hours_p10=float(self.makespan_p10_hours[index]),
            makespan_hours_p50=float(self.makespan_p50_hours[index]),
            makespan_hours_p90=float(self.makespan_p90_hours[index]),
            mean_cost_usd=float(self.mean_cost_usd[index]),
            cost_usd_p10=float(self.cost_p10_usd[index]),
            cost_usd_p50=float(self.cost_p50_usd[index]),
            cost_usd_p90=float(self.cost_p90_usd[index]),
            mean_interruptions=float(self.mean_interruptions[index]),
            deadline_probability=met)


@dataclass(frozen=True)
class _Parts:
    """What :func:`_estimate` reads before the result exists."""

    estimates: JobEstimates
    candidates: CandidateTable
    deadline_hours: float | None
    budget_usd: float | None
    within_limits: BoolArray
    job_plan: JobInputs | None = None
    replay: ReplayEstimates | None = None
    odds_by_gpu: Mapping[str, str] = field(default_factory=dict)


