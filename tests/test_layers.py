"""The package layers, enforced on the import graph (README "Layout").

Every sensaopt module belongs to one layer; a module may import modules of its own
layer or of a lower one, never of a higher one. Every import counts: module-level,
function-level and ``if TYPE_CHECKING:`` ones. Lazy ``"module:attr"`` strings of a
:class:`sensaopt.registry.Registry` are not imports: they are how a higher layer
registers a plugin with a lower one (the rolling-horizon policies of
:mod:`sensaopt.exact.rolling` in :data:`sensaopt.policies.POLICIES`, the exact
solvers in :data:`sensaopt.solve.SOLVERS`), imported only when named.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "sensaopt"

# lowest first; a name is a module or a package (then every module below it; "sensaopt" itself: its __init__ only)
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("core", (
        "sensaopt.errors", "sensaopt.limits", "sensaopt.registry", "sensaopt.quiet", "sensaopt.palette",
        "sensaopt.profile_data", "sensaopt.profiles", "sensaopt.options", "sensaopt.instance", "sensaopt.datasets",
        "sensaopt.helios_data",  # files derived from HeliosData's data.zip (imports nothing of sensaopt)
        "sensaopt.solution_files",  # external solvers' solution files (imports only the core)
        "sensaopt.outputs", "sensaopt.io", "sensaopt.schedule", "sensaopt.changes", "sensaopt.progress", "sensaopt.validator",
        "sensaopt.metrics", "sensaopt.result", "sensaopt.generate",
        "sensaopt.memory",  # the command's size and the memory it needs (imports only the errors)
        "sensaopt.status", "sensaopt.result_checks",  # a solve's status; the rules of a result's JSON form (import only the core)
        "sensaopt.servable",  # unservable deadline jobs (imports only the core)
        "sensaopt.arguments",  # argument checks of the public API (imports only the core)
    )),
    # lower bounds from the instance alone (servable speeds, metrics' tolerances): no solver, no policy
    ("bounds", ("sensaopt.bounds",)),
    # reading and presenting results (no solver, no policy): a Result never imports them
    ("reports", ("sensaopt.compare", "sensaopt.frames", "sensaopt.plot", "sensaopt.tables")),
    ("solvers", ("sensaopt.solvers",)),
    ("policies / simulator", ("sensaopt.policies", "sensaopt.simulator", "sensaopt.config")),
    ("exact", ("sensaopt.exact", "sensaopt.solve", "sensaopt.roundtrip")),
    ("traces / sweep", ("sensaopt.traces", "sensaopt.sweep")),
    ("cli", ("sensaopt.cli", "sensaopt.__main__", "sensaopt")),
]


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def layer_of(module: str) -> int:
    """Index into LAYERS of ``module`` (the longest matching name wins)."""
    best, best_len = -1, -1
    for i, (_, names) in enumerate(LAYERS):
        for n in names:
            if (module == n or (n != "sensaopt" and module.startswith(n + "."))) and len(n) > best_len:
                best, best_len = i, len(n)
    assert best >= 0, f"{module} is in no layer: add it to LAYERS in tests/test_layers.py"
    return best


def _is_module(name: str) -> bool:
    p = PACKAGE.parent / name.replace(".", "/")
    return p.is_dir() or p.with_suffix(".py").exists()


def every_import(path: Path) -> set[str]:
    """sensaopt modules ``path`` imports anywhere (module level, in functions, under TYPE_CHECKING)."""
    tree = ast.parse(path.read_text())
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module.split(".")[0] == "sensaopt":
            subs = {f"{node.module}.{a.name}" for a in node.names if _is_module(f"{node.module}.{a.name}")}
            out |= subs
            if len(subs) < len(node.names):  # names defined in the module itself (not only its submodules)
                out.add(node.module)
        elif isinstance(node, ast.ImportFrom) and node.level > 0:  # relative: resolve against the module's package
            base = _module_name(path).split(".")
            base = base if path.name == "__init__.py" else base[:-1]
            base = base[: len(base) - (node.level - 1)]
            out.add(".".join(base + ([node.module] if node.module else [])))
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] == "sensaopt"}
    return out


def upward_imports() -> list[str]:
    bad = []
    for f in sorted(PACKAGE.rglob("*.py")):
        mod = _module_name(f)
        mine = layer_of(mod)
        for dep in sorted(every_import(f)):
            theirs = layer_of(dep)
            if theirs > mine:
                bad.append(f"{mod} ({LAYERS[mine][0]}) imports {dep} ({LAYERS[theirs][0]})")
    return bad


def test_no_module_imports_a_higher_layer() -> None:
    bad = upward_imports()
    assert not bad, "upward imports (README 'Layout'):\n" + "\n".join(bad)


def test_every_module_has_a_layer() -> None:
    for f in PACKAGE.rglob("*.py"):
        layer_of(_module_name(f))


def test_the_checker_sees_function_level_and_type_checking_imports(tmp_path: Path) -> None:
    f = tmp_path / "m.py"
    f.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from sensaopt.exact.model.data import ModelData\n"
                 "def g():\n    import sensaopt.simulator\n    from sensaopt.policies import make_policy\n")
    assert {"sensaopt.exact.model.data", "sensaopt.simulator", "sensaopt.policies"} <= every_import(f)
    assert layer_of("sensaopt.exact.model.data") > layer_of("sensaopt.solvers.highs") > layer_of("sensaopt.result")
    assert layer_of("sensaopt.policies.chronus.lease_model") < layer_of("sensaopt.exact.model.builder")
