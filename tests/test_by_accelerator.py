"""Issue 19: the best cluster of each accelerator model (``by_accelerator``). Expected
configurations come from the plain-loop oracle of model.md (tests/oracle.py) grouped by a
family -> model map typed here from data/accelerators.csv; prices are derived by hand."""

from __future__ import annotations

import json
from dataclasses import replace

import oracle
import pytest
from cli_helpers import cli_output
from hypothesis import given, settings
from hypothesis import strategies as st

from deepvm_core.catalog import Quota
from deepvm_core.catalog.store import load_catalog
from deepvm_core.model import Scenario
from deepvm_core.recommend.recommendation import recommend

#: data/accelerators.csv's aws_families column, typed here.
MODEL_OF_FAMILY = {"g3s": "M60", "g4dn": "T4", "g5": "A10G", "g5g": "T4g", "g6": "L4",
                   "gr6": "L4", "g6e": "L40S", "p3": "V100", "p3dn": "V100-32GB",
                   "p4d": "A100", "p4de": "A100-80GB", "p5": "H100", "p5en": "H200",
                   "trn1": "Trainium", "trn1n": "Trainium"}
NEW = "aws-us-east-1-2025-h1"


def _identity(c):  # a Configuration as the oracle's identity
    n = c.gpu_spot + c.gpu_on_demand
    return c.architecture, c.gpu, n, c.cpu, c.memory_nodes


def _oracle_best(catalog, scenario):
    """Each model's best by the oracle, in the oracle's ranking order."""
    found = oracle.ranked(oracle.configurations(catalog, scenario, scenario.pw_usd_per_hour),
                          scenario.objective)
    best: dict[str, oracle.OracleConfiguration] = {}
    for c in found:  # plain loop: the first of each model in the ranking is its best
        best.setdefault(MODEL_OF_FAMILY[c.gpu.split(".")[0]], c)
    return best


@pytest.mark.parametrize("objective", ["paper", "performance"])
@pytest.mark.parametrize("pw", [3.0, 30.0])
def test_each_model_best_and_rank_match_the_oracle(objective, pw):
    catalog = load_catalog(NEW)
    scenario = Scenario(pw, objective=objective, max_nodes=64)
    rows = recommend(catalog, scenario).by_accelerator
    expected = _oracle_best(catalog, scenario)
    ranked = [r for r in rows if r.configuration is not None]
    assert [r.accelerator for r in ranked] == list(expected)
    assert [r.rank for r in ranked] == list(range(1, len(expected) + 1))
    for r in ranked:
        assert _identity(r.configuration) == expected[r.accelerator].identity
        assert r.note == ""
        assert r.cheapest is None
    # rank 1 is the model of the DeepVM winner
    assert ranked[0].configuration == recommend(catalog, scenario).best


def test_pw_30_ranks_a100_and_h100_clusters_with_their_sources():
    rec = recommend(load_catalog(NEW), Scenario(30.0, objective="paper"))  # the paper's Z
    rows = {r.accelerator: r for r in rec.by_accelerator}
    for model in ("A100", "A100-80GB", "H100", "H200", "L40S", "L4"):
        assert rows[model].rank is not None
        assert rows[model].eflops_source.startswith("estimated")
        assert rows[model].scaling_source.startswith("prior")
    assert rows["T4"].eflops_source == "measured" == rows["T4"].scaling_source
    # H100 within 30 USD/h: one p5.48xlarge spot (20.9934) + one c5.large (0.085) = 21.0784
    assert rows["H100"].configuration.describe() == (
        "TR: 1 x p5.48xlarge spot + 1 x c5.large, 21.0784 USD/h")
    trn = rows["Trainium"]
    assert trn.configuration is None
    assert trn.rank is None
    assert trn.eflops_source is None
    assert trn.gpu_types == ("trn1.2xlarge", "trn1.32xlarge", "trn1n.32xlarge")
    assert trn.note.startswith("left out of the search, no eFLOPS")


def test_models_beyond_pw_name_their_cheapest_cluster():
    rows = {r.accelerator: r for r in recommend(load_catalog(NEW), Scenario(3.0)).by_accelerator}
    h100 = rows["H100"]
    assert h100.configuration is None
    assert h100.rank is None
    # cheapest p5 cluster: Tiering, 1 spot p5.48xlarge (20.9934) + 1 c5.large (0.085)
    assert h100.cheapest.hourly_price_usd == pytest.approx(20.9934 + 0.085)
    assert h100.note == ("none within PW 3 USD/h; the cheapest feasible is TR: 1 x p5.48xlarge "
                         "spot + 1 x c5.large, 21.0784 USD/h")
    assert h100.eflops_source.startswith("estimated")
    # ranked models first, then the others in data/accelerators.csv order
    order = [r.accelerator for r in recommend(load_catalog(NEW), Scenario(3.0)).by_accelerator]
    unranked = [m for m in order if rows[m].rank is None]
    assert unranked == ["V100-32GB", "A100", "A100-80GB", "H100", "H200", "Trainium"]
    assert order[-len(unranked):] == unranked


def test_a_quota_that_allows_nothing_is_named():
    catalog = load_catalog("aws-us-east-1-2023-10")
    tight = replace(catalog, quotas=(*(q for q in catalog.quotas if q.family != "G"),
                                     Quota("G", on_demand_vcpus=64, spot_vcpus=2)))
    rows = recommend(tight, Scenario(3.0)).by_accelerator
    assert [r.accelerator for r in rows] == ["M60", "T4", "A10G"]  # accelerators.csv order
    for r in rows:
        assert r.configuration is None
        assert r.cheapest is None
        # every G type has 4 vCPUs: a spot quota of 2 allows none
        assert r.note == ("not feasible at any price: the spot vCPU quota of family G (2) is "
                          "below the 4 vCPUs of its smallest type")


def test_no_view_without_accelerator_models():
    assert recommend(load_catalog("paper-simulated"), Scenario(3.0)).by_accelerator == ()


def _cli(*argv: str) -> str:
    return cli_output(argv)


def test_json_key_only_for_catalogs_with_accelerator_models():
    sim = json.loads(_cli("recommend", "--catalog", "paper-simulated", "--pw", "3",
                          "--format", "json"))
    assert "by_accelerator" not in sim
    doc = json.loads(_cli("recommend", "--catalog", NEW, "--pw", "30", "--format", "json"))
    rows = {r["accelerator"]: r for r in doc["by_accelerator"]}
    assert rows["A100"]["configuration"]["gpu"]["name"] == "p4d.24xlarge"
    assert rows["A100"]["eflops_source"].startswith("estimated")
    assert rows["Trainium"]["configuration"] is None
    assert rows["Trainium"]["rank"] is None
    assert doc["by_accelerator"][0]["configuration"] == doc["deepvm"][0]
    # the view's types are not added to the replayable rows
    used = {r["name"] for r in doc["catalog"]["instance_types"]["gpu_types"]}
    assert "p4d.24xlarge" not in used


def test_table_section_marks_estimates_and_prior():
    text = _cli("recommend", "--catalog", NEW, "--pw", "30", "--objective", "paper")  # Z below
    section = text[text.index("Best cluster per accelerator model"):]
    lines = section.splitlines()
    h100 = next(line for line in lines if line.split()[1:2] == ["H100"])
    assert "p5.48xlarge" in h100
    assert h100.split()[-2:] == ["estimated", "prior"]
    # vs #1: the model's Z over the winner's, both from the oracle
    best = _oracle_best(load_catalog(NEW), Scenario(30.0, objective="paper"))
    winner = next(iter(best.values()))
    assert h100.split()[-4] == f"{best['H100'].z / winner.z:.3f}"
    first = next(line for line in lines if line.split()[:1] == ["1"])
    assert first.split()[-4] == "1.000"
    t4 = next(line for line in lines if line.split()[1:2] == ["T4"])
    assert t4.split()[-2:] == ["measured", "measured"]
    trn = next(line for line in lines if line.split()[1:2] == ["Trainium"])
    assert trn.split()[0] == "-"
    assert "no eFLOPS" in trn
    assert "eFLOPS estimated: from the accelerator model" in section
    sim = _cli("recommend", "--catalog", "paper-simulated", "--pw", "3")
    assert "Best cluster per accelerator model" not in sim


_NEW_CATALOG = load_catalog(NEW)


@settings(max_examples=25, deadline=None)
@given(pw=st.floats(min_value=0.0, max_value=120.0, allow_nan=False),
       objective=st.sampled_from(["paper", "performance"]),
       quotas=st.booleans(), cap=st.integers(min_value=1, max_value=64))
def test_view_invariants(pw, objective, quotas, cap):
    scenario = Scenario(pw, objective=objective, use_quotas=quotas, max_nodes=cap)
    rec = recommend(_NEW_CATALOG, scenario)
    rows = rec.by_accelerator
    # one row per accelerator model of the catalog, each model once
    assert sorted(r.accelerator for r in rows) == sorted(
        {MODEL_OF_FAMILY[g.name.split(".")[0]] for g in _NEW_CATALOG.gpu_types})
    ranked = [r for r in rows if r.configuration is not None]
    assert rows[:len(ranked)] == tuple(ranked)  # ranked models first
    assert [r.rank for r in ranked] == list(range(1, len(ranked) + 1))
    for r in ranked:
        assert r.configuration.hourly_price_usd <= pw + 1e-9
        assert MODEL_OF_FAMILY[r.configuration.gpu.split(".")[0]] == r.accelerator
        assert r.configuration.gpu in r.gpu_types
        assert r.note == ""
    # rank 1 is the model of the DeepVM winner; values never increase down the ranking
    assert (ranked[0].configuration == rec.best) if ranked else rec.best is None
    values = [r.configuration.objective_value(objective) for r in ranked]
    assert values == sorted(values, reverse=True)
    for r in rows[len(ranked):]:
        assert r.rank is None
        assert r.note
        if r.cheapest is not None:
            assert r.cheapest.hourly_price_usd > pw


def test_the_integer_program_gives_the_same_view():
    catalog = load_catalog("aws-us-east-1-2023-10")
    scenario = Scenario(3.0)
    assert recommend(catalog, scenario, "ilp").by_accelerator == recommend(
        catalog, scenario).by_accelerator
