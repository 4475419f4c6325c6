"""Workload validation, its check against a catalog, and the MTBI defaults."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from deepvm_core.catalog import Catalog
from deepvm_core.errors import CatalogError, DeepVMError, WorkloadError
from deepvm_core.market.mtbi import ADVISOR_BUCKET_MTBI_HOURS, DEFAULT_MTBI_HOURS, mtbi_estimates
from deepvm_core.workload.workload import Workload, check_workload
from tests.factories import cpu_row, gpu_row, make_catalog


def workload(**over: object) -> Workload:
    fields: dict[str, object] = {"epochs": 30, "reference_epoch_seconds": 60.0,
                                 "reference_gpu": "g1"}
    fields.update(over)
    return Workload(**fields)  # type: ignore[arg-type]


def with_buckets(catalog: Catalog, buckets: dict[str, int | None]) -> Catalog:
    gpus = tuple(replace(g, interruption_bucket=buckets.get(g.name)) for g in catalog.gpu_types)
    return replace(catalog, gpu_types=gpus)


def test_defaults_follow_the_contract():
    w = Workload(epochs=30, reference_epoch_seconds=61.2)
    assert (w.reference_gpu, w.reference_nodes, w.checkpoint_gb, w.checkpoint_every_epochs) == (
        None, 1, 0.3, 1)
    # W: None, each type's bucket default (issue 25; it was 0 before); ρ = 0.06 (docs/method.md)
    assert (w.restart_hours, w.wait_hours, w.disk_gb_per_second) == (0.1, None, 0.25)
    assert (w.checkpoint_fixed_seconds, w.mtbi_scale, dict(w.mtbi_hours_by_gpu)) == (0.0, 1.0, {})
    assert w.per_vm_share == 0.06


@pytest.mark.parametrize(("field", "value"), [
    ("epochs", 0), ("epochs", -1.0), ("epochs", math.inf), ("epochs", math.nan),
    ("epochs", "30"), ("epochs", True),
    ("reference_epoch_seconds", 0.0), ("reference_nodes", 0), ("reference_nodes", 2.5),
    ("reference_gpu", ""), ("checkpoint_gb", 0.0), ("checkpoint_every_epochs", 0),
    ("checkpoint_every_epochs", 1.5), ("checkpoint_every_epochs", "daly"),
    ("restart_hours", -0.1), ("wait_hours", -1.0), ("disk_gb_per_second", 0.0),
    ("checkpoint_fixed_seconds", -1.0), ("mtbi_scale", 0.0), ("mtbi_scale", math.inf),
    ("per_vm_share", -0.1), ("per_vm_share", 1.5), ("per_vm_share", math.nan),
])
def test_a_bad_value_names_its_field_and_value(field, value):
    with pytest.raises(WorkloadError) as info:
        workload(**{field: value})
    assert [p.field for p in info.value.problems] == [field]
    assert info.value.problems[0].value is value or info.value.problems[0].value == value
    assert field in str(info.value)
    assert repr(value) in str(info.value)
    assert isinstance(info.value, DeepVMError)


def test_every_problem_is_collected():
    with pytest.raises(WorkloadError) as info:
        workload(epochs=-1, wait_hours=-2, mtbi_hours_by_gpu={"g1": 0.0})
    assert [p.field for p in info.value.problems] == [
        "epochs", "wait_hours", "mtbi_hours_by_gpu['g1']"]


def test_auto_and_overrides_are_accepted_and_copied():
    overrides = {"g1": 3.0}
    w = workload(checkpoint_every_epochs="auto", mtbi_hours_by_gpu=overrides)
    overrides["g1"] = 99.0
    assert w.checkpoint_every_epochs == "auto"
    assert w.mtbi_hours_by_gpu == {"g1": 3.0}


def test_check_against_catalog_suggests_close_names():
    catalog = make_catalog(gpus=[gpu_row("g4dn.xlarge"), gpu_row("g5.xlarge")],
                           cpus=[cpu_row("c5.xlarge")])
    with pytest.raises(WorkloadError) as info:
        check_workload(workload(reference_gpu="g4dn.xlarg",
                                mtbi_hours_by_gpu={"g5.xlage": 2.0}), catalog)
    messages = [str(p) for p in info.value.problems]
    assert len(messages) == 2
    assert "reference_gpu" in messages[0]
    assert "did you mean g4dn.xlarge" in messages[0]
    assert "mtbi_hours_by_gpu" in messages[1]
    assert "did you mean g5.xlarge" in messages[1]
    with pytest.raises(WorkloadError, match="is a CPU type"):
        check_workload(workload(reference_gpu="c5.xlarge"), catalog)
    reference = check_workload(workload(reference_gpu="g5.xlarge"), catalog)
    assert reference is not None
    assert reference.name == "g5.xlarge"


def test_no_reference_type_is_the_yardstick(aws_catalog):
    # Issue 24: no named reference type means the fixed yardstick (one A10G), no catalog type,
    # even in a catalog without eFLOPS (its times are then unknown, not an error).
    assert check_workload(Workload(epochs=1, reference_epoch_seconds=1.0), aws_catalog) is None
    no_eflops = make_catalog(gpus=[gpu_row("g1", eflops=None)])
    assert check_workload(Workload(epochs=1, reference_epoch_seconds=1.0), no_eflops) is None


def test_yardstick_is_one_gpu():
    # The yardstick is one A10G: a measurement on several VMs needs its type named.
    with pytest.raises(WorkloadError, match="must be 1 when no reference type is named"):
        Workload(epochs=1, reference_epoch_seconds=1.0, reference_nodes=4)
    assert Workload(epochs=1, reference_epoch_seconds=1.0, reference_gpu="g1",
                    reference_nodes=4).reference_nodes == 4


def test_mtbi_from_buckets_defaults_and_overrides(aws_catalog):
    catalog = with_buckets(aws_catalog, {"g3s.xlarge": 4, "g5.xlarge": 0})
    w = Workload(epochs=1, reference_epoch_seconds=1.0, mtbi_hours_by_gpu={"g5.xlarge": 3.0})
    rows = {m.gpu: m for m in mtbi_estimates(w, catalog)}
    assert (rows["g3s.xlarge"].mtbi_hours, rows["g3s.xlarge"].mtbi_source,
            rows["g3s.xlarge"].interruption_bucket) == (1.9, "advisor", 4)
    assert (rows["g4dn.xlarge"].mtbi_hours, rows["g4dn.xlarge"].mtbi_source,
            rows["g4dn.xlarge"].interruption_bucket) == (7.6, "default", None)
    assert (rows["g5.xlarge"].mtbi_hours, rows["g5.xlarge"].mtbi_source,
            rows["g5.xlarge"].interruption_bucket) == (3.0, "user", 0)
    scaled = {m.gpu: m.mtbi_hours for m in mtbi_estimates(replace(w, mtbi_scale=0.25), catalog)}
    assert scaled == pytest.approx({"g3s.xlarge": 0.475, "g4dn.xlarge": 1.9,
                                    "g5.xlarge": 0.75})
    # W: the bucket's 1.1 h (every bucket, and without one: the 10-15 % bucket's), else the
    # workload's for every type
    assert [(rows[g].wait_hours, rows[g].wait_source) for g in sorted(rows)] == [
        (1.1, "advisor"), (1.1, "default"), (1.1, "advisor")]
    given = mtbi_estimates(replace(w, wait_hours=0.5), catalog)
    assert {(m.wait_hours, m.wait_source) for m in given} == {(0.5, "user")}


def test_every_bucket_maps_to_its_default(aws_catalog):
    # issue 25: >20 % from the development traces' median (1.86 h -> 1.9 h), doubling per
    # bucket below (it was 32/16/8/4/2 h); bench/bench_defaults.py prints the derivation
    assert ADVISOR_BUCKET_MTBI_HOURS == (30.4, 15.2, 7.6, 3.8, 1.9)
    assert DEFAULT_MTBI_HOURS == 7.6
    w = Workload(epochs=1, reference_epoch_seconds=1.0)
    for bucket, hours in enumerate(ADVISOR_BUCKET_MTBI_HOURS):
        catalog = with_buckets(aws_catalog, {"g4dn.xlarge": bucket})
        assert mtbi_estimates(w, catalog)[1].mtbi_hours == hours
    with pytest.raises(CatalogError, match="interruption_bucket = 5"):
        mtbi_estimates(w, with_buckets(aws_catalog, {"g4dn.xlarge": 5}))
