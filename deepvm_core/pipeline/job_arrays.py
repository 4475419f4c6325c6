"""A candidate table for the job model, and the job model's statistics back as estimates: the
:class:`~deepvm_core.job.inputs.ClusterArrays` of a table's configurations
(:func:`cluster_arrays`), the job inputs of some of them (:func:`sub_inputs`), and a Monte
Carlo summary as one :class:`~deepvm_core.job.estimate.MonteCarloEstimate` each
(:func:`monte_carlo_estimates`); and the Monte Carlo both show (:func:`simulate_band`). The
job plan and a recommendation's job estimate (:mod:`deepvm_core.pipeline.recommend_job`) both
use them, so that one cluster's P10-P90 reads the same on Plan a job and Recommend.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from deepvm_core.arrays import IntArray
from deepvm_core.catalog import Catalog
from deepvm_core.job.estimate import MonteCarloEstimate
from deepvm_core.job.inputs import ClusterArrays, JobInputs
from deepvm_core.job.montecarlo import MonteCarloSummary, simulate_jobs
from deepvm_core.job.spread import FROM_BUCKET, bucket_scenarios, simulate_scenarios
from deepvm_core.market.mtbi import MtbiSource
from deepvm_core.model import Arch
from deepvm_core.search.tables import CandidateTable

__all__ = ["cluster_arrays", "monte_carlo_estimates", "simulate_band", "sub_inputs"]


def cluster_arrays(catalog: Catalog, table: CandidateTable) -> ClusterArrays:
    """The job model's :class:`ClusterArrays` of every configuration of ``table`` (GPU indices
    mapped from the table's GPU types to ``catalog.gpu_types`` by name)."""
    by_name = {g.name: i for i, g in enumerate(catalog.gpu_types)}
    gpu_index = np.array([by_name[g.name] for g in table.gpus], dtype=np.int64)
    gpu_bw = np.array([g.network_gbps for g in table.gpus], dtype=np.float64)
    cpu_bw = np.append(np.array([w.network_gbps for w in table.cpus], dtype=np.float64),
                       np.nan)  # index -1: Single Anchor, no memory node
    single = table.architecture == Arch.SINGLE_ANCHOR
    return ClusterArrays(
        architecture=table.architecture.astype(np.int64),
        gpu_index=gpu_index[table.gpu] if table.gpus else np.zeros(0, dtype=np.int64),
        n_gpu=table.n,
        n_spot=np.where(single, table.n - 1, table.n),
        memory_nodes=table.m,
        gpu_network_gbps=gpu_bw[table.gpu] if table.gpus else np.zeros(0),
        memory_network_gbps=cpu_bw[table.cpu],
        price_usd_per_hour=table.price_usd_per_hour,
        on_demand_usd_per_hour=np.minimum(table.on_demand_usd_per_hour,
                                          table.price_usd_per_hour),
    )


def sub_inputs(plan: JobInputs, indices: IntArray) -> JobInputs:
    """The job inputs of the configurations ``indices`` of ``plan`` only."""
    return JobInputs(**{name: getattr(plan, name)[indices]
                      for name in plan.__dataclass_fields__})


def monte_carlo_estimates(summary: MonteCarloSummary) -> list[MonteCarloEstimate]:
    """A Monte Carlo summary of some configurations as one estimate each."""
    probability = summary.deadline_probability
    return [MonteCarloEstimate(
        trials=summary.trials,
        mean_makespan_hours=float(summary.mean_makespan_hours[i]),
        makespan_hours_p10=float(summary.makespan_hours_p10[i]),
        makespan_hours_p50=float(summary.makespan_hours_p50[i]),
        makespan_hours_p90=float(summary.makespan_hours_p90[i]),
        mean_cost_usd=float(summary.mean_cost_usd[i]),
        cost_usd_p10=float(summary.cost_usd_p10[i]),
        cost_usd_p50=float(summary.cost_usd_p50[i]),
        cost_usd_p90=float(summary.cost_usd_p90[i]),
        mean_interruptions=float(summary.mean_interruptions[i]),
        deadline_probability=None if probability is None else float(probability[i]),
    ) for i in range(summary.mean_makespan_hours.size)]


def simulate_band(plan: JobInputs, sources: Sequence[tuple[MtbiSource, MtbiSource]] | None,
                  rng: np.random.Generator, *, trials: int,
                  deadline_hours: float | None = None) -> MonteCarloSummary:
    """The Monte Carlo of the configurations of ``plan`` that the plans show: with
    ``sources`` (per configuration, where its GPU type's MTBI and W come from), MTBI and W are
    drawn from the bucket's spread where they come from a bucket
    (:mod:`deepvm_core.job.spread`); ``None``: the point assumptions alone."""
    if sources is None:
        return simulate_jobs(plan, rng, trials=trials, deadline_hours=deadline_hours)
    rates, waits = bucket_scenarios(plan, [m in FROM_BUCKET for m, _ in sources],
                                    [w in FROM_BUCKET for _, w in sources])
    return simulate_scenarios(plan, rates, waits, rng, trials=trials,
                              deadline_hours=deadline_hours)
