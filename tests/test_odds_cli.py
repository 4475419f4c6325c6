"""The command line of issue 25 on seeded synthetic traces in a temporary folder: the recent
window (``--window-days``) of ``traces stats``, ``backtest`` and ``plan --pool``; ``plan
--model``; a count trace too small for some clusters makes them infeasible, not the plan
(expected values by hand)."""

from __future__ import annotations

import json

import jsonschema
import pytest
from cli_helpers import run_cli, write_trace

from deepvm_core.io.schemas import load_schema
from tests.synthetic_traces import alternating_runs

AWS = "aws-us-east-1-2023-10"
JOB = ("--catalog", AWS, "--pw", "3", "--ckpt-gb", "0.3", "--buffer", "2", "--epochs", "30",
       "--epoch-seconds", "61.16", "--ref-type", "g4dn.xlarge", "--trials", "300")
DAY = 144  # ticks of 10 minutes


def test_stats_read_the_last_seven_days_unless_told(tmp_path, capsys):
    # three days always down, then seven days always up: the window sees only the up days
    path = write_trace(tmp_path, "t.json", [0] * (3 * DAY) + [1] * (7 * DAY))
    code, out, _ = run_cli(capsys, "traces", "stats", path, "--nodes", "1", "--format", "json")
    assert code == 0
    pool = json.loads(out)["pools"][0]
    assert (pool["days"], pool["trace_days"], pool["availability"]) == (7.0, 10.0, 1.0)
    code, out, _ = run_cli(capsys, "traces", "stats", path, "--nodes", "1", "--window-days", "all",
                       "--format", "json")
    pool = json.loads(out)["pools"][0]
    assert (pool["days"], pool["availability"]) == (10.0, 0.7)
    code, out, _ = run_cli(capsys, "traces", "stats", path, "--nodes", "1", "--window-days", "8")
    assert "Window: the last 8 days of each trace" in out
    assert " 0.875 " in out  # 7 of 8 days up
    code, _, err = run_cli(capsys, "traces", "stats", path, "--nodes", "1", "--window-days", "-2")
    assert code == 2
    assert "'-2': must be a number of days > 0, or 'all'" in err


def test_a_count_trace_gives_its_per_vm_share(tmp_path, capsys):
    # 4 VMs; per cycle of 12 ticks: two one-VM losses (count 3) and a whole-market outage
    cycle = [4, 4, 3, 4, 4, 4, 4, 3, 4, 4, 0, 0]
    path = write_trace(tmp_path, "c.json", cycle * 50)
    _, out, _ = run_cli(capsys, "traces", "stats", path, "--nodes", "4", "--format", "json")
    pool = json.loads(out)["pools"][0]
    # n = 1: 10 up ticks per cycle, one interruption (into the outage): MTBI(1) = 500 / 50
    # ticks; n = 4: up 2 + 4 + 2 = 8 ticks per cycle, 3 interruptions: MTBI(4) = 400 / 150.
    # λ_m = 50 / 500 = 0.1, λ_m + 4 λ_v = 150 / 400 = 0.375 -> λ_v = 0.06875 per tick, and
    # ρ = λ_v / (λ_m + λ_v) = 0.06875 / 0.16875 = 0.407407...
    assert pool["per_vm_share"] == pytest.approx(0.06875 / 0.16875, rel=1e-12)


def test_backtest_replays_the_window(tmp_path, capsys):
    code, out, err = run_cli(capsys, "plan", *JOB, "--trials", "0", "--format", "json")
    assert code == 0, err
    plan = tmp_path / "plan.json"
    plan.write_text(out)
    # ten days: three never up, then seven always up; a job on the last seven runs straight
    path = write_trace(tmp_path, "t.json", [0] * (3 * DAY) + [1] * (7 * DAY))
    chosen = json.loads(out)["chosen"]
    code, out, err = run_cli(capsys, "backtest", str(plan), "--pool",
                         f"{chosen['gpu']['name']}@us-east-1a={path}", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["inputs"]["window_days"] == 7.0
    est = chosen["estimate"]
    hours = est["compute_hours"] + est["checkpoints"] * est["checkpoint_stall_seconds"] / 3600
    assert doc["result"]["makespan_hours"]["max"] == pytest.approx(hours, rel=1e-12)
    code, out, _ = run_cli(capsys, "backtest", str(plan), "--pool",
                       f"{chosen['gpu']['name']}@us-east-1a={path}", "--window-days", "all",
                       "--format", "json")
    assert json.loads(out)["result"]["makespan_hours"]["max"] > 3 * 24


@pytest.mark.parametrize(("model", "evaluated_by"), [
    ("replay", "backtest"), ("renewal", "renewal"), ("closed-form", "trace_closed_form"),
    (None, "renewal")])  # the default: the rolling evaluation's best
def test_plan_with_pools_by_each_model(tmp_path, capsys, model, evaluated_by):
    a = write_trace(tmp_path, "a.json", alternating_runs(1, 8 * DAY, 30, 4))
    b = write_trace(tmp_path, "b.json", alternating_runs(2, 8 * DAY, 10, 8))
    argv = ["plan", *JOB, "--pool", f"g4dn.xlarge@us-east-1a={a}", "--pool",
            f"g4dn.xlarge@us-east-1b={b}", "--format", "json"]
    code, out, err = run_cli(capsys, *argv, *(["--model", model] if model else []))
    assert code == 0, err
    doc = json.loads(out)
    seen = 0
    for c in [*doc["best"], *doc["frontier"]]:
        e = c["estimate"]
        if c["gpu"]["name"] == "g4dn.xlarge" and c["gpu"]["spot"] > 0:
            seen += 1
            assert e["evaluated_by"] == evaluated_by
            assert e["odds"].startswith("measured: g4dn.xlarge@us-east-1")
            assert "the last 7 days" in e["odds"]
            if model in ("renewal", "closed-form", None):
                assert len(e["pools"]) == 1  # each configuration's best pool
        else:
            assert e["evaluated_by"] == "closed_form"
    assert seen


def test_the_deadline_policy_is_replayed_only(tmp_path, capsys):
    a = write_trace(tmp_path, "a.json", [1] * DAY)
    code, _, err = run_cli(capsys, "plan", *JOB, "--pool", f"g4dn.xlarge@us-east-1a={a}",
                       "--recovery", "deadline", "--deadline-hours", "10", "--model", "renewal")
    assert code == 2
    assert "--recovery deadline is replayed only: use --model replay" in err
    code, out, err = run_cli(capsys, "plan", *JOB, "--pool", f"g4dn.xlarge@us-east-1a={a}",
                         "--recovery", "deadline", "--deadline-hours", "10", "--format", "json")
    assert code == 0, err
    assert any(c["estimate"]["evaluated_by"] == "backtest"
               for c in json.loads(out)["frontier"])


def test_clusters_larger_than_a_count_trace_are_infeasible_and_the_rest_is_planned(tmp_path,
                                                                                    capsys):
    # a count trace of at most 4 g4dn.xlarge VMs: clusters of 5 or more spot g4dn VMs can
    # never run there; before issue 25 this stopped the whole plan (exit 2)
    path = write_trace(tmp_path, "c.json", [4, 4, 4, 3, 4, 4, 2, 4] * 200)
    for model in ("replay", "renewal", "closed-form"):
        code, out, err = run_cli(capsys, "plan", *JOB, "--pool", f"g4dn.xlarge@us-east-1a={path}",
                             "--model", model, "--format", "json")
        assert code == 0, err
        doc = json.loads(out)
        assert doc["chosen"] is not None
        refused = [c for c in [*doc["best"], *doc["policies"]["deepvm"]]
                   if c["gpu"]["name"] == "g4dn.xlarge" and c["gpu"]["spot"] > 4]
        assert refused, model  # DeepVM's 17 x g4dn.xlarge
        for c in refused:
            e = c["estimate"]
            assert e["expected_makespan_hours"] is None
            assert e["does_not_finish"] == (
                f"a cluster of {c['gpu']['spot']} spot VMs does not fit g4dn.xlarge's count "
                "traces (largest counts: g4dn.xlarge@us-east-1a 4): it can never run on them")
        fits = [c for c in doc["frontier"] if c["gpu"]["name"] == "g4dn.xlarge"
                and 0 < c["gpu"]["spot"] <= 4]
        assert all(c["estimate"]["expected_makespan_hours"] is not None for c in fits)
        jsonschema.validate(doc, load_schema("plan"))
    code, out, _ = run_cli(capsys, "plan", *JOB, "--pool", f"g4dn.xlarge@us-east-1a={path}")
    assert code == 0
    assert "cannot run on the traces (more spot VMs than a count trace holds)" in out


def spot_candidates(capsys, model: str, *pools: str) -> tuple[dict, list[dict]]:
    """``plan`` of JOB with a 30-minute restart on ``pools`` (``--pool`` values) by ``model``,
    as JSON, and its candidates with spot g4dn.xlarge VMs (best, frontier, DeepVM's; at least
    one)."""
    argv = [arg for pool in pools for arg in ("--pool", pool)]
    code, out, err = run_cli(capsys, "plan", *JOB, "--restart-min", "30", *argv, "--model",
                             model, "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    spot = [c for c in [*doc["best"], *doc["frontier"], *doc["policies"]["deepvm"]]
            if c["gpu"]["name"] == "g4dn.xlarge" and c["gpu"]["spot"] > 0]
    assert spot, model
    return doc, spot


def test_clusters_whose_attempt_outlasts_every_up_time_are_infeasible(tmp_path, capsys):
    """A pool up 20 minutes then down 10, again and again (by hand: the longest up time is 2
    ticks of 10 min = 0.333 h, the trace's 3-tick period dividing its length, so the loop joins
    no runs), and a restart R of 30 min: no attempt after an interruption (R plus a segment of
    about a minute) ever fits, so a replay would never finish; those clusters are infeasible
    with that reason and the plan goes on (it stopped with exit 2 once the 7-day window cut a
    trace whose loop used to join two up runs). A second pool up 50 minutes takes them: it is
    the only pool they use."""
    short = write_trace(tmp_path, "short.json", [1, 1, 0] * (3 * DAY))
    long_ = write_trace(tmp_path, "long.json", [1, 1, 1, 1, 1, 0] * (2 * DAY))
    for model in ("replay", "renewal"):
        doc, spot = spot_candidates(capsys, model, f"g4dn.xlarge@us-east-1a={short}")
        for c in spot:
            reason = c["estimate"]["does_not_finish"]
            assert reason.startswith("a segment plus its restart ("), (model, reason)
            assert reason.endswith("is longer than g4dn.xlarge's pools ever stay up (longest up "
                                   "time: g4dn.xlarge@us-east-1a 0.333 h): after an "
                                   "interruption it never finishes"), (model, reason)
            assert c["estimate"]["expected_makespan_hours"] is None
        assert doc["chosen"] is not None
        assert not (doc["chosen"]["gpu"]["name"] == "g4dn.xlarge"
                    and doc["chosen"]["gpu"]["spot"] > 0)
        _, spot = spot_candidates(capsys, model, f"g4dn.xlarge@us-east-1a={short}",
                                  f"g4dn.xlarge@us-east-1b={long_}")
        for c in spot:
            assert c["estimate"].get("does_not_finish") is None, model
            assert c["estimate"]["pools"] == ["g4dn.xlarge@us-east-1b"], model
