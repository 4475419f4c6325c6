"""A test oracle for the job model: ``job-model.md`` in plain Python loops and ``math``.

It shares no code with ``deepvm_core.job``: speedups, one-VM epoch times, checkpoint stalls,
Daly's interval, the cut into segments and the exact expectations are written again, one
configuration and one segment at a time, straight from the contract's formulas. Configurations
come from ``tests/oracle.py`` (``model.md`` in loops: per (v, w, n) the fewest valid memory
nodes). Slow by design.

Symbols as in ``job-model.md``: E epochs, t_ref seconds per epoch on n_ref VMs of g_ref, f GB,
k epochs per checkpoint, R and W hours, D GB/s, δ0 seconds, MTBI hours; issue 25 adds ρ, the
share of one VM's reclaims that take that VM alone (whole-market events at (1 - ρ) / MTBI, each
spot VM at ρ / MTBI), W per Spot Advisor bucket and the start-up wait.

:func:`simulate_job` is an independent plain-loop Monte Carlo of that process with the two
event kinds drawn separately (one exponential clock for the market and one per spot VM), the
outages exponential of mean W, and a start inside an outage with probability W / (MTBI_n + W).
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Mapping
from dataclasses import dataclass, field

from deepvm_core.catalog import Catalog, GpuType
from deepvm_core.model import Scenario
from tests import oracle

#: Default MTBI (hours) of one spot VM per Spot Advisor bucket r = 0..4 (docs/method.md: the
#: >20 % traces' median 1.9 h, doubling per bucket below).
MTBI_HOURS_BY_BUCKET = {0: 30.4, 1: 15.2, 2: 7.6, 3: 3.8, 4: 1.9}
#: A type with no bucket: the 10-15 % bucket's default.
MTBI_HOURS_NO_BUCKET = 7.6
#: Default capacity wait W (hours), every bucket and no bucket (docs/method.md).
WAIT_HOURS_DEFAULT = 1.1
#: Default ρ (docs/method.md: the only share inside both ranges of the count traces).
PER_VM_SHARE_DEFAULT = 0.06
#: Seconds per hour.
HOUR_S = 3600.0


# ----------------------------------------------------------------------------- speedup


def logistic(a: float, b: float, c: float, n: float) -> float:
    """The fitted logistic c / (1 + exp(-a (n - b)))."""
    return c / (1.0 + math.exp(-a * (n - b)))


def paper_speedup(a: float, b: float, c: float, n: int) -> float:
    """``paper``: S(n) = n K(n), K(n) = 1 up to b, else the logistic over its tangent at b,
    L(n) = c a (n - b) / 4 + c / 2 (model.md)."""
    if n <= b:
        return float(n)
    return n * logistic(a, b, c, n) / (c * a * (n - b) / 4.0 + c / 2.0)


def fitted_speedup(params: tuple[float, float, float] | None, n: int) -> float:
    """``fitted``: 1 at one node, the logistic from two; S(n) = n without (a, b, c)."""
    if params is None:
        return float(n)
    return 1.0 if n == 1 else logistic(*params, n)


def measured_speedup(rows: Mapping[int, float], n: float) -> float:
    """``measured``: S(n) = t(1) / t(n) between the measured node counts, linear in n; flat
    past the largest one. ``rows``: node count -> seconds per epoch (one node included)."""
    points = sorted((nodes, rows[1] / seconds) for nodes, seconds in rows.items())
    if n >= points[-1][0]:
        return points[-1][1]
    for (n0, s0), (n1, s1) in itertools.pairwise(points):
        if n0 <= n <= n1:
            return s0 + (s1 - s0) * (n - n0) / (n1 - n0)
    raise ValueError(f"n = {n} is below the smallest measured node count")


@dataclass(frozen=True)
class Job:
    """A job and its assumptions (job-model.md, Inputs; None: the contract's default)."""

    epochs: float
    t_ref: float
    g_ref: str | None = None
    n_ref: int = 1
    f_gb: float = 0.3
    every_epochs: int | None = 1  # None: Daly's interval
    restart_h: float = 0.1
    wait_h: float | None = None  # None: the bucket's default
    disk_gbps: float = 0.25
    fixed_s: float = 0.0
    mtbi_h: Mapping[str, float] = field(default_factory=dict)
    mtbi_scale: float = 1.0
    per_vm_share: float = PER_VM_SHARE_DEFAULT
    speedup: str = "fitted"  # paper, fitted or measured
    #: measured epoch times: GPU type -> {nodes: seconds per epoch}
    measurements: Mapping[str, Mapping[int, float]] = field(default_factory=dict)


def speedup(job: Job, gpu: GpuType, n: int) -> float:
    """S_g(n) under the job's model; ``measured`` falls back to ``fitted`` without rows."""
    params = None if gpu.scaling is None else (gpu.scaling.a, gpu.scaling.b, gpu.scaling.c)
    if job.speedup == "measured" and gpu.name in job.measurements:
        return measured_speedup(job.measurements[gpu.name], n)
    if job.speedup == "paper":
        return float(n) if params is None else paper_speedup(*params, n)
    return fitted_speedup(params, n)


#: The yardstick (issue 24): a job without g_ref gives t_ref on one A10G GPU, 696 eFLOPS (the
#: artifact's measured g5.xlarge); one-node rows of a one-A10G type stand for it in a table.
YARDSTICK_EFLOPS = 696.0
#: The one-A10G instance types (data/instance-gpus.csv, 1 A10G each).
ONE_A10G_TYPES = ("g5.16xlarge", "g5.2xlarge", "g5.4xlarge", "g5.8xlarge", "g5.xlarge")


def reference_gpu(catalog: Catalog, job: Job) -> GpuType | None:
    """g_ref: the job's, else ``None`` (the yardstick)."""
    if job.g_ref is not None:
        return next(g for g in catalog.gpu_types if g.name == job.g_ref)
    return None


def one_vm_seconds(catalog: Catalog, job: Job, gpu: GpuType) -> float:
    """t_g(1) = t_ref S_ref(n_ref) ρ_g: ρ_g = t^m_g(1) / t^m_ref(1) when the measurements have
    one-node times of both g and g_ref, else eFLOPS(g_ref) / eFLOPS(g). Without g_ref: t_ref1 =
    t_ref, g_ref's rows those of the first one-A10G type measured on one node, eFLOPS 696."""
    ref = reference_gpu(catalog, job)
    g_rows = job.measurements.get(gpu.name, {})
    if ref is None:
        t_ref1 = job.t_ref
        ref_rows: Mapping[int, float] = {}
        for name in ONE_A10G_TYPES:
            if 1 in job.measurements.get(name, {}):
                ref_rows = job.measurements[name]
                break
        ref_eflops = YARDSTICK_EFLOPS
    else:
        t_ref1 = job.t_ref * speedup(job, ref, job.n_ref)
        ref_rows = job.measurements.get(ref.name, {})
        assert ref.eflops is not None
        ref_eflops = ref.eflops
    if 1 in g_rows and 1 in ref_rows:
        return t_ref1 * g_rows[1] / ref_rows[1]
    assert gpu.eflops is not None
    return t_ref1 * ref_eflops / gpu.eflops


def mtbi_hours(job: Job, gpu: GpuType) -> float:
    """The user's MTBI, else the bucket's default, else 8 h; times the sensitivity scale."""
    if gpu.name in job.mtbi_h:
        hours = job.mtbi_h[gpu.name]
    elif gpu.interruption_bucket is not None:
        hours = MTBI_HOURS_BY_BUCKET[gpu.interruption_bucket]
    else:
        hours = MTBI_HOURS_NO_BUCKET
    return hours * job.mtbi_scale


# ----------------------------------------------------------------------------- checkpoints


def tiering_stall_s(f_gb: float, n: int, m: int, bw_w_gbps: float, fixed_s: float) -> float:
    """δ = δ0 + 8 f ceil(n/m) / (n BW(w)), seconds."""
    return fixed_s + 8.0 * f_gb * math.ceil(n / m) / (n * bw_w_gbps)


def single_anchor_stall_s(f_gb: float, n: int, bw_v_gbps: float, disk_gbps: float,
                          fixed_s: float) -> float:
    """δ = δ0 + 8 f (n - 1) / (n BW(v)) + f / D, seconds."""
    return fixed_s + 8.0 * f_gb * (n - 1) / (n * bw_v_gbps) + f_gb / disk_gbps


def daly_s(stall_s: float, mtbi_s: float) -> float:
    """Daly's τ: sqrt(2δM) [1 + (1/3) sqrt(δ/(2M)) + (1/9) δ/(2M)] - δ if δ < 2M, else M."""
    if stall_s >= 2.0 * mtbi_s:
        return mtbi_s
    x = stall_s / (2.0 * mtbi_s)
    return math.sqrt(2.0 * stall_s * mtbi_s) * (1.0 + math.sqrt(x) / 3.0 + x / 9.0) - stall_s


def segments_s(compute_s: float, tau_s: float) -> list[float]:
    """T_c cut into segments of τ compute seconds, the last one the rest (a rest of at most
    1e-12 T_c, float rounding, is no extra segment: T_c = 3 τ is three segments)."""
    if math.isinf(tau_s):
        return [compute_s]
    full = 0
    while compute_s - (full + 1) * tau_s > 1e-12 * compute_s:
        full += 1
    return [tau_s] * full + [compute_s - full * tau_s]


# ----------------------------------------------------------------------------- expectations


def wait_hours(job: Job) -> float:
    """The job's W, else the bucket default (the same for every bucket)."""
    return WAIT_HOURS_DEFAULT if job.wait_h is None else job.wait_h


def cluster_rate(mtbi_h: float, share: float, spot_vms: int) -> float:
    """Events per hour of ``spot_vms`` spot VMs: the market's (1 - ρ)/MTBI plus ρ/MTBI for
    each VM (0 without spot VMs)."""
    if spot_vms == 0:
        return 0.0
    market = (1.0 - share) / mtbi_h
    per_vm = share / mtbi_h
    return market + spot_vms * per_vm


def segment(s_h: float, rate: float, restart_h: float, wait_h: float) -> tuple[float, float]:
    """(E0, F0) of one segment of s hours: E1 = (e^{λ(R+s)} - 1)(1/λ + W),
    E0 = (1 - e^{-λs})/λ + (1 - e^{-λs})(W + E1), F0 = (1 - e^{-λs}) e^{λ(R+s)}; λ = 0: (s, 0)."""
    if rate == 0.0:
        return s_h, 0.0
    q0 = 1.0 - math.exp(-rate * s_h)
    e1 = (math.exp(rate * (restart_h + s_h)) - 1.0) * (1.0 / rate + wait_h)
    e0 = q0 / rate + q0 * (wait_h + e1)
    return e0, q0 * math.exp(rate * (restart_h + s_h))


@dataclass(frozen=True)
class Expectation:
    """T (hours), N (events), C (USD), checkpoints, compute hours and the on-demand baseline."""

    makespan_h: float
    interruptions: float
    cost_usd: float
    checkpoints: int
    compute_h: float
    on_demand_makespan_h: float


def expected_job(compute_s: float, tau_s: float, stall_s: float, rate: float, restart_h: float,
                 wait_h: float, price: float, price_od: float) -> Expectation:
    """Sum over the segments (each but the last followed by a stall of δ), plus the start-up
    wait: a random start is inside an outage with probability p = W / (1/λ + W) and then waits
    W on average: T = p W + Σ E0, N = Σ F0, C = P (T - N W - p W) + P_od (N W + p W)."""
    parts = segments_s(compute_s, tau_s)
    e0s, f0s, lengths = [], [], []
    for i, compute in enumerate(parts):
        s_h = (compute + (stall_s if i < len(parts) - 1 else 0.0)) / HOUR_S
        e0, f0 = segment(s_h, rate, restart_h, wait_h)
        e0s.append(e0)
        f0s.append(f0)
        lengths.append(s_h)
    start = 0.0
    if rate > 0.0 and wait_h > 0.0:
        start = wait_h / (1.0 / rate + wait_h) * wait_h
    t, n = math.fsum(e0s) + start, math.fsum(f0s)  # exactly rounded sums
    waited = n * wait_h + start
    cost = price * (t - waited) + price_od * waited
    return Expectation(t, n, cost, len(parts) - 1, compute_s / HOUR_S, math.fsum(lengths))


# ----------------------------------------------------------------------------- configurations


@dataclass(frozen=True)
class JobConfiguration:
    """A configuration of model.md with its job expectations."""

    config: oracle.OracleConfiguration
    epoch_s: float
    expectation: Expectation


def evaluate(catalog: Catalog, job: Job, c: oracle.OracleConfiguration) -> JobConfiguration:
    """The job on one configuration: t_g(n), δ, τ, λ, P and P_od, then :func:`expected_job`."""
    gpu = next(g for g in catalog.gpu_types if g.name == c.gpu)
    epoch_s = one_vm_seconds(catalog, job, gpu) / speedup(job, gpu, c.n)
    if c.architecture == "tiering":
        cpu = next(w for w in catalog.cpu_types if w.name == c.cpu)
        stall = tiering_stall_s(job.f_gb, c.n, c.m, cpu.network_gbps, job.fixed_s)
        spot_vms, price_od = c.n, c.m * cpu.on_demand_usd_per_hour
    else:
        stall = single_anchor_stall_s(job.f_gb, c.n, gpu.network_gbps, job.disk_gbps,
                                      job.fixed_s)
        spot_vms, price_od = c.n - 1, gpu.on_demand_usd_per_hour
    mtbi = mtbi_hours(job, gpu)
    rate = cluster_rate(mtbi, job.per_vm_share, spot_vms)
    if job.every_epochs is not None:
        tau = job.every_epochs * epoch_s
    else:  # Daly with the cluster's own MTBI, 1 / λ(n)
        tau = daly_s(stall, HOUR_S / rate) if spot_vms > 0 else math.inf
    exp = expected_job(job.epochs * epoch_s, tau, stall, rate, job.restart_h, wait_hours(job),
                       c.price, price_od)
    return JobConfiguration(c, epoch_s, exp)


def evaluate_all(catalog: Catalog, scenario: Scenario, pw: float,
                 job: Job) -> list[JobConfiguration]:
    """Every configuration of model.md within ``pw``, with its job expectations."""
    return [evaluate(catalog, job, c) for c in oracle.configurations(catalog, scenario, pw)]


# ----------------------------------------------------------------------------- simulation


@dataclass(frozen=True)
class SimulatedRun:
    """One simulated run: wall hours, events, hours up (billed at P) and hours waiting."""

    makespan_h: float
    interruptions: int
    up_h: float
    waited_h: float


def simulate_job(rng: random.Random, segments_h: list[float], mtbi_h: float, share: float,
                 spot_vms: int, restart_h: float, wait_h: float) -> SimulatedRun:
    """One run of the job, attempt by attempt, with the two kinds of reclaims drawn apart.

    While the spot VMs are up, the market fires at (1 - ρ)/MTBI and each of the n VMs at
    ρ/MTBI: the attempt ends at the earliest of the n + 1 exponential clocks (a fresh set per
    attempt; exponential clocks forget). After an event the cluster waits an exponential
    outage of mean W, then restarts (R) and retries the segment. Before the first attempt the
    market is inside an outage with probability W / (MTBI_n + W), MTBI_n = 1 / (sum of the
    n + 1 clocks' rates) being the mean up time, and the run then waits an exponential of mean
    W first.
    """
    market = (1.0 - share) / mtbi_h
    per_vm = share / mtbi_h
    clocks = [market] + [per_vm] * spot_vms if spot_vms else []

    def next_event() -> float:
        times = [rng.expovariate(r) for r in clocks if r > 0]
        return min(times) if times else math.inf

    clock = up = waited = 0.0
    events = 0
    if clocks and wait_h > 0:
        mean_up = 1.0 / sum(clocks)
        if rng.random() < wait_h / (mean_up + wait_h):
            start = rng.expovariate(1.0 / wait_h)
            clock += start
            waited += start
    for s in segments_h:
        length = s  # the first attempt needs no restart
        while True:
            fail_at = next_event()
            if fail_at >= length:
                clock += length
                up += length
                break
            pause = rng.expovariate(1.0 / wait_h) if wait_h > 0 else 0.0
            clock += fail_at + pause
            up += fail_at
            waited += pause
            events += 1
            length = restart_h + s
    return SimulatedRun(clock, events, up, waited)
