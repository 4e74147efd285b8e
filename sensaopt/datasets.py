"""The public data files sensaopt reads, where they live and how to fetch them.

:data:`DATA_FILES` is the one table: each file's name (what ``sensaopt data fetch NAME``
takes), its path relative to the data folder, its SHA-256, licence and upstream source
(a raw-file URL of a public GitHub repository pinned to a commit). A file is checked
against its SHA-256 or, where only the repository's record of it is known, its git blob
id (HeliosData's ``data.zip``: ``sha1(b"blob <size>\\0" + bytes)``, what the pinned commit
names). A *derived* file (:attr:`DataFile.derived`) is made from another one by
:mod:`sensaopt.helios_data`: the Helios job logs extracted from ``data.zip``, the Venus
throughput and VC files computed from it as HeliosArtifact does (checked against their
SHA-256 when one is known).

Where files are read (:func:`search_dirs`), first match wins:

* ``SENSAOPT_TRACES`` when set: that folder only (and ``data fetch`` writes there);
* otherwise, in a source checkout (``pyproject.toml`` and ``instances/`` beside the
  package), the local mirror ``shared/traces`` beside the clone when it exists, then the
  user cache ``platformdirs.user_cache_dir("sensaopt")`` (``data fetch`` writes to the
  cache); an installed package reads the cache only.

``SENSAOPT_DATA_MIRROR`` (a base URL) replaces every upstream URL by
``<base>/<relative path>``: a copy of the data folder served over HTTP (the tests use a
loopback server); a derived file with a SHA-256 is taken from the mirror when it has it,
else derived from its source (itself from the mirror). Downloads go through pooch and
are checked; a file that fails its check is never kept.

The committed instances (the repository's ``instances/`` folder) ship as the package
``sensaopt.instances``; :func:`instance_names` lists them and :func:`packaged_instance`
finds one by name. Nothing is read or downloaded at import time.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Literal
from urllib.parse import quote

from sensaopt.errors import InputError, SensaoptError

if TYPE_CHECKING:
    from importlib.abc import Traversable

TRACES_ENV = "SENSAOPT_TRACES"
MIRROR_ENV = "SENSAOPT_DATA_MIRROR"

_CHRONUS = ("S-Lab-System-Group/ChronusArtifact", "bc7e15fefd53b80d1897170ab3c1aa7d353c3b79")
_HELIOS_ARTIFACT = ("S-Lab-System-Group/HeliosArtifact", "bdaae109c21f8038a2331e6a23a582d5ae78ab5b")
_HELIOS_DATA = ("S-Lab-System-Group/HeliosData", "159f0caeec16600b9b6017862952a36aae01c43f")
_ALIBABA = ("alibaba/clusterdata", "7a6c496e4f4b6ce6150be8f881cb051bf2abff42")
_HELIOS_ZIP_BLOB = "1a48d5e0fb816fe9bbf1ad7086e7dec90923e5c6"  # git blob id of data.zip at _HELIOS_DATA's commit
_THROUGHPUT_NOTE = "HeliosArtifact analysis/trace_parser.py parse_throughput on data/Venus/cluster_log.csv"
_VC_NOTE = "HeliosArtifact framework/QSSF Service/data/vc_dict_generator.py (Venus, Sept) on data/Venus/cluster_gpu_number.csv"
HELIOS_CLUSTERS = ("Venus", "Earth", "Saturn", "Uranus")


@dataclass(frozen=True)
class DataFile:
    """One public data file: ``name`` (the fetch name), ``path`` (relative to the data
    folder), ``sha256`` (hex), ``licence``, ``repo`` (``owner/name`` on GitHub), ``commit``
    and ``upstream`` (the path in that repository at that commit; ``None``: not downloaded
    itself). ``git_blob``: the git blob id it is checked against when no ``sha256`` is known.
    ``derived``: (name of the file it is made from, recipe of :mod:`sensaopt.helios_data`);
    ``note`` says how."""

    name: str
    path: str
    sha256: str | None
    licence: str
    repo: str
    commit: str
    upstream: str | None
    note: str = ""
    git_blob: str | None = None
    derived: tuple[str, str] | None = None

    @property
    def url(self) -> str | None:
        """Where ``data fetch`` downloads it from: the mirror's copy when ``SENSAOPT_DATA_MIRROR``
        is set (a derived file: only when it has a SHA-256 to check the copy), else the
        raw-file URL pinned to :attr:`commit`; ``None``: it is only derived."""
        mirror = os.environ.get(MIRROR_ENV)
        if mirror and (self.derived is None or self.sha256 is not None):
            return f"{mirror.rstrip('/')}/{quote(self.path)}"
        return self.upstream_url

    @property
    def upstream_url(self) -> str | None:
        if self.upstream is None:
            return None
        return f"https://raw.githubusercontent.com/{self.repo}/{self.commit}/{quote(self.upstream)}"

    @property
    def source(self) -> str:
        """``owner/name@commit:path``, or ``derived from NAME: how``."""
        if self.derived is not None:
            return f"derived from {self.derived[0]} ({self.note})"
        return f"{self.repo}@{self.commit[:10]}:{self.upstream}"

    @property
    def check_kind(self) -> str | None:
        """What a copy is checked against: ``sha256``, ``git blob`` or None (a derived file
        without a checksum: its source was checked)."""
        return "sha256" if self.sha256 is not None else "git blob" if self.git_blob is not None else None


def _f(name: str, path: str, sha256: str | None, licence: str, where: tuple[str, str], upstream: str | None, note: str = "",
       git_blob: str | None = None, derived: tuple[str, str] | None = None) -> DataFile:
    return DataFile(name, path, sha256, licence, where[0], where[1], upstream, note, git_blob, derived)


def _helios_log(cluster: str) -> DataFile:
    """The job log of one Helios cluster, extracted from HeliosData's data.zip."""
    return _f(f"{cluster.lower()}-log", f"helios/HeliosData/{cluster}/cluster_log.csv", None, "CC BY 4.0", _HELIOS_DATA, None,
              f"data/{cluster}/cluster_log.csv of the zip", derived=("helios-data", f"member:data/{cluster}/cluster_log.csv"))


DATA_FILES: dict[str, DataFile] = {f.name: f for f in (
    _f("chronus-slo", "chronus-philly/trace_job_Philly_SLO.csv",
       "180fd7db3eeabe5df705c25259fcec972be2ba7b483887e26ca17e22d96b9f3e", "MIT", _CHRONUS, "code/data/exp/trace_job_Philly_SLO.csv"),
    _f("chronus-mix1", "chronus-philly/trace_job_Philly_MIX1.csv",
       "6228d86e2c1fddb2d9e1c006f7a71b4127b7dbed4efbab5aea428fa72ea2dd74", "MIT", _CHRONUS, "code/data/exp/trace_job_Philly_MIX1.csv"),
    _f("chronus-mix2", "chronus-philly/trace_job_Philly_MIX2.csv",
       "4eb087e8f1a5d85ee27f8e8375f3912af643fbacb81d121d746950401426148f", "MIT", _CHRONUS, "code/data/exp/trace_job_Philly_MIX2.csv"),
    _f("chronus-model-info", "chronus-philly/model_info.json",
       "d53f2d8e9cd4fdbf1cb6b862db010ed28f9432082a885f7a68125b83492ddbc7", "MIT", _CHRONUS, "code/data/model_info.json"),
    _f("helios-summary", "helios/helios_cluster_summary.csv",
       "9cfbef77bdcfab43e0ffbc886e9d8ca8ac0dd16528945c52d76693179a6122f6", "MIT", _HELIOS_ARTIFACT,
       "analysis/1_compare with Philly trace/helios_cluster_summary.csv"),
    _f("earth-gpu-number", "helios/Earth_cluster_gpu_number.csv",
       "cd85b21f9b2651a64ed7ecb86f2c5dea771a3bd55d41537eea976b61aa00642f", "MIT", _HELIOS_ARTIFACT,
       "analysis/2_cluster characterization/Earth_vcs/Earth_gpu_number.csv"),
    _f("helios-data", "helios/HeliosData/data.zip", None, "CC BY 4.0", _HELIOS_DATA, "data.zip",
       "the Helios job logs and VC sizes of 4 clusters, 36.4 MB", git_blob=_HELIOS_ZIP_BLOB),
    _f("venus-throughput", "helios/Venus_cluster_throughput.csv",
       "69642494d5f3cb9dff382de90ce1b2fac6c53f63c765e0c3eed9741cb20d4674", "CC BY 4.0", _HELIOS_DATA, None, _THROUGHPUT_NOTE,
       derived=("helios-data", "throughput:Venus")),
    _f("venus-vc-config", "helios/Venus_vc_config.csv",
       "e25f63eecc9d19e905f55c37dceddffcd3a797bf83895fc7efe63c8cde6ca524", "CC BY 4.0", _HELIOS_DATA, None, _VC_NOTE,
       derived=("helios-data", "vc-config:Venus")),
    *(_helios_log(c) for c in HELIOS_CLUSTERS),
    _f("philly-runtimes", "philly/philly_runtime_from_alibaba_v2020_analysis.csv",
       "e99015baaea66833ebeac68d27c994aa13d83847f73b4a7c7dc71fe94b395247", "CC BY 4.0", _ALIBABA,
       "cluster-trace-gpu-v2020/analysis/philly_runtime.csv"),
    _f("philly-vc", "philly/philly_vc.csv",
       "a6873abd7d94a09c646961ad7a0f011faf4069dcdf0c1f7717521613fd6156f7", "MIT", _HELIOS_ARTIFACT,
       "framework/QSSF Service/data/philly_vc.csv"),
    _f("alibaba-pods", "alibaba-v2023/openb_pod_list_default.csv",
       "1ee7ed79c27a3b0861cda8ddba86a004c6aba904caafa329a76ae93ca63834a8", "not stated", _ALIBABA,
       "cluster-trace-gpu-v2023/csv/openb_pod_list_default.csv"),
    _f("alibaba-nodes", "alibaba-v2023/openb_node_list_gpu_node.csv",
       "2beca64b4d3dfa342036a34b56a495c6cef9225db836c81f541282cb1df320b5", "not stated", _ALIBABA,
       "cluster-trace-gpu-v2023/csv/openb_node_list_gpu_node.csv"),
)}
_BY_PATH = {f.path: f for f in DATA_FILES.values()}


# ---- where files are ---------------------------------------------------------------------------
def mirror_dir() -> Path | None:
    """The local mirror of a source checkout: ``shared/traces`` beside the clone (it may not
    exist); None for an installed package (a wheel never looks outside its own folder)."""
    root = Path(__file__).resolve().parents[1]
    if not (root / "pyproject.toml").is_file() or not (root / "instances").is_dir():
        return None
    return root.parent / "shared" / "traces"


def cache_dir() -> Path:
    """The user cache, ``platformdirs.user_cache_dir("sensaopt")`` (it may not exist)."""
    import platformdirs

    return Path(platformdirs.user_cache_dir("sensaopt"))


def search_dirs() -> list[tuple[str, Path]]:
    """(label, folder) pairs searched in order for a data file (see the module docstring)."""
    env = os.environ.get(TRACES_ENV)
    if env:
        return [(TRACES_ENV, Path(env))]
    mirror = mirror_dir()
    return ([("mirror", mirror)] if mirror is not None and mirror.is_dir() else []) + [("cache", cache_dir())]


def fetch_dir() -> Path:
    """Where ``data fetch`` writes: ``SENSAOPT_TRACES`` when set, else the user cache."""
    env = os.environ.get(TRACES_ENV)
    return Path(env) if env else cache_dir()


def where(rel: str) -> tuple[str, Path] | None:
    """The first copy of a data file in the searched folders (:func:`search_dirs`).

    Args:
        rel: the file's path relative to a data folder (``DATA_FILES[name].path``).

    Returns:
        ``(folder label, absolute path)``, or None when no folder has it.
    """
    for label, d in search_dirs():
        if (d / rel).is_file():
            return label, d / rel
    return None


class MissingDataError(InputError):
    """Data files are absent: one line naming them, where they were looked for and the
    ``sensaopt data fetch`` command that gets them (an :class:`InputError`: exit 2)."""

    def __init__(self, names: Iterable[str]) -> None:
        self.names = list(dict.fromkeys(names))
        files = DATA_FILES[self.names[0]].path if len(self.names) == 1 else "data"
        super().__init__(files, "(file)", _missing_message(self.names))

    def __str__(self) -> str:
        return self.message


def _missing_message(names: list[str]) -> str:
    looked = ", ".join(str(d) for _, d in search_dirs())
    what = ", ".join(f"{n} ({DATA_FILES[n].path})" if len(names) == 1 else n for n in names)
    hint = f"fetch {'it' if len(names) == 1 else 'them'} with `sensaopt data fetch {' '.join(names)}`"
    return f"data not found: {what} (looked in {looked}); {hint}"


def locate(rel: str) -> Path:
    """Absolute path of a data file.

    Args:
        rel: the file's path relative to a data folder.

    Returns:
        The path of the first copy found.

    Raises:
        MissingDataError: absent (the message names the fetch command).
    """
    found = where(rel)
    if found is not None:
        return found[1]
    f = _BY_PATH.get(rel)
    if f is None:
        raise InputError(rel, "(file)", f"data file not found (looked in {', '.join(str(d) for _, d in search_dirs())})")
    raise MissingDataError([f.name])


def require(names: Iterable[str]) -> None:
    """Check, before any work starts, that every named data file is present; one
    :class:`MissingDataError` naming all missing ones and the fetch command otherwise."""
    names = list(dict.fromkeys(names))
    unknown = [n for n in names if n not in DATA_FILES]
    if unknown:
        raise InputError(", ".join(unknown), "data", f"unknown data file (known: {', '.join(DATA_FILES)})")
    missing = [n for n in names if where(DATA_FILES[n].path) is None]
    if missing:
        raise MissingDataError(missing)


# ---- fetching ------------------------------------------------------------------------------------
class FetchError(SensaoptError):
    """A download failed or did not match its SHA-256; nothing was kept."""


@dataclass(frozen=True)
class Fetched:
    """What :func:`fetch` did with one file: ``action`` is ``present`` (already there,
    found in ``where``), ``fetched`` (downloaded from ``url`` into ``path``) or
    ``derived`` (made from the file ``url`` names)."""

    name: str
    action: Literal["present", "fetched", "derived"]
    path: Path
    where: str
    url: str | None = None


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def git_blob_of(path: Path) -> str:
    """The git blob id of a file: ``sha1(b"blob <size>\\0" + bytes)`` (hex)."""
    h = hashlib.sha1(f"blob {path.stat().st_size}\0".encode(), usedforsecurity=False)
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def mismatch(f: DataFile, path: Path) -> str | None:
    """Why the copy at ``path`` fails ``f``'s check (``expected ..., got ...``), or None when it
    passes (a derived file without a checksum passes when it exists: its source was checked)."""
    if f.sha256 is not None:
        got = sha256_of(path)
        return None if got == f.sha256 else f"expected sha256 {f.sha256[:12]}..., got {got[:12]}..."
    if f.git_blob is not None:
        got = git_blob_of(path)
        return None if got == f.git_blob else f"expected git blob {f.git_blob[:12]}..., got {got[:12]}..."
    return None


@contextlib.contextmanager
def _quiet_pooch() -> Iterator[None]:
    """pooch logs each download at INFO on stderr; sensaopt prints its own line."""
    import pooch

    log = pooch.get_logger()
    level = log.level
    log.setLevel(logging.WARNING)
    try:
        yield
    finally:
        log.setLevel(level)


class _NotOnServer(FetchError):
    """The server answered 404: a derived file's mirror copy is absent (then it is derived)."""


def _download(f: DataFile, url: str, dest: Path, timeout_s: float) -> Fetched:
    import pooch
    import requests

    target = dest / f.path
    created = _first_missing(target.parent)
    if target.is_file():  # a copy that fails its check is replaced; one that passes is kept as it is
        target.unlink()
    known = f"sha256:{f.sha256}" if f.sha256 is not None else None
    try:
        with _quiet_pooch():
            pooch.retrieve(url, known_hash=known, fname=f.path, path=dest,
                           downloader=pooch.HTTPDownloader(progressbar=False, timeout=timeout_s))
    except ValueError as e:
        _drop_empty(target.parent, created)
        got = str(e).split(" but got ", 1)[-1].split(".", 1)[0] if " but got " in str(e) else "?"
        raise FetchError(f"{f.name}: checksum mismatch for {url} (expected sha256 {(f.sha256 or '?')[:12]}..., got {got[:12]}...); "
                         "nothing was kept") from None
    except requests.exceptions.HTTPError as e:
        _drop_empty(target.parent, created)
        cls = _NotOnServer if e.response is not None and e.response.status_code == 404 else FetchError
        raise cls(f"{f.name}: download from {url} failed: {' '.join(str(e).split())}") from None
    except (requests.exceptions.RequestException, OSError) as e:
        _drop_empty(target.parent, created)
        raise FetchError(f"{f.name}: download from {url} failed: {' '.join(str(e).split())}") from None
    bad = mismatch(f, target) if f.sha256 is None else None
    if bad is not None:
        target.unlink()
        _drop_empty(target.parent, created)
        raise FetchError(f"{f.name}: checksum mismatch for {url} ({bad}); nothing was kept")
    return Fetched(f.name, "fetched", target, str(dest), url)


def _derive(f: DataFile, source: Path, dest: Path) -> Fetched:
    """Make ``f`` from its source file at ``source`` (:mod:`sensaopt.helios_data`), written
    whole or not at all, and check it; :class:`FetchError` when the result fails its check."""
    from sensaopt.helios_data import derive

    assert f.derived is not None
    target = dest / f.path
    created = _first_missing(target.parent)
    target.parent.mkdir(parents=True, exist_ok=True)
    part = target.with_name(target.name + ".part")
    try:
        try:
            derive(f.derived[1], source, part)
        except (ValueError, KeyError, OSError) as e:
            raise FetchError(f"{f.name}: cannot derive it from {source}: {' '.join(str(e).split())}; nothing was kept") from None
        bad = mismatch(f, part)
        if bad is not None:
            raise FetchError(f"{f.name}: derived from {source} but the result fails its check ({bad}); nothing was kept")
        part.replace(target)
    finally:
        part.unlink(missing_ok=True)
        _drop_empty(target.parent, created)
    return Fetched(f.name, "derived", target, str(dest), str(source))


def _first_missing(folder: Path) -> Path | None:
    """The outermost of ``folder`` and its parents that does not exist yet (None: it exists)."""
    missing = None
    while not folder.exists() and folder != folder.parent:
        missing, folder = folder, folder.parent
    return missing


def _drop_empty(folder: Path, created: Path | None) -> None:
    """Remove the folders a failed download created, from ``folder`` up to ``created`` (only empty ones)."""
    if created is None:
        return
    with contextlib.suppress(OSError):
        while folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
            if folder == created:
                break
            folder = folder.parent


def fetch(names: Iterable[str] | None = None, dest: Path | None = None, timeout_s: float = 120.0) -> Iterator[Fetched]:
    """Download or derive the named files (all when ``names`` is empty or None) into
    ``dest``, one :class:`Fetched` per file as it is done (a derived file's source first,
    when it is not there yet). A file whose copy in ``dest`` passes its check is not
    fetched again; one that fails it is replaced. With the default ``dest``
    (:func:`fetch_dir`) a file found in another searched folder (the local mirror) is not
    fetched either. Unknown names are refused before anything is downloaded.

    Args:
        names: data file names (:data:`DATA_FILES`; empty or None: all).
        dest: the folder written into (None: :func:`fetch_dir`).
        timeout_s: seconds per download.

    Yields:
        One :class:`Fetched` per file, as it is done.

    Raises:
        FetchError: on the first failure (that file leaves nothing behind).
    """
    chosen = list(dict.fromkeys(names or DATA_FILES))
    unknown = [n for n in chosen if n not in DATA_FILES]
    if unknown:
        raise InputError(", ".join(unknown), "data fetch", f"unknown data file (known: {', '.join(DATA_FILES)})")
    searched = search_dirs()
    elsewhere = [(label, d) for label, d in searched if d != fetch_dir()] if dest is None else []
    dest = fetch_dir() if dest is None else dest
    label = next((lb for lb, d in searched if d == dest), str(dest))
    return _fetch_each([DATA_FILES[n] for n in chosen], dest, label, elsewhere, timeout_s)


def _fetch_each(files: list[DataFile], dest: Path, label: str, elsewhere: list[tuple[str, Path]], timeout_s: float) -> Iterator[Fetched]:
    done: dict[str, Path] = {}
    for f in files:
        yield from _fetch_one(f, dest, label, elsewhere, timeout_s, done)


def _fetch_one(f: DataFile, dest: Path, label: str, elsewhere: list[tuple[str, Path]], timeout_s: float,
               done: dict[str, Path]) -> Iterator[Fetched]:
    """Fetch ``f`` (after its source, for a derived file); ``done`` maps the names handled so far to their paths."""
    if f.name in done:
        return
    own = dest / f.path
    if own.is_file() and mismatch(f, own) is None:
        done[f.name] = own
        yield Fetched(f.name, "present", own, label)
        return
    other = next(((lb, d / f.path) for lb, d in elsewhere if (d / f.path).is_file()), None)
    if other is not None:
        done[f.name] = other[1]
        yield Fetched(f.name, "present", other[1], other[0])
        return
    url = f.url
    if url is not None:
        try:
            got = _download(f, url, dest, timeout_s)
        except _NotOnServer:
            if f.derived is None:
                raise
        else:
            done[f.name] = got.path
            yield got
            return
    assert f.derived is not None, f.name  # every file has a URL or a source
    source = DATA_FILES[f.derived[0]]
    yield from _fetch_one(source, dest, label, elsewhere, timeout_s, done)
    got = _derive(f, done[source.name], dest)
    done[f.name] = got.path
    yield got


# ---- packaged instances ---------------------------------------------------------------------------
INSTANCES_PACKAGE = "sensaopt.instances"


def _instances_folder() -> Traversable | None:
    try:
        return resources.files(INSTANCES_PACKAGE)
    except ModuleNotFoundError:  # a source tree that is not installed
        return None


def instance_names() -> list[str]:
    """Names of the instances shipped with sensaopt (the repository's ``instances/*.json``)."""
    folder = _instances_folder()
    if folder is None:
        return []
    return sorted(p.name.removesuffix(".json") for p in folder.iterdir() if p.name.endswith(".json"))


def packaged_data_dirs() -> list[Path]:
    """The folders of sensaopt's packaged data, resolved: the packaged instances and the
    ``sensaopt`` package (outputs are never written there: :mod:`sensaopt.outputs`)."""
    dirs = [Path(__file__).resolve().parent]  # this module lives in the sensaopt package
    folder = _instances_folder()
    if folder is not None:
        with contextlib.suppress(OSError, TypeError, ValueError):
            d = Path(os.path.realpath(str(folder)))
            if d.is_dir():
                dirs.append(d)
    return dirs


def packaged_instance(spec: str) -> Traversable | None:
    """The packaged instance that ``spec`` names — ``NAME``, ``NAME.json`` or
    ``instances/NAME.json`` (the repository path, so commands written for the clone run
    anywhere).

    Args:
        spec: the name or path as given.

    Returns:
        The packaged file, or None when ``spec`` names none."""
    name = spec.removeprefix("instances/").removesuffix(".json")
    folder = _instances_folder()
    if folder is None or "/" in name or "\\" in name or name not in instance_names():
        return None
    return folder / f"{name}.json"

