"""Distinct clusters: a ranked list as a person reads it.

Z, performance and speed do not depend on the memory-node type, so a ranked top-k often lists
one cluster several times, once per memory-node type (``TR: 17 x g4dn.xlarge spot + 1 x
c5.xlarge``, then ``+ 1 x c5a.xlarge``...). A person compares clusters: (architecture, GPU
type, GPU VM count). :func:`distinct_clusters` gives the first k distinct clusters, best first,
each with its variants (the same cluster with other memory-node types) folded into it.

**No dominated rows** (issue 27). A cluster slower and dearer than one listed above it is not
a choice anyone makes (at PW 60 the list named 2 x p5en.48xlarge at twice the price of #1 for
the same speed), so the list leaves it out: a cluster is listed only if no cluster above it is
at least as fast and at most as dear, one of the two strictly (:func:`undominated`). Fast is
the job's speed (epochs per hour) when it is known, else the performance ``eFLOPS n K(n)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from deepvm_core.arrays import IntArray
from deepvm_core.model import Configuration
from deepvm_core.search.solvers.enumeration import Ranking
from deepvm_core.search.tables import CandidateTable

#: (architecture, GPU type, GPU VMs): what makes two configurations the same cluster for a
#: person.
ClusterKey = tuple[str, str, int]


def cluster_key(config: Configuration) -> ClusterKey:
    """The cluster of ``config``: architecture, GPU type and GPU VM count."""
    return config.architecture, config.gpu, config.gpu_vms


@dataclass(frozen=True)
class DistinctCluster:
    """One cluster of a ranked list and its memory-node variants.

    Attributes:
        configuration: its best variant (the cheapest memory node: first in the ranking).
        variants: every variant of the ranked list, best first (``configuration`` first);
            variants differ only in the memory-node type (and so in price).
    """

    configuration: Configuration
    variants: tuple[Configuration, ...]

    @property
    def memory_node_types(self) -> tuple[str, ...]:
        """The memory-node types of the variants, best first (empty for Single Anchor)."""
        return tuple(c.cpu for c in self.variants if c.cpu is not None)

    def describe(self) -> str:
        """The best variant in one line, naming the other memory-node types if any."""
        others = self.memory_node_types[1:]
        tail = f" (or memory node {', '.join(others)})" if others else ""
        return self.configuration.describe() + tail


def first_of_each_cluster(table: CandidateTable, order: IntArray) -> IntArray:
    """The rows of ``order`` (indices into ``table``, best first) that are the first of their
    cluster (architecture, GPU type, GPU VM count), in the same order: the job planner's best
    list reads as clusters, as Recommend's does."""
    rows = np.asarray(order, dtype=np.int64)
    if rows.size == 0:
        return rows
    keys = np.stack((table.architecture[rows], table.gpu[rows], table.n[rows]), axis=1)
    _, first = np.unique(keys, axis=0, return_index=True)
    return rows[np.sort(first)]


def undominated(table: CandidateTable, order: IntArray) -> IntArray:
    """The rows of ``order`` (indices into ``table``, best first) that no earlier kept row
    dominates: an earlier row with throughput ``>=`` and price ``<=``, one of them strictly.
    Throughput is the job's speed when every row has one, else the performance. O(len(order)
    x kept), vectorised over the kept rows."""
    rows = np.asarray(order, dtype=np.int64)
    speed = np.asarray(table.speed_epochs_per_hour, dtype=np.float64)[rows]
    fast = speed if rows.size and np.isfinite(speed).all() else (
        np.asarray(table.performance, dtype=np.float64)[rows])
    price = np.asarray(table.price_usd_per_hour, dtype=np.float64)[rows]
    kept: list[int] = []
    for j in range(rows.size):
        if kept:
            k = np.array(kept)
            beats = (fast[k] >= fast[j]) & (price[k] <= price[j]) & (
                (fast[k] > fast[j]) | (price[k] < price[j]))
            if beats.any():
                continue
        kept.append(j)
    return rows[np.array(kept, dtype=np.int64)]


def fold_variants(ranked: Sequence[Configuration]) -> tuple[DistinctCluster, ...]:
    """Fold a ranked list by cluster, in order of first appearance."""
    groups: dict[ClusterKey, list[Configuration]] = {}
    for c in ranked:
        groups.setdefault(cluster_key(c), []).append(c)
    return tuple(DistinctCluster(v[0], tuple(v)) for v in groups.values())


def distinct_clusters(ranking: Ranking, k: int, ranked: Sequence[Configuration] = ()) -> tuple[
        DistinctCluster, ...]:
    """The first ``k`` distinct, undominated clusters of ``ranking``, best first (exact
    enumeration; :func:`undominated`).

    Its table must hold one configuration per (architecture, GPU type, n), its best memory node
    (``candidate_table(domain, memory_node_choices=1)``): its top k are then k distinct
    clusters. Each gathers its variants from ``ranked`` (the top-k list of configurations).
    """
    folded = {cluster_key(d.configuration): d for d in fold_variants(ranked)}
    found = []
    table = ranking.table
    width = k
    while True:  # the first k undominated of the best ``width``, widened until found or all
        top = ranking.top_indices(width)
        rows = undominated(table, top)[:k]
        if rows.size == k or top.size < width:
            break
        width *= 4
    for i in rows:
        config = table.configuration(int(i))
        found.append(folded.get(cluster_key(config), DistinctCluster(config, (config,))))
    return tuple(found)
