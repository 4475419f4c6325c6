"""``deepvm export --to ec2-fleet``: the plan of an export, both CreateFleet bodies (checked by
botocore's model and accepted unchanged by moto), launch.txt, the folder and the zip."""

from __future__ import annotations

import contextlib
import copy
import hashlib
import io
import json
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from fleet_fakes import CPU_TEMPLATE, GPU_TEMPLATE, FleetEnv

from deepvm_core.cli import main
from deepvm_core.cloud.fleet import (
    FleetInputError,
    RequestOptions,
    TemplateRef,
    build_bundle,
    parse_subnets,
    parse_template,
    plan_from_export,
    validate_request,
)
from deepvm_core.cloud.fleet.target import export_bytes

SUBNETS = ("subnet-0aaaaaaaaaaaaaaaa", "subnet-0bbbbbbbbbbbbbbbb", "subnet-0cccccccccccccccc")


def cli_json(*argv: str) -> str:
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert main(list(argv)) == 0
    return buffer.getvalue()


@pytest.fixture(scope="module")
def table4_text() -> str:
    """``deepvm recommend`` at the paper's Table IV scenario, as JSON."""
    return cli_json("recommend", "--catalog", "aws-us-east-1-2023-10", "--pw", "3",
                    "--format", "json")


@pytest.fixture
def table4_export(tmp_path: Path, table4_text: str) -> Path:
    path = tmp_path / "table4.json"
    path.write_text(table4_text)
    return path


def with_chosen(text: str, chosen: Any) -> dict[str, Any]:
    doc = json.loads(text)
    doc["chosen"] = chosen
    return doc


def export(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(["export", "--to", "ec2-fleet", *argv])
    except SystemExit as exc:  # argparse's own errors
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def read(folder: Path, name: str) -> Any:
    return json.loads((folder / name).read_text())


def tag_dict(spec: dict[str, Any]) -> dict[str, str]:
    return {t["Key"]: t["Value"] for t in spec["Tags"]}


# ----------------------------------------------------------------------------- the plan


def test_plan_of_table_iv(table4_text: str) -> None:
    data = table4_text.encode()
    plan = plan_from_export(json.loads(table4_text), data)
    assert plan.plan_id == hashlib.sha256(data).hexdigest()[:12]
    assert plan.chosen_from == "chosen"
    assert plan.spot is not None
    assert plan.on_demand is not None
    assert (plan.spot.role, plan.spot.instance_type, plan.spot.count) == (
        "spot-worker", "g4dn.xlarge", 17)
    assert (plan.on_demand.role, plan.on_demand.instance_type, plan.on_demand.count) == (
        "memory-node", "c5.xlarge", 1)
    assert plan.hourly_price_usd == pytest.approx(2.8526)
    assert plan.catalog_region == "us-east-1"


def test_chosen_falls_back_to_the_first_recommendation(table4_text: str) -> None:
    doc = json.loads(table4_text)
    doc["deepvm"][0] = copy.deepcopy(doc["best_per_architecture"]["single_anchor"])
    del doc["chosen"]
    plan = plan_from_export(doc)
    assert plan.chosen_from == "deepvm[0]"
    assert plan.on_demand is not None
    assert plan.on_demand.role == "anchor"
    doc["chosen"] = None
    assert plan_from_export(doc).chosen_from == "deepvm[0]"
    doc["deepvm"] = []
    with pytest.raises(FleetInputError, match="no configuration to launch"):
        plan_from_export(doc)


def test_plan_id_is_the_same_from_the_dict_and_from_the_file(table4_text: str) -> None:
    doc = json.loads(table4_text)
    assert export_bytes(doc) == table4_text.encode()
    assert plan_from_export(doc).plan_id == plan_from_export(doc, table4_text.encode()).plan_id


def test_a_simulated_catalog_cannot_be_launched() -> None:
    doc = json.loads(cli_json("recommend", "--catalog", "paper-simulated", "--pw", "3",
                              "--no-quotas", "--format", "json"))
    with pytest.raises(FleetInputError, match="provider 'simulated'"):
        plan_from_export(doc)


@pytest.mark.parametrize(("field", "value", "message"), [
    ("spot", -1, "is not a count"),
    ("spot", 1.5, "is not a count"),
    ("name", "g4dn xlarge; rm", "is not an EC2 instance type"),
])
def test_a_bad_chosen_configuration_is_refused(table4_text: str, field: str, value: Any,
                                               message: str) -> None:
    doc = json.loads(table4_text)
    doc["chosen"]["gpu"][field] = value
    with pytest.raises(FleetInputError, match=message):
        plan_from_export(doc)


# ----------------------------------------------------------------------------- inputs


def test_parse_template_and_subnets() -> None:
    assert parse_template("gpu-workers") == TemplateRef("gpu-workers", "$Latest")
    assert parse_template("lt-0123456789abcdef0:3").specification() == {
        "LaunchTemplateId": "lt-0123456789abcdef0", "Version": "3"}
    assert parse_template("x-y:$Default").version == "$Default"
    assert parse_template("name:latest").version == "$Latest"
    for bad in ("ab", "lt-xyz", "name:v2", "bad name"):
        with pytest.raises(FleetInputError):
            parse_template(bad)
    assert parse_subnets([f"{SUBNETS[0]},{SUBNETS[1]}", SUBNETS[0], SUBNETS[2]]) == SUBNETS
    with pytest.raises(FleetInputError, match="is not a subnet id"):
        parse_subnets(["subnet-xyz"])


# ----------------------------------------------------------------------------- export


def test_export_writes_both_bodies_and_launch_txt(
        tmp_path: Path, table4_export: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = tmp_path / "fleet"
    args = [str(table4_export), "--out", str(out_dir), "--gpu-template", GPU_TEMPLATE,
            "--cpu-template", "lt-0123456789abcdef0:2"]
    for subnet in SUBNETS:
        args += ["--subnet", subnet]
    code, out, err = export(capsys, *args)
    assert code == 0, err
    plan_id = hashlib.sha256(table4_export.read_bytes()).hexdigest()[:12]
    assert f"Plan {plan_id}: TR: 17 x g4dn.xlarge spot + 1 x c5.xlarge" in out
    assert sorted(p.name for p in out_dir.iterdir()) == [
        "launch.txt", "on-demand.json", "spot-workers.json"]

    spot = read(out_dir, "spot-workers.json")
    validate_request(spot)
    assert spot["Type"] == "instant"
    assert spot["TargetCapacitySpecification"] == {
        "TotalTargetCapacity": 17, "SpotTargetCapacity": 17, "OnDemandTargetCapacity": 0,
        "DefaultTargetCapacityType": "spot"}
    # Capped at PW by default since issue 25: PW 3 minus the memory node's 0.17 USD/h.
    assert spot["SpotOptions"] == {
        "AllocationStrategy": "price-capacity-optimized", "SingleInstanceType": True,
        "SingleAvailabilityZone": True, "MinTargetCapacity": 17, "MaxTotalPrice": "2.83"}
    (config,) = spot["LaunchTemplateConfigs"]
    assert config["LaunchTemplateSpecification"] == {"LaunchTemplateName": GPU_TEMPLATE,
                                                     "Version": "$Latest"}
    assert config["Overrides"] == [{"InstanceType": "g4dn.xlarge", "SubnetId": s}
                                   for s in SUBNETS]
    assert [s["ResourceType"] for s in spot["TagSpecifications"]] == ["instance", "fleet"]
    for spec in spot["TagSpecifications"]:
        assert tag_dict(spec) == {"deepvm:plan": plan_id, "deepvm:role": "spot-worker",
                                  "deepvm:catalog": "aws-us-east-1-2023-10"}
    assert "MaxPrice" not in json.dumps(spot)

    on_demand = read(out_dir, "on-demand.json")
    validate_request(on_demand)
    assert on_demand["TargetCapacitySpecification"]["OnDemandTargetCapacity"] == 1
    assert on_demand["TargetCapacitySpecification"]["DefaultTargetCapacityType"] == "on-demand"
    assert "SpotOptions" not in on_demand
    assert on_demand["OnDemandOptions"]["MinTargetCapacity"] == 1
    assert "MaxTotalPrice" not in on_demand["OnDemandOptions"]
    assert on_demand["LaunchTemplateConfigs"][0]["LaunchTemplateSpecification"] == {
        "LaunchTemplateId": "lt-0123456789abcdef0", "Version": "2"}
    assert {o["InstanceType"] for o in on_demand["LaunchTemplateConfigs"][0]["Overrides"]} == {
        "c5.xlarge"}
    assert tag_dict(on_demand["TagSpecifications"][0])["deepvm:role"] == "memory-node"

    text = (out_dir / "launch.txt").read_text()
    assert "aws ec2 create-fleet --region us-east-1 --cli-input-json file://spot-workers.json" \
        in text
    assert "--cli-input-json file://on-demand-in-az.json" in text
    assert "jq --argjson keep" in text
    assert (f"deepvm launch ../table4.json --gpu-template {GPU_TEMPLATE} --cpu-template "
            "lt-0123456789abcdef0:2 --subnet") in text
    assert f"deepvm teardown --plan {plan_id} --region us-east-1 --yes" in text
    assert "terminate-instances" in text
    assert not [p for p in out_dir.iterdir() if p.name.startswith(".")]  # no temp files left


def test_price_caps_only_when_asked(tmp_path: Path, table4_export: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = tmp_path / "capped"
    code, _, err = export(capsys, str(table4_export), "--out", str(out_dir), "--gpu-template",
                          GPU_TEMPLATE, "--cpu-template", CPU_TEMPLATE,
                          "--spot-max-total-price", "2.5", "--on-demand-max-total-price", "0.2")
    assert code == 0, err
    assert read(out_dir, "spot-workers.json")["SpotOptions"]["MaxTotalPrice"] == "2.5"
    assert read(out_dir, "on-demand.json")["OnDemandOptions"]["MaxTotalPrice"] == "0.2"
    spot = read(out_dir, "spot-workers.json")
    assert spot["LaunchTemplateConfigs"][0]["Overrides"] == [{"InstanceType": "g4dn.xlarge"}]
    assert "No subnets were given" in (out_dir / "launch.txt").read_text()


def test_single_anchor_needs_no_cpu_template(tmp_path: Path, table4_text: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads(table4_text)
    path = tmp_path / "sa.json"
    path.write_text(json.dumps(with_chosen(table4_text,
                                           doc["best_per_architecture"]["single_anchor"]),
                               indent=2) + "\n")
    out_dir = tmp_path / "sa"
    code, _, err = export(capsys, str(path), "--out", str(out_dir), "--gpu-template",
                          GPU_TEMPLATE, "--subnet", SUBNETS[0])
    assert code == 0, err
    assert read(out_dir, "spot-workers.json")["TargetCapacitySpecification"][
        "SpotTargetCapacity"] == 15
    on_demand = read(out_dir, "on-demand.json")
    assert on_demand["LaunchTemplateConfigs"][0]["LaunchTemplateSpecification"][
        "LaunchTemplateName"] == GPU_TEMPLATE
    assert on_demand["LaunchTemplateConfigs"][0]["Overrides"] == [
        {"InstanceType": "g4dn.xlarge", "SubnetId": SUBNETS[0]}]
    assert tag_dict(on_demand["TagSpecifications"][0])["deepvm:role"] == "anchor"


def test_a_plan_without_spot_workers_writes_no_spot_body(
        tmp_path: Path, table4_text: str, table4_export: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = tmp_path / "out"
    assert export(capsys, str(table4_export), "--out", str(out_dir), "--gpu-template",
                  GPU_TEMPLATE, "--cpu-template", CPU_TEMPLATE)[0] == 0
    anchor_only = json.loads(table4_text)["best_per_architecture"]["single_anchor"]
    anchor_only["gpu"]["spot"] = 0
    path = tmp_path / "anchor-only.json"
    path.write_text(json.dumps(with_chosen(table4_text, anchor_only)))
    code, _, err = export(capsys, str(path), "--out", str(out_dir), "--gpu-template",
                          GPU_TEMPLATE)
    assert code == 0, err
    assert sorted(p.name for p in out_dir.iterdir()) == ["launch.txt", "on-demand.json"]


@pytest.mark.parametrize(("extra", "message"), [
    ([], "give their launch template with --cpu-template"),
    (["--cpu-template", "x"], "is not a launch template name"),
    (["--cpu-template", CPU_TEMPLATE, "--subnet", "subnet-nope"], "is not a subnet id"),
    (["--cpu-template", CPU_TEMPLATE, "--spot-max-total-price", "-1"], "must be a positive"),
])
def test_export_user_errors_write_nothing(tmp_path: Path, table4_export: Path,
                                          capsys: pytest.CaptureFixture[str],
                                          extra: list[str], message: str) -> None:
    out_dir = tmp_path / "never"
    code, out, err = export(capsys, str(table4_export), "--out", str(out_dir),
                            "--gpu-template", GPU_TEMPLATE, *extra)
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1
    assert out == ""
    assert not out_dir.exists()


@pytest.mark.parametrize("content", [None, "not json", "[1, 2]", "{}"])
def test_export_of_a_bad_file(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                              content: str | None) -> None:
    path = tmp_path / "export.json"
    if content is not None:
        path.write_text(content)
    code, _, err = export(capsys, str(path), "--out", str(tmp_path / "o"), "--gpu-template",
                          GPU_TEMPLATE)
    assert code == 2
    assert err.startswith("deepvm export: error: ")
    assert len(err.strip().splitlines()) == 1


def test_export_into_a_file_fails_cleanly(tmp_path: Path, table4_export: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, _, err = export(capsys, str(table4_export), "--out", str(blocker), "--gpu-template",
                          GPU_TEMPLATE, "--cpu-template", CPU_TEMPLATE)
    assert code == 2
    assert "cannot create" in err
    assert blocker.read_text() == "x"


def test_validation_catches_a_bad_body() -> None:
    with pytest.raises(FleetInputError, match="TotalTargetCapacity"):
        validate_request({"Type": "instant", "LaunchTemplateConfigs": [],
                          "TargetCapacitySpecification": {"TotalTargetCapacity": "17"}})
    with pytest.raises(FleetInputError, match="Unknown parameter"):
        validate_request({"LaunchTemplateConfigs": [], "TargetCapacitySpecification": {
            "TotalTargetCapacity": 1}, "MaxPrice": "1"})


# ----------------------------------------------------------------------------- the bundle


def test_bundle_zip_holds_the_folder_and_the_export(table4_text: str) -> None:
    doc = json.loads(table4_text)
    bundle = build_bundle(doc, RequestOptions(TemplateRef(GPU_TEMPLATE),
                                              TemplateRef(CPU_TEMPLATE), SUBNETS))
    folder = f"deepvm-fleet-{bundle.plan.plan_id}"
    with zipfile.ZipFile(io.BytesIO(bundle.zip_bytes())) as archive:
        names = sorted(archive.namelist())
        assert names == [f"{folder}/{n}" for n in ("export.json", "launch.txt",
                                                   "on-demand.json", "spot-workers.json")]
        data = archive.read(f"{folder}/export.json")
        assert plan_from_export(json.loads(data), data).plan_id == bundle.plan.plan_id
        assert json.loads(archive.read(f"{folder}/spot-workers.json")) == bundle.requests.spot
    assert "deepvm launch export.json" in bundle.files["launch.txt"].decode()


# ----------------------------------------------------------------------------- moto


def test_moto_accepts_the_exported_bodies_unchanged(
        fleet_env: FleetEnv, tmp_path: Path, table4_export: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = tmp_path / "for-moto"
    args = [str(table4_export), "--out", str(out_dir), "--gpu-template", GPU_TEMPLATE,
            "--cpu-template", CPU_TEMPLATE]
    for subnet in fleet_env.subnets:
        args += ["--subnet", subnet]
    assert export(capsys, *args)[0] == 0
    ec2 = fleet_env.ec2
    for name, count in (("spot-workers.json", 17), ("on-demand.json", 1)):
        body = read(out_dir, name)
        answer = ec2.create_fleet(**body)
        assert sum(len(i["InstanceIds"]) for i in answer["Instances"]) == count
    instances = fleet_env.live()
    plan_id = hashlib.sha256(table4_export.read_bytes()).hexdigest()[:12]
    assert Counter((i["InstanceType"], i.get("InstanceLifecycle", "on-demand"))
                   for i in instances) == {("g4dn.xlarge", "spot"): 17,
                                           ("c5.xlarge", "on-demand"): 1}
    assert all({"Key": "deepvm:plan", "Value": plan_id} in i["Tags"] for i in instances)
