"""Packaging: the committed instances ship in the package and load by name, and the
wheel works outside the repository — built, installed into a fresh venv, and run from a
temporary folder (a solve by name, `data list`, `data fetch` from a loopback mirror of
the shared traces, the README's trace example, and every user example of the README, the tour
and the pages that took the README's examples, docs/extending.md and docs/exact.md)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

import sensaopt
from sensaopt.datasets import DATA_FILES, MIRROR_ENV, TRACES_ENV, instance_names
from sensaopt.errors import InputError

from .conftest import INSTANCE_FILES
from .test_data_fetch import LoopbackServer, sha256, shared_folder

REPO = Path(__file__).resolve().parents[1]


# ---- instances by name ---------------------------------------------------------------------------
def test_every_committed_instance_is_packaged() -> None:
    assert instance_names() == sorted(p.stem for p in INSTANCE_FILES) and "tiny-8gpu" in instance_names()


@pytest.mark.parametrize("spec", ["tiny-8gpu", "tiny-8gpu.json", "instances/tiny-8gpu.json"])
def test_load_instance_by_name_from_anywhere(spec: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no instances/ folder here
    by_name = sensaopt.load_instance(spec)
    from_file = sensaopt.load_instance(REPO / "instances" / "tiny-8gpu.json")
    assert by_name.jobs == from_file.jobs and by_name.cluster == from_file.cluster and by_name.source == spec


def test_a_path_that_exists_wins_over_a_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copy(REPO / "instances" / "small-8gpu.json", tmp_path / "tiny-8gpu")
    monkeypatch.chdir(tmp_path)
    assert len(sensaopt.load_instance("tiny-8gpu").jobs) == 20  # the file here, not the packaged 5-job instance


def test_an_unknown_name_lists_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"^tiny-9gpu: \(file\): no such file, nor a packaged instance \(known: .*tiny-8gpu"):
        sensaopt.load_instance("tiny-9gpu")
    r = subprocess.run([sys.executable, "-m", "sensaopt", "solve", "tiny-9gpu"], cwd=tmp_path, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip().splitlines() == [f"error: tiny-9gpu: (file): no such file, nor a packaged instance (known: "
                                             f"{', '.join(instance_names())})"]


def test_every_subpackage_is_listed_in_pyproject() -> None:
    tomllib = pytest.importorskip("tomllib")
    cfg = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    on_disk = {".".join(p.parent.relative_to(REPO).parts) for p in (REPO / "sensaopt").rglob("__init__.py")}
    assert set(cfg["packages"]) == on_disk | {"sensaopt.instances"}, "add the new subpackage to [tool.setuptools] packages"
    assert cfg["package-dir"] == {"sensaopt.instances": "instances"}


# ---- the wheel, outside the repository -------------------------------------------------------------
def _run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    r = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, f"{' '.join(map(str, args))} exited {r.returncode}:\n{r.stdout}\n{r.stderr}"
    return r


def _build_wheel(tmp: Path) -> Path:
    """The wheel of a copy of the sources (so the build leaves nothing in the repository)."""
    for mod in ("setuptools", "wheel"):
        pytest.importorskip(mod, reason=f"{mod} builds the wheel (it comes with: pip install -e '.[test]')")
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, src / name)
    for name in ("sensaopt", "instances"):
        shutil.copytree(REPO / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    _run(sys.executable, "-m", "pip", "wheel", ".", "--no-deps", "--no-build-isolation", "-q", "-w", tmp / "dist", cwd=src)
    [wheel] = (tmp / "dist").glob("sensaopt-*.whl")
    return wheel


def outer_site_dirs() -> list[str]:
    """The site-packages folders the tests run with (a venv's and, under ``--system-site-packages``,
    the base interpreter's): where the wheel's dependencies are."""
    return [p for p in sys.path if Path(p).name in ("site-packages", "dist-packages") and Path(p).is_dir()]


def _reuse_dependencies(py: Path) -> None:
    """Make the test environment's dependencies importable in the new venv without its
    sensaopt: a ``.pth`` file lists its site-packages folders (appended after the venv's own;
    the ``.pth`` files inside them, such as an editable install's, are not run). A venv made
    with ``--system-site-packages`` from a venv's python sees the base interpreter's folder
    only, which lacks what the outer venv installed (typer, pandas, ...)."""
    r = _run(py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=py.parent)
    (Path(r.stdout.strip()) / "_sensaopt_test_deps.pth").write_text("".join(f"{d}\n" for d in outer_site_dirs()))


@dataclass(frozen=True)
class WheelEnv:
    """The wheel installed in a fresh venv: its python and sensaopt, a work folder outside
    the repository, the environment (user cache in ``cache``), the shared traces folder."""

    py: Path
    exe: Path
    venv: Path
    work: Path
    cache: Path
    env: dict[str, str]
    shared: Path


@pytest.fixture(scope="module")
def wheel_env(tmp_path_factory: pytest.TempPathFactory) -> WheelEnv:
    """About 7 s here: build ~4 s, venv ~3 s."""
    shared = shared_folder("chronus-slo")
    tmp = tmp_path_factory.mktemp("wheel")
    wheel = _build_wheel(tmp)
    venv = tmp / "venv"
    _run(sys.executable, "-m", "venv", venv, cwd=tmp)
    py, exe = venv / "bin" / "python", venv / "bin" / "sensaopt"
    _reuse_dependencies(py)
    _run(py, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--force-reinstall", wheel, cwd=tmp)
    work, cache = tmp / "work", tmp / "xdg-cache"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in (TRACES_ENV, MIRROR_ENV, "PYTHONPATH")}
    env["XDG_CACHE_HOME"] = str(cache)  # platformdirs' user cache on Linux
    env["MPLBACKEND"] = "Agg"
    return WheelEnv(py, exe, venv, work, cache, env, shared)


def test_wheel_runs_outside_the_repository(wheel_env: WheelEnv) -> None:
    py, exe, venv, work, cache, shared = wheel_env.py, wheel_env.exe, wheel_env.venv, wheel_env.work, wheel_env.cache, wheel_env.shared
    env = dict(wheel_env.env)

    r = _run(py, "-c", "import sensaopt; print(sensaopt.__file__); print(sensaopt.load_instance('tiny-8gpu').name)", cwd=work, env=env)
    where, name = r.stdout.split()
    assert Path(where).is_relative_to(venv) and name == "tiny-8gpu"

    r = _run(exe, "solve", "tiny-8gpu", "--policy", "edf", cwd=work, env=env)
    assert r.stdout.startswith("heuristic:edf: FEASIBLE, SLO violations ")

    r = _run(exe, "data", "list", cwd=work, env=env)
    assert f"`sensaopt data fetch` writes to {cache / 'sensaopt'}" in r.stdout and "present (" not in r.stdout
    assert "tiny-8gpu" in r.stdout.splitlines()[-1]

    with LoopbackServer(shared) as srv:
        env[MIRROR_ENV] = srv.url
        r = _run(exe, "data", "fetch", "chronus-slo", cwd=work, env=env)
    f = DATA_FILES["chronus-slo"]
    assert r.stdout.startswith(f"chronus-slo: fetched {srv.url}/{f.path} -> {cache / 'sensaopt' / f.path}")
    assert sha256(cache / "sensaopt" / f.path) == f.sha256

    r = _run(exe, "simulate", "--trace", "chronus-slo", "--preset", "philly-8", "--days", "0.2", "--policy", "edf", "--out-dir", "out", "-q",
             cwd=work, env=env)
    assert r.stdout.startswith("heuristic:edf: ") and any((work / "out").iterdir())


def _code_blocks(path: Path, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", path.read_text(), flags=re.S)


def _user_commands(block: str) -> list[str] | None:
    """The block's commands when every one is a `sensaopt` command (not a developer's
    pip/pytest/ruff/mkdocs line), continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n\s*", " ", block)
    cmds = [line.split("  #")[0].strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return cmds if cmds and all(c.startswith("sensaopt ") for c in cmds) else None


@pytest.mark.slow  # ~100 s on 2 cores: the same blocks run in this process in tests/test_readme.py and test_plot_tour.py
def test_readme_and_tour_run_from_the_wheel_after_data_fetch(wheel_env: WheelEnv, tmp_path: Path) -> None:
    """Every README and tour example a user runs (Python blocks and `sensaopt` command
    blocks) runs from the installed wheel in a folder outside the repository, after
    `sensaopt data fetch` from the loopback mirror; about 100 s here (exact solves)."""
    work = tmp_path / "docs-work"
    work.mkdir()
    env = dict(wheel_env.env, XDG_CACHE_HOME=str(tmp_path / "cache"))
    # every file the shared folder holds: all but HeliosData's zip and the logs extracted from it, whose real bytes
    # are not on this machine (the zip's route: tests/test_helios_data.py, on a synthetic zip)
    held = [f.name for f in DATA_FILES.values() if f.sha256 is not None]
    with LoopbackServer(wheel_env.shared) as srv:
        _run(wheel_env.exe, "data", "fetch", *held, cwd=work, env=dict(env, **{MIRROR_ENV: srv.url}))
    docs = [REPO / "README.md", REPO / "docs" / "tour.md", REPO / "docs" / "extending.md", REPO / "docs" / "exact.md"]
    ran = 0
    for doc in docs:
        for block in _code_blocks(doc, "bash"):
            for cmd in _user_commands(block) or []:
                argv = shlex.split(cmd.replace("/tmp/", f"{work}/"))
                _run(wheel_env.exe, *argv[1:], cwd=work, env=env)
                ran += 1
        for k, block in enumerate(_code_blocks(doc, "python")):
            script = work / f"{doc.stem}-{k}.py"
            script.write_text(block.replace("/tmp/", f"{work}/"))
            _run(wheel_env.py, script, cwd=work, env=env)
            ran += 1
    assert ran >= 15  # README, tour, extending, exact: their Python blocks and `sensaopt` command lines


@pytest.mark.slow
def test_a_policy_package_and_an_exported_model_from_the_wheel(wheel_env: WheelEnv, tmp_path: Path) -> None:
    """Outside the repository, with only the wheel: a policy from a separately installed
    package runs through `simulate`, and a model exported, solved by HiGHS and imported
    back is a valid schedule (about 30 s here; the same routes in this process:
    tests/test_plugins.py, tests/test_roundtrip.py)."""
    pytest.importorskip("setuptools", reason="building the policy package needs setuptools (no build isolation: offline)")
    from .test_plugins import POLICY_SOURCE, PYPROJECT

    src = tmp_path / "policy-src"
    (src / "sensaopt_demo_policy").mkdir(parents=True)
    (src / "pyproject.toml").write_text(PYPROJECT)
    (src / "sensaopt_demo_policy" / "__init__.py").write_text(POLICY_SOURCE)
    _run(wheel_env.py, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-build-isolation", src, cwd=tmp_path,
         env=wheel_env.env)
    work = tmp_path / "work"
    work.mkdir()
    r = _run(wheel_env.exe, "simulate", "--trace", "synthetic", "--jobs", "12", "--preset", "2x8", "--policy", "smallest-first",
             "--out-dir", "sim", cwd=work, env=wheel_env.env)
    assert r.stdout.startswith("heuristic:smallest-first: FEASIBLE") and (work / "sim" / "smallest-first.summary.json").is_file()

    _run(wheel_env.exe, "export", "tiny-16gpu", "-o", "tiny.mps", cwd=work, env=wheel_env.env)
    solve = ("import highspy; h = highspy.Highs(); h.setOptionValue('output_flag', False); h.setOptionValue('mip_rel_gap', 0.0); "
             "h.readModel('tiny.mps'); h.run(); h.writeSolution('tiny.sol', 0)")
    _run(wheel_env.py, "-c", solve, cwd=work, env=wheel_env.env)
    r = _run(wheel_env.exe, "import-solution", "tiny.mps", "tiny.sol", "-o", "schedule.json", cwd=work, env=wheel_env.env)
    assert r.stdout.startswith("schedule.json: valid (highs solution, Optimal): 6 jobs finished, 0 SLO violations, avg JCT 78.0 min")
    r = _run(wheel_env.exe, "validate", "tiny-16gpu", "schedule.json", cwd=work, env=wheel_env.env)
    assert r.stdout.startswith("valid: 6 jobs finished")


@pytest.mark.slow
def test_experiment_paper_runs_every_cell_from_the_wheel(wheel_env: WheelEnv, tmp_path: Path) -> None:
    """`experiment paper --scale 0.01` from the wheel after `data fetch` from the loopback mirror:
    every cell runs (one policy, one seed; about 45 s here)."""
    env = dict(wheel_env.env, XDG_CACHE_HOME=str(tmp_path / "cache"))
    held = [f.name for f in DATA_FILES.values() if f.sha256 is not None]
    with LoopbackServer(shared_folder(*held)) as srv:
        _run(wheel_env.exe, "data", "fetch", *held, cwd=tmp_path, env=dict(env, **{MIRROR_ENV: srv.url}))
    r = _run(wheel_env.exe, "experiment", "paper", "--scale", "0.01", "--seeds", "1", "--policy", "edf", "--serial", "-q", "--out-dir", "out",
             cwd=tmp_path, env=env, timeout=1200)
    assert r.stderr == "" and "12 runs: 0 reused, 12 computed, 0 failed, 0 missing" in r.stdout
    rows = (tmp_path / "out" / "runs.csv").read_text().splitlines()[1:]
    assert {tuple(x.split(",")[:3]) for x in rows} == {
        *((w, g, "synergy") for w in ("Philly SLO", "Philly MIX1", "Philly MIX2", "Helios") for g in ("8", "16")),
        *(("Philly SLO", g, shape) for shape in ("chronus", "alibaba") for g in ("8", "16"))}
