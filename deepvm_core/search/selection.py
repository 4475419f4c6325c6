"""The best k affordable configurations of a candidate table, without sorting the whole table:
only the contenders (objective at least the k-th largest, ties kept) are ranked, in the one order
of :func:`deepvm_core.search.ranking.rank_order` (through
:meth:`~deepvm_core.search.tables.CandidateTable.rank_order`)."""

from __future__ import annotations

from typing import TypedDict, Unpack

import numpy as np

from deepvm_core.arrays import IntArray
from deepvm_core.model import Arch, Objective
from deepvm_core.search.tables import CandidateTable
from deepvm_core.units import PRICE_TOLERANCE_USD

__all__ = ["Pick", "contenders", "top_indices"]


class Pick(TypedDict, total=False):
    """The options of a selection from a table (:func:`top_indices`, :func:`contenders`,
    :func:`~deepvm_core.search.solvers.enumeration.top_configurations`).

    Attributes:
        noscale: rank by the objective with K = 1 (speed: S(n) = n), as DeepVM-NoScale does;
            default False.
        architecture: only that architecture's configurations; default ``None``, both.
    """

    noscale: bool
    architecture: Arch | None


def top_indices(table: CandidateTable, pw_usd_per_hour: float, objective: Objective, k: int,
                **pick: Unpack[Pick]) -> IntArray:
    """The best ``k`` affordable configurations (price <= PW; ``math.inf``: all) of ``table``,
    best first in the order of :func:`rank_order`.

    Only the configurations whose objective reaches the k-th largest (ties included) can be
    among them, so only those are ranked (a partition instead of a sort of the whole table).
    """
    indices = contenders(table, pw_usd_per_hour, objective, k, **pick)
    return table.rank_order(objective, noscale=pick.get("noscale", False), indices=indices)[:k]


def contenders(table: CandidateTable, pw_usd_per_hour: float, objective: Objective, k: int,
               **pick: Unpack[Pick]) -> IntArray:
    """The affordable configurations whose objective reaches the k-th largest (ties kept)."""
    mask = table.price_usd_per_hour <= pw_usd_per_hour + PRICE_TOLERANCE_USD
    architecture = pick.get("architecture")
    if architecture is not None:
        mask &= table.architecture == architecture
    indices = np.flatnonzero(mask)
    if 0 < k < indices.size:
        values = table.objective_values(objective, noscale=pick.get("noscale", False))[indices]
        kth_largest = np.partition(values, indices.size - k)[indices.size - k]
        indices = indices[values >= kth_largest]
    return indices
