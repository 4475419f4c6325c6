"""The folders of deepvm_core are layers, and the dashboard sits on top of them
(docs/architecture.md, "Layers"): a module imports only from its own layer or the ones before
it, the dashboard never imports the command line, and no group of modules imports itself in a
loop (``a -> b -> a``), inside a layer or across. A new import that reaches up (say the catalog
importing the job model), a top-level module or folder that is not in the list, or a loop fails
here."""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

import pytest

import deepvm_core

#: The layers of deepvm_core, lowest first (docs/architecture.md, "Layers").
LAYERS = ("base", "catalog", "model", "hardware", "workload", "market", "search", "recommend",
          "job", "pipeline", "io", "cloud", "cli")
#: The base modules import each other freely (errors, units, ...: no domain logic).
BASE = {"errors", "units", "arrays", "defaults", "files", "downloads", "bundled", "home", "text"}
PACKAGE = Path(deepvm_core.__file__).parent
DASHBOARD = PACKAGE.parent / "dashboard"


def _layer(module: str) -> int:
    parts = module.split(".")
    name = parts[1] if len(parts) > 1 else ""
    if name in BASE:
        return 0
    return LAYERS.index(name)


def _module_name(path: Path, root: Path, package: str) -> str:
    module = ".".join((package, *path.relative_to(root).with_suffix("").parts))
    return module.removesuffix(".__init__")


@functools.cache
def _modules() -> tuple[tuple[str, Path], ...]:
    return tuple((_module_name(path, root, package), path)
                 for root, package in ((PACKAGE, "deepvm_core"), (DASHBOARD, "dashboard"))
                 for path in sorted(root.rglob("*.py")))


@functools.cache
def _known() -> frozenset[str]:
    return frozenset(name for name, _ in _modules())


def _imports(path: Path, module: str) -> Iterator[str]:
    """The project modules ``path`` imports (``from a.b import c`` gives ``a.b.c`` when that is
    a module, else ``a.b``), at any depth of the file (functions too)."""
    known = _known()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, base] if base else parent)
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base
                       for a in node.names]
        elif isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        for target in targets:
            if target in known and target != module:
                yield target


@functools.cache
def _graph() -> dict[str, set[str]]:
    return {module: set(_imports(path, module)) for module, path in _modules()}


def test_every_top_level_name_is_a_layer() -> None:
    names = {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    names |= {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert names <= set(LAYERS) | BASE, names - set(LAYERS) - BASE


def test_no_module_imports_a_later_layer() -> None:
    reaching_up = [f"{module} imports {target}"
                   for module, targets in _graph().items() if module.startswith("deepvm_core.")
                   for target in sorted(targets)
                   if module != "deepvm_core" and target.startswith("deepvm_core.")
                   and _layer(target) > _layer(module)]
    assert reaching_up == []


def test_the_dashboard_never_imports_the_command_line() -> None:
    graph = _graph()
    into_cli = [f"{module} imports {target}" for module, targets in graph.items()
                if module.startswith("dashboard") for target in sorted(targets)
                if target.startswith("deepvm_core.cli")]
    assert into_cli == []


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_loop() -> None:
    # a -> b -> c -> a is one loop; d -> a is not part of it
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def _package_parents(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The graph without the edges from a package to its own modules and back: a package's
    ``__init__`` naming its modules is not a loop of ideas."""
    return {module: {t for t in targets
                     if not t.startswith(module + ".") and not module.startswith(t + ".")}
            for module, targets in graph.items()}


def test_no_loops_in_core_or_dashboard() -> None:
    assert _cycles(_package_parents(_graph())) == []


@pytest.mark.parametrize("module", ["deepvm_core.cli", "deepvm_core.pipeline"])
def test_the_layers_listed_exist(module: str) -> None:
    assert module in _known()
