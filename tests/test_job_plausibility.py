"""Issue 20, item 2: measured speedups that fall with n or exceed n are named, with their
points, by the core (``deepvm plan`` and the dashboard's card show the same text)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from deepvm_core.hardware.measurements import (
    implausible_speedup_warnings,
    implausible_speedups,
    parse_measurements_csv,
)


def table(rows: str):
    return parse_measurements_csv("instance,nodes,epoch_seconds\n" + rows, source="m.csv")


def test_two_vms_six_times_slower_are_named() -> None:
    t = table("g4dn.xlarge,1,60\ng4dn.xlarge,2,360\ng4dn.xlarge,4,20\n")
    # S(2) = 60 / 360 = 0.1667 < 0.9 * S(1) = 0.9; S(4) = 60 / 20 = 3 <= 1.1 * 4.
    assert implausible_speedup_warnings(t) == (
        "Measured speedups of g4dn.xlarge look implausible: it falls as VMs are added "
        "(S(2) = 0.17 after S(1) = 1.00). Check the epoch times: the measured model follows "
        "them as given.",)


def test_more_than_linear_is_named() -> None:
    t = table("g5.xlarge,1,100\ng5.xlarge,2,40\ng5.xlarge,4,30\n")
    # S(2) = 100 / 40 = 2.5 > 1.1 * 2 = 2.2; S(4) = 100 / 30 = 3.33 <= 4.4.
    assert implausible_speedups(t.instances[0]) == (
        "Measured speedups of g5.xlarge look implausible: it is more than linear "
        "(S(2) = 2.50, above n). Check the epoch times: the measured model follows them as "
        "given.")


def test_noise_within_ten_percent_is_quiet() -> None:
    # S: 1, 1.9, 3.6, 3.3 (= 60/18.18): 3.3 >= 0.9 * 3.6 = 3.24, so saturation noise passes.
    t = table("a,1,60\na,2,31.58\na,4,16.67\na,8,18.18\n")
    assert implausible_speedup_warnings(t) == ()


def test_only_the_named_types_and_only_with_a_one_node_time() -> None:
    t = table("a,1,60\na,2,360\nb,1,60\nb,2,360\nc,2,10\nc,4,100\n")
    assert [w.split(" look")[0] for w in implausible_speedup_warnings(t, ["b", "c"])] == [
        "Measured speedups of b"]


@given(st.lists(st.floats(0.5, 2.0), min_size=1, max_size=6))
def test_a_monotone_sublinear_speedup_is_never_flagged(gains: list[float]) -> None:
    # Speedups 1, then each point's S is min(prev * g, n) with g >= 1: non-decreasing, <= n.
    lines, s = ["a,1,100"], 1.0
    for k, g in enumerate(gains, start=2):
        s = min(max(s, s * g), float(k))
        lines.append(f"a,{k},{100 / s!r}")
    assert implausible_speedup_warnings(table("\n".join(lines) + "\n")) == ()


def test_the_plan_warns_under_the_measured_model_only() -> None:
    from deepvm_core.catalog.store import load_catalog
    from deepvm_core.model import Scenario
    from deepvm_core.pipeline.plan import plan_job
    from deepvm_core.workload.speedup import SpeedupModel
    from deepvm_core.workload.workload import Workload

    catalog = load_catalog("aws-us-east-1-2023-10")
    t = table("g4dn.xlarge,1,60\ng4dn.xlarge,2,360\ng4dn.xlarge,4,20\n")
    workload = Workload(epochs=30, reference_epoch_seconds=61.16)
    measured = plan_job(catalog, Scenario(3.0), workload, pw_usd_per_hour=3.0,
                        speedup=SpeedupModel("measured", t), trials=0)
    fitted = plan_job(catalog, Scenario(3.0), workload, pw_usd_per_hour=3.0,
                      speedup=SpeedupModel("fitted", t), trials=0)
    assert any(w.startswith("Measured speedups of g4dn.xlarge") for w in measured.warnings)
    assert not any(w.startswith("Measured speedups") for w in fitted.warnings)


