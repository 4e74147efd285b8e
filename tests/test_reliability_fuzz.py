"""Structure-aware fuzzing of the file readers (issue 35, item 3; strategies and checks in
``tests/fuzz.py``): valid instance, schedule, result, solution and trace files, mutated,
through their readers and ``solve --policy edf`` / ``validate``. Allowed: a one-line
SensaoptError, or a success the validator accepts. A fast run (a few hundred cases) is
in the default suite; ``-m slow`` runs 10,000 cases per reader. Every case that ever
failed is in ``tests/data/fuzz-corpus/`` and replayed here."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from . import fuzz

FAST = int(os.environ.get("SENSAOPT_FUZZ_FAST", "100"))  # cases per reader in the default suite
SLOW = 10_000  # cases per reader in the slow suite


def _settings(n: int) -> settings:
    return settings(max_examples=n, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))


def _tmp() -> Path:
    return Path(tempfile.mkdtemp(prefix="sensaopt-fuzz-case-"))


def _run(reader: str, n: int) -> None:
    """``n`` cases of ``reader`` through its check (a hypothesis run)."""
    tmp = _tmp()
    f = tmp / ("f.csv" if reader == "trace" else "f.json")
    if reader == "instance":
        @given(fuzz.json_cases(fuzz.valid_instances()))
        @_settings(n)
        def case(data: bytes) -> None:
            fuzz.check_instance_file(data, f)
    elif reader == "schedule":
        @given(fuzz.schedule_cases())
        @_settings(n)
        def case(sd: tuple[int, bytes]) -> None:
            fuzz.check_schedule_file(sd[0], sd[1], f)
    elif reader == "result":
        @given(fuzz.result_cases())
        @_settings(n)
        def case(sd: tuple[int, bytes]) -> None:
            fuzz.check_result_file(sd[0], sd[1], f)
    elif reader == "solution":
        @given(fuzz.line_cases(fuzz.valid_solutions()))
        @_settings(n)
        def case(kd: tuple[str, bytes]) -> None:
            fuzz.check_solution_file(kd[1], f)
    else:
        @given(fuzz.line_cases(fuzz.valid_traces()))
        @_settings(n)
        def case(kd: tuple[None, bytes]) -> None:
            fuzz.check_trace_file(kd[1], f)
    case()


@pytest.mark.parametrize("reader", fuzz.READERS)
def test_fuzzed_files_give_one_line_or_a_valid_result(reader: str) -> None:
    _run(reader, FAST)


@pytest.mark.slow
@pytest.mark.parametrize("reader", fuzz.READERS)
def test_ten_thousand_fuzzed_files_per_reader(reader: str) -> None:
    before = fuzz.tried[reader]
    _run(reader, SLOW)
    n = fuzz.tried[reader] - before
    seen = {f"{k[0]}: {k[1]}": v for k, v in fuzz.outcomes.items() if k[0].split()[0] == reader}
    print(f"\n{reader}: {n} cases, outcomes {seen}")
    assert n >= SLOW


CORPUS_CASES = sorted((r, p) for r in fuzz.READERS for p in (fuzz.CORPUS / r).glob("*.case")) if fuzz.CORPUS.exists() else []


@pytest.mark.parametrize("reader, case", CORPUS_CASES, ids=[f"{r}/{p.name}" for r, p in CORPUS_CASES])
def test_every_case_that_ever_failed_passes_now(reader: str, case: Path, tmp_path: Path) -> None:
    fuzz.replay(reader, case, tmp_path)


@pytest.mark.parametrize("reader", ["instance", "schedule", "result"])
def test_the_cli_gives_one_line_for_fuzzed_files(reader: str, tmp_path: Path) -> None:
    """In-process CLI runs (`solve --policy edf`, `validate`) of fuzzed files: exit 0,
    1 (a schedule validate rejects) or 2 with one line on stderr, never a traceback."""
    strategy = {"instance": fuzz.json_cases(fuzz.valid_instances()).map(lambda d: (0, d)),
                "schedule": fuzz.schedule_cases(), "result": fuzz.result_cases()}[reader]
    inst_file = tmp_path / "inst.json"
    f = tmp_path / "f.json"

    @given(strategy)
    @_settings(max(FAST // 3, 10))
    def case(sd: tuple[int, bytes]) -> None:
        from sensaopt.io import save_instance

        f.write_bytes(sd[1])
        if reader == "instance":
            argv = ["solve", str(f), "--policy", "edf"]
        else:
            save_instance(fuzz.solved(sd[0])[0], inst_file)
            argv = ["validate", str(inst_file), str(f)]
        code, err = fuzz.cli_line(argv)
        assert code in (0, 1, 2) and "Traceback" not in err, err
        assert code != 2 or (err.startswith("error: ") and err.count("\n") == 1), err
        assert code != 0 or err == "", err

    case()


def test_the_mutations_change_the_files() -> None:
    """The strategies are not idle: most fuzzed instance files differ from every valid one
    and are refused with a one-line error."""
    fuzz.outcomes.clear()
    _run("instance", 40)
    assert fuzz.outcomes[("instance", "refused")] >= 10 and fuzz.outcomes[("instance", "read")] >= 5, fuzz.outcomes
