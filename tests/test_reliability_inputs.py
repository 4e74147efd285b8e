"""Bad-input catalog (docs/reliability.md): every bad instance, schedule or trace file
gives ONE line on stderr naming the file, the field or row and the job, exit code 2,
no output file and no traceback -- through every command that reads such a file.

The instance cases are the catalog of tests/test_cli_core.py (``BAD``, tested there for
``solve`` in a subprocess), extended here with the exact message and to the other
commands. Commands run in-process (an uncaught exception fails the test, so "no
traceback" is checked too); one case per command also runs as a real subprocess.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from sensaopt.cli import main

from .test_cli_core import BAD, TINY, mutate, set_job

# case -> (file content, the exact stderr line; {f} = the file's path)
CASES = {k: v[0] for k, v in BAD.items()}
CASES["nan"] = json.dumps(mutate(set_job(0, work=float("nan"))))
CASES["number as string"] = mutate(set_job(0, arrival="5"))
CASES["beyond horizon"] = mutate(set_job(0, work=1e300))
CASES["top level not an object"] = "[]"
CASES["empty file"] = ""
# issue 16: numbers at the edges (sensaopt/limits.py) and files that are not plain JSON
CASES["value 1e12"] = mutate(set_job(0, value=1e12))
CASES["value 1e308"] = mutate(set_job(0, value=1e308))
CASES["violation_weight 1e308"] = mutate(lambda d: d["objective"].update(violation_weight=1e308))
CASES["node with 5000 GPUs"] = mutate(lambda d: d["cluster"]["node_types"][0].update(gpus=5000))
CASES["duplicate key"] = '{"name": "a", "name": "b"}'
CASES["nested 5000 deep"] = "[" * 5000 + "]" * 5000
CASES["5000-digit integer"] = '{"round_minutes": 1' + "0" * 5000 + "}"
CASES["gzip file"] = gzip.compress(TINY.read_bytes(), mtime=0)
CASES["UTF-16 file"] = TINY.read_text().encode("utf-16")
CASES["non-UTF-8 byte"] = TINY.read_bytes().replace(b'"tiny-8gpu"', b'"tiny-\xe9"')

MESSAGES = {
    "malformed": "error: {f}: line 1 column 3: malformed JSON: Expecting property name enclosed in double quotes",
    "empty file": "error: {f}: line 1 column 1: malformed JSON: Expecting value",
    "top level not an object": "error: {f}: (top level): must be an object, got []",
    "unknown field": "error: {f}: colour: unknown field",
    "missing field": "error: {f}: jobs[1].work (job j1): missing required field",
    "wrong type": "error: {f}: jobs[0].gpus (job j0): must be an integer, got 'four'",
    "number as string": "error: {f}: jobs[0].arrival (job j0): must be a number, got '5'",
    "negative": "error: {f}: jobs[2].work (job j2): must be a positive finite number of minutes, got -5",
    "nan": "error: {f}: jobs[0].work (job j0): must be a positive finite number of minutes, got nan",
    "infinite arrival": "error: {f}: jobs[1].arrival (job j1): must be a finite number of minutes >= 0, got inf",
    "beyond horizon": "error: {f}: jobs[0].work (job j0): 1e+300 minutes is 1e+299 rounds of 10 minutes; at most 1000000 rounds are supported",
    "zero gpus": "error: {f}: jobs[3].gpus (job j3): must be >= 1, got 0",
    "deadline before arrival": "error: {f}: jobs[2].deadline (job j2): deadline 1.0 is not after arrival 25.0",
    "duplicate id": "error: {f}: jobs[1].id (job j0): duplicate job id",
    "too many gpus": "error: {f}: jobs[0].gpus (job j0): needs 64 GPUs but the whole cluster has 8",
    "unknown model": "error: {f}: jobs[1].model (job j1): unknown model type 'gpt9' (known: alexnet, bert, deepspeech, gnmt, lstm, m5, "
                     "mobilenet, res18, res50, shufflenet, transformer, vae)",
    "empty jobs": "error: {f}: jobs: the instance has no jobs (an empty job list)",
    "value 1e12": "error: {f}: jobs[0].value (job j0): must be within (0, 1000000], got 1e+12",
    "value 1e308": "error: {f}: jobs[0].value (job j0): must be within (0, 1000000], got 1e+308",
    "violation_weight 1e308": "error: {f}: objective.violation_weight: must be within [0, 1000000000], got 1e+308",
    "node with 5000 GPUs": "error: {f}: cluster.node_types[0].gpus: must be an integer within [1, 1024] GPUs per node, got 5000",
    "duplicate key": "error: {f}: (JSON): key 'name' given twice in one object",
    "nested 5000 deep": "error: {f}: (JSON): arrays/objects nested too deeply (about 1000 levels at most)",
    "5000-digit integer": "error: {f}: (JSON): a number too long to read (Exceeds the limit (4300 digits) for integer string conversion)",
    "gzip file": "error: {f}: (file): a gzip-compressed file, not text (decompress it first: gunzip)",
    "UTF-16 file": "error: {f}: (file): UTF-16 or UTF-32 text (save it as UTF-8)",
    "non-UTF-8 byte": "error: {f}: line 3 column 16: not UTF-8 text: byte 0xe9 (save the file as UTF-8)",
}


def write(path: Path, content) -> Path:
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


@pytest.fixture(scope="module")
def good_result(tmp_path_factory) -> Path:
    """A valid `solve -o` result (schedule) for TINY."""
    p = tmp_path_factory.mktemp("good") / "result.json"
    assert main(["solve", str(TINY), "--policy", "edf", "-o", str(p)]) == 0
    return p


# command name -> argv builder (instance file, valid schedule, output path); the output
# path is what the command would write
COMMANDS = {
    "solve": lambda inst, sched, out: ["solve", inst, "--json", "-o", out],
    "validate": lambda inst, sched, out: ["validate", inst, sched],
    "gap": lambda inst, sched, out: ["gap", TINY, inst, "--time-limit", "1", "-o", out],  # the bad file is the 2nd
    "plot": lambda inst, sched, out: ["plot", sched, "--instance", inst, "-o", out],
    "export": lambda inst, sched, out: ["export", inst, "-o", out],
    "round-gap": lambda inst, sched, out: ["round-gap", inst, "-o", out],
    "bound": lambda inst, sched, out: ["bound", inst, "-o", out],
}


def run(args, capsys):
    code = main([str(a) for a in args])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def test_catalog_is_complete():
    assert set(CASES) == set(MESSAGES)


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_instance_one_line_exit_2_no_output(case, command, tmp_path, good_result, capsys):
    f = write(tmp_path / "bad.json", CASES[case])
    out = tmp_path / "out.csv" if command == "gap" else tmp_path / "out.png" if command == "plot" else tmp_path / "out.json"
    code, stdout, err = run(COMMANDS[command](f, good_result, out), capsys)
    assert code == 2, err
    assert err.strip().splitlines() == [MESSAGES[case].format(f=f)]
    assert not out.exists() and not any(p.name.startswith(".out") for p in tmp_path.iterdir())  # no temp files either
    if command != "gap":  # gap prints its table only after every file loaded; nothing here
        assert stdout == ""


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_bad_instance_in_a_real_process(command, tmp_path, good_result):
    """The same in a subprocess: exit code 2, one line, no traceback."""
    f = write(tmp_path / "bad.json", CASES["duplicate id"])
    out = tmp_path / ("out.png" if command == "plot" else "out.json")
    argv = [str(a) for a in COMMANDS[command](f, good_result, out)]
    p = subprocess.run([sys.executable, "-m", "sensaopt", *argv], capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.strip().splitlines() == [MESSAGES["duplicate id"].format(f=f)]
    assert not out.exists()


# ---- schedule files -----------------------------------------------------------------------
def _sched(good: Path, fn) -> dict:
    d = json.loads(good.read_text())["schedule"]
    fn(d)
    return d


def _seg(k, **kw):
    return lambda d: d["segments"][k].update(kw)


def _place(k, q, **kw):
    return lambda d: d["segments"][k]["placements"][q].update(kw)


def _overlap(d):
    s = dict(d["segments"][0])
    s["start"] = s["start"] + 1  # the same job again, one round later: shares rounds with the first
    d["segments"].append(s)


# parse-level problems: exit 2, one line naming file, field, job
SCHEDULE_PARSE = {
    "malformed": ("{", "error: {f}: line 1 column 2: malformed JSON: Expecting property name enclosed in double quotes"),
    "unknown job": (_seg(0, job="ghost"), "error: {f}: segments[0].job (job ghost): unknown job (not in the instance)"),
    "unknown node": (_place(0, 0, node="node-9"), "error: {f}: segments[0].placements[0].node (job {job}): unknown node 'node-9'"),
    "missing field": (lambda d: d["segments"][0].pop("rounds"), "error: {f}: segments[0].rounds (job {job}): missing required field"),
    "negative start": (_seg(0, start=-1), "error: {f}: segments[0].start (job {job}): must be an integer within [0, 999999] round, got -1"),
    "wrong type": (_place(0, 0, gpus="2"), "error: {f}: segments[0].placements[0].gpus (job {job}): must be an integer, got '2'"),
}

# well-formed but inconsistent with the instance: `validate` names each broken rule
# (one line per error: rule, job, round) and exits with code 1
SCHEDULE_RULES = {
    "wrong round length": (lambda d: d.update(round_minutes=5.0), "bad_segment", "schedule round length 5.0 != instance round length 10.0"),
    "overlapping segments": (_overlap, "overlap", "overlap"),
    "too many GPUs on a node": (_place(0, 0, gpus=64), "gang", "GPUs, the job needs"),
}


@pytest.mark.parametrize("case", sorted(SCHEDULE_PARSE))
@pytest.mark.parametrize("command", ["validate", "plot"])
def test_bad_schedule_file_one_line_exit_2(case, command, tmp_path, good_result, capsys):
    fn, msg = SCHEDULE_PARSE[case]
    job = json.loads(good_result.read_text())["schedule"]["segments"][0]["job"]
    f = write(tmp_path / "s.json", fn if isinstance(fn, str) else _sched(good_result, fn))
    out = tmp_path / "g.png"
    argv = ["validate", TINY, f] if command == "validate" else ["plot", f, "--instance", TINY, "-o", out]
    code, stdout, err = run(argv, capsys)
    assert code == 2 and stdout == ""
    assert err.strip().splitlines() == [msg.format(f=f, job=job)]
    assert not out.exists()


@pytest.mark.parametrize("case", sorted(SCHEDULE_RULES))
def test_inconsistent_schedule_names_the_rule(case, tmp_path, good_result, capsys):
    fn, rule, text = SCHEDULE_RULES[case]
    f = write(tmp_path / "s.json", _sched(good_result, fn))
    code, stdout, err = run(["validate", TINY, f], capsys)
    assert code == 1 and err == ""
    lines = stdout.strip().splitlines()
    assert lines and all(line.startswith("invalid schedule [") for line in lines)
    hit = [line for line in lines if line.startswith(f"invalid schedule [{rule}]")]
    assert hit and text in hit[0], lines
    code, stdout, _ = run(["validate", TINY, f, "--json"], capsys)
    d = json.loads(stdout)
    assert code == 1 and d["valid"] is False and any(f"[{rule}]" in e for e in d["errors"])


# ---- trace files ----------------------------------------------------------------------------
CHRONUS_HEADER = "job_id,user,num_gpu,submit_time,iterations,model_name,duration,interval,expect_time_list,expect_value_list,best_effort,job_type"
GOOD_ROWS = [
    "0,vc_a,1,60,5530,mobilenet_v2,96,5,159-189-229-289,10-8-5-2,0,soft",
    "1,vc_b,2,75,760,alexnet,106,6,235,10,0,strict",
    "2,vc_c,4,120,3495,vgg16,26,14,102,10,1,best",
]
# case -> (file text, rows the --skip-malformed run drops, exact error line of the default run)
TRACES = {
    "truncated": ("\n".join([CHRONUS_HEADER, *GOOD_ROWS, "3,vc_d,1,123"]), 1,
                  "error: {f}: line 5: (row) (job 3): 4 fields where the header has 12 (truncated or mis-columned row)"),
    "extra column in a row": ("\n".join([CHRONUS_HEADER, GOOD_ROWS[0] + ",EXTRA,MORE", *GOOD_ROWS[1:]]) + "\n", 1,
                              "error: {f}: line 2: (row) (job 0): 14 fields where the header has 12 (truncated or mis-columned row)"),
    "unparsable rows": ("\n".join([CHRONUS_HEADER, GOOD_ROWS[0], "1,vc_b,one,75,760,alexnet,106,6,235,10,0,strict",
                                   "2,vc_c,4,120,3495,vgg16,abc,14,102,10,1,best", "3,vc_c,4,120,3495,vgg16,5,14,-102,10,0,strict"]) + "\n", 3,
                        "error: {f}: line 3: num_gpu (job 1): not an integer: 'one'"),
}
TRACE_HEADER = {  # whole-file problems: no --skip-malformed can help
    "semicolon-separated": ("job_id;user;num_gpu\n1;2;3\n", "error: {f}: header: not a Chronus trace (expect_time_list) nor a Helios job log (gpu_num); "
                               "map its columns with --columns arrival=COL,gpus=COL,work=COL[:s|min|h]"),
    "missing column": (CHRONUS_HEADER.replace(",interval", "") .replace(",best_effort", "") + "\n" + "0,a,1,5,5,m,96,159,10,strict\n",
                       "error: {f}: header: missing column(s) best_effort (have: job_id, user, num_gpu, submit_time, iterations, "
                       "model_name, duration, expect_time_list, expect_value_list, job_type)"),
    "empty": ("", "error: {f}: header: not a Chronus trace (expect_time_list) nor a Helios job log (gpu_num); "
                               "map its columns with --columns arrival=COL,gpus=COL,work=COL[:s|min|h]"),
    "only bad rows": ("\n".join([CHRONUS_HEADER, "1,vc_b,one,75,760,alexnet,106,6,235,10,0,strict"]) + "\n", None),
}


def _simulate(f, out, *extra):
    return ["simulate", "--trace", f, "--preset", "1x8", "--policy", "edf", "-q", "--out-dir", out, *extra]


@pytest.mark.parametrize("case", sorted(TRACES))
def test_bad_trace_rejected_by_default(case, tmp_path, capsys):
    text, _, msg = TRACES[case]
    f = write(tmp_path / "t.csv", text)
    for argv in (_simulate(f, tmp_path / "o"), ["instances", "from-trace", "--trace", f, "-n", "2", "--count", "1", "--out-dir", tmp_path / "o"]):
        code, stdout, err = run(argv, capsys)
        assert code == 2 and stdout == ""
        assert err.strip().splitlines() == [msg.format(f=f)]
        assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("case", sorted(TRACES))
def test_bad_trace_rows_skipped_and_counted(case, tmp_path, capsys):
    text, n_bad, _ = TRACES[case]
    f = write(tmp_path / "t.csv", text)
    code, stdout, err = run(_simulate(f, tmp_path / "o", "--skip-malformed"), capsys)
    assert code == 0, err
    n_rows = len([r for r in text.strip().splitlines()[1:]])
    assert f"{n_rows - n_bad} jobs on" in err and f"(skipped: malformed {n_bad})" in err
    s = json.loads((tmp_path / "o" / "edf.summary.json").read_text())
    assert s["workload"]["skipped"] == {"malformed": n_bad}
    assert s["metrics"]["jobs"] == n_rows - n_bad


@pytest.mark.parametrize("case", sorted(TRACE_HEADER))
@pytest.mark.parametrize("skip", [False, True])
def test_unusable_trace_file(case, skip, tmp_path, capsys):
    text, msg = TRACE_HEADER[case]
    f = write(tmp_path / "t.csv", text)
    code, stdout, err = run(_simulate(f, tmp_path / "o", *(["--skip-malformed"] if skip else [])), capsys)
    assert code == 2 and stdout == "" and len(err.strip().splitlines()) == 1
    if msg is None:  # only bad rows: rejected at the row, or nothing left after skipping them
        msg = "error: {f}: rows: no GPU job in the trace" if skip else "error: {f}: line 2: num_gpu (job 1): not an integer: 'one'"
    assert err.strip() == msg.format(f=f)
    assert not (tmp_path / "o").exists()


def test_truncated_philly_json(tmp_path, capsys):
    f = write(tmp_path / "log.json", '[{"jobid": "a", "attempts": [')
    code, stdout, err = run(_simulate(f, tmp_path / "o"), capsys)
    assert code == 2 and err.strip().startswith(f"error: {f}: line 1 column ") and "malformed JSON" in err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "o").exists()
