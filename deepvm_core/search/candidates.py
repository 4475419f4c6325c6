"""The candidate domain: every configuration the DeepVM model allows, as numpy arrays.

This is the one place that builds the search space of ``model.md`` (stage 3): the enumeration
solver, the integer program, the PW sweep, the baselines and the job planner all read it. Every
feasible configuration, whatever the memory-node type, and without a budget::

    table = build_candidates(catalog, scenario, memory_node_choices=None)

Two levels
==========

**GPU rows** (:class:`CandidateDomain`, built by :func:`build_domain`): one row per
(architecture, GPU type v, GPU VM count n), with the GPU part of the price, Z, performance and K.

* Single Anchor: ``2 <= n``, ``n - 1 <=`` the spot limit of v, the anchor within the on-demand
  limit of v's family. Price ``OD(v) + (n - 1) SP(v)``, ``Z = ((n - 1) SPFP(v) + ODFP(v))
  K_v(n)``.
* Tiering: ``1 <= n <=`` the spot limit of v. GPU price ``n SP(v)``, ``Z = n SPFP(v) K_v(n)``.
* Both: performance ``eFLOPS(v) n K_v(n)`` (n counts the anchor); "noscale" values take K = 1.
* Both: the job's training speed ``3600 S_v(n) / t_v(1)`` epochs per hour
  (:mod:`deepvm_core.workload.speed`, from a :class:`~deepvm_core.workload.speed.SpeedBasis`: the
  job's, or the example job's); "noscale" takes S(n) = n. NaN when unknown.

Next to the rows, the memory-node types W (CPU types that hold ``f * s`` and may have at least
one node), each one's node limit, and ``n_sat(min(BW(v), BW(w)))`` per (v, w).

**Configurations** (:class:`CandidateTable`, built by :func:`build_candidates`): the Single
Anchor rows as they are, and each Tiering row paired with each memory-node type w, with the
cheapest valid ``m = floor(n / n_sat) + 1`` (the pair is left out when m exceeds w's limit).
Price ``n SP(v) + m OD(w)``; Z and performance do not depend on w.

GPU types: those with eFLOPS that the scenario's GPU filter admits (``scenario.gpu_filter``,
:mod:`deepvm_core.search.gpu_filter`); every consumer of the domain sees only those.

Limits: the node cap (``scenario.max_nodes``) per role, and with ``scenario.use_quotas`` the
vCPU quotas of each family. The scenario's PW and objective are not read: the budget is the
``pw_usd_per_hour`` argument (``None`` or ``math.inf``: no budget bound, quotas and the node
cap still bound the space), so one table serves every PW of a sweep.

Pruning
=======

Within a Tiering group (v, n), Z and performance are the same for every w, so the group ranks
by price, then VMs (m), then CPU name, at any PW. Only its ``memory_node_choices`` best members
can enter a top-``memory_node_choices`` list; :func:`build_candidates` keeps those (1 by
default: the cheapest memory node per (v, n)), and ``memory_node_choices=None`` keeps every
(v, w, n) with its cheapest valid m.

To find them it does not pair every row with every memory-node type: for one GPU type v, two
types w that give the same ``n_sat(min(BW(v), BW(w)))`` and have the same node limit need the
same m for every n and are both within their limit or both not, so between them the lower
``OD(w)`` (then the name) wins at every n. :meth:`CandidateDomain.memory_node_shortlist` keeps
the ``memory_node_choices`` best of each such class, a few classes per GPU type (the saturation
table has a handful of steps), and only those are paired with v's rows: on a catalog of 1,000
CPU types that is about 1 % of the pairs. (Two prices ``n SP + m OD(w)`` whose ``OD`` differ
could round to the same float, where the full pairing would fall back to the name; the shortlist
keeps the lower ``OD``, the cheaper one in exact arithmetic.)

Ranking: :meth:`CandidateTable.rank_order` orders configurations as stage 4 does
(:mod:`deepvm_core.search.ranking`), with one name rank per configuration
(:meth:`CandidateDomain.name_rank`). The two array types, and what they compute from
themselves, are in :mod:`deepvm_core.search.tables`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np
import numpy.typing as npt

from deepvm_core.arrays import IntArray
from deepvm_core.catalog import Catalog, GpuType
from deepvm_core.errors import InputError
from deepvm_core.model import (
    Arch,
    Scenario,
    holds_checkpoints,
    max_on_demand_vms,
    max_spot_vms,
    on_demand_flopp,
    saturation_limits,
    scaling_factor,
    spot_flopp,
)
from deepvm_core.search.gpu_filter import filter_gpu_types
from deepvm_core.search.ranking import name_ranks
from deepvm_core.search.tables import CandidateDomain, CandidateTable
from deepvm_core.units import PRICE_TOLERANCE_USD
from deepvm_core.workload.speed import SpeedBasis, default_speed_basis

__all__ = [
    "ALL_ARCHITECTURES",
    "MAX_SEARCH_ROWS",
    "build_candidates",
    "build_domain",
]

ALL_ARCHITECTURES: tuple[Arch, ...] = (Arch.SINGLE_ANCHOR, Arch.TIERING)

#: The per-row columns of a domain (:func:`_gpu_rows`); the first three hold integers.
_ROW_COLUMNS = ("architecture", "gpu", "n", "spot_usd_per_hour", "on_demand_usd_per_hour",
                "gpu_price_usd_per_hour", "z_paper", "z_noscale", "performance",
                "performance_noscale", "scaling_factor", "speed_epochs_per_hour",
                "speed_noscale_epochs_per_hour")
#: Tiering rows paired with every memory-node type per step of :func:`build_candidates`.
_CHUNK_ROWS = 1024
#: The most GPU rows (architecture, GPU type, n) a domain may have: :func:`build_domain` refuses
#: a larger search space (an :class:`~deepvm_core.errors.InputError` naming its size). Measured
#: (issue 9, 2 shared cores): ranking 1,000,000 rows takes 1-2 s and about 400 MB; the node
#: cap alone would allow 20,000,000 on a catalog at the size limit (1,000 GPU types x
#: 10,000 nodes x 2 architectures), tens of seconds and gigabytes.
MAX_SEARCH_ROWS = 1_000_000


# ----------------------------------------------------------------------------- builders


def _gpu_rows(gpu: GpuType, gi: int, arch: Arch, n: IntArray,
              speed: SpeedBasis | None) -> dict[str, npt.NDArray[Any]]:
    """The rows ``(arch, gpu, n)`` with their prices, Z, performance and K: the model's
    formulas (``gi``: the GPU type's index)."""
    eflops = float(gpu.eflops)  # type: ignore[arg-type]  # solvable types have eFLOPS
    spot, od = gpu.spot_usd_per_hour, gpu.on_demand_usd_per_hour
    k = scaling_factor(gpu.scaling, n)
    if arch == Arch.SINGLE_ANCHOR:
        spot_part = (n - 1) * spot
        od_part = np.full(n.shape, od)
        price = od + (n - 1) * spot
        z_noscale = (n - 1) * spot_flopp(gpu) + on_demand_flopp(gpu)
    else:
        spot_part = n * spot
        od_part = np.zeros(n.shape)
        price = spot_part
        z_noscale = n * spot_flopp(gpu)
    return {
        "architecture": np.full(n.shape, arch, dtype=np.int64),
        "gpu": np.full(n.shape, gi, dtype=np.int64), "n": n, "spot_usd_per_hour": spot_part,
        "on_demand_usd_per_hour": od_part, "gpu_price_usd_per_hour": price,
        "z_paper": z_noscale * k, "z_noscale": z_noscale, "performance": eflops * n * k,
        "performance_noscale": eflops * n.astype(np.float64), "scaling_factor": k,
        "speed_epochs_per_hour": np.full(n.shape, np.nan) if speed is None
        else speed.epochs_per_hour(gpu, n),
        "speed_noscale_epochs_per_hour": np.full(n.shape, np.nan) if speed is None
        else speed.epochs_per_hour(gpu, n, noscale=True),
    }


def _budget_arg(pw: float | None) -> float | None:
    """Check a budget argument; ``math.inf`` means no budget, like ``None``."""
    if pw is not None and (isinstance(pw, bool) or not isinstance(pw, (int, float))
                           or math.isnan(pw) or pw < 0):
        raise InputError("pw_usd_per_hour", pw, "must be a number >= 0, math.inf or None")
    return None if pw is None or math.isinf(pw) else float(pw)


def build_domain(
    catalog: Catalog,
    scenario: Scenario,
    *,
    pw_usd_per_hour: float | None = None,
    architectures: Iterable[Arch] = ALL_ARCHITECTURES,
    speed: SpeedBasis | None = None,
) -> CandidateDomain:
    """The GPU rows of the candidate domain (module doc) for ``scenario``'s f, s, quotas,
    node cap and GPU filter.

    Args:
        pw_usd_per_hour: a budget: keep only the rows that can be part of an affordable
            configuration on their own (a Single Anchor priced within it; a Tiering GPU price
            plus the cheapest memory node within it), and only the memory-node types affordable
            with some Tiering row. ``None`` or ``math.inf``: no budget. The scenario's own PW is
            not read.
        architectures: which architectures to build rows for.
        speed: what the training speed is computed from; ``None``: the example job's
            (:func:`~deepvm_core.workload.speed.default_speed_basis`).

    Raises:
        InputError: a negative or NaN ``pw_usd_per_hour``, or a search space of more than
            :data:`MAX_SEARCH_ROWS` rows.
    """
    pw = _budget_arg(pw_usd_per_hour)
    budget = math.inf if pw is None else pw + PRICE_TOLERANCE_USD
    wanted = {Arch(a) for a in architectures}
    gpus = filter_gpu_types(catalog.solvable_gpu_types, scenario.gpu_filter)
    cpus = [
        w for w in catalog.cpu_types
        if holds_checkpoints(w, scenario.checkpoint_gb, scenario.buffer_checkpoints)
        and max_on_demand_vms(catalog, w, scenario) >= 1
    ] if Arch.TIERING in wanted else []
    cheapest_memory_node = min((w.on_demand_usd_per_hour for w in cpus), default=math.inf)

    ranges: list[tuple[Arch, int, int, int]] = []  # (arch, GPU index, first n, last n)
    for gi, g in enumerate(gpus):
        spot, od = g.spot_usd_per_hour, g.on_demand_usd_per_hour
        spot_limit = max_spot_vms(catalog, g, scenario)
        if (Arch.SINGLE_ANCHOR in wanted and max_on_demand_vms(catalog, g, scenario) >= 1
                and od <= budget):
            top = spot_limit + 1  # n - 1 spot VMs
            if pw is not None:  # one more than affordable, cut exactly below
                top = min(top, int((budget - od) / spot) + 2)
            ranges.append((Arch.SINGLE_ANCHOR, gi, 2, top))
        if Arch.TIERING in wanted and cpus and spot + cheapest_memory_node <= budget:
            top = spot_limit
            if pw is not None:
                top = min(top, int((budget - cheapest_memory_node) / spot) + 1)
            ranges.append((Arch.TIERING, gi, 1, top))
    size = sum(max(top - low + 1, 0) for _, _, low, top in ranges)
    if size > MAX_SEARCH_ROWS:
        raise InputError("max_nodes", scenario.max_nodes, (
            f"the search space has {size:,} (architecture, GPU type, GPU VM count) rows "
            f"({len(gpus):,} GPU types, up to {scenario.max_nodes:,} VMs per role"
            f"{'' if pw is None else f' within PW {pw:g} USD/h'}), more than the "
            f"{MAX_SEARCH_ROWS:,} ranked in about a second: lower the node cap or PW, or "
            "apply the quotas"))
    blocks: list[tuple[Arch, int, IntArray]] = []
    for arch, gi, low, top in ranges:
        g = gpus[gi]
        n = np.arange(low, top + 1, dtype=np.int64)
        if arch == Arch.SINGLE_ANCHOR:
            price = g.on_demand_usd_per_hour + (n - 1) * g.spot_usd_per_hour
        else:
            price = n * g.spot_usd_per_hour + cheapest_memory_node
        blocks.append((arch, gi, n[price <= budget]))

    cheapest_tiering = min((gpus[gi].spot_usd_per_hour * int(n[0])
                            for arch, gi, n in blocks if arch == Arch.TIERING and n.size),
                           default=math.inf)
    cpus = [w for w in cpus if w.on_demand_usd_per_hour + cheapest_tiering <= budget]
    if not cpus:  # no memory node is affordable: no Tiering row can be part of a configuration
        blocks = [b for b in blocks if b[0] == Arch.SINGLE_ANCHOR]
    blocks = [b for b in blocks if b[2].size]

    basis = speed if speed is not None or not blocks else default_speed_basis(catalog)
    rows = [_gpu_rows(gpus[gi], gi, arch, n, basis) for arch, gi, n in blocks]

    def column(key: str) -> npt.NDArray[Any]:
        if rows:
            return np.concatenate([block[key] for block in rows])
        return np.zeros(0, dtype=np.int64 if key in _ROW_COLUMNS[:3] else np.float64)

    return CandidateDomain(
        gpus=gpus, cpus=tuple(cpus), pw_usd_per_hour=pw, speed_basis=basis,
        **{key: column(key) for key in _ROW_COLUMNS},
        memory_node_price_usd_per_hour=np.array([w.on_demand_usd_per_hour for w in cpus],
                                                dtype=np.float64),
        memory_node_limit=np.array([max_on_demand_vms(catalog, w, scenario) for w in cpus],
                                   dtype=np.int64),
        saturation_limit=saturation_limits(catalog.saturation, np.minimum(  # min(BW(v), BW(w))
            np.array([g.network_gbps for g in gpus], dtype=np.float64)[:, None],
            np.array([w.network_gbps for w in cpus], dtype=np.float64)[None, :])),
        gpu_rank=name_ranks([g.name for g in gpus]),
        cpu_rank=name_ranks([w.name for w in cpus]),
    )


def build_candidates(
    catalog: Catalog,
    scenario: Scenario,
    *,
    pw_usd_per_hour: float | None = None,
    memory_node_choices: int | None = 1,
    architectures: Iterable[Arch] = ALL_ARCHITECTURES,
    speed: SpeedBasis | None = None,
) -> CandidateTable:
    """Every configuration of the candidate domain (module doc).

    Args:
        pw_usd_per_hour: keep only configurations priced at most this (USD/hour); ``None`` or
            ``math.inf`` (the default): no budget bound. The scenario's own PW is not read.
        memory_node_choices: per Tiering (v, n), keep the best this many memory-node types
            (by price, then m, then CPU name); ``None`` keeps every (v, w, n) with its
            cheapest valid m.
        architectures: which architectures to enumerate.
        speed: what the training speed is computed from (:func:`build_domain`).

    Raises:
        InputError: a bad ``pw_usd_per_hour`` or ``memory_node_choices``, or a search space of
            more than :data:`MAX_SEARCH_ROWS` rows.
    """
    if memory_node_choices is not None and (
            isinstance(memory_node_choices, bool) or not isinstance(memory_node_choices, int)
            or memory_node_choices < 1):
        raise InputError("memory_node_choices", memory_node_choices,
                         "must be a whole number >= 1 or None (every memory-node type)")
    domain = build_domain(catalog, scenario, pw_usd_per_hour=pw_usd_per_hour,
                          architectures=architectures, speed=speed)
    single = np.flatnonzero(domain.architecture == Arch.SINGLE_ANCHOR)
    tiering = np.flatnonzero(domain.architecture == Arch.TIERING)
    width = len(domain.cpus)
    parts_rows, parts_cpus = [single], [np.full(single.shape, -1, dtype=np.int64)]
    shortlist = None if memory_node_choices is None else domain.memory_node_shortlist(
        memory_node_choices)
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
