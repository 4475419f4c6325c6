"""AppTest tests of the Spot markets page (``traces.md``) on seeded synthetic traces written to a
temporary per-user traces folder, and of the Plan a job card when pools are set.

The job is the Table IV job at 3,000 epochs (61.16 s per epoch on one g4dn.xlarge) at PW 3 on
the 2023 catalog, whose cheapest cluster is 1 x g5.xlarge spot (+ a memory node). Pools:
``g5.xlarge@us-east-1c`` always up, ``g5.xlarge@us-east-1a`` up three ticks in four (600 s
ticks, 300 ticks).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from dashboard import url_spot

APP = Path(__file__).resolve().parent.parent / "dashboard" / "app.py"
JOB = {"page": "spot", "catalog": "aws-us-east-1-2023-10", "epochs": "3000",
       "epoch_s": "61.16", "ref": "g4dn.xlarge", "trials": "0"}
POOLS = "g5.xlarge@us-east-1c=s/up.json|g5.xlarge@us-east-1a=s/flaky.json"


def _write(path: Path, data: list[int], gap: float = 600) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"metadata": {"gap_seconds": gap}, "data": data}))


@pytest.fixture
def traces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "spot-traces"
    monkeypatch.setenv("DEEPVM_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DEEPVM_SPOT_TRACES_DIR", str(root))
    _write(root / "s" / "up.json", [1] * 300)
    _write(root / "s" / "flaky.json", [1, 1, 1, 0] * 75)
    return root


def page(**params: str) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=120)
    for key, value in {**JOB, **params}.items():
        at.query_params[key] = value
    return at


def texts(at: AppTest) -> list[str]:
    return [m.value for m in at.main.markdown]


def card(at: AppTest) -> str:
    return next(t for t in texts(at) if t.startswith("Deadline **"))


@pytest.mark.usefixtures("traces")
def test_pools_from_the_url_strip_statistics_and_backtest() -> None:
    at = page(pools=POOLS)
    at.run()
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    assert at.query_params["pools"] == [POOLS] or at.query_params["pools"] == POOLS
    stats = at.dataframe[0].value.set_index("Pool")
    flaky = stats.loc["g5.xlarge@us-east-1a"]
    # [1,1,1,0] x 75, 600 s ticks: 225 of 300 up; 75 up->down edges; 225 ticks x 1/6 h / 75 =
    # 0.5 h between losses; every down run is 1 tick = 1/6 h; 300 x 600 s = 2.083 days
    assert flaky["Availability"] == 0.75
    assert flaky["Interruptions"] == 75
    assert flaky["MTBI (h)"] == pytest.approx(0.5)
    assert flaky["Mean wait (h)"] == pytest.approx(1 / 6)
    assert flaky["Days"] == pytest.approx(300 * 600 / 86400)
    up = stats.loc["g5.xlarge@us-east-1c"]
    assert up["Availability"] == 1.0
    assert up["Interruptions"] == 0
    assert np.isnan(up["MTBI (h)"])
    chart = at.get("plotly_chart")
    assert len(chart) == 2  # the strip and the CDF
    lines = texts(at)
    assert "Pools the planner chose, in failover order: `g5.xlarge@us-east-1c` → " \
           "`g5.xlarge@us-east-1a`" in lines
    head = next(t for t in lines if t.startswith("**TR: 1 x g5.xlarge spot"))
    assert "the plan's choice" in head
    compute_h = float(re.search(r": ([\d.,]+) compute hours", head).group(1).replace(",", ""))
    # the always-up pool first: no policy ever leaves it or falls back, every start meets
    # 1.5 x compute hours
    frame = at.dataframe[1].value.set_index("Policy")
    # issue 26 added two deadline policies: the page lists every policy of the core
    assert list(frame.index) == ["wait", "failover", "deadline", "uniform-progress",
                                 "slack-reserve"]
    assert (frame["Deadline met"] == "200 of 200").all()
    assert (frame["Fell back"] == 0).all()
    assert (frame["Interruptions"] == 0).all()
    assert frame["Mean makespan (h)"].nunique() == 1
    assert frame["P90 (h)"].nunique() == 1
    assert card(at).startswith(f"Deadline **{1.5 * compute_h:,.1f} h**")


@pytest.mark.usefixtures("traces")
def test_a_tight_deadline_falls_back_and_is_in_the_url() -> None:
    at = page(pools=POOLS)
    at.run()
    makespan = at.dataframe[1].value.set_index("Policy").loc[
        "wait", "Mean makespan (h)"]
    tight = float(np.floor(makespan * 0.9))
    at.number_input(key="spot_deadline_h").set_value(tight).run()
    assert not at.exception
    frame = at.dataframe[1].value.set_index("Policy")
    # below the always-up makespan: wait and failover never meet it; deadline falls back at
    # time 0 in every run and finishes on demand in R + the job, which is also too late
    assert frame.loc["wait", "Deadline met"] == "0 of 200"
    assert frame.loc["deadline", "Fell back"] == 1.0
    assert card(at).startswith(f"Deadline **{tight:,.1f} h**")
    assert at.query_params["spot_deadline"] in (f"{tight:g}", [f"{tight:g}"])


def test_upload_keeps_good_files_and_names_the_bad_one(traces: Path) -> None:
    at = page()
    at.run()
    assert not at.exception
    good = json.dumps({"metadata": {"gap_seconds": 600}, "data": [1] * 300}).encode()
    bad = json.dumps({"metadata": {"gap_seconds": 600}, "data": [1, -2]}).encode()
    at.file_uploader[0].set_value([("us-east-1c_v100_1.json", good, "application/json"),
                                   ("broken.json", bad, "application/json")]).run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert any("broken.json" in e and "data[1] = -2" in e for e in errors), errors
    kept = list((traces / "uploads").glob("*.json"))
    assert len(kept) == 1
    assert kept[0].name.endswith("-us-east-1c_v100_1.json")
    # mapped to its guessed pool; p3.2xlarge is not in the 2023 catalog: a message naming it
    assert any("p3.2xlarge" in e and "no GPU type" in e for e in errors), errors
    assert "us-east-1c_v100_1.json" in str(at.query_params["pools"])


def test_bad_pool_names_and_files_are_named_and_the_good_pools_kept(traces: Path) -> None:
    _write(traces / "s" / "short.json", [1] * 10)
    outside = traces.parent / "outside.json"
    _write(outside, [1] * 300)
    at = page(pools=POOLS + "|g5.xlarge@us-east-1b=s/short.json|nonsense@=s/up.json"
              "|g5.xlarge@us-east-1d=s/gone.json|g5.xlarge@us-east-1e=../outside.json"
              f"|g5.xlarge@us-east-1f={outside}")
    at.run()
    assert not at.exception
    messages = [e.value for e in at.error] + [w.value for w in at.warning]
    assert any("short.json" in m and "same length" in m for m in messages), messages
    assert any("nonsense@" in m for m in messages), messages
    assert any("s/gone.json" in m for m in messages), messages
    # a URL reads no file outside the traces folder
    assert any("../outside.json" in m and "not a file of the traces folder" in m
               for m in messages), messages
    assert any(str(outside) in m and "not a file of the traces folder" in m
               for m in messages), messages
    stats = at.dataframe[0].value
    assert set(stats["Pool"]) == {"g5.xlarge@us-east-1c", "g5.xlarge@us-east-1a"}


@pytest.mark.usefixtures("traces")
def test_plan_card_says_the_figures_come_from_a_replay() -> None:
    at = page(page="plan", pools=POOLS, deadline_h="100")
    at.run()
    assert not at.exception
    note = next(t for t in texts(at) if t.startswith("Figures from a replay"))
    # 300 ticks x 600 s = 2.08 days; the always-up pool first: every start meets 100 h
    assert note == ("Figures from a replay on 2 days of real availability in us-east-1c, "
                    "us-east-1a (failover, 200 starts); the 100 h deadline was met in 200 of "
                    "200 starts.")


# ----------------------------------------------------------------------------- pure helpers


def test_availability_strip_bins_by_hand() -> None:
    from dashboard.spot_compute import availability_strip
    from deepvm_core.market.pools import Pool
    from deepvm_core.market.trace import SpotTrace

    def pool(zone: str, data: list[int]) -> Pool:
        counts = np.array(data, dtype=np.int64)
        return Pool("g5.xlarge", zone, SpotTrace(zone, 600.0, counts), 0.5, 1.0)

    state = pool("a", [1, 1, 0, 0, 1, 0])
    count = pool("b", [3, 1, 3, 3, 0, 3])
    x, names, z = availability_strip([state, count], 2, bins=3)
    # 6 ticks in 3 bins of 2 ticks (1/3 h each): the state trace is up on >= 1 whatever n;
    # the count trace needs 2 VMs: up, down | up, up | down, up
    assert names == ["g5.xlarge@a", "g5.xlarge@b"]
    assert x.tolist() == pytest.approx([0.0, 2 / 6, 4 / 6])
    assert z.tolist() == [[1.0, 0.0, 0.5], [0.5, 1.0, 0.5]]
    _, _, z4 = availability_strip([count], 4, bins=3)
    assert z4.tolist() == [[0.0, 0.0, 0.0]]  # 4 VMs never fit a market of at most 3


@pytest.mark.parametrize(("name", "pool"), [
    ("availability-1node-aws-10-26-2022/us-west-2a_v100_1.json", "p3.2xlarge@us-west-2a"),
    ("us-east-1f_k80_8.json", "p2.8xlarge@us-east-1f"),
    ("uploads/0123456789ab-us-west-2c_v100_8.json", "p3.16xlarge@us-west-2c"),
    ("mine.json", ""), ("us-west-2a_a100_1.json", ""),
])
def test_pools_guessed_from_public_file_names(name: str, pool: str) -> None:
    from dashboard.spot_compute import guess_pool

    assert guess_pool(name) == pool


def test_url_spot_params_round_trip_and_warn() -> None:

    pools = {"s/up.json": "g5.xlarge@us-east-1c", "s/flaky.json": "g5.xlarge@us-east-1a",
             "s/unused.json": ""}
    text = url_spot.format_spot_pools(pools)
    assert text == POOLS
    values, warnings = url_spot.parse_spot_params({"pools": text, "recovery": "deadline",
                                              "spot_deadline": "31.5", "starts": "500"})
    assert warnings == []
    assert values == {"pools": {k: v for k, v in pools.items() if v}, "recovery": "deadline",
                      "spot_deadline": 31.5, "starts": 500}
    values, warnings = url_spot.parse_spot_params({"pools": "x=y|g5.xlarge@z=f.json",
                                              "recovery": "pray", "starts": "0",
                                              "spot_deadline": "inf"})
    assert values == {"pools": {"f.json": "g5.xlarge@z"}}
    assert len(warnings) == 4
    assert "'x=y' is not TYPE@ZONE=FILE" in warnings[0].text
    assert [w.param for w in warnings] == ["pools", "recovery", "spot_deadline", "starts"]
