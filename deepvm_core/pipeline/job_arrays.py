"""A candidate table for the job model, and the job model's statistics back as estimates: the
:class:`~deepvm_core.job.inputs.ClusterArrays` of a table's configurations
(:func:`cluster_arrays`), the job inputs of some of them (:func:`sub_inputs`), and a Monte
Carlo summary as one :class:`~deepvm_core.job.estimate.MonteCarloEstimate` each
(:func:`monte_carlo_estimates`). The job plan and a recommendation's job estimate
(:mod:`deepvm_core.pipeline.recommend_job`) both use them.
"""

from __future__ import annotations

import numpy as np

from deepvm_core.arrays import IntArray
from deepvm_core.catalog import Catalog
from deepvm_core.job.estimate import MonteCarloEstimate
from deepvm_core.job.inputs import ClusterArrays, JobInputs
from deepvm_core.job.montecarlo import MonteCarloSummary
from deepvm_core.model import Arch
from deepvm_core.search.tables import CandidateTable

__all__ = ["cluster_arrays", "monte_carlo_estimates", "sub_inputs"]


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
