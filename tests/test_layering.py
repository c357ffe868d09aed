"""Imports between nanotile's packages flow one way (DESIGN.md, "Package layout").

Every ``import`` and ``from ... import`` in the package, at module level or inside a
function, is read from the source (ast), mapped to the package it names, and the
package graph must have no cycle. Modules at the top of nanotile/ (the command-line
tools, the public API, diagnostics) stand outside the layering: the tools may import
anything; the packages may import only ``nanotile.diagnostics``, ``nanotile.knobs`` and
``nanotile.loader`` from the top. A package's ``__main__`` is a program, not a module
other code imports, so its imports do not count.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "nanotile"
# top-level modules a package may import (leaf utilities below every package)
SHARED_TOP = {"diagnostics", "internal_error", "knobs", "loader"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(path: Path) -> list[str]:
    """Absolute names of the nanotile modules ``path`` imports."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    here = _module_name(path).split(".")
    if path.name != "__init__.py":
        here = here[:-1]  # the package the module is in
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names if a.name.startswith("nanotile")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[:len(here) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            elif (node.module or "").startswith("nanotile"):
                target = node.module or ""
            else:
                continue
            names.append(target)
            if node.module is None or node.level:  # from . import x: x may be a module
                names += [f"{target}.{a.name}" for a in node.names]
    return names


def _package_of(module: str) -> str | None:
    """``nanotile.targets.ptx.ir`` -> ``targets``; a top-level module -> None."""
    parts = module.split(".")
    if len(parts) < 2:
        return None
    if (PACKAGE / parts[1]).is_dir():
        return parts[1]
    return None


def package_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        source = _package_of(_module_name(path))
        if source is None or path.name == "__main__.py":
            continue
        for name in _imported(path):
            target = _package_of(name)
            if target is not None and target != source:
                graph.setdefault(source, set()).add(target)
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph (a list of packages), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)) is not None:
            return found
    return None


def test_packages_import_each_other_without_cycles():
    graph = package_graph()
    assert graph, "no imports found: the scan is broken"
    cycle = _cycle(graph)
    assert cycle is None, "import cycle between packages: " + " -> ".join(cycle)


def test_packages_do_not_import_the_tools():
    """Only diagnostics, internal_error, knobs and loader of the top-level modules are
    below the packages."""
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if _package_of(_module_name(path)) is None or path.name == "__main__.py":
            continue
        for name in _imported(path):
            parts = name.split(".")
            if len(parts) == 2 and _package_of(name) is None and parts[1] not in SHARED_TOP \
                    and (PACKAGE / f"{parts[1]}.py").exists():
                offenders.append(f"{_module_name(path)} imports {name}")
    assert not offenders, offenders


@pytest.mark.parametrize("oracle", ["interp", "ptxemu"])
def test_the_oracles_never_call_the_compiler(oracle):
    """interp and ptxemu check the compiler; they import neither passes nor targets."""
    graph = package_graph()
    assert not graph.get(oracle, set()) & {"passes", "targets", "egraph"}


def test_the_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": {"c"}}) is None
