"""Issue 27, hostile finding 4: ``deepvm catalog import`` checks what ``catalog validate``
checks, never ends in a traceback, bounds its time-out as a total deadline and never
overwrites a file without ``--force``. Every server here is on loopback."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from deepvm_core.cli import main

HEADER = ("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,"
          "SpotPrice,Region,AvailabilityZone\n")
ROWS = ["g5.xlarge,A10G,1.0,4.0,16.0,,1.006,0.30,us-east-1,use1-az1",
        "c5.xlarge,,,4.0,8.0,,0.17,0.07,us-east-1,use1-az1"]


def vms(tmp_path: Path, *extra: str) -> Path:
    path = tmp_path / "vms.csv"
    path.write_text(HEADER + "\n".join([*ROWS, *extra]) + "\n")
    return path


def run(capsys, source: str | Path, *options: str) -> tuple[int, str, str]:
    code = main(["catalog", "import", str(source), "--format", "skypilot", "--region",
                 "us-east-1", *options])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize(("row", "says", "refused"), [
    # implausible rows are left out and named (the import goes on):
    # spot 50x on-demand: 26.3 / 0.526 = 50
    ("g4dn.xlarge,T4,1.0,4.0,16.0,,0.526,26.3,us-east-1,use1-az1",
     "g4dn.xlarge: spot_usd_per_hour = 26.3: is above the on-demand price 0.526 USD/hour", False),
    ("g4dn.xlarge,T4,1.0,4.0,16.0,,0.526,1e-300,us-east-1,use1-az1",
     "g4dn.xlarge: spot_usd_per_hour = 1e-300: is 0.0% of the on-demand price 0.526 USD/hour",
     False),
    # malformed counts refuse the import, with the field and value
    ("p3.2xlarge,V100,1e20,8.0,61.0,,3.06,0.9,us-east-1,use1-az1",
     "AcceleratorCount '1e20' must be a whole number of GPUs from 1 to 64", True),
    ("p3.2xlarge,V100,0.5,8.0,61.0,,3.06,0.9,us-east-1,use1-az1",
     "AcceleratorCount '0.5' must be a whole number of GPUs from 1 to 64", True),
    ("p3.2xlarge,V100,1,8.5,61.0,,3.06,0.9,us-east-1,use1-az1",
     "vCPUs '8.5' must be a whole number", True),
])
def test_a_bad_row_is_left_out_or_refuses_the_import_and_is_named(
        tmp_path, capsys, row: str, says: str, refused: bool) -> None:
    out = tmp_path / "out"
    code, stdout, err = run(capsys, vms(tmp_path, row), "--date", "x", "--out", str(out))
    assert "Traceback" not in err
    if refused:
        assert code == 2
        assert says in err
        assert not out.exists()
        return
    assert code == 0
    assert says in stdout
    written = json.loads((out / "aws-us-east-1-x.json").read_text())
    assert [g["name"] for g in written["gpu_types"]] == ["g5.xlarge"]


def test_catalog_validate_refuses_1e20_gpus_per_vm(tmp_path, capsys) -> None:
    from deepvm_core.catalog.store import bundled_catalog_paths

    data = json.loads(bundled_catalog_paths()["aws-us-east-1-2025-h1"].read_text())
    data["gpu_types"][0]["gpu_count"] = 10**20
    path = tmp_path / "many.json"
    path.write_text(json.dumps(data))
    assert main(["catalog", "validate", str(path)]) == 2
    assert "gpu_count = 100000000000000000000: must be in (0, 64]" in capsys.readouterr().out


def test_no_traceback_on_hostile_options(tmp_path, capsys) -> None:
    source = vms(tmp_path)
    code, _, err = run(capsys, source, "--timeout", "1e300")
    assert code == 2
    assert "timeout = 1e+300: must be a number of seconds in (0, 3600]" in err
    code, _, err = run(capsys, "http://127.0.0.1:abc/vms.csv")
    assert code == 2
    assert "http://127.0.0.1:abc/vms.csv: not a valid address (nonnumeric port: 'abc')" in err
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    code, _, err = run(capsys, source, "--spot-advisor", str(deep))
    assert code == 2
    assert f"--spot-advisor {deep}: nested too deeply" in err
    code, _, err = run(capsys, source, "--date", "d" * 300)
    assert code == 2
    assert "date = 'dddd" in err
    assert "at most 40 characters" in err
    for text in (err,):
        assert "Traceback" not in text


@pytest.fixture
def dripping() -> Iterator[str]:
    """A loopback server that answers with headers, then one body byte every 2 s (for 12 s at
    most, then it closes the connection: a client without a deadline is not held forever)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                conn.recv(65536)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
                try:
                    for _ in range(6):
                        if stop.wait(2.0):
                            break
                        conn.sendall(b"x")
                except OSError:
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}/vms.csv"
    stop.set()
    thread.join(5)
    server.close()


def test_the_timeout_is_a_total_deadline(tmp_path, capsys, dripping: str) -> None:
    start = time.monotonic()
    code, _, err = run(capsys, dripping, "--timeout", "3", "--out", str(tmp_path / "o"))
    took = time.monotonic() - start
    assert code == 2
    assert "timed out after 3 s" in err
    assert took < 4.5


def test_out_existing_json_needs_force(tmp_path, capsys) -> None:
    target = tmp_path / "existing.json"
    target.write_text("{}\n")
    code, _, err = run(capsys, vms(tmp_path), "--date", "x", "--out", str(target))
    assert code == 2
    assert f"out = '{target}': exists; give --force to overwrite it" in err
    assert target.read_text() == "{}\n"
    code, _, _ = run(capsys, vms(tmp_path), "--date", "x", "--out", str(target), "--force")
    assert code == 0
    assert json.loads(target.read_text())["name"] == "aws-us-east-1-x"


def test_the_docs_say_import_writes_to_the_per_user_folder() -> None:
    text = (Path(__file__).resolve().parent.parent / "docs" / "cli.md").read_text()
    section = text[text.index("deepvm catalog import vms.csv"):]
    section = section[:section.index("Launch what you chose")]
    assert "data/catalogs/fetched" not in section
    assert "per-user folder's `catalogs/fetched/`" in section
