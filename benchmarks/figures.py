"""Regenerate the numbers the docs quote from a command, and show where the text drifted.

Every figure here is one number (or block of output) in README.md (the tour's solve line, the
headline results), docs/ (docs/exact.md's gap table, docs/results.md's ladder prose) or models/
that a command of today's code produces: it is recomputed and compared with the text.

    python benchmarks/figures.py            # a unified diff per drifted file; exit 1 if any
    python benchmarks/figures.py --write    # rewrite the drifted figures in place
    python benchmarks/figures.py --cheap    # only the figures that take under a second each

Kinds of figure:

* :class:`Block`: the output lines of a command shown in a code block, each prefixed
  (``# ``), right after the line that shows the command (``anchor``); ``mask`` hides what
  varies run to run (wall times) when comparing;
* :class:`Phrase`: a sentence with holes (``{}``), the values computed from the current code;
* :class:`Cell`: one column of a markdown table, in the rows whose first cell starts with a name.

``tests/test_figures.py`` runs the cheap figures (and, marked slow, the rest) and fails on drift.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import io
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Block:
    """The output of ``command`` (sensaopt CLI arguments) under the line ``anchor`` of ``doc``."""

    name: str
    doc: str
    anchor: str
    command: tuple[str, ...]
    prefix: str = "# "
    mask: str | None = None  # a regex whose matches are ignored when comparing (wall times, load-dependent bounds)
    cheap: bool = False

    def expected(self) -> list[str]:
        from sensaopt.cli import main

        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            code = main(list(self.command))
        if code != 0:
            raise RuntimeError(f"{self.name}: `sensaopt {' '.join(self.command)}` exited {code}")
        return [f"{self.prefix}{line}".rstrip() for line in out.getvalue().splitlines()]

    def apply(self, text: str) -> str:
        lines = text.split("\n")
        at = [i for i, ln in enumerate(lines) if ln.strip() == self.anchor.strip()]
        if len(at) != 1:
            raise RuntimeError(f"{self.name}: the anchor line is in {self.doc} {len(at)} times: {self.anchor!r}")
        new = self.expected()
        shown = 0  # the output lines shown now: the prefixed lines under the anchor, at most as many as the output has
        while shown < len(new) and at[0] + 1 + shown < len(lines) and lines[at[0] + 1 + shown].startswith(self.prefix.rstrip()):
            shown += 1
        old = lines[at[0] + 1: at[0] + 1 + shown]
        if self.mask is not None and [re.sub(self.mask, "", x) for x in old] == [re.sub(self.mask, "", x) for x in new]:
            return text  # the same but for what varies run to run
        return "\n".join(lines[: at[0] + 1] + new + lines[at[0] + 1 + shown:])


@dataclass(frozen=True)
class Phrase:
    """``template`` (text with ``{}`` holes) in ``doc``; ``values()`` fills the holes."""

    name: str
    doc: str
    template: str
    values: Callable[[], Sequence[str]]
    cheap: bool = True

    def apply(self, text: str) -> str:
        parts = self.template.split("{}")
        pattern = "(.+?)".join(re.escape(p).replace(r"\ ", r"\s+") for p in parts)
        found = list(re.finditer(pattern, text, flags=re.S))
        if len(found) != 1:
            raise RuntimeError(f"{self.name}: the phrase is in {self.doc} {len(found)} times: {self.template!r}")
        m = found[0]
        vals = list(self.values())
        if len(vals) != len(parts) - 1:
            raise RuntimeError(f"{self.name}: {len(vals)} values for {len(parts) - 1} holes")
        out, pos = [], m.start()
        for k, v in enumerate(vals, 1):
            out += [text[pos:m.start(k)], v]
            pos = m.end(k)
        return text[: m.start()] + "".join(out) + text[pos:]


@dataclass(frozen=True)
class Cell:
    """Column ``column`` of the markdown table in ``doc`` whose header row starts with
    ``header``, in each row whose instance (the first word of its first cell, or of the
    last row that named one) is a key of ``values()``."""

    name: str
    doc: str
    header: str  # the table's header row starts with this
    column: str
    values: Callable[[], dict[str, str]]
    cheap: bool = True

    def apply(self, text: str) -> str:
        lines = text.split("\n")
        heads = [i for i, ln in enumerate(lines) if ln.startswith(self.header)]
        if len(heads) != 1:
            raise RuntimeError(f"{self.name}: the table header is in {self.doc} {len(heads)} times")
        cols = [c.strip() for c in lines[heads[0]].strip().strip("|").split("|")]
        j = cols.index(self.column)
        vals = self.values()
        current = None
        for i in range(heads[0] + 2, len(lines)):
            if not lines[i].startswith("|"):
                break
            cells = lines[i].strip().strip("|").split("|")
            first = cells[0].strip().split(" ")[0]
            current = first or current
            if current in vals:
                cells[j] = f" {vals[current]} "
                lines[i] = "|" + "|".join(cells) + "|"
        return "\n".join(lines)


Figure = Block | Phrase | Cell


# ---- what the figures are ----------------------------------------------------------------------
def _metrics(instance: str, policy: str) -> tuple[int, float, float]:
    """(SLO violations, avg JCT, objective) of ``policy`` on a packaged instance."""
    import sensaopt

    r = sensaopt.simulate(sensaopt.load_instance(instance), policy)
    assert r.metrics is not None and r.objective is not None
    return r.metrics.slo_violations, r.metrics.avg_jct, r.objective


def _g(x: float) -> str:
    """A figure as the docs print it: at most 2 decimals, no trailing zeros."""
    return f"{x:.2f}".rstrip("0").rstrip(".")


def _misses(policy: str) -> tuple[str, str]:
    return str(_metrics("small-8gpu", policy)[0]), str(_metrics("small-16gpu", policy)[0])


def _ladder_sensascale() -> dict[str, str]:
    return {name: _g(_metrics(name, "sensascale")[2]) for name in ("tiny-16gpu", "tiny-8gpu")}


_TINY_OPTIMUM = {"tiny-16gpu": 78.0, "tiny-8gpu": 100115.4}  # proven by all three backends (the ladder rows)


def _ladder_gap() -> dict[str, str]:
    out = {}
    for name, opt in _TINY_OPTIMUM.items():
        ours = _metrics(name, "sensascale")[2]
        more = int(ours // 1e5) - int(opt // 1e5)
        out[name] = (f"{more} miss{'es' if more > 1 else ''} more" if more > 0
                     else "0" if ours == opt else f"{100 * (ours - opt) / opt:.1f}%")
    return out


def _tiny16_verdict() -> tuple[str]:
    """How SensaScale's objective on tiny-16gpu compares with the proven optimum (the README's headline)."""
    ours, opt = _metrics("tiny-16gpu", "sensascale")[2], _TINY_OPTIMUM["tiny-16gpu"]
    return ("equals" if ours == opt else f"is {100 * (ours - opt) / opt:.1f}% above",)


FIGURES: list[Figure] = [
    # README.md: the tour's solve line and the headline results
    Block("solve line", "README.md",
          "sensaopt solve instances/tiny-16gpu.json                                     # one summary line:",
          ("solve", "instances/tiny-16gpu.json"), mask=r", [0-9.]+ s$", cheap=True),
    Phrase("headline: tiny-16gpu", "README.md",
           "on tiny-16gpu SensaScale's objective {} the optimum that CP-SAT", _tiny16_verdict),
    Phrase("headline: small rung", "README.md",
           "every deadline can be met; SensaScale misses {} and {}, EDF {} and {} —",
           lambda: (*_misses("sensascale"), *_misses("edf"))),
    # docs/exact.md: the gap table
    Block("gap example", "docs/exact.md",
          "sensaopt gap tiny-16gpu tiny-8gpu --exact cpsat --policy sensascale -o /tmp/gap.csv   # --wide: every column",
          ("gap", "tiny-16gpu", "tiny-8gpu", "--exact", "cpsat", "--policy", "sensascale"),
          mask=r"\s+[0-9.]+$"),  # the jct_bound column: how far the allocation relaxation gets in 60 s depends on the load
    # docs/results.md: the ladder prose
    Phrase("ladder prose: tiny", "docs/results.md",
           "SensaScale (the default since issue 23) reaches the optimum on\ntiny-16gpu ({}) and misses one deadline more than "
           "the best known schedule on\ntiny-8gpu ({} vs 1; avg JCT {} vs",
           lambda: (f"{_metrics('tiny-16gpu', 'sensascale')[1]:.1f}", str(_metrics("tiny-8gpu", "sensascale")[0]),
                    f"{_metrics('tiny-8gpu', 'sensascale')[1]:.1f}")),
    Phrase("ladder prose: small", "docs/results.md",
           "SensaScale misses {} and {} deadlines there (5 and 7 with the urgent group of the\ndefault before issue 23; the \"1 and "
           "6\" quoted earlier were stale), EDF {} and {},\nChronus {} and {}, `edf-demote` {} and {}, `edf-tune-demote` {} and {}.",
           lambda: (*_misses("sensascale"), *_misses("edf"), *_misses("chronus"), *_misses("edf-demote"), *_misses("edf-tune-demote"))),
    # models/measurements.md: the ladder table
    Cell("ladder: SensaScale column", "models/measurements.md", "| instance | solver | status | time s | objective |", "SensaScale",
         _ladder_sensascale),
    Phrase("ladder: small rows' SensaScale", "models/measurements.md",
           "today's SensaScale gives {} on small-16gpu and {} on small-8gpu",
           lambda: (_g(_metrics("small-16gpu", "sensascale")[2]), _g(_metrics("small-8gpu", "sensascale")[2]))),
    Cell("ladder: heur gap column", "models/measurements.md", "| instance | solver | status | time s | objective |", "heur gap",
         _ladder_gap),
]


@dataclass
class Drift:
    """What :func:`check` found: per file, its text now and as regenerated."""

    files: dict[str, tuple[str, str]] = field(default_factory=dict)

    def diff(self) -> str:
        return "".join("".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"a/{doc}", f"b/{doc}"))
                       for doc, (old, new) in self.files.items() if old != new)


def check(figures: Sequence[Figure] = FIGURES, root: Path = REPO) -> Drift:
    """Regenerate ``figures`` against the files under ``root``; the files whose text would change."""
    texts: dict[str, str] = {}
    for f in figures:
        texts.setdefault(f.doc, (root / f.doc).read_text())
    new = dict(texts)
    for f in figures:
        new[f.doc] = f.apply(new[f.doc])
    return Drift({doc: (texts[doc], new[doc]) for doc in texts if texts[doc] != new[doc]})


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help="rewrite the drifted figures in place")
    ap.add_argument("--cheap", action="store_true", help="only the cheap figures (no exact solve)")
    args = ap.parse_args(argv)
    chosen = [f for f in FIGURES if f.cheap or not args.cheap]
    drift = check(chosen)
    if not drift.files:
        print(f"no drift: {len(chosen)} figures in {len({f.doc for f in chosen})} files match today's code")
        return 0
    sys.stdout.write(drift.diff())
    if args.write:
        for doc, (_, new) in drift.files.items():
            (REPO / doc).write_text(new)
        print(f"rewrote {', '.join(drift.files)}")
        return 0
    print(f"drift in {', '.join(drift.files)} (python benchmarks/figures.py --write rewrites them)")
    return 1


if __name__ == "__main__":
    sys.exit(main())
