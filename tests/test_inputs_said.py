"""Issue 27, hostile finding 7 (the parts outside the backtest): inputs are never ignored
without a word. ``deepvm plan --pool`` for a type that gets no cluster says so (no cluster
within PW, or no eFLOPS: Trainium); an MTBI in a dashboard URL for a type the catalog lacks is
named (with the nearest names) and dropped from the URL; ``starts`` above the traces' ticks is
said on Spot markets."""

from __future__ import annotations

from pathlib import Path

from cli_helpers import run_cli, write_trace
from streamlit.testing.v1 import AppTest

APP = Path(__file__).resolve().parent.parent / "dashboard" / "app.py"
AWS = "aws-us-east-1-2023-10"
JOB = ("--epochs", "30", "--epoch-seconds", "61.16", "--ref-type", "g4dn.xlarge",
       "--trials", "0")


def test_plan_pool_without_a_cluster_within_pw_is_said(tmp_path, capsys) -> None:
    up = write_trace(tmp_path, "up.json", [1] * 300)
    # g5.xlarge: spot 0.3018 USD/h alone is above PW 0.3 USD/h (g4dn.xlarge, 0.1578, fits)
    code, out, err = run_cli(capsys, "plan", "--catalog", AWS, "--pw", "0.3", *JOB,
                             "--pool", f"g5.xlarge@us-east-1a={up}", "--model", "replay")
    assert code == 0, err
    assert ("Note: the pools of g5.xlarge are not used: no cluster of g5.xlarge fits PW 0.30 "
            "USD/h, the quotas and the node cap") in out


def test_plan_pool_of_a_type_without_eflops_is_said(tmp_path, capsys) -> None:
    up = write_trace(tmp_path, "up.json", [1] * 300)
    code, out, err = run_cli(capsys, "plan", "--catalog", "aws-us-east-1-2025-h1", "--pw", "30",
                             *JOB, "--pool", f"trn1.32xlarge@use1-az1={up}",
                             "--model", "replay")
    assert code == 0, err
    assert ("Note: the pools of trn1.32xlarge are not used: trn1.32xlarge has no eFLOPS in "
            "catalog aws-us-east-1-2025-h1, so no time of the job on it is known") in out


def url_page(tmp_path, monkeypatch, **params: str) -> AppTest:
    monkeypatch.setenv("DEEPVM_USER_CATALOG_DIR", str(tmp_path / "user"))
    at = AppTest.from_file(str(APP), default_timeout=90)
    at.query_params.update({"page": "plan", "trials": "200", "catalog": AWS, **params})
    return at.run()


def test_an_mtbi_of_an_unknown_type_in_the_url_is_said_and_dropped(tmp_path,
                                                                   monkeypatch) -> None:
    at = url_page(tmp_path, monkeypatch, mtbi="g4dn.xlarg:0.1,zz9.mega:0.1,g5.xlarge:3")
    assert not at.exception
    texts = [w.value for w in at.warning]
    assert any("URL parameter mtbi: g4dn.xlarg (did you mean g4dn.xlarge?) is not a GPU type "
               f"of catalog {AWS}; its MTBI is dropped." in t for t in texts), texts
    assert any(f"URL parameter mtbi: zz9.mega is not a GPU type of catalog {AWS}; its MTBI is "
               "dropped." in t for t in texts), texts
    assert at.query_params["mtbi"] == "g5.xlarge:3"


def test_starts_capped_by_the_traces_is_said(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("DEEPVM_SPOT_TRACES_DIR", str(tmp_path / "traces"))
    at = url_page(tmp_path, monkeypatch, page="spot", starts="100000")
    assert not at.exception
    captions = [c.value for c in at.caption]
    said = [c for c in captions if c.startswith("100,000 start times were asked; the traces "
                                                "have ")]
    assert said, captions
    assert "each tick starts one run at most" in said[0]
