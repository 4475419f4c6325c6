"""Honest odds in the plan (issue 25): the golden plans changed on purpose, the bands of a plan
from a bucket, and where each estimate's odds come from."""

from __future__ import annotations

import json

import pytest
from cli_helpers import cli_output as _run
from test_golden_plan import JOBS

from tests import job_oracle

TABLE_IV = JOBS["plan-aws-us-east-1-2023-10-pw3-table-iv-job"]


def _chosen(*extra: str) -> dict:
    return json.loads(_run([*TABLE_IV, "--format", "json", "--trials", "0", *extra]))["chosen"]


def test_the_table_iv_golden_changed_on_purpose_and_the_old_assumptions_give_it_back():
    """tests/golden/plan-aws-us-east-1-2023-10-pw3-table-iv-job.*: the chosen cluster is still
    TR 1 x g5.xlarge + t3.xlarge (one spot VM, so ρ does not matter), but its expected time
    went from 0.276 h to 0.841 h: the bucket's W of 1.1 h after each interruption and, with
    probability λW / (1 + λW), before the first attempt; MTBI 1.9 h instead of 2 h. With the
    old assumptions given by hand the old figures come back exactly."""
    new = _chosen()
    assert new["summary"].startswith("TR: 1 x g5.xlarge spot + 1 x t3.xlarge")
    est = new["estimate"]
    # by hand through the oracle: one segment per epoch, 30 epochs; W = 1.1 h, λ = 1 / 1.9
    compute_s = est["compute_hours"] * 3600
    tau_s = est["checkpoint_interval_seconds"]
    want = job_oracle.expected_job(compute_s, tau_s, est["checkpoint_stall_seconds"], 1 / 1.9,
                                   0.1, 1.1, 0.4682, 0.4682 - 0.3018)
    assert est["expected_makespan_hours"] == pytest.approx(want.makespan_h, rel=1e-9)
    assert est["expected_makespan_hours"] == pytest.approx(0.841, abs=5e-4)
    assert new["estimate"]["odds"] == "a >20 % interruption market: assumed, not measured"
    old = _chosen("--mtbi", "g5.xlarge=2", "--mtbi", "g4dn.xlarge=4", "--mtbi", "g3s.xlarge=8",
                  "--wait-min", "0", "--per-vm-share", "0")
    assert old["summary"] == new["summary"]
    assert old["estimate"]["expected_makespan_hours"] == pytest.approx(0.2763484837186002,
                                                                       rel=1e-12)
    assert old["estimate"]["expected_cost_usd"] == pytest.approx(0.12938636007704862,
                                                                 rel=1e-12)
    assert "your MTBI and W" in old["estimate"]["odds"]
