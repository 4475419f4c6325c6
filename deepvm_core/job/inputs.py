"""From clusters to job plans: epoch time, checkpoint stall and interval, segments, rate.

:class:`ClusterArrays` describes many configurations at once (one entry per configuration, the
shape of a candidate table); :func:`job_inputs` turns them and a :class:`Workload` into a
:class:`JobInputs`, the per-configuration inputs of the closed form
(:mod:`deepvm_core.job.closed_form`) and of the Monte Carlo run
(:mod:`deepvm_core.job.montecarlo`). Build a :class:`JobInputs` directly with
:meth:`JobInputs.from_segments` to study the process without a catalog.

Per configuration (``job-model.md``): ``t = t_g(1) / S_g(n)`` seconds per epoch; ``T_c = E t``;
δ by architecture; ``τ = k t`` or Daly's τ with M = MTBI(g) (``auto``); the interruption rate
``λ = 1 / MTBI(g)`` per hour when the cluster has spot VMs, else 0, and then ``auto`` means one
segment without a checkpoint.

Interruptions grow with the cluster (:mod:`deepvm_core.market.reclaims`): n spot VMs are
interrupted at ``λ(n) = (1 + ρ (n - 1)) / MTBI(g)`` per hour (ρ = ``Workload.per_vm_share``),
and Daly's interval uses the cluster's own MTBI, ``1 / λ(n)``. W is the workload's, else each
type's bucket default (:mod:`deepvm_core.market.mtbi`).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np
import numpy.typing as npt

from deepvm_core.arrays import BoolArray, FloatArray, IntArray
from deepvm_core.catalog import Catalog
from deepvm_core.errors import JobModelError
from deepvm_core.job.checkpoint import (
    daly_interval_seconds,
    segment_plan,
    single_anchor_stall_seconds,
    tiering_stall_seconds,
)
from deepvm_core.market.mtbi import mtbi_estimates
from deepvm_core.market.reclaims import cluster_interruption_rate
from deepvm_core.model import Arch
from deepvm_core.units import PRICE_TOLERANCE_USD, SECONDS_PER_HOUR
from deepvm_core.workload.speed import SpeedBasis, speed_basis
from deepvm_core.workload.speedup import SpeedupModel
from deepvm_core.workload.workload import AUTO, Workload


def _bad(field: str, values: npt.NDArray[np.generic], mask: BoolArray,
         message: str) -> str | None:
    if not np.any(mask):
        return None
    where = np.flatnonzero(mask)
    shown = ", ".join(f"{field}[{i}] = {values[i].item()!r}" for i in where[:3])
    more = f" and {where.size - 3} more" if where.size > 3 else ""
    return f"{shown}{more}: {message}"


@dataclass(frozen=True)
class ClusterArrays:
    """Configurations, one entry per configuration (1-D arrays of one length).

    Attributes:
        architecture: :attr:`deepvm_core.model.Arch.SINGLE_ANCHOR` (0) or ``Arch.TIERING`` (1).
        gpu_index: index of the GPU type in ``catalog.gpu_types``.
        n_gpu: n, every GPU VM (>= 1; Single Anchor: the anchor included).
        n_spot: spot GPU VMs (0 <= n_spot <= n); 0 means nothing is ever interrupted.
        memory_nodes: m, memory nodes (Tiering: >= 1; Single Anchor: ignored).
        gpu_network_gbps: BW(v), the GPU type's bandwidth, Gbit/s (> 0).
        memory_network_gbps: BW(w), the memory node's bandwidth, Gbit/s (Tiering: > 0;
            Single Anchor: ignored, NaN allowed).
        price_usd_per_hour: P, the whole cluster's hourly price, USD per hour (>= 0).
        on_demand_usd_per_hour: P_od, its on-demand part (anchors, memory nodes), USD per
            hour (0 <= P_od <= P); billed during capacity waits too.

    Raises:
        JobModelError: arrays of different lengths or values out of range (field, index and
            value named).
    """

    architecture: IntArray
    gpu_index: IntArray
    n_gpu: IntArray
    n_spot: IntArray
    memory_nodes: IntArray
    gpu_network_gbps: FloatArray
    memory_network_gbps: FloatArray
    price_usd_per_hour: FloatArray
    on_demand_usd_per_hour: FloatArray

    def __post_init__(self) -> None:
        for f in fields(self):
            dtype = np.float64 if f.name.endswith(("_gbps", "_per_hour")) else np.int64
            raw = np.asarray(getattr(self, f.name))
            if dtype is np.int64 and raw.size and (
                    raw.dtype.kind not in "iub" and not np.all(np.mod(raw, 1) == 0)):
                raise JobModelError(f"{f.name}: must hold whole numbers")
            value = np.atleast_1d(raw.astype(dtype))
            if value.ndim != 1:
                raise JobModelError(f"{f.name}: must be a 1-D array, got shape {value.shape}")
            object.__setattr__(self, f.name, value)
        size = self.architecture.size
        lengths = {f.name: getattr(self, f.name).size for f in fields(self)}
        if any(n != size for n in lengths.values()):
            raise JobModelError(f"the arrays must have one length; got {lengths}")
        tr = self.architecture == Arch.TIERING
        problems = [
            _bad("architecture", self.architecture,
                 (self.architecture != Arch.SINGLE_ANCHOR) & ~tr,
                 f"must be {int(Arch.SINGLE_ANCHOR)} (Single Anchor) or {int(Arch.TIERING)} "
                 "(Tiering)"),
            _bad("gpu_index", self.gpu_index, self.gpu_index < 0, "must not be negative"),
            _bad("n_gpu", self.n_gpu, self.n_gpu < 1, "must be >= 1"),
            _bad("n_spot", self.n_spot, (self.n_spot < 0) | (self.n_spot > self.n_gpu),
                 "must be from 0 to n_gpu"),
            _bad("memory_nodes", self.memory_nodes, tr & (self.memory_nodes < 1),
                 "must be >= 1 for Tiering"),
            _bad("gpu_network_gbps", self.gpu_network_gbps,
                 ~(np.isfinite(self.gpu_network_gbps) & (self.gpu_network_gbps > 0)),
                 "must be a finite number > 0"),
            _bad("memory_network_gbps", self.memory_network_gbps,
                 tr & ~(np.isfinite(self.memory_network_gbps) & (self.memory_network_gbps > 0)),
                 "must be a finite number > 0 for Tiering"),
            _bad("price_usd_per_hour", self.price_usd_per_hour,
                 ~(np.isfinite(self.price_usd_per_hour) & (self.price_usd_per_hour >= 0)),
                 "must be a finite number >= 0"),
            _bad("on_demand_usd_per_hour", self.on_demand_usd_per_hour,
                 ~(np.isfinite(self.on_demand_usd_per_hour)
                   & (self.on_demand_usd_per_hour >= 0)
                   & (self.on_demand_usd_per_hour
                      <= self.price_usd_per_hour + PRICE_TOLERANCE_USD)),
                 "must be a finite number from 0 to price_usd_per_hour"),
        ]
        messages = [p for p in problems if p is not None]
        if messages:
            raise JobModelError("invalid cluster arrays:\n" + "\n".join(f"  - {m}"
                                                                         for m in messages))

    @property
    def size(self) -> int:
        """Number of configurations."""
        return int(self.architecture.size)


@dataclass(frozen=True)
class JobInputs:
    """Per-configuration inputs of the job model (1-D arrays of one length).

    Attributes:
        epoch_seconds: t_g(n), seconds per epoch.
        compute_seconds: T_c = E t_g(n), compute seconds of the whole job.
        checkpoint_stall_seconds: δ, seconds one checkpoint stalls training.
        checkpoint_interval_seconds: τ, compute seconds per segment (``auto`` without spot
            VMs: T_c, one segment).
        checkpoints: checkpoints taken, segments - 1 (each full segment is τ + δ long).
        last_segment_seconds: compute seconds of the last segment (no checkpoint after it).
        interruption_rate_per_hour: λ = λ(n) = (1 + ρ (n - 1)) / MTBI, events per hour while
            spot VMs are up; 0 without spot VMs.
        restart_hours: R, hours of one restart.
        wait_hours: W, mean hours of capacity wait after each event (and before the first
            attempt of a job that starts inside an outage, :mod:`~deepvm_core.job.closed_form`).
        price_usd_per_hour: P, the cluster's hourly price.
        on_demand_usd_per_hour: P_od, its on-demand part (billed during waits).
    """

    epoch_seconds: FloatArray
    compute_seconds: FloatArray
    checkpoint_stall_seconds: FloatArray
    checkpoint_interval_seconds: FloatArray
    checkpoints: IntArray
    last_segment_seconds: FloatArray
    interruption_rate_per_hour: FloatArray
    restart_hours: FloatArray
    wait_hours: FloatArray
    price_usd_per_hour: FloatArray
    on_demand_usd_per_hour: FloatArray

    def __post_init__(self) -> None:
        arrays = [np.atleast_1d(np.asarray(getattr(self, f.name))) for f in fields(self)]
        try:
            arrays = list(np.broadcast_arrays(*arrays))
        except ValueError as exc:
            raise JobModelError(f"job plan arrays do not broadcast: {exc}") from None
        for f, value in zip(fields(self), arrays, strict=True):
            dtype = np.int64 if f.name == "checkpoints" else np.float64
            object.__setattr__(self, f.name, np.array(value, dtype=dtype))

    @property
    def size(self) -> int:
        """Number of configurations."""
        return int(self.epoch_seconds.size)

    @property
    def full_segment_seconds(self) -> FloatArray:
        """τ + δ: wall seconds of one segment that ends in a checkpoint, without failures."""
        return self.checkpoint_interval_seconds + self.checkpoint_stall_seconds

    @classmethod
    def from_segments(cls, *, compute_seconds: npt.ArrayLike,
                      checkpoint_interval_seconds: npt.ArrayLike,
                      checkpoint_stall_seconds: npt.ArrayLike,
                      interruption_rate_per_hour: npt.ArrayLike,
                      restart_hours: npt.ArrayLike = 0.1, wait_hours: npt.ArrayLike = 0.0,
                      price_usd_per_hour: npt.ArrayLike = 1.0,
                      on_demand_usd_per_hour: npt.ArrayLike = 0.0,
                      epoch_seconds: npt.ArrayLike | None = None) -> JobInputs:
        """A plan from T_c, τ, δ, λ, R, W, P and P_od (broadcast); the segments are cut by
        :func:`~deepvm_core.job.checkpoint.segment_plan`. ``epoch_seconds`` defaults to T_c."""
        checkpoints, last = segment_plan(compute_seconds, checkpoint_interval_seconds)
        return cls(
            epoch_seconds=np.asarray(compute_seconds if epoch_seconds is None
                                     else epoch_seconds, dtype=np.float64),
            compute_seconds=np.asarray(compute_seconds, dtype=np.float64),
            checkpoint_stall_seconds=np.asarray(checkpoint_stall_seconds, dtype=np.float64),
            checkpoint_interval_seconds=np.asarray(checkpoint_interval_seconds,
                                                   dtype=np.float64),
            checkpoints=checkpoints,
            last_segment_seconds=last,
            interruption_rate_per_hour=np.asarray(interruption_rate_per_hour,
                                                  dtype=np.float64),
            restart_hours=np.asarray(restart_hours, dtype=np.float64),
            wait_hours=np.asarray(wait_hours, dtype=np.float64),
            price_usd_per_hour=np.asarray(price_usd_per_hour, dtype=np.float64),
            on_demand_usd_per_hour=np.asarray(on_demand_usd_per_hour, dtype=np.float64),
        )


def cluster_epoch_seconds(catalog: Catalog, clusters: ClusterArrays,
                          basis: SpeedBasis) -> FloatArray:
    """t_g(n) = t_g(1) / S_g(n) for every configuration, seconds per epoch, from the job's
    speed basis (its one-VM times t_g(1) and speedup model, derived once).

    Raises:
        JobModelError: a GPU index out of range, or a GPU type with no known one-VM time
            (no measured one-node row and no eFLOPS for it or for g_ref).
    """
    count = len(catalog.gpu_types)
    if np.any(clusters.gpu_index >= count):
        raise JobModelError(f"gpu_index: values must be below {count}, the catalog's GPU types")
    epoch = np.empty(clusters.size, dtype=np.float64)
    for g in np.unique(clusters.gpu_index):
        gpu = catalog.gpu_types[g]
        t1 = basis.one_vm_epoch_seconds.get(gpu.name)
        if t1 is None:
            raise JobModelError(f"{gpu.name}: no epoch time: it has no measured one-node time "
                                "and no eFLOPS (or the reference type has none)")
        rows = clusters.gpu_index == g
        epoch[rows] = t1 / basis.speedup.speedup(gpu, clusters.n_gpu[rows])
    return epoch


def job_inputs(workload: Workload, catalog: Catalog, clusters: ClusterArrays,
               speedup: SpeedupModel | None = None, *,
               basis: SpeedBasis | None = None) -> JobInputs:
    """The job plan of every configuration of ``clusters`` (formulas in the module docstring).

    ``basis`` is the job's speed basis on ``catalog`` when the caller holds it (a plan builds
    it once, :func:`deepvm_core.workload.speed.speed_basis`); without it, it is derived from
    ``workload`` and ``speedup`` (default: the ``fitted`` model without measurements). Give one
    of the two, not both.

    Raises:
        WorkloadError: the workload does not fit the catalog.
        JobModelError: see :func:`cluster_epoch_seconds`.
        ValueError: both ``speedup`` and ``basis``.
    """
    if basis is None:
        basis = speed_basis(catalog, workload, speedup)
    elif speedup is not None:
        raise ValueError("give the speedup model or the speed basis, not both")
    epoch = cluster_epoch_seconds(catalog, clusters, basis)
    compute = workload.epochs * epoch
    sa = clusters.architecture == Arch.SINGLE_ANCHOR
    stall = np.where(
        sa,
        single_anchor_stall_seconds(workload.checkpoint_gb, clusters.n_gpu,
                                    clusters.gpu_network_gbps, workload.disk_gb_per_second,
                                    workload.checkpoint_fixed_seconds),
        tiering_stall_seconds(workload.checkpoint_gb, clusters.n_gpu,
                              np.maximum(clusters.memory_nodes, 1),
                              np.where(sa, 1.0, clusters.memory_network_gbps),
                              workload.checkpoint_fixed_seconds),
    )
    estimates = mtbi_estimates(workload, catalog)
    mtbi_hours = np.array([m.mtbi_hours for m in estimates],
                          dtype=np.float64)[clusters.gpu_index]
    wait_hours = np.array([m.wait_hours for m in estimates],
                          dtype=np.float64)[clusters.gpu_index]
    spot = clusters.n_spot > 0
    rate = cluster_interruption_rate(mtbi_hours, workload.per_vm_share, clusters.n_spot)
    if workload.checkpoint_every_epochs == AUTO:
        with np.errstate(divide="ignore"):
            cluster_mtbi_seconds = np.where(spot, 1.0 / rate, np.inf) * SECONDS_PER_HOUR
        interval = np.where(spot, daly_interval_seconds(stall, cluster_mtbi_seconds),
                            compute)
    else:
        interval = workload.checkpoint_every_epochs * epoch
    checkpoints, last = segment_plan(compute, interval)
    return JobInputs(
        epoch_seconds=epoch,
        compute_seconds=compute,
        checkpoint_stall_seconds=stall,
        checkpoint_interval_seconds=interval,
        checkpoints=checkpoints,
        last_segment_seconds=last,
        interruption_rate_per_hour=rate,
        restart_hours=np.full(clusters.size, workload.restart_hours, dtype=np.float64),
        wait_hours=wait_hours,
        price_usd_per_hour=clusters.price_usd_per_hour,
        on_demand_usd_per_hour=clusters.on_demand_usd_per_hour,
    )
