"""Recommendations: paper Table IV, explanations, and every policy against the oracle."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import pulp  # type: ignore[import-untyped]
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.synthetic import synthetic_catalog
from deepvm_core.catalog import Catalog
from deepvm_core.errors import InputError
from deepvm_core.model import DEFAULT_MAX_NODES, MAX_NODES, Configuration, Objective, Scenario
from deepvm_core.recommend.explain import Explanation
from deepvm_core.recommend.recommendation import Recommendation, Solver, recommend
from deepvm_core.search.candidates import MAX_SEARCH_ROWS
from deepvm_core.search.solvers import ilp, ilp_program
from tests import oracle
from tests.factories import catalogs, cpu_row, gpu_row, make_catalog, saturation_rows, scenarios

TABLE_IV = [("c5.xlarge", 2.8526), ("m6i.xlarge", 2.8746), ("c5n.xlarge", 2.8986)]


def best(rec: Recommendation) -> Configuration:
    """The first recommendation, which the test expects to exist."""
    assert rec.best is not None
    return rec.best


def explanation(rec: Recommendation) -> Explanation:
    """Why nothing is feasible, which the test expects to be explained."""
    assert rec.explanation is not None
    return rec.explanation


@pytest.mark.parametrize("solver", ["enumerate", "ilp"])
@pytest.mark.parametrize("objective", ["paper", "performance"])
def test_paper_table_iv(aws_catalog: Catalog, objective: Objective, solver: Solver) -> None:
    """model.md, "Known results to reproduce" (both objectives give the same first choice)."""
    rec = recommend(aws_catalog, Scenario(3.0, 0.3, 2.0, objective=objective), solver)
    got = [(c.architecture, c.gpu, c.gpu_spot, c.cpu, c.memory_nodes) for c in rec.deepvm]
    assert got == [("tiering", "g4dn.xlarge", 17, cpu, 1) for cpu, _ in TABLE_IV]
    assert [c.hourly_price_usd for c in rec.deepvm] == pytest.approx(
        [p for _, p in TABLE_IV], abs=1e-9)
    ns, cf, pf = rec.deepvm_noscale, rec.cost_first, rec.performance_first
    assert ns is not None
    assert cf is not None
    assert pf is not None
    assert (ns.gpu, ns.gpu_spot, ns.cpu) == ("g4dn.xlarge", 17, "c5.xlarge")
    assert ns.hourly_price_usd == pytest.approx(2.8526)
    assert (cf.architecture, cf.gpu, cf.gpu_on_demand, cf.gpu_spot) == (
        "single_anchor", "g4dn.xlarge", 1, 15)
    assert cf.hourly_price_usd == pytest.approx(2.893)
    assert (pf.architecture, pf.gpu, pf.gpu_on_demand, pf.gpu_spot) == (
        "single_anchor", "g5.xlarge", 1, 6)
    assert pf.hourly_price_usd == pytest.approx(2.8168)
    assert rec.best_tiering == rec.deepvm[0]
    assert rec.best_single_anchor == cf
    assert rec.explanation is None
    assert rec.architecture_notes == {}


def test_paper_objective_prefers_cheap_types_at_pw_1(sim_catalog: Catalog) -> None:
    """model.md, "Two objectives": at PW 1.0 Z picks 11 x H over 5 x D with one t3.xlarge."""
    s = Scenario(1.0, 0.3, 2.0, "paper", use_quotas=False)
    paper = best(recommend(sim_catalog, s))
    perf = best(recommend(sim_catalog, Scenario(1.0, 0.3, 2.0, "performance", False)))
    assert (paper.gpu, paper.gpu_spot, paper.cpu) == ("H", 11, "t3.xlarge")
    assert (perf.gpu, perf.gpu_spot, perf.cpu, perf.performance) == ("D", 5, "t3.xlarge", 3500)


# ----------------------------------------------------------------------------- explanations


def test_pw_below_cheapest_cluster(aws_catalog: Catalog) -> None:
    """The cheapest cluster: 1 x g4dn.xlarge spot (0.1578) and 1 x t3.xlarge (0.1664)."""
    rec = recommend(aws_catalog, Scenario(0.2, 0.3, 2.0))
    why = explanation(rec)
    assert rec.deepvm == ()
    assert why.binding == ("budget",)
    assert why.cheapest_feasible_usd_per_hour == pytest.approx(0.1578 + 0.1664)
    assert "0.3242 USD/h" in why.summary


def test_pw_zero(aws_catalog: Catalog) -> None:
    rec = recommend(aws_catalog, Scenario(0.0, 0.3, 2.0))
    assert rec.best is None
    assert explanation(rec).binding == ("budget",)


def test_checkpoint_too_big_for_memory_nodes(aws_catalog: Catalog) -> None:
    """f x s = 30 GB x 2 is more than the largest memory node, d3.xlarge, holds."""
    rec = recommend(aws_catalog, Scenario(3.0, 30.0, 2.0))
    assert best(rec).architecture == "single_anchor"
    note = rec.architecture_notes["tiering"]
    assert note.binding == ("memory",)
    assert "60 GB" in note.summary
    assert "d3.xlarge" in note.summary


def test_quotas_too_small() -> None:
    cat = make_catalog(quotas=[{"family": "G", "on_demand_vcpus": 0, "spot_vcpus": 0}])
    rec = recommend(cat, Scenario(100.0, 0.3, 2.0))
    why = explanation(rec)
    assert rec.best is None
    assert why.binding == ("quota",)
    assert "family G" in why.summary
    assert why.cheapest_configuration is not None  # what quotas off would give
    assert recommend(cat, Scenario(100.0, 0.3, 2.0, use_quotas=False)).best is not None


def test_no_gpu_and_no_cpu_types() -> None:
    rec = recommend(make_catalog(gpus=[]), Scenario(3.0))
    assert explanation(rec).binding == ("no_gpu_types",)
    rec = recommend(make_catalog(cpus=[]), Scenario(3.0))
    assert best(rec).architecture == "single_anchor"
    assert rec.architecture_notes["tiering"].binding == ("no_cpu_types",)


def test_only_gpu_types_without_eflops() -> None:
    rec = recommend(make_catalog(gpus=[gpu_row(eflops=None)]), Scenario(3.0))
    assert explanation(rec).binding == ("needs_eflops",)
    assert any("needs eFLOPS" in n for n in rec.notes)


def test_top_k_out_of_range(aws_catalog: Catalog) -> None:
    for bad in (0, 101, 2.5, True):
        with pytest.raises(InputError) as info:
            recommend(aws_catalog, Scenario(3.0), top_k=bad)  # type: ignore[arg-type]
        assert info.value.field == "top_k"


# ----------------------------------------------------------------------------- the oracle


def identity(c: Configuration | None) -> tuple[str, str, int, str | None, int] | None:
    return None if c is None else (c.architecture, c.gpu, c.gpu_vms, c.cpu, c.memory_nodes)


def first(configs: list[oracle.OracleConfiguration]) -> oracle.OracleConfiguration | None:
    return configs[0] if configs else None


# spot = on-demand is left out: see tests/test_candidates.py
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cat=catalogs(spot_may_equal_on_demand=False), s=scenarios(pw_max=6.0),
       k=st.integers(1, 5))
def test_every_policy_equals_the_oracle(cat: Catalog, s: Scenario, k: int) -> None:
    """DeepVM's top-k, NoScale, the best of each architecture, Cost-First and Performance-First
    are the oracle's (``tests/oracle.py``, model.md written out in loops)."""
    rec = recommend(cat, s, top_k=k)
    assert [identity(c) for c in rec.deepvm] == [o.identity for o in oracle.top_k(cat, s, k)]
    for got, want in (
        (rec.deepvm_noscale, first(oracle.top_k(cat, s, 1, noscale=True))),
        *((rec.best_single_anchor if a == "single_anchor" else rec.best_tiering,
           first(oracle.top_k(cat, s, 1, architecture=a)) if rec.deepvm else None)
          for a in ("single_anchor", "tiering")),
        *zip((rec.cost_first, rec.performance_first), oracle.baselines(cat, s), strict=True),
    ):
        assert identity(got) == (want.identity if want else None)
        if got is not None and want is not None:
            assert got.hourly_price_usd == pytest.approx(want.price, rel=1e-12)
            assert got.performance == pytest.approx(want.performance, rel=1e-12)
    assert (rec.explanation is None) == bool(rec.deepvm)
    if rec.explanation is not None:
        assert rec.explanation.binding
    if s.objective == "performance" and rec.best:  # model.md: >= every baseline
        for c in (rec.cost_first, rec.performance_first):
            if c is not None:
                assert rec.best.performance >= c.performance - 1e-9


@settings(max_examples=60, deadline=None)
@given(cat=catalogs(), s=scenarios(pw_max=6.0), extra=st.floats(0, 3))
def test_more_budget_never_hurts(cat: Catalog, s: Scenario, extra: float) -> None:
    low = recommend(cat, s, top_k=1).best
    high = recommend(cat, replace(s, pw_usd_per_hour=s.pw_usd_per_hour + extra), top_k=1).best
    if low is not None:
        assert high is not None
        assert high.objective_value(s.objective) >= low.objective_value(s.objective) - 1e-9


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cat=catalogs(), s=scenarios(pw_max=4.0, nodes_max=10), k=st.integers(1, 4))
def test_recommend_ilp_equals_enumeration(cat: Catalog, s: Scenario, k: int) -> None:
    """The integer program gives the enumeration's whole recommendation (spot = on-demand
    included: both rank the same numbers)."""
    ilp = recommend(cat, s, "ilp", top_k=k, time_limit_s=60.0)
    assert ilp.solved_by == "ilp"
    assert replace(ilp, solver="enumerate", solved_by="enumerate") == recommend(
        cat, s, "enumerate", top_k=k)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cat=catalogs(), s=scenarios(pw_max=1.0, nodes_max=40), quotas_off=st.booleans())
def test_explanations_name_the_oracles_cheapest_configuration(cat: Catalog, s: Scenario,
                                                               quotas_off: bool) -> None:
    """The cheapest feasible configuration beyond PW (and per architecture), as the oracle finds
    it over every configuration at any price, though recommend looks at n <= 2 only."""
    s = replace(s, use_quotas=s.use_quotas and not quotas_off)
    rec = recommend(cat, s)
    every = oracle.configurations(cat, s, math.inf)
    notes = dict(rec.architecture_notes)
    if rec.explanation is not None:
        notes["any"] = rec.explanation
    for arch, why in notes.items():
        mine = [o for o in every if arch in ("any", o.identity[0])]
        if "budget" in why.binding:
            cheapest = min(o.price for o in mine)
            assert why.cheapest_feasible_usd_per_hour == pytest.approx(cheapest, rel=1e-12)
            continue
        assert not mine
        if why.cheapest_configuration is not None:  # what quotas off would give, any arch
            relaxed = oracle.configurations(cat, replace(s, use_quotas=False), math.inf)
            assert why.cheapest_configuration.hourly_price_usd == pytest.approx(
                min(o.price for o in relaxed), rel=1e-12)


def test_the_cheapest_tiering_may_need_two_memory_nodes_for_one_gpu_vm() -> None:
    """n_sat 1 everywhere: one spot GPU VM (0.1) needs m = 1 // 1 + 1 = 2 memory nodes (0.1
    each), 0.3 USD/h, cheaper than the Single Anchor (1.0 + 0.1)."""
    cat = make_catalog(gpus=[gpu_row(spot_usd_per_hour=0.1)],
                       cpus=[cpu_row(on_demand_usd_per_hour=0.1)],
                       saturation=saturation_rows([(0.3, 1)]))
    why = explanation(recommend(cat, Scenario(0.2, use_quotas=False, max_nodes=40)))
    assert why.cheapest_feasible_usd_per_hour == pytest.approx(0.3)
    assert why.cheapest_configuration is not None
    assert why.cheapest_configuration.memory_nodes == 2


# ----------------------------------------------------------------------------- node cap, budget


def test_the_node_cap_is_one_constant() -> None:
    assert Scenario(3.0, max_nodes=MAX_NODES).max_nodes == MAX_NODES
    with pytest.raises(InputError) as info:
        Scenario(3.0, max_nodes=MAX_NODES + 1)
    assert f"from 1 to {MAX_NODES}" in str(info.value)
    assert Scenario(3.0).max_nodes == DEFAULT_MAX_NODES == 256


def test_a_search_space_past_the_bound_is_refused_with_its_size() -> None:
    """60 GPU types x 10,000 nodes x 2 architectures: 1.2 million rows."""
    catalog = synthetic_catalog(60, 10)
    scenario = Scenario(1e6, use_quotas=False, max_nodes=MAX_NODES)
    with pytest.raises(InputError) as info:
        recommend(catalog, scenario)
    assert info.value.field == "max_nodes"
    assert "1,200,000" in str(info.value)
    assert f"{MAX_SEARCH_ROWS:,}" in str(info.value)
    assert recommend(catalog, replace(scenario, pw_usd_per_hour=30.0)).best is not None


def test_the_issue_scenario_falls_back_to_the_enumeration_at_once(aws_catalog: Catalog) -> None:
    """Issue 9: nodes 100,000 (now the cap), PW 1000, quotas off, the integer program: 36 s and
    a SolverError before. Its 28,175 binaries are more than CBC solves in 5 s."""
    scenario = Scenario(1000.0, use_quotas=False, max_nodes=MAX_NODES)
    rec = recommend(aws_catalog, scenario, "ilp")
    assert rec.solver == "ilp"
    assert rec.solved_by == "enumerate"
    assert rec.notes[-1] == (
        "The integer program was not run: its 28,175 binaries and 24 saturation constraints "
        "are more than it solves within 5 s; these results come from the exact enumeration, "
        "which gives the same ranking.")
    assert replace(rec, solver="enumerate", notes=rec.notes[:-1]) == recommend(
        aws_catalog, scenario)


def test_a_timed_out_integer_program_falls_back_and_says_so(monkeypatch: pytest.MonkeyPatch,
                                                            aws_catalog: Catalog) -> None:
    def timed_out(_built: ilp_program.BuiltProblem,
                  time_limit_s: float) -> ilp_program.SolveResult:
        return ilp_program.SolveResult(status=pulp.LpStatusNotSolved,
                                       sol_status=pulp.LpSolutionNoSolutionFound,
                                       objective=None, seconds=time_limit_s)

    monkeypatch.setattr(ilp, "solve_problem", timed_out)
    rec = recommend(aws_catalog, Scenario(3.0), "ilp", time_limit_s=2)
    assert rec.solved_by == "enumerate"
    assert rec.notes[-1] == ("The integer program did not prove an optimum within 2 s; these "
                             "results come from the exact enumeration, which gives the same "
                             "ranking.")
    assert rec.deepvm == recommend(aws_catalog, Scenario(3.0)).deepvm


def test_the_budget_is_for_the_whole_recommendation(monkeypatch: pytest.MonkeyPatch,
                                                    sim_catalog: Catalog) -> None:
    """Each call of the integer program gets what the earlier ones left."""
    budgets: list[float] = []
    real = ilp.solve_top_k

    def spy(*args: Any, **kwargs: Any) -> list[Configuration]:
        budgets.append(kwargs["time_limit_s"])
        return real(*args, **kwargs)

    monkeypatch.setattr(ilp, "solve_top_k", spy)
    rec = recommend(sim_catalog, Scenario(3.0, use_quotas=False), "ilp", time_limit_s=30)
    assert rec.solved_by == "ilp"
    assert len(budgets) >= 2
    assert budgets[0] <= 30
    assert budgets == sorted(budgets, reverse=True)


@pytest.mark.parametrize("bad", [0, -1.0, math.inf, math.nan, True, "5"])
def test_a_bad_time_limit_is_refused(aws_catalog: Catalog, bad: Any) -> None:
    with pytest.raises(InputError) as info:
        recommend(aws_catalog, Scenario(3.0), "ilp", time_limit_s=bad)
    assert info.value.field == "time_limit_s"
