"""A test oracle: DeepVM's search written straight from ``model.md`` in plain Python loops.

It shares no code with ``deepvm_core``'s model helpers or candidate arrays: it reads the
catalog's raw fields and applies every rule of ``model.md`` (stage 3, stage 4 and the baseline
policies) literally, visiting every (GPU type v, CPU type w, n, m) the way the research
artifact's search does. The tests check the solvers against it; ``bench/run_all.py`` times it to
show what the vectorised candidate table buys. Slow by design.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from deepvm_core.catalog import Catalog, GpuType
from deepvm_core.model import Scenario

#: GB (10^9 bytes) per GiB (2^30 bytes): model.md's memory test is MEM * 1.073741824 >= f * s.
GB_PER_GIB = 2**30 / 1e9
#: Prices are sums of floats: a price counts as within PW up to this much above it (USD/hour).
PRICE_SLACK_USD = 1e-9


@dataclass(frozen=True)
class OracleConfiguration:
    """One configuration of model.md, stage 3 (prices in USD/hour)."""

    architecture: str  # "single_anchor" or "tiering"
    gpu: str
    n: int  # every GPU VM, the anchor included
    cpu: str | None
    m: int  # memory nodes
    price: float
    z: float
    z_noscale: float
    performance: float
    performance_noscale: float
    speed: float = math.nan  # the example job's epochs per hour (job-model.md)
    speed_noscale: float = math.nan

    @property
    def identity(self) -> tuple[str, str, int, str | None, int]:
        return self.architecture, self.gpu, self.n, self.cpu, self.m

    def value(self, objective: str, noscale: bool = False) -> float:
        if objective == "paper":
            return self.z_noscale if noscale else self.z
        if objective == "speed":
            return self.speed_noscale if noscale else self.speed
        return self.performance_noscale if noscale else self.performance


#: t_ref of the example job (job-model.md: "without a job, speed uses the default workload's
#: t_ref"), seconds per epoch on one A10G (the yardstick): 960 s, an input, not computed.
EXAMPLE_T_REF_SECONDS = 960.0
#: The yardstick (issue 24): without a named reference type t_ref is on one A10G GPU, 696
#: eFLOPS on the artifact's scale (its measured g5.xlarge), written here as the number.
YARDSTICK_EFLOPS = 696.0


def speed(gpu: GpuType, n: int, *, noscale: bool = False,
          t_ref_seconds: float = EXAMPLE_T_REF_SECONDS, ref: GpuType | None = None) -> float:
    """job-model.md, "Training speed", written out: 3600 / t_g(n) epochs per hour with
    t_g(n) = t_ref1 rho_g / S_g(n), rho_g = eFLOPS(g_ref) / eFLOPS(g) (no measurements),
    t_ref1 = t_ref (n_ref = 1), and the fitted S: 1 at n = 1, the logistic from 2 on, n without
    a fit (noscale: n). ``ref``: a named g_ref; ``None``: the yardstick, 696 eFLOPS."""
    ref_eflops = YARDSTICK_EFLOPS if ref is None else (ref.eflops or 0.0)
    one_vm = t_ref_seconds * (ref_eflops / (gpu.eflops or 0.0))
    if noscale or gpu.scaling is None:
        s = float(n)
    elif n == 1:
        s = 1.0
    else:
        a, b, c = gpu.scaling.a, gpu.scaling.b, gpu.scaling.c
        s = c / (1.0 + math.exp(-a * (n - b)))
    return 3600.0 * s / one_vm


def n_sat(catalog: Catalog, bandwidth_gbps: float) -> int:
    """The saturation table as a step function: the entry of the largest key <= bw; below the
    smallest key, the smallest key's entry."""
    steps = sorted((s.bandwidth_gbps, s.serves_fewer_than) for s in catalog.saturation)
    value = steps[0][1]
    for key, count in steps:
        if key <= bandwidth_gbps:
            value = count
    return value


def k_factor(gpu: GpuType, n: int) -> float:
    """K(n) = 1 up to b, then S(n) / L(n) (logistic over its tangent at b); 1 without a fit."""
    if gpu.scaling is None or n <= gpu.scaling.b:
        return 1.0
    a, b, c = gpu.scaling.a, gpu.scaling.b, gpu.scaling.c
    s = c / (1.0 + math.exp(-a * (n - b)))
    tangent = c * a * (n - b) / 4.0 + c / 2.0
    return s / tangent


def configurations(catalog: Catalog, scenario: Scenario, pw: float) -> list[OracleConfiguration]:
    """Every configuration of model.md priced within ``pw`` (``math.inf``: no budget)."""
    cap = scenario.max_nodes
    quotas = {q.family: q for q in catalog.quotas} if scenario.use_quotas else {}
    need_gb = scenario.checkpoint_gb * scenario.buffer_checkpoints
    out: list[OracleConfiguration] = []
    ref: GpuType | None = None  # g_ref of speed: the yardstick
    for v in catalog.gpu_types:
        if v.eflops is None:
            continue  # needs eFLOPS
        spfp = v.eflops / v.spot_usd_per_hour * 3600
        odfp = v.eflops / v.on_demand_usd_per_hour * 3600
        qv = quotas.get(v.family)
        for n in range(2, cap + 2):  # Single Anchor: 1 on-demand + n - 1 spot
            if qv and (v.vcpus > qv.on_demand_vcpus or (n - 1) * v.vcpus > qv.spot_vcpus):
                continue
            price = v.on_demand_usd_per_hour + (n - 1) * v.spot_usd_per_hour
            if price <= pw + PRICE_SLACK_USD:
                k = k_factor(v, n)
                z = (n - 1) * spfp + odfp
                out.append(OracleConfiguration("single_anchor", v.name, n, None, 0, price,
                                               z * k, z, v.eflops * n * k, v.eflops * n,
                                               speed(v, n, ref=ref),
                                               speed(v, n, noscale=True, ref=ref)))
        for w in catalog.cpu_types:  # Tiering: n spot + m on-demand memory nodes
            if w.memory_gib is None or w.memory_gib * GB_PER_GIB < need_gb:
                continue
            limit = n_sat(catalog, min(v.network_gbps, w.network_gbps))
            qw = quotas.get(w.family)
            for n in range(1, cap + 1):
                if qv and n * v.vcpus > qv.spot_vcpus:
                    continue
                for m in range(1, cap + 1):
                    if not n / m < limit:
                        continue
                    # the cheapest valid m is the only candidate: larger ones cost more
                    price = n * v.spot_usd_per_hour + m * w.on_demand_usd_per_hour
                    if (not qw or m * w.vcpus <= qw.on_demand_vcpus) and (
                            price <= pw + PRICE_SLACK_USD):
                        k = k_factor(v, n)
                        z = n * spfp
                        out.append(OracleConfiguration("tiering", v.name, n, w.name, m, price,
                                                       z * k, z, v.eflops * n * k, v.eflops * n,
                                                       speed(v, n, ref=ref),
                                                       speed(v, n, noscale=True,
                                                             ref=ref)))
                    break
    return out


def ranked(configs: list[OracleConfiguration], objective: str,
           noscale: bool = False) -> list[OracleConfiguration]:
    """Stage 4: objective highest first; ties to the lower hourly price, then fewer VMs, then
    architecture, GPU and CPU name."""
    return sorted(configs, key=lambda c: (-c.value(objective, noscale), c.price, c.n + c.m,
                                          c.architecture, c.gpu, c.cpu or ""))


def distinct_undominated(ranked: list[OracleConfiguration]) -> list[OracleConfiguration]:
    """Issue 27's list as a person reads it, with plain loops: the first configuration of each
    cluster (architecture, GPU type, n) in ranked order, then only those that no kept cluster
    above beats: at least as fast (the speed when every configuration has one, else the
    performance) and at most as dear, one of the two strictly."""
    firsts: dict[tuple[str, str, int], OracleConfiguration] = {}
    for c in ranked:
        firsts.setdefault((c.architecture, c.gpu, c.n), c)
    use_speed = all(not math.isnan(c.speed) for c in ranked)
    kept: list[OracleConfiguration] = []
    for c in firsts.values():
        fast = c.speed if use_speed else c.performance
        beaten = False
        for above in kept:
            fast_above = above.speed if use_speed else above.performance
            if (fast_above >= fast and above.price <= c.price
                    and (fast_above > fast or above.price < c.price)):
                beaten = True
        if not beaten:
            kept.append(c)
    return kept


def top_k(catalog: Catalog, scenario: Scenario, k: int, *, noscale: bool = False,
          architecture: str | None = None) -> list[OracleConfiguration]:
    """The k best configurations at the scenario's PW under its objective."""
    found = configurations(catalog, scenario, scenario.pw_usd_per_hour)
    if architecture is not None:
        found = [c for c in found if c.architecture == architecture]
    return ranked(found, scenario.objective, noscale)[:k]


def baselines(catalog: Catalog, scenario: Scenario,
              found: list[OracleConfiguration] | None = None) -> tuple[
        OracleConfiguration | None, OracleConfiguration | None]:
    """Cost-First and Performance-First (model.md, "Baseline policies") at the scenario's PW;
    ``found``: :func:`configurations` at that PW when the caller has them already."""
    if found is None:
        found = configurations(catalog, scenario, scenario.pw_usd_per_hour)
    largest: dict[str, OracleConfiguration] = {}
    for c in found:
        if c.architecture == "single_anchor" and (c.gpu not in largest or
                                                  c.n > largest[c.gpu].n):
            largest[c.gpu] = c
    if not largest:
        return None, None
    cost_first = min(largest.values(), key=lambda c: (-c.n, c.price, c.gpu))
    gpus = {g.name: g for g in catalog.gpu_types}
    performance_first = min(largest.values(), key=lambda c: (
        -(gpus[c.gpu].eflops or 0.0), gpus[c.gpu].spot_usd_per_hour, c.gpu))
    return cost_first, performance_first
