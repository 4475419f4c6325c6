"""Issue 27: Plan a job's best list reads as clusters, as Recommend's does: one cluster
(architecture, GPU type, GPU VM count) once, with the memory-node type of its best variant; its
goldens changed for that (best 2 and 3 were the same cluster as best 1 with other memory nodes)."""

from __future__ import annotations

import json

import pytest
from cli_helpers import GOLDEN_DIR, run_cli


@pytest.mark.parametrize("catalog", ["aws-us-east-1-2023-10", "aws-us-east-1-2025-h1"])
def test_plan_best_are_distinct_clusters(capsys, catalog):
    code, out, err = run_cli(capsys, "plan", "--catalog", catalog, "--pw", "10", "--top", "5",
                             "--trials", "0", "--format", "json")
    assert code == 0, err
    best = json.loads(out)["best"]
    # gpu.spot + gpu.on_demand = the GPU VM count (the anchor is the on-demand one)
    keys = [(b["architecture"], b["gpu"]["name"], b["gpu"]["spot"] + b["gpu"]["on_demand"])
            for b in best]
    assert len(best) == 5
    assert len(set(keys)) == len(keys), keys


def test_the_plan_goldens_list_each_cluster_once():
    for path in sorted(GOLDEN_DIR.glob("plan-*.txt")):
        rows = [line.split()[2:6] for line in path.read_text().splitlines()
                if line.startswith("best ")]
        clusters = [" ".join(r[:4]) for r in rows]  # TR 1 x TYPE
        assert len(set(clusters)) == len(clusters), (path.name, clusters)
