"""AppTest tests of the Plan card's deadline offer (issue 26, item 5): the example job at PW 3 on
today's catalog (1 x p3.16xlarge spot, 2.3 compute hours) with a deadline it may miss."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from app_pages import new_app, no_errors
from streamlit.testing.v1 import AppTest
from synthetic_traces import alternating_runs

SENTENCE = re.compile(
    r":material/schedule: The ([\d.]+) h deadline is at risk: a (\d+)% chance, under the 95% "
    r"target\. The ([a-z-]+) policy \(.+\) meets it in (\d+)% of 200 (runs on availability "
    r"drawn from the job model \(MTBI 1\.9 h, W 1\.1 h\)|replays on [^:]+): about ([\d.,]+) USD "
    r"\(P90 ([\d.,]+) USD\), (\d+)% of the hours on demand\.$")
LINE = re.compile(r"([a-z-]+): meets it in (\d+)%, about ([\d.,]+) USD \(P90 [\d.,]+ USD\), "
                  r"\d+% of the hours on demand")


def plan_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **query: str) -> AppTest:
    at = new_app(tmp_path, monkeypatch)
    at.query_params.update({"page": "plan", "pw": "3", **query})
    at.run()
    no_errors(at)
    return at


def offer_texts(at: AppTest) -> tuple[str | None, str | None]:
    """The offer's sentence and its caption of every policy considered, or (None, None)."""
    sentence = next((m.value for m in at.main.markdown if "deadline is at risk" in m.value), None)
    caption = next((c.value for c in at.main.caption
                    if c.value.startswith("Deadline policies considered: ")), None)
    return sentence, caption


def test_a_deadline_at_risk_is_offered_the_cheapest_policy_that_meets_95(tmp_path, monkeypatch):
    at = plan_page(tmp_path, monkeypatch, deadline_h="5")
    sentence, caption = offer_texts(at)
    assert sentence is not None
    match = SENTENCE.match(sentence)
    assert match, sentence
    assert match.group(1) == "5"
    chance = next(m.value for m in at.main.markdown if m.value.startswith("Chance to meet"))
    assert chance == f"Chance to meet the 5 h deadline: **{match.group(2)}%**"
    assert int(match.group(2)) < 95
    # the plain loop over the policies the card lists: the least cost among those meeting 95 %
    assert caption is not None
    lines = LINE.findall(caption)
    assert [policy for policy, _, _ in lines] == ["deadline", "uniform-progress",
                                                   "slack-reserve"]
    meeting = [(float(cost.replace(",", "")), policy) for policy, met, cost in lines
               if int(met) >= 95]
    assert match.group(3) == min(meeting)[1]
    # the offered policy's numbers, as metrics
    metrics = {m.label: m.value for m in at.main.metric}
    assert metrics[f"Expected cost ({match.group(3)})"] == f"{match.group(6)} USD"
    assert metrics["P90 cost"] == f"{match.group(7)} USD"
    assert metrics["Hours on demand"] == f"{match.group(8)}%"
    assert not [b for b in at.button if b.key == "plan_use_offer"]  # no traces: the offer only


def test_no_offer_without_a_deadline_or_when_it_is_safe(tmp_path, monkeypatch):
    for query in ({}, {"deadline_h": "40"}):
        assert offer_texts(plan_page(tmp_path, monkeypatch, **query)) == (None, None)


def test_on_traces_the_button_plans_the_pools_with_the_offered_policy(tmp_path, monkeypatch):
    # p3.16xlarge up 2 h and down 30 min on average (5-minute ticks, a week): failover meets a
    # 4 h deadline in fewer than 95 % of its runs
    root = tmp_path / "spot-traces"
    monkeypatch.setenv("DEEPVM_SPOT_TRACES_DIR", str(root))
    (root / "s").mkdir(parents=True)
    (root / "s" / "flaky.json").write_text(json.dumps(
        {"metadata": {"gap_seconds": 300}, "data": alternating_runs(26, 2016, 24, 6)}))
    at = plan_page(tmp_path, monkeypatch, deadline_h="4",
                   pools="p3.16xlarge@us-east-1a=s/flaky.json")
    sentence, _ = offer_texts(at)
    assert sentence is not None
    match = SENTENCE.match(sentence)
    assert match, sentence
    assert match.group(5) == "replays on p3.16xlarge@us-east-1a"
    policy = match.group(3)
    (button,) = [b for b in at.button if b.key == "plan_use_offer"]
    assert button.label == f"Plan the pools with {policy}"
    button.click().run()
    no_errors(at)
    assert at.query_params["recovery"] in (policy, [policy])
    note = next(m.value for m in at.main.markdown if m.value.startswith("Figures from a replay"))
    # every run of the replay (its bands' runs included) meets the deadline
    assert re.search(rf"\({policy}, (\d+) starts\); the 4 h deadline was met in \1 of \1 "
                     r"starts\.$", note), note
    assert offer_texts(at) == (None, None)  # met: no longer at risk
