"""Structure-aware fuzzing of the readers (issue 35, item 3): Hypothesis strategies that
build valid instance, schedule, result, solution and trace files, then mutate them —
drop, duplicate or retype a field, set a number to an extreme, truncate the text, change
its encoding — and the check each case must pass: the reader, then ``solve --policy
edf`` / ``validate`` on what it read, either fail with a one-line
:class:`~sensaopt.errors.SensaoptError` or succeed with a schedule the validator accepts
(for schedule, result and solution files: the validator runs and gives its verdict).
Every case that ever failed is kept in ``tests/data/fuzz-corpus/READER/`` and replayed
by the default suite (:func:`replay`)."""

from __future__ import annotations

import contextlib
import copy
import gzip
import hashlib
import io
import json
import math
import random
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from sensaopt.errors import SensaoptError

CORPUS = Path(__file__).resolve().parent / "data" / "fuzz-corpus"
READERS = ("instance", "schedule", "result", "solution", "trace")
MAX_SIM_ROUNDS = 3000  # simulate what was read only when it spans at most this many rounds (a fuzzed 10^6-minute job would take minutes)
tried: Counter[str] = Counter()  # cases per reader in this process
outcomes: Counter[tuple[str, str]] = Counter()  # (reader, "read" | "refused" | "read, not simulated")

# ---- tree mutations ------------------------------------------------------------------------------
EXTREMES: tuple[Any, ...] = (0, -1, -0.0, 0.5, 1e-308, 5e-324, 1e15, 999_999, 1_000_000, 1_000_001, 2**31, 2**63, 2**64, 10**400,
                             1e308, -1e308, math.nan, math.inf, -math.inf)
RETYPES: tuple[Any, ...] = ("x", "5", "", 5, 5.5, True, False, None, [], {}, "a" * 2000, "\n", "\x00", "é", "j0")


def _slots(obj: Any, out: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """Every (container, key) of a JSON tree, depth first."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.append((obj, k))
            _slots(v, out)
    elif isinstance(obj, list):
        for k, v in enumerate(obj):
            out.append((obj, k))
            _slots(v, out)
    return out


def mutate_tree(obj: Any, rnd: random.Random, n: int) -> tuple[Any, tuple[int, Any] | None]:
    """``n`` random structural mutations of a copy of the JSON tree ``obj``; also returns
    (id of a dict, key) to write twice (a duplicated field) or None."""
    obj = copy.deepcopy(obj)
    dup = None
    for _ in range(n):
        slots = _slots(obj, [])
        if not slots:
            break
        c, k = rnd.choice(slots)
        op = rnd.choice(("drop", "duplicate", "retype", "extreme", "extreme", "wrap", "rename", "grow"))
        if op == "drop":
            del c[k]
        elif op == "duplicate":
            if isinstance(c, list):
                c.insert(k, copy.deepcopy(c[k]))
            else:
                dup = (id(c), k)
        elif op == "retype":
            c[k] = rnd.choice(RETYPES)
        elif op == "extreme":
            c[k] = rnd.choice(EXTREMES)
        elif op == "wrap":
            c[k] = rnd.choice(([c[k]], {"v": c[k]}))
        elif op == "rename" and isinstance(c, dict):
            c[f"{k}_x"] = c.pop(k)
        elif op == "grow" and isinstance(c[k], list) and c[k]:
            orig = c[k]
            c[k] = orig + [copy.deepcopy(x) for _ in range(rnd.choice((1, 5, 50))) for x in orig]
    return obj, dup


def dumps(obj: Any, dup: tuple[int, Any] | None = None) -> str:
    """JSON text (NaN and infinities as Python writes them), one dict's key ``dup`` written twice."""
    if isinstance(obj, dict):
        items = [f"{json.dumps(str(k))}: {dumps(v, dup)}" for k, v in obj.items()]
        if dup is not None and dup[0] == id(obj) and dup[1] in obj:
            items.append(f"{json.dumps(str(dup[1]))}: {dumps(obj[dup[1]], dup)}")
        return "{" + ", ".join(items) + "}"
    if isinstance(obj, list):
        return "[" + ", ".join(dumps(v, dup) for v in obj) + "]"
    return json.dumps(obj)


def mutate_text(text: str, rnd: random.Random) -> bytes:
    """The file's bytes after at most one text-level mutation: truncated, a byte flipped,
    another encoding (UTF-16, Latin-1 with a non-ASCII character, a BOM, gzip), CRLF line
    ends, a NUL byte, or none."""
    op = rnd.choice(("none",) * 9 + ("truncate", "flip", "utf16", "latin1", "bom", "gzip", "crlf", "nul"))
    data = text.encode("utf-8")
    if op == "truncate" and data:
        return data[: rnd.randrange(len(data))]
    if op == "flip" and data:
        i = rnd.randrange(len(data))
        return data[:i] + bytes([rnd.randrange(256)]) + data[i + 1:]
    if op == "utf16":
        return text.encode("utf-16")
    if op == "latin1":
        i = rnd.randrange(len(text) + 1)
        return (text[:i] + "é" + text[i:]).encode("latin-1", "replace")
    if op == "bom":
        return b"\xef\xbb\xbf" + data
    if op == "gzip":
        return gzip.compress(data, mtime=0)
    if op == "crlf":
        return data.replace(b"\n", b"\r\n")
    if op == "nul" and data:
        i = rnd.randrange(len(data))
        return data[:i] + b"\x00" + data[i:]
    return data


def json_cases(valid: st.SearchStrategy[Any]) -> st.SearchStrategy[bytes]:
    """Mutated JSON files of the valid trees ``valid``."""
    @st.composite
    def build(draw: Any) -> bytes:
        rnd = draw(st.randoms(use_true_random=False))
        tree, dup = mutate_tree(draw(valid), rnd, draw(st.integers(0, 3)))
        return mutate_text(dumps(tree, dup), rnd)
    return build()


# ---- valid files -----------------------------------------------------------------------------------
def valid_instances() -> st.SearchStrategy[dict]:
    """Instance files: a seeded generated instance (1-6 jobs, 1-3 nodes), some jobs given
    an inline profile, soft deadlines or a speed factor, some best effort."""
    from sensaopt.generate import GeneratorConfig, generate
    from sensaopt.io import instance_to_dict
    from sensaopt.profiles import get_profile

    @st.composite
    def build(draw: Any) -> dict:
        cfg = GeneratorConfig(jobs=draw(st.integers(1, 6)), nodes=draw(st.integers(1, 3)), seed=draw(st.integers(0, 2**16)),
                              best_effort_fraction=draw(st.sampled_from((0.0, 0.5))))
        d = instance_to_dict(generate(cfg))
        for j in d["jobs"]:
            extra = draw(st.sampled_from(("none", "none", "profile", "soft", "speed")))
            if extra == "profile":
                p = get_profile(j.pop("model"))
                j["profile"] = {"cpu_levels": list(p.cpu_levels), "mem_levels": list(p.mem_levels),
                                "speeds": [list(r) for r in p.speeds], "task": p.task}
            elif extra == "soft" and j["deadline"] is not None:
                j["soft_deadlines"] = [{"at": j["deadline"] + 30.0, "value": 0.5}]
            elif extra == "speed":
                j["speed_factor"] = draw(st.sampled_from((0.5, 1.3)))
        return d
    return build()


_SOLVED: dict[int, tuple[Any, dict]] = {}


def solved(seed: int) -> tuple[Any, dict]:
    """(instance, `solve --policy edf -o` result dict) of a small generated instance (cached)."""
    if seed not in _SOLVED:
        from sensaopt.generate import GeneratorConfig, generate
        from sensaopt.solve import solve

        inst = generate(GeneratorConfig(jobs=4 + seed % 3, nodes=1 + seed % 2, seed=seed))
        _SOLVED[seed] = (inst, solve(inst, "heuristic", policy="edf").to_dict(inst))
    return _SOLVED[seed]


RESULT_SEEDS = range(4)


def valid_results() -> st.SearchStrategy[tuple[int, dict]]:
    """(seed of the instance, result file): an edf result, or one whose status says it has
    no schedule (TIME_LIMIT without an incumbent, INFEASIBLE, ERROR)."""
    @st.composite
    def build(draw: Any) -> tuple[int, dict]:
        seed = draw(st.sampled_from(RESULT_SEEDS))
        d = copy.deepcopy(solved(seed)[1])
        status = draw(st.sampled_from(("FEASIBLE", "FEASIBLE", "TIME_LIMIT", "INFEASIBLE", "ERROR")))
        if status != "FEASIBLE":
            d.update(status=status, objective=None, metrics=None, schedule=None, message="no solution found")
        return seed, d
    return build()


def seeded_json_cases(valid: st.SearchStrategy[tuple[int, Any]]) -> st.SearchStrategy[tuple[int, bytes]]:
    @st.composite
    def build(draw: Any) -> tuple[int, bytes]:
        seed, tree = draw(valid)
        rnd = draw(st.randoms(use_true_random=False))
        tree, dup = mutate_tree(tree, rnd, draw(st.integers(0, 3)))
        return seed, mutate_text(dumps(tree, dup), rnd)
    return build()


def schedule_cases() -> st.SearchStrategy[tuple[int, bytes]]:
    return seeded_json_cases(st.sampled_from(RESULT_SEEDS).map(lambda s: (s, solved(s)[1]["schedule"])))


def result_cases() -> st.SearchStrategy[tuple[int, bytes]]:
    return seeded_json_cases(valid_results())


# ---- line-based files: solutions and traces ------------------------------------------------------
def mutate_lines(lines: list[str], sep: str, rnd: random.Random, n: int) -> list[str]:
    """``n`` mutations of a line-based file: drop, duplicate or swap a line; drop,
    duplicate or retype a field (``sep``-separated); an extreme number in a field."""
    lines = list(lines)
    for _ in range(n):
        if not lines:
            break
        i = rnd.randrange(len(lines))
        op = rnd.choice(("drop", "dup", "swap", "field-drop", "field-dup", "retype", "extreme", "extreme"))
        if op == "drop":
            del lines[i]
        elif op == "dup":
            lines.insert(i, lines[i])
        elif op == "swap":
            j = rnd.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        else:
            fields = lines[i].split(sep)
            k = rnd.randrange(len(fields))
            if op == "field-drop":
                del fields[k]
            elif op == "field-dup":
                fields.insert(k, fields[k])
            elif op == "retype":
                fields[k] = rnd.choice(("x", "", "one", '"', '"a,b"', "1-2-x", "true", "é", "\t", "--"))
            else:
                fields[k] = rnd.choice(("0", "-1", "1e308", "-1e308", "nan", "inf", "-inf", "1e-308", "99999999999999999999",
                                        "1000000", "1000001", "1e6", "0x10", "1_000", " 5 "))
            lines[i] = sep.join(fields)
    return lines


def line_cases(valid: st.SearchStrategy[tuple[Any, str, str]]) -> st.SearchStrategy[tuple[Any, bytes]]:
    """(key, mutated file) of valid (key, text, field separator) files."""
    @st.composite
    def build(draw: Any) -> tuple[Any, bytes]:
        key, text, sep = draw(valid)
        rnd = draw(st.randoms(use_true_random=False))
        lines = mutate_lines(text.split("\n"), sep, rnd, draw(st.integers(0, 3)))
        return key, mutate_text("\n".join(lines), rnd)
    return build()


CHRONUS_HEADER = ("job_id,user,num_gpu,submit_time,iterations,model_name,duration,interval,expect_time_list,expect_value_list,"
                  "best_effort,job_type")


def valid_traces() -> st.SearchStrategy[tuple[None, str, str]]:
    """Chronus-format trace files of 1-6 jobs (strict, soft and best-effort rows)."""
    row = st.tuples(st.sampled_from((1, 2, 4, 8)), st.integers(0, 600), st.integers(5, 400), st.sampled_from(("strict", "soft", "best")),
                    st.sampled_from(("alexnet", "vgg16", "mobilenet_v2", "resnet50")))

    def text(rows: list[tuple[int, int, int, str, str]]) -> tuple[None, str, str]:
        out = [CHRONUS_HEADER]
        for k, (g, submit, dur, kind, model) in enumerate(rows):
            deadlines, values = ("159-189-229", "10-8-5") if kind == "soft" else (str(2 * dur + 30), "10")
            out.append(f"{k},vc_a,{g},{submit},{10 * dur},{model},{dur},5,{deadlines},{values},{int(kind == 'best')},{kind}")
        return None, "\n".join(out) + "\n", ","
    return st.lists(row, min_size=1, max_size=6).map(text)


_EXPORT: dict[str, Any] = {}


def exported() -> dict[str, Any]:
    """An exported model of a 3-job instance, its sidecar and its HiGHS solution's values (once per process)."""
    if not _EXPORT:
        import tempfile

        import highspy

        from sensaopt.cli import main
        from sensaopt.generate import GeneratorConfig, generate
        from sensaopt.io import save_instance
        from sensaopt.solution_files import read_solution

        d = Path(tempfile.mkdtemp(prefix="sensaopt-fuzz-"))
        save_instance(generate(GeneratorConfig(jobs=3, nodes=1, seed=3)), d / "inst.json")
        with contextlib.redirect_stdout(io.StringIO()):
            assert main(["export", str(d / "inst.json"), "-o", str(d / "model.mps")]) == 0
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("threads", 1)
        h.readModel(str(d / "model.mps"))
        h.run()
        h.writeSolution(str(d / "model.sol"), 0)
        _EXPORT.update(dir=d, model=d / "model.mps", highs=(d / "model.sol").read_text(), values=read_solution(d / "model.sol"))
    return _EXPORT


def solution_text(fmt: str) -> str:
    """The exported model's solution in ``fmt`` (highs, cbc, scip, gurobi), as those solvers write it."""
    e = exported()
    s = e["values"]
    if fmt == "highs":
        return str(e["highs"])
    nz = {k: v for k, v in s.values.items() if v != 0}
    if fmt == "cbc":
        return f"Optimal - objective value {s.objective}\n" + "".join(f"{i:7d} {k:<20} {v:>15g} 0\n" for i, (k, v) in enumerate(s.values.items()))
    if fmt == "scip":
        return (f"solution status: optimal solution found\nobjective value:                 {s.objective}\n"
                + "".join(f"{k:<40} {v:>20g} \t(obj:0)\n" for k, v in nz.items()))
    return f"# Solution for model m\n# Objective value = {s.objective}\n" + "".join(f"{k} {v:g}\n" for k, v in nz.items())


def valid_solutions() -> st.SearchStrategy[tuple[str, str, str]]:
    return st.sampled_from(("highs", "cbc", "scip", "gurobi")).map(lambda f: (f, solution_text(f), " "))


# ---- the checks -------------------------------------------------------------------------------------
class Disallowed(AssertionError):
    """A case whose outcome is neither a one-line SensaoptError nor an accepted success."""


@contextlib.contextmanager
def allowed(reader: str, data: bytes, seed: int | None = None) -> Any:
    """Within the block: a SensaoptError of one line is an allowed end (the case is
    "refused"); any other exception is a failure, its case saved to the corpus."""
    tried[reader] += 1
    try:
        yield
    except SensaoptError as e:
        if "\n" in str(e) or "\r" in str(e):
            save(reader, data, seed)
            raise Disallowed(f"{reader}: a SensaoptError of more than one line: {str(e)!r}") from e
        outcomes[(reader, "refused")] += 1
    except Disallowed:
        save(reader, data, seed)
        raise
    except Exception as e:
        save(reader, data, seed)
        raise Disallowed(f"{reader}: {type(e).__name__}: {e}") from e


def save(reader: str, data: bytes, seed: int | None = None) -> Path:
    """Keep a failing case in the corpus (commit it: the default suite replays it); a
    schedule or result case's name starts with the seed of its instance (``s2-``)."""
    d = CORPUS / reader.split()[0]
    d.mkdir(parents=True, exist_ok=True)
    p = d / f"{'' if seed is None else f's{seed}-'}{hashlib.sha1(data).hexdigest()[:16]}.case"
    p.write_bytes(data)
    return p


def _simulate_and_validate(reader: str, inst: Any) -> None:
    """``solve --policy edf`` on what was read; its schedule must validate. Skipped (and
    counted) for an instance spanning more than MAX_SIM_ROUNDS rounds."""
    from sensaopt.memory import min_rounds
    from sensaopt.solve import solve
    from sensaopt.validator import check_schedule

    if min_rounds(inst) > MAX_SIM_ROUNDS:
        outcomes[(reader, "read, not simulated")] += 1
        return
    res = solve(inst, "heuristic", policy="edf")
    if res.schedule is None or not check_schedule(inst, res.schedule).ok:
        raise Disallowed(f"{reader}: edf gave {res.status.value} and a schedule the validator rejects: {res.message}")
    outcomes[(reader, "read")] += 1


def check_instance_file(data: bytes, path: Path) -> None:
    from sensaopt.io import load_instance

    path.write_bytes(data)
    with allowed("instance", data):
        _simulate_and_validate("instance", load_instance(path))


def check_schedule_file(seed: int, data: bytes, path: Path, reader: str = "schedule") -> None:
    from sensaopt.io import load_schedule
    from sensaopt.validator import check_schedule

    inst = solved(seed)[0]
    path.write_bytes(data)
    with allowed(reader, data, seed):
        ev = check_schedule(inst, load_schedule(path, inst))  # validate: its verdict, whatever it is
        outcomes[(reader, "read")] += 1
        if ev.ok:
            from sensaopt.metrics import compute_metrics

            compute_metrics(inst, ev)


def check_result_file(seed: int, data: bytes, path: Path) -> None:
    from sensaopt.result import load_result

    inst = solved(seed)[0]
    path.write_bytes(data)
    with allowed("result", data, seed):
        res = load_result(path, inst)
        from sensaopt.cli.core import summary_line

        summary_line(res)  # what a command prints of a result read back
        outcomes[("result", "read")] += 1
    check_schedule_file(seed, data, path, reader="result (validate)")


def check_solution_file(data: bytes, path: Path) -> None:
    from sensaopt.roundtrip import import_solution

    e = exported()
    path.write_bytes(data)
    with allowed("solution", data):
        got = import_solution(e["model"], path)
        assert got.evaluation is not None  # the validator ran; its verdict is the command's answer
        outcomes[("solution", "read")] += 1


def check_trace_file(data: bytes, path: Path) -> None:
    from sensaopt.traces.sources import make_instance

    path.write_bytes(data)
    with allowed("trace", data):
        inst, _ = make_instance(str(path), "1x8")
        _simulate_and_validate("trace", inst)


def cli_line(argv: list[str]) -> tuple[int, str]:
    """(exit code, stderr) of the CLI entry run in-process; an uncaught exception fails."""
    from sensaopt.cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(argv)
    return code, err.getvalue()


def replay(reader: str, case: Path, tmp: Path) -> None:
    """Run a corpus case through its reader's check (schedules and results against the
    instance of the seed their name starts with)."""
    data, f = case.read_bytes(), tmp / ("f.csv" if reader == "trace" else "f.json")
    seed = int(case.name[1:].split("-")[0]) if case.name.startswith("s") else 0
    checks: dict[str, Callable[[], None]] = {
        "instance": lambda: check_instance_file(data, f), "schedule": lambda: check_schedule_file(seed, data, f),
        "result": lambda: check_result_file(seed, data, f), "solution": lambda: check_solution_file(data, f),
        "trace": lambda: check_trace_file(data, f)}
    checks[reader]()
