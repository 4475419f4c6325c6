"""Interruptions that grow with the cluster (issue 25): whole-market events and per-VM reclaims
(deepvm_core/market/reclaims.py). Expected values by hand, from the oracle's closed form
(tests/job_oracle.py) and from its independent plain-loop simulation of the two event kinds."""

from __future__ import annotations

import itertools
import math
import random
from dataclasses import replace

import numpy as np
import pytest

from deepvm_core.job.closed_form import expected_jobs
from deepvm_core.job.inputs import ClusterArrays, JobInputs, job_inputs
from deepvm_core.market.reclaims import cluster_interruption_rate, estimate_per_vm_share
from deepvm_core.market.trace import SpotTrace
from deepvm_core.model import Arch
from deepvm_core.workload.workload import DEFAULT_PER_VM_SHARE, Workload
from tests import job_oracle


def tiering(catalog, gpu: str, spot_vms: list[int]) -> ClusterArrays:
    g = next(i for i, t in enumerate(catalog.gpu_types) if t.name == gpu)
    size = len(spot_vms)
    return ClusterArrays(
        architecture=np.full(size, int(Arch.TIERING)), gpu_index=np.full(size, g),
        n_gpu=np.array(spot_vms), n_spot=np.array(spot_vms), memory_nodes=np.ones(size),
        gpu_network_gbps=np.full(size, 25.0), memory_network_gbps=np.full(size, 10.0),
        price_usd_per_hour=np.full(size, 10.0), on_demand_usd_per_hour=np.full(size, 0.2))


def test_sixteen_spot_vms_are_interrupted_more_often_than_one_and_more_with_the_share(
        aws_catalog):
    # g4dn.xlarge is in the 15-20 % bucket in this catalog: MTBI 3.8 h.
    workload = Workload(epochs=10, reference_epoch_seconds=600.0, reference_gpu="g4dn.xlarge")
    assert workload.per_vm_share == DEFAULT_PER_VM_SHARE == 0.06
    clusters = tiering(aws_catalog, "g4dn.xlarge", [1, 16])
    plan = job_inputs(workload, aws_catalog, clusters)
    one, sixteen = plan.interruption_rate_per_hour
    # λ(1) = 1 / 3.8; λ(16) = (1 + 0.06 * 15) / 3.8 = 1.9 / 3.8 = 0.5 per hour
    assert one == pytest.approx(1 / 3.8, rel=1e-12)
    assert sixteen == pytest.approx(0.5, rel=1e-12)
    est = expected_jobs(plan)
    assert est.expected_interruptions[1] / est.compute_hours[1] > (
        est.expected_interruptions[0] / est.compute_hours[0])
    rates = [job_inputs(replace(workload, per_vm_share=rho), aws_catalog,
                        clusters).interruption_rate_per_hour for rho in (0.0, 0.06, 0.3, 1.0)]
    assert [r[0] for r in rates] == pytest.approx([1 / 3.8] * 4, rel=1e-12)  # one VM: the same
    assert [r[1] for r in rates] == pytest.approx([1 / 3.8, 1.9 / 3.8, 5.5 / 3.8, 16 / 3.8],
                                                  rel=1e-12)
    sixteens = [r[1] for r in rates]
    assert all(a < b for a, b in itertools.pairwise(sixteens))


def test_daly_uses_the_clusters_own_mtbi(aws_catalog):
    workload = Workload(epochs=10, reference_epoch_seconds=600.0, reference_gpu="g4dn.xlarge",
                        checkpoint_every_epochs="auto")
    plan = job_inputs(workload, aws_catalog, tiering(aws_catalog, "g4dn.xlarge", [16]))
    m = 3.8 / 1.9 * 3600  # the cluster's MTBI (15-20 % bucket, 16 VMs), seconds
    assert float(plan.checkpoint_interval_seconds[0]) == pytest.approx(
        job_oracle.daly_s(float(plan.checkpoint_stall_seconds[0]), m), rel=1e-12)


def test_the_closed_form_matches_the_oracle_with_both_kinds():
    # The oracle adds (1 - ρ)/MTBI and n ρ/MTBI on its own; then the same closed form.
    for n, rho in ((1, 0.06), (4, 0.3), (16, 0.06), (32, 1.0)):
        rate = job_oracle.cluster_rate(2.5, rho, n)
        assert float(cluster_interruption_rate(2.5, rho, n)) == pytest.approx(rate, rel=1e-14)
    assert float(cluster_interruption_rate(2.5, 0.3, 0)) == 0.0


def test_an_independent_simulation_of_the_two_kinds_agrees_with_the_closed_form():
    # 4 spot VMs, MTBI of one VM 3 h, ρ = 0.3: market 0.7/3, each VM 0.1 per hour; 3.5 compute
    # hours in segments of 1 h (checkpoint stall 36 s) and a last of 0.5 h; R 0.1, W 0.5.
    mtbi, rho, n, restart, wait = 3.0, 0.3, 4, 0.1, 0.5
    segments = [1.01, 1.01, 1.01, 0.5]
    rng = random.Random(2025)
    runs = [job_oracle.simulate_job(rng, segments, mtbi, rho, n, restart, wait)
            for _ in range(20_000)]
    plan = JobInputs.from_segments(
        compute_seconds=3.5 * 3600, checkpoint_interval_seconds=3600.0,
        checkpoint_stall_seconds=36.0,
        interruption_rate_per_hour=cluster_interruption_rate(mtbi, rho, n),
        restart_hours=restart, wait_hours=wait, price_usd_per_hour=2.0,
        on_demand_usd_per_hour=0.5)
    est = expected_jobs(plan)
    assert int(plan.checkpoints[0]) == 3
    for sample, want in (
            ([r.makespan_h for r in runs], est.expected_makespan_hours[0]),
            ([r.interruptions for r in runs], est.expected_interruptions[0]),
            ([2.0 * r.up_h + 0.5 * r.waited_h for r in runs], est.expected_cost_usd[0])):
        x = np.asarray(sample, dtype=float)
        assert abs(x.mean() - float(want)) <= 4 * x.std() / math.sqrt(x.size)
    oracle = job_oracle.expected_job(3.5 * 3600, 3600.0, 36.0, job_oracle.cluster_rate(
        mtbi, rho, n), restart, wait, 2.0, 0.5)
    assert float(est.expected_makespan_hours[0]) == pytest.approx(oracle.makespan_h, rel=1e-12)


def synthetic_count_trace(seed: int, vms: int, mtbi: float, rho: float, market_wait: float,
                          vm_wait: float, days: float, gap_s: float) -> SpotTrace:
    """A count trace of ``vms`` VMs from the model: whole-market outages at (1 - ρ)/MTBI (all
    VMs gone for an exponential of mean ``market_wait``), and each VM lost at ρ/MTBI while the
    market is up, back after an exponential of mean ``vm_wait``; the count of each tick is the
    VMs up at its start."""
    rng = random.Random(seed)
    lam_m, lam_v = (1 - rho) / mtbi, rho / mtbi
    gap = gap_s / 3600.0
    ticks = int(days * 24.0 / gap)
    counts = [0] * ticks
    market_up, switch = True, rng.expovariate(lam_m)  # the market's state and next change
    back = [0.0] * vms  # per VM: when it is back (<= now: up)
    for k in range(ticks):
        now = k * gap
        while switch <= now:
            market_up = not market_up
            if market_up:
                back = [switch] * vms
            switch += rng.expovariate(lam_m if market_up else 1 / market_wait)
        if not market_up:
            continue
        for v in range(vms):  # per-VM losses in this tick (exponential clocks)
            if back[v] <= now and rng.random() < 1 - math.exp(-lam_v * gap):
                back[v] = now + rng.expovariate(1 / vm_wait)
        counts[k] = sum(1 for t in back if t <= now)
    return SpotTrace("synthetic", gap_s, np.asarray(counts, dtype=np.int64))


def test_share_estimated_from_a_count_trace_of_the_model():
    trace = synthetic_count_trace(7, vms=8, mtbi=4.0, rho=0.25, market_wait=1.0,
                                  vm_wait=0.2, days=400, gap_s=120)
    got = estimate_per_vm_share(trace)
    assert got.vms == 8
    assert got.per_vm_share == pytest.approx(0.25, abs=0.04)
    assert got.mtbi_hours == pytest.approx(4.0, rel=0.1)


def test_a_state_trace_cannot_say():
    trace = SpotTrace("state", 600, np.array([1, 1, 0, 1, 0, 1]))
    got = estimate_per_vm_share(trace)
    assert got.per_vm_share is None
    assert got.mtbi_hours is None
    never = SpotTrace("count", 600, np.array([4, 4, 4, 4]))
    assert estimate_per_vm_share(never).per_vm_share is None
