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
  (:mod:`deepvm_core.speed`, from a :class:`~deepvm_core.speed.SpeedBasis`: the job's, or the
  example job's); "noscale" takes S(n) = n. NaN when unknown.

Next to the rows, the memory-node types W (CPU types that hold ``f * s`` and may have at least
one node), each one's node limit, and ``n_sat(min(BW(v), BW(w)))`` per (v, w).

**Configurations** (:class:`CandidateTable`, built by :func:`build_candidates`): the Single
Anchor rows as they are, and each Tiering row paired with each memory-node type w, with the
cheapest valid ``m = floor(n / n_sat) + 1`` (the pair is left out when m exceeds w's limit).
Price ``n SP(v) + m OD(w)``; Z and performance do not depend on w.

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
(:meth:`CandidateDomain.name_rank`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from deepvm_core.catalog import Catalog, CpuType, GpuType
from deepvm_core.errors import InputError
from deepvm_core.model import (
    PRICE_TOLERANCE_USD,
    Arch,
    Configuration,
    FloatArray,
    IntArray,
    Objective,
    Scenario,
    SignedArray,
    holds_checkpoints,
    max_on_demand_vms,
    max_spot_vms,
    memory_nodes_needed,
    on_demand_flopp,
    saturation_limits,
    scaling_factor,
    spot_flopp,
)
from deepvm_core.search.ranking import combined_name_rank, name_ranks, rank_order
from deepvm_core.speed import SpeedBasis, default_speed_basis

__all__ = [
    "ALL_ARCHITECTURES",
    "MAX_SEARCH_ROWS",
    "CandidateDomain",
    "CandidateTable",
    "build_candidates",
    "build_domain",
]

ALL_ARCHITECTURES: tuple[Arch, ...] = (Arch.SINGLE_ANCHOR, Arch.TIERING)

BoolArray = npt.NDArray[np.bool_]
#: The per-row columns of a domain (:func:`_gpu_rows`); the first three hold integers.
_ROW_COLUMNS = ("architecture", "gpu", "n", "spot_usd_per_hour", "on_demand_usd_per_hour",
                "gpu_price_usd_per_hour", "z_paper", "z_noscale", "performance",
                "performance_noscale", "scaling_factor", "speed", "speed_noscale")
#: Tiering rows paired with every memory-node type per step of :func:`build_candidates`.
_CHUNK_ROWS = 1024
#: The most GPU rows (architecture, GPU type, n) a domain may have: :func:`build_domain` refuses
#: a larger search space (an :class:`~deepvm_core.errors.InputError` naming its size). Measured
#: (issue 9, 2 shared cores): ranking 1,000,000 rows takes 1-2 s and about 400 MB; the node
#: cap alone would allow 20,000,000 on a catalog at the size limit (1,000 GPU types x
#: 10,000 nodes x 2 architectures), tens of seconds and gigabytes.
MAX_SEARCH_ROWS = 1_000_000


# ----------------------------------------------------------------------------- GPU rows


@dataclass(frozen=True, eq=False)
class CandidateDomain:
    """The candidate domain, one "GPU row" per (architecture, GPU type, n) (module doc).

    Arrays of one entry per row unless said otherwise. Prices are USD per hour.

    Attributes:
        gpus: the GPU types (those with eFLOPS), indexed by ``gpu``.
        cpus: the memory-node types W (hold ``f * s``, at least one node allowed, and, under a
            budget, affordable with some Tiering row), indexed by CPU index.
        pw_usd_per_hour: the budget PW the domain was cut at, or ``None`` (no budget bound).
        architecture: :class:`~deepvm_core.model.Arch` code.
        gpu: index into ``gpus``.
        n: GPU VMs, every one (the Single Anchor's anchor included).
        spot_usd_per_hour: spot part of the GPU price, ``(n - 1) SP`` or ``n SP``.
        on_demand_usd_per_hour: on-demand part of the GPU price, the anchor's ``OD`` (0 for
            Tiering).
        gpu_price_usd_per_hour: the GPU price, ``OD + (n - 1) SP`` or ``n SP``.
        z_paper, z_noscale: the paper's Z, with the true K and with K = 1.
        performance, performance_noscale: ``eFLOPS n K(n)`` and ``eFLOPS n``.
        scaling_factor: K(n).
        speed, speed_noscale: the job's epochs per hour, ``3600 S(n) / t(1)``, and with
            S(n) = n (NaN when unknown).
        speed_basis: what speed was computed from, or ``None`` (unknown: no GPU type to take
            as the reference).
        memory_node_price_usd_per_hour: per CPU type, its on-demand price OD(w).
        memory_node_limit: per CPU type, the most memory nodes (node cap, on-demand quota).
        saturation_limit: per (GPU type, CPU type), ``n_sat(min(BW(v), BW(w)))``; shape (V, W).
        gpu_rank, cpu_rank: per GPU type and per CPU type, the alphabetical rank of its name.
    """

    gpus: tuple[GpuType, ...]
    cpus: tuple[CpuType, ...]
    pw_usd_per_hour: float | None
    architecture: IntArray
    gpu: IntArray
    n: IntArray
    spot_usd_per_hour: FloatArray
    on_demand_usd_per_hour: FloatArray
    gpu_price_usd_per_hour: FloatArray
    z_paper: FloatArray
    z_noscale: FloatArray
    performance: FloatArray
    performance_noscale: FloatArray
    scaling_factor: FloatArray
    speed: FloatArray
    speed_noscale: FloatArray
    speed_basis: SpeedBasis | None
    memory_node_price_usd_per_hour: FloatArray
    memory_node_limit: IntArray
    saturation_limit: IntArray
    gpu_rank: IntArray
    cpu_rank: IntArray

    def __len__(self) -> int:
        return int(self.n.shape[0])

    @property
    def budget_usd_per_hour(self) -> float:
        """The largest affordable price: PW plus the float tolerance, or infinity."""
        if self.pw_usd_per_hour is None:
            return math.inf
        return self.pw_usd_per_hour + PRICE_TOLERANCE_USD

    def objective_values(self, objective: Objective, *, noscale: bool = False) -> FloatArray:
        """The value of every row under ``objective`` (K = 1, or S(n) = n, if ``noscale``)."""
        return _objective_values(self, objective, noscale)

    @property
    def cpu_name_rank(self) -> IntArray:
        """Per CPU type, its part of the name rank: ``cpu_rank + 1`` (see :meth:`name_rank`)."""
        return self.cpu_rank + 1

    def name_rank(self, rows: IntArray, cpus: IntArray | None = None) -> IntArray:
        """The name rank (:func:`combined_name_rank`) of (GPU row, CPU index) pairs, CPU -1
        for Single Anchor; without ``cpus``, the rows' part alone.

        The name rank is the rows' part plus :attr:`cpu_name_rank` (0 without CPU): the integer
        program uses the two parts as coefficients.
        """
        part = combined_name_rank(self.architecture[rows], self.gpu_rank[self.gpu[rows]],
                                  np.full(rows.shape, -1, dtype=np.int64), len(self.gpus),
                                  len(self.cpus))
        if cpus is None:
            return part
        return part + np.where(cpus >= 0, np.append(self.cpu_name_rank, 0)[cpus], 0)

    def memory_node_shortlist(self, per_class: int) -> IntArray:
        """Per GPU type, the memory-node types worth pairing with its Tiering rows when only the
        best ``per_class`` of each (v, n) are kept (module doc, "Pruning").

        Returns:
            CPU indices of shape ``(len(gpus), S)``, -1 where a GPU type has fewer than ``S``:
            for each class of types with the same n_sat with v and the same node limit, its
            ``per_class`` cheapest (on-demand price, then name).
        """
        shape = (len(self.gpus), len(self.cpus))
        if 0 in shape:
            return np.zeros((shape[0], 0), dtype=np.int64)
        nsat = self.saturation_limit
        limit = np.broadcast_to(self.memory_node_limit, shape)
        order = np.lexsort((np.broadcast_to(self.cpu_rank, shape),
                            np.broadcast_to(self.memory_node_price_usd_per_hour, shape),
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

    def tiering_pairs(self, rows: IntArray, cpus: IntArray | None = None) -> tuple[
            SignedArray, FloatArray, BoolArray]:
        """For Tiering rows paired with CPU indices (arrays of one shape), or with every
        memory-node type (``cpus`` ``None``: arrays of shape ``(len(rows), len(cpus))``): the
        cheapest valid m, the price, and whether the pair is a configuration (m within the CPU
        type's limit, price within the budget)."""
        if cpus is None:  # whole rows of small integers: fast gathers and divisions
            nsat: SignedArray = self.saturation_limit.astype(np.int32)[self.gpu[rows]]
            n: SignedArray = self.n[rows].astype(np.int32)[:, None]
            gpu_price = self.gpu_price_usd_per_hour[rows][:, None]
            node_price = self.memory_node_price_usd_per_hour[None, :]
            limit = self.memory_node_limit[None, :]
        else:
            nsat = self.saturation_limit[self.gpu[rows], cpus]
            n = self.n[rows]
            gpu_price = self.gpu_price_usd_per_hour[rows]
            node_price = self.memory_node_price_usd_per_hour[cpus]
            limit = self.memory_node_limit[cpus]
        m = memory_nodes_needed(n, nsat)
        price = gpu_price + m * node_price
        ok = (m <= limit) & (price <= self.budget_usd_per_hour)
        return m, price, ok

    def configurations(self, rows: Sequence[int] | IntArray,
                       cpus: Sequence[int] | IntArray) -> CandidateTable:
        """The configurations of (GPU row, CPU index) pairs, CPU -1 for Single Anchor rows;
        pairs that are not configurations (too many memory nodes, over the budget) are left
        out, the others keep their order."""
        row = np.asarray(rows, dtype=np.int64)
        cpu = np.asarray(cpus, dtype=np.int64)
        if row.shape != cpu.shape:
            raise ValueError(f"{row.size} rows but {cpu.size} CPU indices")
        tiering = self.architecture[row] == Arch.TIERING
        if np.any(tiering != (cpu >= 0)):
            raise ValueError("Tiering rows need a CPU index, Single Anchor rows -1")
        m = np.zeros(row.shape, dtype=np.int64)
        price = self.gpu_price_usd_per_hour[row]
        od = self.on_demand_usd_per_hour[row]
        keep = np.ones(row.shape, dtype=bool)
        if np.any(tiering):
            m_tr, price_tr, ok = self.tiering_pairs(row[tiering], cpu[tiering])
            m[tiering] = m_tr
            price[tiering] = price_tr
            od[tiering] = m_tr * self.memory_node_price_usd_per_hour[cpu[tiering]]
            keep[tiering] = ok
        row, cpu, m, price, od = row[keep], cpu[keep], m[keep], price[keep], od[keep]
        return CandidateTable(
            domain=self, row=row, architecture=self.architecture[row], gpu=self.gpu[row],
            cpu=cpu, n=self.n[row], m=m, price_usd_per_hour=price,
            on_demand_usd_per_hour=od, spot_usd_per_hour=self.spot_usd_per_hour[row],
            z_paper=self.z_paper[row], z_noscale=self.z_noscale[row],
            performance=self.performance[row],
            performance_noscale=self.performance_noscale[row],
            scaling_factor=self.scaling_factor[row], speed=self.speed[row],
            speed_noscale=self.speed_noscale[row], name_rank=self.name_rank(row, cpu),
        )


def _objective_values(arrays: CandidateDomain | CandidateTable, objective: Objective,
                      noscale: bool) -> FloatArray:
    """The objective column of a domain or a table (K = 1, or S(n) = n, if ``noscale``).

    Raises:
        InputError: ``speed`` while the speed is unknown (no reference type).
    """
    if objective == "paper":
        return arrays.z_noscale if noscale else arrays.z_paper
    if objective == "speed":
        values = arrays.speed_noscale if noscale else arrays.speed
        if np.any(np.isnan(values)):
            raise InputError("objective", objective, "the training speed is unknown for some "
                             "GPU type (no one-VM epoch time: give the reference type eFLOPS "
                             "or a measured one-node time)")
        return values
    return arrays.performance_noscale if noscale else arrays.performance


def _gpu_rows(gpu: GpuType, gi: int, arch: Arch, n: IntArray,
              speed: SpeedBasis | None) -> dict[str, npt.NDArray[Any]]:
    """The rows ``(arch, gpu, n)`` with their prices, Z, performance, K and speed: the model's
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
        "speed": np.full(n.shape, np.nan) if speed is None else speed.epochs_per_hour(gpu, n),
        "speed_noscale": np.full(n.shape, np.nan) if speed is None
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
    """The GPU rows of the candidate domain (module doc) for ``scenario``'s f, s, quotas and
    node cap.

    Args:
        pw_usd_per_hour: a budget: keep only the rows that can be part of an affordable
            configuration on their own (a Single Anchor priced within it; a Tiering GPU price
            plus the cheapest memory node within it), and only the memory-node types affordable
            with some Tiering row. ``None`` or ``math.inf``: no budget. The scenario's own PW is
            not read.
        architectures: which architectures to build rows for.
        speed: what the training speed is computed from; ``None``: the example job's
            (:func:`~deepvm_core.speed.default_speed_basis`).

    Raises:
        InputError: a negative or NaN ``pw_usd_per_hour``, or a search space of more than
            :data:`MAX_SEARCH_ROWS` rows.
    """
    pw = _budget_arg(pw_usd_per_hour)
    budget = math.inf if pw is None else pw + PRICE_TOLERANCE_USD
    wanted = {Arch(a) for a in architectures}
    gpus = catalog.solvable_gpu_types
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


# ----------------------------------------------------------------------------- configurations


@dataclass(frozen=True, eq=False)
class CandidateTable:
    """Configurations as parallel arrays, one entry each (module doc). Prices are USD per hour.

    Attributes:
        domain: the GPU rows, types and limits the table was built from.
        row: the configuration's GPU row in ``domain``.
        architecture: :class:`~deepvm_core.model.Arch` code (0 Single Anchor, 1 Tiering).
        gpu: index into ``gpus``; cpu: index into ``cpus``, -1 for Single Anchor.
        n: GPU VMs, every one (the anchor included); m: memory nodes (0 for Single Anchor).
        price_usd_per_hour: the hourly price, ``on_demand_usd_per_hour + spot_usd_per_hour``.
        on_demand_usd_per_hour: its on-demand part: the anchor's ``OD(v)``, or ``m OD(w)``.
        spot_usd_per_hour: its spot part: ``(n - 1) SP(v)``, or ``n SP(v)``.
        z_paper, z_noscale: the paper's Z, with the true K and with K = 1.
        performance, performance_noscale: ``eFLOPS n K(n)`` and ``eFLOPS n``.
        scaling_factor: K(n).
        speed, speed_noscale: the job's epochs per hour, and with S(n) = n (NaN: unknown).
        name_rank: the tie-break on names (:func:`combined_name_rank`).
    """

    domain: CandidateDomain
    row: IntArray
    architecture: IntArray
    gpu: IntArray
    cpu: IntArray
    n: IntArray
    m: IntArray
    price_usd_per_hour: FloatArray
    on_demand_usd_per_hour: FloatArray
    spot_usd_per_hour: FloatArray
    z_paper: FloatArray
    z_noscale: FloatArray
    performance: FloatArray
    performance_noscale: FloatArray
    scaling_factor: FloatArray
    speed: FloatArray
    speed_noscale: FloatArray
    name_rank: IntArray

    def __len__(self) -> int:
        return int(self.n.shape[0])

    @property
    def gpus(self) -> tuple[GpuType, ...]:
        """The GPU types ``gpu`` indexes."""
        return self.domain.gpus

    @property
    def cpus(self) -> tuple[CpuType, ...]:
        """The memory-node types ``cpu`` indexes."""
        return self.domain.cpus

    @property
    def total_vms(self) -> IntArray:
        """Every VM of each configuration, ``n + m``."""
        return self.n + self.m

    def objective_values(self, objective: Objective, *, noscale: bool = False) -> FloatArray:
        """The value of every configuration under ``objective`` (K = 1, or S(n) = n, if
        ``noscale``)."""
        return _objective_values(self, objective, noscale)

    def rank_order(self, objective: Objective, *, noscale: bool = False,
                   indices: IntArray | None = None) -> IntArray:
        """Indices best first (stage 4, :func:`rank_order`), of ``indices`` or of all."""
        idx = np.arange(len(self)) if indices is None else np.asarray(indices, dtype=np.int64)
        order = rank_order(self.objective_values(objective, noscale=noscale)[idx],
                           self.price_usd_per_hour[idx], self.total_vms[idx],
                           self.name_rank[idx])
        return idx[order]

    def configuration(self, index: int) -> Configuration:
        """The :class:`~deepvm_core.model.Configuration` of entry ``index``."""
        i = int(index)
        n, m = int(self.n[i]), int(self.m[i])
        arch = Arch(int(self.architecture[i]))
        gpu = self.gpus[int(self.gpu[i])]
        is_sa = arch == Arch.SINGLE_ANCHOR
        basis = self.domain.speed_basis
        speed = float(self.speed[i])
        known = basis is not None and math.isfinite(speed)
        return Configuration(
            architecture=arch.key,
            gpu=gpu.name,
            gpu_spot=n - 1 if is_sa else n,
            gpu_on_demand=1 if is_sa else 0,
            cpu=None if is_sa else self.cpus[int(self.cpu[i])].name,
            memory_nodes=m,
            hourly_price_usd=float(self.price_usd_per_hour[i]),
            z_paper=float(self.z_paper[i]),
            z_noscale=float(self.z_noscale[i]),
            performance=float(self.performance[i]),
            scaling_factor=float(self.scaling_factor[i]),
            eflops_per_gpu=float(gpu.eflops),  # type: ignore[arg-type]  # solvable
            speed_epochs_per_hour=speed if known else None,
            speed_noscale_epochs_per_hour=float(self.speed_noscale[i]) if known else None,
            speed_vs_one_ref_vm=(speed / basis.reference_epochs_per_hour
                                 if known and basis is not None else None),
            reference_gpu=None if basis is None else basis.reference_gpu,
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
