"""``deepvm catalog import --format skypilot`` (issue 19): the parser, the per-region build
and the CLI against local files, a loopback HTTP server, a server that is down and one that
never answers. The files are written here, in SkyPilot's format; no test leaves loopback."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from loopback import closed_port_url, serve_folder

from deepvm_core.catalog.store import load_catalog
from deepvm_core.cli import main
from deepvm_core.cloud.skypilot import SkyPilotError, build_catalog, parse_vms_csv
from tests.phrases import assert_says

HEADER = ("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,"
          "SpotPrice,Region,AvailabilityZone\n")
ROWS = [
    # g4dn.xlarge: in the base catalog (measured eFLOPS 377 and scaling), two zones
    "g4dn.xlarge,T4,1.0,4.0,16.0,\"{'Gpus': []}\",0.526,0.2000,us-east-1,use1-az1",
    "g4dn.xlarge,T4,1.0,4.0,16.0,\"{'Gpus': []}\",0.526,0.3000,us-east-1,use1-az2",
    # p4de.24xlarge: one zone twice (A100 with a spot price, A100-80GB without)
    "p4de.24xlarge,A100-80GB,8.0,96.0,1152.0,,40.96,,us-east-1,use1-az4",
    "p4de.24xlarge,A100-80GB,8.0,96.0,1152.0,,40.96,6.5,us-east-1,use1-az4",
    # left out: inference-only; no on-demand price; no spot price anywhere
    "inf2.xlarge,Inferentia2,1.0,4.0,16.0,,0.76,0.3,us-east-1,use1-az1",
    "p5e.48xlarge,H200,8.0,192.0,2048.0,,,30.0,us-east-1,use1-az1",
    "g6.xlarge,L4,1.0,4.0,16.0,,0.8048,,us-east-1,use1-az1",
    # Trainium2 without an accelerator name: kept, needs eFLOPS
    "trn2.48xlarge,,16.0,192.0,2048.0,,44.7,12.0,us-east-1,use1-az1",
    # a memory node
    "c5.xlarge,,,4.0,8.0,,0.17,0.07,us-east-1,use1-az1",
    "c5.xlarge,,,4.0,8.0,,0.17,0.06,us-east-1,use1-az2",
    # another region
    "g5.xlarge,A10G,1.0,4.0,16.0,,1.006,0.40,us-west-2,usw2-az1",
]
TEXT = HEADER + "\n".join(ROWS) + "\n"


def test_build_one_region_with_every_quirk():
    base = load_catalog("aws-us-east-1-2023-10")
    catalog, notes = build_catalog(parse_vms_csv(TEXT), "us-east-1", date="2025-01",
                                   source="test file", base=base, buckets={"g4dn.xlarge": 3})
    assert catalog.name == "aws-us-east-1-2025-01"
    gpus = {g.name: g for g in catalog.gpu_types}
    assert sorted(gpus) == ["g4dn.xlarge", "p4de.24xlarge", "trn2.48xlarge"]
    g4 = gpus["g4dn.xlarge"]
    # the cheapest zone, the base catalog's measured eFLOPS, scaling and network
    assert g4.spot_usd_per_hour == 0.2
    assert g4.spot_by_zone_usd_per_hour == {
        "use1-az1": 0.2, "use1-az2": 0.3}
    assert (g4.eflops, g4.eflops_source, g4.scaling_source) == (377.0, "measured", "measured")
    assert g4.scaling == base.instance("g4dn.xlarge").scaling  # type: ignore[union-attr]
    assert g4.interruption_bucket == 3
    assert g4.network_gbps == 25.0
    p4de = gpus["p4de.24xlarge"]
    assert p4de.spot_usd_per_hour == 6.5
    assert p4de.on_demand_usd_per_hour == 40.96
    assert p4de.eflops_source.startswith("estimated")
    assert "8 x A100-80GB" in p4de.eflops_source
    assert p4de.scaling_source.startswith("prior")
    assert p4de.scaling is not None
    assert p4de.network_gbps == 400.0  # data/instance-network.csv: 4x 100 Gigabit
    assert p4de.interruption_bucket is None
    assert gpus["trn2.48xlarge"].eflops is None
    assert [c.name for c in catalog.cpu_types] == ["c5.xlarge"]
    text = "\n".join(notes)
    assert_says(text, "p4de.24xlarge (use1-az4)", "no on-demand price: p5e.48xlarge",
                "no spot price in any zone: g6.xlarge", "inf2.xlarge", "inference-only",
                "needs eFLOPS", "trn2.48xlarge")


def test_median_aggregate_and_missing_region():
    rows = parse_vms_csv(TEXT)
    catalog, _ = build_catalog(rows, "us-east-1", date="d", source="s", base=None,
                               spot_aggregate="median")
    # median of 0.2 and 0.3 = 0.25; no base: g4dn.xlarge is estimated too
    g4 = catalog.instance("g4dn.xlarge")
    assert g4.spot_usd_per_hour == pytest.approx(0.25)
    assert g4.eflops_source.startswith("estimated")  # type: ignore[union-attr]
    with pytest.raises(SkyPilotError, match=r"eu-west-1.*has us-east-1, us-west-2"):
        build_catalog(rows, "eu-west-1", date="d", source="s", base=None)


@pytest.mark.parametrize(("text", "message"), [
    ("InstanceType,Price\nx,1\n", "missing column"),
    (HEADER + "n1-highmem-8,,,8,52,,0.47,0.1,us-central1,us-central1-a\n",
     "not an AWS instance type"),
    (HEADER + "g4dn.xlarge,T4,1,4,16,,cheap,0.1,us-east-1,use1-az1\n", "line 2: Price 'cheap'"),
    (HEADER + "g4dn.xlarge,T4,1,4,16,,-1,0.1,us-east-1,use1-az1\n", "greater than 0"),
    (HEADER, "no rows"),
])
def test_bad_files_are_refused_with_the_field(text, message):
    with pytest.raises(SkyPilotError, match=message):
        parse_vms_csv(text)


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_writes_one_catalog_per_region(tmp_path, capsys):
    source = tmp_path / "vms.csv"
    source.write_text(TEXT)
    out = tmp_path / "out"
    code, stdout, _ = run(["catalog", "import", str(source), "--format", "skypilot",
                           "--region", "us-east-1", "--region", "us-west-2",
                           "--date", "2025-01", "--out", str(out)], capsys)
    assert code == 0
    paths = sorted(out.glob("*.json"))
    assert [p.name for p in paths] == ["aws-us-east-1-2025-01.json", "aws-us-west-2-2025-01.json"]
    assert str(paths[0]) in stdout
    assert str(paths[1]) in stdout
    west = json.loads(paths[1].read_text())
    # g5.xlarge is in the base catalog: measured eFLOPS, no eflops_source key (the default)
    assert west["gpu_types"][0]["eflops"] == 696.0
    assert "eflops_source" not in west["gpu_types"][0]


def test_cli_bad_region_writes_nothing(tmp_path, capsys):
    source = tmp_path / "vms.csv"
    source.write_text(TEXT)
    out = tmp_path / "out"
    code, _, err = run(["catalog", "import", str(source), "--format", "skypilot",
                        "--region", "us-east-1", "--region", "eu-west-1", "--out", str(out)],
                       capsys)
    assert code == 2
    assert "eu-west-1" in err
    assert "Traceback" not in err
    assert not out.exists() or not list(out.iterdir())


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    """A loopback server of ``/vms.csv`` (404 for anything else); yields its URL."""
    served = tmp_path / "served"
    served.mkdir()
    (served / "vms.csv").write_text(TEXT)
    with serve_folder(served) as httpd:
        yield httpd.url


def test_cli_reads_a_url(tmp_path, capsys, server):
    out = tmp_path / "out"
    code, _stdout, _ = run(["catalog", "import", f"{server}/vms.csv", "--format", "skypilot",
                           "--region", "us-east-1", "--date", "2025-01", "--out", str(out)],
                          capsys)
    assert code == 0
    assert (out / "aws-us-east-1-2025-01.json").is_file()
    code, _, err = run(["catalog", "import", f"{server}/missing.csv", "--format", "skypilot",
                        "--region", "us-east-1", "--out", str(tmp_path / "o2")], capsys)
    assert code == 2
    assert "HTTP 404" in err


def test_cli_down_or_silent_server_writes_nothing(tmp_path, capsys):
    out = tmp_path / "out"
    code, _, err = run(["catalog", "import", f"{closed_port_url()}/vms.csv", "--format",
                        "skypilot", "--region", "us-east-1", "--out", str(out)], capsys)
    assert code == 2
    assert "cannot be reached" in err
    assert not out.exists()
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/vms.csv"
        code, _, err = run(["catalog", "import", url, "--format", "skypilot", "--region",
                            "us-east-1", "--timeout", "0.3", "--out", str(out)], capsys)
    assert code == 2
    assert "timed out" in err.lower()
    assert not out.exists()


def test_bundled_2025_catalog_has_todays_gpus_marked():
    catalog = load_catalog("aws-us-east-1-2025-h1")
    gpus = {g.name: g for g in catalog.gpu_types}
    assert {"p3.2xlarge", "p4d.24xlarge", "p5.48xlarge", "g6e.xlarge", "g5g.xlarge"} <= set(gpus)
    assert gpus["p5.48xlarge"].eflops_source.startswith("estimated")
    assert gpus["g4dn.xlarge"].eflops_source == "measured"
    assert all(g.scaling is not None for g in catalog.gpu_types if g.eflops is not None)


def test_tables_mark_estimated_eflops(capsys):
    code, out, _ = run(["recommend", "--catalog", "aws-us-east-1-2025-h1", "--pw", "30"], capsys)
    assert code == 0
    first = next(line for line in out.splitlines() if line.startswith(" 1"))  # row 1
    assert "USD/h *" in first
    assert "* eFLOPS estimated from the accelerator model" in out
    code, out, _ = run(["flopp", "--catalog", "aws-us-east-1-2025-h1"], capsys)
    assert "p5.48xlarge*" in out
    assert "g4dn.xlarge " in out
    assert "g4dn.xlarge*" not in out
    code, out, _ = run(["recommend", "--catalog", "aws-us-east-1-2023-10", "--pw", "3"], capsys)
    assert "*" not in out  # measured catalogs print as before


def test_columns_are_read_by_name_so_extra_columns_read_the_same():
    # a newer schema that adds a column and orders them differently reads the same rows
    header = ("Region,AvailabilityZone,InstanceType,Arch,AcceleratorName,AcceleratorCount,"
              "vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice\n")
    text = header + "us-east-1,use1-az1,g4dn.xlarge,x86_64,T4,1.0,4.0,16.0,,0.526,0.2\n"
    (row,) = parse_vms_csv(text)
    assert (row.instance, row.accelerator, row.count, row.price, row.spot, row.zone) == (
        "g4dn.xlarge", "T4", 1, 0.526, 0.2, "use1-az1")


def test_the_export_carries_the_sources(capsys):
    code, out, _ = run(["recommend", "--catalog", "aws-us-east-1-2025-h1", "--pw", "30",
                        "--format", "json"], capsys)
    assert code == 0
    rows = {r["name"]: r for r in json.loads(out)["catalog"]["instance_types"]["gpu_types"]}
    # p3.16xlarge: a V100 type one of the shown clusters uses (the P quota, 192 vCPUs, rules out
    # the Cost-First 110 x p3.2xlarge that used to bring p3.2xlarge into the export)
    assert rows["p3.16xlarge"]["eflops_source"].startswith("estimated: k C^0.34 B^0.66")
    assert rows["p3.16xlarge"]["scaling_source"].startswith("prior: data-parallel step")
