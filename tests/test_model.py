"""FLOPP, scaling factor, saturation, architectures: exact values from model.md."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from deepvm_core.catalog import DEFAULT_SATURATION, Catalog, GpuType, ScalingParams
from deepvm_core.errors import InputError
from deepvm_core.model import (
    Arch,
    Scenario,
    flopp_ranking,
    holds_checkpoints,
    memory_nodes_needed,
    on_demand_flopp,
    saturation_limit,
    scaling_factor,
    spot_flopp,
)
from tests.factories import cpu_row, make_catalog


def test_flopp_values(aws_catalog: Catalog) -> None:
    g4 = aws_catalog.instance("g4dn.xlarge")
    assert isinstance(g4, GpuType)
    assert spot_flopp(g4) == pytest.approx(377 / 0.1578 * 3600, rel=1e-15)
    assert on_demand_flopp(g4) == pytest.approx(377 / 0.526 * 3600, rel=1e-15)


def test_flopp_ranking_orders_by_spot_flopp(sim_catalog: Catalog) -> None:
    rows = flopp_ranking(sim_catalog)
    # eFLOPS / spot price: D 700 / 0.165 = 4242, B 377 / 0.1578 = 2389, C 696 / 0.3018 = 2306,
    # then F 800 / 0.3708 = 2157 and the others below 2000
    assert [r.name for r in rows][:4] == ["D", "B", "C", "F"]
    assert [r.spot_rank for r in rows] == list(range(1, 11))
    assert all(a.spot_flopp >= b.spot_flopp for a, b in itertools.pairwise(rows))


def test_scaling_factor_is_one_up_to_b_then_logistic_over_tangent() -> None:
    p = ScalingParams(0.1338806402, 12.87424514, 6.176666667)
    k = scaling_factor(p, [1, 12, 13, 17, 32])
    assert list(k[:2]) == [1.0, 1.0]
    n = 17
    s = p.c / (1 + math.exp(-p.a * (n - p.b)))
    lin = p.c * p.a * (n - p.b) / 4 + p.c / 2
    assert k[3] == pytest.approx(s / lin, rel=1e-12)
    assert 0 < k[4] < k[3] < k[2] <= 1


@given(a=st.floats(0.01, 2), b=st.floats(0, 60), c=st.floats(0.5, 50), n=st.integers(1, 512))
def test_scaling_factor_in_unit_interval(a: float, b: float, c: float, n: int) -> None:
    k = float(scaling_factor(ScalingParams(a, b, c), [n])[0])
    assert 0 < k <= 1


def test_scaling_factor_without_fit_is_one() -> None:
    assert list(scaling_factor(None, [1, 100])) == [1.0, 1.0]


# model.md's saturation table (written out here once; the catalog's default must match it)
@pytest.mark.parametrize(("bw", "expected"), [(0.1, 2), (0.3, 2), (1.0, 2), (1.7, 12), (4.99, 12),
                                         (5, 16), (10, 20), (12.5, 24), (15, 24), (24.9, 24),
                                         (25, 28), (30, 32), (100, 32)])
def test_saturation_step_function(bw: float, expected: int) -> None:
    assert saturation_limit(DEFAULT_SATURATION, bw) == expected


@pytest.mark.parametrize(("n", "nsat", "m"), [(1, 28, 1), (27, 28, 1), (28, 28, 2), (56, 28, 3)])
def test_cheapest_valid_memory_nodes(n: int, nsat: int, m: int) -> None:
    assert memory_nodes_needed(np.array([n]), np.array([nsat]))[0] == m
    assert n / m < nsat
    assert (m == 1 or n / (m - 1) >= nsat)


def test_memory_units_gb_against_gib() -> None:
    cat = make_catalog(cpus=[cpu_row(memory_gib=8.0)])
    w = cat.cpu_types[0]
    assert holds_checkpoints(w, 8.589934592, 1.0)  # exactly 8 GiB in GB
    assert not holds_checkpoints(w, 8.6, 1.0)
    assert holds_checkpoints(w, 4.0, 2.0)


def test_architecture_codes() -> None:
    assert [a.key for a in Arch] == ["single_anchor", "tiering"]
    assert [int(a) for a in Arch] == [0, 1]
    assert Arch.of("tiering") is Arch.TIERING
    assert Arch.TIERING.label == "Tiering"


@pytest.mark.parametrize(("field", "value"), [
    ("pw_usd_per_hour", -1), ("pw_usd_per_hour", math.nan), ("checkpoint_gb", 0),
    ("buffer_checkpoints", -2), ("objective", "velocity"), ("max_nodes", 0), ("max_nodes", 2.5)])
def test_scenario_validation_names_field(field: str, value: object) -> None:
    kwargs = {"pw_usd_per_hour": 3.0, field: value}
    with pytest.raises(InputError) as info:
        Scenario(**kwargs)  # type: ignore[arg-type]
    assert info.value.field == field


def test_numpy_inputs_not_mutated() -> None:
    n = np.array([1, 20, 30])
    before = n.copy()
    scaling_factor(ScalingParams(0.1, 10, 5), n)
    assert np.array_equal(n, before)
