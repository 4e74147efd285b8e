"""Code checks on sensaopt/: ruff and mypy (settings in pyproject.toml, see README "Code checks"),
and no import cycle between sensaopt's modules."""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "sensaopt"


def _run_tool(module: str, *args: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (it comes with: pip install -e '.[test]')")
    proc = subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"`{module} {' '.join(args)}` found problems:\n{proc.stdout}{proc.stderr}"


def test_ruff_is_clean() -> None:
    _run_tool("ruff", "check", "--output-format", "concise", "sensaopt")


def test_mypy_is_clean() -> None:
    _run_tool("mypy", "sensaopt")


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def _runtime_imports(path: Path, modules: set[str]) -> set[str]:
    """sensaopt modules that ``path`` imports when run (in functions too; not under TYPE_CHECKING)."""
    tree = ast.parse(path.read_text())
    typing_only = {
        id(n)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for stmt in node.body
        for n in ast.walk(stmt)
    }
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module.split(".")[0] == "sensaopt":
            out |= {f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module for a in node.names}
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] == "sensaopt"}
    return out


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` (module -> imported modules), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for d in sorted(graph.get(m, ())):
            if state.get(d) == 1:
                return path[path.index(d):] + [d]
            if d not in state and (found := visit(d)) is not None:
                return found
        path.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state and (found := visit(m)) is not None:
            return found
    return None


def test_no_import_cycles() -> None:
    files = sorted(PACKAGE.rglob("*.py"))
    modules = {_module_name(f) for f in files}
    # a package's __init__ importing its own submodules is not a cycle for its submodules to worry about:
    # only edges between modules that are not a package and its descendants count
    graph = {
        _module_name(f): {d for d in _runtime_imports(f, modules) if not d.startswith(_module_name(f) + ".") and d != _module_name(f)}
        for f in files
    }
    assert "sensaopt.io" not in graph["sensaopt.schedule"]
    assert _cycle(graph) is None, f"import cycle: {' -> '.join(_cycle(graph) or [])}"


def test_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
