"""Atomic writes (deepvm_core.files): the target gets the whole content or keeps its old one,
and no temporary file stays behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepvm_core.files import write_bytes_atomic, write_json_atomic


def test_json_is_indented_with_a_final_newline(tmp_path: Path) -> None:
    target = write_json_atomic(tmp_path / "sub" / "a.json", {"b": [1, 2]})
    assert target.read_text() == '{\n  "b": [\n    1,\n    2\n  ]\n}\n'
    assert sorted(p.name for p in target.parent.iterdir()) == ["a.json"]


def test_a_failed_rename_keeps_the_old_target_and_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "taken"
    target.mkdir()  # a folder: os.replace of a file over it fails
    (target / "keep").write_text("x")
    with pytest.raises(IsADirectoryError):
        write_bytes_atomic(target, b"new")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]
    assert (target / "keep").read_text() == "x"


def test_overwrite_replaces_the_whole_content(tmp_path: Path) -> None:
    target = tmp_path / "f.bin"
    target.write_bytes(b"old content, longer than the new one")
    write_bytes_atomic(target, b"new")
    assert target.read_bytes() == b"new"
