"""The tables sensaopt writes (sensaopt.tables): booleans as booleans, Parquet where pyarrow
is installed (the [parquet] extra), one line naming the extra where it is not."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import pandas as pd
import pytest

from sensaopt import tables
from sensaopt.cli import main

needs_pyarrow = pytest.mark.skipif(not tables.parquet_available(),
                                   reason="pyarrow is not installed (pip install 'sensaopt[parquet]'): Parquet output cannot be written")
SIM = ["simulate", "--trace", "synthetic", "--jobs", "12", "--preset", "2x8", "--best-effort-fraction", "0.5", "--policy", "edf", "-q"]
ROWS = [{"job": "a", "met": True, "jct": 3.5, "n": 1}, {"job": "b", "met": None, "jct": None, "n": 2},
        {"job": "c", "met": False, "jct": 7.0, "n": 3}]


def test_csv_writes_none_as_empty_and_booleans_as_true_false() -> None:
    text = tables.table_bytes(ROWS, ["job", "met", "jct", "n"], "csv").decode()
    assert text.splitlines() == ["job,met,jct,n", "a,True,3.5,1", "b,,,2", "c,False,7.0,3"]
    df = pd.read_csv(io.StringIO(text))
    assert bool(df.loc[0, "met"]) and not bool(df.loc[2, "met"]) and pd.isna(df.loc[1, "met"])


@needs_pyarrow
def test_parquet_keeps_nullable_booleans_and_numbers() -> None:
    df = pd.read_parquet(io.BytesIO(tables.table_bytes(ROWS, ["job", "met", "jct", "n"], "parquet")))
    assert str(df["met"].dtype) == "boolean" and list(df["met"].isna()) == [False, True, False]
    assert bool(df.loc[0, "met"]) and not bool(df.loc[2, "met"])
    assert df["jct"].dtype == float and math.isnan(df.loc[1, "jct"]) and df["n"].dtype.kind == "i"


@needs_pyarrow
def test_simulate_format_parquet_holds_the_csv_rows(tmp_path: Path) -> None:
    assert main([*SIM, "--out-dir", str(tmp_path / "c")]) == 0
    assert main([*SIM, "--out-dir", str(tmp_path / "p"), "--format", "parquet"]) == 0
    assert sorted(p.name for p in (tmp_path / "p").iterdir()) == ["edf.jobs.parquet", "edf.summary.json"]
    pq = pd.read_parquet(tmp_path / "p" / "edf.jobs.parquet").set_index("job")
    with open(tmp_path / "c" / "edf.jobs.csv", newline="") as f:
        rows = {r["job"]: r for r in csv.DictReader(f)}
    assert str(pq["met_deadline"].dtype) == "boolean" and pq["met_deadline"].isna().any()  # best-effort jobs: null
    assert pq["sensitive"].dtype == bool
    for job, r in rows.items():
        got = pq.loc[job, "met_deadline"]
        assert ("" if pd.isna(got) else str(bool(got))) == r["met_deadline"]
        assert float(pq.loc[job, "jct"]) == pytest.approx(float(r["jct"]))


@needs_pyarrow
def test_sweep_format_parquet_writes_summary_parquet(tmp_path: Path) -> None:
    args = ["sweep", "--trace", "synthetic", "--jobs", "10", "--preset", "2x8", "--policy", "edf", "--seed", "0", "--seed", "1",
            "--serial", "-q", "--out-dir", str(tmp_path), "--format", "parquet"]
    assert main(args) == 0
    df = pd.read_parquet(tmp_path / "summary.parquet")
    assert len(df) == 2 and list(df["seed"]) == [0, 1] and not (tmp_path / "summary.csv").exists()


@needs_pyarrow
def test_gap_rows_as_parquet(tmp_path: Path) -> None:
    from sensaopt.cli.exact import GAP_COLUMNS, write_rows

    rows = [dict.fromkeys(GAP_COLUMNS) | {"instance": "x", "policy": "edf", "misses": 2, "objective_gap_pct": 12.5}]
    write_rows(rows, tmp_path / "g.parquet", GAP_COLUMNS)
    df = pd.read_parquet(tmp_path / "g.parquet")
    assert list(df.columns) == GAP_COLUMNS and df.loc[0, "objective_gap_pct"] == 12.5


@pytest.mark.parametrize("argv", [
    [*SIM, "--out-dir", "{tmp}/s", "--format", "parquet"],
    ["gap", "tiny-8gpu", "-q", "-o", "{tmp}/g.parquet"],
    ["sweep", "--trace", "synthetic", "--serial", "-q", "--out-dir", "{tmp}/w", "--format", "parquet"],
])
def test_without_pyarrow_parquet_is_one_line_naming_the_extra(argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(tables, "parquet_available", lambda: False)
    assert main([a.replace("{tmp}", str(tmp_path)) for a in argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and 'pip install "sensaopt[parquet]"' in err[0], err
    assert list(tmp_path.iterdir()) == []  # refused before any work or output


def test_an_unknown_format_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*SIM, "--out-dir", str(tmp_path / "s"), "--format", "xlsx"]) == 2
    assert "unknown table format 'xlsx' (use csv, parquet)" in capsys.readouterr().err


@needs_pyarrow
def test_experiment_paper_format_parquet_writes_runs_and_table_beside_the_csvs(tmp_path: Path) -> None:
    args = ["experiment", "paper", "--out-dir", str(tmp_path), "--scale", "0.01", "--seeds", "1", "--policy", "edf", "--shape", "none",
            "--workloads", "chronus-slo", "--serial", "-q", "--format", "parquet"]
    if main(args[:-2] + ["--report-only"]) != 0:
        pytest.skip("the Chronus traces are not here (sensaopt data fetch chronus-slo)")
    assert main(args) == 0
    for name in ("runs", "table"):
        with open(tmp_path / f"{name}.csv", newline="") as f:
            rows = list(csv.DictReader(f))
        df = pd.read_parquet(tmp_path / f"{name}.parquet")
        assert list(df.columns) == list(rows[0]) and len(df) == len(rows) == 2
        assert list(df["node_gpus"]) == [int(r["node_gpus"]) for r in rows]
