"""The folders of deepvm_core are layers: a module imports only from its own layer or the ones
before it (docs/architecture.md, "Layout"). A new import that reaches up (say the catalog
importing the job model) fails here, and so does a top-level module or folder that is not in
the list."""

from __future__ import annotations

import ast
from pathlib import Path

import deepvm_core

#: The layers, lowest first (docs/architecture.md, "Layout").
LAYERS = ("errors", "units", "arrays", "defaults", "files", "bundled", "home", "catalog",
          "model", "search", "recommend", "job", "traces", "io", "cloud", "cli")
# The base modules import each other freely.
BASE = {"errors", "units", "arrays", "defaults", "files", "bundled", "home"}
PACKAGE = Path(deepvm_core.__file__).parent


def _layer(module: str) -> int:
    parts = module.split(".")
    name = parts[1] if len(parts) > 1 else ""
    if name in BASE:
        return 0
    return LAYERS.index(name)


def test_every_top_level_name_is_a_layer() -> None:
    names = {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    names |= {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert names <= set(LAYERS), names - set(LAYERS)


def test_no_module_imports_a_later_layer() -> None:
    reaching_up = []
    for path in PACKAGE.rglob("*.py"):
        module = ".".join(("deepvm_core", *path.relative_to(PACKAGE).with_suffix("").parts))
        if module.endswith(".__init__"):
            module = module.removesuffix(".__init__")
        if module == "deepvm_core":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.ImportFrom) and node.module
                    and node.module.startswith("deepvm_core.")
                    and _layer(node.module) > _layer(module)):
                reaching_up.append(f"{module} imports {node.module}")
    assert reaching_up == []
