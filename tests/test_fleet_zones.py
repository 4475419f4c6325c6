"""The spot workers go where the plan's price is, capped at PW (issue 25, part 4): ``deepvm
export --to ec2-fleet`` and ``deepvm launch`` against moto on loopback
(``tests/fleet_fakes.py``).

The export is ``deepvm recommend --pw 3`` on the bundled us-east-1 catalog: TR 1 x
p3.16xlarge spot + 1 x c5.large, at p3.16xlarge's 2.7531 USD/h, the price of zone use1-az5
only (use1-az6 3.5861, use1-az1 4.8549, use1-az2 6.2948). moto names the us-east-1 zones
us-east-1a = use1-az6, b = use1-az1, c = use1-az2, f = use1-az5. The default cap is PW 3 minus
the memory node c5.large's on-demand 0.085 USD/h = 2.915 USD/h.
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
from deepvm_core.cloud.fleet import plan_from_export, read_export

ZONES_BY_PRICE = ["use1-az5", "use1-az6", "use1-az1", "use1-az2"]
MOTO_NAMES = {"use1-az5": "us-east-1f", "use1-az6": "us-east-1a", "use1-az1": "us-east-1b",
              "use1-az2": "us-east-1c"}
CAP = "2.915"


@pytest.fixture(scope="module")
def zoned_export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert main(["recommend", "--catalog", "aws-us-east-1-2025-h1", "--pw", "3",
                     "--format", "json"]) == 0
    doc = json.loads(buffer.getvalue())
    assert doc["chosen"]["summary"].startswith("TR: 1 x p3.16xlarge spot + 1 x c5.large")
    path = tmp_path_factory.mktemp("zoned") / "export.json"
    path.write_text(buffer.getvalue())
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``deepvm *argv``: the fake credentials never show."""
    return run_cli(capsys, *argv, secrets=SECRETS)


def test_plan_reads_the_zone_ids_and_the_cap(zoned_export: Path) -> None:
    doc, data = read_export(zoned_export)
    plan = plan_from_export(doc, data)
    assert plan.spot_zone_ids == tuple(ZONES_BY_PRICE)
    assert plan.planned_zone_id == "use1-az5"
    assert plan.spot_cap_usd_per_hour == pytest.approx(3 - 0.085)
    assert plan.pool_zones == ()
    # an export without the record (older ones): the catalog row's per-zone prices say the same
    del doc["chosen"]["spot_zone"]
    older = plan_from_export(doc)
    assert (older.spot_zone_ids, older.planned_zone_id) == (tuple(ZONES_BY_PRICE), "use1-az5")
    doc["inputs"]["pw_usd_per_hour"] = 0.05  # below the memory node: no room, no cap
    assert plan_from_export(doc).spot_cap_usd_per_hour is None


def test_export_caps_at_pw_tags_the_zone_id_and_says_how_to_resolve_it(
        zoned_export: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = tmp_path / "bundle"
    code, _, err = run(capsys, "export", str(zoned_export), "--to", "ec2-fleet", "--out",
                       str(out_dir), "--gpu-template", GPU_TEMPLATE, "--cpu-template",
                       CPU_TEMPLATE)
    assert code == 0, err
    spot = json.loads((out_dir / "spot-workers.json").read_text())
    assert spot["SpotOptions"]["MaxTotalPrice"] == CAP
    for spec in spot["TagSpecifications"]:
        assert {"Key": "deepvm:zone-id", "Value": "use1-az5"} in spec["Tags"]
    on_demand = json.loads((out_dir / "on-demand.json").read_text())
    assert "MaxTotalPrice" not in on_demand["OnDemandOptions"]
    text = (out_dir / "launch.txt").read_text()
    assert "Spot zone:     use1-az5, a zone ID" in text
    assert "--zone-ids use1-az5" in text
    assert f"MaxTotalPrice {CAP} USD/h" in text
    code, _, err = run(capsys, "export", str(zoned_export), "--to", "ec2-fleet", "--out",
                       str(tmp_path / "nocap"), "--gpu-template", GPU_TEMPLATE,
                       "--cpu-template", CPU_TEMPLATE, "--no-spot-price-cap",
                       "--spot-zones", "by-price")
    assert code == 0, err
    spot = json.loads((tmp_path / "nocap" / "spot-workers.json").read_text())
    assert "MaxTotalPrice" not in spot["SpotOptions"]
    text = (tmp_path / "nocap" / "launch.txt").read_text()
    assert "--no-spot-price-cap" in text
    assert "--spot-zones by-price" in text
    assert "orders the zones by price (use1-az5, use1-az6, use1-az1, use1-az2" in text


def _spot_fleets(env: FleetEnv) -> list[dict[str, Any]]:
    return [c.params for c in env.front.calls
            if c.action == "CreateFleet" and not c.dry_run
            and c.params.get("SpotOptions.MinTargetCapacity")]


def _default_subnets(env: FleetEnv) -> dict[str, str]:
    answer = env.ec2.describe_subnets(Filters=[{"Name": "default-for-az", "Values": ["true"]}])
    return {s["AvailabilityZone"]: s["SubnetId"] for s in answer["Subnets"]}


def test_launch_resolves_the_zone_id_and_pins_it(
        fleet_env: FleetEnv, zoned_export: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["launch", str(zoned_export), "--gpu-template", GPU_TEMPLATE, "--cpu-template",
            CPU_TEMPLATE]
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert "zone ID use1-az5 is us-east-1f in this account" in out
    assert f"spot capped at {CAP} USD/h" in out
    asked = [c.params for c in fleet_env.front.calls if c.action == "DescribeAvailabilityZones"]
    assert asked
    assert asked[0]["ZoneId.1"] == "use1-az5"
    code, out, err = run(capsys, *args, "--yes", "--wait-seconds", "60")
    assert code == 0, err
    (spot,) = _spot_fleets(fleet_env)
    prefix = "LaunchTemplateConfigs.1.Overrides"
    assert spot[f"{prefix}.1.SubnetId"] == _default_subnets(fleet_env)["us-east-1f"]
    assert f"{prefix}.2.SubnetId" not in spot
    assert spot["SpotOptions.MaxTotalPrice"] == CAP
    live = fleet_env.live()
    assert len(live) == 2
    assert {i["Placement"]["AvailabilityZone"] for i in live} == {"us-east-1f"}


def test_launch_by_price_orders_every_zone_with_priorities(
        fleet_env: FleetEnv, zoned_export: Path, capsys: pytest.CaptureFixture[str]) -> None:
    by_zone = {z: s for s, z in fleet_env.subnets.items()}  # us-east-1a, b, c
    code, _, err = run(capsys, "launch", str(zoned_export), "--gpu-template", GPU_TEMPLATE,
                       "--cpu-template", CPU_TEMPLATE, "--spot-zones", "by-price",
                       *[a for s in fleet_env.subnets for a in ("--subnet", s)],
                       "--yes", "--wait-seconds", "60")
    assert code == 0, err
    (spot,) = _spot_fleets(fleet_env)
    prefix = "LaunchTemplateConfigs.1.Overrides"
    assert spot["SpotOptions.AllocationStrategy"] == "capacity-optimized-prioritized"
    # no subnet in us-east-1f (use1-az5): the others by price, priorities by the price rank
    assert [(spot[f"{prefix}.{i}.SubnetId"], spot[f"{prefix}.{i}.Priority"]) for i in (1, 2, 3)
            ] == [(by_zone["us-east-1a"], "2.0"), (by_zone["us-east-1b"], "3.0"),
                  (by_zone["us-east-1c"], "4.0")]
    assert {i["Placement"]["AvailabilityZone"] for i in fleet_env.live()} == {"us-east-1a"}


def test_launch_planned_zone_without_a_subnet_there_is_refused(
        fleet_env: FleetEnv, zoned_export: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "launch", str(zoned_export), "--gpu-template", GPU_TEMPLATE,
                       "--cpu-template", CPU_TEMPLATE,
                       *[a for s in fleet_env.subnets for a in ("--subnet", s)])
    assert code == 2
    error = err.strip().splitlines()[-1]
    assert error.startswith("deepvm launch: error: no subnet is in a zone")
    assert "(us-east-1f)" in error
    assert fleet_env.live() == []
    # --spot-zones any: today's behaviour, every subnet given, no zone looked up
    fleet_env.front.reset()
    code, _, err = run(capsys, "launch", str(zoned_export), "--gpu-template", GPU_TEMPLATE,
                       "--cpu-template", CPU_TEMPLATE, "--spot-zones", "any",
                       *[a for s in fleet_env.subnets for a in ("--subnet", s)])
    assert code == 0, err
    assert not any(c.action == "DescribeAvailabilityZones" for c in fleet_env.front.calls)


@pytest.mark.usefixtures("fleet_env")
def test_a_zone_id_the_region_lacks_is_refused(
        zoned_export: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads(zoned_export.read_text())
    doc["chosen"]["spot_zone"]["zones_by_price"] = ["use1-az9"]
    doc["chosen"]["spot_zone"]["launch_zone_id"] = "use1-az9"
    path = tmp_path / "export.json"
    path.write_text(json.dumps(doc, indent=2) + "\n")
    code, _, err = run(capsys, "launch", str(path), "--gpu-template", GPU_TEMPLATE,
                       "--cpu-template", CPU_TEMPLATE)
    assert code == 2
    assert "zone ID(s) use1-az9 of the plan are not in us-east-1" in err
    doc["chosen"]["spot_zone"]["launch_zone_id"] = "nowhere"
    path.write_text(json.dumps(doc, indent=2) + "\n")
    code, _, err = run(capsys, "launch", str(path), "--gpu-template", GPU_TEMPLATE,
                       "--cpu-template", CPU_TEMPLATE)
    assert code == 2
    assert "chosen.spot_zone.launch_zone_id" in err


@pytest.mark.parametrize(("zone_id", "valid"), [
    ("use1-az5", True), ("apne1-az4", True), ("usw2-lax1-az1", True),  # a Local Zone
    ("nowhere", False), ("use1-az", False), ("USE1-AZ1", False),
    ("-az1", False), ("use1-lax-az1", False),
])
def test_the_plan_and_the_pools_read_zone_ids_alike(zoned_export: Path, zone_id: str,
                                                     valid: bool) -> None:
    """A zone ID is the same thing to a spot pool (market) and to a launch plan (fleet): what
    one takes the other takes (one pattern, deepvm_core.market.pools)."""
    from deepvm_core.cloud.fleet.errors import FleetInputError
    from deepvm_core.market.pools import user_pool_name
    from deepvm_core.market.trace import TraceError

    doc = json.loads(zoned_export.read_text())
    doc["chosen"]["spot_zone"]["zones_by_price"] = [zone_id]
    doc["chosen"]["spot_zone"]["launch_zone_id"] = zone_id
    if valid:
        assert plan_from_export(doc).planned_zone_id == zone_id
        assert user_pool_name(f"g5.xlarge@{zone_id}") == ("g5.xlarge", zone_id)
    else:
        with pytest.raises(FleetInputError, match="zone"):
            plan_from_export(doc)
        with pytest.raises(TraceError, match="zone"):
            user_pool_name(f"g5.xlarge@{zone_id}")
