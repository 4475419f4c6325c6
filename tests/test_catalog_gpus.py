"""Issue 24: every GPU row carries its accelerator model, GPU count and GPU memory (GB), in the
schema (version 3; versions 1 and 2 still load), the export and the SkyPilot import (its
``GpuInfo`` column). Expected figures are typed from the rows written here and the chips'
datasheets (A100 "40 GB", A10G "24 GB", ...)."""

from __future__ import annotations

import json

import pytest

from deepvm_core.catalog import GpuType
from deepvm_core.catalog.catalog import catalog_to_dict
from deepvm_core.catalog.store import load_catalog
from deepvm_core.catalog.validation import parse_catalog
from deepvm_core.cli import main
from deepvm_core.cloud.aws.instance_types import (
    COUNT_DIFFERS,
    MEMORY_FROM_TABLE,
    gpu_memory_gb,
    read_gpu_info,
)
from deepvm_core.cloud.skypilot import build_catalog, parse_gpu_info, parse_vms_csv
from deepvm_core.errors import CatalogError
from deepvm_core.io.export import recommendation_to_dict
from deepvm_core.model import Scenario
from deepvm_core.recommend.recommendation import recommend
from tests.factories import catalog_dict, gpu_row

# ----------------------------------------------------------------------------- schema


def test_version_3_reads_and_writes_the_gpus():
    data = catalog_dict(gpus=[
        gpu_row("a", accelerator="A100", gpu_count=8, gpu_memory_gb=40),
        gpu_row("b"),  # unknown: absent
        gpu_row("c", accelerator=None, gpu_count=None, gpu_memory_gb=None),  # unknown: null
        gpu_row("d", gpu_count=4.0, gpu_memory_gb=22.5)], schema_version=3)
    catalog = parse_catalog(data)
    got = [(g.accelerator, g.gpu_count, g.gpu_memory_gb) for g in catalog.gpu_types]
    assert got == [("A100", 8, 40.0), (None, None, None), (None, None, None), (None, 4, 22.5)]
    assert isinstance(catalog.gpu_types[3].gpu_count, int)  # 4.0 is the whole number 4
    written = catalog_to_dict(catalog)
    assert written["schema_version"] == 3
    assert [(r["accelerator"], r["gpu_count"], r["gpu_memory_gb"])
            for r in written["gpu_types"]] == got
    assert "accelerator" not in written["cpu_types"][0]
    assert parse_catalog(written) == catalog


@pytest.mark.parametrize("version", [1, 2])
def test_older_versions_still_load(version):
    catalog = parse_catalog(catalog_dict(gpus=[gpu_row("a"), gpu_row("b", gpu_count=2)],
                                         schema_version=version))
    assert [(g.accelerator, g.gpu_count, g.gpu_memory_gb) for g in catalog.gpu_types] == [
        (None, None, None), (None, 2, None)]  # a row that gives one is read, whatever the version
    assert catalog_to_dict(catalog)["schema_version"] == 3


@pytest.mark.parametrize(("field", "value", "message"), [
    # issue 27: GPUs per VM are capped (1e20 GPUs per VM was ranked #1)
    ("gpu_count", 0, "must be in (0, 64]"), ("gpu_count", 65, "must be in (0, 64]"),
    ("gpu_count", 2.5, "whole number"),
    ("gpu_count", "eight", "not a number"), ("gpu_count", True, "not a number"),
    ("gpu_memory_gb", 0, "greater than 0"), ("gpu_memory_gb", -16, "greater than 0"),
    ("gpu_memory_gb", float("inf"), "finite"), ("accelerator", "  ", "non-empty text"),
    ("accelerator", 100, "non-empty text"),
])
def test_a_bad_gpu_field_names_row_field_and_value(field, value, message):
    data = catalog_dict(gpus=[gpu_row("ok", gpu_count=1), gpu_row("bad", **{field: value})],
                        schema_version=3)
    with pytest.raises(CatalogError) as caught:
        parse_catalog(data)
    found = [(p.where, p.field) for p in caught.value.problems]
    assert found == [("gpu_types[1] (bad)", field)]
    assert caught.value.problems[0].value is value
    assert message in caught.value.problems[0].message


@pytest.mark.parametrize(("field", "value"), [
    ("gpu_count", 0), ("gpu_count", 8.0), ("gpu_memory_gb", 0.0), ("accelerator", "")])
def test_a_gpu_type_built_directly_checks_its_gpus(field, value):
    with pytest.raises(CatalogError, match=field):
        GpuType(name="g", family="G", on_demand_usd_per_hour=1.0, spot_usd_per_hour=0.3,
                vcpus=4, memory_gib=16.0, network_gbps=10.0, eflops=1.0, **{field: value})


def test_the_bundled_2023_catalog_rows_by_hand():
    """The paper's three types: half an M60 (8 GB), a T4 (16 GB), an A10G (24 GB), one each."""
    rows = {g.name: (g.accelerator, g.gpu_count, g.gpu_memory_gb)
            for g in load_catalog("aws-us-east-1-2023-10").gpu_types}
    assert rows == {"g3s.xlarge": ("M60", 1, 8.0), "g4dn.xlarge": ("T4", 1, 16.0),
                    "g5.xlarge": ("A10G", 1, 24.0)}


def test_the_simulated_types_have_no_gpus():
    assert all(g.accelerator is None and g.gpu_count is None and g.gpu_memory_gb is None
               for g in load_catalog("paper-simulated").gpu_types)


def test_the_export_echoes_the_rows_gpus():
    catalog = load_catalog("aws-us-east-1-2023-10")
    rec = recommend(catalog, Scenario(3.0, objective="paper"))
    doc = recommendation_to_dict(rec, catalog)
    rows = {r["name"]: r for r in doc["catalog"]["instance_types"]["gpu_types"]}
    assert rows  # the configurations use GPU types
    for name, row in rows.items():
        g = catalog.instance(name)
        assert (row["accelerator"], row["gpu_count"], row["gpu_memory_gb"]) == (
            g.accelerator, g.gpu_count, g.gpu_memory_gb)  # type: ignore[union-attr]


# ----------------------------------------------------------------------------- GpuInfo


@pytest.mark.parametrize(("mib", "gb"), [
    (40960, 40.0),    # A100: 40 GiB exactly, sold as "40 GB"
    (81920, 80.0),    # H100, A100-80GB
    (144384, 141.0),  # H200: 141 GiB
    (16384, 16.0),    # T4, V100
    (22888, 24.0),    # A10G, L4: 22888 x 2^20 = 23,999,807,488 bytes, sold as "24 GB"
    (45776, 48.0),    # L40S: 47,999,614,976 bytes
    (12000, 12.6),    # neither: 12000 x 2^20 = 12,582,912,000 bytes, to 0.1 GB
])
def test_gpu_memory_is_the_datasheets_gb(mib, gb):
    assert gpu_memory_gb(mib) == gb


def test_read_gpu_info():
    info = read_gpu_info({"Gpus": [{"Name": "A10G", "Manufacturer": "NVIDIA", "Count": 4,
                                    "MemoryInfo": {"SizeInMiB": 22888}}],
                          "TotalGpuMemoryInMiB": 91552})
    assert (info.name, info.count, info.memory_mib_per_gpu) == ("A10G", 4, 22888.0)
    # no per-GPU memory: the total over the count (91552 / 4 = 22888)
    total = read_gpu_info({"Gpus": [{"Name": "A10G", "Count": 4}], "TotalGpuMemoryInMiB": 91552})
    assert total.memory_mib_per_gpu == 22888.0
    nothing = read_gpu_info({"Gpus": "?"})
    assert (nothing.name, nothing.count, nothing.memory_mib_per_gpu) == (None, None, None)


def test_parse_gpu_info_cells():
    assert parse_gpu_info("") is None
    assert parse_gpu_info("None") is None
    cell = ("{'Gpus': [{'Name': 'A100', 'Manufacturer': 'NVIDIA', 'Count': 8, 'MemoryInfo': "
            "{'SizeInMiB': 40960}}], 'TotalGpuMemoryInMiB': 327680}")
    info = parse_gpu_info(cell)
    assert info is not None
    assert (info.name, info.count, info.memory_mib_per_gpu) == ("A100", 8, 40960.0)
    for bad, why in (("{'Gpus': [", "not a literal object"),
                     ("__import__('os')", "not a literal object"), ("[1, 2]", "not an object"),
                     ("{" + "'a': 1, " * 2000 + "}", "longer than 4096 characters")):
        with pytest.raises(ValueError, match=why):
            parse_gpu_info(bad)


HEADER = ("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,"
          "SpotPrice,Region,AvailabilityZone\n")


def _gpu_info(name: str, count: int, mib: int) -> str:
    return (f"\"{{'Gpus': [{{'Name': '{name}', 'Manufacturer': 'NVIDIA', 'Count': {count}, "
            f"'MemoryInfo': {{'SizeInMiB': {mib}}}}}], 'TotalGpuMemoryInMiB': {count * mib}}}\"")


ROWS = [
    f"g5.12xlarge,A10G,4.0,48.0,192.0,{_gpu_info('A10G', 4, 22888)},5.672,1.9,us-east-1,use1-az1",
    f"p4d.24xlarge,A100,8.0,96.0,1152.0,{_gpu_info('A100', 8, 40960)},32.77,9.8,us-east-1,"
    "use1-az1",
    # p4de: the row with a spot price says A100 in GpuInfo; the chip is SkyPilot's A100-80GB
    f"p4de.24xlarge,A100-80GB,8.0,96.0,1152.0,{_gpu_info('A100', 8, 81920)},40.96,6.5,"
    "us-east-1,use1-az4",
    f"p4de.24xlarge,A100-80GB,8.0,96.0,1152.0,{_gpu_info('A100-80GB', 8, 81920)},40.96,,"
    "us-east-1,use1-az4",
    # Trainium: no GpuInfo; its memory is the table's
    "trn1.32xlarge,Trainium,16.0,128.0,512.0,,21.5,6.0,us-east-1,use1-az1",
    # GpuInfo that says 2 GPUs where AcceleratorCount says 1: AcceleratorCount wins, a note
    f"g6.xlarge,L4,1.0,4.0,16.0,{_gpu_info('L4', 2, 22888)},0.8048,0.3,us-east-1,use1-az1",
    # GpuInfo that cannot be read: the table's memory, a note
    "g6e.xlarge,L40S,1.0,4.0,32.0,\"{'Gpus': [\",1.861,0.8,us-east-1,use1-az1",
    "c5.xlarge,,,4.0,8.0,,0.17,0.07,us-east-1,use1-az1",
]


def test_the_import_reads_each_types_gpus():
    catalog, notes = build_catalog(parse_vms_csv(HEADER + "\n".join(ROWS) + "\n"), "us-east-1",
                                   date="2025-01", source="test file",
                                   base=load_catalog("aws-us-east-1-2023-10"))
    got = {g.name: (g.accelerator, g.gpu_count, g.gpu_memory_gb) for g in catalog.gpu_types}
    assert got == {
        "g5.12xlarge": ("A10G", 4, 24.0),
        "p4d.24xlarge": ("A100", 8, 40.0),
        "p4de.24xlarge": ("A100-80GB", 8, 80.0),
        "trn1.32xlarge": ("Trainium", 16, 34.36),  # data/accelerators.csv: 32 GiB = 34.36 GB
        "g6.xlarge": ("L4", 1, 24.0),
        "g6e.xlarge": ("L40S", 1, 48.0),  # data/accelerators.csv
    }
    assert f"{MEMORY_FROM_TABLE}: g6e.xlarge, trn1.32xlarge" in notes
    assert f"{COUNT_DIFFERS}: g6.xlarge" in notes
    unread = [n for n in notes if n.startswith("GpuInfo not read")]
    assert unread == ["GpuInfo not read, data/accelerators.csv used: g6e.xlarge (line 8: not a "
                      "literal object)"]
    assert catalog.cpu_types[0].name == "c5.xlarge"


def test_the_import_cli_writes_schema_version_3(tmp_path):
    source = tmp_path / "vms.csv"
    source.write_text(HEADER + "\n".join(ROWS[:2]) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    code = main(["catalog", "import", str(source), "--format", "skypilot", "--region",
                 "us-east-1", "--date", "2025-01", "--out", str(out)])
    assert code == 0
    data = json.loads((out / "aws-us-east-1-2025-01.json").read_text(encoding="utf-8"))
    assert data["schema_version"] == 3
    assert {r["name"]: (r["accelerator"], r["gpu_count"], r["gpu_memory_gb"])
            for r in data["gpu_types"]} == {"g5.12xlarge": ("A10G", 4, 24.0),
                                            "p4d.24xlarge": ("A100", 8, 40.0)}


def test_the_catalog_editor_keeps_a_rows_gpus_by_name():
    """The editor's grid has no GPU columns (it fits the main column as it is): a row keeps its
    GPUs while its name is unchanged; a renamed row has none (the core derives them)."""
    from dashboard import editor_frames

    catalog = load_catalog("aws-us-east-1-2023-10")
    frames = editor_frames.catalog_frames(catalog)
    frames["gpu_types"].loc[2, "name"] = "my-gpu"  # g4dn.xlarge, row 2
    frames["gpu_types"].loc[3, "spot_usd_per_hour"] = "0.5"  # g5.xlarge, another price
    parsed, problems = editor_frames.validate_frames(frames, catalog)
    assert problems == ()
    assert parsed is not None
    got = {g.name: (g.accelerator, g.gpu_count, g.gpu_memory_gb) for g in parsed.gpu_types}
    assert got == {"g3s.xlarge": ("M60", 1, 8.0), "my-gpu": (None, None, None),
                   "g5.xlarge": ("A10G", 1, 24.0)}
