"""Issue 20 item 1, the core: an uploaded file is in use only for the types it measures
well; the others keep the fallback's rows."""

from __future__ import annotations

from deepvm_core.hardware.coverage import TypeTable, combine_measurements, measured_well
from deepvm_core.hardware.measurements import parse_measurements_csv

HEADER = "instance,nodes,epoch_seconds\n"
FALLBACK = parse_measurements_csv(HEADER + "a,1,100\na,2,60\na,4,40\na,8,30\n"
                                  "b,1,50\nb,2,30\nb,4,20\nb,8,15\n", source="bundled")


def test_well_measured_types_replace_the_whole_fallback() -> None:
    """Issue 27, finding 1 changed this: the fallback's rows of b (which the upload measures
    badly) are no longer mixed in, since a relative speed may only come from one table."""
    uploaded = parse_measurements_csv(HEADER + "a,1,90\na,2,50\na,4,30\na,8,20\n"
                                      "b,1,45\nb,4,20\nz,2,10\n", source="mine.csv")
    table, tables = combine_measurements(uploaded, FALLBACK)
    assert table.source == "mine.csv"
    assert table.get("a") == uploaded.get("a")  # 4 node counts with a one-node time: used
    assert table.get("b") is None  # one node count >= 2: not used, nor the fallback's rows
    assert table.get("z") is None  # no one-node time: not used at all
    assert tables == (
        TypeTable("a", "mine.csv"),
        TypeTable("b", None, "1 distinct node count(s) >= 2 (4); the logistic has 3 "
                             "parameters (a, b, c), so a fit needs at least 3"),
        TypeTable("z", None, "no one-node time (a row with nodes 1): the speedups t(1)/t(n) "
                             "cannot be computed"),
    )


def test_a_file_measuring_nothing_well_leaves_the_fallback() -> None:
    uploaded = parse_measurements_csv(HEADER + "a,1,66\na,4,20\n", source="one.csv")
    table, _ = combine_measurements(uploaded, FALLBACK)
    assert table.instances == FALLBACK.instances
    assert table.source == "bundled"


def test_measured_well() -> None:
    assert measured_well(FALLBACK.instances[0]) is None
