"""`sensaopt data list / fetch` and the missing-data check, through the real code path
(pooch over HTTP): the shared traces folder is served by a loopback server (127.0.0.1,
a free port) and ``SENSAOPT_DATA_MIRROR`` points the downloads at it. Skips, saying why,
only when the shared folder is absent."""

from __future__ import annotations

import functools
import hashlib
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from sensaopt.datasets import DATA_FILES, MIRROR_ENV, TRACES_ENV, FetchError, MissingDataError, fetch, require

from .conftest import traces_dir

REPO = Path(__file__).resolve().parents[1]


class _Quiet(SimpleHTTPRequestHandler):
    """Serves a folder; counts the GET requests, logs nothing."""

    hits: list[str]

    def do_GET(self) -> None:
        self.hits.append(self.path)
        super().do_GET()

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (the base class's name)
        pass


class LoopbackServer:
    """``folder`` over HTTP on 127.0.0.1 (port 0: a free one) in a thread; ``hits`` lists the paths asked for."""

    def __init__(self, folder: Path) -> None:
        self.hits: list[str] = []
        handler = type("Handler", (_Quiet,), {"hits": self.hits})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(folder)))
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> LoopbackServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


def shared_folder(*names: str) -> Path:
    """The shared traces folder (the local mirror); skip when it, or one of ``names``, is absent."""
    d = traces_dir()
    if not d.is_dir():
        pytest.skip(f"shared traces folder not found at {d} (set SENSAOPT_TRACES)")
    for n in names:
        if not (d / DATA_FILES[n].path).is_file():
            pytest.skip(f"{DATA_FILES[n].path} not in {d}")
    return d


@pytest.fixture
def mirror() -> Iterator[LoopbackServer]:
    with LoopbackServer(shared_folder("chronus-slo", "chronus-model-info")) as srv:
        yield srv


def sha256(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def files_under(d: Path) -> list[Path]:
    return [p for p in d.rglob("*") if p.is_file()] if d.exists() else []


def cli(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sensaopt", *args], env={**os.environ, **env}, cwd=cwd,
                          capture_output=True, text=True, timeout=300)


# ---- the table ---------------------------------------------------------------------------------
def test_table_checksums_match_the_shared_sha256sums() -> None:
    sums = shared_folder() / "SHA256SUMS"
    if not sums.is_file():
        pytest.skip(f"{sums} not found")
    listed = {line.split()[1].removeprefix("./"): line.split()[0] for line in sums.read_text().splitlines() if line.strip()}
    assert {f.path: f.sha256 for f in DATA_FILES.values() if f.sha256 is not None} == listed


def test_upstream_urls_are_pinned_raw_files_or_derived(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(MIRROR_ENV, raising=False)
    pinned = re.compile(r"^https://raw\.githubusercontent\.com/[\w.-]+/[\w.-]+/[0-9a-f]{40}/\S+$")
    for f in DATA_FILES.values():
        if f.derived is not None:  # made from a file that is downloaded and checked
            assert f.url is None and f.upstream is None and f.source.startswith(f"derived from {f.derived[0]} (") and f.note, f.name
            assert DATA_FILES[f.derived[0]].derived is None and DATA_FILES[f.derived[0]].check_kind is not None
        else:
            assert f.url is not None and pinned.match(f.url), f.url
            assert f.url.startswith(f"https://raw.githubusercontent.com/{f.repo}/{f.commit}/")
            assert f.check_kind is not None, f.name  # a downloaded file is always checked
    assert {f.name for f in DATA_FILES.values() if f.derived} == {"venus-throughput", "venus-vc-config", "venus-log", "earth-log",
                                                                  "saturn-log", "uranus-log"}


# ---- fetching over loopback --------------------------------------------------------------------
def test_fetch_downloads_verified_files_into_the_folder(tmp_path: Path, mirror: LoopbackServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MIRROR_ENV, mirror.url)
    monkeypatch.setenv(TRACES_ENV, str(tmp_path / "data"))
    got = list(fetch(["chronus-slo", "chronus-model-info"]))
    assert [(g.name, g.action) for g in got] == [("chronus-slo", "fetched"), ("chronus-model-info", "fetched")]
    for g in got:
        f = DATA_FILES[g.name]
        assert g.path == tmp_path / "data" / f.path and sha256(g.path) == f.sha256
        assert g.url == f"{mirror.url}/{f.path}"
    assert sorted(mirror.hits) == sorted(f"/{DATA_FILES[n].path}" for n in ("chronus-slo", "chronus-model-info"))
    again = list(fetch(["chronus-slo"]))  # present and verified: no second download
    assert [g.action for g in again] == ["present"] and len(mirror.hits) == 2
    require(["chronus-slo", "chronus-model-info"])  # found where the readers look


def test_fetch_replaces_a_copy_that_fails_its_checksum(tmp_path: Path, mirror: LoopbackServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MIRROR_ENV, mirror.url)
    f = DATA_FILES["chronus-model-info"]
    (tmp_path / f.path).parent.mkdir(parents=True)
    (tmp_path / f.path).write_text("{}")
    [g] = fetch([f.name], dest=tmp_path)
    assert g.action == "fetched" and sha256(tmp_path / f.path) == f.sha256


def test_corrupted_download_is_one_clear_error_and_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = DATA_FILES["chronus-model-info"]
    served = tmp_path / "served"
    (served / f.path).parent.mkdir(parents=True)
    (served / f.path).write_bytes(b'{"not": "the real model_info.json"}\n')
    cache = tmp_path / "cache"
    with LoopbackServer(served) as srv:
        monkeypatch.setenv(MIRROR_ENV, srv.url)
        with pytest.raises(FetchError) as e:
            list(fetch([f.name], dest=cache))
        msg = str(e.value)
        assert f.name in msg and f"{srv.url}/{f.path}" in msg and "checksum mismatch" in msg and "\n" not in msg
        assert not cache.exists()  # nor the folders the download made
        r = cli("data", "fetch", f.name, env={MIRROR_ENV: srv.url, TRACES_ENV: str(cache)}, cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: chronus-model-info: checksum mismatch for http://127.0.0.1:"), r.stderr
    assert not cache.exists()


def test_a_file_the_server_does_not_have_is_one_line_naming_file_and_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "empty").mkdir()
    with LoopbackServer(tmp_path / "empty") as srv:
        monkeypatch.setenv(MIRROR_ENV, srv.url)
        url = r"http://127\.0\.0\.1:\d+/chronus-philly/trace_job_Philly_SLO\.csv"
        with pytest.raises(FetchError, match=rf"^chronus-slo: download from {url} failed: 404"):
            list(fetch(["chronus-slo"], dest=tmp_path / "cache"))
    assert not (tmp_path / "cache").exists()


def test_cli_fetch_then_list(tmp_path: Path, mirror: LoopbackServer) -> None:
    env = {MIRROR_ENV: mirror.url, TRACES_ENV: str(tmp_path / "data")}
    r = cli("data", "fetch", "chronus-slo", env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"chronus-slo: fetched {mirror.url}/chronus-philly/trace_job_Philly_SLO.csv -> {tmp_path / 'data'}")
    r = cli("data", "list", env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    status = {m[1]: m[2] for m in re.finditer(r"^(\S+)\s+(present \(\S+\)|missing)\s", r.stdout, re.M)}
    assert set(status) == set(DATA_FILES)
    assert status["chronus-slo"] == f"present ({TRACES_ENV})" and status["chronus-mix1"] == "missing"
    for f in DATA_FILES.values():
        assert f"source: {f.source}" in r.stdout and f.licence in r.stdout and f.path in r.stdout
    assert "source: derived from helios-data (HeliosArtifact analysis/trace_parser.py parse_throughput" in r.stdout
    assert re.search(r"^packaged instances \(sensaopt solve NAME\): .*tiny-8gpu", r.stdout, re.M)


def test_cli_fetch_all_from_a_mirror_then_without_one(tmp_path: Path) -> None:
    """Every file the shared folder holds (all but HeliosData's zip and the logs extracted from it: tests/test_helios_data.py)."""
    names = [f.name for f in DATA_FILES.values() if f.sha256 is not None]
    shared = shared_folder(*names)
    data = tmp_path / "data"
    with LoopbackServer(shared) as srv:
        r = cli("data", "fetch", *names, env={MIRROR_ENV: srv.url, TRACES_ENV: str(data)}, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert [line.split(":")[0] for line in r.stdout.splitlines()] == names
    assert all(line.endswith("(sha256 ok)") for line in r.stdout.splitlines())  # the derived ones too: the mirror's copies
    assert all(sha256(data / DATA_FILES[n].path) == DATA_FILES[n].sha256 for n in names)
    r = cli("data", "fetch", *names, env={TRACES_ENV: str(data)}, cwd=tmp_path)  # upstream URLs, but nothing is missing: no download
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert r.stdout.splitlines() == [f"{n}: present ({TRACES_ENV}) {data / DATA_FILES[n].path}" for n in names]


def test_cli_fetch_unknown_name(tmp_path: Path) -> None:
    r = cli("data", "fetch", "chronus-slow", env={TRACES_ENV: str(tmp_path)}, cwd=tmp_path)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "unknown data file" in r.stderr and "chronus-slo" in r.stderr


# ---- missing data: one line, exit 2, before any work ---------------------------------------------
@pytest.mark.parametrize("args, names", [
    (["simulate", "--trace", "chronus-slo", "--preset", "philly-8", "--days", "0.2", "--policy", "edf", "--out-dir", "OUT"], ["chronus-slo"]),
    (["instances", "from-trace", "--trace", "chronus-mix1", "--out-dir", "OUT"], ["chronus-mix1"]),
    (["sweep", "--trace", "chronus-mix2", "--trace", "synthetic", "--guided", "true", "--out-dir", "OUT", "--serial"],
     ["chronus-mix2", "alibaba-pods"]),
    (["experiment", "paper", "--out-dir", "OUT", "--scale", "0.05", "--serial"],
     ["chronus-slo", "chronus-mix1", "chronus-mix2", "venus-throughput"]),
])
def test_missing_data_stops_before_any_work(tmp_path: Path, args: list[str], names: list[str]) -> None:
    empty = tmp_path / "no-data"
    empty.mkdir()
    out = tmp_path / "out"
    r = cli(*[str(out) if a == "OUT" else a for a in args], env={TRACES_ENV: str(empty)}, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: data not found: "), r.stderr
    assert f"`sensaopt data fetch {' '.join(names)}`" in lines[0] and str(empty) in lines[0]
    assert r.stdout == "" and not out.exists()


def test_missing_data_from_python_names_the_fetch_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sensaopt.traces.generators import philly_runtimes
    from sensaopt.traces.sources import make_trace

    monkeypatch.setenv(TRACES_ENV, str(tmp_path))
    philly_runtimes.cache_clear()  # a test run before this one may hold the runtimes in memory already
    with pytest.raises(MissingDataError, match=r"`sensaopt data fetch philly-runtimes`") as e:
        make_trace("philly-gen", jobs=5)
    assert e.value.names == ["philly-runtimes"]
    with pytest.raises(MissingDataError, match=r"`sensaopt data fetch venus-throughput`$"):
        require(["venus-throughput"])


def test_the_paper_plan_keeps_the_workloads_whose_data_is_present(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from sensaopt.cli.traces import _present_workloads
    from sensaopt.sweep.paper import PaperSettings, paper_configs

    data = tmp_path / "data"
    (data / DATA_FILES["chronus-slo"].path).parent.mkdir(parents=True)
    (data / DATA_FILES["chronus-slo"].path).write_text("not read here\n")
    monkeypatch.setenv(TRACES_ENV, str(data))
    s = PaperSettings(scale=0.01, policies=("edf",), seeds=(0,), shapes=(), workloads=("Philly SLO", "Philly MIX1", "Helios"))
    kept, runs = _present_workloads(s, paper_configs(s))
    assert kept.workloads == ("Philly SLO",) and {label for label, _, _ in runs} == {"Philly SLO"} and len(runs) == 2
    assert capsys.readouterr().err == ("skipped (data not found): Philly MIX1 (chronus-mix1); Helios (venus-throughput); "
                                       "fetch with `sensaopt data fetch chronus-mix1 venus-throughput`\n")
    (data / DATA_FILES["chronus-slo"].path).unlink()
    with pytest.raises(MissingDataError) as e:  # nothing left: the one-line error naming every file
        _present_workloads(s, paper_configs(s))
    assert e.value.names == ["chronus-slo", "chronus-mix1", "venus-throughput"]


@pytest.mark.slow
def test_experiment_paper_runs_the_workloads_whose_data_is_present_and_names_the_rest(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import csv

    from sensaopt.cli import main

    slo = shared_folder("chronus-slo") / DATA_FILES["chronus-slo"].path
    data = tmp_path / "data"
    (data / DATA_FILES["chronus-slo"].path).parent.mkdir(parents=True)
    (data / DATA_FILES["chronus-slo"].path).symlink_to(slo)
    monkeypatch.setenv(TRACES_ENV, str(data))
    out = tmp_path / "out"
    assert main(["experiment", "paper", "--out-dir", str(out), "--scale", "0.01", "--seeds", "1", "--policy", "edf", "--shape", "none",
                 "--serial", "-q", "--workloads", "chronus-slo,helios-gen", "--workloads", "helios-venus"]) == 0
    r = capsys.readouterr()
    assert r.err.strip().splitlines() == [
        "skipped (data not found): Helios (venus-throughput); Helios Venus log (venus-log); "
        "fetch with `sensaopt data fetch venus-throughput venus-log`"]
    assert "2 runs: 0 reused, 2 computed, 0 failed, 0 missing" in r.out
    with open(out / "runs.csv", newline="") as f:
        assert sorted((row["workload"], row["node_gpus"]) for row in csv.DictReader(f)) == [("Philly SLO", "16"), ("Philly SLO", "8")]
    assert main(["experiment", "paper", "--out-dir", str(tmp_path / "o2"), "--workloads", "philly-slo"]) == 2
    assert capsys.readouterr().err.startswith("error: --workloads: workload: unknown workload 'philly-slo' (known: chronus-slo,")
    assert not (tmp_path / "o2").exists()


def test_data_dir_and_mirror_flags_stand_for_the_environment_variables(tmp_path: Path, mirror: LoopbackServer,
                                                                        monkeypatch: pytest.MonkeyPatch,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    from sensaopt.cli import main

    for name in (TRACES_ENV, MIRROR_ENV):  # recorded unset: what the flags set is undone after the test
        monkeypatch.delenv(name, raising=False)
    d = tmp_path / "mine"
    assert main(["--data-dir", str(d), "--mirror", mirror.url, "data", "fetch", "chronus-model-info"]) == 0
    f = DATA_FILES["chronus-model-info"]
    assert capsys.readouterr().out.startswith(f"chronus-model-info: fetched {mirror.url}/{f.path} -> {d / f.path}")
    assert sha256(d / f.path) == f.sha256
    assert TRACES_ENV not in os.environ and MIRROR_ENV not in os.environ  # the flags hold for their command only
    assert main(["--data-dir", str(d), "data", "list"]) == 0
    assert re.search(rf"^chronus-model-info\s+present \({TRACES_ENV}\)", capsys.readouterr().out, re.M)
    assert main(["--mirror", "127.0.0.1:8000", "data", "list"]) == 2
    assert capsys.readouterr().err.strip() == "error: (command line): --mirror: not a URL: '127.0.0.1:8000' (http://, https:// or file://)"
