"""HeliosData's ``data.zip`` through ``data fetch``: a small synthetic zip in the real
layout (``data/Venus/cluster_log.csv``, ``data/Venus/cluster_gpu_number.csv``) served over
loopback, checked against its git blob id, then the Venus throughput and VC files derived
from it and compared with a line-by-line port of HeliosArtifact's scripts, and the job log
read as the ``helios-venus`` trace source. The real zip's bytes are not on this machine
(its blob is absent from every stored copy of HeliosData), so the table's blob id and the
derived files' SHA-256 are replaced by those of the synthetic zip here."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import zipfile
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from sensaopt.datasets import DATA_FILES, MIRROR_ENV, TRACES_ENV, FetchError, fetch, git_blob_of
from sensaopt.helios_data import VC_DROPPED

from .test_data_fetch import LoopbackServer, files_under

LOG_HEADER = "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue"
LOG_ROWS = [  # (gpu_num, submit, start, end, duration s, state)
    (1, "2020-04-01 00:00:00", "2020-04-01 00:00:00", "2020-04-01 00:09:59", 599, "COMPLETED"),
    (0, "2020-04-01 00:05:00", "2020-04-01 00:05:00", "2020-04-01 00:30:00", 1500, "COMPLETED"),  # a CPU job
    (8, "2020-04-01 00:10:00", "2020-04-01 00:20:00", "2020-04-01 02:20:00", 7200, "FAILED"),  # on a bin edge
    (2, "2020-04-01 00:19:59", "", "", 0, "CANCELLED"),  # never started
    (4, "2020-03-31 23:59:00", "2020-04-01 00:01:00", "2020-04-01 01:01:00", 3600, "COMPLETED"),  # submitted before the range
    (16, "2020-09-28 23:55:00", "2020-09-28 23:56:00", "2020-09-29 01:00:00", 3840, "COMPLETED"),  # ends after it
    (1, "2020-06-09 18:41:01", "2020-06-09 18:41:01", "2020-06-10 04:55:09", 36848, "COMPLETED"),
]
VCS = ("vcEwI", "vcEhP", "vcWoR", "vcbIW", "vcHvQ")  # vcEhP and vcbIW are dropped by vc_dict_generator.py
GPU_NUMBER = [("2020-09-09", (72, 8, 40, 16, 64)), ("2020-09-10", (76, 0, 41, 16, 64))]


def log_csv() -> str:
    lines = [LOG_HEADER] + [f"{i},u{i},vcEwI,{g},{4 * g},1,{state},{sub},{st},{end},{dur},0"
                            for i, (g, sub, st, end, dur, state) in enumerate(LOG_ROWS, 1)]
    return "\n".join(lines) + "\n"


def gpu_number_csv() -> str:
    lines = ["date," + ",".join(VCS) + ",total"] + [f"{d}," + ",".join(map(str, n)) + f",{sum(n)}" for d, n in GPU_NUMBER]
    return "\n".join(lines) + "\n"


@functools.cache
def upstream_throughput() -> str:
    """HeliosArtifact ``parse_throughput``, loop for loop (10-minute bins, [t, t + 10 min))."""
    def parse(s: str) -> datetime | None:
        return datetime.strptime(s, "%Y-%m-%d %H:%M:%S") if s else None

    kinds = ("submit", "start", "end")
    jobs = [(g, dict(zip(kinds, (parse(sub), parse(st), parse(end)), strict=True))) for g, sub, st, end, _, _ in LOG_ROWS]
    cols = [f"{k}_{w}" for w in ("job_all", "gpu_job", "gpu_num") for k in kinds]
    out = ["time," + ",".join(cols)]
    t = datetime(2020, 4, 1)
    while t <= datetime(2020, 9, 28, 23, 50):
        row: dict[str, int] = {}
        for k in kinds:
            hit = [g for g, ts in jobs if ts[k] is not None and t <= ts[k] < t + timedelta(minutes=10)]
            row[f"{k}_job_all"], row[f"{k}_gpu_job"], row[f"{k}_gpu_num"] = len(hit), sum(g != 0 for g in hit), sum(hit)
        out.append(f"{t:%Y-%m-%d %H:%M:%S}," + ",".join(str(row[c]) for c in cols))
        t += timedelta(minutes=10)
    return "\n".join(out) + "\n"


def upstream_vc_config() -> str:
    """vc_dict_generator.py (Venus, Sept): 2020-09-10's GPUs // 8 per VC, its dropped VCs removed, as a ``,num`` CSV."""
    day = dict(zip(VCS, GPU_NUMBER[1][1], strict=True))
    return ",num\n" + "".join(f"{vc},{n // 8}\n" for vc, n in day.items() if vc not in VC_DROPPED["Venus"])


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder holding the synthetic ``helios/HeliosData/data.zip``; the table's checks replaced by the synthetic files'."""
    folder = tmp_path / "served"
    z = folder / DATA_FILES["helios-data"].path
    z.parent.mkdir(parents=True)
    with zipfile.ZipFile(z, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("data/Venus/cluster_log.csv", log_csv())
        zf.writestr("data/Venus/cluster_gpu_number.csv", gpu_number_csv())
    checks = {"helios-data": {"git_blob": git_blob_of(z)},
              "venus-throughput": {"sha256": hashlib.sha256(upstream_throughput().encode()).hexdigest()},
              "venus-vc-config": {"sha256": hashlib.sha256(upstream_vc_config().encode()).hexdigest()}}
    for name, change in checks.items():
        monkeypatch.setitem(DATA_FILES, name, dataclasses.replace(DATA_FILES[name], **change))
    return folder


def test_git_blob_id_is_what_git_names_a_file(tmp_path: Path) -> None:
    p = tmp_path / "f"
    p.write_bytes(b"hello\n")
    assert git_blob_of(p) == "ce013625030ba8dba906f756967f9e9ca394464a"  # `echo hello | git hash-object --stdin`


def test_the_zip_is_pinned_to_its_commit_and_blob(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(MIRROR_ENV, raising=False)
    f = DATA_FILES["helios-data"]
    assert f.url == "https://raw.githubusercontent.com/S-Lab-System-Group/HeliosData/159f0caeec16600b9b6017862952a36aae01c43f/data.zip"
    assert f.git_blob == "1a48d5e0fb816fe9bbf1ad7086e7dec90923e5c6" and f.sha256 is None
    for name in ("venus-throughput", "venus-vc-config", "venus-log", "earth-log", "saturn-log", "uranus-log"):
        assert DATA_FILES[name].derived is not None and DATA_FILES[name].derived[0] == "helios-data", name
        assert DATA_FILES[name].url is None  # only derived (no mirror set)


def test_fetch_derives_the_venus_files_from_the_zip(tmp_path: Path, served: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = tmp_path / "data"
    with LoopbackServer(served) as srv:
        monkeypatch.setenv(MIRROR_ENV, srv.url)
        got = list(fetch(["venus-throughput", "venus-vc-config", "venus-log"], dest=data))
        assert [(g.name, g.action) for g in got] == [("helios-data", "fetched"), ("venus-throughput", "derived"),
                                                     ("venus-vc-config", "derived"), ("venus-log", "derived")]
        # the throughput file was asked of the mirror first (absent there: 404), the zip once
        assert srv.hits == ["/helios/Venus_cluster_throughput.csv", "/helios/HeliosData/data.zip", "/helios/Venus_vc_config.csv"]
        assert (data / DATA_FILES["venus-throughput"].path).read_text() == upstream_throughput()
        assert (data / DATA_FILES["venus-vc-config"].path).read_text() == upstream_vc_config()
        assert (data / DATA_FILES["venus-log"].path).read_text() == log_csv()
        assert not [p for p in files_under(data) if p.name.endswith(".part")]
        again = list(fetch(["venus-throughput", "venus-log"], dest=data))
        assert [g.action for g in again] == ["present", "present"] and len(srv.hits) == 3


def test_a_zip_that_fails_its_blob_id_is_not_kept(tmp_path: Path, served: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(DATA_FILES, "helios-data", dataclasses.replace(DATA_FILES["helios-data"], git_blob="0" * 40))
    with LoopbackServer(served) as srv:
        monkeypatch.setenv(MIRROR_ENV, srv.url)
        with pytest.raises(FetchError, match=r"^helios-data: checksum mismatch for http://127\.0\.0\.1:\d+/helios/HeliosData/data\.zip "
                                             r"\(expected git blob 000000000000\.\.\., got [0-9a-f]{12}\.\.\.\); nothing was kept$"):
            list(fetch(["venus-log"], dest=tmp_path / "data"))
    assert files_under(tmp_path / "data") == []


def test_a_derived_file_that_fails_its_sha256_is_not_kept(tmp_path: Path, served: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(DATA_FILES, "venus-vc-config", dataclasses.replace(DATA_FILES["venus-vc-config"], sha256="f" * 64))
    data = tmp_path / "data"
    with LoopbackServer(served) as srv:
        monkeypatch.setenv(MIRROR_ENV, srv.url)
        with pytest.raises(FetchError, match=r"^venus-vc-config: derived from .*data\.zip but the result fails its check "
                                             r"\(expected sha256 ffffffffffff\.\.\., got [0-9a-f]{12}\.\.\.\); nothing was kept$"):
            list(fetch(["venus-vc-config"], dest=data))
    assert [p.relative_to(data).as_posix() for p in files_under(data)] == [DATA_FILES["helios-data"].path]  # the zip passed


def test_a_zip_without_the_member_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "served"
    z = folder / DATA_FILES["helios-data"].path
    z.parent.mkdir(parents=True)
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("data/Earth/cluster_log.csv", log_csv())
    monkeypatch.setitem(DATA_FILES, "helios-data", dataclasses.replace(DATA_FILES["helios-data"], git_blob=git_blob_of(z)))
    with LoopbackServer(folder) as srv:
        monkeypatch.setenv(MIRROR_ENV, srv.url)
        with pytest.raises(FetchError, match=r"^venus-log: cannot derive it from .*: the zip has no data/Venus/cluster_log\.csv; "
                                             r"nothing was kept$"):
            list(fetch(["venus-log"], dest=tmp_path / "data"))
    assert not (tmp_path / "data" / DATA_FILES["venus-log"].path).exists()


def test_the_venus_log_is_a_trace_source_with_generated_deadlines(tmp_path: Path, served: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from sensaopt.traces.sources import data_needed, make_instance

    with LoopbackServer(served) as srv:
        monkeypatch.setenv(MIRROR_ENV, srv.url)
        list(fetch(["venus-log"], dest=tmp_path / "data"))
    monkeypatch.setenv(TRACES_ENV, str(tmp_path / "data"))
    assert data_needed("helios-venus") == ("venus-log",)
    inst, data = make_instance("helios-venus", "helios-8")
    # GPU jobs with a positive duration: rows 1, 3, 5, 6, 7 (the CPU job and the never-started one are skipped)
    assert len(data.jobs) == 5 and not data.has_deadlines
    assert sorted(j.gpus for j in inst.jobs) == [1, 1, 4, 8, 16]
    assert all(j.deadline is not None for j in inst.jobs)  # DeadlineRule, as for helios-gen
