"""deepvm_core.catalog.diff: price changes between two catalogs, exact values on small catalogs."""

from __future__ import annotations

import copy
from dataclasses import replace

import pytest
from factories import cpu_row, gpu_row, make_catalog, saturation_rows

from deepvm_core.catalog.diff import (
    NEEDS_EFLOPS,
    NOT_FETCHED,
    DiffStatus,
    PriceChange,
    catalog_changes,
    change_percent,
    price_diff,
    summarize_price_diff,
)
from deepvm_core.catalog.store import load_catalog


def old_catalog():
    return make_catalog(
        gpus=[gpu_row("g.a", on_demand_usd_per_hour=1.0, spot_usd_per_hour=0.4),
              gpu_row("g.b", on_demand_usd_per_hour=2.0, spot_usd_per_hour=0.5),
              gpu_row("g.gone", on_demand_usd_per_hour=3.0, spot_usd_per_hour=0.9)],
        cpus=[cpu_row("c.a", on_demand_usd_per_hour=0.2, spot_usd_per_hour=0.1)])


def new_catalog():
    return make_catalog(
        gpus=[gpu_row("g.new", on_demand_usd_per_hour=1.5, spot_usd_per_hour=0.6, eflops=None,
                      scaling=None),
              gpu_row("g.b", on_demand_usd_per_hour=2.0, spot_usd_per_hour=0.5),
              gpu_row("g.a", on_demand_usd_per_hour=1.25, spot_usd_per_hour=0.3)],
        cpus=[cpu_row("c.a", on_demand_usd_per_hour=0.2, spot_usd_per_hour=0.1),
              cpu_row("c.new", on_demand_usd_per_hour=0.4, spot_usd_per_hour=0.2)])


def test_rows_statuses_and_exact_values() -> None:
    changes = price_diff(old_catalog(), new_catalog())
    # the old catalog's types in its order (GPU, then CPU), then the new-only types
    assert [c.name for c in changes] == ["g.a", "g.b", "g.gone", "c.a", "g.new", "c.new"]
    by = {c.name: c for c in changes}
    assert by["g.a"] == PriceChange(
        name="g.a", kind="gpu", status=DiffStatus.CHANGED, note="", on_demand_old=1.0,
        on_demand_new=1.25, spot_old=0.4, spot_new=0.3, on_demand_change_pct=25.0,
        spot_change_pct=pytest.approx(-25.0))
    assert by["g.b"] == PriceChange("g.b", "gpu", "unchanged", "", 2.0, 2.0, 0.5, 0.5, 0.0, 0.0)
    assert by["c.a"] == PriceChange("c.a", "cpu", "unchanged", "", 0.2, 0.2, 0.1, 0.1, 0.0, 0.0)
    assert by["g.gone"] == PriceChange("g.gone", "gpu", "missing", NOT_FETCHED, 3.0, None,
                                       0.9, None, None, None)
    assert by["g.new"] == PriceChange("g.new", "gpu", "added", NEEDS_EFLOPS, None, 1.5, None,
                                      0.6, None, None)
    assert by["g.new"].needs_eflops
    assert not by["g.a"].needs_eflops
    assert by["c.new"] == PriceChange("c.new", "cpu", "added", "", None, 0.4, None, 0.2,
                                      None, None)


def test_summary_counts_and_median_spot_change() -> None:
    counts = summarize_price_diff(price_diff(old_catalog(), new_catalog()))
    assert (counts.fetched, counts.changed, counts.unchanged, counts.added, counts.missing,
            counts.needs_eflops) == (5, 1, 2, 2, 1, 1)
    # defined spot changes: g.a -25, g.b 0, c.a 0 -> median 0
    assert counts.median_spot_change_pct == 0.0
    half = make_catalog(gpus=[gpu_row("g.a", spot_usd_per_hour=0.2),
                              gpu_row("g.b", spot_usd_per_hour=0.25)], cpus=[])
    base = make_catalog(gpus=[gpu_row("g.a", spot_usd_per_hour=0.4),
                              gpu_row("g.b", spot_usd_per_hour=0.2)], cpus=[])
    # -50 % and +25 %: the median of an even count is the mean of the middle two
    assert summarize_price_diff(price_diff(base, half)).median_spot_change_pct == pytest.approx(
        -12.5)
    empty = summarize_price_diff(())
    assert empty == type(empty)(0, 0, 0, 0, 0, 0, None)


def test_same_catalog_is_unchanged_and_tolerance_decides_changed() -> None:
    old = old_catalog()
    assert {c.status for c in price_diff(old, old)} == {DiffStatus.SAME}
    nudged = make_catalog(gpus=[gpu_row("g.a", on_demand_usd_per_hour=1.0 + 1e-12,
                                        spot_usd_per_hour=0.4)], cpus=[])
    base = make_catalog(gpus=[gpu_row("g.a", on_demand_usd_per_hour=1.0,
                                      spot_usd_per_hour=0.4)], cpus=[])
    assert price_diff(base, nudged)[0].status == DiffStatus.SAME
    assert price_diff(base, nudged, tolerance=0.0)[0].status == DiffStatus.CHANGED


def test_requested_globs_leave_out_old_types_not_fetched() -> None:
    changes = price_diff(old_catalog(), new_catalog(), requested=["g.a", "c.*"])
    # g.gone was not requested: not reported missing. The filter applies to the old catalog
    # only, so g.b (in the new one, not requested) counts as added (a fetch never has it).
    assert [(c.name, c.status) for c in changes] == [
        ("g.a", "changed"), ("c.a", "unchanged"), ("g.new", "added"), ("g.b", "added"),
        ("c.new", "added")]


def test_kind_follows_the_new_catalog() -> None:
    old = make_catalog(gpus=[gpu_row("x.1")], cpus=[])
    new = make_catalog(gpus=[], cpus=[cpu_row("x.1")])
    (change,) = price_diff(old, new)
    assert (change.kind, change.status) == ("cpu", DiffStatus.CHANGED)
    assert change.on_demand_change_pct == pytest.approx(-80.0)


def test_change_percent() -> None:
    assert change_percent(2.0, 3.0) == 50.0
    assert change_percent(None, 1.0) is None
    assert change_percent(1.0, None) is None
    assert change_percent(0.0, 1.0) is None


def test_inputs_are_not_mutated() -> None:
    old, new = old_catalog(), new_catalog()
    before = copy.deepcopy((old, new))
    requested = ["g.*", "c.a"]
    price_diff(old, new, requested)
    assert (old, new) == before
    assert requested == ["g.*", "c.a"]
    with pytest.raises(AttributeError):
        price_diff(old, new)[0].status = "x"  # type: ignore[misc]


# ----------------------------------------------------------------------------- catalog_changes


def test_catalog_changes_names_every_changed_field_with_old_and_new() -> None:
    base = load_catalog("aws-us-east-1-2023-10")
    g4dn = base.instance("g4dn.xlarge")
    edited = replace(base, gpu_types=tuple(
        replace(g, spot_usd_per_hour=0.2) if g is g4dn else g for g in base.gpu_types))
    assert catalog_changes(base, edited) == [
        "gpu_types[g4dn.xlarge].spot_usd_per_hour: 0.1578 -> 0.2"]
    assert catalog_changes(base, base) == []


def test_catalog_changes_rows_added_removed_nested_quotas_saturation_and_metadata() -> None:
    base = make_catalog(
        gpus=[gpu_row("g.a"), gpu_row("g.b", spot_by_zone_usd_per_hour={"z1": 0.3})],
        cpus=[cpu_row("c.a"), cpu_row("c.gone")],
        quotas=[{"family": "G", "on_demand_vcpus": 32, "spot_vcpus": 128},
                {"family": "C", "on_demand_vcpus": 8, "spot_vcpus": 8}],
        saturation=saturation_rows([(1.0, 4), (10.0, 20)]))
    edited = make_catalog(
        gpus=[gpu_row("g.a", scaling=(0.2, 15.0, 10.0), eflops=None),
              gpu_row("g.b", spot_by_zone_usd_per_hour={"z1": 0.25, "z2": 0.3})],
        cpus=[cpu_row("c.a", memory_gib=16.0), cpu_row("c.new")],
        quotas=[{"family": "G", "on_demand_vcpus": 32, "spot_vcpus": 64},
                {"family": "M", "on_demand_vcpus": 4, "spot_vcpus": 4}],
        saturation=saturation_rows([(1.0, 5), (10.0, 20), (25.0, 28)]),
        region="us-west-2", source="x" * 200)
    assert catalog_changes(base, edited) == [
        'region: "-" -> "us-west-2"',
        f'source: "tests" -> "{"x" * 60}..." (200 characters)',
        "gpu_types[g.a].eflops: 100.0 -> null",
        "gpu_types[g.a].scaling.a: 0.1 -> 0.2",
        "gpu_types[g.b].spot_by_zone_usd_per_hour.z1: 0.3 -> 0.25",
        "gpu_types[g.b].spot_by_zone_usd_per_hour.z2: (none) -> 0.3",
        "cpu_types[c.a].memory_gib: 8.0 -> 16.0",
        "cpu_types[c.gone]: removed",
        "cpu_types[c.new]: added",
        "quotas[G].spot_vcpus: 128 -> 64",
        "quotas[C]: removed",
        "quotas[M]: added",
        "network_saturation[0].max_gpu_vms: 4 -> 5",
        "network_saturation[2]: added",
    ]


def test_catalog_changes_see_a_type_moved_between_gpu_and_cpu() -> None:
    base = make_catalog(gpus=[gpu_row("g.a"), gpu_row("x")], cpus=[cpu_row("c.a")])
    edited = make_catalog(gpus=[gpu_row("g.a")], cpus=[cpu_row("c.a"), cpu_row("x")])
    assert catalog_changes(base, edited) == ["gpu_types[x]: removed", "cpu_types[x]: added"]
