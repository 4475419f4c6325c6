"""Issue 27: one tie rule for memory nodes. On defaults Recommend and Plan used to pick the same
GPU cluster with different memory nodes of one price (c5.large and c6i.large, 0.085 USD/h):
Plan reported a disagreement and the two downloads differed. A plan within 0.5 % of the
cheapest's cost and makespan ties with it and the stage-4 order decides
(:mod:`deepvm_core.job.objectives`); the dashboard's plan JSON carries the comparison as the
CLI's does."""

from __future__ import annotations

import json

from cli_helpers import cli_json

from dashboard import plan_compute
from deepvm_core.bundled import bundled_catalog_names
from deepvm_core.catalog.store import load_catalog
from deepvm_core.pipeline.recommend_job import PlanVsRecommend


def test_default_plan_and_recommend_name_the_same_cluster_on_every_bundled_catalog() -> None:
    for name in bundled_catalog_names():
        plan = cli_json("plan", "--catalog", name, "--pw", "3", "--trials", "0", "--format",
                        "json")
        rec = cli_json("recommend", "--catalog", name, "--pw", "3", "--format", "json")
        if plan["chosen"] is None or rec["chosen"] is None:
            continue
        same = all(plan["chosen"][k] == rec["chosen"][k] for k in ("architecture", "gpu", "cpu"))
        assert plan["recommend_comparison"]["same_cluster"] is same, name
        if name == "aws-us-east-1-2025-h1":  # the default: the case
            assert same
            assert plan["chosen"]["cpu"] == {"name": "c5.large", "on_demand": 1}


def test_the_dashboards_plan_json_carries_the_comparison() -> None:
    catalog = load_catalog("aws-us-east-1-2023-10")
    from test_dashboard_plan import reference_plan

    result = reference_plan()
    versus = PlanVsRecommend(True, "The plan and Recommend agree.", None)
    doc = json.loads(plan_compute.plan_text(result, catalog, None, versus))
    assert doc["recommend_comparison"] == {"same_cluster": True,
                                           "sentence": "The plan and Recommend agree."}
    assert "recommend_comparison" not in json.loads(plan_compute.plan_text(result, catalog, None))
