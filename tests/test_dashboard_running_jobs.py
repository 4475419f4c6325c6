"""The Running jobs page (issue 28) in AppTest: it reads the ledgers of the user's folder (never
AWS) and shows each job's cost and progress against the plan's P10-P90 and the counterfactuals;
the figures are the hand-derived ones of ``tests/ledger_samples.py``."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_pages import new_app, no_errors
from ledger_samples import PLAN_ID, write_sample


def running_jobs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("DEEPVM_HOME", str(tmp_path / "home"))
    at = new_app(tmp_path, monkeypatch)
    at.query_params["page"] = "jobs"
    at.run()
    no_errors(at)
    assert at.title[0].value == "Running jobs"
    return at


def test_no_ledger_says_how_to_get_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = running_jobs(tmp_path, monkeypatch)
    assert "No watched job yet" in at.info[0].value


def test_a_ledger_shows_cost_progress_and_counterfactuals(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_sample(tmp_path / "home")
    (tmp_path / "home" / "ledgers" / "broken.jsonl").write_text("not json\n")
    at = running_jobs(tmp_path, monkeypatch)
    assert any(f"Plan {PLAN_ID}: TR: 1 x g5.xlarge spot + 1 x t3.xlarge" in m.value
               for m in at.markdown)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Cost so far"] == "3.60 USD"
    assert metrics["Spot hours"] == "3.25 h"
    assert metrics["Reclaims"] == "1"
    assert any("makespan 2.60-4.10 h, cost 2.80-4.40 USD" in m.value for m in at.markdown)
    cf = next(d.value for d in at.dataframe if "Counterfactual" in d.value.columns)
    rows = {r["Counterfactual"]: r for r in cf.to_dict("records")}
    assert rows["on demand"]["Cost (USD)"] == 8.0
    assert rows["deadline"]["Makespan (h)"] == 3.75
    assert rows["deadline"]["Cost (USD)"] == 7.7
    assert "not finished" in rows["wait"]["Note"]
    assert "broken.jsonl cannot be read" in at.warning[0].value
    assert str(tmp_path) not in at.warning[0].value  # no folder of the server
