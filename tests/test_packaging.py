"""deepvm_core installs and runs without the dashboard stack or boto3 (pyproject's extras)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

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
    assert core == {"numpy", "pulp", "scipy"}
    extras = project["optional-dependencies"]
    assert {d.split(">")[0] for d in extras["aws"]} == {"boto3"}
    assert {d.split(">")[0] for d in extras["dashboard"]} == {"streamlit", "plotly", "pandas"}
