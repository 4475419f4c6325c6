"""The DeepVM model (``model.md``): FLOPP, scaling factor K, network saturation, architectures.

Everything here is a pure function of a :class:`~deepvm_core.catalog.Catalog` and a
:class:`Scenario`; nothing is mutated and nothing is read from disk.

Notation (``model.md``): PW pricing willingness (USD/hour), f checkpoint size (GB), s buffer
size (checkpoints per memory node), v a GPU type, w a CPU type, n GPU VMs, m memory nodes.

* FLOPP (eFLOP per USD): ``SPFP(v) = eFLOPS(v) / SP(v) * 3600``, ``ODFP(v) = eFLOPS(v) / OD(v)
  * 3600``.
* Scaling: ``S(n) = c / (1 + exp(-a (n - b)))``, its tangent at b ``L(n) = c a (n - b) / 4 +
  c / 2``; ``K(n) = 1`` for ``n <= b`` and ``S(n) / L(n)`` beyond.
* Saturation: ``n_sat(bw)``, a step function of ``bw = min(BW(v), BW(w))`` read from the
  catalog's table; Tiering needs ``n / m < n_sat``, so the cheapest valid ``m`` is
  ``floor(n / n_sat) + 1``.
* Single Anchor: 1 on-demand + (n - 1) spot GPU VMs, ``Z = ((n - 1) SPFP + ODFP) K(n)``.
* Tiering: n spot GPU VMs + m on-demand memory nodes, ``Z = n SPFP K(n)``.
* Performance: ``eFLOPS(v) * n * K(n)`` (n counts every GPU VM, the anchor included).

The architectures' prices, Z and performance, and the ranking of stage 4, are computed in one
place, :mod:`deepvm_core.search.candidates`, for every configuration at once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import IntEnum
from typing import Literal

import numpy as np
import numpy.typing as npt

from deepvm_core.arrays import FloatArray, IntArray, SignedArray
from deepvm_core.catalog import Catalog, CpuType, GpuType, SaturationStep, ScalingParams
from deepvm_core.catalog.gpu_filter import ANY_GPU, GpuFilter
from deepvm_core.errors import InputError
from deepvm_core.units import GB_PER_GIB, SECONDS_PER_HOUR

#: The node cap's default (the paper's simulation) and its largest value, VMs per role
#: (``Scenario.max_nodes``). The CLI's ``--max-nodes`` and the dashboard read both from here.
#: Measured (issue 9, 2 shared cores): a recommendation with the exact enumeration at the cap,
#: quotas off and any PW, takes 0.04 s on the bundled AWS catalog and 0.07 s on the simulated
#: one; :data:`~deepvm_core.search.candidates.MAX_SEARCH_ROWS` bounds the larger catalogs.
DEFAULT_MAX_NODES = 256
#: Checkpoint size f, GB, unless given: ``Scenario.checkpoint_gb`` and
#: ``Workload.checkpoint_gb`` (the paper's simulation).
DEFAULT_CHECKPOINT_GB = 0.3
MAX_NODES = 10_000

Architecture = Literal["single_anchor", "tiering"]
Objective = Literal["speed", "paper", "performance"]
ARCHITECTURES: tuple[Architecture, ...] = ("single_anchor", "tiering")
OBJECTIVES: tuple[Objective, ...] = ("speed", "paper", "performance")
#: The default objective of the tools (the CLI, the dashboard and its URL) and of
#: :class:`Scenario`, so that a library call ranks as the tools do: the job's training speed,
#: epochs per hour (``job-model.md``, "Training speed"). ``paper`` (Z) and ``performance``
#: reproduce the paper; its reproductions ask for them by name.
DEFAULT_OBJECTIVE: Objective = "speed"
ARCHITECTURE_LABELS = {"single_anchor": "Single Anchor", "tiering": "Tiering"}



def objective_attribute(objective: Objective, *, noscale: bool = False) -> str:
    """The attribute that holds a configuration's value under ``objective`` (K = 1 if
    ``noscale``): ``z_paper``, ``z_noscale``, ``performance``, ``performance_noscale``,
    ``speed_epochs_per_hour`` or ``speed_noscale_epochs_per_hour`` (S(n) = n). The one home of
    that choice: :class:`Configuration` and the candidate arrays
    (:mod:`deepvm_core.search.candidates`) carry all six under these names."""
    if objective == "paper":
        return "z_noscale" if noscale else "z_paper"
    if objective == "speed":
        return "speed_noscale_epochs_per_hour" if noscale else "speed_epochs_per_hour"
    return "performance_noscale" if noscale else "performance"


class Arch(IntEnum):
    """The two architectures. The int values are the codes of the candidate arrays
    (:mod:`deepvm_core.search.candidates`); :attr:`key` is the name a :class:`Configuration`
    carries."""

    SINGLE_ANCHOR = 0
    TIERING = 1

    @property
    def key(self) -> Architecture:
        """``single_anchor`` or ``tiering``."""
        return ARCHITECTURES[self.value]

    @property
    def label(self) -> str:
        """``Single Anchor`` or ``Tiering``."""
        return ARCHITECTURE_LABELS[self.key]

    @classmethod
    def of(cls, key: str) -> Arch:
        """The member named ``key`` (``single_anchor`` or ``tiering``)."""
        return cls(ARCHITECTURES.index(key))


# ----------------------------------------------------------------------------- stage 2: FLOPP


def spot_flopp(gpu: GpuType) -> float:
    """SPFP(v): eFLOP per USD on spot, ``eFLOPS / SP * 3600``. Needs ``gpu.eflops``."""
    if gpu.eflops is None:
        raise InputError(f"{gpu.name}.eflops", None, "needs eFLOPS to compute FLOPP")
    return gpu.eflops / gpu.spot_usd_per_hour * SECONDS_PER_HOUR


def on_demand_flopp(gpu: GpuType) -> float:
    """ODFP(v): eFLOP per USD on demand, ``eFLOPS / OD * 3600``. Needs ``gpu.eflops``."""
    if gpu.eflops is None:
        raise InputError(f"{gpu.name}.eflops", None, "needs eFLOPS to compute FLOPP")
    return gpu.eflops / gpu.on_demand_usd_per_hour * SECONDS_PER_HOUR


@dataclass(frozen=True)
class FloppRow:
    """One GPU type's FLOPP (eFLOP per USD), spot and on-demand, with its ranks (1 = best)."""

    name: str
    eflops: float
    spot_usd_per_hour: float
    on_demand_usd_per_hour: float
    spot_flopp: float
    on_demand_flopp: float
    spot_rank: int
    on_demand_rank: int


def flopp_ranking(catalog: Catalog) -> tuple[FloppRow, ...]:
    """Stage 2: every solvable GPU type with SPFP and ODFP, ordered by SPFP (ties: name)."""
    gpus = catalog.solvable_gpu_types
    sp = {g.name: spot_flopp(g) for g in gpus}
    od = {g.name: on_demand_flopp(g) for g in gpus}
    sp_rank = {n: i + 1 for i, n in enumerate(sorted(sp, key=lambda n: (-sp[n], n)))}
    od_rank = {n: i + 1 for i, n in enumerate(sorted(od, key=lambda n: (-od[n], n)))}
    rows = [
        FloppRow(g.name, float(g.eflops or 0.0), g.spot_usd_per_hour, g.on_demand_usd_per_hour,
                 sp[g.name], od[g.name], sp_rank[g.name], od_rank[g.name])
        for g in gpus
    ]
    return tuple(sorted(rows, key=lambda r: r.spot_rank))


# ----------------------------------------------------------------------------- scaling factor


def logistic(n: npt.ArrayLike, a: float, b: float, c: float) -> FloatArray:
    """S(n) = c / (1 + exp(-a (n - b))), the logistic speedup curve: the one home of the formula
    (:func:`logistic_speedup`, the ``fitted`` speedup model of the job model and the
    calibration's least-squares fit all evaluate it here)."""
    x = np.asarray(n, dtype=np.float64)
    return np.asarray(c / (1.0 + np.exp(-a * (x - b))), dtype=np.float64)


def fitted_speedup(scaling: ScalingParams | None, nodes: npt.ArrayLike) -> FloatArray:
    """The job model's ``fitted`` speedup: ``S(n) = c / (1 + exp(-a (n - b)))`` for n >= 2,
    ``S(1) = 1``; ``S(n) = n`` without a fit (``job-model.md``; here, below the search, because
    the candidates' training speed uses it too)."""
    x = np.asarray(nodes, dtype=np.float64)
    if scaling is None:
        return x.copy()
    return np.where(x >= 2.0, logistic_speedup(scaling, x), 1.0)


def logistic_speedup(params: ScalingParams, n: npt.ArrayLike) -> FloatArray:
    """S(n) = c / (1 + exp(-a (n - b))): the fitted speedup on n nodes (:func:`logistic`)."""
    return logistic(n, params.a, params.b, params.c)


def tangent_speedup(params: ScalingParams, n: npt.ArrayLike) -> FloatArray:
    """L(n) = c a (n - b) / 4 + c / 2: the tangent of S at its inflection point b."""
    x = np.asarray(n, dtype=np.float64)
    return params.c * params.a * (x - params.b) / 4.0 + params.c / 2.0


def scaling_factor(params: ScalingParams | None, n: npt.ArrayLike) -> FloatArray:
    """K(n) for an array of node counts: 1 up to b, ``S(n) / L(n)`` beyond (0 < K <= 1).

    ``params`` ``None`` (no fit for this GPU type) gives K = 1 everywhere.
    """
    x = np.asarray(n, dtype=np.float64)
    if params is None:
        return np.ones_like(x)
    k = np.ones_like(x)
    beyond = x > params.b
    if np.any(beyond):
        k[beyond] = logistic_speedup(params, x[beyond]) / tangent_speedup(params, x[beyond])
    return k


# ----------------------------------------------------------------------------- saturation


def saturation_limits(table: tuple[SaturationStep, ...],
                      bandwidth_gbps: npt.ArrayLike) -> IntArray:
    """n_sat(bw) for an array of bandwidths: the entry of the largest key <= bw; below the
    smallest key, the first entry (``table`` is bandwidth ascending, as catalogs are)."""
    keys = np.array([step.bandwidth_gbps for step in table], dtype=np.float64)
    values = np.array([step.serves_fewer_than for step in table], dtype=np.int64)
    index = np.searchsorted(keys, np.asarray(bandwidth_gbps, dtype=np.float64), side="right")
    return values[np.maximum(index - 1, 0)]


def saturation_limit(table: tuple[SaturationStep, ...], bandwidth_gbps: float) -> int:
    """n_sat(bw) for one bandwidth (:func:`saturation_limits`)."""
    return int(saturation_limits(table, [bandwidth_gbps])[0])


def memory_nodes_needed(gpu_vms: SignedArray, saturation_limit_vms: SignedArray) -> SignedArray:
    """The cheapest valid m for n GPU VMs: ``floor(n / n_sat) + 1`` (so that n / m < n_sat)."""
    return gpu_vms // saturation_limit_vms + 1


def checkpoint_buffer_gb(checkpoint_gb: float, buffer_checkpoints: float) -> float:
    """f * s: the RAM a memory node must hold, GB (10^9 bytes)."""
    return checkpoint_gb * buffer_checkpoints


def holds_checkpoints(cpu: CpuType, checkpoint_gb: float, buffer_checkpoints: float) -> bool:
    """Memory constraint: ``MEM(w) * 1.073741824 >= f * s`` (GiB converted to GB)."""
    assert cpu.memory_gib is not None  # validated: CPU types always carry memory
    return cpu.memory_gib * GB_PER_GIB >= checkpoint_buffer_gb(checkpoint_gb, buffer_checkpoints)


# ----------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class Scenario:
    """What the user asks for.

    Attributes:
        pw_usd_per_hour: pricing willingness PW, USD per hour (>= 0).
        checkpoint_gb: checkpoint size f, GB (> 0).
        buffer_checkpoints: buffer size s, checkpoints one memory node keeps (> 0).
        objective: ``speed`` (maximise the job's epochs per hour,
            :mod:`deepvm_core.workload.speed`; the default, :data:`DEFAULT_OBJECTIVE`, as in
            the tools), ``paper`` (maximise Z, reproduces the paper) or ``performance``
            (maximise eFLOPS * n * K(n); ``model.md``, "Two objectives").
        use_quotas: apply the catalog's vCPU quotas (off = the paper's simulation mode).
        max_nodes: cap on VM counts per role (spot GPU VMs, on-demand GPU VMs, memory nodes),
            1 to :data:`MAX_NODES`.
        gpu_filter: which GPU types may be used (models, least GB per GPU, GPUs per VM); the
            default admits every type. The candidate domain applies it
            (:func:`~deepvm_core.search.candidates.build_domain`), so every consumer of the
            scenario's candidates sees the same types.

    How many configurations to recommend is an argument of
    :func:`~deepvm_core.recommend.recommendation.recommend`, not part of the scenario: a sweep has
    no top-k.
    """

    pw_usd_per_hour: float
    checkpoint_gb: float = DEFAULT_CHECKPOINT_GB
    buffer_checkpoints: float = 2.0
    objective: Objective = DEFAULT_OBJECTIVE
    use_quotas: bool = True
    max_nodes: int = DEFAULT_MAX_NODES
    gpu_filter: GpuFilter = ANY_GPU

    def __post_init__(self) -> None:
        def finite(name: str, value: object) -> float:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise InputError(name, value, "must be a number")
            if not math.isfinite(value):
                raise InputError(name, value, "must be a finite number")
            return float(value)

        if finite("pw_usd_per_hour", self.pw_usd_per_hour) < 0:
            raise InputError("pw_usd_per_hour", self.pw_usd_per_hour, "must not be negative")
        if finite("checkpoint_gb", self.checkpoint_gb) <= 0:
            raise InputError("checkpoint_gb", self.checkpoint_gb, "must be greater than 0")
        if finite("buffer_checkpoints", self.buffer_checkpoints) <= 0:
            raise InputError("buffer_checkpoints", self.buffer_checkpoints,
                             "must be greater than 0")
        if self.objective not in OBJECTIVES:
            raise InputError("objective", self.objective, f"must be one of {', '.join(OBJECTIVES)}")
        if not isinstance(self.max_nodes, int) or isinstance(self.max_nodes, bool) or not (
            1 <= self.max_nodes <= MAX_NODES
        ):
            raise InputError("max_nodes", self.max_nodes,
                             f"must be a whole number from 1 to {MAX_NODES}")
        if not isinstance(self.gpu_filter, GpuFilter):
            raise InputError("gpu_filter", self.gpu_filter, "must be a GpuFilter")


# ----------------------------------------------------------------------------- results


@dataclass(frozen=True)
class Configuration:
    """One cluster: the unit every solver and policy returns.

    Attributes:
        architecture: ``single_anchor`` or ``tiering``.
        gpu: GPU type name.
        gpu_spot: spot GPU VMs (Single Anchor: n - 1; Tiering: n).
        gpu_on_demand: on-demand GPU VMs (Single Anchor: 1; Tiering: 0).
        cpu: memory-node CPU type name (Tiering) or ``None``.
        memory_nodes: m, the on-demand memory nodes of type ``cpu`` (Tiering), or 0.
        hourly_price_usd: price of the whole cluster, USD per hour.
        z_paper: the paper's objective Z (eFLOP per USD, scaled by K).
        z_noscale: Z with K = 1 (what DeepVM-NoScale ranks by).
        performance: eFLOPS * n * K(n), relative throughput units.
        scaling_factor: K(n).
        eflops_per_gpu: eFLOPS of one GPU VM.
        speed_epochs_per_hour: the job's training speed, epochs per hour
            (:mod:`deepvm_core.workload.speed`), or ``None`` when unknown.
        speed_noscale_epochs_per_hour: the same with S(n) = n (DeepVM-NoScale under speed).
        speed_vs_one_ref_vm: speed over that of one VM of the reference type, or of one A10G
            (:mod:`deepvm_core.workload.yardstick`) without one (dimensionless), or ``None``.
        reference_gpu: what ``speed_vs_one_ref_vm`` compares with: the reference type, or
            ``A10G``.
    """

    architecture: Architecture
    gpu: str
    gpu_spot: int
    gpu_on_demand: int
    cpu: str | None
    memory_nodes: int
    hourly_price_usd: float
    z_paper: float
    z_noscale: float
    performance: float
    scaling_factor: float
    eflops_per_gpu: float
    speed_epochs_per_hour: float | None = None
    speed_noscale_epochs_per_hour: float | None = None
    speed_vs_one_ref_vm: float | None = None
    reference_gpu: str | None = None

    @property
    def gpu_vms(self) -> int:
        """n: every GPU VM (the anchor included)."""
        return self.gpu_spot + self.gpu_on_demand

    @property
    def total_vms(self) -> int:
        """Every VM of the cluster, memory nodes included."""
        return self.gpu_vms + self.memory_nodes

    @property
    def performance_noscale(self) -> float:
        """eFLOPS * n: performance as if K were 1."""
        return self.eflops_per_gpu * self.gpu_vms

    @property
    def cluster_flopp(self) -> float:
        """eFLOP per USD of the whole cluster: ``performance / price * 3600``."""
        return self.performance / self.hourly_price_usd * SECONDS_PER_HOUR

    def objective_value(self, objective: Objective, *, noscale: bool = False) -> float:
        """The value this configuration scores under ``objective`` (K = 1 if ``noscale``)."""
        value: float | None = getattr(self, objective_attribute(objective, noscale=noscale))
        if value is None:  # speed, unknown without a one-VM epoch time
            raise InputError("objective", objective, f"the speed of {self.gpu} is unknown "
                             "(no one-VM epoch time)")
        return value

    def describe(self) -> str:
        """One line, e.g. ``TR: 17 x g4dn.xlarge spot + 1 x c5.xlarge (2.8526 USD/h)``."""
        if self.architecture == "single_anchor":
            body = (f"SA: {self.gpu_vms} x {self.gpu} (1 on-demand + {self.gpu_spot} spot)")
        else:
            body = f"TR: {self.gpu_spot} x {self.gpu} spot + {self.memory_nodes} x {self.cpu}"
        return f"{body}, {self.hourly_price_usd:.4f} USD/h"

    def speed_text(self, times: str = "x") -> str | None:
        """The training speed in words, as a multiple of one A10G (the yardstick) or of one VM of
        the named reference type (never a unitless number): ``3.92 x one A10G``, or ``None`` when
        unknown. The one home of that phrase (the CLI's table, the export's summary, the
        dashboard's card and table); ``times`` is the sign (the dashboard writes ``×``)."""
        if self.speed_vs_one_ref_vm is None or self.reference_gpu is None:
            return None
        return f"{self.speed_vs_one_ref_vm:.2f} {times} one {self.reference_gpu}"


# ----------------------------------------------------------------------------- node limits


def max_spot_vms(catalog: Catalog, gpu: GpuType, scenario: Scenario) -> int:
    """Most spot VMs of ``gpu``: the node cap, and its family's spot vCPU quota if on."""
    limit = scenario.max_nodes
    quota = catalog.quota(gpu.family) if scenario.use_quotas else None
    if quota is not None:
        limit = min(limit, quota.spot_vcpus // gpu.vcpus)
    return limit


def max_on_demand_vms(catalog: Catalog, vm: GpuType | CpuType, scenario: Scenario) -> int:
    """Most on-demand VMs of ``vm``: the node cap, and its family's on-demand quota if on."""
    limit = scenario.max_nodes
    quota = catalog.quota(vm.family) if scenario.use_quotas else None
    if quota is not None:
        limit = min(limit, quota.on_demand_vcpus // vm.vcpus)
    return limit
