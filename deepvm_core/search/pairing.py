"""Configurations from a candidate domain: every Single Anchor row, and each Tiering row
(v, n) paired with its best memory-node types (:func:`candidate_table`), the domain's own
arrays doing the arithmetic (:meth:`~deepvm_core.search.tables.CandidateDomain.tiering_pairs`,
:meth:`~deepvm_core.search.tables.CandidateDomain.configurations`). The domain is built once
per scenario (:func:`deepvm_core.search.candidates.build_domain`) and every table of the
scenario is paired from it.

Pruning
=======

Within a Tiering group (v, n), Z and performance are the same for every w, so the group ranks
by price, then VMs (m), then CPU name, at any PW. Only its ``memory_node_choices`` best members
can enter a top-``memory_node_choices`` list; :func:`candidate_table` keeps those (1 by
default: the cheapest memory node per (v, n)), and ``memory_node_choices=None`` keeps every
(v, w, n) with its cheapest valid m.

To find them it does not pair every row with every memory-node type: for one GPU type v, two
types w that give the same ``n_sat(min(BW(v), BW(w)))`` and have the same node limit need the
same m for every n and are both within their limit or both not, so between them the lower
``OD(w)`` (then the name) wins at every n. :func:`memory_node_shortlist` keeps
the ``memory_node_choices`` best of each such class, a few classes per GPU type (the saturation
table has a handful of steps), and only those are paired with v's rows: on a catalog of 1,000
CPU types that is about 1 % of the pairs. (Two prices ``n SP + m OD(w)`` whose ``OD`` differ
could round to the same float, where the full pairing would fall back to the name; the shortlist
keeps the lower ``OD``, the cheaper one in exact arithmetic.)
"""

from __future__ import annotations

import numpy as np

from deepvm_core.arrays import IntArray
from deepvm_core.errors import InputError
from deepvm_core.model import Arch
from deepvm_core.search.tables import CandidateDomain, CandidateTable

__all__ = ["candidate_table", "memory_node_shortlist"]

#: Tiering rows paired with every memory-node type per step of :func:`candidate_table`.
_CHUNK_ROWS = 1024


def candidate_table(domain: CandidateDomain, memory_node_choices: int | None = 1
                    ) -> CandidateTable:
    """The configurations of ``domain``: every Single Anchor row, and each Tiering row paired
    with its best ``memory_node_choices`` memory-node types (by price, then m, then CPU name;
    ``None``: every one, with its cheapest valid m). Built from a domain in hand, so that one
    domain serves every table of a scenario.

    Raises:
        InputError: a bad ``memory_node_choices``.
    """
    if memory_node_choices is not None and (
            isinstance(memory_node_choices, bool) or not isinstance(memory_node_choices, int)
            or memory_node_choices < 1):
        raise InputError("memory_node_choices", memory_node_choices,
                         "must be a whole number >= 1 or None (every memory-node type)")
    single = np.flatnonzero(domain.architecture == Arch.SINGLE_ANCHOR)
    tiering = np.flatnonzero(domain.architecture == Arch.TIERING)
    width = len(domain.cpus)
    parts_rows, parts_cpus = [single], [np.full(single.shape, -1, dtype=np.int64)]
    shortlist = None if memory_node_choices is None else memory_node_shortlist(
        domain, memory_node_choices)
    for start in range(0, tiering.size if width else 0, _CHUNK_ROWS):  # chunks stay in cache
        chunk = tiering[start:start + _CHUNK_ROWS]
        if shortlist is None:
            m, price, ok = domain.tiering_pairs(chunk)  # shape (rows, W)
            pair_row, pair_cpu = np.nonzero(ok)
        else:
            listed = shortlist[domain.gpu[chunk]]  # shape (rows, S): CPU indices, -1 none
            cpus = np.maximum(listed, 0)
            m, price, ok = domain.tiering_pairs(
                np.broadcast_to(chunk[:, None], listed.shape), cpus)
            ok &= listed >= 0
            key = np.where(ok, price, np.inf)
            if memory_node_choices == 1:  # argmin of (price, m, CPU name), without a sort
                tie = m * width + domain.cpu_rank[cpus]
                tie = np.where(key == key.min(axis=1, keepdims=True), tie,
                               np.iinfo(np.int64).max)
                keep = np.argmin(tie, axis=1)[:, None]
            else:
                order = np.lexsort((domain.cpu_rank[cpus], m, key), axis=1)
                keep = order[:, :memory_node_choices]
            pair_row = np.repeat(np.arange(chunk.size), keep.shape[1])
            column = keep.ravel()
            valid = ok[pair_row, column]
            pair_row, pair_cpu = pair_row[valid], cpus[pair_row[valid], column[valid]]
        parts_rows.append(chunk[pair_row])
        parts_cpus.append(pair_cpu.astype(np.int64))
    return domain.configurations(np.concatenate(parts_rows), np.concatenate(parts_cpus))


def memory_node_shortlist(domain: CandidateDomain, per_class: int) -> IntArray:
    """Per GPU type, the memory-node types worth pairing with its Tiering rows when only the
    best ``per_class`` of each (v, n) are kept (module doc, "Pruning").

    Returns:
        CPU indices of shape ``(len(gpus), S)``, -1 where a GPU type has fewer than ``S``:
        for each class of types with the same n_sat with v and the same node limit, its
        ``per_class`` cheapest (on-demand price, then name).
    """
    shape = (len(domain.gpus), len(domain.cpus))
    if 0 in shape:
        return np.zeros((shape[0], 0), dtype=np.int64)
    nsat = domain.saturation_limit
    limit = np.broadcast_to(domain.memory_node_limit, shape)
    order = np.lexsort((np.broadcast_to(domain.cpu_rank, shape),
                        np.broadcast_to(domain.memory_node_price_usd_per_hour, shape),
                        limit, nsat), axis=1)
    sorted_nsat = np.take_along_axis(nsat, order, axis=1)
    sorted_limit = np.take_along_axis(limit, order, axis=1)
    first = np.ones(shape, dtype=bool)  # first member of its class, in sorted order
    first[:, 1:] = ((sorted_nsat[:, 1:] != sorted_nsat[:, :-1])
                    | (sorted_limit[:, 1:] != sorted_limit[:, :-1]))
    position = np.broadcast_to(np.arange(shape[1]), shape)
    class_start = np.maximum.accumulate(np.where(first, position, 0), axis=1)
    keep = position - class_start < per_class
    width = int(keep.sum(axis=1).max())
    kept = np.argsort(~keep, axis=1, kind="stable")[:, :width]  # kept ones first, in order
    return np.where(np.take_along_axis(keep, kept, axis=1),
                    np.take_along_axis(order, kept, axis=1), -1)
