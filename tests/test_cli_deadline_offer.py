"""``deepvm plan --deadline-hours H``: the deadline offer (issue 26, item 5) in the table and the
plan JSON, with and without traces; ``--recovery`` offers every policy."""

from __future__ import annotations

import re

import jsonschema
import pytest
from cli_helpers import cli_json, run_cli, write_trace
from synthetic_traces import alternating_runs

from deepvm_core.io.schemas import load_schema

# The default catalog's pick at PW 3 for the example job: 1 x p3.16xlarge spot (2.3 compute h)
PLAN = ("plan", "--pw", "3", "--trials", "1000")
POLICIES = ["deadline", "uniform-progress", "slack-reserve"]


def cheapest_meeting(doc: dict) -> str | None:
    """The plain loop: the least mean cost among the policies that meet the target."""
    best = None
    for p in doc["considered"]:
        if p["deadline_met"] >= doc["target"] and (
                best is None or p["mean_cost_usd"] < best["mean_cost_usd"]):
            best = p
    return None if best is None else best["policy"]


def test_plan_prints_and_exports_the_offer_when_the_deadline_is_at_risk(capsys) -> None:
    code, out, err = run_cli(capsys, *PLAN, "--deadline-hours", "5")
    assert code == 0, err
    line = next(x for x in out.splitlines() if x.startswith("Deadline: "))
    match = re.match(r"Deadline: The 5 h deadline is at risk: a (\d+)% chance, under the 95% "
                     r"target\. The ([a-z-]+) policy \(.+\) meets it in (\d+)% of 200 runs on "
                     r"availability drawn from the job model \(MTBI 1\.9 h, W 1\.1 h\): about "
                     r"[\d.]+ USD \(P90 [\d.]+ USD\), \d+% of the hours on demand\.$", line)
    assert match, line
    assert int(match.group(1)) < 95
    assert int(match.group(3)) >= 95
    for policy in POLICIES:
        assert f"  {policy}: meets it in " in out
    doc = cli_json(*PLAN, "--deadline-hours", "5", "--format", "json")
    jsonschema.validate(doc, load_schema("plan"))
    offer = doc["deadline_offer"]
    assert offer["policy"] == match.group(2) == cheapest_meeting(offer)
    assert offer["deadline_hours"] == 5.0
    assert offer["target"] == 0.95
    assert offer["evaluated_on"] == "job_model"
    assert offer["pools"] == []
    assert offer["chance"] == doc["chosen"]["estimate"]["deadline_probability"] < 0.95
    assert [p["policy"] for p in offer["considered"]] == POLICIES
    assert all(p["runs"] == 200 for p in offer["considered"])


def test_no_offer_without_a_deadline_or_when_it_is_safe(capsys) -> None:
    for extra in ((), ("--deadline-hours", "40")):
        doc = cli_json(*PLAN, *extra, "--format", "json")
        assert "deadline_offer" not in doc
        code, out, _ = run_cli(capsys, *PLAN, *extra)
        assert code == 0
        assert "Deadline: " not in out


def test_the_offer_replays_the_plans_traces(capsys, tmp_path) -> None:
    # p3.16xlarge up for 2 h, down for 30 min on average (5-minute ticks, a week): failover
    # meets a 4 h deadline in fewer than 95 % of its runs; the deadline policies in all.
    path = write_trace(tmp_path, "a.json", alternating_runs(26, 2016, 24, 6), gap=300)
    argv = (*PLAN, "--deadline-hours", "4", "--pool", f"p3.16xlarge@us-east-1a={path}",
            "--model", "replay")
    doc = cli_json(*argv, "--format", "json")
    jsonschema.validate(doc, load_schema("plan"))
    offer = doc["deadline_offer"]
    assert offer["evaluated_on"] == "traces"
    assert offer["pools"] == ["p3.16xlarge@us-east-1a"]
    assert offer["mtbi_hours"] is None
    assert offer["chance"] < 0.95
    assert offer["policy"] == cheapest_meeting(offer) is not None
    code, out, _ = run_cli(capsys, *argv)
    assert code == 0
    assert "of 200 replays on p3.16xlarge@us-east-1a: about" in out


@pytest.mark.parametrize("policy", POLICIES)
def test_plan_and_backtest_take_every_deadline_policy(capsys, policy: str) -> None:
    for command in ("plan", "backtest"):
        code, out, _ = run_cli(capsys, command, "--help")
        assert code == 0
        assert policy in out
