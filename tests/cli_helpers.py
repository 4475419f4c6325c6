"""Running ``deepvm`` in a test, one home: its exit code and output, secrets never shown, and
the golden files its output is compared with."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Sequence
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from deepvm_core.cli import main

GOLDEN_DIR = Path(__file__).parent / "golden"
#: ``DEEPVM_UPDATE_GOLDEN=1``: write the golden files instead of comparing (an intended change
#: of output only, said in the commit).
UPDATE = os.environ.get("DEEPVM_UPDATE_GOLDEN") == "1"


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str,
            secrets: Sequence[str] = ()) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of ``deepvm *argv`` (argparse errors exit by SystemExit);
    none of ``secrets`` in either."""
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    for secret in secrets:
        assert secret not in out
        assert secret not in err
    return code, out, err


def write_trace(tmp_path: Path, name: str, data: list[int], gap: float = 600) -> str:
    """The path of a new trace file ``name`` in ``tmp_path``: ``data`` ticks ``gap`` seconds
    apart."""
    path = tmp_path / name
    path.write_text(json.dumps({"metadata": {"gap_seconds": gap}, "data": data}))
    return str(path)


def cli_output(argv: Sequence[str]) -> str:
    """The stdout of ``deepvm *argv``, which must exit 0."""
    buf = io.StringIO()
    with redirect_stdout(buf):
        code = main(list(argv))
    assert code == 0, argv
    return buf.getvalue()


def cli_json(*argv: str) -> dict:
    """The JSON document ``deepvm *argv`` prints (it must exit 0)."""
    return json.loads(cli_output(argv))


def golden(name: str, text: str) -> str:
    """The text of the golden file ``name``, to compare ``text`` with in the test (under
    :data:`UPDATE`, ``text`` is written to it first)."""
    path = GOLDEN_DIR / name
    if UPDATE:
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"missing golden file {path.name}: run with DEEPVM_UPDATE_GOLDEN=1"
    return path.read_text(encoding="utf-8")
