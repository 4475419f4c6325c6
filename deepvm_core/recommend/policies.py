"""The paper's policies: their names, labels and one order, and what each picks on a candidate
table (``model.md``, "Baseline policies"; the one home for ``recommend``, the PW sweep, the job
plan, the CLI and the dashboard).

* **DeepVM**: every feasible configuration of both architectures ranked by the paper's Z
  (stage 4); **DeepVM (performance objective)**: the same ranking by eFLOPS n K(n).
* **DeepVM-NoScale**: the ranking by Z with K = 1; its performance is still evaluated with the
  true K.
* **Cost-First**: Single Anchor only; per GPU type the largest affordable n; the type with the
  largest n wins (ties: lower hourly price, then name).
* **Performance-First**: Single Anchor only; GPU types by eFLOPS (ties: lower spot price, then
  name); the first with an affordable n >= 2, at its largest affordable n.

Cost-First and Performance-First are rules, not optimisations, so both solvers share them.
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np

from deepvm_core.arrays import FloatArray, IntArray
from deepvm_core.model import Configuration
from deepvm_core.search.selection import top_indices
from deepvm_core.search.solvers.enumeration import largest_single_anchor
from deepvm_core.search.tables import CandidateTable

__all__ = [
    "PAPER_POLICIES",
    "POLICY_LABELS",
    "SPEED_POLICY",
    "SWEEP_POLICIES",
    "policy_indices",
    "single_anchor_baseline_indices",
    "single_anchor_baselines",
]

#: The paper's policies in their one order, the order in which ``job-model.md`` names them
#: ("DeepVM with Z, DeepVM with the performance objective, NoScale, Cost-First,
#: Performance-First"): the job plan, Recommend's policy comparison, the sweep's charts and
#: the CLI list them so.
PAPER_POLICIES: Final = ("deepvm", "deepvm_performance", "deepvm_noscale", "cost_first",
                         "performance_first")
#: The tools' default: DeepVM ranked by the job's training speed (``model.DEFAULT_OBJECTIVE``),
#: which the PW sweep draws beside the paper's policies (issue 27: Simulate omitted it).
SPEED_POLICY: Final = "deepvm_speed"
#: The PW sweep's policies: the paper's, then the tools' default.
SWEEP_POLICIES: Final = (*PAPER_POLICIES, SPEED_POLICY)
#: Each policy's name for people.
POLICY_LABELS: Final = {
    "deepvm": "DeepVM",
    "deepvm_performance": "DeepVM (performance objective)",
    "deepvm_noscale": "DeepVM-NoScale",
    "cost_first": "Cost-First",
    "performance_first": "Performance-First",
    SPEED_POLICY: "DeepVM (speed objective, the default)",
}


def single_anchor_baseline_indices(table: CandidateTable,
                                   pws: FloatArray) -> tuple[IntArray, IntArray]:
    """Cost-First and Performance-First at every PW of ``pws``, as indices into ``table``
    (-1 where a policy finds nothing); vectorised over PW."""
    index, count = largest_single_anchor(table, pws)
    gpus = table.gpus
    cost_first = np.full(index.shape[0], -1, dtype=np.int64)
    performance_first = np.full(index.shape[0], -1, dtype=np.int64)
    # Cost-First: largest n, then lower price, then name
    price = np.full(index.shape, np.inf)
    price[index >= 0] = table.price_usd_per_hour[index[index >= 0]]
    name_rank = table.domain.gpu_rank
    perf_order = sorted(range(len(gpus)), key=lambda i: (
        -float(gpus[i].eflops or 0.0), gpus[i].spot_usd_per_hour, gpus[i].name))
    for p in range(index.shape[0]):
        if not np.any(index[p] >= 0):
            continue
        cols = np.lexsort((name_rank, price[p], -count[p]))
        cost_first[p] = index[p, cols[0]]
        first = next(i for i in perf_order if index[p, i] >= 0)
        performance_first[p] = index[p, first]
    return cost_first, performance_first


def single_anchor_baselines(
    table: CandidateTable, pws: FloatArray
) -> tuple[list[Configuration | None], list[Configuration | None]]:
    """Cost-First and Performance-First at every PW of ``pws`` (vectorised over PW)."""
    cost_first, performance_first = single_anchor_baseline_indices(table, pws)

    def configs(indices: IntArray) -> list[Configuration | None]:
        return [table.configuration(int(i)) if i >= 0 else None for i in indices]

    return configs(cost_first), configs(performance_first)


def policy_indices(table: CandidateTable, top_k: int) -> dict[str, list[int]]:
    """Every policy of :data:`PAPER_POLICIES` on ``table``, in that order, as indices best
    first: ``deepvm`` (Z, the top ``top_k``), ``deepvm_performance`` (eFLOPS n K(n)),
    ``deepvm_noscale`` (Z with K = 1), ``cost_first`` and ``performance_first``
    (:func:`single_anchor_baseline_indices`); a policy that finds nothing has an empty list.
    ``table`` is built within the PW (every configuration of it is affordable). The job plan's
    policies and a recommendation's
    :attr:`~deepvm_core.recommend.recommendation.Recommendation.compared`."""
    cost_first, performance_first = single_anchor_baseline_indices(table, np.array([math.inf]))
    found = {
        "deepvm": top_indices(table, math.inf, "paper", top_k),
        "deepvm_performance": top_indices(table, math.inf, "performance", 1),
        "deepvm_noscale": top_indices(table, math.inf, "paper", 1, noscale=True),
        "cost_first": cost_first[cost_first >= 0],
        "performance_first": performance_first[performance_first >= 0],
    }
    return {name: [int(i) for i in found[name]] for name in PAPER_POLICIES}
