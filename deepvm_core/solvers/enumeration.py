"""Exact, vectorised enumeration of the DeepVM search space (numpy).

The search space does not depend on PW: PW only cuts it by price. So the candidates are built
once per (catalog, f, s, quotas, node cap) as parallel arrays, and a recommendation at any PW
is "the best candidate whose price is <= PW". A PW sweep sorts the candidates by price once and
keeps a running best (a prefix minimum of the rank), so each PW costs one binary search.

Candidates (``model.md``, stage 3):

* Single Anchor ``(v, n)`` for ``2 <= n``, ``n - 1 <= spot limit(v)``, anchor within the
  on-demand limit of v's family.
* Tiering ``(v, n, w)`` for ``1 <= n <= spot limit(v)``, w holding ``f * s`` in RAM, with the
  cheapest valid ``m = floor(n / n_sat(min(BW(v), BW(w)))) + 1`` within the on-demand limit
  of w's family and the node cap.

Pruning: Z and performance of a Tiering candidate do not depend on w, so within a group
``(v, n)`` the candidates rank by price (then VMs, then CPU name) whatever the PW. Only the
``per_group`` best of each group can enter a top-``per_group`` list, so the rest are dropped
(``per_group=None`` keeps all).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from deepvm_core.catalog import Catalog
from deepvm_core.model import (
    PRICE_TOLERANCE_USD,
    SECONDS_PER_HOUR,
    Configuration,
    Objective,
    Scenario,
    holds_checkpoints,
    max_on_demand_vms,
    max_spot_vms,
    pair_bandwidth_gbps,
    saturation_limit,
    scaling_factor,
)

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

SA, TR = 0, 1


@dataclass(frozen=True, eq=False)
class CandidateTable:
    """Every candidate configuration as parallel arrays (one entry per configuration).

    Attributes:
        gpu_names, cpu_names: the types the indices refer to (solvable GPU types only; CPU
            types able to hold ``f * s``).
        gpu_eflops: eFLOPS of each GPU type of ``gpu_names``.
        arch: 0 Single Anchor, 1 Tiering.
        gpu, cpu: indices into the name tuples (cpu = -1 for Single Anchor).
        n: GPU VMs (all of them); m: memory nodes (0 for Single Anchor).
        price: USD per hour.
        z_paper, z_noscale: the paper's Z with the true K and with K = 1.
        perf, perf_noscale: eFLOPS * n * K(n), and eFLOPS * n.
        k: the scaling factor K(n).
        gpu_order, cpu_order: rank of the names in sorted order (tie-breaks).
    """

    gpu_names: tuple[str, ...]
    cpu_names: tuple[str, ...]
    gpu_eflops: tuple[float, ...]
    arch: IntArray
    gpu: IntArray
    cpu: IntArray
    n: IntArray
    m: IntArray
    price: FloatArray
    z_paper: FloatArray
    z_noscale: FloatArray
    perf: FloatArray
    perf_noscale: FloatArray
    k: FloatArray
    gpu_order: IntArray
    cpu_order: IntArray

    def __len__(self) -> int:
        return int(self.price.shape[0])

    def objective(self, objective: Objective, *, noscale: bool = False) -> FloatArray:
        """The objective values of every candidate."""
        if objective == "paper":
            return self.z_noscale if noscale else self.z_paper
        return self.perf_noscale if noscale else self.perf

    def rank_order(self, objective: Objective, *, noscale: bool = False) -> IntArray:
        """Candidate indices best first: objective desc, price asc, fewer VMs, architecture,
        GPU name, CPU name (``model.md``, stage 4)."""
        return np.lexsort((
            self.cpu_order, self.gpu_order, self.arch, self.n + self.m, self.price,
            -self.objective(objective, noscale=noscale),
        ))

    def configuration(self, index: int) -> Configuration:
        """The :class:`Configuration` of candidate ``index``."""
        i = int(index)
        n, m = int(self.n[i]), int(self.m[i])
        is_sa = self.arch[i] == SA
        return Configuration(
            architecture="single_anchor" if is_sa else "tiering",
            gpu=self.gpu_names[self.gpu[i]],
            gpu_spot=n - 1 if is_sa else n,
            gpu_on_demand=1 if is_sa else 0,
            cpu=None if is_sa else self.cpu_names[self.cpu[i]],
            cpu_on_demand=m,
            hourly_price_usd=float(self.price[i]),
            z_paper=float(self.z_paper[i]),
            z_noscale=float(self.z_noscale[i]),
            performance=float(self.perf[i]),
            scaling_factor=float(self.k[i]),
            eflops_per_gpu=self.gpu_eflops[self.gpu[i]],
        )


def _name_order(names: tuple[str, ...]) -> IntArray:
    order = np.empty(len(names), dtype=np.int64)
    order[np.argsort(np.array(names, dtype=object), kind="stable")] = np.arange(len(names))
    return order


def build_candidates(
    catalog: Catalog,
    scenario: Scenario,
    *,
    per_group: int | None = None,
    architectures: tuple[str, ...] = ("single_anchor", "tiering"),
) -> CandidateTable:
    """Enumerate the search space of ``scenario`` (its PW is ignored: see the module doc).

    Args:
        per_group: keep only the best ``per_group`` memory-node choices per Tiering (v, n);
            ``None`` keeps every candidate.
        architectures: which architectures to enumerate.
    """
    gpus = catalog.solvable_gpu_types
    cpus = tuple(
        w for w in catalog.cpu_types
        if holds_checkpoints(w, scenario.checkpoint_gb, scenario.buffer_checkpoints)
    )
    gpu_names = tuple(g.name for g in gpus)
    cpu_names = tuple(w.name for w in cpus)
    gpu_order = _name_order(gpu_names)
    cpu_order = _name_order(cpu_names)
    cpu_limit = np.array([max_on_demand_vms(catalog, w, scenario) for w in cpus], dtype=np.int64)
    cpu_od = np.array([w.on_demand_usd_per_hour for w in cpus], dtype=np.float64)

    parts: dict[str, list[npt.NDArray]] = {k: [] for k in (
        "arch", "gpu", "cpu", "n", "m", "price", "z", "z1", "perf", "perf1", "k")}

    def add(arch: int, gi: int, cpu_idx: IntArray, n: IntArray, m: IntArray, price: FloatArray,
            z: FloatArray, z1: FloatArray, perf: FloatArray, perf1: FloatArray,
            k: FloatArray) -> None:
        parts["arch"].append(np.full(n.shape, arch, dtype=np.int64))
        parts["gpu"].append(np.full(n.shape, gi, dtype=np.int64))
        for key, arr in (("cpu", cpu_idx), ("n", n), ("m", m), ("price", price), ("z", z),
                         ("z1", z1), ("perf", perf), ("perf1", perf1), ("k", k)):
            parts[key].append(arr)

    for gi, g in enumerate(gpus):
        eflops = float(g.eflops)  # type: ignore[arg-type]  # solvable: not None
        spfp = eflops / g.spot_usd_per_hour * SECONDS_PER_HOUR
        odfp = eflops / g.on_demand_usd_per_hour * SECONDS_PER_HOUR
        spot_limit = max_spot_vms(catalog, g, scenario)

        if "single_anchor" in architectures and max_on_demand_vms(catalog, g, scenario) >= 1:
            n = np.arange(2, spot_limit + 2, dtype=np.int64)  # n - 1 spot VMs <= spot_limit
            if n.size:
                k = scaling_factor(g.scaling, n)
                z1 = (n - 1) * spfp + odfp
                add(SA, gi, np.full(n.shape, -1, dtype=np.int64), n,
                    np.zeros_like(n), g.on_demand_usd_per_hour + (n - 1) * g.spot_usd_per_hour,
                    z1 * k, z1, eflops * n * k, eflops * n.astype(np.float64), k)

        if "tiering" in architectures and cpus and spot_limit >= 1:
            n = np.arange(1, spot_limit + 1, dtype=np.int64)
            k = scaling_factor(g.scaling, n)
            nsat = np.array([saturation_limit(catalog.saturation, pair_bandwidth_gbps(g, w))
                             for w in cpus], dtype=np.int64)
            m = n[:, None] // nsat[None, :] + 1                      # (N, W)
            price = n[:, None] * g.spot_usd_per_hour + m * cpu_od[None, :]
            valid = m <= cpu_limit[None, :]
            # group (v, n): rank memory-node choices by price, then m, then CPU name
            key = np.where(valid, price, np.inf)
            if per_group == 1:  # the sweep's case: argmin of (price, m, CPU name), exactly
                tie = m * len(cpus) + cpu_order[None, :]
                tie = np.where(key == key.min(axis=1, keepdims=True), tie, np.iinfo(np.int64).max)
                keep = np.argmin(tie, axis=1)[:, None]
            else:
                order = np.lexsort((np.broadcast_to(cpu_order, m.shape), m, key), axis=1)
                keep = order if per_group is None else order[:, :per_group]
            rows = np.repeat(np.arange(n.size), keep.shape[1])
            cols = keep.ravel()
            ok = valid[rows, cols]
            rows, cols = rows[ok], cols[ok]
            nn = n[rows]
            z1 = nn * spfp
            add(TR, gi, cols.astype(np.int64), nn, m[rows, cols], price[rows, cols],
                z1 * k[rows], z1, eflops * nn * k[rows], eflops * nn.astype(np.float64), k[rows])

    def cat(key: str, dtype: type) -> npt.NDArray:
        return np.concatenate(parts[key]).astype(dtype) if parts[key] else np.zeros(0, dtype)

    gpu_idx = cat("gpu", np.int64)
    cpu_idx = cat("cpu", np.int64)
    return CandidateTable(
        gpu_names=gpu_names, cpu_names=cpu_names,
        gpu_eflops=tuple(float(g.eflops) for g in gpus),  # type: ignore[arg-type]
        arch=cat("arch", np.int64), gpu=gpu_idx, cpu=cpu_idx, n=cat("n", np.int64),
        m=cat("m", np.int64), price=cat("price", np.float64), z_paper=cat("z", np.float64),
        z_noscale=cat("z1", np.float64), perf=cat("perf", np.float64),
        perf_noscale=cat("perf1", np.float64), k=cat("k", np.float64),
        gpu_order=gpu_order[gpu_idx],
        cpu_order=np.append(cpu_order, -1)[cpu_idx],  # index -1 (no CPU) reads the -1 appended
    )


def top_indices(
    table: CandidateTable,
    pw_usd_per_hour: float,
    objective: Objective,
    k: int,
    *,
    noscale: bool = False,
    architecture: int | None = None,
) -> IntArray:
    """The best ``k`` affordable candidates (price <= PW), best first."""
    mask = table.price <= pw_usd_per_hour + PRICE_TOLERANCE_USD
    if architecture is not None:
        mask &= table.arch == architecture
    idx = np.flatnonzero(mask)
    if idx.size == 0:
        return idx
    sub = np.lexsort((
        table.cpu_order[idx], table.gpu_order[idx], table.arch[idx],
        table.n[idx] + table.m[idx], table.price[idx],
        -table.objective(objective, noscale=noscale)[idx],
    ))
    return idx[sub[:k]]


def best_by_pw(
    table: CandidateTable, pws: FloatArray, objective: Objective, *, noscale: bool = False
) -> IntArray:
    """For every PW of ``pws``, the index of the best affordable candidate (-1 if none).

    Sorted prefixes: rank every candidate once, sort by price once, take the running minimum of
    the rank along price; the best candidate at PW is that minimum at the last price <= PW.
    """
    pws = np.asarray(pws, dtype=np.float64)
    if len(table) == 0:
        return np.full(pws.shape, -1, dtype=np.int64)
    order = table.rank_order(objective, noscale=noscale)
    rank = np.empty(len(table), dtype=np.int64)
    rank[order] = np.arange(len(table))
    by_price = np.argsort(table.price, kind="stable")
    prefix_best = np.minimum.accumulate(rank[by_price])
    cut = np.searchsorted(table.price[by_price], pws + PRICE_TOLERANCE_USD, side="right")
    best = np.full(pws.shape, -1, dtype=np.int64)
    has = cut > 0
    best[has] = order[prefix_best[cut[has] - 1]]
    return best


def largest_single_anchor(
    table: CandidateTable, pws: FloatArray
) -> tuple[IntArray, IntArray]:
    """Per PW and GPU type, the largest affordable Single Anchor candidate.

    Returns:
        ``(index, n)``, both of shape ``(len(pws), len(gpu_names))``: the candidate index and
        its GPU VM count, -1 and 0 where the type affords no Single Anchor (n >= 2).
    """
    pws = np.asarray(pws, dtype=np.float64)
    shape = (pws.size, len(table.gpu_names))
    index = np.full(shape, -1, dtype=np.int64)
    count = np.zeros(shape, dtype=np.int64)
    for gi in range(len(table.gpu_names)):
        sel = np.flatnonzero((table.arch == SA) & (table.gpu == gi))
        if sel.size == 0:
            continue
        sel = sel[np.argsort(table.n[sel], kind="stable")]      # price rises with n
        cut = np.searchsorted(table.price[sel], pws + PRICE_TOLERANCE_USD, side="right")
        has = cut > 0
        index[has, gi] = sel[cut[has] - 1]
        count[has, gi] = table.n[sel[cut[has] - 1]]
    return index, count
