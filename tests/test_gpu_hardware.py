"""Issue 24: the GPUs of a VM type (chip, GPUs per VM, GB per GPU), from the catalog row when it
carries them, else derived from the instance name (deepvm_core/workload/gpu_hardware.py).
Expected figures are typed from AWS/SkyPilot data and data/accelerators.csv."""

from __future__ import annotations

import pytest

from deepvm_core.catalog import GpuType
from deepvm_core.catalog.store import bundled_catalog_paths, load_catalog
from deepvm_core.hardware.accelerators import accelerator_of_instance, bundled_accelerators
from deepvm_core.workload.gpu_hardware import (
    FROM_CATALOG,
    gpu_hardware,
    gpu_hardware_table,
    instance_gpu_counts,
    parse_instance_gpus,
)


@pytest.mark.parametrize(("name", "chip", "gpus", "memory_gb"), [
    ("g4dn.xlarge", "T4", 1, 16), ("g4dn.12xlarge", "T4", 4, 16), ("g4dn.metal", "T4", 8, 16),
    ("g5.12xlarge", "A10G", 4, 24), ("g5.48xlarge", "A10G", 8, 24),
    ("g5g.16xlarge", "T4g", 2, 16), ("g6e.12xlarge", "L40S", 4, 48),
    ("p3.2xlarge", "V100", 1, 16), ("p3.16xlarge", "V100", 8, 16),
    ("p3dn.24xlarge", "V100-32GB", 8, 32), ("p4d.24xlarge", "A100", 8, 40),
    ("p4de.24xlarge", "A100-80GB", 8, 80), ("p5.48xlarge", "H100", 8, 80),
    ("p5en.48xlarge", "H200", 8, 141), ("g3s.xlarge", "M60", 1, 8),
])
def test_derived_from_the_instance_name(name, chip, gpus, memory_gb):
    hw = gpu_hardware(name)
    assert (hw.chip, hw.gpus_per_vm, hw.memory_gb_per_gpu) == (chip, gpus, memory_gb)
    assert hw.missing is None
    assert hw.source.startswith("derived: chip ")
    assert "data/instance-gpus.csv" in hw.source
    assert hw.describe() == f"{gpus} x {memory_gb:g} GB"


def test_every_gpu_type_of_the_bundled_aws_catalogs_is_known():
    for name in bundled_catalog_paths():
        if not name.startswith("aws-"):
            continue
        for hw in gpu_hardware_table(load_catalog(name).gpu_types):
            assert hw.missing is None, (name, hw)


def test_the_table_agrees_with_the_family_map_and_the_accelerator_table():
    chips = bundled_accelerators()
    for name, row in instance_gpu_counts().items():
        assert row.accelerator in chips, name
        family_chip = accelerator_of_instance(name)
        assert family_chip is not None, name
        assert family_chip.name == row.accelerator, name


def _row(name: str, **gpus: object) -> GpuType:
    """A catalog row that carries (some of) its GPUs (catalog schema version 3)."""
    return GpuType(name=name, family="G", on_demand_usd_per_hour=1.0, spot_usd_per_hour=0.5,
                   vcpus=4, memory_gib=16.0, network_gbps=10.0, eflops=100.0, **gpus)


def test_the_bundled_aws_rows_carry_their_gpus_as_derived_from_the_name():
    """Every GPU row of the bundled AWS catalogs has the three fields (data/README.md), and
    they agree with the derivation from the name alone (an independent path: family map,
    data/instance-gpus.csv, data/accelerators.csv)."""
    for name in bundled_catalog_paths():
        if not name.startswith("aws-"):
            continue
        for row in load_catalog(name).gpu_types:
            derived = gpu_hardware(row.name)
            assert (row.accelerator, row.gpu_count, row.gpu_memory_gb) == (
                derived.chip, derived.gpus_per_vm, derived.memory_gb_per_gpu), (name, row.name)
            assert gpu_hardware(row).source == FROM_CATALOG


def test_catalog_fields_win_over_the_derivation():
    hw = gpu_hardware(_row("g5.12xlarge", accelerator="A10G", gpu_count=4,
                           gpu_memory_gb=22.35))
    assert (hw.gpus_per_vm, hw.memory_gb_per_gpu, hw.source) == (4, 22.35, FROM_CATALOG)
    # only the count given: chip and memory are derived, and the source says which
    partial = gpu_hardware(_row("g5.12xlarge", gpu_count=2))
    assert (partial.chip, partial.gpus_per_vm, partial.memory_gb_per_gpu) == ("A10G", 2, 24)
    assert partial.source == ("derived: chip A10G from family g5, 2 GPUs from the catalog, "
                              "24 GB from data/accelerators.csv")


def test_unknown_types_say_why():
    sim = gpu_hardware("A")
    assert sim.accelerator is None
    assert sim.gpus_per_vm is None
    assert "not an AWS instance type" in (sim.missing or "")
    assert "not in data/instance-gpus.csv" in (sim.missing or "")
    assert sim.describe() == "? x ? GB"
    new = gpu_hardware("g7.2xlarge")
    assert "family g7 is not in data/accelerators.csv" in (new.missing or "")
    custom = gpu_hardware(_row("x9.large", accelerator="Z1", gpu_count=2, gpu_memory_gb=40.0))
    assert custom.missing == "chip 'Z1' is not in data/accelerators.csv"
    assert custom.describe() == "2 x 40 GB"


@pytest.mark.parametrize(("text", "message"), [
    ("instance_type,accelerator,gpus,source\ng5.xlarge,A10G,0,SkyPilot\n", "gpus = '0'"),
    ("instance_type,accelerator,gpus,source\ng5.xlarge,A10G,1.5,SkyPilot\n", "gpus = '1.5'"),
    ("instance_type,accelerator,gpus,source\ng5.xlarge,A10G,1,blog\n", "source = 'blog'"),
    ("instance_type,accelerator,gpus,source\n,A10G,1,SkyPilot\n", "must not be empty"),
    ("instance_type,accelerator,gpus,source\ng5.xlarge,A10G,1,SkyPilot\n"
     "g5.xlarge,A10G,1,SkyPilot\n", "line 3 .*duplicate"),
])
def test_bad_rows_name_line_and_field(text, message):
    with pytest.raises(ValueError, match=message):
        parse_instance_gpus(text)
