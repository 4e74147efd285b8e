"""What one knob of a policy changes on everything committed: each case simulated with the
knob at two values, the cases whose misses or average JCT differ listed, totals printed.

Cases: every committed instance (``instances/*.json``) at profile error 0 and 0.2 and
``check_equivalence.py``'s generated instances (:func:`check_equivalence._cases`), then
(``--windows``, needs the traces) every distinct window set of the committed
``results/gaps-*`` folders, cut again from their ``provenance.json`` settings.
The check a changed default needs before it lands ("a change that moves a policy's
results is checked on every committed instance and workload"): which cases move, and how.

    python benchmarks/knob_effect.py --knob laxity_guard --values true false [--windows]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from check_equivalence import _cases  # noqa: E402

from sensaopt.errors import SensaoptError  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def window_sets() -> list[tuple[str, list]]:
    """(folder names, window instances) of each distinct window set of ``results/gaps-*``."""
    from sensaopt.io import instance_from_dict
    from sensaopt.sweep.gaps import GapSettings, WindowCut, plan

    sets: dict[str, tuple[list[str], dict]] = {}
    for prov in sorted(REPO.glob("results/gaps-*/provenance.json")):
        s = json.loads(prov.read_text())["settings"]
        key = json.dumps([s["sizes"], s["windows"], s["cut"], s["seeds"]], sort_keys=True)
        sets.setdefault(key, ([], s))[0].append(prov.parent.name)
    out = []
    for names, s in sets.values():
        gs = GapSettings(sizes=tuple(s["sizes"]), windows=s["windows"], cut=WindowCut(**s["cut"]), seeds=tuple(s["seeds"]))
        out.append((", ".join(names), [instance_from_dict(t.instance, source=t.cut.trace) for t, _ in plan(gs)]))
    return out


def compare(cases, policy: str, knob: str, values: tuple) -> tuple[int, list[tuple]]:
    """Simulate each (name, instance, profile error) case at both knob values.

    Returns:
        (number of cases, [(name, misses at each value, avg JCT (minutes) at each value)]
        for every case where they differ)."""
    from sensaopt.simulator import simulate

    moved, n = [], 0
    for name, inst, err in cases:
        m = [simulate(inst, policy, profile_error=err, policy_config={knob: v}).metrics for v in values]
        n += 1
        got = [(x.slo_violations, x.avg_jct or 0.0) for x in m if x is not None]
        if got[0][0] != got[1][0] or abs(got[0][1] - got[1][1]) > 1e-6:
            moved.append((name, *got))
    return n, moved


def knob_values(policy: str, knob: str, texts: list[str]) -> tuple:
    """Each text as a value of ``policy``'s knob ``knob``, parsed and checked as ``--set``
    does (:func:`sensaopt.config.parse_settings`); InputError names a bad knob or value."""
    from sensaopt.config import parse_settings
    from sensaopt.policies import policy_config_class

    cls = policy_config_class(policy)
    return tuple(parse_settings([f"{knob}={t}"], cls, f"policy {policy!r}", "--knob/--values")[knob] for t in texts)


def report(title: str, n: int, moved: list[tuple], values: tuple) -> None:
    a, b = values
    print(f"## {title}: {len(moved)} of {n} cases change (printed: {b} -> {a})")
    for name, (va, ja), (vb, jb) in moved:
        print(f"  {name}: misses {vb} -> {va}, avg JCT {jb:.2f} -> {ja:.2f} min")
    if moved:
        print(f"  changed cases: misses {sum(m[2][0] for m in moved)} -> {sum(m[1][0] for m in moved)}, "
              f"mean avg-JCT change {statistics.fmean(m[1][1] - m[2][1] for m in moved):+.2f} min")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--policy", default="sensascale")
    ap.add_argument("--knob", required=True, help="a knob of the policy's configuration")
    ap.add_argument("--values", nargs=2, required=True, metavar=("NEW", "OLD"), help="the two values (printed OLD -> NEW)")
    ap.add_argument("--windows", action="store_true", help="also the committed results/gaps-* window sets (needs the traces)")
    a = ap.parse_args(argv)
    try:
        values = knob_values(a.policy, a.knob, a.values)
        _run(a, values)
    except SensaoptError as e:
        print(f"knob_effect.py: {e}", file=sys.stderr)
        return 2
    return 0


def _run(a: argparse.Namespace, values: tuple) -> None:
    n, moved = compare(_cases(0), a.policy, a.knob, values)
    report(f"{a.policy}, {a.knob}: committed and generated instances", n, moved, values)
    if a.windows:
        for names, insts in window_sets():
            n, moved = compare([(f"{i.name} ({len(i.jobs)} jobs)", i, 0.0) for i in insts], a.policy, a.knob, values)
            report(f"windows of {names}", n, moved, values)


if __name__ == "__main__":
    raise SystemExit(main())
