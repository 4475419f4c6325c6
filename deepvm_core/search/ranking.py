"""Stage 4 of ``model.md``: the ranking, spelled once.

Configurations rank by objective descending, then lower hourly price, fewer VMs, and the name
rank, one integer per configuration that orders (architecture, GPU name, CPU name).
:func:`rank_order` is the only spelling of that order: the candidate table
(:meth:`deepvm_core.search.tables.CandidateTable.rank_order`), :func:`rank_configurations`
for lists of configurations, and (through the name rank's two parts) the integer program's
tie-break stage use it. The value an objective scores is
:func:`deepvm_core.model.objective_attribute`'s field.

The search goes one way: candidates (:mod:`deepvm_core.search.candidates`) -> ranked here
(:func:`rank_order`; the best k of a table without sorting everything:
:func:`deepvm_core.search.selection.top_indices`;
:func:`rank_positions` for tie-breaks) -> chosen (:mod:`deepvm_core.recommend.recommendation`
for the paper's policies, :mod:`deepvm_core.job.objectives` for a job's goal).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from deepvm_core.arrays import FloatArray, IntArray
from deepvm_core.model import (
    Arch,
    Configuration,
    Objective,
)

__all__ = ["combined_name_rank", "name_ranks", "rank_configurations", "rank_order",
           "rank_positions"]


def name_ranks(names: Sequence[str]) -> IntArray:
    """Alphabetical rank of each name, 0 first (equal names share a rank)."""
    rank = {name: i for i, name in enumerate(sorted(set(names)))}
    return np.array([rank[name] for name in names], dtype=np.int64)


def combined_name_rank(architecture: IntArray, gpu_rank: IntArray, cpu_rank: IntArray,
                       gpu_count: int, cpu_count: int) -> IntArray:
    """One integer that orders (architecture, GPU name, CPU name) lexicographically.

    ``gpu_rank`` and ``cpu_rank`` are alphabetical ranks among ``gpu_count`` GPU and
    ``cpu_count`` CPU names; ``cpu_rank`` -1 (no memory node) sorts first. The value is
    ``(architecture * gpu_count + gpu_rank) * (cpu_count + 1) + cpu_rank + 1``, which lies in
    ``[0, 2 gpu_count (cpu_count + 1))``.
    """
    return (architecture * gpu_count + gpu_rank) * (cpu_count + 1) + cpu_rank + 1


def rank_order(objective_values: FloatArray, price_usd_per_hour: FloatArray,
               total_vms: IntArray, name_rank: IntArray) -> IntArray:
    """Stage 4 of ``model.md``: positions best first, by objective descending, then lower hourly
    price, fewer VMs, then the name rank (:func:`combined_name_rank`). Stable."""
    return np.lexsort((name_rank, total_vms, price_usd_per_hour, -objective_values))


def rank_configurations(configs: Sequence[Configuration], objective: Objective, *,
                        noscale: bool = False) -> list[int]:
    """Positions of ``configs`` best first in the order of :func:`rank_order` (stable: equal
    configurations keep their order)."""
    if not configs:
        return []
    cpu_names = [c.cpu for c in configs if c.cpu is not None]
    cpu_rank = np.full(len(configs), -1, dtype=np.int64)
    cpu_rank[[i for i, c in enumerate(configs) if c.cpu is not None]] = name_ranks(cpu_names)
    name_rank = combined_name_rank(
        np.array([Arch.of(c.architecture) for c in configs], dtype=np.int64),
        name_ranks([c.gpu for c in configs]), cpu_rank, len(configs), len(configs))
    order = rank_order(
        np.array([c.objective_value(objective, noscale=noscale) for c in configs]),
        np.array([c.hourly_price_usd for c in configs]),
        np.array([c.total_vms for c in configs], dtype=np.int64), name_rank)
    return [int(i) for i in order]


def rank_positions(order: IntArray) -> IntArray:
    """Each entry's place in ``order`` (0 = best): the inverse permutation of a
    :func:`rank_order` result, a rank to break ties by (``job.objectives``)."""
    positions = np.empty(order.size, dtype=np.int64)
    positions[order] = np.arange(order.size, dtype=np.int64)
    return positions
