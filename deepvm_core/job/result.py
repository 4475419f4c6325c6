"""The job planner's result (:func:`deepvm_core.pipeline.plan.plan_job` builds it): the paper's
policies, the assumptions, and the whole result with its per-candidate arrays; one
configuration's estimate is :mod:`deepvm_core.job.estimate`. Pure data; no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

import numpy as np

from deepvm_core.arrays import BoolArray, FloatArray, IntArray
from deepvm_core.errors import InputError
from deepvm_core.job.closed_form import JobEstimates
from deepvm_core.job.estimate import MonteCarloEstimate, PlanEstimate, ReplayEstimates, estimate_at
from deepvm_core.job.finish import finishes
from deepvm_core.job.inputs import JobInputs
from deepvm_core.job.objectives import Goal
from deepvm_core.market.mtbi import MtbiEstimate
from deepvm_core.model import Configuration, Scenario
from deepvm_core.recommend.explain import Explanation
from deepvm_core.recommend.policies import PAPER_POLICIES
from deepvm_core.search.tables import CandidateTable
from deepvm_core.workload.speedup import OneVmSource, SpeedupModelName, SpeedupSource
from deepvm_core.workload.workload import CheckpointEvery, Workload

#: ``kind`` of the plan JSON (the recommend export has none).
PLAN_KIND: Final = "job-plan"

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
        """The estimate of policy ``name`` (one of
        :data:`~deepvm_core.recommend.policies.PAPER_POLICIES`; ``deepvm``: its first)."""
        if name == "deepvm":
            return self.deepvm[0] if self.deepvm else None
        if name not in PAPER_POLICIES:
            raise InputError("policy", name, f"must be one of {', '.join(PAPER_POLICIES)}")
        found: PlanEstimate | None = getattr(self, name)
        return found

    def items(self) -> tuple[tuple[str, PlanEstimate | None], ...]:
        """(policy name, estimate) pairs in the order of
        :data:`~deepvm_core.recommend.policies.PAPER_POLICIES` (DeepVM: its first)."""
        return tuple((name, self.policy(name)) for name in PAPER_POLICIES)


@dataclass(frozen=True)
class GpuAssumption(MtbiEstimate):
    """What the plan assumes about one GPU type: its MTBI (the fields of
    :class:`~deepvm_core.market.mtbi.MtbiEstimate`) and its speed.

    Attributes:
        speedup_source: where S_g(n) comes from: ``paper``, ``fitted``, ``measured`` or
            ``linear`` (no fit: S(n) = n, flagged).
        one_vm_epoch_seconds: t_g(1), seconds per epoch on one VM, or ``None`` (unknown).
        one_vm_source: where t_g(1)'s relative speed ρ_g comes from: ``measured`` (a
            table's one-node rows of g and g_ref), ``reference`` (g is g_ref), ``eflops`` or
            ``None``.
        relative_one_vm_time: ρ_g = t_g(1) / t_ref(1) (dimensionless), or ``None``.
        one_vm_table: the measurement table's name when ``one_vm_source`` is ``measured``.
        memory_fit: a transformer job: whether one replica fits the type's GPU memory, and
            why (:attr:`~deepvm_core.workload.memory.MemoryVerdict.reason`); ``None`` for a
            cnn job.
    """

    speedup_source: SpeedupSource
    one_vm_epoch_seconds: float | None
    one_vm_source: OneVmSource | None
    relative_one_vm_time: float | None = None
    one_vm_table: str | None = None
    memory_fit: str | None = None


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
        return estimate_at(self, int(index), self.monte_carlo.get(int(index)))

    def marks(self) -> dict[int, tuple[str, ...]]:
        """Candidate index -> what it is: ``best`` (best[0]), ``best_2``... and the policy
        names of :data:`~deepvm_core.recommend.policies.PAPER_POLICIES` (``deepvm`` its first,
        ``deepvm_2``... the others)."""
        marks: dict[int, list[str]] = {}
        for i, e in enumerate(self.best):
            marks.setdefault(e.index, []).append("best" if i == 0 else f"best_{i + 1}")
        for i, e in enumerate(self.policies.deepvm):
            marks.setdefault(e.index, []).append("deepvm" if i == 0 else f"deepvm_{i + 1}")
        for name in PAPER_POLICIES[1:]:
            found = self.policies.policy(name)
            if found is not None:
                marks.setdefault(found.index, []).append(name)
        return {k: tuple(v) for k, v in marks.items()}
