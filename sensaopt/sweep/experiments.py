"""Two experiments on the sweep machinery: SensaScale's knobs one at a time (*ablation*) and
the policies under changed conditions (*robustness*), each cell over several seeds.

* **ablation** — SensaScale with its defaults, then with each knob of its config dataclass
  (read at run time with :func:`dataclasses.fields`, so a new knob joins automatically)
  changed one at a time: a boolean knob is flipped (``knob=false`` for a knob on by
  default, ``knob=true`` for one off); a non-boolean knob takes the value in its field's
  ``metadata["off"]`` or its first alternative in :data:`OFF_VALUES` that is not its
  default (e.g. ``backfill=none``), when it has one.
* **robustness** — one axis of :data:`ROBUSTNESS_AXES` at a time, every other setting at
  the workload's value: the change-cost multiplier, the sensitive fraction, the model mix,
  the profile error; for each of :data:`ROBUSTNESS_POLICIES` (or the policies given).

Every cell runs seeds ``0 .. seeds-1`` (the seed draws model types, deadlines of
generated traces, thinning and the profile error). Runs go through
:func:`sensaopt.sweep.run_sweep` / :func:`~sensaopt.sweep.run_serial` into a
:class:`~sensaopt.sweep.ResultStore`, so a re-run computes only the runs not stored yet.
A cell's figure per column is the mean over its seeds with the two-sided 95 % Student-t
interval of :func:`sensaopt.sweep.stats.mean_interval`; :func:`summarize_paired` gives
the same for the per-seed difference from a reference cell (:data:`REFERENCES`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from sensaopt.config import WorkloadConfig, as_pairs, field_types
from sensaopt.sweep.config import RunConfig, knob_text
from sensaopt.sweep.paper import table_csv

ABLATION_POLICY = "sensascale"
OFF_VALUES: dict[str, tuple[Any, ...]] = {"backfill": ("none",), "lst_allocation": ("optimal", "expected"),
                                          "pair_hysteresis": (0.0,), "deadline_order": ("lst", "edf"), "repack_limit": (0,),
                                          "pairing_window": (1.5, 1.0)}
"""Non-boolean SensaScale knobs with documented alternatives (the knob's docstring in
:mod:`sensaopt.policies.sensascale.config`); the ablation takes the first one that is not
the default: no backfill reservations; the latest start time at the optimal demand (the
paper's reading) or the expected allocation; pairs re-matched freely every round; the
deadline tier by latest start or by deadline; no defragmentation (repack); pairing among
1.5 × the cluster's GPUs of the queue (the default until session 39) or 1.0 ×. Used only for knobs the dataclass has; a
field's ``metadata["off"]`` (one value) wins."""

ROBUSTNESS_AXES: tuple[tuple[str, tuple[Any, ...]], ...] = (
    ("move_cost_scale", (0.0, 1.0, 4.0, 10.0)),
    ("sensitive_fraction", (0.0, 0.25, 0.5, 0.75, 1.0)),
    ("mix", ("fraction", "synergy")),
    ("profile_error", (0.0, 0.1, 0.3)),
)
"""(WorkloadConfig field, its values): varied one at a time."""
ROBUSTNESS_POLICIES = ("sensascale", "edf", "chronus", "synergy-tune")

LOST_FIELDS = ("restart_minutes_lost", "migration_minutes_lost", "resize_minutes_lost")
""":class:`sensaopt.metrics.Metrics` fields summed into "minutes lost to changes"."""

COLUMNS: tuple[tuple[str, str], ...] = (
    ("violations", "SLO violations"),
    ("violation_rate", "SLO violation rate (%)"),
    ("avg_jct", "avg JCT (min)"),
    ("avg_queueing", "avg queueing (min)"),
    ("restarts_per_job", "restarts / job"),
    ("migrations_per_job", "migrations / job"),
    ("resizes_per_job", "resizes / job"),
    ("minutes_lost", "minutes lost to changes"),
)
"""(column, label) of the tables and figures; values from :func:`record_values`."""


@dataclass(frozen=True)
class Cell:
    """One cell of an experiment: a row of its table. ``axis`` and ``value`` name what is
    varied (ablation: axis ``knob``, value ``"default"`` or ``"pairing=false"``;
    robustness: a :data:`ROBUSTNESS_AXES` field and its value); ``policy`` the policy."""

    axis: str
    value: Any
    policy: str

    @property
    def label(self) -> str:
        return str(self.value) if self.axis == "knob" else f"{self.axis}={self.value}"


Run = tuple[Cell, RunConfig]


def ablation_variants(config_class: type | None = None) -> list[tuple[str, dict[str, Any]]]:
    """("default", {}) then (``"knob=value"``, {knob: value}) for every knob of
    ``config_class`` (default: SensaScale's) that has an "off" value differing from its
    default — see the module doc. Field order of the dataclass."""
    if config_class is None:
        from sensaopt.policies import policy_config_class

        config_class = policy_config_class(ABLATION_POLICY)
    types = field_types(config_class)
    out: list[tuple[str, dict[str, Any]]] = [("default", {})]
    for f in fields(config_class):
        if "off" in f.metadata:
            options: tuple[Any, ...] = (f.metadata["off"],)
        elif types[f.name] is bool:
            options = (not f.default,)
        else:
            options = OFF_VALUES.get(f.name, ())
        off = next((v for v in options if v != f.default), f.default)
        if off != f.default:
            out.append((f"{f.name}={knob_text(off)}", {f.name: off}))
    return out


def _run_config(base: WorkloadConfig, seed: int, policy: str, knobs: dict[str, Any] | None = None, **changes: Any) -> RunConfig:
    wl = {f.name: getattr(base, f.name) for f in fields(WorkloadConfig)}
    return RunConfig(**{**wl, **changes, "seed": seed}, policy=policy, policy_config=as_pairs(knobs or {}))


def ablation_runs(base: WorkloadConfig, seeds: int, config_class: type | None = None) -> list[Run]:
    """(cell, run configuration) of every run of the ablation: each of
    :func:`ablation_variants` × seeds ``0 .. seeds-1`` on the workload ``base``."""
    return [(Cell("knob", label, ABLATION_POLICY), _run_config(base, s, ABLATION_POLICY, knobs))
            for label, knobs in ablation_variants(config_class) for s in range(seeds)]


def robustness_runs(base: WorkloadConfig, seeds: int, policies: Sequence[str] = ROBUSTNESS_POLICIES,
                    axes: Sequence[tuple[str, Sequence[Any]]] = ROBUSTNESS_AXES) -> list[Run]:
    """(cell, run configuration) of every run of the robustness experiment: per axis, per
    value (the other fields as in ``base``), per policy, seeds ``0 .. seeds-1``. A value
    equal to the base's appears once per axis; its runs are the same configurations (one
    key), so they are computed once."""
    known = {f.name for f in fields(WorkloadConfig)}
    policies = tuple(dict.fromkeys(policies))  # a policy named twice is one policy
    out: list[Run] = []
    for axis, values in axes:
        if axis not in known:
            raise ValueError(f"robustness axis {axis!r} is not a WorkloadConfig field")
        for v in values:
            for p in policies:
                out += [(Cell(axis, v, p), _run_config(base, s, p, **{axis: v})) for s in range(seeds)]
    return out


def record_values(record: dict[str, Any]) -> dict[str, float | None]:
    """The :data:`COLUMNS` of one stored run (None where its metrics lack a field, e.g. a
    record stored before the field existed): counts, rate in percent, minutes, per job =
    divided by the instance's job count."""
    m = record["metrics"]
    jobs = m.get("jobs") or 0

    def per_job(name: str) -> float | None:
        v = m.get(name)
        return None if v is None or not jobs else v / jobs

    rate = m.get("slo_violation_rate")
    lost = [m.get(k) for k in LOST_FIELDS]
    return {
        "violations": m.get("slo_violations"),
        "violation_rate": None if rate is None else 100.0 * rate,
        "avg_jct": m.get("avg_jct"),
        "avg_queueing": m.get("avg_queueing_time"),
        "restarts_per_job": per_job("preemptions"),
        "migrations_per_job": per_job("migrations"),
        "resizes_per_job": per_job("resizes"),
        "minutes_lost": None if any(v is None for v in lost) else math.fsum(v for v in lost if v is not None),
    }


def _by_cell_seed(runs: Sequence[Run], records: dict[str, dict[str, Any]]) -> dict[Cell, dict[int, dict[str, float | None]]]:
    """Per cell (in the order of ``runs``), per seed, the :func:`record_values` of its stored run."""
    out: dict[Cell, dict[int, dict[str, float | None]]] = {}
    for cell, cfg in runs:
        seeds = out.setdefault(cell, {})
        r = records.get(cfg.key())
        if r is not None:
            seeds[cfg.seed] = record_values(r)
    return out


def _row(cell: Cell, vals: list[dict[str, float | None]], vs: str = "") -> dict[str, Any]:
    from sensaopt.sweep.stats import mean_interval

    row: dict[str, Any] = {"axis": cell.axis, "value": knob_text(cell.value), "policy": cell.policy, "vs": vs, "seeds": len(vals)}
    for name, _ in COLUMNS:
        row[name], row[f"{name}_lo"], row[f"{name}_hi"] = mean_interval([v[name] for v in vals])
    return row


def summarize(runs: Sequence[Run], records: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per cell, in the order of ``runs``: axis, value, policy, ``vs`` (empty),
    ``seeds`` (runs stored), and per column of :data:`COLUMNS` its mean, ``_lo`` and ``_hi``
    (95 % Student-t interval over the seeds; NaN with fewer than two values)."""
    return [_row(cell, list(seeds.values())) for cell, seeds in _by_cell_seed(runs, records).items()]


def ablation_reference(cell: Cell) -> Cell | None:
    """The ablation compares each variant with SensaScale's defaults."""
    return None if cell.value == "default" else replace(cell, value="default")


def robustness_reference(cell: Cell, reference: str = "edf") -> Cell | None:
    """The robustness experiment compares each policy with ``reference`` in the same cell."""
    return None if cell.policy == reference else replace(cell, policy=reference)


def summarize_paired(runs: Sequence[Run], records: dict[str, dict[str, Any]],
                     reference: Callable[[Cell], Cell | None]) -> list[dict[str, Any]]:
    """Per cell with a ``reference`` cell: the per-seed difference cell − reference (same
    seed: the same jobs, model types and profile errors), its mean and 95 % Student-t
    interval per column, over the seeds both have (``seeds``); ``vs`` names the reference
    (its value, or its policy). Differences paired by seed are much tighter than the two
    cells' own intervals, which include the seed-to-seed variation of the workload."""
    by = _by_cell_seed(runs, records)
    rows = []
    for cell, seeds in by.items():
        ref = reference(cell)
        if ref is None or ref not in by:
            continue
        base = by[ref]
        diffs = []
        for seed, vals in seeds.items():
            if seed in base:
                b = base[seed]
                diffs.append({n: (None if vals[n] is None or b[n] is None else vals[n] - b[n]) for n, _ in COLUMNS})  # type: ignore[operator]
        vs = ref.label if ref.policy == cell.policy else ref.policy
        rows.append(_row(cell, diffs, vs))
    return rows


def _fmt(x: float, nd: int) -> str:
    if math.isnan(x):
        return "n/a"
    text = f"{x:,.{nd}f}"
    return text[1:] if text.startswith("-") and not text.strip("-0.,") else text  # no "-0.00"


DIGITS = {"violations": 1, "violation_rate": 2, "avg_jct": 1, "avg_queueing": 1, "restarts_per_job": 2, "migrations_per_job": 2,
          "resizes_per_job": 2, "minutes_lost": 0}


def cell_text(row: dict[str, Any], name: str) -> str:
    """``mean [lo, hi]`` of column ``name`` of a :func:`summarize` row (``n/a`` when undefined)."""
    nd = DIGITS.get(name, 2)
    mean, lo, hi = row[name], row[f"{name}_lo"], row[f"{name}_hi"]
    if math.isnan(mean):
        return "n/a"
    return _fmt(mean, nd) if math.isnan(lo) else f"{_fmt(mean, nd)} [{_fmt(lo, nd)}, {_fmt(hi, nd)}]"


def table_markdown(rows: Sequence[dict[str, Any]]) -> str:
    """The rows as a Markdown table: each metric as ``mean [95 % interval]``; with a
    ``minus`` column when the rows are paired differences (:func:`summarize_paired`)."""
    paired = any(r.get("vs") for r in rows)
    head = ["axis", "value", "policy"] + (["minus"] if paired else []) + ["seeds"] + [label for _, label in COLUMNS]
    lines = ["| " + " | ".join(head) + " |", "| --- | --- | --- |" + (" --- |" if paired else "") + " ---: |" + " ---: |" * len(COLUMNS)]
    for r in rows:
        cells = [r["axis"], r["value"], r["policy"]] + ([r["vs"]] if paired else []) + [str(r["seeds"])]
        lines.append("| " + " | ".join(cells + [cell_text(r, n) for n, _ in COLUMNS]) + " |")
    return "\n".join(lines) + "\n"



REFERENCES: dict[str, Callable[[Cell], Cell | None]] = {"ablation": ablation_reference, "robustness": robustness_reference}
"""Per experiment, the cell each cell is compared with (paired by seed)."""


def report(name: str, runs: Sequence[Run], records: dict[str, dict[str, Any]]) -> tuple[str, str, list[dict[str, Any]]]:
    """Experiment ``name``'s report from the stored ``records``: (Markdown: the cells, then
    the differences paired by seed with :data:`REFERENCES`; CSV: both, the paired rows
    with ``vs`` set; the cell rows of :func:`summarize`, for the figure)."""
    rows = summarize(runs, records)
    paired = summarize_paired(runs, records, REFERENCES[name])
    what = "SensaScale's defaults" if name == "ablation" else "EDF"
    md = (f"Each metric: mean over seeds [95 % Student-t interval].\n\n{table_markdown(rows)}\n"
          f"Difference from {what} on the same seed (cell − reference), mean [95 % interval]:\n\n{table_markdown(paired)}")
    return md, table_csv(rows + paired), rows


def output_names(name: str) -> tuple[str, str, str]:
    """Files an experiment writes into its output folder: table (Markdown, CSV), figure (PNG)."""
    return f"{name}.md", f"{name}.csv", f"{name}.png"
