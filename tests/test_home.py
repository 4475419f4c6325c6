"""Where the user's catalogs go (``deepvm_core.home``): ``$DEEPVM_HOME``, the specific variables,
the platform's per-user folder; and never into the source tree."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from deepvm_core import home
from deepvm_core.catalog import store
from deepvm_core.cli.fetch import main as fetch_main
from deepvm_core.cloud.aws.fetch import write_fetched_catalogs
from deepvm_core.errors import FetchError

REPO = Path(__file__).resolve().parents[1]
SPECIFIC = ("DEEPVM_USER_CATALOG_DIR", "DEEPVM_FETCHED_CATALOG_DIR", "DEEPVM_UPLOAD_CATALOG_DIR")


@pytest.fixture
def only_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``DEEPVM_HOME`` set to a fresh folder, none of the specific variables set."""
    for name in SPECIFIC:
        monkeypatch.delenv(name, raising=False)
    folder = tmp_path / "deepvm-home"
    monkeypatch.setenv("DEEPVM_HOME", str(folder))
    return folder


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def test_deepvm_home_holds_user_fetched_and_uploaded_catalogs(only_home: Path, aws_catalog):
    store.save_user_catalog(aws_catalog, "mine")
    write_fetched_catalogs([aws_catalog], [store.fetched_dir() / "aws-us-east-1-x.json"])
    key = store.save_upload(aws_catalog)
    assert _files(only_home) == sorted([
        "catalogs/user/mine.json",
        "catalogs/fetched/aws-us-east-1-x.json",
        f"catalogs/uploads/{aws_catalog.sha256}.json",
    ])
    assert store.load_upload(key) == aws_catalog
    kinds = {(e.kind, e.name) for e in store.list_catalogs()}
    assert {("user", "mine"), ("fetched", "aws-us-east-1-x")} <= kinds


def test_specific_variables_take_precedence_over_deepvm_home(only_home: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             aws_catalog):
    for name, folder in zip(SPECIFIC, ("u", "f", "up"), strict=True):
        monkeypatch.setenv(name, str(tmp_path / folder))
    assert (store.user_dir(), store.fetched_dir(), store.uploads_dir()) == (
        tmp_path / "u", tmp_path / "f", tmp_path / "up")
    path = store.save_user_catalog(aws_catalog, "mine")
    assert path == tmp_path / "u" / "mine.json"
    assert not only_home.exists()


def test_xdg_data_home_is_used_when_nothing_is_set(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch, aws_catalog):
    if not sys.platform.startswith("linux"):
        pytest.skip("XDG_DATA_HOME is the Linux convention")
    for name in (*SPECIFIC, "DEEPVM_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert store.user_dir() == tmp_path / "xdg" / "deepvm-studio" / "catalogs" / "user"
    store.save_user_catalog(aws_catalog, "mine")
    assert _files(tmp_path / "xdg") == ["deepvm-studio/catalogs/user/mine.json"]


def test_home_local_share_is_used_without_xdg_data_home(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch):
    if not sys.platform.startswith("linux"):
        pytest.skip("~/.local/share is the Linux default")
    for name in (*SPECIFIC, "DEEPVM_HOME", "XDG_DATA_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    base = tmp_path / ".local" / "share" / "deepvm-studio" / "catalogs"
    assert (store.user_dir(), store.fetched_dir(), store.uploads_dir()) == (
        base / "user", base / "fetched", base / "uploads")


def test_asking_for_a_folder_creates_nothing(only_home: Path):
    store.user_dir(), store.fetched_dir(), store.uploads_dir(), store.list_catalogs()
    assert not only_home.exists()


def test_writing_into_the_bundled_data_is_refused(aws_catalog):
    target = store.bundled_catalog_paths()["aws-us-east-1-2023-10"]
    folder = target.parent
    before = target.read_bytes()
    with pytest.raises(FetchError, match="bundled"):
        write_fetched_catalogs([aws_catalog], [target])
    with pytest.raises(FetchError, match="bundled"):  # a subfolder of the bundled data too
        write_fetched_catalogs([aws_catalog], [folder / "fetched" / "x.json"])
    assert target.read_bytes() == before
    assert not (folder / "fetched").exists()


# ----------------------------------------------------------------------------- source tree


def _source_tree() -> tuple[list[tuple[str, int, int]], str]:
    """Every file of the package and of data/ (size, mtime) outside Python caches, and
    ``git status`` of the checkout (untracked and ignored files included) outside caches."""
    files = [(str(p.relative_to(REPO)), p.stat().st_size, p.stat().st_mtime_ns)
             for top in ("data", "deepvm_core") for p in sorted((REPO / top).rglob("*"))
             if p.is_file() and "__pycache__" not in p.parts]
    status = ""
    if shutil.which("git") and (REPO / ".git").exists():
        status = subprocess.run(
            ["git", "status", "--porcelain", "--ignored", "--", "data", "deepvm_core"],
            cwd=REPO, capture_output=True, text=True, check=True).stdout
        status = "\n".join(line for line in status.splitlines() if "__pycache__" not in line)
    return files, status


@pytest.mark.usefixtures("aws_env")
def test_saving_through_the_store_and_the_cli_leaves_the_source_tree_untouched(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, aws_catalog, capsys):
    for name in SPECIFIC:
        monkeypatch.delenv(name, raising=False)
    deepvm_home = tmp_path / "deepvm-home"
    monkeypatch.setenv("DEEPVM_HOME", str(deepvm_home))
    before = _source_tree()
    store.save_user_catalog(aws_catalog, "mine")
    store.save_upload(aws_catalog)
    code = fetch_main(["--region", "us-east-1", "--max-attempts", "1"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    fetched = sorted((deepvm_home / "catalogs" / "fetched").glob("aws-us-east-1-*.json"))
    assert len(fetched) == 1
    assert str(fetched[0]) in captured.out
    assert (deepvm_home / "catalogs" / "user" / "mine.json").is_file()
    assert len(list((deepvm_home / "catalogs" / "uploads").glob("*.json"))) == 1
    assert _source_tree() == before


@pytest.mark.usefixtures("only_home")
def test_fetch_help_names_the_per_user_folder(capsys):
    assert fetch_main(["--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "data/catalogs" not in out
    assert "$DEEPVM_FETCHED_CATALOG_DIR, else $DEEPVM_HOME/catalogs/fetched" in out


def test_the_home_variable_is_named_once():
    assert home.HOME_VARIABLE == "DEEPVM_HOME"
    assert [v for _, v in home.CATALOG_DIRS.values()] == list(SPECIFIC)
    assert os.environ.get("DEEPVM_HOME")  # the test session itself is isolated (conftest)
