"""The sweep's golden files changed on purpose, by the speed objective's rows only (issue 27:
Simulate omitted the tools' default objective).

``deepvm sweep`` (and Simulate) now draws DeepVM ranked by the job's training speed beside the
paper's policies (``deepvm_speed``, the last of ``ROW_ORDER``). Taking those rows out gives each
golden sweep file byte for byte as it was before
(``tests/fixtures/golden-sweep-before-speed.json``: the sha256 of each file then). When a sweep
golden file changes again on purpose, remove its line from the fixture.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

GOLDEN_DIR = Path(__file__).parent / "golden"
BEFORE = json.loads((Path(__file__).parent / "fixtures" / "golden-sweep-before-speed.json")
                    .read_text(encoding="utf-8"))["files"]


@pytest.mark.parametrize("name", sorted(BEFORE))
def test_only_the_speed_rows_were_added(name: str) -> None:
    doc = json.loads((GOLDEN_DIR / name).read_text(encoding="utf-8"))
    speed = [r for r in doc["rows"] if r["policy"] == "deepvm_speed"]
    others = [r for r in doc["rows"] if r["policy"] != "deepvm_speed"]
    assert doc["rows"][-len(speed):] == speed  # the last rows
    pws = [r["pw_usd_per_hour"] for r in others if r["policy"] == "deepvm"]
    assert [r["pw_usd_per_hour"] for r in speed] == pws  # one per PW of the grid
    assert {r["policy_label"] for r in speed} == {"DeepVM (speed objective, the default)"}
    before = json.dumps({**doc, "rows": others}, indent=2) + "\n"
    assert hashlib.sha256(before.encode("utf-8")).hexdigest() == BEFORE[name]


def test_the_speed_rows_are_the_fastest_affordable_cluster_on_the_papers_catalog() -> None:
    """At PW 3 on the paper's catalog the speed objective picks Table IV's 17 x g4dn.xlarge
    (2.8526 USD/h, tests/test_dashboard_app.py derives it), at PW 10 a cluster within 10."""
    doc = json.loads((GOLDEN_DIR / "sweep-aws-us-east-1-2023-10.json").read_text("utf-8"))
    speed = {r["pw_usd_per_hour"]: r for r in doc["rows"] if r["policy"] == "deepvm_speed"}
    assert speed[3.0]["configuration"] == "TR: 17 x g4dn.xlarge spot + 1 x c5.xlarge, 2.8526 USD/h"
    assert speed[10.0]["hourly_price_usd"] <= 10.0
