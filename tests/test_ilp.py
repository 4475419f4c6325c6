"""The integer-programming solver (:mod:`deepvm_core.search.solvers.ilp`) against the exact
enumeration
(:mod:`deepvm_core.search.solvers.enumeration`), which ``tests/test_policies.py`` checks against the
oracle. Both rank the same candidate domain, so their answers must be equal, not only close."""

from __future__ import annotations

import time
from typing import Any

import pulp  # type: ignore[import-untyped]
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.synthetic import synthetic_catalog
from deepvm_core.catalog import MAX_CPU_TYPES, MAX_GPU_TYPES, Catalog
from deepvm_core.errors import InputError, SolverError, SolverTimeoutError
from deepvm_core.model import MAX_NODES, Arch, Configuration, Scenario
from deepvm_core.search.candidates import build_candidates, build_domain
from deepvm_core.search.selection import top_indices
from deepvm_core.search.solvers import ILP_TIME_LIMIT_S, ilp, ilp_program
from deepvm_core.workload.speed import SpeedBasis
from tests.factories import (
    catalogs,
    cpu_row,
    gpu_row,
    make_catalog,
    saturation_rows,
    scenarios,
)


def gpu(name: str, od: float, spot: float, *, bw: float = 10.0,
        scaling: tuple[float, float, float] | None = None, **over: Any) -> dict[str, Any]:
    """A GPU type row: prices first, 10 Gbps, no scaling fit unless given."""
    return gpu_row(name, on_demand_usd_per_hour=od, spot_usd_per_hour=spot, network_gbps=bw,
                   scaling=scaling, **over)


def cpu(name: str, od: float, *, bw: float = 10.0, memory: float = 8.0,
        **over: Any) -> dict[str, Any]:
    """A CPU type row: on-demand price first, 10 Gbps, 8 GiB."""
    return cpu_row(name, on_demand_usd_per_hour=od, spot_usd_per_hour=od / 2, network_gbps=bw,
                   memory_gib=memory, **over)


def enumerated(catalog: Catalog, scenario: Scenario, k: int, *, noscale: bool = False,
               architecture: str | None = None) -> list[Configuration]:
    """The enumeration's top-k."""
    table = build_candidates(catalog, scenario, memory_node_choices=k)
    arch = None if architecture is None else Arch.of(architecture)
    idx = top_indices(table, scenario.pw_usd_per_hour, scenario.objective, k, noscale=noscale,
                      architecture=arch)
    return [table.configuration(i) for i in idx]


def solve(catalog: Catalog, scenario: Scenario, k: int, *, speed: SpeedBasis | None = None,
          **options: Any) -> list[Configuration]:
    """The integer program's top-k on the scenario's domain cut at its PW, built here once as
    ``recommend`` builds it and hands it down."""
    domain = build_domain(catalog, scenario, pw_usd_per_hour=scenario.pw_usd_per_hour,
                          speed=speed)
    return ilp.solve_top_k(domain, scenario.objective, k, **options)


def assert_matches_enumeration(catalog: Catalog, scenario: Scenario, k: int, *,
                               noscale: bool = False, architecture: str | None = None) -> None:
    got = solve(catalog, scenario, k, noscale=noscale,
                          architecture=architecture)  # type: ignore[arg-type]
    assert got == enumerated(catalog, scenario, k, noscale=noscale, architecture=architecture)


# ----------------------------------------------------------------------------- bundled catalogs


@pytest.mark.parametrize("objective", ["paper", "performance"])
@pytest.mark.parametrize("pw", [0.8, 1.7, 3.0, 6.4, 10.0])
def test_bundled_catalogs_agree_with_enumeration(aws_catalog: Catalog, sim_catalog: Catalog,
                                                 objective: str, pw: float) -> None:
    aws = Scenario(pw, objective=objective)  # type: ignore[arg-type]
    sim = Scenario(pw, objective=objective, use_quotas=False)  # type: ignore[arg-type]
    assert_matches_enumeration(aws_catalog, aws, 5)
    assert_matches_enumeration(sim_catalog, sim, 3)
    assert_matches_enumeration(sim_catalog, sim, 1, noscale=True)
    for arch in ("single_anchor", "tiering"):
        assert_matches_enumeration(sim_catalog, sim, 2, architecture=arch)


# ----------------------------------------------------------------------------- random catalogs


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(catalog=catalogs(min_gpus=2, min_cpus=1), scenario=scenarios(nodes_max=12),
       k=st.integers(1, 5), noscale=st.booleans(),
       architecture=st.sampled_from([None, None, "single_anchor", "tiering"]))
def test_random_catalogs_agree_with_enumeration(catalog: Catalog, scenario: Scenario, k: int,
                                                noscale: bool, architecture: str | None) -> None:
    assert_matches_enumeration(catalog, scenario, k, noscale=noscale, architecture=architecture)


# ----------------------------------------------------------------------------- tie-breaks


def test_exact_price_tie_goes_to_cpu_name() -> None:
    """Two memory-node types identical but for the name: stage 3 orders them by name."""
    catalog = make_catalog([gpu("g1", 1.0, 0.25)],
                           [cpu("zulu", 0.5), cpu("alpha", 0.5), cpu("mike", 0.75)])
    scenario = Scenario(2.0, use_quotas=False, max_nodes=8)
    top = solve(catalog, scenario, 3, architecture="tiering")
    # 6 x 0.25 + 0.5 = 2.0 = PW with alpha or zulu (same price and VMs: the name decides);
    # mike costs more; then 5 x 0.25 + 0.5
    assert [(c.gpu_spot, c.cpu) for c in top] == [(6, "alpha"), (6, "zulu"), (5, "alpha")]
    assert_matches_enumeration(catalog, scenario, 6)


def test_single_anchor_and_tiering_tie_on_performance() -> None:
    """Objective performance: SA with n GPU VMs and TR with n spot VMs score the same, so the
    price decides, then the VM count (SA has no memory node), then the architecture."""
    catalog = make_catalog([gpu("g1", 0.3, 0.1, scaling=(0.2, 4.0, 5.0))],
                           [cpu("c1", 0.2), cpu("c2", 0.1)])
    for pw in (0.6, 0.7, 1.0, 1.3):
        scenario = Scenario(pw, objective="performance", use_quotas=False, max_nodes=12)
        assert_matches_enumeration(catalog, scenario, 5)
        assert_matches_enumeration(catalog, scenario, 5, noscale=True)


def test_objective_values_one_ulp_apart_are_ranked_exactly() -> None:
    """Spot price = on-demand price: SA's Z = (n-1) x + x and TR's Z = n x are equal on paper
    but may differ in the last bit; the ranking must follow the computed values."""
    catalog = make_catalog([gpu("g1", 0.3, 0.3), gpu("g2", 0.1, 0.1, eflops=33.3)],
                           [cpu("c1", 0.7), cpu("c2", 0.1)])
    for pw in (1.0, 1.5, 2.2):
        scenario = Scenario(pw, use_quotas=False, max_nodes=10)
        assert_matches_enumeration(catalog, scenario, 8)
        assert_matches_enumeration(catalog, scenario, 8, noscale=True)


def test_prices_closer_than_cbc_resolves_are_ranked_exactly() -> None:
    """Memory nodes 1e-6 USD/h apart: too close for CBC to order, so the window is collected
    and ordered exactly: the cheaper one first, although its name sorts last."""
    catalog = make_catalog([gpu("g1", 5.0, 0.1)], [cpu("alpha", 0.100001), cpu("zulu", 0.1)])
    scenario = Scenario(1.0, use_quotas=False)
    top = solve(catalog, scenario, 3)
    # 9 x 0.1 + 0.1 = 1.0 = PW with zulu only (alpha: 1.000001); at n = 8 zulu is cheaper
    assert [(c.gpu_spot, c.cpu) for c in top] == [(9, "zulu"), (8, "zulu"), (8, "alpha")]
    assert_matches_enumeration(catalog, scenario, 4)


# Two GPU types whose Tiering objective values differ by 5e-7 (relative): less than CBC
# separates. "near" has the higher value but a slow network (n_sat = 2 at 0.3 Gbps).
NEAR_TIE = [gpu("near", 5.0, 0.1, eflops=100.00005, bw=0.3), gpu("far", 5.0, 0.1, bw=25.0)]


def test_infeasible_class_just_above_the_optimum_is_tried_first() -> None:
    """9 x near needs 5 memory nodes (1.4 USD/h > PW): stage 1 must return 9 x far, and the
    class of 9 x near, within CBC's resolution above it, is checked (infeasible) first."""
    catalog = make_catalog(NEAR_TIE, [cpu("c1", 0.1, bw=25.0)])
    scenario = Scenario(1.0, use_quotas=False)
    (best,) = solve(catalog, scenario, 1)
    assert (best.gpu, best.gpu_spot, best.memory_nodes) == ("far", 9, 1)
    assert_matches_enumeration(catalog, scenario, 4)


def test_stage_one_answer_within_cbc_tolerance_is_corrected(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """If CBC's stage 1 returns a value lower than the optimum by less than its resolution,
    the higher "suspect" value is tried first and the exact optimum is still found."""
    fast = [dict(NEAR_TIE[0], network_gbps=25.0), NEAR_TIE[1]]  # both feasible now
    catalog = make_catalog(fast, [cpu("c1", 0.1, bw=25.0)])
    scenario = Scenario(1.0, use_quotas=False)
    real = ilp_program.solve_problem
    swaps = []
    domain = build_domain(catalog, scenario, pw_usd_per_hour=scenario.pw_usd_per_hour)
    near, far = (next(r for r in range(len(domain)) if domain.architecture[r] == Arch.TIERING
                      and domain.gpus[domain.gpu[r]].name == name and domain.n[r] == 9)
                 for name in ("near", "far"))  # the rows of 9 x near and 9 x far

    def sloppy(built: ilp_program.BuiltProblem,
               time_limit_s: float) -> ilp_program.SolveResult:
        result = real(built, time_limit_s)
        if built.problem.sense == pulp.LpMaximize and result.chosen == (near,) and far in built.x:
            swaps.append(1)
            return ilp_program.SolveResult(result.status, result.sol_status, result.objective,
                                           (far,), result.cpus, result.memory_nodes)
        return result

    monkeypatch.setattr(ilp, "solve_problem", sloppy)
    (best,) = solve(catalog, scenario, 1)
    assert swaps
    assert (best.gpu, best.gpu_spot) == ("near", 9)
    top = solve(catalog, scenario, 2)
    assert [(c.gpu, c.gpu_spot) for c in top] == [("near", 9), ("far", 9)]
    assert_matches_enumeration(catalog, scenario, 3)


def test_saturation_needs_more_memory_nodes() -> None:
    catalog = make_catalog([gpu("g1", 1.0, 0.1, bw=1.0)], [cpu("c1", 0.05)],
                           saturation=saturation_rows([(0.3, 3), (5.0, 10)]))
    (best,) = solve(catalog, Scenario(1.0, use_quotas=False, max_nodes=12), 1,
                              architecture="tiering")
    # n_sat = 3 at 1 Gbps: m = n // 3 + 1; 9 x 0.1 + 4 x 0.05 = 1.1 > 1, so n = 8, m = 3
    assert (best.gpu_spot, best.memory_nodes) == (8, 3)


# ----------------------------------------------------------------------------- edges


@pytest.mark.parametrize("objective", ["paper", "performance"])
@pytest.mark.parametrize("architecture", [None, "single_anchor", "tiering"])
def test_unaffordable_pw_gives_nothing(aws_catalog: Catalog, objective: str,
                                       architecture: str | None) -> None:
    scenario = Scenario(0.01, objective=objective)  # type: ignore[arg-type]
    assert solve(aws_catalog, scenario, 3,
                           architecture=architecture) == []  # type: ignore[arg-type]


def test_fewer_than_k_when_fewer_exist() -> None:
    catalog = make_catalog([gpu("g1", 1.0, 0.5)], [cpu("c1", 0.6, memory=0.1)])  # no memory
    got = solve(catalog, Scenario(2.0, use_quotas=False), 10)
    # Single Anchor only: 1.0 + (n - 1) x 0.5 <= 2.0 for n = 2, 3
    assert [(c.architecture, c.gpu_vms) for c in got] == [("single_anchor", 3),
                                                          ("single_anchor", 2)]


def test_quota_and_cap() -> None:
    catalog = make_catalog([gpu("g1", 0.5, 0.1, family="G", vcpus=4)],
                           [cpu("c1", 0.1, family="C", vcpus=4)],
                           quotas=[{"family": "G", "on_demand_vcpus": 0, "spot_vcpus": 20},
                                   {"family": "C", "on_demand_vcpus": 4, "spot_vcpus": 0}])
    # no on-demand G quota: no Single Anchor; spot quota 20 vCPUs: at most 5 spot GPU VMs
    (best,) = solve(catalog, Scenario(100.0, max_nodes=256), 1)
    assert (best.architecture, best.gpu_spot, best.memory_nodes) == ("tiering", 5, 1)
    # quotas off, node cap 7: n <= 7 for Tiering, n - 1 <= 7 for Single Anchor
    top = solve(catalog, Scenario(100.0, use_quotas=False, max_nodes=7), 2)
    assert [(c.architecture, c.gpu_vms) for c in top] == [("single_anchor", 8), ("tiering", 7)]


def test_needs_eflops_types_are_left_out() -> None:
    catalog = make_catalog([gpu("fast", 0.1, 0.01, eflops=None), gpu("slow", 1.0, 0.5)],
                           [cpu("c1", 0.1)])
    got = solve(catalog, Scenario(5.0, use_quotas=False), 5)
    assert got
    assert all(c.gpu == "slow" for c in got)


def test_k_zero_and_bad_inputs(aws_catalog: Catalog) -> None:
    scenario = Scenario(3.0)
    assert solve(aws_catalog, scenario, 0) == []
    with pytest.raises(InputError):
        solve(aws_catalog, scenario, -1)
    with pytest.raises(InputError):
        solve(aws_catalog, scenario, 1, architecture="ring")  # type: ignore[arg-type]
    with pytest.raises(InputError):
        solve(aws_catalog, scenario, 1, time_limit_s=0)


# ----------------------------------------------------------------------------- solver status


@pytest.mark.parametrize(("status", "sol_status"), [
    (pulp.LpStatusNotSolved, pulp.LpSolutionNoSolutionFound),  # time limit, nothing found
    (pulp.LpStatusOptimal, pulp.LpSolutionIntegerFeasible),  # time limit with an incumbent
    (pulp.LpStatusUnbounded, pulp.LpSolutionUnbounded),
    (pulp.LpStatusUndefined, pulp.LpSolutionNoSolutionFound),
])
def test_non_optimal_status_raises(monkeypatch: pytest.MonkeyPatch, aws_catalog: Catalog,
                                   status: int, sol_status: int) -> None:
    def fake(_built: ilp_program.BuiltProblem,
             _time_limit_s: float) -> ilp_program.SolveResult:
        return ilp_program.SolveResult(status=status, sol_status=sol_status, objective=None)

    monkeypatch.setattr(ilp, "solve_problem", fake)
    with pytest.raises(SolverError, match="did not prove an optimum"):
        solve(aws_catalog, Scenario(3.0), 3)


def test_infeasible_status_means_no_configuration(monkeypatch: pytest.MonkeyPatch,
                                                 aws_catalog: Catalog) -> None:
    def fake(_built: ilp_program.BuiltProblem,
             _time_limit_s: float) -> ilp_program.SolveResult:
        return ilp_program.SolveResult(status=pulp.LpStatusInfeasible,
                                       sol_status=pulp.LpSolutionInfeasible, objective=None)

    monkeypatch.setattr(ilp, "solve_problem", fake)
    assert solve(aws_catalog, Scenario(3.0), 3) == []


def test_solve_result_of_a_real_solve(aws_catalog: Catalog) -> None:
    """Stage 1 on Table IV's scenario chooses the row of model.md's DeepVM 1st: Tiering with
    17 x g4dn.xlarge."""
    domain = build_domain(aws_catalog, Scenario(3.0), pw_usd_per_hour=3.0)
    coef = domain.objective_values("paper")
    result = ilp_program.solve_problem(
        ilp_program.build_problem(domain, coef, "objective", range(len(domain))), 30.0)
    assert result.optimal
    assert not result.infeasible
    (row,) = result.chosen
    assert (Arch(int(domain.architecture[row])), domain.gpus[domain.gpu[row]].name,
            int(domain.n[row])) == (Arch.TIERING, "g4dn.xlarge", 17)
    assert result.objective == pytest.approx(coef[row] / coef.max())


# ----------------------------------------------------------------------------- time budget


def timed_out(seconds: float, status: int = pulp.LpStatusOptimal,
              sol_status: int = pulp.LpSolutionIntegerFeasible) -> ilp_program.SolveResult:
    return ilp_program.SolveResult(status=status, sol_status=sol_status, objective=None,
                                   seconds=seconds)


@pytest.mark.parametrize(("status", "sol_status"), [
    (pulp.LpStatusOptimal, pulp.LpSolutionIntegerFeasible),  # an incumbent, no proof
    (pulp.LpStatusNotSolved, pulp.LpSolutionNoSolutionFound),
    # CBC 2.10.3 stopped by its time limit in preprocessing says "infeasible"
    (pulp.LpStatusInfeasible, pulp.LpSolutionInfeasible),
])
def test_a_solve_that_reaches_the_time_limit_is_a_timeout(
        monkeypatch: pytest.MonkeyPatch, aws_catalog: Catalog, status: int,
        sol_status: int) -> None:
    limits: list[float] = []

    def fake(_built: ilp_program.BuiltProblem, time_limit_s: float) -> ilp_program.SolveResult:
        limits.append(time_limit_s)
        return timed_out(time_limit_s, status, sol_status)

    monkeypatch.setattr(ilp, "solve_problem", fake)
    with pytest.raises(SolverTimeoutError) as info:
        solve(aws_catalog, Scenario(3.0), 3, time_limit_s=2.0)
    assert info.value.started
    assert info.value.time_limit_s == 2.0
    assert "did not prove an optimum within 2 s" in str(info.value)
    assert len(limits) == 1
    assert 0 < limits[0] <= 2.0


def test_the_budget_covers_the_whole_call(monkeypatch: pytest.MonkeyPatch,
                                          aws_catalog: Catalog) -> None:
    """Each solve gets what the previous ones left; none starts once it is spent."""
    real = ilp_program.solve_problem
    limits: list[float] = []

    def slow(built: ilp_program.BuiltProblem, time_limit_s: float) -> ilp_program.SolveResult:
        limits.append(time_limit_s)
        time.sleep(0.3)
        return real(built, time_limit_s)

    monkeypatch.setattr(ilp, "solve_problem", slow)
    with pytest.raises(SolverTimeoutError):
        solve(aws_catalog, Scenario(3.0), 5, time_limit_s=1.0)
    assert limits == sorted(limits, reverse=True)
    assert len(limits) <= 4


def test_cbc_stops_at_the_time_limit(monkeypatch: pytest.MonkeyPatch,
                                     aws_catalog: Catalog) -> None:
    """A stage 1 over 24,000 binaries does not end within 5 s; with 1.5 s CBC stops (wall clock)
    and the call says so, instead of an 'infeasible' that would end the list."""
    monkeypatch.setattr(ilp_program, "ILP_SIZE_PER_SECOND", 10**9)  # build it anyway
    scenario = Scenario(1000.0, use_quotas=False, max_nodes=4500)
    assert len(build_domain(aws_catalog, scenario, pw_usd_per_hour=1000.0)) > 24_000
    with pytest.raises(SolverTimeoutError) as info:
        solve(aws_catalog, scenario, 3, time_limit_s=1.5)
    assert info.value.started  # CBC ran and was stopped: bench/bench_limits.py times it


def test_a_program_too_large_for_the_budget_is_not_built(aws_catalog: Catalog) -> None:
    scenario = Scenario(1000.0, use_quotas=False, max_nodes=MAX_NODES)
    rows, constraints = ilp_program.program_size(
        build_domain(aws_catalog, scenario, pw_usd_per_hour=1000.0))
    assert (rows, constraints) == (28_175, 3 * 8)
    assert not ilp_program.fits_time_limit(rows, constraints, ILP_TIME_LIMIT_S)
    with pytest.raises(SolverTimeoutError) as info:
        solve(aws_catalog, scenario, 3)
    assert not info.value.started
    assert info.value.binaries == rows
    assert f"{rows:,} binaries" in str(info.value)


def test_saturation_constraints_count_in_the_programs_size() -> None:
    """At the catalog size limit a few thousand binaries come with a million saturation
    constraints (one per GPU and memory-node type): building them took 12 s, writing them 13 s.
    The program is not built; the call returns at once."""
    catalog = synthetic_catalog(MAX_GPU_TYPES, MAX_CPU_TYPES)
    scenario = Scenario(3.0, use_quotas=False)
    binaries, constraints = ilp_program.program_size(build_domain(catalog, scenario,
                                                          pw_usd_per_hour=3.0))
    assert binaries < ilp_program.ILP_SIZE_PER_SECOND * ILP_TIME_LIMIT_S < constraints
    with pytest.raises(SolverTimeoutError) as info:
        solve(catalog, scenario, 3)
    assert info.value.constraints == constraints
    assert not info.value.started


@pytest.mark.parametrize(("share", "stopped", "timeout"), [
    (0.6, False, True),   # "infeasible" after more than half the limit: not trusted
    (0.01, True, True),   # CBC says it stopped on time (seen at 3.8 s of a 4.7 s limit)
    (0.01, False, False),  # a quick proof of infeasibility: no further configuration
])
def test_when_an_infeasible_answer_is_trusted(monkeypatch: pytest.MonkeyPatch,
                                              aws_catalog: Catalog, share: float,
                                              stopped: bool, timeout: bool) -> None:
    def fake(_built: ilp_program.BuiltProblem, time_limit_s: float) -> ilp_program.SolveResult:
        return ilp_program.SolveResult(status=pulp.LpStatusInfeasible,
                                       sol_status=pulp.LpSolutionInfeasible, objective=None,
                                       seconds=share * time_limit_s, stopped_on_time=stopped)

    monkeypatch.setattr(ilp, "solve_problem", fake)
    if timeout:
        with pytest.raises(SolverTimeoutError):
            solve(aws_catalog, Scenario(3.0), 3)
    else:
        assert solve(aws_catalog, Scenario(3.0), 3) == []


def test_a_cbc_that_ignores_its_time_limit_is_killed_after_the_grace(
        monkeypatch: pytest.MonkeyPatch, tmp_path, aws_catalog: Catalog) -> None:
    """CBC checks its limit only between phases: a run past limit + CBC_KILL_GRACE_S is
    killed, and the program is "not solved" (no values), said as stopped on time."""
    stuck = tmp_path / "cbc"
    stuck.write_text("#!/bin/sh\nexec sleep 30\n")
    stuck.chmod(0o755)
    real = ilp_program._cbc
    monkeypatch.setattr(ilp_program, "_cbc", lambda limit: _with_path(real(limit), stuck))
    scenario = Scenario(3.0, use_quotas=False)
    domain = build_domain(aws_catalog, scenario, pw_usd_per_hour=3.0)
    built = ilp_program.build_problem(domain, domain.objective_values("paper"), "objective",
                                      range(len(domain)))
    start = time.perf_counter()
    result = ilp_program.solve_problem(built, 0.2)
    assert time.perf_counter() - start < 10.0  # killed, not waited out (30 s)
    assert result.stopped_on_time
    assert not result.optimal
    assert built.problem.status == pulp.LpStatusNotSolved


def _with_path(solver: Any, path: Any) -> Any:
    solver.path = str(path)
    return solver


def test_a_real_solve_that_stops_on_time_says_so(aws_catalog: Catalog) -> None:
    scenario = Scenario(1000.0, use_quotas=False, max_nodes=4500)
    domain = build_domain(aws_catalog, scenario, pw_usd_per_hour=1000.0)
    built = ilp_program.build_problem(domain, domain.objective_values("paper"), "objective",
                                      range(len(domain)))
    result = ilp_program.solve_problem(built, 0.5)
    assert result.stopped_on_time
    assert not result.optimal
