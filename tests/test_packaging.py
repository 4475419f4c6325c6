"""deepvm_core installs and runs without the dashboard stack or boto3 (pyproject's extras),
and as a wheel installed outside the repository, with its bundled data (``data/``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Run in a fresh interpreter where the optional packages cannot be imported at all.
_BLOCKED = ("streamlit", "plotly", "pandas", "boto3", "botocore")
_SCRIPT = f"""
import importlib, pkgutil, sys

class _Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {_BLOCKED!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}} (blocked by the test)")
        return None

sys.meta_path.insert(0, _Block())
import deepvm_core
for info in pkgutil.walk_packages(deepvm_core.__path__, "deepvm_core."):
    importlib.import_module(info.name)
from deepvm_core.cli import main
sys.exit(main(["recommend", "--catalog", "aws-us-east-1-2023-10", "--pw", "3"]))
"""


def test_core_imports_and_recommends_without_optional_packages() -> None:
    result = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True,
                            cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "17 x g4dn.xlarge" in result.stdout


def test_optional_stacks_are_extras_not_core_dependencies() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = {dep.split(">")[0].split("=")[0] for dep in project["dependencies"]}
    assert core == {"numpy", "platformdirs", "pulp", "scipy"}
    extras = project["optional-dependencies"]
    assert {d.split(">")[0] for d in extras["aws"]} == {"boto3"}
    assert {d.split(">")[0] for d in extras["dashboard"]} == {"streamlit", "plotly", "pandas"}


# ----------------------------------------------------------------------------- the wheel

#: What a wheel is built from (a copy, so that building writes nothing into the checkout).
_SOURCES = ("pyproject.toml", "setup.py", "README.md", "deepvm_core", "data")
#: The bundled files the package needs, as they are in the repository.
_BUNDLED = sorted([*(ROOT / "data" / "catalogs").glob("*.json"),
                   *(ROOT / "data" / "measurements").glob("*.csv")])


@dataclass(frozen=True)
class Installed:
    """A wheel built from a copy of the sources and installed with ``pip --target``."""

    wheel: Path
    target: Path


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    for name in _SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(ROOT / name, src / name)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input"]
    offline = ["--no-deps", "--no-index", "--no-cache-dir"]
    built = subprocess.run([*pip, "wheel", *offline, "--no-build-isolation", "-w",
                            str(tmp / "dist"), str(src)],
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = (tmp / "dist").glob("deepvm_studio-*.whl")
    target = tmp / "site"
    done = subprocess.run([*pip, "install", *offline, "--target", str(target), str(wheel)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return Installed(wheel, target)


def _run_installed(installed: Installed, tmp_path: Path, *args: str) -> str:
    """``deepvm ARGS`` of the installed wheel (its console script), with the current directory
    a temporary one and the checkout out of reach: ``python -S`` skips the venv's .pth files
    (the editable install), and the path holds only the target and the venv's site-packages
    (numpy, scipy, pulp, platformdirs)."""
    libs = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONPATH"] = os.pathsep.join([str(installed.target), *sorted(libs)])
    env["DEEPVM_HOME"] = str(tmp_path / "home")
    cwd = tmp_path / "elsewhere"
    cwd.mkdir(exist_ok=True)
    result = subprocess.run([sys.executable, "-S", str(installed.target / "bin" / "deepvm"),
                             *args], capture_output=True, text=True, cwd=cwd, env=env,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert ROOT.name not in result.stdout.replace(installed.target.name, "")  # no repo path
    return result.stdout


def test_the_checkout_has_bundled_files() -> None:
    """The test below checks each of them: it must not pass on an empty list."""
    assert len(_BUNDLED) >= 3  # 2 catalogs + 1 measurements file at the time of writing


def test_wheel_ships_the_bundled_data(installed: Installed) -> None:
    names = set(zipfile.ZipFile(installed.wheel).namelist())
    for path in _BUNDLED:
        inside = f"deepvm_core/bundled_data/{path.relative_to(ROOT / 'data').as_posix()}"
        assert inside in names
        assert (installed.target / inside).read_bytes() == path.read_bytes()
    assert "deepvm_core/bundled_data/README.md" in names
    assert not [n for n in names if n.startswith("data/") or "__pycache__" in n]


def test_installed_wheel_recommends_from_elsewhere(installed: Installed, tmp_path: Path) -> None:
    out = _run_installed(installed, tmp_path, "recommend", "--catalog", "aws-us-east-1-2023-10",
                         "--pw", "3")
    # The paper's Table IV at PW 3: 17 g4dn.xlarge spot (0.1578 USD/h each) and a c5.xlarge
    # on-demand memory node (0.17 USD/h): 17 * 0.1578 + 0.17 = 2.6826 + 0.17 = 2.8526 USD/h.
    assert "Best Tiering: TR: 17 x g4dn.xlarge spot + 1 x c5.xlarge, 2.8526 USD/h" in out


def test_installed_wheel_plans_with_bundled_measurements(installed: Installed,
                                                         tmp_path: Path) -> None:
    out = _run_installed(installed, tmp_path, "plan", "--catalog", "aws-us-east-1-2023-10",
                         "--pw", "3", "--epochs", "30", "--epoch-seconds", "61.16",
                         "--ref-type", "g4dn.xlarge", "--speedup", "measured",
                         "--measurements", "deepvm-scaling")
    # The cheapest job: one g5.xlarge spot (0.3018 USD/h) with a t3.xlarge on-demand memory
    # node (0.1664 USD/h): 0.3018 + 0.1664 = 0.4682 USD/h.
    assert "Chosen: TR: 1 x g5.xlarge spot + 1 x t3.xlarge, 0.4682 USD/h" in out
    measurements = installed.target / "deepvm_core" / "bundled_data" / "measurements"
    # a bundled table is named by its name (issue 18); run from elsewhere, it can only have been
    # read from the installed wheel
    assert "speedup measured (deepvm-scaling)" in out
    assert (measurements / "deepvm-scaling.csv").is_file()
    assert not (tmp_path / "home").exists()  # planning writes nothing
