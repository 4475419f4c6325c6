"""The ledger of a watched plan (issue 28): its figures against the hand-derived ones of
``tests/ledger_samples.py``, ``deepvm ledger`` (table and JSON), bad files."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_helpers import run_cli
from ledger_samples import PLAN_ID, SETUP, T0, write_sample

from deepvm_core.cloud.fleet.ledger_figures import cost_usd, observed_up, reclaims, worker_hours
from deepvm_core.cloud.fleet.ledger_file import append_record, ledger_path, read_ledger
from deepvm_core.cloud.fleet.ledger_report import summarize
from deepvm_core.cloud.fleet.watch_state import fold
from deepvm_core.errors import DeepVMError


@pytest.fixture(name="home")
def home_fixture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("DEEPVM_HOME", str(tmp_path))
    write_sample(tmp_path)
    return tmp_path


@pytest.mark.usefixtures("home")
def test_the_sample_ledger_by_hand() -> None:
    ledger = read_ledger(ledger_path(PLAN_ID))
    assert ledger.setup == SETUP
    assert cost_usd(ledger) == pytest.approx(3.6)
    assert worker_hours(ledger, "spot") == pytest.approx(3.25)
    assert worker_hours(ledger, "on-demand") == 0.0
    assert reclaims(ledger) == 1
    run = fold(ledger).stepper
    assert run.done_at == pytest.approx(3.25)
    assert run.interruptions == 1
    assert observed_up(ledger) == [[True, True, True, False, False, False, False, False],
                                   [False, False, False, True, True, True, True, True]]


@pytest.mark.usefixtures("home")
def test_counterfactuals_by_hand() -> None:
    s = summarize(read_ledger(ledger_path(PLAN_ID)))
    by_name = {c.name: c for c in s.counterfactuals}
    assert by_name["on demand"].makespan_hours == pytest.approx(2.5)
    assert by_name["on demand"].cost_usd == pytest.approx(8.0)
    # the policy that ran, replayed on what it saw, is what happened
    assert by_name["failover"].makespan_hours == pytest.approx(3.25)
    assert by_name["failover"].cost_usd == pytest.approx(3.6)
    assert by_name["wait"].makespan_hours is None
    assert "not finished within the 4.00 h observed" in by_name["wait"].note
    assert by_name["deadline"].makespan_hours == pytest.approx(3.75)
    assert by_name["deadline"].cost_usd == pytest.approx(7.7)
    assert set(by_name) == {"on demand", "wait", "failover", "deadline", "uniform-progress",
                            "slack-reserve"}
    assert s.done
    assert s.makespan_hours == pytest.approx(3.25)
    assert s.progress == 1.0
    assert s.progress_source == "estimate"


def test_ledger_partway_progress(tmp_path: Path) -> None:
    """Cut after the step at 2.0 h: segment 0 done (1 h of 2.5 h), the cost to 2.0 h:
    1.0 x 1.5 + 1.2 x 0.5 = 2.1 USD."""
    from ledger_samples import records

    path = tmp_path / "cut.jsonl"
    for r in records():
        if r is not SETUP and r.time > T0 + 2.0 * 3600:
            break
        append_record(path, r)
    ledger = read_ledger(path)
    s = summarize(ledger)
    assert not s.done
    assert s.makespan_hours is None
    assert s.work_done_hours == pytest.approx(1.0)
    assert s.cost_usd == pytest.approx(2.1)
    assert s.elapsed_hours == pytest.approx(2.0)


@pytest.mark.usefixtures("home")
def test_cli_ledger_table_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "ledger", PLAN_ID)
    assert code == 0, err
    assert f"Plan {PLAN_ID}: TR: 1 x g5.xlarge spot + 1 x t3.xlarge; policy failover, " \
           "deadline 4 h; done in 3.25 h" in out
    assert "Cost so far 3.60 USD; workers on spot 3.25 h, on demand 0.00 h; 1 reclaim(s), " \
           "1 interruption(s)" in out
    assert "estimated from running time" in out
    assert re.search(r"^on demand +2\.50 h +8\.00 USD$", out, re.M)
    assert re.search(r"^deadline +3\.75 h +7\.70 USD$", out, re.M)
    code, out, err = run_cli(capsys, "ledger", PLAN_ID, "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["summary"]["cost_usd"] == pytest.approx(3.6)
    assert doc["records"][0]["kind"] == "start"
    assert [r["kind"] for r in doc["records"]].count("act") == 7


def test_bad_ledgers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DEEPVM_HOME", str(tmp_path))
    code, _, err = run_cli(capsys, "ledger", PLAN_ID)
    assert code == 2
    assert "no ledger at" in err
    assert "Traceback" not in err
    path = ledger_path(PLAN_ID)
    path.parent.mkdir(parents=True)
    path.write_text('{"kind": "observe"}\n')
    with pytest.raises(DeepVMError, match="line 1: not a ledger record"):
        read_ledger(path)
    write_sample(tmp_path / "x")
    good = (tmp_path / "x" / "ledgers" / f"{PLAN_ID}.jsonl").read_text()
    path.write_text(good + '{"kind": "obs')  # a crash mid-line: the last line is ignored
    assert read_ledger(path).setup == SETUP
