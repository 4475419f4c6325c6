"""Issue 24, item 2, "One yardstick everywhere": the example job is defined on one fixed
accelerator, one A10G GPU at 696 eFLOPS on the artifact's scale (its measured g5.xlarge), never
on a catalog's top spot-FLOPP type, so it is the same job in every catalog and region.

What changed, and why the golden outputs changed with it: before, a workload without
``--ref-type`` measured its epoch time on one VM of the catalog's top spot-FLOPP type
(g4dn.xlarge in aws-us-east-1-2023-10, p4de.24xlarge in aws-us-east-1-2025-h1, g5g.xlarge in
aws-us-west-2-2025-h1), so "90 epochs of 960 s" was 45x more compute in us-east-1 than in
us-west-2. Now it is 960 s on one A10G: a type of E eFLOPS takes 960 x 696 / E seconds per
epoch on one VM in every catalog. In the paper's catalog (g_ref was g4dn.xlarge, 377 eFLOPS)
every epoch time, makespan and cost of the example job grows by 696 / 377 = 1.846, and speed
"x one g4dn.xlarge" reads "x one A10G" (times 377 / 696); the ranking under every objective is
unchanged there (speed scales uniformly). A user who names ``--ref-type`` keeps the old rule.

Expected values are derived by hand here (the eFLOPS and the measured one-node times are read
off the bundled files and written as numbers).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deepvm_core.bundled import bundled_catalog_names
from deepvm_core.catalog import Catalog
from deepvm_core.catalog.store import load_catalog
from deepvm_core.hardware.measurements import parse_measurements_csv
from deepvm_core.workload.speed import default_speed_basis, speed_basis
from deepvm_core.workload.speedup import SpeedupModel
from deepvm_core.workload.workload import EXAMPLE_DESCRIPTION, example_workload
from deepvm_core.workload.yardstick import YARDSTICK_EFLOPS, YARDSTICK_NAME

GOLDEN_DIR = Path(__file__).parent / "golden"
#: The bundled measurements' one-node times (data/measurements/deepvm-scaling.csv), seconds.
MEASURED_ONE_NODE = {"g3s.xlarge": 245.586753, "g4dn.xlarge": 61.155439, "g5.xlarge": 31.009284}


def test_the_yardstick_is_one_a10g_at_696_eflops() -> None:
    assert (YARDSTICK_NAME, YARDSTICK_EFLOPS) == ("A10G", 696.0)
    assert "960 s on one A10G GPU" in EXAMPLE_DESCRIPTION


@pytest.mark.parametrize("name", bundled_catalog_names())
def test_the_example_job_is_the_same_compute_in_every_catalog(name: str) -> None:
    """960 s per epoch on one A10G in every bundled catalog; a type of E eFLOPS: 960 x 696 / E
    seconds on one VM (g5.xlarge, 696: 960 s; g4dn.xlarge, 377: 1772.3077 s)."""
    catalog = load_catalog(name)
    basis = default_speed_basis(catalog)
    assert basis is not None
    assert basis.reference_gpu == "A10G"
    assert basis.reference_one_vm_epoch_seconds == 960.0
    assert basis.reference_epochs_per_hour == pytest.approx(3.75)  # 3600 / 960
    for g in catalog.gpu_types:
        if g.eflops is None:
            assert g.name not in basis.one_vm_epoch_seconds
            continue
        assert basis.one_vm_epoch_seconds[g.name] == pytest.approx(960.0 * 696.0 / g.eflops,
                                                                  rel=1e-12)
        if g.name == "g5.xlarge":  # eFLOPS 696 (measured) in every AWS catalog
            assert basis.one_vm_epoch_seconds[g.name] == pytest.approx(960.0)
        if g.name == "g4dn.xlarge":  # eFLOPS 377 (measured)
            assert basis.one_vm_epoch_seconds[g.name] == pytest.approx(1772.3076923, rel=1e-9)


def test_a_measurement_table_with_a_one_a10g_type_gives_the_relative_times(
        aws_catalog: Catalog) -> None:
    """With the bundled table, g5.xlarge (one A10G) stands for the yardstick: t_g(1) = 960 x
    t^m_g(1) / t^m_g5(1): g4dn.xlarge 960 x 61.155439 / 31.009284 = 1893.2788 s."""
    text = "instance,nodes,epoch_seconds\n" + "".join(
        f"{k},1,{v}\n" for k, v in MEASURED_ONE_NODE.items())
    table = parse_measurements_csv(text, "mine.csv")
    basis = speed_basis(aws_catalog, example_workload(), SpeedupModel(measurements=table))
    assert basis.reference_one_vm_epoch_seconds == 960.0
    assert basis.one_vm_epoch_seconds["g5.xlarge"] == pytest.approx(960.0)
    assert basis.one_vm_epoch_seconds["g4dn.xlarge"] == pytest.approx(1893.2788, rel=1e-7)
    assert basis.one_vm_epoch_seconds["g3s.xlarge"] == pytest.approx(
        960.0 * 245.586753 / 31.009284, rel=1e-12)
    sources = {t.gpu: (t.source, t.table) for t in basis.one_vm}
    assert sources["g4dn.xlarge"] == ("measured", "mine.csv")


def test_a_named_reference_type_keeps_its_rule(aws_catalog: Catalog) -> None:
    """--ref-type g4dn.xlarge: 960 s on one g4dn.xlarge, g5.xlarge 960 x 377 / 696 s."""
    basis = speed_basis(aws_catalog, example_workload(reference_gpu="g4dn.xlarge"))
    assert basis.reference_gpu == "g4dn.xlarge"
    assert basis.one_vm_epoch_seconds["g4dn.xlarge"] == 960.0
    assert basis.one_vm_epoch_seconds["g5.xlarge"] == pytest.approx(520.0, rel=1e-12)


def test_the_golden_files_changed_by_the_yardstick_alone() -> None:
    """The recommend golden files changed in the example job's speed and what follows from it
    (``speed_epochs_per_hour``, ``speed_vs_one_ref_vm``, the reference "A10G", the speed
    objective's values, the plan's job times and costs), never in a price, a performance or a
    Z: TR 17 x g4dn.xlarge + 1 x c5.xlarge at PW 3 keeps 2.8526 USD/h and performance
    6,374.78, and trains 3600 x 3.9202232 x 377 / (960 x 696) = 7.9629534 epochs/h."""
    doc = json.loads((GOLDEN_DIR / "recommend-aws-us-east-1-2023-10-pw3-paper-ilp.json")
                     .read_text(encoding="utf-8"))
    best = doc["deepvm"][0]
    assert best["summary"] == "TR: 17 x g4dn.xlarge spot + 1 x c5.xlarge, 2.8526 USD/h"
    assert best["performance"] == pytest.approx(6374.78, abs=0.005)
    assert best["speed_epochs_per_hour"] == pytest.approx(7.9629534, rel=1e-7)
    assert doc["speed_basis"]["reference_gpu"] == "A10G"
    assert doc["speed_basis"]["reference_one_vm_epoch_seconds"] == 960.0
