"""Speedup models (paper, fitted, measured) and the one-VM epoch time t_g(1).

Expected values are derived by hand (arithmetic in the comments) or from ``tests/job_oracle.py``
(job-model.md in plain loops), never from the functions under test."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deepvm_core.catalog import ScalingParams
from deepvm_core.errors import InputError, MeasurementsError
from deepvm_core.hardware.measurements import parse_measurements_csv
from deepvm_core.workload.speedup import (
    SpeedupModel,
    fitted_speedup,
    measured_speedup,
    one_vm_epoch_seconds,
    paper_speedup,
    reference_epoch_seconds_from_table,
)
from deepvm_core.workload.workload import Workload
from tests import job_oracle
from tests.factories import gpu_row, make_catalog

G4 = ScalingParams(0.1338806402, 12.87424514, 6.176666667)
TABLE = parse_measurements_csv("instance,nodes,epoch_seconds\n"
                               "g1,1,100\ng1,2,60\ng1,4,40\ng1,8,50\n")


def test_paper_reproduces_the_proxy():
    # The contract: the paper's proxy says 17 g4dn.xlarge VMs run 16.9x one VM. By hand, with
    # (a, b, c) = (0.13388064, 12.87424514, 6.17666667) and n - b = 4.12575486:
    #   logistic: c / (1 + e^{-0.55235870}) = 6.17666667 / 1.57559056 = 3.92022320
    #   tangent at b: c a (n - b) / 4 + c / 2 = 0.85293389 + 3.08833333 = 3.94126723
    #   S(17) = 17 K(17) = 17 * 3.92022320 / 3.94126723 = 17 * 0.99466059 = 16.90923007
    assert paper_speedup(G4, [17])[0] == pytest.approx(16.90923007, rel=1e-8)
    n = np.arange(1, 40)
    expected = [job_oracle.paper_speedup(G4.a, G4.b, G4.c, int(k)) for k in n]
    np.testing.assert_allclose(paper_speedup(G4, n), expected, rtol=1e-12)
    assert paper_speedup(G4, [12])[0] == 12.0  # up to b, K = 1: S(n) = n


def test_fitted_is_the_logistic_from_two_nodes_and_one_at_one():
    n = np.array([1, 2, 17, 32])
    expected = G4.c / (1 + np.exp(-G4.a * (n - G4.b)))
    s = fitted_speedup(G4, n)
    assert s[0] == 1.0
    np.testing.assert_allclose(s[1:], expected[1:], rtol=1e-15)
    np.testing.assert_array_equal(fitted_speedup(None, n), n)  # no (a, b, c): linear


@given(st.floats(0.01, 5), st.floats(0, 0.999), st.floats(0.1, 50))
@settings(max_examples=30, deadline=None)
def test_every_model_has_speedup_one_at_one_node(a, b, c):
    params = ScalingParams(a, b, c)  # b < 1 would make n K(n) != 1 at one node
    assert paper_speedup(params, [1])[0] == 1.0
    assert fitted_speedup(params, [1])[0] == 1.0


def test_measured_interpolates_and_stays_flat_past_the_data():
    g1 = TABLE.get("g1")
    assert g1 is not None
    s = measured_speedup(g1, [1, 2, 3, 4, 6, 8, 9, 100])
    np.testing.assert_allclose(s, [1.0, 100 / 60, (100 / 60 + 100 / 40) / 2, 2.5,
                                   (2.5 + 2.0) / 2, 2.0, 2.0, 2.0])


def test_measured_model_falls_back_to_fitted_and_flags_linear():
    catalog = make_catalog(gpus=[gpu_row("g1"), gpu_row("g2"), gpu_row("g3", scaling=None)])
    g1, g2, g3 = catalog.gpu_types
    model = SpeedupModel("measured", TABLE)
    assert [model.source(g) for g in (g1, g2, g3)] == ["measured", "fitted", "linear"]
    np.testing.assert_allclose(model.speedup(g2, [5]), fitted_speedup(g2.scaling, [5]))
    np.testing.assert_array_equal(model.speedup(g3, [5]), [5.0])
    paper = SpeedupModel("paper", TABLE)
    assert paper.source(g1) == "paper"  # the paper model ignores the rows' speedups
    assert SpeedupModel("measured").source(g1) == "fitted"


def test_measured_rows_without_one_node_are_refused():
    table = parse_measurements_csv("instance,nodes,epoch_seconds\n"
                                   "g1,2,60\ng1,4,40\ng2,1,10\ng3,8,5\n")
    with pytest.raises(MeasurementsError) as info:
        SpeedupModel("measured", table)
    assert [p.where for p in info.value.problems] == ["g1", "g3"]
    assert "nodes 1" in str(info.value)
    SpeedupModel("fitted", table)  # other models do not use the rows' speedups
    with pytest.raises(InputError, match="speedup_model"):
        SpeedupModel("linear")  # type: ignore[arg-type]


def test_one_vm_time_measured_reference_or_eflops():
    catalog = make_catalog(gpus=[gpu_row("g1", eflops=200.0), gpu_row("g2", eflops=400.0),
                                 gpu_row("g3", eflops=None), gpu_row("g4", eflops=50.0)])
    # reference: 40 s per epoch on 4 VMs of g2; fitted S(4) = 10 / (1 + e^{-0.1 (4 - 15)}).
    w = Workload(epochs=1, reference_epoch_seconds=40.0, reference_gpu="g2", reference_nodes=4)
    s4 = 10.0 / (1.0 + np.exp(-0.1 * (4 - 15)))
    t_ref1 = 40.0 * s4
    # the table has one-node rows of g1 (100 s) and of g_ref g2 (25 s): rho_g1 = 100 / 25 = 4
    table = parse_measurements_csv("instance,nodes,epoch_seconds\ng1,1,100\ng1,2,60\n"
                                   "g2,1,25\n", source="mine.csv")
    times = one_vm_epoch_seconds(w, catalog, SpeedupModel("fitted", table))
    assert [(t.gpu, t.source, t.table) for t in times] == [
        ("g1", "measured", "mine.csv"), ("g2", "reference", None), ("g3", None, None),
        ("g4", "eflops", None)]
    assert times[0].relative_time == 4.0
    assert times[0].epoch_seconds == pytest.approx(t_ref1 * 4.0, rel=1e-14)  # never 100 s
    assert times[1].epoch_seconds == pytest.approx(t_ref1, rel=1e-14)
    assert times[2].epoch_seconds is None
    # rho_g4 = eFLOPS(g2) / eFLOPS(g4) = 400 / 50 = 8
    assert times[3].epoch_seconds == pytest.approx(t_ref1 * 8.0, rel=1e-14)
    # TABLE has no row of g_ref: its g1 row cannot give a relative time, eFLOPS does (400/200)
    without_ref = one_vm_epoch_seconds(w, catalog, SpeedupModel("measured", TABLE))
    assert (without_ref[0].source, without_ref[0].relative_time) == ("eflops", 2.0)
    assert without_ref[0].epoch_seconds == pytest.approx(t_ref1 * 2.0, rel=1e-14)


def test_reference_time_scales_every_one_vm_time():
    """t_ref is the only absolute time: x10 on it is x10 on every t_g(1), with a table."""
    catalog = make_catalog(gpus=[gpu_row("g1", eflops=200.0), gpu_row("g2", eflops=400.0)])
    table = parse_measurements_csv("instance,nodes,epoch_seconds\ng1,1,100\ng2,1,25\n")
    for model in (SpeedupModel("measured", table), SpeedupModel("fitted", table)):
        one = one_vm_epoch_seconds(Workload(epochs=1, reference_epoch_seconds=3.0,
                                            reference_gpu="g2"), catalog, model)
        ten = one_vm_epoch_seconds(Workload(epochs=1, reference_epoch_seconds=30.0,
                                            reference_gpu="g2"), catalog, model)
        # g2 (n_ref 1): 3 s and 30 s; g1: 3 x 100/25 = 12 s and 120 s
        assert [t.epoch_seconds for t in one] == pytest.approx([12.0, 3.0], rel=1e-14)
        assert [t.epoch_seconds for t in ten] == pytest.approx([120.0, 30.0], rel=1e-14)


def test_reference_epoch_seconds_from_table():
    table = parse_measurements_csv("instance,nodes,epoch_seconds\ng1,1,100\ng1,1,110\n"
                                   "g2,2,25\n")
    assert reference_epoch_seconds_from_table(table, "g1") == 105.0  # mean of the repeats
    assert reference_epoch_seconds_from_table(table, "g2") is None  # no one-node row
    assert reference_epoch_seconds_from_table(table, "g9") is None
