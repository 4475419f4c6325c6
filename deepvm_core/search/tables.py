"""The candidate arrays: :class:`CandidateDomain` (one GPU row per (architecture, GPU type v,
GPU VM count n), with the memory-node types and their limits) and :class:`CandidateTable`
(configurations, one entry each), with what they compute from themselves: objective values,
name ranks, memory-node pairs, the stage-4 order (:mod:`deepvm_core.search.ranking`).

How they are built from a catalog, and what the model says each row is, is
:mod:`deepvm_core.search.candidates`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace

import numpy as np

from deepvm_core.arrays import BoolArray, FloatArray, IntArray, SignedArray
from deepvm_core.catalog import CpuType, GpuType
from deepvm_core.errors import InputError
from deepvm_core.model import (
    Arch,
    Configuration,
    Objective,
    memory_nodes_needed,
    objective_attribute,
)
from deepvm_core.search.ranking import combined_name_rank, rank_order
from deepvm_core.units import PRICE_TOLERANCE_USD
from deepvm_core.workload.speed import SpeedBasis

__all__ = ["ROW_COLUMNS", "CandidateDomain", "CandidateTable", "Limits"]

#: The per-row columns of a domain (one entry per GPU row); the first three hold integers.
ROW_COLUMNS = ("architecture", "gpu", "n", "spot_usd_per_hour", "on_demand_usd_per_hour",
               "gpu_price_usd_per_hour", "z_paper", "z_noscale", "performance",
               "performance_noscale", "scaling_factor", "speed_epochs_per_hour",
               "speed_noscale_epochs_per_hour")


@dataclass(frozen=True, eq=False)
class ScoreColumns:
    """What every objective reads, one entry per GPU row of a :class:`CandidateDomain` or per
    configuration of a :class:`CandidateTable` (1-D arrays): both carry these columns.

    Attributes:
        z_paper, z_noscale: the paper's Z, with the true K and with K = 1.
        performance, performance_noscale: ``eFLOPS n K(n)`` and ``eFLOPS n``.
        scaling_factor: K(n).
        speed_epochs_per_hour, speed_noscale_epochs_per_hour: the job's epochs per hour,
            ``3600 S(n) / t(1)``, and with S(n) = n (NaN when unknown).
    """

    z_paper: FloatArray
    z_noscale: FloatArray
    performance: FloatArray
    performance_noscale: FloatArray
    scaling_factor: FloatArray
    speed_epochs_per_hour: FloatArray
    speed_noscale_epochs_per_hour: FloatArray

    def scores_at(self, index: IntArray) -> dict[str, FloatArray]:
        """The score columns at ``index``, by field name (to build a table from a domain)."""
        return {name: getattr(self, name)[index] for name in SCORE_COLUMNS}

    def objective_values(self, objective: Objective, *, noscale: bool = False) -> FloatArray:
        """The value of every entry under ``objective`` (K = 1, or S(n) = n, if ``noscale``).

        Raises:
            InputError: ``speed`` while the speed is unknown (no reference type).
        """
        values: FloatArray = getattr(self, objective_attribute(objective, noscale=noscale))
        if objective == "speed" and np.any(np.isnan(values)):
            raise InputError("objective", objective, "the training speed is unknown for some "
                             "GPU type (no one-VM epoch time: give the reference type eFLOPS "
                             "or a measured one-node time)")
        return values


#: The score columns' names, in :class:`ScoreColumns`' order.
SCORE_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(ScoreColumns))


# ----------------------------------------------------------------------------- GPU rows


@dataclass(frozen=True, eq=False)
class Limits:
    """The scenario's limits on each GPU type of a domain, read once when it is built (the node
    cap, and the family's vCPU quotas when they are on), and the RAM a memory node must hold:
    explanations of what is infeasible read them here.

    Attributes:
        spot: per GPU type, the most spot VMs.
        on_demand: per GPU type, the most on-demand VMs (a Single Anchor's anchor).
        buffer_gb: f * s, the checkpoint buffer a memory node must hold, GB.
        gpu_filter_admits: the names of every GPU type of the catalog (with eFLOPS or not)
            that the scenario's GPU filter admits, in catalog order.
    """

    spot: IntArray
    on_demand: IntArray
    buffer_gb: float
    gpu_filter_admits: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False)
class CandidateDomain(ScoreColumns):
    """The candidate domain, one "GPU row" per (architecture, GPU type, n)
    (:mod:`deepvm_core.search.candidates`).

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
        speed_epochs_per_hour, speed_noscale_epochs_per_hour: the job's epochs per hour,
            ``3600 S(n) / t(1)``, and with S(n) = n (NaN when unknown).
        speed_basis: what speed was computed from, or ``None`` (unknown: no GPU type to take
            as the reference).
        memory_node_price_usd_per_hour: per CPU type, its on-demand price OD(w).
        memory_node_limit: per CPU type, the most memory nodes (node cap, on-demand quota).
        saturation_limit: per (GPU type, CPU type), ``n_sat(min(BW(v), BW(w)))``; shape (V, W).
        gpu_rank, cpu_rank: per GPU type and per CPU type, the alphabetical rank of its name.
        limits: the scenario's limits on each GPU type (:class:`Limits`).
        cheapest: for a domain cut at a budget, the rows of the smallest n of each
            (architecture, GPU type) at any price, over every memory-node type (not only the
            affordable ones): prices rise with n and a configuration stays feasible with fewer
            GPU VMs, so the cheapest configuration of each GPU type and architecture beyond
            the budget is among their pairs (:meth:`any_price`). ``None`` without a budget.
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
    speed_basis: SpeedBasis | None
    memory_node_price_usd_per_hour: FloatArray
    memory_node_limit: IntArray
    saturation_limit: IntArray
    gpu_rank: IntArray
    cpu_rank: IntArray
    limits: Limits
    cheapest: CandidateDomain | None = None

    def __len__(self) -> int:
        return int(self.n.shape[0])

    def any_price(self) -> CandidateDomain:
        """The rows that hold the cheapest configuration of each (architecture, GPU type) at
        any price: :attr:`cheapest`, or the domain itself when it has no budget. Explanations
        beyond PW read them (no second domain is built)."""
        return self if self.cheapest is None else self.cheapest

    def only(self, architecture: Arch) -> CandidateDomain:
        """The rows of one architecture: the domain the builder gives for that architecture
        alone (Single Anchor has no memory-node types)."""
        keep = self.architecture == architecture
        memory = slice(None) if architecture == Arch.TIERING else slice(0)
        return replace(
            self, **{key: getattr(self, key)[keep] for key in ROW_COLUMNS},
            cpus=self.cpus[memory],
            memory_node_price_usd_per_hour=self.memory_node_price_usd_per_hour[memory],
            memory_node_limit=self.memory_node_limit[memory],
            saturation_limit=self.saturation_limit[:, memory], cpu_rank=self.cpu_rank[memory],
            cheapest=None)

    def locate(self, config: Configuration) -> CandidateTable:
        """The one-entry table of ``config`` (its GPU row, with its memory-node type), as the
        domain computes it.

        Raises:
            InputError: ``config`` is not a configuration of this domain.
        """
        gpu = next((i for i, g in enumerate(self.gpus) if g.name == config.gpu), -1)
        cpu = -1 if config.cpu is None else next(
            (i for i, w in enumerate(self.cpus) if w.name == config.cpu), -2)
        rows = np.flatnonzero((self.architecture == Arch.of(config.architecture))
                              & (self.n == config.gpu_vms) & (self.gpu == gpu))
        table = self.configurations(rows[:1], [cpu] * min(rows.size, 1)) if cpu != -2 else None
        if table is None or len(table) != 1:
            raise InputError("configuration", config.describe(),
                             "is not a configuration of this catalog under these limits")
        return table

    @property
    def budget_usd_per_hour(self) -> float:
        """The largest affordable price: PW plus the float tolerance, or infinity."""
        if self.pw_usd_per_hour is None:
            return math.inf
        return self.pw_usd_per_hour + PRICE_TOLERANCE_USD

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
            **self.scores_at(row),
            name_rank=self.name_rank(row, cpu),
        )


# ----------------------------------------------------------------------------- configurations


@dataclass(frozen=True, eq=False)
class CandidateTable(ScoreColumns):
    """Configurations as parallel arrays, one entry each (:mod:`deepvm_core.search.candidates`).
    Prices are USD per hour.

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
        speed_epochs_per_hour, speed_noscale_epochs_per_hour: the job's epochs per hour, and
            with S(n) = n (NaN: unknown).
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
        speed = float(self.speed_epochs_per_hour[i])
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
            speed_noscale_epochs_per_hour=float(self.speed_noscale_epochs_per_hour[i])
            if known else None,
            speed_vs_one_ref_vm=(speed / basis.reference_epochs_per_hour
                                 if known and basis is not None else None),
            reference_gpu=None if basis is None else basis.reference_gpu,
        )
