"""Committed benchmark tables (``results/road-*``, ``results/settings-*``) are what their rows give.

Each folder holds the rows its script stored (``rows.jsonl``) and the table it wrote from
them; the table is rebuilt here from the rows with the script's own function, so a
hand-edited or stale table fails. The numbers themselves are not checked.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = {"road": ("road.md", "road.py"), "settings": ("settings.md", "settings_table.py")}


def _module(script: str):
    spec = importlib.util.spec_from_file_location(script[:-3], ROOT / "benchmarks" / script)
    mod = importlib.util.module_from_spec(spec)
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    spec.loader.exec_module(mod)
    return mod


def folders() -> list[Path]:
    return sorted(p for p in (ROOT / "results").iterdir() if p.name.split("-")[0] in SCRIPTS and (p / "rows.jsonl").exists())


@pytest.mark.parametrize("folder", folders(), ids=lambda p: p.name)
def test_the_table_is_rebuilt_from_its_rows(folder):
    table_file, script = SCRIPTS[folder.name.split("-")[0]]
    mod = _module(script)
    rows = [json.loads(line) for line in (folder / "rows.jsonl").read_text().splitlines()]
    prov = json.loads((folder / "provenance.json").read_text())
    if script == "road.py":
        text = mod.table(rows, prov["seeds"])
    else:
        text = mod.table(rows, prov["baselines"])
    assert (folder / table_file).read_text() == text
    assert prov["git"]["commit"] and not prov["git"]["dirty"], "a committed table is made from a clean checkout"


def test_the_road_runs_every_knob_that_differs_both_ways():
    road = _module("road.py")
    rows = road.roads()
    diff = road.knobs()
    assert [r[2] for r in rows if r[0] == "forward"][1:] == list(diff) == [r[2] for r in rows if r[0] == "reverse"][1:]
    # the forward road ends on the default's configuration
    from sensaopt.policies.sensascale.config import SensaScaleConfig, SensaScalePaperConfig

    last = SensaScalePaperConfig(**rows[len(diff)][3])
    assert {f: getattr(last, f) for f in SensaScaleConfig.__dataclass_fields__} == \
        {f: getattr(SensaScaleConfig(), f) for f in SensaScaleConfig.__dataclass_fields__}


def test_knob_effect_lists_the_cases_a_knob_moves_and_only_those():
    # the laxity guard moves medium-8gpu and not tiny-8gpu (with pairing_window=1.0: 2 misses either
    # way, avg JCT 95.52 min with it and 97.35 without; 3 -> 2 misses at the old window 1.5);
    # a knob at the same value twice moves nothing
    from sensaopt.io import load_instance

    mod = _module("knob_effect.py")
    cases = [(n, load_instance(n), 0.0) for n in ("tiny-8gpu", "medium-8gpu")]
    n, moved = mod.compare(cases, "sensascale", "laxity_guard", (True, False))
    assert n == 2 and [m[0] for m in moved] == ["medium-8gpu"]
    (name, on, off), = moved
    assert on < off  # (misses, avg JCT): the guard is better on this case
    assert mod.compare(cases, "sensascale", "laxity_guard", (True, True)) == (2, [])
    assert mod.main(["--knob", "no_such_knob", "--values", "1", "2"]) == 2
    assert mod.main(["--knob", "laxity_guard", "--values", "maybe", "false"]) == 2
    assert mod.knob_values("sensascale", "repack_limit", ["0", "8"]) == (0, 8)  # parsed as --set parses


def test_seed_reference_reads_each_window_across_solver_seeds(tmp_path):
    # four windows × two solver seeds of one policy (another policy's rows are ignored): proven on both,
    # closed by one seed's schedule at the bound, primal on one seed, the same incumbent on both
    import csv

    mod = _module("seed_reference.py")
    cols = ["jobs", "seed", "solver_seed", "index", "window", "status", "exact_objective", "exact_avg_jct", "certified_bound",
            "jct_bound", "policy"]
    cases = {0: [("OPTIMAL", 50.0, 50.0), ("OPTIMAL", 50.0, 50.0)],
             1: [("TIME_LIMIT", 61.0, 60.5), ("OPTIMAL", 60.5, 60.5)],
             2: [("TIME_LIMIT", 71.5, 70.0), ("TIME_LIMIT", 71.0, 70.0)],
             3: [("TIME_LIMIT", 70081.0, 80.0), ("TIME_LIMIT", 70081.0, 80.0)]}  # a lost value of 0.7 (70,000) and 81 min
    with (tmp_path / "windows.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for i, solves in cases.items():
            for s, (status, obj, bound) in enumerate(solves):
                avg = obj % 1000  # the average JCT part (every case's is below 1,000 min)
                for policy in ("sensascale", "edf"):
                    w.writerow([20, 0, s, i, f"w{i}", status, obj, avg, bound, bound, policy])
    (tmp_path / "provenance.json").write_text(json.dumps({"settings": {"cut": {"round_minutes": 10.0}}}))
    rows, seeds = mod.table(tmp_path)
    assert seeds == ["0", "1"]
    by = {r["window"]: r for r in rows}
    assert by["w0"]["reading"] == "proven" and by["w0"]["proven"] == 2
    assert by["w1"]["reading"].startswith("closed") and by["w1"]["proven_seeds"] == "1" and by["w1"]["granules"] == 0.0
    assert by["w2"]["reading"].startswith("primal") and by["w2"]["best"] == 71.0 and by["w2"]["granules"] == 2.0  # 10 min / 20 jobs
    assert by["w3"]["reading"].startswith("open") and by["w3"]["granules"] is None  # a loss above a loss-free bound: no granules
    assert mod.summary(rows, seeds)[0].endswith("proven per seed 1, 2")
    assert mod.main([str(tmp_path / "absent")]) == 2


def test_seed_reference_keeps_window_sizes_apart(tmp_path, capsys):
    # a scaling set: the same window name at 10 and 20 jobs is two windows, and the output names the size
    import csv

    mod = _module("seed_reference.py")
    cols = ["jobs", "seed", "solver_seed", "index", "window", "status", "exact_objective", "exact_avg_jct", "certified_bound",
            "jct_bound", "policy"]
    with (tmp_path / "windows.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for jobs, obj in ((10, 40.0), (20, 61.0)):
            for s in (0, 1):
                w.writerow([jobs, 0, s, 0, "w0", "TIME_LIMIT", obj + s, obj + s, obj - 1, obj - 1, "sensascale"])
    (tmp_path / "provenance.json").write_text(json.dumps({"settings": {"cut": {"round_minutes": 10.0}}}))
    rows, _ = mod.table(tmp_path)
    assert [(r["jobs"], r["best"], r["granules"]) for r in rows] == [(10, 40.0, 1.0), (20, 61.0, 2.0)]
    assert mod.main([str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("window=w0  jobs=10  ") and lines[1].startswith("window=w0  jobs=20  ")
