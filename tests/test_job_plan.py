"""Cluster arrays -> job plans -> estimates, end to end on the bundled AWS catalog."""

from __future__ import annotations

import math

import numpy as np
import pytest

from deepvm_core.errors import JobModelError
from deepvm_core.hardware.measurements import bundled_measurements_paths, load_measurements
from deepvm_core.job.closed_form import expected_jobs
from deepvm_core.job.inputs import ClusterArrays, job_inputs
from deepvm_core.model import Arch
from deepvm_core.workload.speedup import SpeedupModel
from deepvm_core.workload.workload import Workload
from tests.factories import gpu_row, make_catalog

G4_T1 = 61.155439  # measured one-node seconds per epoch of g4dn.xlarge


def clusters(**over: object) -> ClusterArrays:
    """Table IV's DeepVM 1st (TR 17 x g4dn + 1 x c5.xlarge), Cost-First (SA 16 x g4dn) and a
    single on-demand g4dn.xlarge (SA, n = 1: no spot VMs)."""
    fields: dict[str, object] = {
        "architecture": [Arch.TIERING, Arch.SINGLE_ANCHOR, Arch.SINGLE_ANCHOR],
        "gpu_index": [1, 1, 1], "n_gpu": [17, 16, 1], "n_spot": [17, 15, 0],
        "memory_nodes": [1, 0, 0], "gpu_network_gbps": [25.0, 25.0, 25.0],
        "memory_network_gbps": [10.0, math.nan, math.nan],
        "price_usd_per_hour": [2.8526, 2.893, 0.526],
        "on_demand_usd_per_hour": [0.17, 0.526, 0.526],
    }
    fields.update(over)
    return ClusterArrays(**fields)  # type: ignore[arg-type]


def workload(**over: object) -> Workload:
    fields: dict[str, object] = {"epochs": 30, "reference_epoch_seconds": G4_T1,
                                 "reference_gpu": "g4dn.xlarge"}
    fields.update(over)
    return Workload(**fields)  # type: ignore[arg-type]


def test_plan_by_hand(aws_catalog):
    plan = job_inputs(workload(), aws_catalog, clusters())
    g4 = aws_catalog.gpu_types[1].scaling
    s = [g4.c / (1 + math.exp(-g4.a * (n - g4.b))) for n in (17, 16)]
    np.testing.assert_allclose(plan.epoch_seconds, [G4_T1 / s[0], G4_T1 / s[1], G4_T1],
                               rtol=1e-14)
    np.testing.assert_allclose(plan.compute_seconds, 30 * plan.epoch_seconds, rtol=1e-15)
    np.testing.assert_allclose(plan.checkpoint_stall_seconds, [
        8 * 0.3 * 17 / (17 * 10.0),                  # Tiering, one memory node
        8 * 0.3 * 15 / (16 * 25.0) + 0.3 / 0.25,     # Single Anchor
        0.3 / 0.25,                                  # one VM: only the disk write
    ], rtol=1e-14)
    np.testing.assert_array_equal(plan.checkpoints, [29, 29, 29])  # k = 1: every epoch
    # The bundled catalog puts g4dn.xlarge in the Spot Advisor's 15-20 % bucket (index 3):
    # 3.8 hours between events of one VM (issue 25's table, 4 h before). The clusters'
    # 17 and 15 spot VMs are interrupted 1 + 0.06 (n - 1) times as often (issue 25's ρ):
    # 1.96 / 3.8 and 1.84 / 3.8 per hour.
    assert aws_catalog.gpu_types[1].interruption_bucket == 3
    np.testing.assert_allclose(plan.interruption_rate_per_hour, [1.96 / 3.8, 1.84 / 3.8, 0.0])
    np.testing.assert_allclose(plan.wait_hours, [1.1, 1.1, 1.1])  # the bucket's W
    est = expected_jobs(plan)
    assert est.expected_interruptions[2] == 0.0
    assert est.expected_makespan_hours[2] == pytest.approx((30 * G4_T1 + 29 * 1.2) / 3600)
    assert np.all(est.expected_makespan_hours[:2] > plan.compute_seconds[:2] / 3600)


def test_auto_without_spot_vms_is_one_segment(aws_catalog):
    plan = job_inputs(workload(checkpoint_every_epochs="auto", mtbi_hours_by_gpu={
        "g4dn.xlarge": 2.0}), aws_catalog, clusters())
    assert plan.checkpoints[2] == 0
    assert plan.checkpoint_interval_seconds[2] == plan.compute_seconds[2]
    est = expected_jobs(plan)
    assert est.expected_makespan_hours[2] == pytest.approx(30 * G4_T1 / 3600, rel=1e-14)
    # With spot VMs, Daly's τ for the cluster's M = 2 h / (1 + 0.06 * 16) (issue 25: 17 spot
    # VMs are interrupted 1.96 times as often as one): sqrt(2 δ M) to first order.
    delta = plan.checkpoint_stall_seconds[0]
    assert plan.checkpoint_interval_seconds[0] == pytest.approx(
        math.sqrt(2 * delta * 7200 / 1.96), rel=0.02)


def test_mtbi_scale_and_measured_speedups_flow_through(aws_catalog):
    base = expected_jobs(job_inputs(workload(), aws_catalog, clusters()))
    risky = expected_jobs(job_inputs(workload(mtbi_scale=0.25), aws_catalog, clusters()))
    assert np.all(risky.expected_interruptions[:2] > 3.9 * base.expected_interruptions[:2])
    table = load_measurements(bundled_measurements_paths()["deepvm-scaling"])
    measured = job_inputs(workload(), aws_catalog, clusters(), SpeedupModel("measured", table))
    # 16 nodes measured: 16.338413 s per epoch; 17 nodes: a quarter of the way to 20 nodes.
    assert measured.epoch_seconds[1] == pytest.approx(16.338413, rel=1e-12)
    s16, s20 = G4_T1 / 16.338413, G4_T1 / 14.145735
    assert measured.epoch_seconds[0] == pytest.approx(G4_T1 / (s16 + (s20 - s16) / 4))


def test_types_without_epoch_time_or_bad_indices_are_refused():
    catalog = make_catalog(gpus=[gpu_row("g1"), gpu_row("g2", eflops=None)])
    w = Workload(epochs=1, reference_epoch_seconds=10.0, reference_gpu="g1")
    one = {"architecture": [Arch.TIERING], "n_gpu": [2], "n_spot": [2], "memory_nodes": [1],
           "gpu_network_gbps": [10.0], "memory_network_gbps": [10.0],
           "price_usd_per_hour": [1.0], "on_demand_usd_per_hour": [0.2]}
    with pytest.raises(JobModelError, match="g2: no epoch time"):
        job_inputs(w, catalog, ClusterArrays(gpu_index=[1], **one))  # type: ignore[arg-type]
    with pytest.raises(JobModelError, match="below 2"):
        job_inputs(w, catalog, ClusterArrays(gpu_index=[2], **one))  # type: ignore[arg-type]


@pytest.mark.parametrize(("over", "message"), [
    ({"n_gpu": [17, 16]}, "one length"),
    ({"architecture": [2, 0, 0]}, r"architecture\[0\] = 2"),
    ({"n_spot": [18, 15, 0]}, r"n_spot\[0\] = 18"),
    ({"memory_nodes": [0, 0, 0]}, "must be >= 1 for Tiering"),
    ({"memory_network_gbps": [math.nan] * 3}, "memory_network_gbps"),
    ({"on_demand_usd_per_hour": [3.0, 0.5, 0.5]}, "from 0 to price_usd_per_hour"),
    ({"n_gpu": [17.5, 16, 1]}, "whole numbers"),
    ({"price_usd_per_hour": [[1.0, 2.0, 3.0]]}, "1-D"),
])
def test_cluster_arrays_are_validated(over, message):
    with pytest.raises(JobModelError, match=message):
        clusters(**over)


def test_empty_cluster_arrays_give_empty_estimates(aws_catalog):
    empty = clusters(**{k: [] for k in (
        "architecture", "gpu_index", "n_gpu", "n_spot", "memory_nodes", "gpu_network_gbps",
        "memory_network_gbps", "price_usd_per_hour", "on_demand_usd_per_hour")})
    assert empty.size == 0
    assert expected_jobs(job_inputs(workload(), aws_catalog, empty)).expected_cost_usd.size == 0
