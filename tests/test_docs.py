"""The documentation site (mkdocs.yml): ``mkdocs build --strict`` passes, every page is there
(README as home, docs/, models/, benchmarks/, one API page per public module), repository-relative
links point at the built pages, and a broken link fails the build."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import REPO


def _missing() -> list[str]:
    """The docs build's packages that are not installed (mkdocs, mkdocstrings, its Python handler)."""
    out = []
    for mod in ("mkdocs", "mkdocstrings", "mkdocstrings_handlers.python", "yaml"):
        try:
            found = importlib.util.find_spec(mod) is not None
        except ModuleNotFoundError:  # the parent package is missing
            found = False
        if not found:
            out.append(mod)
    return out


MISSING = _missing()
pytestmark = pytest.mark.skipif(bool(MISSING), reason=f"the docs build needs the [test] extra ({', '.join(MISSING)} not installed)")


def hooks():
    spec = importlib.util.spec_from_file_location("sensaopt_docs_hooks", REPO / "docs" / "api" / "hooks.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
                          cwd=config.parent, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    proc = build(REPO / "mkdocs.yml", out)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return out


def test_strict_build_has_every_page(site):
    home = (site / "index.html").read_text()
    assert "A research toolkit" in home  # the README
    for page in ("tour", "concepts", "traces", "extending", "exact", "results", "performance", "development", "reliability",
                 "experiments", "benchmarks", "models/formulation", "models/sensascale", "models/chronus", "models/costs",
                 "models/measurements", "api"):
        assert (site / page / "index.html").is_file(), page
    modules = hooks().public_modules(REPO)
    assert {"sensaopt", "sensaopt.solve", "sensaopt.plot", "sensaopt.palette", "sensaopt.exact.model.builder"} <= set(modules)
    assert not [m for m in modules if m.startswith("sensaopt.cli") or "._" in m]
    for m in modules:
        assert (site / "api" / m / "index.html").is_file(), m
    # the public API only: no page for the solver layers or the policies' parts
    internal = ("sensaopt.exact.cpsat", "sensaopt.exact.phases.allocation", "sensaopt.solvers.highs", "sensaopt.policies.chronus.lease",
                "sensaopt.sweep.paper", "sensaopt.quiet", "sensaopt.limits")
    assert not [m for m in internal if m in modules or (site / "api" / m).exists()]


def test_the_api_pages_are_what_the_packages_export(site):
    h = hooks()
    ex = h.exports(REPO, "sensaopt")
    import sensaopt

    assert set(ex) == set(sensaopt.__all__)  # read from the source, the same as the import gives
    assert ex["gap_frame"] == "sensaopt.frames" and ex["load_instance"] == "sensaopt.io"  # lazy and eager imports
    assert ex["PartBounds"] == "sensaopt.result"  # re-exported by sensaopt.compare: documented where it is defined
    assert set(h.public_modules(REPO)) >= set(ex.values()) - {"sensaopt"}
    assert h.exports(REPO, "sensaopt.policies.chronus")["ChronusPolicy"] == "sensaopt.policies.chronus.policy"  # relative import
    top = (site / "api" / "sensaopt" / "index.html").read_text()
    assert 'href="../sensaopt.io/#sensaopt.io.load_instance"' in top  # the export table links each name to its page


def test_api_pages_show_google_style_parameter_tables(site):
    plot = (site / "api" / "sensaopt.plot" / "index.html").read_text()
    gantt = plot[plot.index('id="sensaopt.plot.gantt"'):]
    gantt = gantt[:gantt.index('id="sensaopt.plot.', 30)]
    assert "Parameters:" in gantt and "<table" in gantt  # a parameter table
    assert "<code>window</code>" in gantt and "minutes" in gantt and "Returns:" in gantt


def test_api_pages_render_the_docstrings_and_link_the_cited_objects(site):
    solve = (site / "api" / "sensaopt.solve" / "index.html").read_text()
    assert "Solve <code>instance</code> with the named solver" in solve and "register_solver" in solve
    plot = (site / "api" / "sensaopt.plot" / "index.html").read_text()
    assert 'href="../sensaopt.palette/#sensaopt.palette.policy_color"' in plot  # :func:`sensaopt.palette.policy_color`
    assert ":func:" not in plot


def test_repository_links_point_at_site_pages(site):
    home = (site / "index.html").read_text()
    assert 'href="traces/"' in home and 'href="models/chronus/"' in home and 'href="benchmarks/"' in home  # docs/traces.md, ...
    assert 'href="results/#full-philly-slo-trace"' in home  # a headline figure links to its section of the moved results
    results = (site / "results" / "index.html").read_text()
    assert 'href="../models/measurements/"' in results  # ../models/measurements.md from docs/results.md
    h = hooks()
    outside = {"README.md": "index.md", "models/chronus.md": "models/chronus.md"}
    md = "[a](docs/traces.md#sweeps) [b](models/chronus.md) [c](sensaopt/plot.py) [d](https://x.org/docs/a.md) [e](#top)"
    assert h.rewrite_links(md, "README.md", "index.md", "docs", outside) == (
        "[a](traces.md#sweeps) [b](models/chronus.md) [c](sensaopt/plot.py) [d](https://x.org/docs/a.md) [e](#top)")
    assert h.rewrite_links("[r](../README.md) [t](../docs/tour.md)", "models/chronus.md", "models/chronus.md", "docs", outside) == (
        "[r](../index.md) [t](../tour.md)")
    assert h.rewrite_links("[c](../models/chronus.md)", "docs/tour.md", "tour.md", "docs", outside) == "[c](models/chronus.md)"


def test_a_broken_link_fails_the_strict_build(tmp_path):
    import yaml

    cfg = yaml.safe_load((REPO / "mkdocs.yml").read_text())
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "other.md").write_text("# Other\n")
    cfg.update(docs_dir=str(docs), hooks=[str(REPO / "docs" / "api" / "hooks.py")], plugins=["search"],
               nav=[{"Home": "index.md"}, {"Other": "other.md"}])
    config = tmp_path / "mkdocs.yml"
    config.write_text(yaml.safe_dump(cfg))
    (docs / "index.md").write_text("# Home\n\nSee [the other page](other.md).\n")
    ok = build(config, tmp_path / "site")
    assert ok.returncode == 0, ok.stderr[-2000:]
    (docs / "index.md").write_text("# Home\n\nSee [a page that is not there](missing.md).\n")
    bad = build(config, tmp_path / "site2")
    assert bad.returncode != 0 and "missing.md" in bad.stderr
