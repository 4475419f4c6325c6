"""Issue 27, hostile findings 2, 5, 6 and 7 (the backtest and Spot markets parts): a trace that
flips every tick, a plan file's catalog name used as a path, tampered plan files and options out
of range, pools of several regions, a zone that is not one, a deadline policy without a
deadline, and the time budget of a request with its failures cached.

Work is counted, not timed (timings: ``bench/bench_spot_hostile.py``): the replay's rounds (one
per call of ``backtest_replay.advance_runs``) and the configurations each replay loop runs.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run_cli, write_trace
from streamlit.testing.v1 import AppTest

from deepvm_core.catalog.store import bundled_catalog_paths
from deepvm_core.job import backtest_replay

APP = Path(__file__).resolve().parent.parent / "dashboard" / "app.py"
AWS = "aws-us-east-1-2023-10"
JOB = ("--catalog", AWS, "--pw", "3", "--ckpt-gb", "0.3", "--buffer", "2", "--epochs", "30",
       "--epoch-seconds", "61.16", "--ref-type", "g4dn.xlarge", "--trials", "0")
#: The hostile trace of the issue: up and down in turn, every tick, 100,000 ticks.
TICKS = 100_000
ALTERNATING = [i % 2 for i in range(TICKS)]
#: The Spot markets page of the browser tests: the Table IV job at 3,000 epochs, 2025 catalog.
PAGE = {"catalog": "aws-us-east-1-2025-h1", "epochs": "3000", "epoch_s": "61.16",
        "ref": "g4dn.xlarge", "trials": "0"}


class Counter:
    """Counts the replay's rounds and, per replay loop, its configurations x runs."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.rounds = 0
        self.loops: list[tuple[int, int]] = []
        advance, replay = backtest_replay.advance_runs, backtest_replay._replay

        def counted_advance(*args: Any) -> Any:
            self.rounds += 1
            return advance(*args)

        def counted_replay(up: Any, g: float, job: Any, *args: Any) -> Any:
            self.loops.append((job.configurations, up.shape[0]))
            return replay(up, g, job, *args)

        monkeypatch.setattr(backtest_replay, "advance_runs", counted_advance)
        monkeypatch.setattr(backtest_replay, "_replay", counted_replay)


@pytest.fixture
def plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    code, out, _ = run_cli(capsys, "plan", *JOB, "--format", "json")
    assert code == 0
    (tmp_path / "plan.json").write_text(out)
    doc: dict[str, Any] = json.loads(out)
    return doc


def tampered(tmp_path: Path, doc: dict[str, Any], value: Any, *keys: str) -> str:
    doc = json.loads(json.dumps(doc))
    where = doc
    for key in keys[:-1]:
        where = where[key]
    where[keys[-1]] = value
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(doc))
    return str(path)


# ----------------------------------------------------------------------------- the CLI


def test_a_never_fitting_alternating_trace_is_refused_in_a_few_rounds(
        tmp_path, capsys, plan, monkeypatch) -> None:
    # 300 s ticks: an attempt after an interruption (R = 6 min + a 33 s segment) never fits
    # in one up tick. Refused once a run needs such an attempt, not after 2 (pools + 1) L
    # boundaries (400,000 rounds, 46 s, on main)
    gpu = plan["chosen"]["gpu"]["name"]
    trace = write_trace(tmp_path, "alt.json", ALTERNATING, gap=300)
    count = Counter(monkeypatch)
    for policy in ("wait", "failover"):
        code, _, err = run_cli(capsys, "backtest", str(tmp_path / "plan.json"), "--pool",
                               f"{gpu}@us-east-1a={trace}", "--policy", policy,
                               "--window-days", "all")
        assert code == 2
        assert f"under the {policy} policy the job never finishes" in err
    assert count.rounds <= 20, count.rounds


def test_an_alternating_trace_replays_in_rounds_of_the_job_not_of_the_trace(
        tmp_path, capsys, plan, monkeypatch) -> None:
    # 600 s ticks: R + a segment fits in an up tick; each run needs a round per tick it lives
    # (every tick flips), so the rounds follow the longest run, whatever the trace's length
    gpu = plan["chosen"]["gpu"]["name"]
    rounds = {}
    for ticks in (1_000, TICKS):
        trace = write_trace(tmp_path, f"alt{ticks}.json", ALTERNATING[:ticks], gap=600)
        count = Counter(monkeypatch)
        code, out, err = run_cli(capsys, "backtest", str(tmp_path / "plan.json"), "--pool",
                                 f"{gpu}@us-east-1a={trace}", "--window-days", "all",
                                 "--format", "json")
        assert code == 0, err
        longest = json.loads(out)["result"]["makespan_hours"]["max"]
        assert count.rounds <= longest / (600 / 3600) + 3
        rounds[ticks] = count.rounds
    assert rounds[TICKS] <= rounds[1_000] + 3


def test_backtest_never_reads_the_plan_catalog_name_as_a_path(tmp_path, capsys, plan) -> None:
    # a real catalog file, named by its path in the plan: main read it; a name is looked up
    copy = tmp_path / "cat.json"
    shutil.copy(bundled_catalog_paths()[AWS], copy)
    gpu = plan["chosen"]["gpu"]["name"]
    up = write_trace(tmp_path, "up.json", [1] * 50)
    for name in (str(copy), "../../../../etc/passwd"):
        path = tampered(tmp_path, plan, name, "catalog", "name")
        code, _, err = run_cli(capsys, "backtest", path, "--pool", f"{gpu}@us-east-1a={up}")
        assert code == 2
        assert f"catalog.name = {name!r} is not the name of a bundled or saved catalog" in err
        assert "JSON" not in err  # the file was not read
    path = tampered(tmp_path, plan, AWS, "catalog", "name")  # a bundled name still works
    code, _, err = run_cli(capsys, "backtest", path, "--pool", f"{gpu}@us-east-1a={up}")
    assert code == 0, err


@pytest.mark.parametrize(("value", "keys", "said"), [
    (1e30, ("chosen", "hourly_price"), "chosen.hourly_price = 1e+30: more than 10,000 VMs"),
    ("abc", ("assumptions", "restart_hours"), "assumptions.restart_hours = 'abc': must be a"),
    (25.0, ("assumptions", "restart_hours"), "assumptions.restart_hours = 25.0: must be at most "
                                             "24 h"),
    (10**30, ("chosen", "gpu", "spot"), "chosen.gpu.spot = 10000000000000000000000000000"),
])
def test_a_tampered_plan_file_is_named_not_a_traceback(tmp_path, capsys, plan, value, keys,
                                                       said) -> None:
    gpu = plan["chosen"]["gpu"]["name"]
    up = write_trace(tmp_path, "up.json", [1] * 50)
    path = tampered(tmp_path, plan, value, *keys)
    code, out, err = run_cli(capsys, "backtest", path, "--pool", f"{gpu}@us-east-1a={up}")
    assert code == 2
    assert said in err
    assert len(err.splitlines()) == 1
    assert out == ""


def test_restart_min_has_the_plan_cap_and_starts_capped_are_said(tmp_path, capsys,
                                                                plan) -> None:
    gpu = plan["chosen"]["gpu"]["name"]
    up = write_trace(tmp_path, "up.json", [1] * 50)
    args = ("backtest", str(tmp_path / "plan.json"), "--pool", f"{gpu}@us-east-1a={up}")
    code, _, err = run_cli(capsys, *args, "--restart-min", "1441")
    assert code == 2
    assert "'1441' must be <= 1440 minutes, the R a plan accepts" in err
    code, out, err = run_cli(capsys, *args, "--starts", "100000", "--format", "json")
    assert code == 0
    assert json.loads(out)["result"]["runs"] == 50
    assert err == ("deepvm backtest: warning: --starts 100000: 100,000 start times were asked; "
                   "the traces have 50 ticks, and each tick starts one run at most: 50 runs.\n")


def test_a_zone_that_is_not_a_zone_and_pools_of_several_regions_are_refused(
        tmp_path, capsys, plan) -> None:
    gpu = plan["chosen"]["gpu"]["name"]
    up = write_trace(tmp_path, "up.json", [1] * 50)
    code, _, err = run_cli(capsys, "backtest", str(tmp_path / "plan.json"), "--pool",
                           f"{gpu}@the-moon={up}")
    assert code == 2
    assert "zone 'the-moon' is not an availability zone name (us-east-1a) or zone ID" in err
    code, _, err = run_cli(capsys, "backtest", str(tmp_path / "plan.json"),
                           *(a for z in ("us-west-2a", "us-east-2a", "us-east-1a")
                             for a in ("--pool", f"{gpu}@{z}={up}")))
    assert code == 2
    assert (f"{gpu}@us-east-2a is in us-east-2 and {gpu}@us-west-2a in us-west-2: pools "
            "replayed together fail over within one region") in err
    code, _, err = run_cli(capsys, "backtest", str(tmp_path / "plan.json"), "--pool",
                           f"{gpu}@use1-az1={up}")  # a zone ID is a zone
    assert code == 0, err


# ----------------------------------------------------------------------------- the page


@pytest.fixture
def traces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "spot-traces"
    monkeypatch.setenv("DEEPVM_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DEEPVM_SPOT_TRACES_DIR", str(root))
    monkeypatch.setenv("DEEPVM_USER_CATALOG_DIR", str(tmp_path / "user"))
    root.mkdir()
    return root


def spot_page(root: Path, name: str, data: list[int], **params: str) -> AppTest:
    (root / name).write_text(json.dumps({"metadata": {"gap_seconds": 600}, "data": data}))
    at = AppTest.from_file(str(APP), default_timeout=300)
    at.query_params.update({"page": "spot", **PAGE,
                            "pools": f"p3.2xlarge@us-east-1c={name}", **params})
    return at


def test_the_alternating_trace_maps_on_spot_markets_with_work_shared(traces, monkeypatch) -> None:
    count = Counter(monkeypatch)
    at = spot_page(traces, "alternating.json", ALTERNATING)
    at.run()
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    card = next(m.value for m in at.main.markdown if m.value.startswith("Deadline **"))
    assert "wait met it in" in card
    assert " of 200** starts" in card
    # the plan's backtest of p3.2xlarge's 143 configurations replays each distinct job once
    # (13 of them), its band's 13 scenarios in one loop, no ordering replay of a single pool;
    # then the page's five policies: 7 loops (main: 20, 143 configurations each)
    assert len(count.loops) == 7, count.loops
    assert max(c for c, _ in count.loops) <= 13


def test_the_time_budget_says_what_was_cut_and_its_failures_are_cached(traces,
                                                                       monkeypatch) -> None:
    from dashboard import plan_compute, spot_compute

    count = Counter(monkeypatch)
    # the page's replay of every policy past its budget (the plan's backtests within theirs)
    monkeypatch.setattr(spot_compute, "BACKTEST_BUDGET_SECONDS", 0.0)
    data = [*ALTERNATING[1:], 0]
    at = spot_page(traces, "budget-policies.json", data)
    at.run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert any(e.startswith("Cannot replay ") and "was stopped after 0 s, the time budget of "
               "the backtests of one request" in e for e in errors), errors
    loops = len(count.loops)
    at.run()  # a rerun: the cut answers from the cache (the server's, shared by every
    assert len(count.loops) == loops  # session and link), nothing replayed again
    assert [e.value for e in at.error] == errors
    # the plan's backtests past their budget: the closed form, and the cut said
    monkeypatch.setattr(plan_compute, "BACKTEST_BUDGET_SECONDS", 0.0)
    at = spot_page(traces, "budget-plan.json", data)
    at.run()
    assert not at.exception
    cut = [w.value for w in at.warning if "time budget" in w.value]
    assert cut, [w.value for w in at.warning]
    assert ("was stopped after 0 s, the time budget of the backtests of one request: the "
            "traces were not used, and every configuration is planned by the closed form "
            "instead") in cut[0]
    assert any(w.value.startswith("Nothing to replay: the plan's backtest on these pools did "
                                  "not run") for w in at.warning)
    loops = len(count.loops)
    at.run()
    assert len(count.loops) == loops


def test_a_deadline_policy_without_a_deadline_is_said_on_both_pages(traces) -> None:
    said = ("recovery=deadline needs a deadline: Plan a job has none, so the plan replays "
            "failover instead")
    for page in ("spot", "plan"):
        at = spot_page(traces, "flaky.json", [1, 1, 1, 0] * 75, recovery="deadline", page=page)
        at.run()
        assert not at.exception
        texts = [w.value for w in at.warning]
        assert any(t.startswith(said) for t in texts), (page, texts)


def test_the_page_refuses_a_zone_that_is_not_one_and_pools_of_several_regions(traces) -> None:
    for name in ("a.json", "b.json", "c.json"):
        (traces / name).write_text(json.dumps({"metadata": {"gap_seconds": 600},
                                               "data": [1, 1, 0] * 50}))
    at = AppTest.from_file(str(APP), default_timeout=300)
    at.query_params.update({"page": "spot", **PAGE, "pools": "p3.2xlarge@the-moon=a.json"})
    at.run()
    errors = [e.value for e in at.error]
    assert any("zone 'the-moon' is not an availability zone name" in e for e in errors), errors
    at = AppTest.from_file(str(APP), default_timeout=300)
    at.query_params.update({"page": "spot", **PAGE, "pools": (
        "p3.2xlarge@us-west-2a=a.json|p3.2xlarge@us-east-2a=b.json|p3.2xlarge@us-east-1a=c.json")})
    at.run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert any("p3.2xlarge@us-east-2a is in us-east-2 and p3.2xlarge@us-west-2a in us-west-2: "
               "pools replayed together fail over within one region" in e for e in errors), errors
    assert any("p3.2xlarge@us-east-1a is in us-east-1" in e for e in errors), errors
    pools_line = next(m.value for m in at.main.markdown if "failover order" in m.value)
    assert pools_line.endswith("`p3.2xlarge@us-west-2a`")  # one region kept


def test_a_policy_that_cannot_replay_is_said_for_itself_and_the_others_answer() -> None:
    """Finding 8: "under the wait policy the job never finishes" stood for the whole table of
    policies when the user had chosen failover. A 2 h job (no checkpoint, restart 6 min) on a
    first pool up one 10-minute tick in two never fits there, so ``wait`` (which keeps to the
    first pool) cannot replay; the second pool is always up, so failover and the deadline
    policies finish."""
    import numpy as np

    from deepvm_core.catalog.store import load_catalog
    from deepvm_core.market.pools import Pool
    from deepvm_core.market.trace import SpotTrace
    from deepvm_core.pipeline.backtest_plan import PlannedCluster, policy_backtests

    cluster = PlannedCluster(gpu="g4dn.xlarge", spot_vms=1, hourly_price_usd=0.5,
                             compute_hours=2.0, checkpoint_stall_hours=0.0, checkpoints=0,
                             checkpoint_interval_hours=2.0)
    flapping = SpotTrace("flapping", 600.0, np.tile(np.array([1, 0], dtype=np.int64), 300))
    steady = SpotTrace("steady", 600.0, np.ones(600, dtype=np.int64))
    pools = [Pool("g4dn.xlarge", "us-east-1a", flapping, 0.2, 0.526),
             Pool("g4dn.xlarge", "us-east-1b", steady, 0.2, 0.526)]
    found = policy_backtests(load_catalog("aws-us-east-1-2023-10"), cluster, pools, 0.1, 10.0,
                             20)
    assert list(found.cannot) == ["wait"]
    assert "under the wait policy the job never finishes" in found.cannot["wait"]
    assert list(found.runs) == ["failover", "deadline", "uniform-progress", "slack-reserve"]
    assert float(np.max(found.runs["failover"].makespan_hours)) < 10.0
