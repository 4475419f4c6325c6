"""``deepvm traces stats`` and ``deepvm backtest`` (``traces.md``) on seeded synthetic traces
written to a temporary folder; expected values worked by hand."""

from __future__ import annotations

import json

import pytest
from cli_helpers import run_cli, write_trace
from loopback import closed_port_url, serve_folder

AWS = "aws-us-east-1-2023-10"
JOB = ("--catalog", AWS, "--pw", "3", "--ckpt-gb", "0.3", "--buffer", "2", "--epochs", "30",
       "--epoch-seconds", "61.16", "--ref-type", "g4dn.xlarge", "--trials", "0")


def test_stats_json_in_the_order_given(tmp_path, capsys):
    a = write_trace(tmp_path, "a.json", [0, 1, 1, 0, 0, 1, 1, 1, 0])
    b = write_trace(tmp_path, "b.json", [1, 1, 1], gap=32)
    code, out, err = run_cli(capsys, "traces", "stats", a, b, "--nodes", "2", "--format", "json")
    assert code == 0
    assert err == ""
    pools = json.loads(out)["pools"]
    assert [p["file"] for p in pools] == [a, b]
    assert pools[0]["interruptions"] == 2
    assert pools[0]["mtbi_hours"] == pytest.approx(5 / 12)
    assert pools[0]["mean_wait_hours"] == pytest.approx(4 / 18)  # runs 1, 2, 1 ticks of 1/6 h
    assert pools[1]["mtbi_hours"] is None
    assert pools[1]["availability"] == 1.0
    # issue 25: the window read (the last 7 days: all of these short traces), the trace's
    # length, and the per-VM share a count trace gives (b counts one VM: it cannot say)
    assert set(pools[0]) == {"file", "gap_seconds", "ticks", "days", "trace_days",
                             "availability", "interruptions", "mtbi_hours", "mean_wait_hours",
                             "per_vm_share"}
    assert json.loads(out)["window_days"] == 7.0
    assert pools[0]["per_vm_share"] is None
    code, out, _ = run_cli(capsys, "traces", "stats", a, "--nodes", "1")
    assert code == 0
    assert "MTBI h" in out


def test_stats_errors_exit_2(tmp_path, capsys):
    bad = write_trace(tmp_path, "bad.json", [1, -1])
    code, _, err = run_cli(capsys, "traces", "stats", bad, "--nodes", "1")
    assert code == 2
    assert "data[1] = -1" in err
    assert bad in err
    assert len(err.splitlines()) == 1
    counts = write_trace(tmp_path, "c.json", [3, 2])
    code, _, err = run_cli(capsys, "traces", "stats", counts, "--nodes", "4")
    assert code == 2
    assert "largest count (3)" in err


@pytest.fixture
def plan(tmp_path, capsys) -> dict:
    code, out, _ = run_cli(capsys, "plan", *JOB, "--format", "json")
    assert code == 0
    (tmp_path / "plan.json").write_text(out)
    return json.loads(out)


def test_backtest_always_up_runs_the_job_straight(tmp_path, capsys, plan):
    chosen = plan["chosen"]
    gpu, est = chosen["gpu"]["name"], chosen["estimate"]
    up = write_trace(tmp_path, "up.json", [1] * 50)
    code, out, err = run_cli(capsys, "backtest", str(tmp_path / "plan.json"), "--pool",
                         f"{gpu}@us-east-1a={up}", "--starts", "5", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    # never interrupted: makespan = compute + checkpoints x stall; cost = P x makespan
    hours = est["compute_hours"] + est["checkpoints"] * est["checkpoint_stall_seconds"] / 3600
    result = doc["result"]
    assert result["makespan_hours"]["mean"] == pytest.approx(hours, rel=1e-12)
    assert result["makespan_hours"]["max"] == pytest.approx(hours, rel=1e-12)
    assert result["interruptions_mean"] == 0
    assert result["runs"] == 5
    assert result["cost_usd"]["mean"] == pytest.approx(
        doc["inputs"]["cluster_usd_per_hour"] * hours, rel=1e-9)
    assert "deadline_met" not in result
    assert set(doc["inputs"]) >= {"spot_vms", "compute_hours", "checkpoint_interval_hours",
                                  "checkpoint_stall_hours", "restart_hours",
                                  "cluster_usd_per_hour", "on_demand_part_usd_per_hour",
                                  "fallback_usd_per_hour", "policy", "deadline_hours",
                                  "starts", "pools"}
    assert doc["inputs"]["restart_hours"] == pytest.approx(0.1)  # the plan's R


def test_backtest_deadline_and_errors(tmp_path, capsys, plan):
    gpu, est = plan["chosen"]["gpu"]["name"], plan["chosen"]["estimate"]
    hours = est["compute_hours"] + est["checkpoints"] * est["checkpoint_stall_seconds"] / 3600
    path = str(tmp_path / "plan.json")
    a = write_trace(tmp_path, "a.json", [1, 1, 0, 1] * 10)
    b = write_trace(tmp_path, "b.json", [0, 1, 1, 1] * 10)
    code, out, err = run_cli(capsys, "backtest", path, "--pool", f"{gpu}@us-east-1a={a}",
                             "--pool", f"{gpu}@us-east-1b={b}", "--policy", "deadline",
                             "--deadline-hours", str(hours), "--starts", "4", "--format", "json")
    assert code == 0, err
    result = json.loads(out)["result"]
    # D - 0 < rem + R + g: on demand at time 0, done at R + rem > D
    assert result["fell_back"] == 1.0
    assert result["deadline_met"] == 0.0
    assert result["makespan_hours"]["mean"] == pytest.approx(0.1 + hours)
    short = write_trace(tmp_path, "short.json", [1, 1, 0])
    code, _, err = run_cli(capsys, "backtest", path, "--pool", f"{gpu}@us-east-1a={a}", "--pool",
                       f"{gpu}@us-east-1b={short}")
    assert code == 2
    assert "same length" in err
    code, _, err = run_cli(capsys, "backtest", path, "--pool", f"{gpu}@us-east-1a={a}", "--policy",
                       "deadline")
    assert code == 2
    assert "--deadline-hours" in err
    counts = write_trace(tmp_path, "counts.json", [1, 0, 0, 0] * 10)
    big = write_trace(tmp_path, "big.json", [2, 1] * 20)
    spot = plan["chosen"]["gpu"]["spot"]
    code, _, err = run_cli(capsys, "backtest", path, "--pool", f"{gpu}@us-east-1a={big}")
    assert (code == 2 and "largest count" in err) if spot > 2 else code == 0
    code, _, err = run_cli(capsys, "backtest", path, "--pool", f"nope.xlarge@us-east-1a={counts}")
    assert code == 2
    assert "no GPU type 'nope.xlarge'" in err
    code, _, err = run_cli(capsys, "backtest", path, "--pool", "g4dn.xlarge=x")
    assert code == 2
    assert "TYPE@ZONE" in err
    code, _, err = run_cli(capsys, "backtest", path, "--pool", f"{gpu}@us-east-1a={a}", "--pool",
                       f"{gpu}@us-east-1a={b}")
    assert code == 2
    assert "given twice" in err


# ----------------------------------------------------------------------------- fetch


def _serve_synthetic(root) -> list[str]:
    import numpy as np

    from deepvm_core.market.trace_fetch import trace_files
    rng = np.random.default_rng(3)
    files = list(trace_files())
    for rel in files:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        data = (rng.random(100) < 0.7).astype(int).tolist()
        path.write_text(json.dumps({"metadata": {"gap_seconds": 600}, "data": data}))
    return files


def test_fetch_from_a_local_server(tmp_path, capsys, monkeypatch):
    served = tmp_path / "served"
    files = _serve_synthetic(served)
    with serve_folder(served) as server:
        monkeypatch.setenv("DEEPVM_SPOT_TRACES_URL", f"{server.url}/")
        out = tmp_path / "out"
        code, text, err = run_cli(capsys, "traces", "fetch", "--out", str(out))
    assert code == 0, err
    assert len(files) == 12
    assert text.count("wrote ") == len(files)
    for rel in files:
        assert (out / rel).read_bytes() == (served / rel).read_bytes()


def test_fetch_writes_into_the_per_user_traces_folder_by_default(tmp_path, capsys, monkeypatch):
    served = tmp_path / "served"
    files = _serve_synthetic(served)
    monkeypatch.delenv("DEEPVM_SPOT_TRACES_DIR", raising=False)
    monkeypatch.setenv("DEEPVM_HOME", str(tmp_path / "home"))
    with serve_folder(served) as server:
        monkeypatch.setenv("DEEPVM_SPOT_TRACES_URL", f"{server.url}/")
        code, _, err = run_cli(capsys, "traces", "fetch")
        assert code == 0, err
        assert all((tmp_path / "home" / "spot-traces" / rel).is_file() for rel in files)
        monkeypatch.setenv("DEEPVM_SPOT_TRACES_DIR", str(tmp_path / "mine"))
        code, _, err = run_cli(capsys, "traces", "fetch")
        assert code == 0, err
        assert all((tmp_path / "mine" / rel).is_file() for rel in files)


def test_fetch_from_a_down_server_or_a_bad_file_writes_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("DEEPVM_SPOT_TRACES_URL", closed_port_url())
    out = tmp_path / "out"
    code, _, err = run_cli(capsys, "traces", "fetch", "--out", str(out))
    assert code == 2
    assert "could not be reached" in err
    assert not out.exists()
    served = tmp_path / "served"
    files = _serve_synthetic(served)
    (served / files[-1]).write_text('{"metadata": {"gap_seconds": 0}, "data": [1]}')
    with serve_folder(served) as server:
        monkeypatch.setenv("DEEPVM_SPOT_TRACES_URL", f"{server.url}/")
        code, _, err = run_cli(capsys, "traces", "fetch", "--out", str(out))
    assert code == 2
    assert "gap_seconds = 0" in err
    assert not out.exists()


# ----------------------------------------------------------------------------- plan --pool


def _configs(doc: dict) -> list[dict]:
    return [c for c in [*doc["best"], *doc["frontier"]] if c]


def test_plan_with_pools_backtests_that_type_only(tmp_path, capsys):
    up = write_trace(tmp_path, "up.json", [1] * 300)
    flaky = write_trace(tmp_path, "flaky.json", [1, 1, 1, 0] * 75)
    code, out, err = run_cli(capsys, "plan", *JOB, "--pool", f"g4dn.xlarge@us-east-1b={flaky}",
                         "--pool", f"g4dn.xlarge@us-east-1a={up}", "--model", "replay",
                         "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    seen = set()
    for c in _configs(doc):
        e = c["estimate"]
        if c["gpu"]["name"] == "g4dn.xlarge" and c["gpu"]["spot"] > 0:
            seen.add("backtest")
            assert e["evaluated_by"] == "backtest"
            assert e["recovery"] == "failover"
            # the always-up zone has the lower single-pool makespan: it comes first, and a
            # failover run never leaves it: makespan = compute + checkpoints x stall
            assert e["pools"] == ["g4dn.xlarge@us-east-1a", "g4dn.xlarge@us-east-1b"]
            hours = e["compute_hours"] + e["checkpoints"] * e["checkpoint_stall_seconds"] / 3600
            assert e["expected_makespan_hours"] == pytest.approx(hours, rel=1e-12)
            assert e["expected_interruptions"] == 0
        else:
            assert e["evaluated_by"] == "closed_form"
            assert e["pools"] == []
            assert e["recovery"] is None
    assert seen == {"backtest"}
    code, _, err = run_cli(capsys, "plan", *JOB, "--pool", f"g4dn.xlarge@us-east-1a={up}",
                           "--recovery", "deadline")
    assert code == 2
    assert "--deadline-hours" in err
    code, _, err = run_cli(capsys, "plan", *JOB, "--pool", f"p3.2xlarge@us-east-1a={up}")
    assert code == 2
    assert "no GPU type 'p3.2xlarge'" in err


def test_plan_table_says_which_types_the_backtest_evaluated(tmp_path, capsys):
    up = write_trace(tmp_path, "up.json", [1] * 300)
    code, out, err = run_cli(capsys, "plan", *JOB, "--pool", f"g5.xlarge@us-east-1a={up}",
                         "--recovery", "wait", "--model", "replay")
    assert code == 0, err
    assert ("Note: g5.xlarge evaluated on spot traces, the last 7 days, by a backtest (wait)"
            in out)
    code, out, _ = run_cli(capsys, "plan", *JOB)
    assert code == 0
    assert "backtest" not in out


def test_backtest_never_up_pool_falls_back_on_the_exact_tick(tmp_path, capsys, plan):
    # issue 26: a pool never up, 10-minute ticks, R = 12 min, D = T + R + 3 g: at t = 2 g the
    # rule's two sides are equal (no fallback), at t = 3 g = 0.5 h it falls back: makespan D
    gpu, est = plan["chosen"]["gpu"]["name"], plan["chosen"]["estimate"]
    hours = est["compute_hours"] + est["checkpoints"] * est["checkpoint_stall_seconds"] / 3600
    never = write_trace(tmp_path, "never.json", [0] * 40)
    deadline = hours + 0.2 + 0.5

    def run(*policy: str) -> dict:
        """The backtest's result on the never-up pool, R = 12 min, one start, by ``policy``."""
        code, out, err = run_cli(capsys, "backtest", str(tmp_path / "plan.json"), "--pool",
                                 f"{gpu}@us-east-1a={never}", "--restart-min", "12", *policy,
                                 "--deadline-hours", repr(deadline), "--starts", "1",
                                 "--format", "json")
        assert code == 0, err
        return json.loads(out)["result"]

    result = run("--policy", "deadline")
    assert result["makespan_hours"]["mean"] == pytest.approx(deadline, abs=1e-9)
    assert result["fell_back"] == 1.0
    assert result["deadline_met"] == 1.0
    # Uniform Progress: nothing at t = 0 (on the line), behind it at t = g: on demand then
    result = run("--recovery", "uniform-progress")
    assert result["makespan_hours"]["mean"] == pytest.approx(1 / 6 + 0.2 + hours, abs=1e-9)
    assert result["deadline_met"] == 1.0
    # slack-reserve: slack D - (R + T + g) = 1/3 h is under its reserve 2 (R + s): on demand
    # at time 0
    result = run("--recovery", "slack-reserve")
    assert result["makespan_hours"]["mean"] == pytest.approx(0.2 + hours, abs=1e-9)
    code, _, err = run_cli(capsys, "backtest", str(tmp_path / "plan.json"), "--pool",
                       f"{gpu}@us-east-1a={never}", "--recovery", "uniform-progress")
    assert code == 2
    assert "--policy uniform-progress needs --deadline-hours" in err
