"""``deepvm launch``, ``status`` and ``teardown`` against moto (a real EC2 API on loopback).

Every fault test ends with zero live instances tagged with the plan, and no output ever shows
a credential.
"""

from __future__ import annotations

import contextlib
import io
import json
from collections import Counter
from pathlib import Path

import pytest
from cli_helpers import run_cli
from fleet_fakes import CPU_TEMPLATE, GPU_TEMPLATE, SECRETS, FleetEnv, set_fake_aws_env

from deepvm_core.cli import main
from deepvm_core.cloud.fleet import (
    AwsSettings,
    Ec2,
    LaunchFailed,
    PollSettings,
    RequestOptions,
    TemplateRef,
    launch,
    plan_from_export,
    prepare,
    read_export,
)

CATALOG = "aws-us-east-1-2023-10"


def recommend_json(pw: float = 3.0) -> str:
    """The CLI's export of the paper's Table IV scenario (PW 3 USD/h)."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = main(["recommend", "--catalog", CATALOG, "--pw", f"{pw:g}", "--format", "json"])
    assert code == 0
    return buffer.getvalue()


@pytest.fixture(scope="module")
def table4_export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Table IV's choice, written by ``deepvm recommend --format json``: Tiering, 17 x
    g4dn.xlarge spot + 1 x c5.xlarge."""
    path = tmp_path_factory.mktemp("exports") / "table4.json"
    path.write_text(recommend_json())
    return path


@pytest.fixture(scope="module")
def single_anchor_export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same export with its best Single Anchor picked as ``chosen`` (what the export
    records when a user picks another configuration): 1 on-demand + 15 spot g4dn.xlarge."""
    doc = json.loads(recommend_json())
    doc["chosen"] = doc["best_per_architecture"]["single_anchor"]
    path = tmp_path_factory.mktemp("exports") / "single-anchor.json"
    path.write_text(json.dumps(doc, indent=2) + "\n")
    return path


def plan_id(path: Path) -> str:
    doc, data = read_export(path)
    return plan_from_export(doc, data).plan_id


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``deepvm *argv``: the fake credentials never show."""
    return run_cli(capsys, *argv, secrets=SECRETS)


def launch_args(env: FleetEnv, export: Path, *extra: str) -> list[str]:
    args = ["launch", str(export), "--gpu-template", GPU_TEMPLATE, "--cpu-template",
            CPU_TEMPLATE]
    for subnet in env.subnets:
        args += ["--subnet", subnet]
    return args + list(extra)


def tags(instance: dict) -> dict[str, str]:
    return {t["Key"]: t["Value"] for t in instance.get("Tags", [])}


def assert_nothing_left(env: FleetEnv, pid: str) -> None:
    assert env.live(pid) == []
    assert env.live() == []


# ----------------------------------------------------------------------------- happy paths


def test_launch_status_teardown_table_iv(fleet_env: FleetEnv, table4_export: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    pid = plan_id(table4_export)
    code, out, err = run(capsys, *launch_args(fleet_env, table4_export, "--yes"))
    assert code == 0, err
    instances = fleet_env.live(pid)
    assert len(instances) == 18
    by_role = Counter((tags(i)["deepvm:role"], i["InstanceType"], i.get("InstanceLifecycle",
                                                                         "on-demand"))
                      for i in instances)
    assert by_role == {("spot-worker", "g4dn.xlarge", "spot"): 17,
                       ("memory-node", "c5.xlarge", "on-demand"): 1}
    assert len({i["Placement"]["AvailabilityZone"] for i in instances}) == 1
    for i in instances:
        assert tags(i)["deepvm:plan"] == pid
        assert tags(i)["deepvm:catalog"] == CATALOG
    az = instances[0]["Placement"]["AvailabilityZone"]
    assert f"Launched plan {pid} in {az}" in out
    assert "spot-worker: CreateFleet 17 x g4dn.xlarge spot (spot-worker) over 3 subnet(s)" in err
    assert f"memory-node: CreateFleet 1 x c5.xlarge on-demand (memory-node) over 1 subnet(s) " \
           f"in {az}" in err
    # The spot request went out diversified over the three subnets, the on-demand one in the
    # workers' AZ only; both with a client token, each once.
    spot_call, on_demand_call = [c for c in fleet_env.front.calls
                                 if c.action == "CreateFleet" and not c.dry_run]
    spot_subnets = {v for k, v in spot_call.params.items() if k.endswith(".SubnetId")}
    assert spot_subnets == set(fleet_env.subnets)
    od_subnets = {v for k, v in on_demand_call.params.items() if k.endswith(".SubnetId")}
    assert {fleet_env.subnets[s] for s in od_subnets} == {az}
    assert spot_call.params["ClientToken"] != on_demand_call.params["ClientToken"]
    assert spot_call.params["SpotOptions.MinTargetCapacity"] == "17"
    assert spot_call.params["SpotOptions.SingleAvailabilityZone"] == "true"

    code, out, err = run(capsys, "status", "--plan", pid, "--region", "us-east-1")
    assert code == 0, err
    assert f"Plan {pid} in us-east-1: 18 instance(s), 18 live" in out
    assert f"spot-worker: 17 running ({az}); memory-node: 1 running ({az})" in out
    assert out.count("spot-worker  i-") == 17
    assert out.count("memory-node  i-") == 1

    code, out, err = run(capsys, "teardown", "--plan", pid, "--region", "us-east-1")
    assert code == 0, err
    assert f"Would terminate 18 instance(s) of plan {pid}" in out
    assert "Nothing was terminated" in out
    assert len(fleet_env.live(pid)) == 18

    code, out, err = run(capsys, "teardown", "--plan", pid, "--region", "us-east-1", "--yes")
    assert code == 0, err
    assert f"Terminated 18 instance(s) of plan {pid} in us-east-1" in out
    states = Counter(i["State"]["Name"] for i in fleet_env.instances(pid))
    assert states == {"terminated": 18}
    assert_nothing_left(fleet_env, pid)

    code, out, _ = run(capsys, "teardown", "--plan", pid, "--region", "us-east-1", "--yes")
    assert code == 0
    assert "nothing to terminate" in out


def test_launch_single_anchor(fleet_env: FleetEnv, single_anchor_export: Path,
                              capsys: pytest.CaptureFixture[str]) -> None:
    pid = plan_id(single_anchor_export)
    args = ["launch", str(single_anchor_export), "--gpu-template", GPU_TEMPLATE, "--yes"]
    for subnet in fleet_env.subnets:
        args += ["--subnet", subnet]
    code, out, err = run(capsys, *args)
    assert code == 0, err
    instances = fleet_env.live(pid)
    by_role = Counter((tags(i)["deepvm:role"], i.get("InstanceLifecycle", "on-demand"))
                      for i in instances)
    assert by_role == {("spot-worker", "spot"): 15, ("anchor", "on-demand"): 1}
    assert {i["InstanceType"] for i in instances} == {"g4dn.xlarge"}
    assert len({i["Placement"]["AvailabilityZone"] for i in instances}) == 1
    assert "16 instances" in out

    code, _, err = run(capsys, "teardown", "--plan", pid, "--region", "us-east-1", "--yes")
    assert code == 0, err
    assert_nothing_left(fleet_env, pid)


def test_launch_without_subnets_uses_the_default_subnets(
        fleet_env: FleetEnv, table4_export: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pid = plan_id(table4_export)
    code, _out, err = run(capsys, "launch", str(table4_export), "--gpu-template", GPU_TEMPLATE,
                         "--cpu-template", CPU_TEMPLATE, "--yes")
    assert code == 0, err
    instances = fleet_env.live(pid)
    assert len(instances) == 18
    assert len({i["Placement"]["AvailabilityZone"] for i in instances}) == 1
    defaults = {s["SubnetId"] for s in fleet_env.ec2.describe_subnets(
        Filters=[{"Name": "default-for-az", "Values": ["true"]}])["Subnets"]}
    assert {i["SubnetId"] for i in instances} <= defaults


def test_dry_run_launches_nothing(fleet_env: FleetEnv, table4_export: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, *launch_args(fleet_env, table4_export))
    assert code == 0, err
    assert "Would launch, in this order:" in out
    assert "1. 17 x g4dn.xlarge spot (spot-worker) from launch template gpu-workers " \
           "($Latest): all in one AZ or none" in out
    assert "2. 1 x c5.xlarge on-demand (memory-node) from launch template memory-nodes " \
           "($Latest): in the workers' AZ" in out
    assert "Hourly price: 2.8526 USD/h" in out
    assert "Nothing was launched; add --yes" in out
    assert fleet_env.front.count("CreateFleet", dry_run=True) == 2
    assert fleet_env.front.count("CreateFleet") == 0
    assert fleet_env.instances() == []


def test_a_running_plan_is_not_launched_twice(fleet_env: FleetEnv, table4_export: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    pid = plan_id(table4_export)
    assert run(capsys, *launch_args(fleet_env, table4_export, "--yes"))[0] == 0
    code, _out, err = run(capsys, *launch_args(fleet_env, table4_export, "--yes"))
    assert code == 2
    assert f"plan {pid} already has 18 live instance(s)" in err
    assert len(fleet_env.live(pid)) == 18
    assert fleet_env.front.count("CreateFleet") == 2  # the first launch's two requests only


# ----------------------------------------------------------------------------- faults


def test_second_create_fleet_fails_everything_is_terminated(
        fleet_env: FleetEnv, table4_export: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pid = plan_id(table4_export)
    fleet_env.front.fail("CreateFleet", "Unsupported", nth=2,
                         message="The requested configuration is currently not supported.")
    code, out, err = run(capsys, *launch_args(fleet_env, table4_export, "--yes"))
    assert code == 1
    assert "CreateFleet in us-east-1 failed: Unsupported" in err
    assert "rolled back: 17 instances terminated, nothing is left running" in err
    assert fleet_env.front.count("DeleteFleets") == 1
    assert Counter(i["State"]["Name"] for i in fleet_env.instances(pid)) == {"terminated": 17}
    assert_nothing_left(fleet_env, pid)
    assert out == ""


def test_second_create_fleet_keeps_failing_after_retries(
        fleet_env: FleetEnv, table4_export: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pid = plan_id(table4_export)
    fleet_env.front.fail("CreateFleet", "InternalError", nth=range(2, 10), status=500)
    code, _, err = run(capsys, *launch_args(fleet_env, table4_export, "--yes",
                                            "--max-attempts", "2"))
    assert code == 1
    assert "failed after 2 attempts: InternalError" in err
    assert_nothing_left(fleet_env, pid)


def test_spot_fleet_launches_fewer_than_asked(fleet_env: FleetEnv, table4_export: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    pid = plan_id(table4_export)
    fleet_env.front.shrink(12)  # moto really launches 12 of the 17 workers
    code, _, err = run(capsys, *launch_args(fleet_env, table4_export, "--yes"))
    assert code == 1
    assert "spot-worker: CreateFleet fleet-" in err
    assert "launched 12 of 17 g4dn.xlarge" in err
    assert "rolled back: 12 instances terminated" in err
    assert fleet_env.front.count("CreateFleet") == 1  # no on-demand part without workers
    assert_nothing_left(fleet_env, pid)


def test_spot_fleet_answer_lists_fewer_instances_than_it_launched(
        fleet_env: FleetEnv, table4_export: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pid = plan_id(table4_export)
    fleet_env.front.drop_instances(12)  # 17 launched, 12 reported, with an error
    code, _, err = run(capsys, *launch_args(fleet_env, table4_export, "--yes"))
    assert code == 1
    assert "launched 12 of 17 g4dn.xlarge (AWS: InsufficientInstanceCapacity" in err
    # The 5 instances the answer did not list are found by their tag and terminated too.
    assert "rolled back: 17 instances terminated" in err
    assert Counter(i["State"]["Name"] for i in fleet_env.instances(pid)) == {"terminated": 17}
    assert_nothing_left(fleet_env, pid)


def test_throttled_first_call_is_retried(fleet_env: FleetEnv, table4_export: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    pid = plan_id(table4_export)
    fleet_env.front.fail("CreateFleet", "RequestLimitExceeded", status=503,
                         message="Request limit exceeded.")
    code, _, err = run(capsys, *launch_args(fleet_env, table4_export, "--yes"))
    assert code == 0, err
    assert len(fleet_env.live(pid)) == 18
    spot_calls = [c for c in fleet_env.front.calls if c.action == "CreateFleet"
                  and not c.dry_run][:2]
    assert spot_calls[0].params["ClientToken"] == spot_calls[1].params["ClientToken"]
    assert fleet_env.front.count("CreateFleet") == 3


def test_throttling_beyond_botocore_retries_is_retried_again(
        fleet_env: FleetEnv, table4_export: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pid = plan_id(table4_export)
    fleet_env.front.fail("DescribeLaunchTemplates", "Throttling", nth=1)
    fleet_env.front.fail("CreateFleet", "RequestLimitExceeded", status=503)
    code, _, err = run(capsys, *launch_args(fleet_env, table4_export, "--yes",
                                            "--max-attempts", "1"))
    assert code == 0, err
    assert len(fleet_env.live(pid)) == 18


def test_missing_credentials(fleet_env: FleetEnv, table4_export: Path,
                             capsys: pytest.CaptureFixture[str]) -> None:
    set_fake_aws_env(fleet_env.monkeypatch, fleet_env.tmp_path, fleet_env.front.url,
                     credentials=False)
    code, out, err = run(capsys, *launch_args(fleet_env, table4_export, "--yes"))
    assert code == 2
    assert err.startswith("deepvm launch: error: no AWS credentials found")
    assert len(err.strip().splitlines()) == 1
    assert out == ""
    assert fleet_env.front.calls == []
    assert fleet_env.instances() == []


@pytest.mark.parametrize(("template", "yes"), [("no-such-template", True),
                                               ("lt-0123456789abcdef0", True),
                                               ("no-such-template", False)])
def test_unknown_launch_template(fleet_env: FleetEnv, table4_export: Path, template: str,
                                 yes: bool, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["launch", str(table4_export), "--gpu-template", template, "--cpu-template",
            CPU_TEMPLATE] + (["--yes"] if yes else [])
    code, _, err = run(capsys, *args)
    assert code == 2
    assert "does not exist in us-east-1" in err
    assert repr(template) in err
    assert err.strip().splitlines()[-1].startswith("deepvm launch: error: launch template")
    assert fleet_env.front.count("CreateFleet") == 0
    assert fleet_env.instances() == []


def test_unknown_subnet(fleet_env: FleetEnv, table4_export: Path,
                        capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "launch", str(table4_export), "--gpu-template", GPU_TEMPLATE,
                       "--cpu-template", CPU_TEMPLATE, "--subnet", "subnet-0123456789abcdef0",
                       "--yes")
    assert code == 2
    assert "subnet" in err.splitlines()[-1]
    assert fleet_env.instances() == []


def test_instances_that_never_run_are_rolled_back(
        fleet_env: FleetEnv, table4_export: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pid = plan_id(table4_export)
    fleet_env.front.never_running()
    code, _, err = run(capsys, *launch_args(fleet_env, table4_export, "--yes",
                                            "--wait-seconds", "0.3"))
    assert code == 1
    assert "spot-worker: only 0 of 17 instance(s) running after 0.3 s" in err
    assert_nothing_left(fleet_env, pid)


def test_an_error_that_echoes_credentials_is_redacted(
        fleet_env: FleetEnv, table4_export: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fleet_env.front.fail("DescribeLaunchTemplates", "AuthFailure", message=(
        f"key {SECRETS[0]} secret_access_key={SECRETS[1]} token {SECRETS[2]}"))
    code, _, err = run(capsys, *launch_args(fleet_env, table4_export, "--yes"))
    assert code == 2
    assert "AuthFailure" in err
    assert "[REDACTED]" in err


def test_ctrl_c_during_launch_rolls_back(fleet_env: FleetEnv, table4_export: Path) -> None:
    doc, data = read_export(table4_export)
    plan = plan_from_export(doc, data)
    ec2 = Ec2.open(AwsSettings(region="us-east-1"))
    options = RequestOptions(TemplateRef(GPU_TEMPLATE), TemplateRef(CPU_TEMPLATE),
                             tuple(fleet_env.subnets))
    pre = prepare(ec2, plan, options)

    def progress(line: str) -> None:
        if line.startswith("memory-node: CreateFleet"):
            raise KeyboardInterrupt

    with pytest.raises(LaunchFailed) as caught:
        launch(ec2, pre, poll=PollSettings(poll_interval_s=0.05), progress=progress)
    assert caught.value.interrupted
    assert caught.value.exit_code == 130
    assert len(caught.value.rollback.terminated) == 17
    assert_nothing_left(fleet_env, plan.plan_id)


@pytest.mark.usefixtures("fleet_env")
def test_status_of_an_unknown_plan(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "status", "--plan", "0123456789ab", "--region", "us-east-1")
    assert code == 0
    assert "no instances" in out
    code, _, err = run(capsys, "status", "--plan", "not-a-plan!", "--region", "us-east-1")
    assert code == 2
    assert "is not valid" in err


def test_a_rollback_that_cannot_terminate_says_so(
        fleet_env: FleetEnv, table4_export: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pid = plan_id(table4_export)
    front = fleet_env.front
    front.fail("CreateFleet", "Unsupported", nth=2)
    front.fail("DeleteFleets", "InternalError", nth=None, status=500)
    front.fail("TerminateInstances", "InternalError", nth=None, status=500)
    code, _, err = run(capsys, *launch_args(fleet_env, table4_export, "--yes",
                                            "--max-attempts", "1"))
    assert code == 3
    assert "ROLLBACK INCOMPLETE: instances possibly still running: i-" in err
    assert f"run 'deepvm teardown --plan {pid} --region us-east-1 --yes'" in err
    assert len(fleet_env.live(pid)) == 17
    front.reset()  # AWS works again: teardown cleans up
    code, _, err = run(capsys, "teardown", "--plan", pid, "--region", "us-east-1", "--yes")
    assert code == 0, err
    assert_nothing_left(fleet_env, pid)
