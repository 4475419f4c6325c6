"""Issue 27, hostile finding 1: a user's measurements are never mixed with the bundled ones.

A relative one-VM speed ρ_g = t^m_g(1) / t^m_ref(1) may only come from one table measured on
one workload (``job-model.md``, "Epoch time"): once an uploaded table is in use, the bundled
table gives no one-node time (a type the upload does not measure gets
``eFLOPS(g_ref) / eFLOPS(g)``), and an upload whose scaling fit is not trusted (R² below the
calibration's trust rule) changes nothing until the user confirms it.

The path is the Plan page's: :func:`combine_measurements` of the upload and the bundled table,
then :func:`plan_job` with the ``fitted`` speedup model (the page's default).
"""

from __future__ import annotations

import pytest

from deepvm_core.catalog import Catalog
from deepvm_core.catalog.store import PAPER_CATALOG, load_catalog
from deepvm_core.hardware.coverage import TypeTable, combine_measurements
from deepvm_core.hardware.measurements import (
    MeasurementTable,
    bundled_measurements_paths,
    load_measurements,
    parse_measurements_csv,
)
from deepvm_core.model import Scenario
from deepvm_core.pipeline.plan import JobPlanResult, plan_job
from deepvm_core.workload.speedup import SpeedupModel
from deepvm_core.workload.workload import Workload

HEADER = "instance,nodes,epoch_seconds\n"
# The issue's file: the user's own job on g4dn.xlarge only, 6,000 s per epoch on one VM,
# 1-16 VMs (a plausible speedup: 1, 1.9, 3.5, 6, 9).
MINE = parse_measurements_csv(
    HEADER + "g4dn.xlarge,1,6000\ng4dn.xlarge,2,3158\ng4dn.xlarge,4,1714\n"
    "g4dn.xlarge,8,1000\ng4dn.xlarge,16,667\n", source="mine.csv")
# Random-looking epoch times: the fit succeeds but explains nothing (R² far below 0.8).
UNTRUSTED = parse_measurements_csv(
    HEADER + "g4dn.xlarge,1,6000\ng4dn.xlarge,2,3000\ng4dn.xlarge,4,6000\n"
    "g4dn.xlarge,8,3000\ng4dn.xlarge,12,6000\ng4dn.xlarge,16,3000\n", source="noise.csv")


@pytest.fixture(scope="module")
def paper() -> Catalog:
    return load_catalog(PAPER_CATALOG)


@pytest.fixture(scope="module")
def bundled() -> MeasurementTable:
    return load_measurements(bundled_measurements_paths()["deepvm-scaling"])


def plan(catalog: Catalog, workload: Workload, table: MeasurementTable | None) -> JobPlanResult:
    return plan_job(catalog, Scenario(3.0), workload, pw_usd_per_hour=3.0,
                    speedup=SpeedupModel("fitted", table), trials=0)


def one_vm(result: JobPlanResult) -> dict[str, tuple[float | None, str | None, str | None]]:
    return {g.gpu: (g.one_vm_epoch_seconds, g.one_vm_source, g.one_vm_table)
            for g in result.assumptions.gpu_types}


def test_the_issue_example_takes_no_bundled_time_over_the_users(
        paper: Catalog, bundled: MeasurementTable) -> None:
    table, tables = combine_measurements(MINE, bundled)
    # The job as in the issue: 90 epochs of 960 s on one g4dn.xlarge (g_ref, the type the user
    # measured). The bundled g5.xlarge row (31.0 s) divided by the user's 6,000 s gave
    # 960 * 31.0 / 6000 = 5.0 s per epoch on one g5.xlarge; the catalog's eFLOPS give
    # 960 * 377 / 696 = 520.0 s, and 960 * 377 / 100 = 3619.2 s on one g3s.xlarge.
    workload = Workload(epochs=90, reference_epoch_seconds=960, reference_gpu="g4dn.xlarge")
    times = one_vm(plan(paper, workload, table))
    assert times["g4dn.xlarge"] == (960.0, "reference", None)
    assert times["g5.xlarge"][1:] == ("eflops", None)
    assert times["g5.xlarge"][0] == pytest.approx(520.0, abs=0.05)
    assert times["g3s.xlarge"][1:] == ("eflops", None)
    assert times["g3s.xlarge"][0] == pytest.approx(3619.2, abs=0.05)
    # the bundled rows are not in use once the upload is: no type says it uses them
    assert [t for t in tables if t.source == bundled.source] == []
    assert TypeTable("g4dn.xlarge", "mine.csv") in tables


def test_the_card_is_derived_from_the_users_table_only(
        paper: Catalog, bundled: MeasurementTable) -> None:
    """The card's cluster and epoch time: with g_ref the measured type, the user's table has
    no other type, so every relative speed is an eFLOPS ratio and the plan is the one without
    any table (fitted speedups come from the catalog either way)."""
    table, _ = combine_measurements(MINE, bundled)
    workload = Workload(epochs=90, reference_epoch_seconds=960, reference_gpu="g4dn.xlarge")
    with_upload = plan(paper, workload, table).chosen
    without = plan(paper, workload, None).chosen
    assert with_upload is not None
    assert without is not None
    assert with_upload.configuration == without.configuration
    assert with_upload.epoch_seconds == pytest.approx(without.epoch_seconds, rel=1e-12)
    assert with_upload.expected_cost_usd == pytest.approx(without.expected_cost_usd, rel=1e-12)


def test_on_the_yardstick_no_ratio_crosses_the_tables(
        paper: Catalog, bundled: MeasurementTable) -> None:
    """Without g_ref the epoch time is on one A10G (the yardstick, eFLOPS 696): the user's
    table has no A10G row, so no type has a measured ρ; before the fix g4dn.xlarge took
    6000 / 31.0 = 193.5 times the A10G's time (the user's row over the bundled g5.xlarge)."""
    table, _ = combine_measurements(MINE, bundled)
    times = one_vm(plan(paper, Workload(epochs=90, reference_epoch_seconds=960), table))
    assert times["g4dn.xlarge"][1] == "eflops"
    assert times["g4dn.xlarge"][0] == pytest.approx(960 * 696 / 377, rel=1e-9)  # 1772.2 s
    assert times["g5.xlarge"][1] == "eflops"
    assert times["g5.xlarge"][0] == pytest.approx(960.0, rel=1e-9)


def test_an_untrusted_fit_moves_nothing_until_confirmed(
        paper: Catalog, bundled: MeasurementTable) -> None:
    workload = Workload(epochs=90, reference_epoch_seconds=960)
    table, tables = combine_measurements(UNTRUSTED, bundled)
    assert table == bundled  # the bundled table, untouched
    refused = next(t for t in tables if t.instance == "g4dn.xlarge")
    assert refused.source == bundled.source
    assert refused.refused is not None
    assert "R² = " in refused.refused
    assert "confirm" in refused.refused
    default = plan(paper, workload, bundled).chosen
    unconfirmed = plan(paper, workload, table).chosen
    assert default is not None
    assert unconfirmed is not None
    assert unconfirmed.expected_cost_usd == default.expected_cost_usd
    confirmed, tables = combine_measurements(UNTRUSTED, bundled, confirmed=True)
    assert confirmed.names == ("g4dn.xlarge",)
    assert confirmed.source == "noise.csv"
    assert TypeTable("g4dn.xlarge", "noise.csv") in tables
