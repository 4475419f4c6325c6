"""Issue 18, item 3: what a budget holder reads. The on-demand baseline against hand-derived
values, the savings, the confidence in words, the 1.5x warning, the exports' summaries, the
recommend export's job estimate, and the plan-vs-recommend sentence."""

from __future__ import annotations

import json

import pytest
from cli_helpers import cli_json

from deepvm_core.catalog.store import load_catalog
from deepvm_core.job.baseline import confidence_in_words, savings, slow_warning
from deepvm_core.model import Scenario
from deepvm_core.pipeline.plan import plan_job
from deepvm_core.pipeline.recommend_job import compare_plan_with_recommendation, recommend_job
from deepvm_core.recommend.recommendation import recommend
from deepvm_core.workload.speedup import SpeedupModel
from deepvm_core.workload.workload import Workload, example_workload
from tests.factories import cpu_row, gpu_row, make_catalog, saturation_rows

AWS = "aws-us-east-1-2023-10"


def test_on_demand_baseline_by_hand() -> None:
    """One GPU type g (OD 1.0, spot 0.3 USD/h, 10 Gbps, no scaling fit: S(n) = n) and one memory
    node c (OD 0.2 USD/h, 10 Gbps). t_ref 3600 s on one g; n = 4: 900 s per epoch; E = 8:
    T_c = 7200 s = 2 h; a checkpoint every 2 epochs: 4 segments, 3 checkpoints; f = 0.3 GB.

    * Tiering, 4 spot + 1 memory node: delta = 8 f ceil(4/1) / (4 BW(w)) = 8 x 0.3 x 4 / 40 =
      0.24 s; T_od = 2 + 3 x 0.24 / 3600 = 2.0002 h; every VM on demand: 4 x 1.0 + 0.2 = 4.2
      USD/h; C_od = 4.2 x 2.0002 = 8.40084 USD.
    * Single Anchor, 1 + 3: delta = 8 f (n - 1) / (n BW(v)) + f / D = 8 x 0.3 x 3 / 40 + 0.3 /
      0.25 = 0.18 + 1.2 = 1.38 s; T_od = 2 + 3 x 1.38 / 3600 = 2.00115 h; 4 x 1.0 = 4.0 USD/h;
      C_od = 4.0 x 2.00115 = 8.0046 USD.
    """
    catalog = make_catalog(gpus=[gpu_row("g", scaling=None)], cpus=[cpu_row("c")],
                           saturation=saturation_rows([(1.0, 100)]))
    workload = Workload(epochs=8, reference_epoch_seconds=3600.0, reference_gpu="g",
                        checkpoint_every_epochs=2)
    result = plan_job(catalog, Scenario(0.0, use_quotas=False, max_nodes=4), workload,
                      pw_usd_per_hour=None, speedup=SpeedupModel(), trials=0, top_k=1)
    found = {}
    for i in range(result.size):
        c = result.configuration(i)
        if c.gpu_vms == 4:
            found[c.architecture] = result.estimate(i)
    tr, sa = found["tiering"], found["single_anchor"]
    assert tr.on_demand_makespan_hours == pytest.approx(2.0002, rel=1e-12)
    assert tr.on_demand_cost_usd == pytest.approx(8.40084, rel=1e-12)
    assert sa.on_demand_makespan_hours == pytest.approx(2.00115, rel=1e-12)
    assert sa.on_demand_cost_usd == pytest.approx(8.0046, rel=1e-12)
    # spot is cheaper here: the expected cost is below the on-demand cost, the time above
    assert tr.expected_cost_usd < tr.on_demand_cost_usd
    assert tr.expected_makespan_hours > tr.on_demand_makespan_hours


def test_savings() -> None:
    # 120 - 30 = 90 USD, 90 / 120 = 75 %
    assert savings(30.0, 120.0) == (90.0, 75.0)
    assert savings(130.0, 100.0) == (-30.0, -30.0)
    assert savings(1.0, 0.0) == (-1.0, None)


def test_confidence_in_words() -> None:
    assert confidence_in_words(10.0, 25.0, 9.0, 20.0) == (
        "9 runs in 10 finish within 10.0 h and cost under 25.00 USD.")
    text = confidence_in_words(10.0, 25.0, 12.0, 20.0)
    assert text.startswith("9 runs in 10 finish within 10.0 h and cost under 25.00 USD; ")
    assert "the mean time, 12.0 h, is above that" in text
    both = confidence_in_words(100.0, 25.0, 120.0, 30.0)
    assert "within 4.2 days" in both  # 100 h = 4.17 days
    assert "the mean time, 5.0 days and the mean cost, 30.00 USD, are above that" in both
    # issue 27: a mean above the P90 that rounds to the same words is not said to be above it
    # (0.400 h and 0.401 h both read "24 min"; 2.431 and 2.434 USD both "2.43 USD")
    same = confidence_in_words(0.400, 2.431, 0.401, 2.434)
    assert same == "9 runs in 10 finish within 24 min and cost under 2.43 USD."


def test_slow_warning_over_one_and_a_half_times() -> None:
    assert slow_warning(15.0, 10.0, 42.0) is None  # exactly 1.5x: no warning
    text = slow_warning(16.0, 10.0, 42.0)
    assert text is not None
    assert "1.6x its uninterrupted time" in text
    assert "The same cluster on demand takes 10.0 h and costs 42.00 USD." in text


def test_plan_json_summary_and_baseline_on_every_estimate() -> None:
    doc = cli_json("plan", "--catalog", AWS, "--pw", "3", "--trials", "500", "--format", "json")
    assert next(iter(doc)) == "summary"
    assert doc["summary"].startswith("Job plan for 90 epochs of 960 s on 1 x A10G on "
                                     f"{AWS}, goal cheapest: TR: 1 x g5.xlarge spot")
    for c in [*doc["best"], *doc["frontier"], *doc["policies"]["deepvm"]]:
        est = c["estimate"]
        od = est["on_demand_same_cluster"]
        assert od["cost_usd"] > 0
        assert od["makespan_hours"] > 0
        assert est["savings_vs_on_demand_usd"] == pytest.approx(
            od["cost_usd"] - est["expected_cost_usd"], rel=1e-12)
    assert doc["chosen"]["estimate"]["confidence"].startswith("9 runs in 10 finish within")
    assert doc["recommend_comparison"]["same_cluster"] is False


def test_recommend_json_with_a_job() -> None:
    base = ("recommend", "--catalog", AWS, "--pw", "3", "--solver", "enumerate", "--format",
            "json", "--epochs", "90")
    one = cli_json(*base, "--epoch-seconds", "960")
    ten = cli_json(*base, "--epoch-seconds", "9600")
    assert next(iter(one)) == "summary"
    assert one["speed_basis"]["job_given"] is True
    assert one["job"]["inputs"]["reference_epoch_seconds"] == 960
    est_one, est_ten = one["job"]["chosen_estimate"], ten["job"]["chosen_estimate"]
    assert est_ten["compute_hours"] == pytest.approx(10 * est_one["compute_hours"], rel=1e-12)
    assert est_ten["epoch_seconds"] == pytest.approx(10 * est_one["epoch_seconds"], rel=1e-12)
    assert ten["deepvm"][0]["speed_epochs_per_hour"] == pytest.approx(
        one["deepvm"][0]["speed_epochs_per_hour"] / 10, rel=1e-12)
    assert "the job (90 epochs) takes" in one["summary"]
    assert est_one["on_demand_same_cluster"]["cost_usd"] > est_one["expected_cost_usd"]
    without = cli_json(*base[:-2])
    assert "job" not in without
    assert without["speed_basis"]["job_given"] is False


def test_plan_and_recommend_compared_in_words() -> None:
    catalog = load_catalog(AWS)
    scenario = Scenario(3.0, objective="speed")
    job = recommend_job(catalog, example_workload())
    rec = recommend(catalog, scenario, top_k=1, speed=job.speed)
    plan = plan_job(catalog, Scenario(3.0), job.workload, pw_usd_per_hour=3.0,
                    speedup=job.speedup, trials=0)
    answer = compare_plan_with_recommendation(plan, rec, catalog, job)
    assert not answer.same
    assert plan.chosen is not None
    assert rec.best is not None
    assert plan.chosen.describe() in answer.sentence
    assert rec.best.describe() in answer.sentence
    assert "the least expected cost" in answer.sentence
    assert "the most epochs per hour within PW 3 USD/h" in answer.sentence
    assert answer.recommend_estimate is not None
    assert answer.recommend_estimate.expected_cost_usd > plan.chosen.expected_cost_usd


def test_replay_of_an_export_with_a_job(tmp_path) -> None:
    doc = cli_json("recommend", "--catalog", AWS, "--pw", "3", "--solver", "enumerate",
                    "--format", "json", "--epochs", "90", "--epoch-seconds", "100",
                    "--measurements", "deepvm-scaling")
    path = tmp_path / "export.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    replayed = cli_json("recommend", "--replay", str(path), "--format", "json")
    assert replayed["matches"] is True
    speed = replayed["replayed"]["deepvm"][0]["speed_epochs_per_hour"]
    assert speed == pytest.approx(doc["deepvm"][0]["speed_epochs_per_hour"], rel=1e-12)
