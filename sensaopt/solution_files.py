"""Solution files of external MILP solvers: variable name -> value.

Formats (detected from the text, or named):

* ``highs``: HiGHS ``writeSolution`` / ``--solution_file`` (raw style): a ``# Columns N``
  block of ``name value`` lines, after ``Objective V``;
* ``cbc``: CBC ``solu FILE``: a status line (``Optimal - objective value V``), then
  ``index name value reduced-cost`` lines (``**`` marks an infeasible one);
* ``scip``: SCIP ``write solution``: ``solution status: ...``, ``objective value: V``,
  then ``name value (obj:c)`` lines (zeros left out);
* ``gurobi``: Gurobi ``.sol``: ``# Objective value = V`` then ``name value`` lines.

A variable the file does not list is 0 (SCIP and Gurobi leave zeros out).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from sensaopt.errors import InputError

FORMATS = ("highs", "cbc", "scip", "gurobi")


@dataclass(frozen=True)
class SolutionFile:
    """What a solution file says: ``values`` (name -> value), the ``objective`` it reports
    (the file's own, unscaled; None when absent), its ``status`` line and ``format``."""

    values: dict[str, float]
    objective: float | None
    status: str | None
    format: str


def detect(text: str) -> str:
    """The format of a solution file's text (:data:`FORMATS`); ValueError if none fits."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if not lines:
        raise ValueError("empty file")
    if any(ln.startswith("# Columns") for ln in lines):
        return "highs"
    if lines[0].lower().startswith("solution status:"):
        return "scip"
    if "objective value" in lines[0].lower() and not lines[0].startswith("#"):
        return "cbc"
    if lines[0].startswith("#") or all(len(ln.split()) == 2 for ln in lines[:20]):
        return "gurobi"
    raise ValueError(f"not a HiGHS, CBC, SCIP or Gurobi solution (first line {lines[0][:60]!r})")


def read_solution(path: str | Path, fmt: str | None = None) -> SolutionFile:
    """The solution in ``path`` (``fmt``: one of :data:`FORMATS`, None: detected);
    :class:`InputError` naming the file and line when it cannot be read."""
    from sensaopt.io import check_regular_file

    p = Path(path)
    try:
        check_regular_file(p)
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError(str(p), "(file)", "not a text file") from None
    if fmt is not None and fmt not in FORMATS:
        raise InputError(str(p), "--solution-format", f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")
    try:
        kind = fmt or detect(text)
        return {"highs": _highs, "cbc": _cbc, "scip": _scip, "gurobi": _gurobi}[kind](text)
    except ValueError as e:
        raise InputError(str(p), "(solution)", str(e)) from None


def _token(text: str, i: int, line: int, what: str) -> str:
    """The ``i``-th whitespace-separated token of ``text``; ValueError naming the line when it has none."""
    parts = text.split()
    if len(parts) <= i:
        raise ValueError(f"line {line}: expected {what}, got {text.strip()[:60]!r}")
    return parts[i]


def _number(tok: str, line: int) -> float:
    try:
        x = float(tok)
    except ValueError:
        raise ValueError(f"line {line}: not a number: {tok!r}") from None
    if not math.isfinite(x):
        raise ValueError(f"line {line}: not a finite number: {tok!r}")
    return x


def _highs(text: str) -> SolutionFile:
    lines = text.splitlines()
    status = lines[1].strip() if len(lines) > 1 and lines[0].strip() == "Model status" else None
    objective, values = None, {}
    i = 0
    while i < len(lines):
        s = lines[i].strip()
        if s.startswith("Objective ") and objective is None:
            objective = _number(_token(s, 1, i + 1, "'Objective VALUE'"), i + 1)
        if s.startswith("# Columns"):
            n = int(_number(_token(s, 2, i + 1, "'# Columns N'"), i + 1))
            for j in range(i + 1, i + 1 + n):
                parts = lines[j].split() if j < len(lines) else []
                if len(parts) != 2:
                    raise ValueError(f"line {j + 1}: expected 'name value' ({n} columns from line {i + 1})")
                values[parts[0]] = _number(parts[1], j + 1)
            return SolutionFile(values, objective, status, "highs")
        i += 1
    raise ValueError("no '# Columns' block (no primal solution in the file?)")


def _from_first(text: str) -> tuple[int, list[str]]:
    """(blank lines skipped, the lines of ``text`` from its first non-blank one, where :func:`detect` looked)."""
    lines = text.splitlines()
    first = next((i for i, ln in enumerate(lines) if ln.strip()), len(lines))
    return first, lines[first:] or [""]


def _cbc(text: str) -> SolutionFile:
    skipped, lines = _from_first(text)
    head = lines[0].strip()
    objective = None
    if "objective value" in head.lower():
        objective = _number(_token(head.lower().split("objective value")[1], 0, skipped + 1, "'objective value V'"), skipped + 1)
    values = {}
    for n, raw in enumerate(lines[1:], skipped + 2):
        parts = raw.replace("**", " ").split()
        if not parts:
            continue
        if len(parts) < 3:
            raise ValueError(f"line {n}: expected 'index name value reduced-cost'")
        values[parts[1]] = _number(parts[2], n)
    return SolutionFile(values, objective, head.split(" - ")[0].strip(), "cbc")


def _scip(text: str) -> SolutionFile:
    skipped, lines = _from_first(text)
    if ":" not in lines[0]:
        raise ValueError(f"line {skipped + 1}: expected 'solution status: ...', got {lines[0][:60]!r}")
    status = lines[0].split(":", 1)[1].strip()
    objective, values = None, {}
    for n, raw in enumerate(lines[1:], skipped + 2):
        s = raw.strip()
        if not s:
            continue
        if s.lower().startswith("objective value:"):
            objective = _number(_token(s.split(":", 1)[1], 0, n, "'objective value: V'"), n)
            continue
        parts = s.split()
        if len(parts) < 2:
            raise ValueError(f"line {n}: expected 'name value (obj:c)'")
        values[parts[0]] = _number(parts[1], n)
    return SolutionFile(values, objective, status, "scip")


def _gurobi(text: str) -> SolutionFile:
    objective, values = None, {}
    for n, raw in enumerate(text.splitlines(), 1):
        s = raw.strip()
        if not s:
            continue
        if s.startswith("#"):
            if "objective value" in s.lower() and "=" in s:
                objective = _number(s.split("=", 1)[1].strip(), n)
            continue
        parts = s.split()
        if len(parts) != 2:
            raise ValueError(f"line {n}: expected 'name value'")
        values[parts[0]] = _number(parts[1], n)
    return SolutionFile(values, objective, None, "gurobi")
