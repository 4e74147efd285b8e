"""Hostile input, third round (issue 26): outputs never replace an input by file identity
(packaged names included) nor packaged data; multi-part commands keep each finished part
and say so; options and knobs checked before work; instances no policy can run refused
at load; one error boundary for operating-system errors. docs/reliability.md, section
"Third round", lists the cases and messages.

The packaged instances resolve to the main checkout (editable install): these tests never
write there; the packaged-data cases use a copy of the folder put in its place
(``datasets._instances_folder`` monkeypatched)."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import sensaopt
from sensaopt import datasets
from sensaopt.cli import main
from sensaopt.errors import SensaoptError

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "instances" / "tiny-8gpu.json"
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def run(args: list, capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def one_line(code: int, err: str, *needles: str, exit_code: int = 2, prefix: str = "error: ") -> str:
    assert code == exit_code, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(prefix) and "Traceback" not in err, err
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def packaged(tmp_path, monkeypatch) -> Path:
    """A copy of the packaged instances folder standing in for it."""
    folder = tmp_path / "pkg-instances"
    shutil.copytree(REPO / "instances", folder)
    monkeypatch.setattr(datasets, "_instances_folder", lambda: folder)
    return folder


def tree(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


# ---- 1. outputs never replace an input, by identity; packaged data is never written ----------------
@pytest.mark.parametrize("cmd", [
    ["solve", "tiny-8gpu", "--policy", "edf"],
    ["export", "tiny-8gpu"],
    ["gap", "tiny-8gpu", "--exact", "cpsat", "--time-limit", "5", "-q"],
    ["round-gap", "tiny-8gpu"],
])
def test_output_onto_the_packaged_file_a_name_resolves_to_is_refused(cmd, packaged, capsys):
    before = tree(packaged)
    target = packaged / "tiny-8gpu.json"
    if cmd[0] in ("gap", "round-gap"):
        target = packaged / "tiny-8gpu.csv"  # a table suffix: refused as packaged data
    code, out, err = run([*cmd, "-o", target], capsys)
    line = one_line(code, err)
    if target.suffix == ".json":
        assert "is the input file tiny-8gpu (the packaged" in line, line
    else:
        assert "packaged data" in line, line
    assert tree(packaged) == before and out == ""


def test_a_new_file_in_the_packaged_folder_is_refused(packaged, capsys):
    before = tree(packaged)
    code, _, err = run(["generate", "-o", packaged / "new.json", "--jobs", "3"], capsys)
    assert one_line(code, err).endswith(f"-o: is inside sensaopt's packaged data ({packaged.resolve()}); refusing to write there "
                                        "(choose another output)")
    assert tree(packaged) == before


def test_the_package_folder_itself_is_refused(capsys):
    target = Path(sensaopt.__file__).parent / "zz-out.json"
    code, _, err = run(["solve", TINY, "--policy", "edf", "-o", target], capsys)
    one_line(code, err, "packaged data")
    assert not target.exists()


def test_maintainers_may_regenerate_the_packaged_instances(packaged, capsys, monkeypatch):
    monkeypatch.setenv("SENSAOPT_WRITE_PACKAGED", "1")
    code, _, err = run(["generate", "-o", packaged / "new.json", "--jobs", "3"], capsys)
    assert code == 0, err and (packaged / "new.json").is_file()


def test_a_symlink_to_the_packaged_folder_is_seen_through(packaged, tmp_path, capsys):
    link = tmp_path / "link"
    link.symlink_to(packaged)
    before = tree(packaged)
    code, _, err = run(["solve", "tiny-8gpu", "--policy", "edf", "-o", link / "tiny-8gpu.json"], capsys)
    one_line(code, err, "is the input file tiny-8gpu")
    code, _, err = run(["solve", TINY, "--policy", "edf", "-o", link / "other.json"], capsys)
    one_line(code, err, "packaged data")
    assert tree(packaged) == before


# ---- 1b. multi-part commands keep each finished part, and say so -------------------------------------
def _fake_gap_rows(monkeypatch, fail_at: int, exc: BaseException) -> None:
    import sensaopt.cli.exact as ex

    calls = {"n": 0}

    def fake(name, *a, **k):
        calls["n"] += 1
        if calls["n"] == fail_at:
            raise exc
        return {c: None for c in ex.GAP_COLUMNS} | {"instance": name, "policy": "edf"}

    monkeypatch.setattr(ex, "gap_row", fake)


@pytest.mark.parametrize("suffix", [".csv", ".json"])
def test_gap_interrupted_after_two_rows_keeps_them(suffix, tmp_path, capsys, monkeypatch):
    _fake_gap_rows(monkeypatch, 3, KeyboardInterrupt())
    out = tmp_path / f"gap{suffix}"
    code, _, err = run(["gap", TINY, TINY, TINY, "-q", "-o", out], capsys)
    assert one_line(code, err, exit_code=130, prefix="interrupted") == f"interrupted (kept: 2 of 3 rows in {out})"
    if suffix == ".csv":
        assert out.read_text().count("\n") == 3  # header + 2 rows
    else:
        assert len(json.loads(out.read_text())) == 2


def test_gap_error_after_one_row_says_what_it_kept(tmp_path, capsys, monkeypatch):
    from sensaopt.errors import InputError

    _fake_gap_rows(monkeypatch, 2, InputError("x.json", "(model)", "too large"))
    out = tmp_path / "gap.csv"
    code, _, err = run(["gap", TINY, TINY, TINY, "-q", "-o", out], capsys)
    assert one_line(code, err) == f"error: x.json: (model): too large (kept: 1 of 3 rows in {out})"
    assert out.read_text().count("\n") == 2


def test_gap_error_on_the_first_row_writes_nothing_and_adds_nothing(tmp_path, capsys, monkeypatch):
    from sensaopt.errors import InputError

    _fake_gap_rows(monkeypatch, 1, InputError("x.json", "(model)", "too large"))
    out = tmp_path / "gap.csv"
    code, _, err = run(["gap", TINY, TINY, "-q", "-o", out], capsys)
    assert one_line(code, err) == "error: x.json: (model): too large" and not out.exists()


def test_gap_sigint_in_a_real_process_keeps_the_finished_rows(tmp_path):
    """A real Ctrl-C (SIGINT) during the third exact solve, after two rows are done."""
    out = tmp_path / "gap.csv"
    code = (f"import sys, signal, os; sys.argv[0] = 'sensaopt'\n"
            f"import sensaopt.cli.exact as ex\n"
            f"real = ex.gap_row; n = [0]\n"
            f"def row(*a, **k):\n"
            f"    n[0] += 1\n"
            f"    if n[0] == 3: os.kill(os.getpid(), signal.SIGINT)\n"
            f"    return real(*a, **k)\n"
            f"ex.gap_row = row\n"
            f"from sensaopt.cli import main\n"
            f"sys.exit(main(['gap', {str(TINY)!r}, {str(TINY)!r}, {str(TINY)!r}, '--exact', 'cpsat', '--time-limit', '1', "
            f"'--policy', 'edf', '-q', '-o', {str(out)!r}]))\n")
    import signal

    # SIG_DFL: a child of a background job inherits SIGINT ignored; a user's Ctrl-C is not
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV, timeout=600,
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert proc.returncode == 130, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == f"interrupted (kept: 2 of 3 rows in {out})", proc.stderr
    lines = out.read_text().splitlines()
    assert len(lines) == 3 and lines[1].startswith(str(TINY))


def test_simulate_keeps_finished_policies_and_says_so(tmp_path, capsys, monkeypatch):
    import sensaopt.simulator as sim

    real = sim.simulate

    def fake(inst, pol, **kw):
        if pol == "fifo":
            raise KeyboardInterrupt
        return real(inst, pol, **kw)

    monkeypatch.setattr(sim, "simulate", fake)
    out = tmp_path / "sim"
    code, _, err = run(["simulate", "--trace", "synthetic", "--jobs", "6", "--preset", "2x8", "-q", "--policy", "edf",
                        "--policy", "fifo", "--out-dir", out], capsys)
    assert code == 130 and "Traceback" not in err, err
    assert err.strip().splitlines()[-1] == f"interrupted (kept: {out / 'edf.jobs.csv'}, {out / 'edf.summary.json'})"
    assert sorted(p.name for p in out.iterdir()) == ["edf.jobs.csv", "edf.summary.json"]


def test_simulate_summary_that_cannot_be_written_leaves_no_half_pair(tmp_path, capsys, monkeypatch):
    """The policy's CSV is not left without its summary (before: `nothing written` while
    the CSV was there)."""
    import sensaopt.traces.run as tr

    real = tr.summary

    def bad_summary(inst, res, workload):
        d = real(inst, res, workload)
        d["metrics"]["avg_jct"] = math.nan
        return d

    monkeypatch.setattr(tr, "summary", bad_summary)
    out = tmp_path / "sim"
    code, _, err = run(["simulate", "--trace", "synthetic", "--jobs", "6", "--preset", "2x8", "-q", "--policy", "edf", "--out-dir", out],
                       capsys)
    assert code == 2 and "NaN" in err.strip().splitlines()[-1] and "Traceback" not in err, err
    assert not out.exists() or not list(out.iterdir())


def test_round_gap_interrupted_keeps_the_decided_rounds(tmp_path, capsys, monkeypatch):
    import sensaopt.rolling as rolling

    real = rolling.RoundGapRecorder.decide
    calls = {"n": 0}

    def decide(self, state):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(self, state)

    monkeypatch.setattr(rolling.RoundGapRecorder, "decide", decide)
    out = tmp_path / "rg.csv"
    code, _, err = run(["round-gap", TINY, "--policy", "edf", "--time-limit", "5", "-o", out], capsys)
    line = one_line(code, err, exit_code=130, prefix="interrupted")
    assert line == f"interrupted (kept: 2 rounds in {out})"
    assert out.read_text().count("\n") == 3


# ---- 4. one boundary for operating-system errors --------------------------------------------------------
def test_name_too_long_as_input_and_output(tmp_path, capsys):
    long = tmp_path / ("a" * 300 + ".json")
    code, _, err = run(["solve", long], capsys)
    one_line(code, err, "File name too long")
    code, _, err = run(["solve", TINY, "--policy", "edf", "-o", long], capsys)
    one_line(code, err, "File name too long (ENAMETOOLONG)", "…")


def test_symlink_loop_as_input_is_not_called_missing(tmp_path, capsys):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.symlink_to(b)
    b.symlink_to(a)
    code, _, err = run(["solve", a], capsys)
    assert one_line(code, err) == f"error: {a}: (file): cannot read: Too many levels of symbolic links"
    code, _, err = run(["validate", TINY, a], capsys)
    one_line(code, err, "Too many levels of symbolic links")


@pytest.mark.parametrize("exc, text", [
    (PermissionError(13, "Permission denied", "/data/x.json"), "error: /data/x.json: Permission denied (EACCES)"),
    (OSError(28, "No space left on device", "/data/out.csv"), "error: /data/out.csv: No space left on device (ENOSPC)"),
    (OSError(40, "Too many levels of symbolic links", "/data/l"), "error: /data/l: Too many levels of symbolic links (ELOOP)"),
    (OSError(36, "File name too long", "x" * 400), f"error: {'x' * 80}…{'x' * 80}: File name too long (ENAMETOOLONG)"),
    (OSError(5, "Input/output error"), "error: (stream): Input/output error (EIO)"),
])
def test_any_os_error_inside_a_command_is_one_line(exc, text, capsys, monkeypatch):
    import sensaopt.io

    def boom(*a, **k):
        raise exc

    monkeypatch.setattr(sensaopt.io, "load_instance", boom)
    code, out, err = run(["solve", TINY], capsys)
    assert one_line(code, err) == text and out == ""


def test_programming_errors_keep_their_traceback(capsys, monkeypatch):
    import sensaopt.io

    def boom(*a, **k):
        raise TypeError("a bug")

    monkeypatch.setattr(sensaopt.io, "load_instance", boom)
    with pytest.raises(TypeError, match="a bug"):
        main(["solve", str(TINY)])


def test_os_errors_raise_with_the_traceback_switch(capsys, monkeypatch):
    import sensaopt.io

    def boom(*a, **k):
        raise PermissionError(13, "Permission denied", "x")

    monkeypatch.setattr(sensaopt.io, "load_instance", boom)
    monkeypatch.setenv("SENSAOPT_TRACEBACK", "1")
    with pytest.raises(PermissionError):
        main(["solve", str(TINY)])


def test_full_stdout_is_one_line_exit_2():
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "sensaopt", "schema"], stdout=full, stderr=subprocess.PIPE, text=True, env=ENV,
                              timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == "error: (stdout): No space left on device (ENOSPC)", proc.stderr


def test_closed_stdout_pipe_is_one_line_exit_2():
    r, w = os.pipe()
    os.close(r)  # the reader is gone before anything is written
    try:
        proc = subprocess.run([sys.executable, "-m", "sensaopt", "schema"], stdout=w, stderr=subprocess.PIPE, text=True, env=ENV,
                              timeout=120)
    finally:
        os.close(w)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == "error: (stdout): Broken pipe (EPIPE)", proc.stderr


# ---- 2. every option and knob checked before work starts ---------------------------------------------
def _knob_fields():
    import typing
    from dataclasses import fields

    from sensaopt.policies import policy_config_class, policy_names

    out = []
    for pol in policy_names():
        cls = policy_config_class(pol)
        hints = typing.get_type_hints(cls)
        out += [(pol, f.name, hints[f.name]) for f in fields(cls)]
    return out


def _bad_values(tp):
    if tp is bool:
        return ["no", "false", 1, None]
    if tp is int or tp == (int | None):
        return [2.5, "3", True, 10**30]
    if tp is float or tp == (float | None):
        return [math.nan, math.inf, -math.inf, "2", True, 1e300]
    if tp is str:
        return [3, None]
    return []


@pytest.mark.parametrize("pol, name, tp", _knob_fields(), ids=lambda x: getattr(x, "__name__", str(x)))
def test_every_knob_of_every_policy_refuses_wrong_types_and_non_finite_values(pol, name, tp):
    """The class, not the listed cases: for each knob of each registered policy, a value of
    the wrong type, NaN, infinity or an absurd size is one ArgumentError naming it."""
    from sensaopt.errors import ArgumentError
    from sensaopt.policies import make_policy

    make_policy(pol)  # the defaults pass
    for bad in _bad_values(tp):
        with pytest.raises(ArgumentError, match=f"policy_config: {name}: ") as e:
            make_policy(pol, **{name: bad})
        assert isinstance(e.value, SensaoptError), (name, bad)


@pytest.mark.parametrize("pol, knobs, message", [
    ("sensascale", {"pairing": "no"}, "policy_config: pairing: must be true or false (a bool), got 'no'"),
    ("sensascale", {"urgent_rounds": math.nan}, "policy_config: urgent_rounds: must be within [-1000000, 1000000] rounds, got nan"),
    ("sensascale", {"weight_scale": 99999999999999999999999},
     "policy_config: weight_scale: must be an integer within [1, 1000000000], got 1e+23"),
    ("sensascale", {"min_speed_fraction": -0.5}, "policy_config: min_speed_fraction: must be within [0, 1], got -0.5"),
    ("sensascale", {"repack_limit": -1}, "policy_config: repack_limit: must be an integer within [0, 1000000], got -1"),
    ("chronus", {"lease_minutes": math.inf}, "policy_config: lease_minutes: must be within [1, 10080] minutes, got inf"),
    ("chronus", {"lease_minutes": 1e-300}, "policy_config: lease_minutes: must be within [1, 10080] minutes, got 1e-300"),
    ("chronus", {"time_limit_s": float("1e400")}, "policy_config: time_limit_s: must be within (0, 604800] seconds, got inf"),
    ("chronus", {"threads": 0}, "policy_config: threads: must be an integer within [1, 256], got 0"),
    ("synergy-tune", {"tolerance": math.nan}, "policy_config: tolerance: must be within [0, 1], got nan"),
    ("sensascale", {"pairng": True}, "policy_config: pairng: SensaScaleConfig has no knob pairng (knobs: "),
])
def test_listed_knob_cases_through_simulate(pol, knobs, message):
    from sensaopt.errors import ArgumentError

    inst = sensaopt.load_instance(TINY)
    with pytest.raises(ArgumentError) as e:
        sensaopt.simulate(inst, pol, policy_config=knobs)
    assert str(e.value).startswith(message), str(e.value)


def test_a_config_object_built_by_hand_is_checked_too():
    from sensaopt.errors import ArgumentError
    from sensaopt.policies.sensascale import SensaScalePolicy
    from sensaopt.policies.sensascale.config import SensaScaleConfig

    pol = SensaScalePolicy()
    object.__setattr__(pol, "config", SensaScaleConfig(urgent_rounds=math.nan))  # no __post_init__ range for it
    with pytest.raises(ArgumentError, match="urgent_rounds: must be within"):
        sensaopt.simulate(sensaopt.load_instance(TINY), pol)
    with pytest.raises(ArgumentError, match="config: must be a SensaScaleConfig"):
        SensaScalePolicy(config={"pairing": False})


def test_the_edge_values_of_knobs_run():
    inst = sensaopt.load_instance(TINY)
    for pol, knobs in [("chronus", {"lease_minutes": 1.0}), ("chronus", {"lease_minutes": 10080.0}),
                       ("sensascale", {"urgent_rounds": 0.0, "min_speed_fraction": 0.0, "weight_scale": 1}),
                       ("sensascale", {"urgent_rounds": -1e6}),  # nothing ever urgent (an experiment's setting)
                       ("sensascale", {"min_speed_fraction": 1.0, "weight_scale": 10**9})]:
        assert sensaopt.simulate(inst, pol, policy_config=knobs).evaluation.ok


@pytest.mark.parametrize("policy, setting, text", [
    ("sensascale", "sensascale.urgent_rounds=nan", "error: --set: urgent_rounds: must be within [-1000000, 1000000] rounds, got nan"),
    ("chronus", "chronus.time_limit_s=1e400", "error: --set: time_limit_s: must be within (0, 604800] seconds, got inf"),
    ("sensascale", "sensascale.weight_scale=99999999999999999999999",
     "error: --set: weight_scale: must be an integer within [1, 1000000000], got 1e+23"),
    ("sensascale", "sensascale.min_speed_fraction=-1", "error: --set: min_speed_fraction: must be within [0, 1], got -1"),
    ("chronus", "chronus.lease_minutes=inf", "error: --set: lease_minutes: must be within [1, 10080] minutes, got inf"),
])
def test_simulate_with_a_bad_knob_writes_nothing(policy, setting, text, tmp_path, capsys):
    """Before: the run happened, then writing the summary failed; `sensascale.jobs.csv`
    was left without its summary while the message said "nothing written"."""
    out = tmp_path / "sim"
    code, _, err = run(["simulate", "--trace", "synthetic", "--jobs", "6", "--preset", "2x8", "-q", "--policy", "edf",
                        "--policy", policy, "--set", setting, "--out-dir", out], capsys)
    assert one_line(code, err) == text
    assert not out.exists()


def test_solve_with_a_bad_knob_is_refused(capsys):
    code, _, err = run(["solve", TINY, "--policy", "sensascale", "--set", "urgent_rounds=-inf"], capsys)
    assert one_line(code, err) == "error: --set: urgent_rounds: must be within [-1000000, 1000000] rounds, got -inf"


def _api_cases():
    from sensaopt.policies.simple import EDFPolicy

    inst = sensaopt.load_instance(TINY)
    return [
        (lambda: sensaopt.solve({"name": "x"}), "solve(): instance: must be an Instance, a path to an instance file or a packaged"),
        (lambda: sensaopt.solve(42), "solve(): instance: must be an Instance"),
        (lambda: sensaopt.simulate(inst, EDFPolicy), "simulate(): policy: got the class EDFPolicy; pass an instance (EDFPolicy())"),
        (lambda: sensaopt.simulate(inst, 3), "simulate(): policy: int is not a policy"),
        (lambda: sensaopt.solve(inst, "cpsat", time_limit="2"), "solve(): time_limit: must be a number, got '2'"),
        (lambda: sensaopt.solve(inst, "cpsat", time_limit=math.nan), "solve(): time_limit: must be within (0, 604800] seconds, got nan"),
        (lambda: sensaopt.solve(inst, "highs", time_limit=-1), "solve(): time_limit: must be within (0, 604800] seconds, got -1"),
        (lambda: sensaopt.solve(inst, "cbc", workers=0), "solve(): workers: must be an integer within [1, 256], got 0"),
        (lambda: sensaopt.solve(inst, "cpsat", workers=2.5), "solve(): workers: must be an integer, got 2.5"),
        (lambda: sensaopt.solve(inst, "cpsat", seed=-1), "solve(): seed: must be an integer within [0, 2147483647], got -1"),
        (lambda: sensaopt.solve(inst, "cpsat", lexicographic="no"), "solve(): lexicographic: must be true or false (a bool), got 'no'"),
        (lambda: sensaopt.solve(inst, "cpsat", time_limt=2), "solve(): time_limt: unexpected argument (accepted: "),
        (lambda: sensaopt.solve(inst, policy="edf", profile_error=math.nan), "solve(): profile_error: must be within [0, 1], got nan"),
        (lambda: sensaopt.solve(inst, solver=None), "solve(): solver: must be a solver name"),
        (lambda: sensaopt.simulate(inst, "edf", max_rounds=0), "simulate(): max_rounds: must be an integer within [1, 1000000] rounds"),
        (lambda: sensaopt.simulate(inst, "edf", validate="yes"), "simulate(): validate: must be true or false (a bool), got 'yes'"),
        (lambda: sensaopt.simulate(inst, "edf", progress=5), "simulate(): progress: must be a function"),
        (lambda: sensaopt.simulate(inst, "edf", policy_config=[("pairing", False)]), "simulate(): policy_config: must be a dict"),
        (lambda: sensaopt.simulate(inst, EDFPolicy(), policy_config={"x": 1}), "simulate(): policy_config: applies to a policy given by name"),
    ]


@pytest.mark.parametrize("k", range(19))
def test_api_misuse_is_one_error_naming_the_argument(k):
    from sensaopt.errors import ArgumentError

    call, message = _api_cases()[k]
    with pytest.raises(ArgumentError) as e:
        call()
    assert str(e.value).startswith(message), str(e.value)


def test_api_accepts_a_packaged_name_or_a_path():
    a = sensaopt.solve("tiny-8gpu", policy="edf")
    b = sensaopt.solve(TINY, policy="edf")
    c = sensaopt.simulate(str(TINY), "edf")
    assert a.objective == b.objective == c.objective


@pytest.mark.parametrize("make, message", [
    (lambda u: u.job("a", gpus=2.5), "Job: gpus (job a): must be an integer, got 2.5"),
    (lambda u: u.job("a", gpus=True), "Job: gpus (job a): must be an integer, got True"),
    (lambda u: u.job("a", gpus="2"), "Job: gpus (job a): must be an integer, got '2'"),
    (lambda u: u.job("a", work="60"), "Job: work (job a): must be a number, got '60'"),
    (lambda u: u.job("a", deadline="100"), "Job: deadline (job a): must be a number, got '100'"),
    (lambda u: u.job(7), "Job: id: must be a string, got 7"),
    (lambda u: __import__("sensaopt.instance").instance.NodeType("n", 8, 24.5, 500.0), "NodeType: cpus: must be an integer, got 24.5"),
    (lambda u: __import__("sensaopt.instance").instance.Job("a", 0.0, 1, 10.0, "bert"), "Job: profile (job a): must be a SensitivityProfile"),
])
def test_constructors_refuse_wrong_types(make, message):
    """Before: `Job(gpus=2.5)` was solved (FEASIBLE) and `save_instance` wrote a file that
    loading refuses."""
    from sensaopt.errors import ArgumentError
    from tests import util

    with pytest.raises(ArgumentError) as e:
        make(util)
    assert str(e.value) == message or str(e.value).startswith(message), str(e.value)


def test_numpy_numbers_are_taken_as_python_numbers():
    import numpy as np

    from tests import util

    j = util.job("a", gpus=np.int64(2), work=np.float64(30.0))
    assert type(j.gpus) is int and type(j.work) is float


# ---- 3. instances no policy can run are refused at load; the round limit from each job's speed -----------
def _write(tmp_path, inst: dict) -> Path:
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(inst))
    return p


def _base() -> dict:
    return {"name": "x", "round_minutes": 10, "cluster": {"node_types": [{"name": "n", "gpus": 8, "cpus": 24, "mem_gb": 500, "count": 1}]},
            "jobs": [{"id": "a", "arrival": 0, "gpus": 2, "work": 60, "deadline": 600, "model": "bert"}]}


@pytest.mark.parametrize("edit, message", [
    (lambda d: d["cluster"]["node_types"].append({"name": "n", "gpus": 8, "cpus": 24, "mem_gb": 500}),
     "error: bad.json: cluster.node_types[1].name: node type name 'n' is also node type 0's (node names NAME-i must be unique)"),
    (lambda d: d["cluster"]["node_types"][0].update(mem_gb=128),  # 16 GB per GPU, below the catalog's 20.83 GB floor... for 8 GPUs
     None),
    (lambda d: d["cluster"]["node_types"][0].update(mem_gb=40),  # 2 GPUs need 41.66 GB at the floor
     "error: bad.json: jobs[0].profile (job a): its profile's floor of 1 cores and 20.83 GB per GPU (2 cores, 41.66 GB for its 2 GPUs) "
     "fits no node (node type 'n': 8 GPUs, 24 cores, 40 GB); no policy can run it"),
    (lambda d: d["jobs"][0].update(model=None, profile={"cpu_levels": [30], "mem_levels": [10], "speeds": [[1]]}),
     "error: bad.json: jobs[0].profile (job a): its profile's floor of 30 cores and 10 GB per GPU (60 cores, 20 GB for its 2 GPUs) "
     "fits no node (node type 'n': 8 GPUs, 24 cores, 500 GB); no policy can run it"),
    (lambda d: (d["cluster"]["node_types"][0].update(count=2, mem_gb=100), d["jobs"][0].update(gpus=16)),
     "error: bad.json: jobs[0].profile (job a): at its profile's floor of 1 cores and 20.83 GB per GPU the nodes hold 8 of its 16 GPUs; "
     "no policy can run it"),
])
@pytest.mark.parametrize("cmd", [["solve", "--policy", "edf"], ["solve", "--policy", "sensascale"], ["validate"]])
def test_instances_no_policy_can_run_are_refused_at_load(edit, message, cmd, tmp_path, capsys):
    d = _base()
    edit(d)
    d["jobs"][0] = {k: v for k, v in d["jobs"][0].items() if v is not None}
    p = _write(tmp_path, d)
    args = [cmd[0], p, *cmd[1:]] if cmd[0] == "solve" else ["validate", p, tmp_path / "none.json"]
    code, _, err = run(args, capsys)
    if message is None:  # 128 GB for 8 GPUs: a 2-GPU job still fits (41.66 GB)
        assert "profile" not in err
        return
    assert one_line(code, err) == message.replace("bad.json", str(p))


def test_trace_cluster_below_the_catalog_floor_names_the_job(tmp_path, capsys):
    """--mem-per-gpu 16 (below every catalog model's 20.83 GB floor): before, SensaScale
    crashed with `max() arg is an empty sequence` and EDF reported "still unfinished"."""
    out = tmp_path / "s"
    args = ["simulate", "--trace", "synthetic", "--jobs", "30", "--preset", "2x8", "--mem-per-gpu", "16", "-q",
            "--policy", "edf", "--policy", "sensascale", "--out-dir", out]
    code, _, err = run(args, capsys)  # the shape's default duration convention (node) is refused first
    assert one_line(code, err).startswith("error: synthetic (seed 0): duration_at: model(s) alexnet, bert")
    assert "cannot run at the node's proportional share (3 cores, 16 GB per GPU): use duration_at=reference" in err
    code, _, err = run([*args, "--duration-at", "reference"], capsys)
    assert one_line(code, err) == ("error: synthetic (seed 0): jobs[26].profile (job j26): its profile's floor of 1 cores and 20.83 GB "
                                   "per GPU (8 cores, 166.64 GB for its 8 GPUs) fits no node (node type 'n8': 8 GPUs, 24 cores, 128 GB); "
                                   "no policy can run it")
    assert not out.exists()


def test_hopeless_work_at_the_best_speed_is_refused():
    from sensaopt.errors import InputError
    from tests import util

    with pytest.raises(InputError, match=r"jobs\[0\]\.work \(job a\): 9e\+06 minutes of work at its best speed 0\.001 take 9e\+08 rounds"):
        util.instance([util.job("a", work=9e6, speed_factor=0.001)], R=10.0)


def test_slow_jobs_run_to_the_end_with_every_policy():
    """speed_factor 0.001 (the documented lower bound) and a profile of speed 0.01: before,
    refused with "still unfinished" (the round limit assumed speed >= 0.1)."""
    from sensaopt.instance import Job
    from sensaopt.policies import policy_names
    from sensaopt.profiles import SensitivityProfile
    from tests import util

    slow = SensitivityProfile("slow", (1.0, 3.0), (20.0, 62.5), ((0.01, 0.01), (0.01, 0.01)))
    inst = util.instance([util.job("a", work=60.0, speed_factor=0.001, deadline=1e5), util.job("b", work=30.0),
                          Job("s", 0.0, 2, 30.0, slow)])
    for pol in policy_names():
        if pol.startswith("rolling"):
            continue
        res = sensaopt.simulate(inst, pol)
        assert res.evaluation.ok and res.metrics.finished == 3, pol


def test_a_policy_that_stalls_is_named_with_the_jobs_left():
    from sensaopt.errors import PolicyError
    from tests import util

    inst = util.instance([util.job("a", gpus=8, work=1000.0), util.job("b", work=10.0)])
    with pytest.raises(PolicyError) as e:
        sensaopt.simulate(inst, "edf", max_rounds=5)
    assert str(e.value) == ("policy 'edf': 2 jobs still unfinished after 5 rounds, a bound every job meets run alone one after "
                            "another at its slowest speed: a (6 % done), b (never ran)")


@pytest.mark.parametrize("cmd", ["simulate", "from-trace"])
def test_a_trace_header_with_a_column_twice_is_refused(cmd, tmp_path, capsys):
    """Before: read silently with the last `num_gpu` column (a JSON key given twice is refused)."""
    header = "job_id,user,num_gpu,submit_time,iterations,model_name,duration,interval,expect_time_list,expect_value_list,best_effort,job_type"
    rows = ["0,vc_a,1,60,5530,mobilenet_v2,96,5,159-189-229-289,10-8-5-2,0,soft", "1,vc_b,2,75,760,alexnet,106,6,235,10,0,strict"]
    bad = tmp_path / "t.csv"
    bad.write_text("\n".join([header + ",num_gpu", *(r + ",8" for r in rows)]) + "\n")
    if cmd == "simulate":
        args = ["simulate", "--trace", bad, "--preset", "2x8", "-q", "--out-dir", tmp_path / "s"]
    else:
        args = ["instances", "from-trace", "--trace", bad, "--out-dir", tmp_path / "w"]
    code, _, err = run(args, capsys)
    assert one_line(code, err) == f"error: {bad}: header: column(s) 'num_gpu' given twice"


# ---- docs: the knob and argument tables are the code's -----------------------------------------------
def test_docs_list_every_knob_and_argument_range():
    from sensaopt.arguments import ARGUMENTS
    from sensaopt.limits import KNOBS

    text = (REPO / "docs" / "reliability.md").read_text()
    rows = [f"| `{k}` | {r.text()} | {r.unit} |" for k, r in [*KNOBS.items(), *ARGUMENTS.items()]]
    missing = [row for row in rows if row not in text]
    assert not missing, "\n".join(missing)
