"""What issue 24's transformer workload changed in the plan goldens, and nothing else: every plan
JSON's inputs say the job's kind (``workload``: ``cnn``, ``transformer``: null,
``tokens_per_second``: null) and every GPU type's assumptions its ``memory_fit`` (null for a cnn
job); the table's job line is the workload's one description, ``90 epochs of 600 s on 1 x D``
(it read ``90 epochs, 600 s per epoch on 1 x D``)."""

from __future__ import annotations

import json

import pytest
from cli_helpers import GOLDEN_DIR

PLAN_JSON = sorted(GOLDEN_DIR.glob("plan-*.json"))


@pytest.mark.parametrize("path", PLAN_JSON, ids=[p.name for p in PLAN_JSON])
def test_plan_goldens_carry_the_workload_kind_and_a_null_memory_fit(path):
    doc = json.loads(path.read_text())
    inputs = doc["inputs"]
    assert (inputs["workload"], inputs["transformer"], inputs["tokens_per_second"]) == (
        "cnn", None, None)
    assert {g["memory_fit"] for g in doc["assumptions"]["gpu_types"].values()} == {None}


def test_plan_table_goldens_describe_the_job_in_the_workloads_words():
    for path in sorted(GOLDEN_DIR.glob("plan-*.txt")):
        job = next(line for line in path.read_text().splitlines() if line.startswith("Job: "))
        assert " epochs of " in job, (path.name, job)
        assert " s on " in job, (path.name, job)
        assert "s per epoch on" not in job
