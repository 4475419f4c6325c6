"""The candidate domain: every configuration the DeepVM model allows, as numpy arrays.

This is the one place that builds the search space of ``model.md`` (stage 3): the enumeration
solver, the integer program, the PW sweep, the baselines and the job planner all read it. A
scenario's domain is built once and handed down (:func:`build_domain`); its configurations
are a table paired from it (:func:`~deepvm_core.search.pairing.candidate_table`), and the
integer program solves on the domain itself. Every feasible configuration, whatever the
memory-node type, and without a budget::

    table = candidate_table(build_domain(catalog, scenario), memory_node_choices=None)

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
one node), each one's node limit, and ``n_sat(min(BW(v), BW(w)))`` per (v, w); the scenario's
limits on each GPU type, read once (:class:`~deepvm_core.search.tables.Limits`); and, for a
domain cut at a budget, the rows of the smallest n of each (architecture, GPU type) at any
price (``cheapest``): the cheapest configurations beyond PW, which explanations name, come
from the same build.

**Configurations** (:class:`CandidateTable`, built by
:func:`~deepvm_core.search.pairing.candidate_table`): the Single
Anchor rows as they are, and each Tiering row paired with each memory-node type w, with the
cheapest valid ``m = floor(n / n_sat) + 1`` (the pair is left out when m exceeds w's limit).
Price ``n SP(v) + m OD(w)``; Z and performance do not depend on w.

GPU types: those with eFLOPS that the scenario's GPU filter admits (``scenario.gpu_filter``,
:mod:`deepvm_core.search.gpu_filter`) and, with a transformer job's speed basis, only those one
replica fits on (:meth:`~deepvm_core.workload.speed.SpeedBasis.admits`), at n = k, 2k, ... VMs
when a replica spans k VMs; every consumer of the domain sees only those.

Limits: the node cap (``scenario.max_nodes``) per role, and with ``scenario.use_quotas`` the
vCPU quotas of each family. The scenario's PW and objective are not read: the budget is the
``pw_usd_per_hour`` argument (``None`` or ``math.inf``: no budget bound, quotas and the node
cap still bound the space), so one table serves every PW of a sweep.

Pruning: a table keeps the best ``memory_node_choices`` memory-node types of each Tiering
(v, n) only (:mod:`deepvm_core.search.pairing`).

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
from deepvm_core.catalog import Catalog, CpuType, GpuType
from deepvm_core.errors import InputError
from deepvm_core.model import (
    Arch,
    Scenario,
    checkpoint_buffer_gb,
    holds_checkpoints,
    max_on_demand_vms,
    max_spot_vms,
    on_demand_flopp,
    saturation_limits,
    scaling_factor,
    spot_flopp,
)
from deepvm_core.search.gpu_filter import filter_gpu_types
from deepvm_core.search.pairing import candidate_table
from deepvm_core.search.ranking import name_ranks
from deepvm_core.search.tables import ROW_COLUMNS, CandidateDomain, CandidateTable, Limits
from deepvm_core.units import PRICE_TOLERANCE_USD
from deepvm_core.workload.speed import SpeedBasis, default_speed_basis

__all__ = [
    "ALL_ARCHITECTURES",
    "MAX_SEARCH_ROWS",
    "build_candidates",
    "build_domain",
]

ALL_ARCHITECTURES: tuple[Arch, ...] = (Arch.SINGLE_ANCHOR, Arch.TIERING)

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
    admitted = filter_gpu_types(catalog.gpu_types, scenario.gpu_filter)
    gpus = tuple(g for g in admitted if g.solvable and (  # a transformer job: those it fits on
        speed is None or speed.admits(g.name)))
    # the scenario's limits, read once here (the domain carries them to whoever asks why)
    limits = Limits(
        spot=np.array([max_spot_vms(catalog, g, scenario) for g in gpus], dtype=np.int64),
        on_demand=np.array([max_on_demand_vms(catalog, g, scenario) for g in gpus],
                           dtype=np.int64),
        buffer_gb=checkpoint_buffer_gb(scenario.checkpoint_gb, scenario.buffer_checkpoints),
        gpu_filter_admits=tuple(g.name for g in admitted))
    memory = [(w, max_on_demand_vms(catalog, w, scenario)) for w in catalog.cpu_types
              if holds_checkpoints(w, scenario.checkpoint_gb, scenario.buffer_checkpoints)
              ] if Arch.TIERING in wanted else []  # (CPU type, its node limit)
    memory = [(w, limit) for w, limit in memory if limit >= 1]
    cheapest_memory_node = min((w.on_demand_usd_per_hour for w, _ in memory), default=math.inf)

    ranges: list[tuple[Arch, int, int, int]] = []  # (arch, GPU index, first n, last n)
    floor: list[tuple[Arch, int, IntArray]] = []  # the smallest n of each, at any price
    for gi, g in enumerate(gpus):
        spot, od = g.spot_usd_per_hour, g.on_demand_usd_per_hour
        spot_limit = int(limits.spot[gi])
        anchor = Arch.SINGLE_ANCHOR in wanted and limits.on_demand[gi] >= 1
        if anchor and spot_limit >= 1:
            floor.append((Arch.SINGLE_ANCHOR, gi, np.array([2], dtype=np.int64)))
        if anchor and od <= budget:
            top = spot_limit + 1  # n - 1 spot VMs
            if pw is not None:  # one more than affordable, cut exactly below
                top = min(top, int((budget - od) / spot) + 2)
            ranges.append((Arch.SINGLE_ANCHOR, gi, 2, top))
        if Arch.TIERING in wanted and memory and spot_limit >= 1:
            floor.append((Arch.TIERING, gi, np.array([1], dtype=np.int64)))
        if Arch.TIERING in wanted and memory and spot + cheapest_memory_node <= budget:
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
        n = n[n % _replica_vms(speed, g) == 0]
        if arch == Arch.SINGLE_ANCHOR:
            price = g.on_demand_usd_per_hour + (n - 1) * g.spot_usd_per_hour
        else:
            price = n * g.spot_usd_per_hour + cheapest_memory_node
        blocks.append((arch, gi, n[price <= budget]))

    cheapest_tiering = min((gpus[gi].spot_usd_per_hour * int(n[0])
                            for arch, gi, n in blocks if arch == Arch.TIERING and n.size),
                           default=math.inf)
    affordable = [(w, limit) for w, limit in memory
                  if w.on_demand_usd_per_hour + cheapest_tiering <= budget]
    if not affordable:  # no memory node is affordable: no Tiering row can be part of one
        blocks = [b for b in blocks if b[0] == Arch.SINGLE_ANCHOR]
    blocks = [b for b in blocks if b[2].size]

    floor = [(arch, gi, _whole_replicas(n, _replica_vms(speed, gpus[gi])))
             for arch, gi, n in floor]
    example: list[SpeedBasis | None] = []  # the example job's basis, derived once if needed

    def basis_for(rows: list[tuple[Arch, int, IntArray]]) -> SpeedBasis | None:
        if speed is not None or not rows:
            return speed
        if not example:
            example.append(default_speed_basis(catalog))
        return example[0]

    cheapest = None if pw is None else _assemble(  # the smallest n of each, at any price
        catalog, gpus, memory, floor, basis_for(floor), None, limits, None)
    return _assemble(catalog, gpus, affordable, blocks, basis_for(blocks), pw, limits, cheapest)


def _replica_vms(speed: SpeedBasis | None, gpu: GpuType) -> int:
    """k, the VMs of ``gpu`` one replica of the job spans (1 without a transformer job's
    sharding across VMs): clusters of ``gpu`` are whole numbers of replicas, n = k, 2k, ..."""
    k = None if speed is None else speed.replica_vms(gpu.name)
    return 1 if k is None else k


def _whole_replicas(n: IntArray, k: int) -> IntArray:
    """Each smallest n raised to the next multiple of k."""
    return np.asarray(-(-n // k) * k, dtype=np.int64)


def _assemble(catalog: Catalog, gpus: tuple[GpuType, ...], memory: list[tuple[CpuType, int]],
              blocks: list[tuple[Arch, int, IntArray]], basis: SpeedBasis | None,
              pw: float | None, limits: Limits,
              cheapest: CandidateDomain | None) -> CandidateDomain:
    """The arrays of a domain of ``blocks`` (architecture, GPU index, GPU VM counts) over the
    memory-node types of ``memory`` (CPU type, its node limit)."""
    rows = [_gpu_rows(gpus[gi], gi, arch, n, basis) for arch, gi, n in blocks]
    cpus = [w for w, _ in memory]

    def column(key: str) -> npt.NDArray[Any]:
        if rows:
            return np.concatenate([block[key] for block in rows])
        return np.zeros(0, dtype=np.int64 if key in ROW_COLUMNS[:3] else np.float64)

    return CandidateDomain(
        gpus=gpus, cpus=tuple(cpus), pw_usd_per_hour=pw, speed_basis=basis,
        **{key: column(key) for key in ROW_COLUMNS},
        memory_node_price_usd_per_hour=np.array([w.on_demand_usd_per_hour for w in cpus],
                                                dtype=np.float64),
        memory_node_limit=np.array([limit for _, limit in memory], dtype=np.int64),
        saturation_limit=saturation_limits(catalog.saturation, np.minimum(  # min(BW(v), BW(w))
            np.array([g.network_gbps for g in gpus], dtype=np.float64)[:, None],
            np.array([w.network_gbps for w in cpus], dtype=np.float64)[None, :])),
        gpu_rank=name_ranks([g.name for g in gpus]),
        cpu_rank=name_ranks([w.name for w in cpus]),
        limits=limits,
        cheapest=cheapest,
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
    return candidate_table(build_domain(catalog, scenario, pw_usd_per_hour=pw_usd_per_hour,
                                        architectures=architectures, speed=speed),
                           memory_node_choices)
