"""MkDocs hooks (mkdocs.yml ``hooks:``): pages that live outside ``docs/`` join the site, and
every public module of sensaopt gets an API reference page.

* ``README.md`` becomes the home page, ``models/*.md`` the Models section and
  ``benchmarks/README.md`` the Performance page; they are read from where they are, nothing is
  copied into ``docs/``.
* Links are written for browsing the repository (``docs/traces.md`` from the README,
  ``../models/chronus.md`` from a docs page): each relative link to a page of the site is
  rewritten to that page's place in the site; any other relative link is left alone, so
  ``mkdocs build --strict`` reports it.
* ``api/<module>.md`` (``::: <module>``, rendered by mkdocstrings) for the public API only
  (:func:`public_modules`): the packages of :data:`PUBLIC_PACKAGES` (their page lists what
  their ``__all__`` exports, each name linked to where it is documented), every module that
  defines one of those names, and the modules of :data:`PUBLIC_MODULES`; they are appended to
  the "API reference" section of the nav. Internal modules (the solver layers, the policies'
  parts, the command line, documented by ``sensaopt --help``) get no page. Docstrings cite objects in Sphinx's style
  (``:func:`sensaopt.frames.outcomes_frame```): the role is dropped and the name becomes a
  link when mkdocstrings knows it (an optional autorefs cross-reference), else stays code.
"""

from __future__ import annotations

import ast
import json
import posixpath
import re
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

API_SECTION = "API reference"
MODELS_SECTION = "Models"
PUBLIC_PACKAGES = ("sensaopt", "sensaopt.policies", "sensaopt.policies.sensascale", "sensaopt.policies.chronus",
                   "sensaopt.traces", "sensaopt.sweep", "sensaopt.bounds", "sensaopt.allocations")
"""Packages whose ``__all__`` is public API (``import sensaopt``, the policy protocol, traces, sweeps, bounds,
the valid allocations)."""
PUBLIC_MODULES = ("sensaopt.plot", "sensaopt.palette", "sensaopt.profiles", "sensaopt.datasets", "sensaopt.generate",
                  "sensaopt.policies.placement", "sensaopt.traces.sources", "sensaopt.exact.model.builder")
"""Modules used directly by the README, the tour and the notebooks (plots, the model catalog,
packaged data, a policy's node pool, constraint families of the exact model)."""
LINK = re.compile(r"(\]\()([^)\s#]+)(#[^)\s]*)?(\))")
ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|data|attr|exc|obj|const):<code>~?\.?([\w.]+)(\(\))?</code>")


def repo_root(config: MkDocsConfig) -> Path:
    return Path(config.config_file_path).resolve().parent


def _module_file(root: Path, name: str) -> Path | None:
    base = root.joinpath(*name.split("."))
    for cand in (base / "__init__.py", base.with_suffix(".py")):
        if cand.is_file():
            return cand
    return None


def _absolute(package: str, node: ast.ImportFrom) -> str:
    """The module an ``ImportFrom`` in ``package``'s ``__init__`` names (relative imports resolved)."""
    if not node.level:
        return node.module or ""
    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
    return ".".join(parts + ([node.module] if node.module else []))


def _defines(tree: ast.Module) -> set[str]:
    """Top-level names a module defines (functions, classes, assignments)."""
    out: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            out |= {t.id for t in targets if isinstance(t, ast.Name)}
    return out


def documented(root: Path, module: str, name: str) -> bool:
    """Whether top-level ``name`` of ``module`` has a docstring (a function's or class's, or a
    string right after an assignment): mkdocstrings renders, and anchors, only those."""
    path = _module_file(root, module)
    if path is None:
        return False
    body = ast.parse(path.read_text()).body
    for k, node in enumerate(body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            members = [m for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))] if isinstance(node, ast.ClassDef) else []
            return ast.get_docstring(node) is not None or any(ast.get_docstring(m) for m in members)  # a class shows with documented methods
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                nxt = body[k + 1] if k + 1 < len(body) else None
                return isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant) and isinstance(nxt.value.value, str)
    return False


def origin(root: Path, module: str, name: str, depth: int = 5) -> str:
    """The module that defines ``name``, following re-exports from ``module`` (``from M import name``)."""
    path = _module_file(root, module)
    if path is None or depth == 0:
        return module
    tree = ast.parse(path.read_text())
    if name in _defines(tree):
        return module
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and any((a.asname or a.name) == name for a in node.names):
            return origin(root, _absolute(module, node), name, depth - 1)
    return module


def exports(root: Path, package: str) -> dict[str, str]:
    """``{name: defining module}`` for each name of ``package``'s ``__all__``, read from its
    source (not imported): a ``from M import name`` anywhere in the file (lazy imports included,
    e.g. ``sensaopt.frames`` imported on first use), else the package itself."""
    path = _module_file(root, package)
    if path is None:
        return {}
    tree = ast.parse(path.read_text())
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            names = list(ast.literal_eval(node.value))
    imported: dict[str, str] = {}
    modules: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            src = _absolute(package, node)
            for a in node.names:
                sub = f"{src}.{a.name}"
                if _module_file(root, sub) is not None:
                    modules.append(sub)  # `from sensaopt import frames`: a module whose names may be exported lazily
                else:
                    imported[a.asname or a.name] = src
    out = {}
    for n in names:
        if n in imported:
            out[n] = origin(root, imported[n], n)
            continue
        lazy = [m for m in modules if n in _defines(ast.parse(_module_file(root, m).read_text()))]  # type: ignore[union-attr]
        out[n] = lazy[0] if lazy else package
    return out


def public_modules(root: Path) -> list[str]:
    """Dotted names of the documented modules: :data:`PUBLIC_PACKAGES`, the modules defining the
    names they export and :data:`PUBLIC_MODULES` (those present under ``root``), sorted."""
    out = set()
    for pkg in PUBLIC_PACKAGES:
        if _module_file(root, pkg) is None:
            continue
        out.add(pkg)
        out |= {m for m in exports(root, pkg).values() if m.startswith("sensaopt") and _module_file(root, m) is not None}
    out |= {m for m in PUBLIC_MODULES if _module_file(root, m) is not None}
    return sorted(out)


def api_page(root: Path, name: str) -> str:
    """The markdown of module ``name``'s API page: its docstring and members (mkdocstrings) and,
    for a package of :data:`PUBLIC_PACKAGES`, a table of the names it exports, each linked to
    the page that documents it."""
    md = f"# `{name}`\n\n"
    if name not in PUBLIC_PACKAGES:
        path = _module_file(root, name)
        if path is None or path.name != "__init__.py":
            return md + f"::: {name}\n"
        names = sorted(exports(root, name))  # a module split into a package of parts: its __all__, rendered here
        return md + f"::: {name}\n    options:\n      members: {json.dumps(names)}\n"
    ex = exports(root, name)
    own = [n for n, m in ex.items() if m == name and not n.startswith("__")]
    md += f"::: {name}\n    options:\n      members: {json.dumps(own)}\n\n"
    if ex:
        md += "## Exported names\n\n| name | documented in |\n| --- | --- |\n"
        for n, m in sorted(ex.items(), key=lambda kv: kv[0].lower()):
            if n.startswith("__"):
                continue
            link = f"[`{n}`][{m}.{n}]" if documented(root, m, n) else f"`{n}`"  # undocumented: no anchor to link
            md += f"| {link} | [`{m}`]({m}.md) |\n"
    return md


def outside_pages(root: Path) -> dict[str, str]:
    """Site path of each page read from outside ``docs/``: ``{repository path: site path}``."""
    pages = {"README.md": "index.md", "benchmarks/README.md": "benchmarks.md"}
    pages.update({f"models/{p.name}": f"models/{p.name}" for p in sorted((root / "models").glob("*.md"))})
    return {k: v for k, v in pages.items() if (root / k).is_file()}


def site_path(repo_path: str, docs_dir: str, outside: dict[str, str]) -> str | None:
    """Where a repository file is in the site (None: not a page of the site)."""
    if repo_path in outside:
        return outside[repo_path]
    prefix = docs_dir.rstrip("/") + "/"
    if repo_path.startswith(prefix) and repo_path.endswith(".md"):
        return repo_path[len(prefix):]
    return None


def rewrite_links(markdown: str, page_repo_path: str, page_site_path: str, docs_dir: str, outside: dict[str, str]) -> str:
    """``markdown`` with each relative link to a site page (as seen from ``page_repo_path`` in the
    repository) pointed at that page as seen from ``page_site_path``."""
    def fix(m: re.Match[str]) -> str:
        target = m.group(2)
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("/"):
            return m.group(0)  # absolute URL or site-absolute path
        repo_target = posixpath.normpath(posixpath.join(posixpath.dirname(page_repo_path), target))
        dest = site_path(repo_target, docs_dir, outside)
        if dest is None:
            return m.group(0)
        rel = posixpath.relpath(dest, posixpath.dirname(page_site_path) or ".")
        return f"{m.group(1)}{rel}{m.group(3) or ''}{m.group(4)}"

    return LINK.sub(fix, markdown)


def _docs_dir(config: MkDocsConfig) -> str:
    return Path(config.docs_dir).resolve().relative_to(repo_root(config)).as_posix()


def _section(nav: list[Any], title: str) -> list[Any]:
    for item in nav:
        if isinstance(item, dict) and title in item:
            return item[title]
    section: list[Any] = []
    nav.append({title: section})
    return section


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    root = repo_root(config)
    nav = config.nav if config.nav is not None else []
    listed = {str(v) for sec in nav if isinstance(sec, dict) for v in _flatten(sec)}
    models = _section(nav, MODELS_SECTION)
    models += [page for page in outside_pages(root).values() if page.startswith("models/") and page not in listed]
    _section(nav, API_SECTION).extend({name: f"api/{name}.md"} for name in public_modules(root))
    config.nav = nav
    config.watch += [str(root / "sensaopt"), str(root / "models"), str(root / "README.md")]
    return config


def _flatten(item: Any) -> list[str]:
    if isinstance(item, str):
        return [item]
    if isinstance(item, dict):
        return [p for v in item.values() for p in _flatten(v)]
    if isinstance(item, list):
        return [p for v in item for p in _flatten(v)]
    return []


def on_files(files: Files, config: MkDocsConfig) -> Files:
    root = repo_root(config)
    for repo_path, dest in outside_pages(root).items():
        files.append(File.generated(config, dest, abs_src_path=str(root / repo_path)))
    for name in public_modules(root):
        files.append(File.generated(config, f"api/{name}.md", content=api_page(root, name)))
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    root = repo_root(config)
    outside = outside_pages(root)
    docs_dir = _docs_dir(config)
    site = page.file.src_uri
    repo_path = next((k for k, v in outside.items() if v == site), f"{docs_dir}/{site}")
    return rewrite_links(markdown, repo_path, site, docs_dir, outside)


def cross_references(html: str) -> str:
    """Sphinx roles in rendered docstrings (``:func:<code>name</code>``) as optional autorefs."""
    return ROLE.sub(lambda m: f'<autoref identifier="{m.group(1)}" optional><code>{m.group(1)}{m.group(2) or ""}</code></autoref>', html)


def on_page_content(html: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    return cross_references(html)
