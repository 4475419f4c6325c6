"""Issue 18, item 2: the ``speed`` objective (the job's epochs per hour, ``job-model.md``,
"Training speed") against a brute force written independently (``tests/oracle.py``), the
enumeration and the integer program agreeing, hand-derived speeds, and distinct clusters."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deepvm_core.catalog import Catalog
from deepvm_core.model import DEFAULT_OBJECTIVE, Configuration, Scenario
from deepvm_core.recommend.distinct import cluster_key
from deepvm_core.recommend.recommendation import recommend
from deepvm_core.workload.speed import speed_basis
from deepvm_core.workload.speedup import SpeedupModel
from deepvm_core.workload.workload import Workload
from tests import oracle
from tests.factories import catalogs, scenarios
from tests.test_ilp import enumerated, solve


def identity(c: Configuration | None) -> tuple[object, ...] | None:
    return None if c is None else (c.architecture, c.gpu, c.gpu_vms, c.cpu, c.memory_nodes)


def test_speed_is_the_default_objective() -> None:
    assert DEFAULT_OBJECTIVE == "speed"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cat=catalogs(spot_may_equal_on_demand=False), s=scenarios(pw_max=6.0),
       k=st.integers(1, 5))
def test_speed_top_k_equals_the_brute_force(cat: Catalog, s: Scenario, k: int) -> None:
    """recommend's top-k, NoScale and best per architecture under ``speed`` are the oracle's,
    with the same speeds."""
    s = replace(s, objective="speed")
    rec = recommend(cat, s, top_k=k)
    want = oracle.top_k(cat, s, k)
    assert [identity(c) for c in rec.deepvm] == [o.identity for o in want]
    for got, o in zip(rec.deepvm, want, strict=True):
        assert got.speed_epochs_per_hour == pytest.approx(o.speed, rel=1e-12)
    noscale = oracle.top_k(cat, s, 1, noscale=True)
    assert identity(rec.deepvm_noscale) == (noscale[0].identity if noscale else None)
    for arch, got_arch in (("single_anchor", rec.best_single_anchor),
                           ("tiering", rec.best_tiering)):
        best = oracle.top_k(cat, s, 1, architecture=arch) if rec.deepvm else []
        assert identity(got_arch) == (best[0].identity if best else None)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cat=catalogs(min_gpus=2, min_cpus=1), s=scenarios(nodes_max=12), k=st.integers(1, 4),
       noscale=st.booleans())
def test_speed_integer_program_equals_the_enumeration(cat: Catalog, s: Scenario, k: int,
                                                     noscale: bool) -> None:
    s = replace(s, objective="speed")
    assert solve(cat, s, k, noscale=noscale) == enumerated(cat, s, k, noscale=noscale)


@pytest.mark.parametrize("pw", [0.8, 3.0, 10.0])
def test_speed_on_the_bundled_catalogs(aws_catalog: Catalog, sim_catalog: Catalog,
                                       pw: float) -> None:
    for catalog, quotas in ((aws_catalog, True), (sim_catalog, False)):
        s = Scenario(pw, objective="speed", use_quotas=quotas)
        want = [o.identity for o in oracle.top_k(catalog, s, 5)]
        by_ilp = solve(catalog, s, 5)
        assert [identity(c) for c in by_ilp] == want
        assert [identity(c) for c in enumerated(catalog, s, 5)] == want


def test_hand_derived_speed_of_the_aws_pick(aws_catalog: Catalog) -> None:
    """At PW 3, TR 17 x g4dn.xlarge. The example job is 960 s per epoch on one A10G (the
    yardstick, 696 eFLOPS; issue 24), so one g4dn.xlarge (377 eFLOPS) takes 960 x 696 / 377 =
    1772.3 s: 3600 x 377 / (960 x 696) = 2.03125 epochs/h. Fitted S(17) = 6.176666667 / (1 +
    exp(-0.1338806402 (17 - 12.87424514))) = 6.176666667 / (1 + exp(-0.5523587)) = 6.176666667
    / 1.5755906 = 3.9202232, so 2.03125 x 3.9202232 = 7.9629533 epochs/h, 3.9202232 x 377 /
    696 = 2.1234542 x one A10G."""
    rec = recommend(aws_catalog, Scenario(3.0, objective="speed"), top_k=3)
    best = rec.best
    assert best is not None
    assert best.gpu == "g4dn.xlarge"
    assert best.gpu_vms == 17
    assert best.reference_gpu == "A10G"
    assert best.speed_vs_one_ref_vm == pytest.approx(2.1234542, rel=1e-7)
    assert best.speed_epochs_per_hour == pytest.approx(7.9629533, rel=1e-7)
    assert rec.speed_basis is not None
    assert not rec.speed_basis.job_given


def test_the_jobs_t_ref_scales_speed_not_the_ranking(aws_catalog: Catalog) -> None:
    """Speed is 3600 / t_g(n): ten times t_ref is a tenth of every speed; the ranking and
    speed over one reference VM do not change."""
    s = Scenario(3.0, objective="speed")
    runs = []
    for t_ref in (100.0, 1000.0):
        basis = speed_basis(aws_catalog, Workload(epochs=1, reference_epoch_seconds=t_ref),
                            SpeedupModel())
        runs.append(recommend(aws_catalog, s, top_k=5, speed=basis))
    assert [identity(c) for c in runs[0].deepvm] == [identity(c) for c in runs[1].deepvm]
    for a, b in zip(runs[0].deepvm, runs[1].deepvm, strict=True):
        assert b.speed_epochs_per_hour == pytest.approx(a.speed_epochs_per_hour / 10, rel=1e-12)
        assert b.speed_vs_one_ref_vm == pytest.approx(a.speed_vs_one_ref_vm, rel=1e-12)


def test_distinct_clusters_fold_memory_node_variants(aws_catalog: Catalog) -> None:
    """The ranked top-5 at PW 3 (paper) lists TR 17 x g4dn.xlarge with four memory-node types;
    ``distinct`` holds 5 different clusters, the first naming those four."""
    rec = recommend(aws_catalog, Scenario(3.0, objective="paper"), top_k=5)
    keys = [cluster_key(d.configuration) for d in rec.distinct]
    assert len(keys) == 5
    assert len(set(keys)) == 5
    first = rec.distinct[0]
    assert [cluster_key(c) for c in first.variants] == [cluster_key(first.configuration)] * len(
        first.variants)
    same = [c for c in rec.deepvm if cluster_key(c) == cluster_key(first.configuration)]
    assert first.variants == tuple(same)
    assert len(same) >= 2
    assert first.memory_node_types[0] == "c5.xlarge"
    assert math.isclose(first.configuration.hourly_price_usd, 2.8526, rel_tol=1e-9)


def test_the_dashboard_takes_speed_from_a_shared_link(tmp_path, monkeypatch) -> None:
    """``?objective=speed`` (a choice of the core's OBJECTIVES) draws the page, no KeyError;
    the dashboard's own default stays paper until its part of issue 18."""
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("DEEPVM_USER_CATALOG_DIR", str(tmp_path / "user"))
    app = Path(__file__).resolve().parent.parent / "dashboard" / "app.py"
    at = AppTest.from_file(str(app), default_timeout=90)
    at.query_params["objective"] = "speed"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
