"""Checks on the development traces (issue 25), which the project does not ship: skipped unless
they are found (``$DEEPVM_DEV_TRACES``, else the shared folder).

* The defaults without a trace (MTBI and W per bucket, their spread) are what
  ``bench/bench_defaults.py`` derives from the traces.
* The plan's P90 from those defaults (no trace) is not below the replay's median in more than
  20 % of the pools, for short, medium and long jobs on one spot VM: the band of a plan from a
  bucket is wide enough to hold the markets the bucket holds.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from bench.dev_traces import TRACES
from deepvm_core.catalog.store import load_catalog
from deepvm_core.job.backtest import BacktestJob
from deepvm_core.job.backtest_replay import backtest
from deepvm_core.job.inputs import ClusterArrays, job_inputs
from deepvm_core.job.spread import bucket_scenarios, simulate_scenarios
from deepvm_core.market.mtbi import (
    ADVISOR_BUCKET_MTBI_HOURS,
    ADVISOR_BUCKET_WAIT_HOURS,
    BUCKET_SPREAD,
)
from deepvm_core.market.trace import load_trace
from deepvm_core.model import Arch
from deepvm_core.units import SECONDS_PER_HOUR
from deepvm_core.workload.workload import Workload

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted(TRACES.glob("*/*.json"))
pytestmark = pytest.mark.skipif(not FILES, reason=f"no development traces under {TRACES}")


def _bench(name: str):  # the bench scripts are not a package: they import each other by name
    if str(ROOT / "bench") not in sys.path:
        sys.path.insert(0, str(ROOT / "bench"))
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_the_bucket_defaults_are_the_derivation_of_the_bench():
    d = _bench("bench_defaults").derive(TRACES)
    assert len(d.windows) == 48
    assert d.mtbi_hours == round(d.median_mtbi_hours, 1) == ADVISOR_BUCKET_MTBI_HOURS[4]
    assert tuple(d.mtbi_hours * 2 ** (4 - r) for r in range(5)) == ADVISOR_BUCKET_MTBI_HOURS
    assert set(ADVISOR_BUCKET_WAIT_HOURS) == {d.wait_hours}
    assert d.spread == BUCKET_SPREAD


@pytest.mark.parametrize("hours", [5, 20, 60])
def test_the_plans_p90_from_a_bucket_holds_the_replays_median_in_most_pools(hours: int):
    # The plan's own path for one candidate: p3.2xlarge (>20 %), Tiering with one spot VM,
    # one epoch of an hour per checkpoint; the closed form's inputs and the bucket's scenarios.
    catalog = load_catalog("aws-us-west-2-2025-h1")
    g = next(i for i, t in enumerate(catalog.gpu_types) if t.name == "p3.2xlarge")
    assert catalog.gpu_types[g].interruption_bucket == 4
    workload = Workload(epochs=hours, reference_epoch_seconds=3600.0,
                        reference_gpu="p3.2xlarge")
    one = ClusterArrays(architecture=[int(Arch.TIERING)], gpu_index=[g], n_gpu=[1], n_spot=[1],
                        memory_nodes=[1], gpu_network_gbps=[10.0], memory_network_gbps=[10.0],
                        price_usd_per_hour=[1.0], on_demand_usd_per_hour=[0.1])
    plan = job_inputs(workload, catalog, one)
    assert float(plan.interruption_rate_per_hour[0]) == 1 / 1.9
    rates, waits = bucket_scenarios(plan, [True], [True])
    p90 = float(simulate_scenarios(plan, rates, waits, np.random.default_rng(0),
                                   trials=10_000).makespan_hours_p90[0])
    segment = float(plan.full_segment_seconds[0]) / SECONDS_PER_HOUR
    job = BacktestJob(plan.checkpoints, np.array([[segment]]),
                      np.array([[float(plan.last_segment_seconds[0]) / SECONDS_PER_HOUR]]),
                      np.array([[0.1]]), np.array([[1]]), np.array([[1.0]]), np.array([[0.1]]),
                      np.array([[1.0]]))
    below = []
    for f in FILES:  # the whole trace, the wait policy, 200 starts
        median = float(np.median(backtest([load_trace(f)], job, policy="wait",
                                          starts=200).makespan_hours[0]))
        if p90 < median:
            below.append(f"{f.stem}: P90 {p90:.1f} h < replay median {median:.1f} h")
    assert len(below) <= math.floor(0.2 * len(FILES)), below
