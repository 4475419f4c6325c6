"""Issue 16: hostile and absurd inputs to the job planner, the calibration and the catalog
check, from the command line and the core. Clear answers, never inf/nan, never a silent bad
fit."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from factories import cpu_row, gpu_row, make_catalog
from hypothesis import given, settings
from hypothesis import strategies as st

from deepvm_core.catalog.catalog import catalog_to_dict
from deepvm_core.catalog.store import load_catalog
from deepvm_core.cli import main
from deepvm_core.cli.plan_table import render_plan_table
from deepvm_core.errors import WorkloadError
from deepvm_core.hardware.measurements import bundled_measurements_paths
from deepvm_core.io.plan_json import plan_to_dict
from deepvm_core.job.finish import FINISH_HORIZON_HOURS, finishes
from deepvm_core.model import Scenario
from deepvm_core.pipeline.plan import plan_job
from deepvm_core.text import duration
from deepvm_core.workload.speedup import SpeedupModel
from deepvm_core.workload.workload import Workload

AWS = "aws-us-east-1-2023-10"
PLAN = ["plan", "--catalog", AWS, "--pw", "3", "--epochs", "30", "--epoch-seconds", "61.16",
        "--ref-type", "g4dn.xlarge", "--trials", "200"]

# Speedups 2, 1, 2, 1, 2 at n = 2, 4, 8, 16, 32 (t(1) = 60 s, t(n) = 30 or 60 s): no signal.
# Mean 1.6, SS_tot = 3 (0.4)² + 2 (0.6)² = 1.2. The logistic with a > 0, c > 0 increases
# with n, and the best non-decreasing fit (pool adjacent violators) is 1.5, 1.5, 1.5, 1.5, 2
# with SSE 4 (0.5)² = 1.0, so every fit has R² <= 1 - 1.0 / 1.2 = 0.167 < 0.8.
NO_SIGNAL = ("instance,nodes,epoch_seconds\n"
             "g4dn.xlarge,1,60\ng4dn.xlarge,2,30\ng4dn.xlarge,4,60\ng4dn.xlarge,8,30\n"
             "g4dn.xlarge,16,60\ng4dn.xlarge,32,30\n")


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# ----------------------------------------------------------------------------- 1. calibration


def test_a_calibration_without_signal_is_not_written_without_force(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv = tmp_path / "random.csv"
    csv.write_text(NO_SIGNAL)
    out = tmp_path / "cal.json"
    code, stdout, stderr = run(["calibrate", str(csv), "--catalog", AWS, "--out", str(out)],
                               capsys)
    assert code == 1
    assert not out.exists()
    assert "g4dn.xlarge" in stdout
    assert "R²" in stdout
    assert "-0.0000" not in stdout
    assert "deepvm calibrate: warning: g4dn.xlarge: R² = " in stderr
    assert "is below 0.8" in stderr
    assert f"{out} not written: a fit is not trusted" in stderr
    assert "--force" in stderr

    code, stdout, stderr = run(["calibrate", str(csv), "--catalog", AWS, "--out", str(out),
                                "--force"], capsys)
    assert code == 0
    assert out.exists()
    assert f"wrote {out}" in stdout
    assert "is below 0.8" in stderr  # warned, and written on request


def test_calibrate_help_documents_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["calibrate", "--help"])
    text = capsys.readouterr().out
    assert "exit codes:" in text
    assert "--force" in text
    for code in ("0  the calibrated catalog was written", "1  the fits were printed, nothing "
                 "was written", "2  bad input"):
        assert code in text


def test_a_trusted_calibration_is_written(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cal.json"
    code, _stdout, stderr = run(["calibrate", "deepvm-scaling", "--catalog", AWS, "--out",
                                str(out)], capsys)
    assert code == 0
    assert out.exists()
    assert stderr == ""


def test_one_node_count_is_refused_with_the_reason(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    csv = tmp_path / "one.csv"
    csv.write_text("instance,nodes,epoch_seconds\ng4dn.xlarge,1,60\ng4dn.xlarge,4,20\n")
    code, stdout, stderr = run(["calibrate", str(csv), "--catalog", AWS, "--out",
                                str(tmp_path / "x.json")], capsys)
    assert code == 2
    assert stdout == ""
    assert stderr == ("deepvm calibrate: error: g4dn.xlarge: 1 distinct node count(s) >= 2 (4); "
                      "the logistic has 3 parameters (a, b, c), so a fit needs at least 3\n")


# ----------------------------------------------------------------------------- 2. absurd plans


def test_mtbi_of_a_nanosecond_is_marked_does_not_finish_never_inf_or_nan(
        capsys: pytest.CaptureFixture[str]) -> None:
    # ρ = 0: every cluster is interrupted as often as one VM (the default ρ would divide the
    # interval by 1 + ρ (n - 1), issue 25), so the interval below is the MTBI itself
    code, stdout, stderr = run([*PLAN, "--mtbi", "g4dn.xlarge=1e-9", "--per-vm-share", "0"],
                               capsys)
    assert code == 0
    assert stderr == ""
    assert "inf" not in stdout
    assert "nan" not in stdout
    # 1e-9 h x 3600 s/h = 3.6e-6 s
    assert "does not finish: an interruption every 3.6 µs" in stdout
    best = [line for line in stdout.splitlines() if line.startswith("best")]
    assert best
    assert all("g4dn" not in line for line in best)
    deepvm = next(line for line in stdout.splitlines() if line.startswith("DeepVM "))
    assert "no finish" in deepvm


def test_the_plan_json_has_null_and_a_reason(capsys: pytest.CaptureFixture[str]) -> None:
    code, stdout, _ = run([*PLAN, "--mtbi", "g4dn.xlarge=1e-9", "--per-vm-share", "0",
                           "--format", "json"], capsys)
    assert code == 0
    doc = json.loads(stdout)
    json.dumps(doc, allow_nan=False)
    deepvm = doc["policies"]["deepvm"][0]["estimate"]
    assert deepvm["expected_makespan_hours"] is None
    assert deepvm["expected_cost_usd"] is None
    assert deepvm["does_not_finish"].startswith("does not finish: an interruption every 3.6 µs")
    assert "g4dn" not in doc["chosen"]["gpu"]
    assert all(e["estimate"].get("does_not_finish") is None for e in doc["frontier"])


def test_nothing_finishes_nothing_is_chosen(capsys: pytest.CaptureFixture[str]) -> None:
    argv = [*PLAN, "--mtbi-scale", "0.25", "--per-vm-share", "0"]  # ρ = 0: see above
    for gpu in ("g3s.xlarge", "g4dn.xlarge", "g5.xlarge"):
        argv += ["--mtbi", f"{gpu}=1e-9"]
    code, stdout, _ = run(argv, capsys)
    assert code == 0
    assert "Chosen:" not in stdout
    assert "best" not in stdout
    assert "inf" not in stdout
    assert "nan" not in stdout
    # 1e-9 h x 0.25 x 3600 s/h = 9e-7 s = 0.9 µs
    assert "Nothing qualifies. No cluster is expected to finish this job" in stdout
    assert "an interruption every 0.9 µs" in stdout


@pytest.mark.parametrize(("option", "value", "bound"), [
    ("--restart-min", "1e9", "must be <= 1440 (24 h, the bound on the restart R)"),
    ("--restart-min", "525600", "must be <= 1440 (24 h, the bound on the restart R)"),
    ("--wait-min", "1e6", "must be <= 10080 (168 h, the bound on the capacity wait W)"),
    ("--ckpt-fixed-s", "1e5", "must be <= 3600 (the bound on the fixed checkpoint cost δ0)"),
])
def test_r_w_and_delta0_are_bounded_with_the_bound_named(
        option: str, value: str, bound: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main([*PLAN, option, value])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {option}: '{value}' {bound}" in err


def test_the_bounds_live_in_the_workload() -> None:
    with pytest.raises(WorkloadError) as info:
        Workload(epochs=1, reference_epoch_seconds=1, restart_hours=8760.0, wait_hours=169.0,
                 checkpoint_fixed_seconds=3601.0)
    text = str(info.value)
    assert "restart_hours = 8760.0: must be at most 24 h (1440 min)" in text
    assert "wait_hours = 169.0: must be at most 168 h (10080 min)" in text
    assert "checkpoint_fixed_seconds = 3601.0: must be at most 3600 s" in text
    Workload(epochs=1, reference_epoch_seconds=1, restart_hours=24.0, wait_hours=168.0,
             checkpoint_fixed_seconds=3600.0)  # the bounds themselves are allowed


def test_deadline_and_budget_both_missed_name_both(capsys: pytest.CaptureFixture[str]) -> None:
    code, stdout, _ = run([*PLAN, "--deadline-hours", "0.01", "--budget-usd", "0.01"], capsys)
    assert code == 0
    assert "No cluster meets a deadline of 0.01 h and a budget of 0.01 USD" in stdout
    assert "the fastest is" in stdout
    assert "The budget is missed too: the cheapest is" in stdout


def test_finish_rule_and_durations_by_hand() -> None:
    assert finishes([1.0, FINISH_HORIZON_HOURS, FINISH_HORIZON_HOURS * 1.01, math.inf,
                     math.nan]).tolist() == [True, True, False, False, False]
    # Issue 23: the reasons write durations in the one format of deepvm_core.text (its own
    # cases: tests/test_text.py); finish.format_duration ("6.3 min", "2 h", "114 years",
    # "forever") is gone.
    assert duration(1e-9) == "3.6 µs"  # 3.6e-6 s
    assert duration(0.1) == "6 min"  # 360 s / 60
    assert duration(FINISH_HORIZON_HOURS) == "114.1 years"  # 1e6 / 8766 = 114.08
    assert np.all(finishes(np.zeros(0)) == np.zeros(0, dtype=bool))


# ----------------------------------------------------------------------------- 3. unknown types


UNKNOWN = ("instance,nodes,epoch_seconds\n"
           "g4dn.xlarg,1,60\ng4dn.xlarg,2,35\ng4dn.xlarg,4,20\ng4dn.xlarg,8,12\n"
           "p9.huge,1,10\np9.huge,2,6\n")


def test_unknown_measured_types_are_named_with_close_matches(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv = tmp_path / "unknown.csv"
    csv.write_text(UNKNOWN)
    code, stdout, _ = run([*PLAN, "--speedup", "measured", "--measurements", str(csv)], capsys)
    assert code == 0
    assert (f"Warning: Measurements not used: none of the types in {csv} (g4dn.xlarg (did you "
            f"mean g4dn.xlarge?), p9.huge) is a GPU type of catalog {AWS}; every row was "
            "ignored.") in stdout
    code, stdout, stderr = run([*PLAN, "--speedup", "measured", "--measurements", str(csv),
                                "--format", "json"], capsys)
    assert json.loads(stdout)["warnings"][0].startswith("Measurements not used")
    assert stderr.startswith("deepvm plan: warning: Measurements not used")

    code, stdout, stderr = run(["calibrate", str(csv), "--catalog", AWS, "--out",
                                str(tmp_path / "x.json")], capsys)
    assert code == 2
    assert stdout == ""
    assert stderr.startswith("deepvm calibrate: error: nothing to calibrate. Measurements not "
                             "used: none of the types")
    assert "g4dn.xlarg (did you mean g4dn.xlarge?)" in stderr


def test_some_unknown_types_warn_and_the_rest_is_calibrated(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shipped = bundled_measurements_paths()["deepvm-scaling"].read_text()
    csv = tmp_path / "mixed.csv"
    csv.write_text(shipped + "c5.xlarge,1,60\nc5.xlarge,2,40\n")
    out = tmp_path / "cal.json"
    code, _, stderr = run(["calibrate", str(csv), "--catalog", AWS, "--out", str(out)], capsys)
    assert code == 0
    assert out.exists()
    assert (f"deepvm calibrate: warning: Measurements not used: the rows of c5.xlarge (a CPU "
            f"type) in {csv} name no GPU type of catalog {AWS}; they were ignored.") in stderr


# ----------------------------------------------------------------------------- 4. catalog rule


def test_catalog_validate_refuses_a_catalog_without_gpu_types(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = catalog_to_dict(load_catalog("paper-simulated"))
    data["gpu_types"] = []
    path = tmp_path / "no-gpus.json"
    path.write_text(json.dumps(data))
    code, stdout, _ = run(["catalog", "validate", str(path)], capsys)
    assert code == 2
    assert stdout.strip().endswith("(catalog): gpu_types = []: no GPU VM: a catalog needs at "
                                   "least one, or no cluster can be built")


# ----------------------------------------------------------------------------- invariant


@settings(max_examples=30, deadline=None)
@given(mtbi=st.floats(1e-12, 1e4), scale=st.sampled_from([0.25, 0.5, 1.0, 2.0, 4.0]),
       restart=st.floats(0.0, 24.0), wait=st.floats(0.0, 168.0),
       fixed=st.floats(0.0, 3600.0))
def test_any_plan_within_the_bounds_is_finite_json_and_never_chooses_a_non_finisher(
        mtbi: float, scale: float, restart: float, wait: float, fixed: float) -> None:
    catalog = make_catalog([gpu_row("g1")], [cpu_row("c1")])
    workload = Workload(epochs=10, reference_epoch_seconds=360.0, reference_gpu="g1",
                        restart_hours=restart, wait_hours=wait, checkpoint_fixed_seconds=fixed,
                        mtbi_hours_by_gpu={"g1": mtbi}, mtbi_scale=scale)
    result = plan_job(catalog, Scenario(0.0, use_quotas=False, max_nodes=3), workload,
                      pw_usd_per_hour=None, speedup=SpeedupModel("paper"), trials=20)
    doc = plan_to_dict(result, catalog)
    json.dumps(doc, allow_nan=False)  # never NaN or Infinity
    for e in result.best:
        assert e.does_not_finish is None
        assert math.isfinite(e.expected_makespan_hours)
        assert math.isfinite(e.expected_cost_usd)
        assert e.expected_makespan_hours <= FINISH_HORIZON_HOURS
    if not result.best:
        assert result.explanation is not None
        assert result.explanation.summary
    table = render_plan_table(result, catalog)
    assert "nan" not in table
    assert "inf" not in table
