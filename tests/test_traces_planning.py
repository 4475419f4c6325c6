"""Backtesting every configuration of a GPU type with pools (``deepvm_core.pipeline.replay_hook``):
the pool order and the estimates against backtests of single configurations done one by one."""

from __future__ import annotations

import numpy as np

from deepvm_core.catalog.store import load_catalog
from deepvm_core.job.backtest import BacktestJob
from deepvm_core.job.backtest_replay import backtest
from deepvm_core.job.inputs import job_inputs
from deepvm_core.market.pools import make_pool
from deepvm_core.market.trace import SpotTrace
from deepvm_core.model import Scenario
from deepvm_core.pipeline.job_arrays import cluster_arrays
from deepvm_core.pipeline.replay_hook import backtest_candidates
from deepvm_core.search.candidates import build_candidates
from deepvm_core.workload.speedup import SpeedupModel
from deepvm_core.workload.workload import Workload


def synthetic(seed: int, ticks: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.random(ticks) < 0.8).astype(np.int64) | (np.arange(ticks) % 7 == 0)


def test_order_and_estimates_match_one_by_one():
    catalog = load_catalog("aws-us-east-1-2023-10")
    table = build_candidates(catalog, Scenario(1.0, 0.3, 2.0), pw_usd_per_hour=1.0)
    clusters = cluster_arrays(catalog, table)
    workload = Workload(epochs=300, reference_epoch_seconds=61.16, reference_gpu="g4dn.xlarge")
    inputs = job_inputs(workload, catalog, clusters, SpeedupModel("fitted"))
    pools = [make_pool(catalog, f"g4dn.xlarge@{z}", SpotTrace(z, 600.0, synthetic(s, 400)))
             for z, s in (("us-east-1b", 1), ("us-east-1a", 2), ("us-east-1c", 3))]
    # the replay over the pools (the default model is the evaluation's best, issue 25)
    est = backtest_candidates(catalog, clusters, inputs, pools, recovery="failover", starts=40,
                              model="replay")
    g4 = [g.name for g in catalog.gpu_types].index("g4dn.xlarge")
    spot_g4 = (clusters.gpu_index == g4) & (clusters.n_spot > 0)
    assert np.array_equal(est.evaluated, spot_g4)
    assert spot_g4.any()
    assert all(est.pools[i] == () for i in np.flatnonzero(~spot_g4))
    gpu = catalog.gpu_types[g4]
    for i in np.flatnonzero(spot_g4)[:6]:
        def job(ps, i=i):
            n = int(clusters.n_spot[i])
            hours = (inputs.checkpoint_interval_seconds[i]
                     + inputs.checkpoint_stall_seconds[i]) / 3600
            od = float(clusters.on_demand_usd_per_hour[i])
            return BacktestJob(
                np.array([inputs.checkpoints[i]]), np.full((1, len(ps)), hours),
                np.full((1, len(ps)), inputs.last_segment_seconds[i] / 3600),
                np.full((1, len(ps)), inputs.restart_hours[i]), np.full((1, len(ps)), n),
                np.array([[clusters.price_usd_per_hour[i] - n * gpu.spot_usd_per_hour
                           + n * p.spot_usd_per_hour for p in ps]]),
                np.full((1, len(ps)), od),
                np.full((1, len(ps)), od + n * gpu.on_demand_usd_per_hour))
        alone = {p.name: backtest([p.trace], job([p]), policy="wait",
                                  starts=40).makespan_hours.mean() for p in pools}
        order = sorted(pools, key=lambda p: (alone[p.name], p.zone))
        assert est.pools[i] == tuple(p.name for p in order)
        runs = backtest([p.trace for p in order], job(order), policy="failover", starts=40)
        assert est.mean_makespan_hours[i] == runs.makespan_hours.mean()
        assert est.mean_cost_usd[i] == runs.cost_usd.mean()
        assert est.deadline_met is None
