"""The exact solver: rank the configurations of a
:class:`~deepvm_core.search.tables.CandidateTable`.

The table does not depend on PW (PW only cuts it by price), so it is built once per (catalog, f,
s, quotas, node cap), and a recommendation at any PW is "the best configuration priced <= PW".
A PW sweep sorts the table by price once and keeps a running best (a prefix minimum of the
rank), so each PW costs one binary search.

A top-k needs up to k memory-node types per Tiering (v, n), but only for the few (v, n) whose
objective can reach the top k: :func:`top_configurations` ranks a table of one memory node per
(v, n) and pairs only those (v, n) with more, so a top-100 costs what a top-1 does.
"""

from __future__ import annotations

from typing import Unpack

import numpy as np

from deepvm_core.arrays import FloatArray, IntArray
from deepvm_core.model import (
    Arch,
    Configuration,
    Objective,
)
from deepvm_core.search.selection import Pick, contenders
from deepvm_core.search.tables import CandidateTable
from deepvm_core.units import PRICE_TOLERANCE_USD


def top_configurations(table: CandidateTable, pw_usd_per_hour: float, objective: Objective,
                       k: int, **pick: Unpack[Pick]) -> list[Configuration]:
    """The best ``k`` affordable configurations, best first, from a table built with
    ``memory_node_choices=1`` (or more).

    Each (v, n) of the table stands for its best memory node, and a (v, n) whose objective is
    below the k-th largest of the table has k better configurations above it (Z and performance
    do not depend on the memory node), so only the (v, n) reaching it are paired with their
    other memory-node candidates (:meth:`~deepvm_core.search.tables.CandidateDomain.
    memory_node_shortlist`) before the final ranking.
    """
    indices = contenders(table, pw_usd_per_hour, objective, k, **pick)
    noscale = pick.get("noscale", False)
    if k <= 1 or indices.size == 0:
        ranked = table.rank_order(objective, noscale=noscale, indices=indices)[:k]
        return [table.configuration(int(i)) for i in ranked]
    domain = table.domain
    tiering = table.architecture[indices] == Arch.TIERING
    single_rows = table.row[indices[~tiering]]
    tiering_rows = np.unique(table.row[indices[tiering]])
    listed = domain.memory_node_shortlist(k)[domain.gpu[tiering_rows]]  # (rows, S), -1 none
    pair_row = np.repeat(tiering_rows, listed.shape[1])
    pair_cpu = listed.ravel()
    valid = pair_cpu >= 0
    paired = domain.configurations(  # leaves out pairs over the budget or the node limit
        np.concatenate([single_rows, pair_row[valid]]),
        np.concatenate([np.full(single_rows.shape, -1, dtype=np.int64), pair_cpu[valid]]))
    ranked = paired.rank_order(objective, noscale=noscale)[:k]
    return [paired.configuration(int(i)) for i in ranked]


def best_by_pw(
    table: CandidateTable, pws: FloatArray, objective: Objective, *, noscale: bool = False
) -> IntArray:
    """For every PW of ``pws``, the index of the best affordable configuration (-1 if none).

    Sorted prefixes: rank every configuration once, sort by price once, take the running minimum
    of the rank along price; the best configuration at PW is that minimum at the last price
    <= PW.
    """
    pws = np.asarray(pws, dtype=np.float64)
    if len(table) == 0:
        return np.full(pws.shape, -1, dtype=np.int64)
    order = table.rank_order(objective, noscale=noscale)
    rank = np.empty(len(table), dtype=np.int64)
    rank[order] = np.arange(len(table))
    by_price = np.argsort(table.price_usd_per_hour, kind="stable")
    prefix_best = np.minimum.accumulate(rank[by_price])
    cut = np.searchsorted(table.price_usd_per_hour[by_price], pws + PRICE_TOLERANCE_USD,
                          side="right")
    best = np.full(pws.shape, -1, dtype=np.int64)
    has = cut > 0
    best[has] = order[prefix_best[cut[has] - 1]]
    return best


def largest_single_anchor(
    table: CandidateTable, pws: FloatArray
) -> tuple[IntArray, IntArray]:
    """Per PW and GPU type, the largest affordable Single Anchor configuration.

    Returns:
        ``(index, n)``, both of shape ``(len(pws), len(table.gpus))``: the configuration's
        index and its GPU VM count, -1 and 0 where the type affords no Single Anchor (n >= 2).
    """
    pws = np.asarray(pws, dtype=np.float64)
    shape = (pws.size, len(table.gpus))
    index = np.full(shape, -1, dtype=np.int64)
    count = np.zeros(shape, dtype=np.int64)
    single = np.flatnonzero(table.architecture == Arch.SINGLE_ANCHOR)
    single = single[np.lexsort((table.n[single], table.gpu[single]))]  # by GPU type, then n
    bounds = np.searchsorted(table.gpu[single], np.arange(len(table.gpus) + 1))
    for gi in range(len(table.gpus)):
        sel = single[bounds[gi]:bounds[gi + 1]]  # price rises with n
        if sel.size == 0:
            continue
        cut = np.searchsorted(table.price_usd_per_hour[sel], pws + PRICE_TOLERANCE_USD,
                              side="right")
        has = cut > 0
        index[has, gi] = sel[cut[has] - 1]
        count[has, gi] = table.n[sel[cut[has] - 1]]
    return index, count
