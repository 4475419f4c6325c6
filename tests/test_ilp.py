"""The integer-programming solver (:mod:`deepvm_core.solvers.ilp`) against the paper and the
exact enumeration oracle (:mod:`deepvm_core.solvers.enumeration`)."""

from __future__ import annotations

import math
from typing import Any

import pulp
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deepvm_core.catalog import Catalog
from deepvm_core.catalog.validation import parse_catalog
from deepvm_core.errors import InputError, SolverError
from deepvm_core.model import Configuration, Scenario, rank_key
from deepvm_core.solvers import ilp
from deepvm_core.solvers.enumeration import SA, TR, build_candidates, top_indices
from deepvm_core.store import load_catalog

AWS = load_catalog("aws-us-east-1-2023-10")
SIM = load_catalog("paper-simulated")
GB_PER_GIB = 1.073741824  # written out again: the checks below do not use the model's helpers


# ----------------------------------------------------------------------------- helpers


def make_catalog(gpus: list[dict[str, Any]], cpus: list[dict[str, Any]],
                 quotas: list[dict[str, Any]] | None = None,
                 saturation: list[tuple[float, int]] | None = None) -> Catalog:
    """A catalog in our format from short rows (every field given by the caller)."""
    table = saturation or [(0.3, 2), (1.7, 12), (5, 16), (10, 20), (12.5, 24), (15, 24),
                           (25, 28), (30, 32)]
    return parse_catalog({
        "schema_version": 1, "name": "ilp-test", "provider": "simulated", "region": "-",
        "prices_date": "2026-01-01", "source": "tests/test_ilp.py",
        "gpu_types": gpus, "cpu_types": cpus, "quotas": quotas or [],
        "network_saturation": [{"bandwidth_gbps": bw, "max_gpu_vms": n} for bw, n in table],
    })


def gpu(name: str, od: float, spot: float, *, family: str = "G", vcpus: int = 4,
        bw: float = 10.0, eflops: float | None = 100.0,
        scaling: tuple[float, float, float] | None = None) -> dict[str, Any]:
    return {"name": name, "family": family, "on_demand_usd_per_hour": od,
            "spot_usd_per_hour": spot, "vcpus": vcpus, "memory_gib": 16.0, "network_gbps": bw,
            "eflops": eflops,
            "scaling": None if scaling is None else dict(zip("abc", scaling, strict=True))}


def cpu(name: str, od: float, *, family: str = "C", vcpus: int = 4, memory: float = 8.0,
        bw: float = 10.0) -> dict[str, Any]:
    return {"name": name, "family": family, "on_demand_usd_per_hour": od,
            "spot_usd_per_hour": od / 2, "vcpus": vcpus, "memory_gib": memory,
            "network_gbps": bw}


def oracle(catalog: Catalog, scenario: Scenario, k: int, *, noscale: bool = False,
           architecture: str | None = None) -> list[Configuration]:
    table = build_candidates(catalog, scenario, per_group=k)
    arch = None if architecture is None else (SA if architecture == "single_anchor" else TR)
    idx = top_indices(table, scenario.pw_usd_per_hour, scenario.objective, k, noscale=noscale,
                      architecture=arch)
    return [table.configuration(i) for i in idx]


def n_sat(catalog: Catalog, bandwidth: float) -> int:
    """The step function of model.md, read from the catalog's table."""
    steps = sorted((s.bandwidth_gbps, s.serves_fewer_than) for s in catalog.saturation)
    value = steps[0][1]
    for bw, n in steps:
        if bw <= bandwidth:
            value = n
    return value


def assert_feasible(catalog: Catalog, scenario: Scenario, c: Configuration,
                    architecture: str | None) -> None:
    """Every constraint of model.md, checked from the catalog's raw fields."""
    g = next(x for x in catalog.gpu_types if x.name == c.gpu)
    assert g.eflops is not None
    quota = {q.family: q for q in catalog.quotas} if scenario.use_quotas else {}
    cap = scenario.max_nodes
    if architecture is not None:
        assert c.architecture == architecture
    if c.architecture == "single_anchor":
        n = c.gpu_vms
        assert c.gpu_on_demand == 1 and c.cpu is None and c.cpu_on_demand == 0 and n >= 2
        price = g.on_demand_usd_per_hour + (n - 1) * g.spot_usd_per_hour
        assert n - 1 <= cap
        if g.family in quota:
            assert (n - 1) * g.vcpus <= quota[g.family].spot_vcpus
            assert g.vcpus <= quota[g.family].on_demand_vcpus
    else:
        n, m = c.gpu_spot, c.cpu_on_demand
        assert c.gpu_on_demand == 0 and c.cpu is not None and n >= 1 and m >= 1
        w = next(x for x in catalog.cpu_types if x.name == c.cpu)
        price = n * g.spot_usd_per_hour + m * w.on_demand_usd_per_hour
        assert w.memory_gib is not None
        assert w.memory_gib * GB_PER_GIB >= scenario.checkpoint_gb * scenario.buffer_checkpoints
        nsat = n_sat(catalog, min(g.network_gbps, w.network_gbps))
        assert n / m < nsat
        assert m == n // nsat + 1  # the cheapest valid m
        assert n <= cap and m <= cap
        if g.family in quota:
            assert n * g.vcpus <= quota[g.family].spot_vcpus
        if w.family in quota:
            assert m * w.vcpus <= quota[w.family].on_demand_vcpus
    assert price <= scenario.pw_usd_per_hour + 1e-9
    assert c.hourly_price_usd == pytest.approx(price, rel=1e-12, abs=1e-12)


def assert_matches_oracle(catalog: Catalog, scenario: Scenario, k: int, *,
                          noscale: bool = False, architecture: str | None = None) -> None:
    got = ilp.solve_top_k(catalog, scenario, k, noscale=noscale,
                          architecture=architecture)  # type: ignore[arg-type]
    want = oracle(catalog, scenario, k, noscale=noscale, architecture=architecture)
    objective = scenario.objective
    assert len(got) == len(want), (got, want)
    for c, o in zip(got, want, strict=True):
        assert math.isclose(c.objective_value(objective, noscale=noscale),
                            o.objective_value(objective, noscale=noscale),
                            rel_tol=1e-9, abs_tol=1e-12)
        # same objective value at this position, so the tie-break must give the same price
        assert c.hourly_price_usd == pytest.approx(o.hourly_price_usd, rel=0, abs=1e-9)
        assert_feasible(catalog, scenario, c, architecture)
    assert len({(c.architecture, c.gpu, c.gpu_vms, c.cpu) for c in got}) == len(got)
    assert got == sorted(got, key=lambda c: rank_key(c, objective, noscale=noscale))


# ----------------------------------------------------------------------------- the paper


@pytest.mark.parametrize("objective", ["paper", "performance"])
def test_table_iv_top3_and_noscale(objective: str) -> None:
    scenario = Scenario(3.0, checkpoint_gb=0.3, buffer_checkpoints=2.0,
                        objective=objective, use_quotas=True)  # type: ignore[arg-type]
    top = ilp.solve_top_k(AWS, scenario, 3)
    expected = [("c5.xlarge", 2.8526), ("m6i.xlarge", 2.8746), ("c5n.xlarge", 2.8986)]
    assert len(top) == 3
    for config, (cpu_name, price) in zip(top, expected, strict=True):
        assert config.architecture == "tiering"
        assert (config.gpu, config.gpu_spot, config.gpu_on_demand) == ("g4dn.xlarge", 17, 0)
        assert (config.cpu, config.cpu_on_demand) == (cpu_name, 1)
        assert config.hourly_price_usd == pytest.approx(price, rel=0, abs=1e-9)
    assert ilp.solve_top_k(AWS, scenario, 1, noscale=True) == top[:1]


def test_table_iv_best_of_each_architecture() -> None:
    scenario = Scenario(3.0, 0.3, 2.0)
    (sa,) = ilp.solve_top_k(AWS, scenario, 1, architecture="single_anchor")
    (tr,) = ilp.solve_top_k(AWS, scenario, 1, architecture="tiering")
    assert (sa.gpu, sa.gpu_vms) == ("g4dn.xlarge", 16)
    assert sa.hourly_price_usd == pytest.approx(2.893, abs=1e-9)
    assert (tr.gpu, tr.gpu_spot, tr.cpu, tr.cpu_on_demand) == ("g4dn.xlarge", 17, "c5.xlarge", 1)


@pytest.mark.parametrize("objective", ["paper", "performance"])
@pytest.mark.parametrize("pw", [0.8, 1.7, 3.0, 6.4, 10.0])
def test_bundled_catalogs_agree_with_enumeration(objective: str, pw: float) -> None:
    aws = Scenario(pw, objective=objective)  # type: ignore[arg-type]
    sim = Scenario(pw, objective=objective, use_quotas=False)  # type: ignore[arg-type]
    assert_matches_oracle(AWS, aws, 5)
    assert_matches_oracle(SIM, sim, 3)
    assert_matches_oracle(SIM, sim, 1, noscale=True)
    for arch in ("single_anchor", "tiering"):
        assert_matches_oracle(SIM, sim, 2, architecture=arch)


# ----------------------------------------------------------------------------- random catalogs

PRICES = st.one_of(st.sampled_from([0.05, 0.1, 0.2, 0.25, 0.3, 0.5, 0.75, 1.0]),
                   st.floats(0.02, 2.0, allow_nan=False, allow_infinity=False))
BANDWIDTHS = st.one_of(st.sampled_from([0.3, 1.0, 1.7, 5.0, 10.0, 25.0]),
                       st.floats(0.1, 40.0, allow_nan=False, allow_infinity=False))
EFLOPS = st.one_of(st.sampled_from([50.0, 100.0, 200.0, 377.0]),
                   st.floats(1.0, 1000.0, allow_nan=False, allow_infinity=False))
SCALING = st.one_of(st.none(), st.tuples(st.floats(0.05, 2.0), st.floats(0.0, 12.0),
                                         st.floats(0.5, 20.0)))
NAMES = ["delta", "alpha", "echo", "bravo", "charlie", "foxtrot"]


@st.composite
def gpu_rows(draw: st.DrawFn, name: str) -> dict[str, Any]:
    od = draw(PRICES)
    spot = draw(st.one_of(st.just(od), st.just(od * 0.3), PRICES))
    return gpu(name, od, spot, family=draw(st.sampled_from(["G", "P", "X"])),
               vcpus=draw(st.sampled_from([1, 2, 4, 8])), bw=draw(BANDWIDTHS),
               eflops=None if draw(st.integers(0, 5)) == 0 else draw(EFLOPS),  # needs eFLOPS
               scaling=draw(SCALING))


@st.composite
def cpu_rows(draw: st.DrawFn, name: str) -> dict[str, Any]:
    return cpu(name, draw(PRICES), family=draw(st.sampled_from(["C", "M", "X"])),
               vcpus=draw(st.sampled_from([1, 2, 4])),
               memory=draw(st.sampled_from([0.25, 0.5, 1.0, 4.0, 16.0])), bw=draw(BANDWIDTHS))


@st.composite
def catalogs(draw: st.DrawFn) -> Catalog:
    names = draw(st.permutations(NAMES))
    n_gpu = draw(st.integers(2, 4))
    n_cpu = draw(st.integers(1, 4))
    gpus = [draw(gpu_rows(f"g-{names[i]}")) for i in range(n_gpu)]
    cpus = [draw(cpu_rows(f"c-{names[i]}")) for i in range(n_cpu)]
    quotas = [
        {"family": family, "on_demand_vcpus": draw(st.integers(0, 40)),
         "spot_vcpus": draw(st.integers(0, 60))}
        for family in ("G", "P", "C", "M") if draw(st.booleans())
    ]  # "X" is never listed: unlimited
    saturation = None
    if draw(st.booleans()):  # a small table, so that saturation binds at small node counts
        keys = sorted(draw(st.sets(st.sampled_from([0.3, 1.0, 2.0, 5.0, 12.0]), min_size=1)))
        saturation = [(bw, draw(st.integers(1, 6))) for bw in keys]
    return make_catalog(gpus, cpus, quotas, saturation)


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    return Scenario(
        pw_usd_per_hour=draw(st.one_of(st.floats(0.0, 5.0), st.sampled_from([1.0, 2.0, 2.5]))),
        checkpoint_gb=draw(st.sampled_from([0.1, 0.3, 1.0])),
        buffer_checkpoints=draw(st.sampled_from([1.0, 2.0, 3.0])),
        objective=draw(st.sampled_from(["paper", "performance"])),
        use_quotas=draw(st.booleans()),
        max_nodes=draw(st.integers(3, 12)),
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(catalog=catalogs(), scenario=scenarios(), k=st.integers(1, 5), noscale=st.booleans(),
       architecture=st.sampled_from([None, None, "single_anchor", "tiering"]))
def test_random_catalogs_agree_with_enumeration(catalog: Catalog, scenario: Scenario, k: int,
                                                noscale: bool, architecture: str | None) -> None:
    assert_matches_oracle(catalog, scenario, k, noscale=noscale, architecture=architecture)


# ----------------------------------------------------------------------------- tie-breaks


def test_exact_price_tie_goes_to_cpu_name() -> None:
    """Two memory-node types identical but for the name: stage 3 orders them by name."""
    catalog = make_catalog([gpu("g1", 1.0, 0.25, scaling=None)],
                           [cpu("zulu", 0.5), cpu("alpha", 0.5), cpu("mike", 0.75)])
    scenario = Scenario(2.0, use_quotas=False, max_nodes=8)
    top = ilp.solve_top_k(catalog, scenario, 3, architecture="tiering")
    assert [(c.gpu_spot, c.cpu) for c in top] == [(6, "alpha"), (6, "zulu"), (5, "alpha")]
    assert_matches_oracle(catalog, scenario, 6)


def test_single_anchor_and_tiering_tie_on_performance() -> None:
    """Objective performance: SA with n GPU VMs and TR with n spot VMs score the same, so the
    price decides, then the VM count (SA has no memory node), then the architecture."""
    catalog = make_catalog([gpu("g1", 0.3, 0.1, scaling=(0.2, 4.0, 5.0))],
                           [cpu("c1", 0.2), cpu("c2", 0.1)])
    for pw in (0.6, 0.7, 1.0, 1.3):
        scenario = Scenario(pw, objective="performance", use_quotas=False, max_nodes=12)
        assert_matches_oracle(catalog, scenario, 5)
        assert_matches_oracle(catalog, scenario, 5, noscale=True)


def test_objective_values_one_ulp_apart_are_ranked_exactly() -> None:
    """Spot price = on-demand price: SA's Z = (n-1) x + x and TR's Z = n x are equal on paper
    but may differ in the last bit; the ranking must follow the computed values."""
    catalog = make_catalog([gpu("g1", 0.3, 0.3), gpu("g2", 0.1, 0.1, eflops=33.3)],
                           [cpu("c1", 0.7), cpu("c2", 0.1)])
    for pw in (1.0, 1.5, 2.2):
        scenario = Scenario(pw, use_quotas=False, max_nodes=10)
        assert_matches_oracle(catalog, scenario, 8)
        assert_matches_oracle(catalog, scenario, 8, noscale=True)


def test_prices_closer_than_cbc_resolves_are_ranked_exactly() -> None:
    """Memory nodes 1e-6 USD/h apart: too close for CBC to order, so the window is collected
    and ordered exactly: the cheaper one first, although its name sorts last."""
    catalog = make_catalog([gpu("g1", 5.0, 0.1)], [cpu("alpha", 0.100001), cpu("zulu", 0.1)])
    scenario = Scenario(1.0, use_quotas=False)
    top = ilp.solve_top_k(catalog, scenario, 3)
    assert [(c.gpu_spot, c.cpu) for c in top] == [(9, "zulu"), (8, "zulu"), (8, "alpha")]
    assert_matches_oracle(catalog, scenario, 4)


# Two GPU types whose Tiering objective values differ by 5e-7 (relative): less than CBC
# separates. "near" has the higher value but a slow network (n_sat = 2 at 0.3 Gbps).
NEAR_TIE = [gpu("near", 5.0, 0.1, eflops=100.00005, bw=0.3), gpu("far", 5.0, 0.1, bw=25.0)]


def test_infeasible_class_just_above_the_optimum_is_tried_first() -> None:
    """9 x near needs 5 memory nodes (1.4 USD/h > PW): stage 1 must return 9 x far, and the
    class of 9 x near, within CBC's resolution above it, is checked (infeasible) first."""
    catalog = make_catalog(NEAR_TIE, [cpu("c1", 0.1, bw=25.0)])
    scenario = Scenario(1.0, use_quotas=False)
    (best,) = ilp.solve_top_k(catalog, scenario, 1)
    assert (best.gpu, best.gpu_spot, best.cpu_on_demand) == ("far", 9, 1)
    assert_matches_oracle(catalog, scenario, 4)


def test_stage_one_answer_within_cbc_tolerance_is_corrected(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """If CBC's stage 1 returns a value lower than the optimum by less than its resolution,
    the higher "suspect" value is tried first and the exact optimum is still found."""
    fast = [dict(NEAR_TIE[0], network_gbps=25.0), NEAR_TIE[1]]  # both feasible now
    catalog = make_catalog(fast, [cpu("c1", 0.1, bw=25.0)])
    scenario = Scenario(1.0, use_quotas=False)
    real = ilp.solve_problem
    swaps = []

    def sloppy(built: ilp.BuiltProblem, time_limit_s: float) -> ilp.SolveResult:
        result = real(built, time_limit_s)
        near, far = ("tiering", 0, 9), ("tiering", 1, 9)  # GPU indices: catalog order
        if built.problem.sense == pulp.LpMaximize and result.chosen == (near,) and far in built.x:
            swaps.append(1)
            return ilp.SolveResult(result.status, result.sol_status, result.objective, (far,),
                                   result.cpus, result.memory_nodes)
        return result

    monkeypatch.setattr(ilp, "solve_problem", sloppy)
    (best,) = ilp.solve_top_k(catalog, scenario, 1)
    assert swaps
    assert (best.gpu, best.gpu_spot) == ("near", 9)
    top = ilp.solve_top_k(catalog, scenario, 2)
    assert [(c.gpu, c.gpu_spot) for c in top] == [("near", 9), ("far", 9)]
    assert_matches_oracle(catalog, scenario, 3)


def test_saturation_needs_more_memory_nodes() -> None:
    catalog = make_catalog([gpu("g1", 1.0, 0.1, bw=1.0, scaling=None)], [cpu("c1", 0.05)],
                           saturation=[(0.3, 3), (5.0, 10)])
    (best,) = ilp.solve_top_k(catalog, Scenario(1.0, use_quotas=False, max_nodes=12), 1,
                              architecture="tiering")
    # n_sat = 3 at 1 Gbps: m = n // 3 + 1; 9 x 0.1 + 4 x 0.05 = 1.1 > 1, so n = 8, m = 3
    assert (best.gpu_spot, best.cpu_on_demand) == (8, 3)


# ----------------------------------------------------------------------------- edges


@pytest.mark.parametrize("objective", ["paper", "performance"])
@pytest.mark.parametrize("architecture", [None, "single_anchor", "tiering"])
def test_unaffordable_pw_gives_nothing(objective: str, architecture: str | None) -> None:
    scenario = Scenario(0.01, objective=objective)  # type: ignore[arg-type]
    assert ilp.solve_top_k(AWS, scenario, 3, architecture=architecture) == []  # type: ignore[arg-type]


def test_fewer_than_k_when_fewer_exist() -> None:
    catalog = make_catalog([gpu("g1", 1.0, 0.5)], [cpu("c1", 0.6, memory=0.1)])  # no memory
    got = ilp.solve_top_k(catalog, Scenario(2.0, use_quotas=False), 10)
    assert [(c.architecture, c.gpu_vms) for c in got] == [("single_anchor", 3),
                                                          ("single_anchor", 2)]


def test_quota_and_cap() -> None:
    catalog = make_catalog([gpu("g1", 0.5, 0.1, family="G", vcpus=4, scaling=None)],
                           [cpu("c1", 0.1, family="C", vcpus=4)],
                           quotas=[{"family": "G", "on_demand_vcpus": 0, "spot_vcpus": 20},
                                   {"family": "C", "on_demand_vcpus": 4, "spot_vcpus": 0}])
    # no on-demand G quota: no Single Anchor; spot quota 20 vCPUs: at most 5 spot GPU VMs
    (best,) = ilp.solve_top_k(catalog, Scenario(100.0, max_nodes=256), 1)
    assert (best.architecture, best.gpu_spot, best.cpu_on_demand) == ("tiering", 5, 1)
    # quotas off, node cap 7: n <= 7 for Tiering, n - 1 <= 7 for Single Anchor
    top = ilp.solve_top_k(catalog, Scenario(100.0, use_quotas=False, max_nodes=7), 2)
    assert [(c.architecture, c.gpu_vms) for c in top] == [("single_anchor", 8), ("tiering", 7)]


def test_needs_eflops_types_are_left_out() -> None:
    catalog = make_catalog([gpu("fast", 0.1, 0.01, eflops=None), gpu("slow", 1.0, 0.5)],
                           [cpu("c1", 0.1)])
    got = ilp.solve_top_k(catalog, Scenario(5.0, use_quotas=False), 5)
    assert got and all(c.gpu == "slow" for c in got)


def test_k_zero_and_bad_inputs() -> None:
    scenario = Scenario(3.0)
    assert ilp.solve_top_k(AWS, scenario, 0) == []
    with pytest.raises(InputError):
        ilp.solve_top_k(AWS, scenario, -1)
    with pytest.raises(InputError):
        ilp.solve_top_k(AWS, scenario, 1, architecture="ring")  # type: ignore[arg-type]
    with pytest.raises(InputError):
        ilp.solve_top_k(AWS, scenario, 1, time_limit_s=0)


# ----------------------------------------------------------------------------- solver status


@pytest.mark.parametrize("status, sol_status", [
    (pulp.LpStatusNotSolved, pulp.LpSolutionNoSolutionFound),  # time limit, nothing found
    (pulp.LpStatusOptimal, pulp.LpSolutionIntegerFeasible),  # time limit with an incumbent
    (pulp.LpStatusUnbounded, pulp.LpSolutionUnbounded),
    (pulp.LpStatusUndefined, pulp.LpSolutionNoSolutionFound),
])
def test_non_optimal_status_raises(monkeypatch: pytest.MonkeyPatch, status: int,
                                   sol_status: int) -> None:
    def fake(built: ilp.BuiltProblem, time_limit_s: float) -> ilp.SolveResult:
        return ilp.SolveResult(status=status, sol_status=sol_status, objective=None)

    monkeypatch.setattr(ilp, "solve_problem", fake)
    with pytest.raises(SolverError, match="did not prove an optimum"):
        ilp.solve_top_k(AWS, Scenario(3.0), 3)


def test_infeasible_status_means_no_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    def fake(built: ilp.BuiltProblem, time_limit_s: float) -> ilp.SolveResult:
        return ilp.SolveResult(status=pulp.LpStatusInfeasible,
                               sol_status=pulp.LpSolutionInfeasible, objective=None)

    monkeypatch.setattr(ilp, "solve_problem", fake)
    assert ilp.solve_top_k(AWS, Scenario(3.0), 3) == []


def test_solve_result_of_a_real_solve() -> None:
    space = ilp.build_search_space(AWS, Scenario(3.0))
    result = ilp.solve_problem(ilp.build_problem(space, "objective", space.coef), 30.0)
    assert result.optimal and not result.infeasible
    assert result.chosen == (("tiering", 1, 17),)  # g4dn.xlarge is GPU index 1
    assert result.objective == pytest.approx(space.coef[result.chosen[0]] / space.scale)
