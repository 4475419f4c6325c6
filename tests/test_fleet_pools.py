"""A plan evaluated on spot traces launches in its pools' zones, in failover order
(``deepvm export --to ec2-fleet`` and ``deepvm launch`` against moto on loopback).

The plan is ``deepvm plan --pool`` on two seeded synthetic traces of g5.xlarge (the cheapest
type of the Table IV job at PW 3 on the 2023 catalog): us-east-1c always up, us-east-1a up
three ticks in four. The always-up zone has the lower single-pool makespan, so the planner's
failover order is us-east-1c, then us-east-1a (``traces.md``, "Planning"), whatever the
alphabet says.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run_cli
from fleet_fakes import CPU_TEMPLATE, GPU_TEMPLATE, SECRETS, FleetEnv

from deepvm_core.cli import main
from deepvm_core.cloud.fleet import (
    FleetInputError,
    RequestOptions,
    TemplateRef,
    build_requests,
    plan_from_export,
    read_export,
)

CATALOG = "aws-us-east-1-2023-10"
POOLS = ["g5.xlarge@us-east-1c", "g5.xlarge@us-east-1a"]


def _trace(path: Path, data: list[int]) -> str:
    path.write_text(json.dumps({"metadata": {"gap_seconds": 600}, "data": data}))
    return str(path)


@pytest.fixture(scope="module")
def pool_plan(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``deepvm plan --format json`` of the Table IV job with two g5.xlarge pools, replayed with
    failover (``--model replay``: since issue 25 the default model is the renewal model, which
    forecasts each pool alone and names only the best one)."""
    root = tmp_path_factory.mktemp("pool-plan")
    up = _trace(root / "up.json", [1] * 300)
    flaky = _trace(root / "flaky.json", [1, 1, 1, 0] * 75)
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = main(["plan", "--catalog", CATALOG, "--pw", "3", "--epochs", "3000",
                     "--epoch-seconds", "61.16", "--ref-type", "g4dn.xlarge", "--trials", "0",
                     "--pool", f"g5.xlarge@us-east-1a={flaky}",
                     "--pool", f"g5.xlarge@us-east-1c={up}", "--model", "replay",
                     "--format", "json"])
    assert code == 0
    path = root / "plan.json"
    path.write_text(buffer.getvalue())
    chosen = json.loads(buffer.getvalue())["chosen"]
    assert chosen["gpu"]["name"] == "g5.xlarge"
    assert chosen["gpu"]["spot"] == 1
    assert chosen["estimate"]["pools"] == POOLS
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``deepvm *argv``: the fake credentials never show."""
    return run_cli(capsys, *argv, secrets=SECRETS)


def test_plan_reads_the_pool_zones_in_failover_order(pool_plan: Path) -> None:
    doc, data = read_export(pool_plan)
    assert plan_from_export(doc, data).pool_zones == ("us-east-1c", "us-east-1a")
    doc["chosen"]["estimate"]["pools"] = []
    assert plan_from_export(doc).pool_zones == ()


@pytest.mark.parametrize(("pools", "message"), [
    (["g4dn.xlarge@us-east-1a"], "not a pool of the configuration's GPU type g5.xlarge"),
    (["g5.xlarge"], "is not TYPE@ZONE"),
    (["g5.xlarge@nowhere"], "is not TYPE@ZONE"),
    ("g5.xlarge@us-east-1a", "is not a list"),
])
def test_bad_pools_are_refused_naming_the_field(pool_plan: Path, pools: Any,
                                                message: str) -> None:
    doc, _ = read_export(pool_plan)
    doc["chosen"]["estimate"]["pools"] = pools
    with pytest.raises(FleetInputError, match=message) as info:
        plan_from_export(doc)
    assert "chosen.estimate.pools" in str(info.value)


def test_without_subnets_one_override_per_pool_zone_with_priorities(pool_plan: Path) -> None:
    doc, data = read_export(pool_plan)
    requests = build_requests(plan_from_export(doc, data), RequestOptions(
        TemplateRef(GPU_TEMPLATE), TemplateRef(CPU_TEMPLATE)))
    assert requests.spot is not None
    assert requests.on_demand is not None
    spot = requests.spot["SpotOptions"]
    assert spot["AllocationStrategy"] == "capacity-optimized-prioritized"
    assert spot["SingleAvailabilityZone"] is True
    assert spot["MinTargetCapacity"] == 1
    assert requests.spot["LaunchTemplateConfigs"][0]["Overrides"] == [
        {"InstanceType": "g5.xlarge", "AvailabilityZone": "us-east-1c", "Priority": 1.0},
        {"InstanceType": "g5.xlarge", "AvailabilityZone": "us-east-1a", "Priority": 2.0}]
    # the memory node goes where the worker lands (launch.txt's jq step adds the AZ)
    assert requests.on_demand["LaunchTemplateConfigs"][0]["Overrides"] == [
        {"InstanceType": "t3.xlarge"}]


def test_export_with_zoned_subnets_keeps_the_pools_zones_in_order(
        pool_plan: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b, c = "subnet-0000000a", "subnet-0000000b", "subnet-0000000c"
    out_dir = tmp_path / "bundle"
    code, _out, err = run(capsys, "export", str(pool_plan), "--to", "ec2-fleet", "--out",
                         str(out_dir), "--gpu-template", GPU_TEMPLATE, "--cpu-template",
                         CPU_TEMPLATE, "--subnet", f"{a}@us-east-1a,{b}@us-east-1b",
                         "--subnet", f"{c}@us-east-1c")
    assert code == 0, err
    spot = json.loads((out_dir / "spot-workers.json").read_text())
    assert spot["LaunchTemplateConfigs"][0]["Overrides"] == [
        {"InstanceType": "g5.xlarge", "SubnetId": c, "Priority": 1.0},
        {"InstanceType": "g5.xlarge", "SubnetId": a, "Priority": 2.0}]
    on_demand = json.loads((out_dir / "on-demand.json").read_text())
    assert [o["SubnetId"] for o in on_demand["LaunchTemplateConfigs"][0]["Overrides"]] == [c, a]
    text = (out_dir / "launch.txt").read_text()
    assert "capacity-optimized-prioritized" in text
    assert "us-east-1c, us-east-1a" in text
    assert f"--subnet {a}@us-east-1a" in text


def test_export_with_subnets_of_unknown_zone_is_refused(
        pool_plan: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = tmp_path / "bundle"
    code, _, err = run(capsys, "export", str(pool_plan), "--to", "ec2-fleet", "--out",
                       str(out_dir), "--gpu-template", GPU_TEMPLATE, "--cpu-template",
                       CPU_TEMPLATE, "--subnet", "subnet-0000000a")
    assert code == 2
    assert "SUBNET@ZONE" in err
    assert "subnet-0000000a" in err
    assert len(err.strip().splitlines()) == 1
    assert not out_dir.exists()
    code, _, err = run(capsys, "export", str(pool_plan), "--to", "ec2-fleet", "--out",
                       str(out_dir), "--gpu-template", GPU_TEMPLATE, "--cpu-template",
                       CPU_TEMPLATE, "--subnet", "subnet-0000000b@us-east-1b")
    assert code == 2
    assert "no subnet is in a zone of the plan's spot pools" in err
    code, _, err = run(capsys, "export", str(pool_plan), "--to", "ec2-fleet", "--out",
                       str(out_dir), "--gpu-template", GPU_TEMPLATE, "--cpu-template",
                       CPU_TEMPLATE, "--subnet", "subnet-0000000b@mars")
    assert code == 2
    assert "'mars' is not an availability zone" in err


def _create_fleets(env: FleetEnv) -> list[dict[str, Any]]:
    return [c.params for c in env.front.calls if c.action == "CreateFleet" and not c.dry_run]


def test_launch_uses_the_pools_subnets_in_failover_order(
        fleet_env: FleetEnv, pool_plan: Path, capsys: pytest.CaptureFixture[str]) -> None:
    by_zone = {z: s for s, z in fleet_env.subnets.items()}
    args = ["launch", str(pool_plan), "--gpu-template", GPU_TEMPLATE, "--cpu-template",
            CPU_TEMPLATE, *[a for s in fleet_env.subnets for a in ("--subnet", s)]]
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert "failover order: us-east-1c, us-east-1a" in out
    code, out, err = run(capsys, *args, "--yes", "--wait-seconds", "60")
    assert code == 0, err
    spot, on_demand = _create_fleets(fleet_env)
    prefix = "LaunchTemplateConfigs.1.Overrides"
    assert spot["SpotOptions.AllocationStrategy"] == "capacity-optimized-prioritized"
    assert spot["SpotOptions.SingleAvailabilityZone"] == "true"
    # us-east-1b has no pool: its subnet is left out
    assert [(spot[f"{prefix}.{i}.SubnetId"], spot[f"{prefix}.{i}.Priority"]) for i in (1, 2)] \
        == [(by_zone["us-east-1c"], "1.0"), (by_zone["us-east-1a"], "2.0")]
    assert f"{prefix}.3.SubnetId" not in spot
    # moto fills the first override: the worker is in the first pool, the memory node with it
    live = fleet_env.live()
    assert {i["Placement"]["AvailabilityZone"] for i in live} == {"us-east-1c"}
    assert on_demand[f"{prefix}.1.SubnetId"] == by_zone["us-east-1c"]
    assert f"{prefix}.2.SubnetId" not in on_demand


def test_launch_refuses_a_subnet_given_in_the_wrong_zone(
        fleet_env: FleetEnv, pool_plan: Path, capsys: pytest.CaptureFixture[str]) -> None:
    subnet = next(s for s, z in fleet_env.subnets.items() if z == "us-east-1a")
    code, _, err = run(capsys, "launch", str(pool_plan), "--gpu-template", GPU_TEMPLATE,
                       "--cpu-template", CPU_TEMPLATE, "--subnet", f"{subnet}@us-east-1c")
    assert code == 2
    assert "is in us-east-1a, not us-east-1c" in err
    assert fleet_env.live() == []
