"""Recommendations: paper Table IV, explanations, and every policy against the oracle."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deepvm_core.catalog import Catalog
from deepvm_core.errors import InputError
from deepvm_core.model import Configuration, Objective, Scenario
from deepvm_core.policies import Explanation, Recommendation, Solver, recommend
from tests import oracle
from tests.factories import catalogs, gpu_row, make_catalog, scenarios

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
    assert ns is not None and cf is not None and pf is not None
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
    assert rec.explanation is None and rec.architecture_notes == {}


def test_paper_objective_prefers_cheap_types_at_pw_1(sim_catalog: Catalog) -> None:
    """model.md, "Two objectives": at PW 1.0 Z picks 11 x H over 5 x D with one t3.xlarge."""
    s = Scenario(1.0, 0.3, 2.0, use_quotas=False)
    paper = best(recommend(sim_catalog, s))
    perf = best(recommend(sim_catalog, Scenario(1.0, 0.3, 2.0, "performance", False)))
    assert (paper.gpu, paper.gpu_spot, paper.cpu) == ("H", 11, "t3.xlarge")
    assert (perf.gpu, perf.gpu_spot, perf.cpu, perf.performance) == ("D", 5, "t3.xlarge", 3500)


# ----------------------------------------------------------------------------- explanations


def test_pw_below_cheapest_cluster(aws_catalog: Catalog) -> None:
    """The cheapest cluster: 1 x g4dn.xlarge spot (0.1578) and 1 x t3.xlarge (0.1664)."""
    rec = recommend(aws_catalog, Scenario(0.2, 0.3, 2.0))
    why = explanation(rec)
    assert rec.deepvm == () and why.binding == ("budget",)
    assert why.cheapest_feasible_usd_per_hour == pytest.approx(0.1578 + 0.1664)
    assert "0.3242 USD/h" in why.summary


def test_pw_zero(aws_catalog: Catalog) -> None:
    rec = recommend(aws_catalog, Scenario(0.0, 0.3, 2.0))
    assert rec.best is None and explanation(rec).binding == ("budget",)


def test_checkpoint_too_big_for_memory_nodes(aws_catalog: Catalog) -> None:
    """f x s = 30 GB x 2 is more than the largest memory node, d3.xlarge, holds."""
    rec = recommend(aws_catalog, Scenario(3.0, 30.0, 2.0))
    assert best(rec).architecture == "single_anchor"
    note = rec.architecture_notes["tiering"]
    assert note.binding == ("memory",)
    assert "60 GB" in note.summary and "d3.xlarge" in note.summary


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
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
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


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cat=catalogs(), s=scenarios(pw_max=4.0, nodes_max=10), k=st.integers(1, 4))
def test_recommend_ilp_equals_enumeration(cat: Catalog, s: Scenario, k: int) -> None:
    """The integer program gives the enumeration's whole recommendation (spot = on-demand
    included: both rank the same numbers)."""
    ilp = recommend(cat, s, "ilp", top_k=k)
    assert replace(ilp, solver="enumerate") == recommend(cat, s, "enumerate", top_k=k)
