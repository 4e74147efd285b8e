"""MkDocs hooks (mkdocs.yml ``hooks:``): pages that live outside ``docs/`` join the site, and
every public module of sensaopt gets an API reference page.

* ``README.md`` becomes the home page, ``models/*.md`` the Models section and
  ``benchmarks/README.md`` the Performance page; they are read from where they are, nothing is
  copied into ``docs/``.
* Links are written for browsing the repository (``docs/traces.md`` from the README,
  ``../models/chronus.md`` from a docs page): each relative link to a page of the site is
  rewritten to that page's place in the site; any other relative link is left alone, so
  ``mkdocs build --strict`` reports it.
* ``api/<module>.md`` (``::: <module>``, rendered by mkdocstrings) for every module of
  ``sensaopt`` whose dotted name has no part starting with ``_``, except the command line
  (``sensaopt.cli``, documented by ``sensaopt --help``); they are appended to the
  "API reference" section of the nav. Docstrings cite objects in Sphinx's style
  (``:func:`sensaopt.frames.outcomes_frame```): the role is dropped and the name becomes a
  link when mkdocstrings knows it (an optional autorefs cross-reference), else stays code.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

API_SECTION = "API reference"
MODELS_SECTION = "Models"
SKIP_PACKAGES = ("sensaopt.cli",)
LINK = re.compile(r"(\]\()([^)\s#]+)(#[^)\s]*)?(\))")
ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|data|attr|exc|obj|const):<code>~?\.?([\w.]+)(\(\))?</code>")


def repo_root(config: MkDocsConfig) -> Path:
    return Path(config.config_file_path).resolve().parent


def public_modules(root: Path) -> list[str]:
    """Dotted names of the documented modules of ``root/sensaopt``, sorted."""
    out = []
    for path in sorted((root / "sensaopt").rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        name = ".".join(parts)
        if any(p.startswith("_") for p in parts) or name.startswith(SKIP_PACKAGES):
            continue
        out.append(name)
    return sorted(set(out))


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
        files.append(File.generated(config, f"api/{name}.md", content=f"# `{name}`\n\n::: {name}\n"))
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
