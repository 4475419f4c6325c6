"""The ``deepvm`` command line: outputs, JSON schema, and one-line errors with exit code 2."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import pytest
from cli_helpers import run_cli as run

from bench.synthetic import synthetic_catalog
from deepvm_core.catalog.store import save_catalog
from deepvm_core.cli import main
from tests.conftest import SHARED_DATA

AWS = "aws-us-east-1-2023-10"


def test_recommend_json_schema(capsys):
    code, out, _ = run(capsys, "recommend", "--catalog", AWS, "--pw", "3", "--ckpt-gb", "0.3",
                       "--buffer", "2", "--solver", "enumerate", "--objective", "paper",
                       "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert {"inputs", "catalog", "deepvm", "deepvm_noscale", "cost_first", "performance_first",
            "best_per_architecture"} <= set(doc)
    assert doc["catalog"]["name"] == AWS
    assert len(doc["catalog"]["sha256"]) == 64
    first = doc["deepvm"][0]
    assert first["architecture"] == "tiering"
    assert first["gpu"] == {"name": "g4dn.xlarge", "spot": 17, "on_demand": 0}
    assert first["cpu"] == {"name": "c5.xlarge", "on_demand": 1}
    assert first["hourly_price"] == pytest.approx(2.8526)
    assert doc["cost_first"]["gpu"] == {"name": "g4dn.xlarge", "spot": 15, "on_demand": 1}
    assert doc["cost_first"]["cpu"] is None
    assert doc["performance_first"]["gpu"]["name"] == "g5.xlarge"
    assert set(doc["best_per_architecture"]) == {"single_anchor", "tiering"}
    assert "explanation" not in doc


def test_recommend_infeasible_has_explanation(capsys):
    code, out, _ = run(capsys, "recommend", "--catalog", AWS, "--pw", "0.1", "--solver",
                       "enumerate", "--format", "json")
    doc = json.loads(out)
    assert code == 0
    assert doc["deepvm"] == []
    assert doc["explanation"]["binding"] == ["budget"]
    assert doc["explanation"]["cheapest_feasible_usd_per_hour"] == pytest.approx(0.3242)


def test_recommend_table(capsys):
    code, out, _ = run(capsys, "recommend", "--catalog", AWS, "--pw", "3", "--solver",
                       "enumerate", "--objective", "paper")
    assert code == 0
    assert "TR: 17 x g4dn.xlarge spot + 1 x c5.xlarge, 2.8526 USD/h" in out
    assert "Cost-First: SA: 16 x g4dn.xlarge" in out


def test_recommend_artifact_format_catalog(capsys):
    path = str(SHARED_DATA / "artifact_simul_data.json")
    code, out, _ = run(capsys, "recommend", "--catalog", path, "--pw", "1", "--no-quotas",
                       "--solver", "enumerate", "--objective", "paper", "--format", "json")
    assert code == 0
    assert json.loads(out)["deepvm"][0]["gpu"]["name"] == "H"


def test_artifact_file_reproduces_table_iv(capsys):
    path = str(SHARED_DATA / "artifact_data.json")
    _code, out, _ = run(capsys, "recommend", "--catalog", path, "--pw", "3", "--solver",
                       "enumerate", "--format", "json")
    doc = json.loads(out)
    assert [c["cpu"]["name"] for c in doc["deepvm"]] == ["c5.xlarge", "m6i.xlarge", "c5n.xlarge"]


def test_sweep_csv(capsys):
    code, out, _ = run(capsys, "sweep", "--catalog", "paper-simulated", "--no-quotas",
                       "--pw-start", "0", "--pw-stop", "10", "--pw-step", "0.1")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0
    assert len(rows) == 101 * 6  # the paper's five policies and the speed objective
    last = next(r for r in rows if r["policy"] == "deepvm" and r["pw_usd_per_hour"] == "10.0")
    assert float(last["normalised_performance"]) == pytest.approx(1.0)


def test_sweep_json(capsys):
    code, out, _ = run(capsys, "sweep", "--catalog", "paper-simulated", "--no-quotas",
                       "--pw-stop", "1", "--pw-step", "0.5", "--format", "json")
    doc = json.loads(out)
    assert code == 0
    assert len(doc["rows"]) == 3 * 6  # five policies of the paper's and the default's
    assert doc["catalog"]["name"] == "paper-simulated"


def test_flopp(capsys):
    code, out, _ = run(capsys, "flopp", "--catalog", "paper-simulated", "--format", "json")
    rows = json.loads(out)
    assert code == 0
    assert rows[0]["name"] == "D"
    assert rows[0]["spot_rank"] == 1


def test_catalog_validate_and_convert(capsys, tmp_path):
    src = str(SHARED_DATA / "artifact_data.json")
    out_path = tmp_path / "ours.json"
    code, out, _ = run(capsys, "catalog", "convert", src, str(out_path))
    assert code == 0
    assert out_path.exists()
    code, out, _ = run(capsys, "catalog", "validate", str(out_path))
    assert code == 0
    assert out.startswith("OK: artifact_data")
    back = tmp_path / "artifact.json"
    assert run(capsys, "catalog", "convert", str(out_path), str(back), "--to", "artifact")[0] == 0
    assert json.loads(back.read_text())["available_vcpus"]["G"] == {"ondemand": 32, "spot": 128}


def test_catalog_validate_lists_every_problem(capsys, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"instances": [
        {"name": "x", "type": "G", "ondemand_price": -1, "spot_price": 0.1, "vCPU": 4,
         "network_bandwidth": "fast", "flops": 10}]}))
    code, out, _ = run(capsys, "catalog", "validate", str(bad))
    assert code == 2
    assert "instances[0] (x): ondemand_price = -1" in out
    assert "network_bandwidth = 'fast'" in out


@pytest.mark.parametrize(("argv", "needle"), [
    (["recommend", "--catalog", AWS, "--pw", "abc"], "--pw: 'abc' is not a number"),
    (["recommend", "--catalog", AWS, "--pw", "-1"], "must be >= 0"),
    (["recommend", "--catalog", AWS, "--pw", "3", "--ckpt-gb", "0"], "must be > 0"),
    (["recommend", "--catalog", AWS, "--pw", "nan"], "not a finite number"),
    (["recommend", "--catalog", "nowhere.json", "--pw", "3"], "not found"),
    (["recommend", "--catalog", "paper-simulatd", "--pw", "3"], "Did you mean paper-simulated"),
    (["recommend", "--catalog", AWS, "--pw", "3", "--objective", "velocity"], "invalid choice"),
    (["recommend", "--catalog", AWS], "recommend needs --pw"),  # --catalog has a default
    (["sweep", "--catalog", AWS, "--pw-start", "5", "--pw-stop", "1"], "pw_stop"),
    (["frobnicate"], "invalid choice"),
    (["recommend", "--catalog", AWS, "--pw", "3", "--max-nodes", "10001"], "must be <= 10000"),
    (["sweep", "--catalog", AWS, "--max-nodes", "100000"], "must be <= 10000"),
    (["recommend", "--catalog", AWS, "--pw", "3", "--time-limit", "0"], "must be > 0"),
])
def test_bad_arguments_one_line_exit_2(capsys, argv, needle):
    with pytest.raises(SystemExit) as info:  # argparse exits; main returns the other codes
        raise SystemExit(main(argv))
    _, err = capsys.readouterr()
    assert info.value.code == 2
    assert needle in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_invalid_catalog_file_one_line(capsys, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    code, _, err = run(capsys, "recommend", "--catalog", str(bad), "--pw", "3")
    assert code == 2
    assert "malformed JSON" in err
    assert len(err.strip().splitlines()) == 1


def test_console_script_runs_as_module():
    proc = subprocess.run([sys.executable, "-m", "deepvm_core.cli", "flopp", "--catalog",
                           AWS], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
    assert "g4dn.xlarge" in proc.stdout


def test_max_nodes_help_names_the_cap(capsys):
    with pytest.raises(SystemExit):
        main(["recommend", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "cap on VM counts per role (default 256, at most 10,000)" in out
    assert "--time-limit SECONDS" in out


def test_the_integer_program_past_its_budget_says_the_enumeration_answered(capsys):
    """Issue 9's scenario: nodes at the cap, PW 1000, quotas off, the integer program."""
    code, out, _ = run(capsys, "recommend", "--catalog", AWS, "--pw", "1000", "--no-quotas",
                       "--max-nodes", "10000", "--solver", "ilp")
    assert code == 0
    assert ("Note: The integer program was not run: its 28,175 binaries and 24 saturation "
            "constraints are more than it solves within 5 s; these results come from the exact "
            "enumeration") in out
    code, out, _ = run(capsys, "recommend", "--catalog", AWS, "--pw", "1000", "--no-quotas",
                       "--max-nodes", "10000", "--format", "json", "--solver", "ilp")
    assert json.loads(out)["notes"][-1].startswith("The integer program was not run")


def test_a_search_space_past_the_bound_is_one_line(capsys, tmp_path):
    path = tmp_path / "sixty.json"
    save_catalog(synthetic_catalog(60, 10), path)
    code, _, err = run(capsys, "recommend", "--catalog", str(path), "--pw", "1e6",
                       "--no-quotas", "--max-nodes", "10000")
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert "search space has 1,200,000" in err
    assert "lower the node cap" in err
