"""The measurements CSV: header, malformed rows with line numbers, duplicates averaged."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from deepvm_core.errors import DeepVMError, MeasurementsError
from deepvm_core.hardware.measurements import (
    bundled_measurements_paths,
    load_measurements,
    measurements_to_csv,
    parse_measurements_csv,
)

REPO = Path(__file__).resolve().parent.parent
BUNDLED = REPO / "data" / "measurements" / "deepvm-scaling.csv"
#: SHA-256 of the research artifact's ``scaling_measurements.csv`` (31 lines, 30 rows), which
#: ``data/measurements/deepvm-scaling.csv`` ships verbatim; taken from the artifact's file with
#: ``sha256sum`` when it was copied.
ARTIFACT_SHA256 = "122c9d68f993a35b2337be829d63da5d635e78bb3ba9aba7547751fb21a87375"


def test_bundled_file_is_listed_and_parses():
    assert bundled_measurements_paths()["deepvm-scaling"] == BUNDLED
    table = load_measurements(BUNDLED)
    assert table.names == ("g3s.xlarge", "g4dn.xlarge", "g5.xlarge")
    g4 = table.get("g4dn.xlarge")
    assert g4 is not None
    assert g4.nodes == (1, 2, 4, 8, 12, 16, 20, 24, 28, 32)
    assert g4.one_node_epoch_seconds == 61.155439
    assert g4.epoch_seconds[-1] == 11.64543
    assert set(g4.repeats) == {1}
    assert table.get("p3.2xlarge") is None


def test_bundled_file_is_a_verbatim_copy():
    assert hashlib.sha256(BUNDLED.read_bytes()).hexdigest() == ARTIFACT_SHA256


def test_header_may_reorder_columns_and_duplicates_are_averaged():
    text = ("nodes,epoch_seconds,instance\n"
            "1,10,g1\n2,6,g1\n2,4,g1\n\n1,8,g2\n")
    table = parse_measurements_csv(text)
    g1 = table.get("g1")
    assert g1 is not None
    assert g1.nodes == (1, 2)
    assert g1.epoch_seconds == (10.0, 5.0)
    assert g1.repeats == (1, 2)
    again = parse_measurements_csv(measurements_to_csv(table))
    assert [(m.instance, m.nodes, m.epoch_seconds) for m in again.instances] == [
        (m.instance, m.nodes, m.epoch_seconds) for m in table.instances]
    g1_again = again.get("g1")
    assert g1_again is not None
    assert g1_again.repeats == (1, 1)


def test_rows_are_sorted_by_nodes_and_whole_floats_accepted():
    g = parse_measurements_csv(b"\xef\xbb\xbfinstance,nodes,epoch_seconds\ng,4.0,3\ng,1,9\n")
    assert g.instances[0].nodes == (1, 4)
    assert g.instances[0].epoch_seconds == (9.0, 3.0)


def test_header_is_required():
    with pytest.raises(MeasurementsError) as info:
        parse_measurements_csv("g1,1,10\ng1,2,6\n", source="mine.csv")
    (problem,) = info.value.problems
    assert (problem.where, problem.field) == ("line 1", "(header)")
    assert "mine.csv" in str(info.value)
    assert "instance,nodes,epoch_seconds" in str(info.value)
    with pytest.raises(MeasurementsError, match="empty"):
        parse_measurements_csv("\n\n")
    with pytest.raises(MeasurementsError, match="no measurement rows"):
        parse_measurements_csv("instance,nodes,epoch_seconds\n")
    with pytest.raises(MeasurementsError, match="header"):
        parse_measurements_csv("instance,nodes,epoch_ms\ng1,1,10\n")


def test_every_malformed_row_is_reported_with_line_and_field():
    text = ("instance,nodes,epoch_seconds\n"
            "g1,1,10\n"          # line 2 fine
            ",2,5\n"             # line 3: instance
            "g1,0,5\n"           # line 4: nodes
            "g1,2.5,5\n"         # line 5: nodes
            "g1,3,-1\n"          # line 6: epoch_seconds
            "g1,3,nan\n"         # line 7: epoch_seconds
            "g1,3\n"             # line 8: field count
            "g1,x,inf\n")        # line 9: two fields
    with pytest.raises(MeasurementsError) as info:
        parse_measurements_csv(text)
    got = [(p.where, p.field, p.value) for p in info.value.problems]
    assert got == [
        ("line 3", "instance", ""),
        ("line 4", "nodes", "0"),
        ("line 5", "nodes", "2.5"),
        ("line 6", "epoch_seconds", "-1"),
        ("line 7", "epoch_seconds", "nan"),
        ("line 8", "(row)", "g1,3"),
        ("line 9", "nodes", "x"),
        ("line 9", "epoch_seconds", "inf"),
    ]


def test_unreadable_file_is_a_library_error(tmp_path):
    with pytest.raises(DeepVMError, match="cannot be read"):
        load_measurements(tmp_path / "missing.csv")
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(MeasurementsError, match="UTF-8"):
        load_measurements(bad)
