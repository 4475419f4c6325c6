"""The job planner (``deepvm_core.pipeline.plan``): exact small cases by hand, the paper's
policies against ``recommend``, limits, PW off, infeasible inputs, JSON, and invariants on random
catalogs (hypothesis, against the test oracle)."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from deepvm_core.catalog import Catalog
from deepvm_core.errors import InputError, WorkloadError
from deepvm_core.hardware.measurements import (
    bundled_measurements_paths,
    load_measurements,
    parse_measurements_csv,
)
from deepvm_core.io.plan_json import plan_to_dict
from deepvm_core.model import Configuration, Scenario
from deepvm_core.pipeline.plan import (
    JobPlanResult,
    PlanEstimate,
    plan_job,
)
from deepvm_core.recommend.policies import PAPER_POLICIES
from deepvm_core.recommend.recommendation import recommend
from deepvm_core.workload.speed import speed_basis
from deepvm_core.workload.speedup import SpeedupModel
from deepvm_core.workload.workload import Workload
from tests import oracle
from tests.factories import catalogs, cpu_row, gpu_row, make_catalog, scenarios

G4_T1 = 61.16


def identity(c: Configuration) -> tuple[str, str, int, str | None, int]:
    return c.architecture, c.gpu, c.gpu_vms, c.cpu, c.memory_nodes


# ----------------------------------------------------------------------------- by hand


def small_catalog(**gpu: Any) -> Catalog:
    """One GPU type g1 (OD 1.0, spot 0.3, 10 Gbps) and one memory node c1 (OD 0.2, 10 Gbps)."""
    return make_catalog([gpu_row("g1", **gpu)], [cpu_row("c1")])


MEASURED = SpeedupModel("measured", parse_measurements_csv(
    "instance,nodes,epoch_seconds\ng1,1,360\ng1,2,240\n"))


def small_workload(**over: Any) -> Workload:
    """The small case: W = 0 and ρ = 0 (one event takes every spot VM) are set here, so the
    arithmetic below stays short; tests/test_job_reclaims.py and test_job_closed_form.py check
    the per-VM share and the start-up wait (issue 25)."""
    fields: dict[str, Any] = {"epochs": 10, "reference_epoch_seconds": 360.0,
                              "reference_gpu": "g1", "checkpoint_every_epochs": 5,
                              "restart_hours": 0.1, "mtbi_hours_by_gpu": {"g1": 10.0},
                              "wait_hours": 0.0, "per_vm_share": 0.0}
    fields.update(over)
    return Workload(**fields)


def segment_hours(s: float, lam: float, r: float, w: float) -> float:
    """E0(s) of job-model.md, written out."""
    q0 = 1.0 - math.exp(-lam * s)
    e1 = (math.exp(lam * (r + s)) - 1.0) * (1.0 / lam + w)
    return (1.0 - math.exp(-lam * s)) / lam + q0 * (w + e1)


def hand_makespan(epoch_s: float, stall_s: float) -> float:
    """10 epochs, a checkpoint every 5: one full segment (5 t + δ) and the last (5 t)."""
    lam, r = 0.1, 0.1
    return (segment_hours((5 * epoch_s + stall_s) / 3600, lam, r, 0.0)
            + segment_hours(5 * epoch_s / 3600, lam, r, 0.0))


def small_plan(**over: Any) -> JobPlanResult:
    kwargs: dict[str, Any] = {"pw_usd_per_hour": 1.3, "speedup": MEASURED, "trials": 0}
    kwargs.update(over)
    scenario = Scenario(0.0, use_quotas=False, max_nodes=kwargs.pop("max_nodes", 2))
    return plan_job(small_catalog(), scenario, kwargs.pop("workload", small_workload()),
                    **kwargs)


def by_identity(result: JobPlanResult) -> dict[tuple[str, str, int, str | None, int], int]:
    return {identity(result.configuration(i)): i for i in range(result.size)}


TR1 = ("tiering", "g1", 1, "c1", 1)
TR2 = ("tiering", "g1", 2, "c1", 1)
SA2 = ("single_anchor", "g1", 2, None, 0)


def test_small_case_by_hand() -> None:
    """Node cap 2: TR 1 x g1 + c1 (0.5 USD/h, 360 s per epoch, δ = 8 0.3 / 10 = 0.24 s),
    TR 2 x g1 + c1 (0.8 USD/h, 240 s, δ = 8 0.3 ceil(2/1) / (2 10) = 0.24 s), SA 1 + 1 x g1
    (1.3 USD/h, 240 s, δ = 8 0.3 (2 - 1) / (2 10) + 0.3 / 0.25 = 1.32 s); λ = 1/10 per hour,
    R = 0.1 h, W = 0, so C = P T."""
    result = small_plan()
    where = by_identity(result)
    assert set(where) == {TR1, TR2, SA2}
    want = {TR1: (0.5, 360.0, 0.24), TR2: (0.8, 240.0, 0.24), SA2: (1.3, 240.0, 1.32)}
    for key, (price, epoch, stall) in want.items():
        i = where[key]
        t = hand_makespan(epoch, stall)
        assert result.estimates.epoch_seconds[i] == pytest.approx(epoch, rel=1e-14)
        assert result.estimates.checkpoint_stall_seconds[i] == pytest.approx(stall, rel=1e-12)
        assert result.estimates.checkpoints[i] == 1
        assert result.expected_makespan_hours[i] == pytest.approx(t, rel=1e-12)
        assert result.expected_cost_usd[i] == pytest.approx(price * t, rel=1e-12)
    # TR1 is the cheapest (0.5 x 1.03 h < 0.8 x 0.69 h), TR2 the fastest, SA2 dominated by TR2
    assert [identity(e.configuration) for e in result.best] == [TR1, TR2, SA2]
    assert [identity(result.configuration(int(i))) for i in result.frontier] == [TR1, TR2]
    assert result.frontier_mask.sum() == 2
    assert not result.frontier_mask[where[SA2]]
    assert result.chosen is result.best[0]
    fastest = small_plan(goal="fastest")
    assert [identity(e.configuration) for e in fastest.best] == [TR2, SA2, TR1]


def test_small_case_policies() -> None:
    """Z: TR2 = 2 SPFP, SA2 = SPFP + ODFP, TR1 = SPFP (SPFP = 100 / 0.3 3600 > ODFP);
    performance: TR2 = SA2 = 200, the lower price wins; Cost-First and Performance-First: the
    only Single Anchor."""
    result = small_plan()
    pol = result.policies
    assert pol.computed
    assert [identity(e.configuration) for e in pol.deepvm] == [TR2, SA2, TR1]
    assert pol.deepvm_performance is not None
    assert pol.deepvm_noscale is not None
    assert identity(pol.deepvm_performance.configuration) == TR2
    assert identity(pol.deepvm_noscale.configuration) == TR2
    assert pol.cost_first is not None
    assert pol.performance_first is not None
    assert identity(pol.cost_first.configuration) == SA2
    assert identity(pol.performance_first.configuration) == SA2
    assert [name for name, _ in pol.items()] == list(PAPER_POLICIES)
    marks = result.marks()
    assert marks[by_identity(result)[TR2]] == ("best_2", "deepvm", "deepvm_performance",
                                               "deepvm_noscale")


def test_ties_go_to_model_md_order() -> None:
    """Two memory-node types alike but for the name: equal C and T; the one first by name
    (model.md's order) comes first, in best and on the frontier. Node cap 1: TR 1 x g1 with
    either, and SA 1 + 1 x g1 (dearer, faster: on the frontier too)."""
    cat = make_catalog([gpu_row("g1")], [cpu_row("c-b"), cpu_row("c-a")])
    result = plan_job(cat, Scenario(0.0, use_quotas=False, max_nodes=1),
                      small_workload(checkpoint_gb=0.3), pw_usd_per_hour=None, speedup=MEASURED,
                      trials=0)
    # best lists clusters (issue 27): TR 1 x g1 once, with c-a (first by name of the two equal
    # variants), then the SA; c-b's variant, as cheap and as fast, is folded into it
    assert [e.configuration.cpu for e in result.best] == ["c-a", None]  # SA last
    tr = [i for i in range(result.size) if result.configuration(i).cpu is not None]
    assert len({float(result.expected_cost_usd[i]) for i in tr}) == 1  # equal C
    assert [result.configuration(int(i)).cpu for i in result.frontier] == ["c-a", None]


def test_limits() -> None:
    base = small_plan()
    where = by_identity(base)
    t_tr2 = base.expected_makespan_hours[where[TR2]]
    c_tr2 = base.expected_cost_usd[where[TR2]]
    # a deadline that only the 2-VM clusters meet: the cheapest of them is TR2
    deadline = small_plan(deadline_hours=float(t_tr2) * 1.0001)
    assert [identity(e.configuration) for e in deadline.best] == [TR2]
    assert all(e.within_limits for e in deadline.best)
    assert not deadline.within_limits[where[TR1]]
    # the fastest within a budget that excludes TR2 is TR1
    budget = small_plan(goal="fastest", budget_usd=float(c_tr2) * 0.999)
    assert [identity(e.configuration) for e in budget.best] == [TR1]
    # a deadline with goal fastest is allowed: it filters and gives the deadline probability
    both = small_plan(goal="fastest", deadline_hours=10.0, trials=500)
    assert both.best[0].monte_carlo is not None
    assert both.best[0].monte_carlo.deadline_probability == 1.0


def test_limits_nobody_meets_explained() -> None:
    short = small_plan(deadline_hours=0.1)
    assert short.best == ()
    assert short.chosen is None
    assert short.explanation is not None
    assert short.explanation.binding == ("deadline",)
    assert short.explanation.cheapest_configuration is not None
    assert identity(short.explanation.cheapest_configuration) == TR2  # the fastest
    poor = small_plan(budget_usd=0.01)
    assert poor.explanation is not None
    assert poor.explanation.binding == ("job_budget",)
    assert "0.01 USD" in poor.explanation.summary
    base = small_plan()
    where = by_identity(base)
    t_tr2 = float(base.expected_makespan_hours[where[TR2]])
    c_tr1 = float(base.expected_cost_usd[where[TR1]])
    neither = small_plan(deadline_hours=t_tr2 * 1.0001, budget_usd=c_tr1 * 1.0001)
    assert neither.best == ()
    assert neither.explanation is not None
    assert neither.explanation.binding == ("deadline", "job_budget")
    # the policies are still estimated
    assert neither.policies.cost_first is not None


def test_pw_off_and_infeasible_pw() -> None:
    off = small_plan(pw_usd_per_hour=None, max_nodes=3)
    assert off.pw_usd_per_hour is None
    assert not off.policies.computed
    assert off.policies.deepvm == ()
    assert off.policies.cost_first is None
    assert any("PW is off" in note for note in off.notes)
    # node cap 3 per role: SA n = 2..4 (up to 3 spot VMs), TR n = 1..3 with m = 1
    assert off.size == 6
    assert max(off.candidates.price_usd_per_hour) == pytest.approx(1.0 + 3 * 0.3)
    low = small_plan(pw_usd_per_hour=0.1)
    assert low.size == 0
    assert low.best == ()
    assert low.frontier.size == 0
    assert low.explanation is not None
    assert low.explanation.binding == ("budget",)
    assert low.explanation.cheapest_feasible_usd_per_hour == pytest.approx(0.5)
    assert low.policies.deepvm == ()
    json.dumps(plan_to_dict(low, small_catalog()), allow_nan=False)


def test_structurally_infeasible_is_explained() -> None:
    """A memory node too small for f x s and no Single Anchor allowed by the quota."""
    cat = make_catalog([gpu_row("g1")], [cpu_row("c1", memory_gib=0.25)],
                       quotas=[{"family": "G", "on_demand_vcpus": 0, "spot_vcpus": 64}])
    result = plan_job(cat, Scenario(0.0), small_workload(), pw_usd_per_hour=None,
                      speedup=MEASURED, trials=0)
    assert result.size == 0
    assert result.explanation is not None
    assert "memory" in result.explanation.binding
    assert "quota" in result.explanation.binding


def test_bad_inputs() -> None:
    with pytest.raises(InputError, match="checkpoint_gb"):
        plan_job(small_catalog(), Scenario(0.0, checkpoint_gb=1.0), small_workload(),
                 pw_usd_per_hour=1.0, speedup=MEASURED)
    for kwargs in ({"goal": "slowest"}, {"trials": -1}, {"top_k": 0}, {"top_k": 101},
                   {"deadline_hours": 0.0}, {"budget_usd": math.nan}, {"seed": -1},
                   {"pw_usd_per_hour": math.nan}, {"trials": True}):
        with pytest.raises(InputError):
            small_plan(**kwargs)
    with pytest.raises(WorkloadError, match="reference_gpu = 'g2'"):
        small_plan(workload=small_workload(reference_gpu="g2"))


def test_monte_carlo_only_for_the_few_and_seeded() -> None:
    result = small_plan(trials=2000, seed=3, max_nodes=4, pw_usd_per_hour=None)
    assert result.size == 8
    assert len(result.best) == 3
    assert all(e.monte_carlo is not None for e in result.best)
    others = set(range(result.size)) - {e.index for e in result.best}
    assert set(result.monte_carlo) == {e.index for e in result.best}  # PW off: no policies
    assert result.estimate(min(others)).monte_carlo is None  # closed form only
    assert result.estimate(result.best[0].index) == result.best[0]
    again = small_plan(trials=2000, seed=3, max_nodes=4, pw_usd_per_hour=None)
    assert result.best[0].monte_carlo == again.best[0].monte_carlo
    other = small_plan(trials=2000, seed=4, max_nodes=4, pw_usd_per_hour=None)
    assert result.best[0].monte_carlo != other.best[0].monte_carlo
    none = small_plan(trials=0, max_nodes=4, pw_usd_per_hour=None)
    assert all(e.monte_carlo is None for e in none.best)
    mc = result.best[0].monte_carlo
    assert mc is not None
    assert mc.trials == 2000
    assert mc.makespan_hours_p10 <= mc.makespan_hours_p50 <= mc.makespan_hours_p90
    assert mc.cost_usd_p10 <= mc.cost_usd_p50 <= mc.cost_usd_p90
    assert mc.deadline_probability is None


def test_extreme_mtbi_does_not_crash() -> None:
    """MTBI of 1.8 seconds against 30-minute segments: expectations overflow to infinity, never
    NaN; no such cluster is chosen (issue 16); the JSON has nulls and reasons, never NaN or
    Infinity."""
    result = small_plan(workload=small_workload(mtbi_hours_by_gpu={"g1": 0.0005}), trials=50)
    assert np.all(np.isinf(result.expected_makespan_hours))
    assert result.chosen is None
    assert result.explanation is not None
    assert result.explanation.binding == ("does_not_finish",)
    doc = plan_to_dict(result, small_catalog())
    json.dumps(doc, allow_nan=False)
    assert doc["chosen"] is None
    assert doc["frontier"] == []


# ----------------------------------------------------------------------------- bundled catalog


@pytest.fixture(scope="module")
def table_iv(aws_catalog: Catalog) -> JobPlanResult:
    table = load_measurements(bundled_measurements_paths()["deepvm-scaling"])
    return plan_job(aws_catalog, Scenario(3.0, objective="paper"), Workload(
        epochs=30, reference_epoch_seconds=G4_T1, reference_gpu="g4dn.xlarge"),
        pw_usd_per_hour=3.0, speedup=SpeedupModel("measured", table), trials=1000)


def test_policies_are_recommends(aws_catalog: Catalog, table_iv: JobPlanResult) -> None:
    """The paper's policies in the plan are exactly what ``recommend`` picks (Table IV), with
    the job's speed (the plan's configurations carry it)."""
    speed = speed_basis(aws_catalog, table_iv.workload, SpeedupModel(
        "measured", load_measurements(bundled_measurements_paths()["deepvm-scaling"])))
    rec = recommend(aws_catalog, Scenario(3.0, objective="paper"), "enumerate", top_k=3,
                    speed=speed)
    pol = table_iv.policies
    assert [e.configuration for e in pol.deepvm] == list(rec.deepvm)
    assert pol.deepvm_noscale is not None
    assert pol.deepvm_noscale.configuration == (
        rec.deepvm_noscale)
    assert pol.cost_first is not None
    assert pol.cost_first.configuration == rec.cost_first
    assert pol.performance_first is not None
    assert pol.performance_first.configuration == rec.performance_first
    perf = recommend(aws_catalog, Scenario(3.0, objective="performance"), "enumerate", top_k=1,
                     speed=speed)
    assert pol.deepvm_performance is not None
    assert pol.deepvm_performance.configuration == perf.deepvm[0]
    assert pol.deepvm[0].describe().startswith("TR: 17 x g4dn.xlarge spot + 1 x c5.xlarge")


def test_assumptions_and_notes(table_iv: JobPlanResult) -> None:
    a = table_iv.assumptions
    # W: None, each type's bucket default (issue 25): 1.1 h, from the bucket or the default
    assert (a.speedup, a.restart_hours, a.wait_hours, a.disk_gb_per_s) == (
        "measured", 0.1, None, 0.25)
    by_name = {g.gpu: g for g in a.gpu_types}
    assert by_name["g4dn.xlarge"].mtbi_source == "advisor"
    assert (by_name["g4dn.xlarge"].wait_hours, by_name["g4dn.xlarge"].wait_source) == (
        1.1, "advisor")
    assert (by_name["g3s.xlarge"].wait_hours, by_name["g3s.xlarge"].wait_source) == (
        1.1, "default")
    assert a.per_vm_share == 0.06
    # where the odds come from, on every estimate (issue 25): the chosen type's bucket
    labels = {"g4dn.xlarge": "15-20 %", "g5.xlarge": ">20 %"}
    for e in (*table_iv.best, *table_iv.policies.deepvm):
        assert e.odds == (f"a {labels[e.configuration.gpu]} interruption market: assumed, not "
                          "measured")
    assert by_name["g3s.xlarge"].mtbi_source == "default"
    assert by_name["g3s.xlarge"].interruption_bucket is None
    assert by_name["g4dn.xlarge"].speedup_source == "measured"
    assert any("default MTBI" in n and "g3s.xlarge" in n for n in table_iv.notes)


def test_json_keys(aws_catalog: Catalog, table_iv: JobPlanResult) -> None:
    doc = plan_to_dict(table_iv, aws_catalog)
    json.dumps(doc, allow_nan=False)
    assert {"inputs", "catalog", "assumptions", "best", "policies", "frontier", "chosen",
            "notes"} <= set(doc)
    assert "explanation" not in doc
    assert set(doc["policies"]) == set(PAPER_POLICIES)
    assert len(doc["policies"]["deepvm"]) == 3
    assert len(doc["best"]) == 3
    assert doc["chosen"] == doc["best"][0]
    assert {"speedup", "restart_hours", "wait_hours", "disk_gb_per_s",
            "checkpoint_fixed_seconds", "mtbi_scale", "gpu_types"} <= set(doc["assumptions"])
    g4 = doc["assumptions"]["gpu_types"]["g4dn.xlarge"]
    assert {"mtbi_hours", "mtbi_source", "interruption_bucket"} <= set(g4)
    recommend_keys = {"architecture", "gpu", "cpu", "hourly_price", "objective", "performance",
                      "z_paper", "scaling_factor", "cluster_flopp", "summary"}
    estimate_keys = {"epoch_seconds", "compute_hours", "checkpoint_stall_seconds",
                     "checkpoint_interval_seconds", "checkpoints", "expected_makespan_hours",
                     "expected_cost_usd", "expected_interruptions"}
    mc_keys = {f"{q}_{p}" for q in ("makespan_hours", "cost_usd") for p in ("p10", "p50", "p90")}
    for config in [doc["chosen"], *doc["policies"]["deepvm"], doc["policies"]["cost_first"]]:
        assert recommend_keys <= set(config)
        assert estimate_keys | mc_keys <= set(config["estimate"])
        assert "deadline_probability" not in config["estimate"]
    for config in doc["frontier"]:
        assert estimate_keys <= set(config["estimate"])
    costs = [c["estimate"]["expected_cost_usd"] for c in doc["frontier"]]
    assert costs == sorted(costs)
    assert doc["inputs"]["pw_usd_per_hour"] == 3.0
    assert doc["kind"] == "job-plan"


def test_json_deadline_probability(aws_catalog: Catalog) -> None:
    result = plan_job(aws_catalog, Scenario(3.0),
                      Workload(epochs=30, reference_epoch_seconds=G4_T1,
                               reference_gpu="g4dn.xlarge"),
                      pw_usd_per_hour=3.0, speedup=SpeedupModel(), trials=200,
                      deadline_hours=1.0)
    doc = plan_to_dict(result, aws_catalog)
    assert 0.0 <= doc["chosen"]["estimate"]["deadline_probability"] <= 1.0


# ----------------------------------------------------------------------------- invariants


exact_catalogs = catalogs(spot_may_equal_on_demand=False)


def dominated_by_any(cost: np.ndarray, time: np.ndarray, i: int) -> bool:
    better = (cost <= cost[i]) & (time <= time[i]) & ((cost < cost[i]) | (time < time[i]))
    return bool(np.any(better))


@pytest.mark.filterwarnings("error::RuntimeWarning")
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cat=exact_catalogs, s=scenarios(nodes_max=12), pw_on=st.booleans(),
       goal=st.sampled_from(["cheapest", "fastest"]),
       every=st.sampled_from([1, 2, "auto"]), wait=st.sampled_from([0.0, 0.5]),
       deadline_q=st.one_of(st.none(), st.floats(0.0, 1.0)),
       budget_q=st.one_of(st.none(), st.floats(0.0, 1.0)),
       speedup=st.sampled_from(["paper", "fitted"]))
def test_invariants_on_random_catalogs(cat: Catalog, s: Scenario, pw_on: bool, goal: str,
                                       every: Any, wait: float, deadline_q: float | None,
                                       budget_q: float | None, speedup: Any) -> None:
    assume(any(g.eflops is not None for g in cat.gpu_types))
    pw = s.pw_usd_per_hour if pw_on else None
    workload = Workload(epochs=20, reference_epoch_seconds=120.0, checkpoint_gb=s.checkpoint_gb,
                        checkpoint_every_epochs=every, wait_hours=wait)
    base = plan_job(cat, s, workload, pw_usd_per_hour=pw, speedup=SpeedupModel(speedup),
                    trials=0, top_k=4)
    cost, time = base.expected_cost_usd, base.expected_makespan_hours
    # every candidate is a configuration of model.md (the oracle), priced within PW
    want = {o.identity for o in oracle.configurations(cat, s, math.inf if pw is None else pw)}
    got = [identity(base.configuration(i)) for i in range(base.size)]
    assert set(got) == want
    assert len(got) == len(want)
    if base.size == 0:
        assert base.explanation is not None
        assert base.best == ()
        return
    done = base.finishes
    if not done.all():  # issue 16: a cluster not expected to finish is never shown as a number
        assert all(done[int(i)] for i in base.frontier)
        assert all(done[e.index] and e.does_not_finish is None for e in base.best)
        return
    # the frontier: nothing dominates a frontier point; everything else is dominated or equal
    front = set(int(i) for i in base.frontier)
    for i in range(base.size):
        if i in front:
            assert not dominated_by_any(cost, time, i)
        else:
            assert dominated_by_any(cost, time, i) or any(
                cost[f] == cost[i] and time[f] == time[i] for f in front)
    # its ends are the cheapest and the fastest (ties: the goal's order, then model.md's)
    ordered = np.lexsort((base.rank, time, cost))
    assert base.frontier[0] == ordered[0]
    assert base.frontier[-1] == np.lexsort((base.rank, cost, time))[0]
    # the goal of ``base`` is cheapest: of the clusters within 0.5 % of the cheapest's cost and
    # makespan (the same answer, issue 27's one tie rule), the first in model.md's order
    b = int(ordered[0])
    same = [i for i in range(base.size) if done[i] and cost[i] <= cost[b] * 1.005
            and time[i] <= time[b] * 1.005]
    assert base.best[0].index == min(same, key=lambda i: (base.rank[i], cost[i], time[i]))
    # the policies are the oracle's (within PW)
    if pw is not None:
        priced = replace(s, pw_usd_per_hour=pw)
        assert [identity(e.configuration) for e in base.policies.deepvm] == [
            o.identity for o in oracle.top_k(cat, replace(priced, objective="paper"), 4)]
        cost_first, performance_first = oracle.baselines(cat, priced)
        for mine, theirs in ((base.policies.cost_first, cost_first),
                             (base.policies.performance_first, performance_first)):
            assert (None if mine is None else identity(mine.configuration)) == (
                None if theirs is None else theirs.identity)

    # limits drawn inside the range of the estimates
    def quantile(values: np.ndarray, q: float | None) -> float | None:
        finite = values[np.isfinite(values)]
        if q is None or finite.size == 0:
            return None
        return max(float(np.quantile(finite, q)), 1e-9)

    deadline, budget = quantile(time, deadline_q), quantile(cost, budget_q)
    limited = plan_job(cat, s, workload, pw_usd_per_hour=pw, speedup=SpeedupModel(speedup),
                       trials=0, top_k=4, goal=goal,  # type: ignore[arg-type]
                       deadline_hours=deadline, budget_usd=budget)
    ok = np.ones(base.size, dtype=bool)
    if deadline is not None:
        ok &= time <= deadline
    if budget is not None:
        ok &= cost <= budget
    best: tuple[PlanEstimate, ...] = limited.best

    def cluster(i: int) -> tuple[str, str, int]:
        c = base.configuration(i)
        return c.architecture, c.gpu, c.gpu_vms

    def first_per_cluster(order: list[int]) -> list[int]:  # best lists clusters (issue 27)
        seen: set[tuple[str, str, int]] = set()
        out = []
        for i in order:
            if cluster(i) not in seen:
                seen.add(cluster(i))
                out.append(i)
        return out

    assert len(best) == min(4, len({cluster(int(i)) for i in np.flatnonzero(ok)}))
    if not best:
        assert limited.explanation is not None
        assert set(limited.explanation.binding) <= {"deadline", "job_budget"}
        return
    qualifying = [int(i) for i in np.flatnonzero(ok)]
    if goal == "cheapest":  # within 0.5 % of the cheapest's C and T: the stage-4 rank first
        by_cost = sorted(qualifying, key=lambda i: (cost[i], time[i], base.rank[i]))
        b = by_cost[0]
        tied = [i for i in by_cost if cost[i] <= cost[b] * 1.005 and time[i] <= time[b] * 1.005]
        want = (sorted(tied, key=lambda i: (base.rank[i], cost[i], time[i]))
                + [i for i in by_cost if i not in tied])
    else:  # fastest: within 2 % of the least makespan, cheapest first; then by time
        least = min(time[i] for i in qualifying)
        close = [i for i in qualifying if time[i] <= least * 1.02]
        rest = [i for i in qualifying if i not in close]
        want = (sorted(close, key=lambda i: (cost[i], time[i], base.rank[i]))
                + sorted(rest, key=lambda i: (time[i], cost[i], base.rank[i])))
    assert [e.index for e in best] == first_per_cluster(want)[:4]
    for e in best:
        assert e.within_limits
        assert e.configuration.hourly_price_usd <= (math.inf if pw is None else pw + 1e-9)


def test_a_huge_search_space_keeps_the_cheapest_memory_nodes_and_says_so(monkeypatch) -> None:
    """Past MAX_PLAN_CONFIGURATIONS the plan pairs each (v, n) with the cheapest memory-node
    types only (a catalog near the size limit stays interactive), and a note says so."""
    import sys as _sys
    from pathlib import Path as _Path

    from deepvm_core.model import Scenario as _Scenario
    from deepvm_core.pipeline import plan as planner_module
    from deepvm_core.pipeline.plan import plan_job
    from deepvm_core.workload.speedup import SpeedupModel
    from deepvm_core.workload.workload import Workload

    _sys.path.insert(0, str(_Path(__file__).resolve().parents[1] / "bench"))
    from synthetic import synthetic_catalog

    catalog = synthetic_catalog(20, 30)
    scenario = _Scenario(10.0, use_quotas=False)
    workload = Workload(epochs=30, reference_epoch_seconds=60.0)
    full = plan_job(catalog, scenario, workload, pw_usd_per_hour=10.0,
                    speedup=SpeedupModel(), trials=0)
    assert not any("to stay interactive" in n for n in full.notes)
    monkeypatch.setattr(planner_module, "MAX_PLAN_CONFIGURATIONS", len(full.candidates) // 4)
    cut = plan_job(catalog, scenario, workload, pw_usd_per_hour=10.0, speedup=SpeedupModel(),
                   trials=0)
    assert len(cut.candidates) < len(full.candidates)
    assert any("to stay interactive" in n for n in cut.notes)
    # a subset of the full search: its cheapest job is never cheaper than the full plan's
    assert cut.chosen is not None
    assert full.chosen is not None
    assert cut.chosen.expected_cost_usd >= full.chosen.expected_cost_usd - 1e-12
