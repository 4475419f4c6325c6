"""Issue 18, item 1: t_ref is the only absolute time. A measurement table gives speedup shapes and
relative one-VM times, never the job's epoch time: ten times t_ref is ten times every epoch time
and every compute time, with the bundled table, in the core and in the CLI's plan JSON."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout

import numpy as np
import pytest

from deepvm_core.catalog.store import load_catalog
from deepvm_core.cli import main
from deepvm_core.cli.job_args import load_measurements_arg
from deepvm_core.job.inputs import job_inputs
from deepvm_core.model import Scenario
from deepvm_core.pipeline.job_arrays import cluster_arrays
from deepvm_core.search.candidates import build_candidates
from deepvm_core.workload.speedup import SpeedupModel
from deepvm_core.workload.workload import Workload

AWS = "aws-us-east-1-2023-10"


def _plan_json(seconds: str, *extra: str) -> dict:
    buf = io.StringIO()
    with redirect_stdout(buf):
        code = main(["plan", "--catalog", AWS, "--pw", "3", "--epochs", "30", "--epoch-seconds",
                     seconds, "--ref-type", "g4dn.xlarge", "--measurements", "deepvm-scaling",
                     "--trials", "0", "--format", "json", *extra])
    assert code == 0
    return json.loads(buf.getvalue())


def _estimates(doc: dict) -> dict[str, dict]:
    """Every configuration of a plan JSON with its estimate, by its summary."""
    found = [*doc["best"], *doc["frontier"], *doc["policies"]["deepvm"]]
    found += [doc["policies"][k] for k in ("deepvm_performance", "deepvm_noscale", "cost_first",
                                          "performance_first")]
    return {c["summary"]: c["estimate"] for c in found if c is not None}


@pytest.mark.parametrize("speedup", ["measured", "fitted", "paper"])
def test_ten_times_t_ref_is_ten_times_every_time_in_the_plan_json(speedup: str) -> None:
    one = _plan_json("61.16", "--speedup", speedup)
    ten = _plan_json("611.6", "--speedup", speedup)
    types_one = one["assumptions"]["gpu_types"]
    types_ten = ten["assumptions"]["gpu_types"]
    for name, facts in types_one.items():
        if facts["one_vm_epoch_seconds"] is not None:
            assert types_ten[name]["one_vm_epoch_seconds"] == pytest.approx(
                10 * facts["one_vm_epoch_seconds"], rel=1e-12), name
    # g4dn.xlarge is g_ref (n_ref 1): its one-VM time is t_ref itself, never the table's 61.155 s
    assert types_ten["g4dn.xlarge"]["one_vm_epoch_seconds"] == pytest.approx(611.6, rel=1e-12)
    # g3s.xlarge has one-node rows in the table with g4dn.xlarge: rho = 245.586753 / 61.155439
    assert types_one["g3s.xlarge"]["relative_speed_source"] == "measured"
    assert types_one["g3s.xlarge"]["relative_speed_table"] == "deepvm-scaling"
    assert types_one["g3s.xlarge"]["one_vm_epoch_seconds"] == pytest.approx(
        61.16 * 245.586753 / 61.155439, rel=1e-12)
    a, b = _estimates(one), _estimates(ten)
    common = set(a) & set(b)
    assert len(common) >= 3
    for key in common:
        assert b[key]["epoch_seconds"] == pytest.approx(10 * a[key]["epoch_seconds"], rel=1e-12)
        assert b[key]["compute_hours"] == pytest.approx(10 * a[key]["compute_hours"], rel=1e-12)


def test_ten_times_t_ref_scales_every_candidate_of_the_core() -> None:
    catalog = load_catalog(AWS)
    table = build_candidates(catalog, Scenario(3.0), pw_usd_per_hour=3.0,
                             memory_node_choices=None)
    clusters = cluster_arrays(catalog, table)
    model = SpeedupModel("measured", load_measurements_arg("deepvm-scaling"))
    one = job_inputs(Workload(epochs=30, reference_epoch_seconds=61.16), catalog, clusters, model)
    ten = job_inputs(Workload(epochs=30, reference_epoch_seconds=611.6), catalog, clusters, model)
    assert table.n.size > 100
    np.testing.assert_allclose(ten.epoch_seconds, 10 * one.epoch_seconds, rtol=1e-12)
    np.testing.assert_allclose(ten.compute_seconds, 10 * one.compute_seconds, rtol=1e-12)
