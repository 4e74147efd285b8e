"""The paper's report: which configuration ran, the tables and figures written together,
and the provenance of a results folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sensaopt.sweep.config import RunConfig, knob_text

from .charts import figures
from .markdown import comparison_markdown, table_csv, table_markdown
from .rows import averages, best_baselines, cell_rows, table_rows
from .settings import CONFIDENCE, FIGURE_FILES, POLICIES, PaperSettings, node_of, policy_defaults, policy_label, settings_record


# ---- which configuration ran -------------------------------------------------------------------
def _diff(ran: dict[str, Any], ref: dict[str, Any]) -> list[str]:
    return [f"{k}={knob_text(v)}" for k, v in sorted(ran.items()) if k not in ref or ref[k] != v] + \
        [f"{k} absent" for k in sorted(set(ref) - set(ran))]


def configuration_lines(runs: list[tuple[str, int, RunConfig]], records: dict[str, dict[str, Any]]) -> list[str]:
    """Markdown bullets naming, per policy row of the table, the configuration that ran,
    read from its stored records' ``params["config"]``: the knobs that differ from the
    policy's defaults (this code's), and for ``sensascale`` rows also those that differ
    from ``sensascale-paper``'s (when that policy is registered). Several configurations
    under one label (records from different code) are each listed."""
    seen: dict[str, list[dict[str, Any] | None]] = {}
    base: dict[str, str] = {}
    for _, _, cfg in runs:
        r = records.get(cfg.key())
        if r is None:
            continue
        label = policy_label(cfg)
        base[label] = cfg.policy
        conf = (r.get("params") or {}).get("config")
        lst = seen.setdefault(label, [])
        if conf not in lst:
            lst.append(conf)
    paper = policy_defaults("sensascale-paper")
    lines = []
    for label in sorted(seen, key=lambda p: (POLICIES.index(p) if p in POLICIES else len(POLICIES), p)):
        pol = base[label]
        defaults = policy_defaults(pol)
        parts = []
        for conf in seen[label]:
            if conf is None:
                parts.append("not recorded (its runs predate `params.config` in the records)")
                continue
            d = "n/a (policy not registered here)" if defaults is None else (", ".join(_diff(conf, defaults)) or "its defaults")
            text = f"vs its defaults: {d}"
            if pol.startswith("sensascale") and pol != "sensascale-paper" and paper is not None:
                text += f"; vs sensascale-paper: {', '.join(_diff(conf, paper)) or 'the same'}"
            parts.append(text)
        lines.append(f"- `{label}`: " + " | ".join(parts))
    return lines


def build_report(s: PaperSettings, runs: list[tuple[str, int, RunConfig]], records: dict[str, dict[str, Any]],
                 confidence: float = CONFIDENCE, bounds: dict[str, dict[str, float]] | None = None,
                 ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str]:
    """(runs.csv rows, table.csv cells, table.md) of the stored ``records`` of ``runs``:
    the configurations that ran (:func:`configuration_lines`), the cells, SensaScale vs
    Chronus, vs EDF (when run) and vs the best baseline per cell (:func:`best_baselines`),
    each per cell and with the :data:`READINGS` averages; and the same for
    ``sensascale-paper`` vs the best baseline when it ran. ``bounds``: :func:`table_rows`'s."""
    rows = table_rows(runs, records, bounds)
    cells = cell_rows(rows, confidence)
    per, avgs = averages(rows, base="chronus", confidence=confidence)
    others: list[tuple[str, list[dict[str, Any]], Any]] = []
    pols = {r["policy"] for r in rows}
    if "edf" in pols:
        others.append(("edf", *averages(rows, base="edf", confidence=confidence)))
    best = best_baselines(cells)
    others.append(("best", *averages(rows, base=best, confidence=confidence)))
    md = f"Settings: {s}\n\nConfigurations that ran (from the stored records):\n\n" + "\n".join(configuration_lines(runs, records))
    md += "\n\nBest baseline per cell (fewest violations, then lowest JCT, among the policies that are not SensaScale): " + \
          "; ".join(f"{w} {g}-GPU {n}: `{p}`" for (w, g, n), p in best.items()) + "\n\n"
    md += table_markdown(cells, per, avgs, confidence, others)
    if "sensascale-paper" in pols:
        pp, pa = averages(rows, ours="sensascale-paper", base=best, confidence=confidence)
        md += "\n" + comparison_markdown("best", pp, pa, confidence, ours="sensascale-paper")
    return rows, cells, md


# ---- results with provenance -------------------------------------------------------------------
REPORT_FILES = ("table.md", "table.csv", "runs.csv") + FIGURE_FILES  # what write_report() writes
PARQUET_FILES = ("table.parquet", "runs.parquet")  # and with parquet=True (--format parquet) these beside the CSVs
RESULT_FILES = REPORT_FILES + ("provenance.json",)  # and a --results folder also gets provenance.json


def paper_args(s: PaperSettings, output: str | Path, results: str | Path | None = None) -> list[str]:
    """The ``sensaopt`` arguments of the ``experiment paper`` command that plans exactly
    the runs of ``s`` (every setting spelled out, defaults too; execution options such as
    ``--workers`` left out: they change how, not what). ``s.seeds`` must be consecutive."""
    seeds = list(s.seeds)
    if not seeds or seeds != list(range(seeds[0], seeds[0] + len(seeds))):
        raise ValueError(f"seeds must be consecutive to be given as --seed/--seeds, got {s.seeds}")
    args = ["experiment", "paper", "--out-dir", str(output), "--scale", repr(s.scale), "--seeds", str(len(seeds)), "--seed", str(seeds[0])]
    for p in s.policies:
        args += ["--policy", p]
    args += ["--round-minutes", repr(s.round_minutes), "--sensitive-fraction", repr(s.sensitive_fraction), "--node", s.node,
             "--helios-days", repr(s.helios_days)]
    for shape in s.shapes or ("none",):
        args += ["--shape", shape]
    for g in s.shape_gpus:
        args += ["--shape-gpus", str(g)]
    args += ["--duration-at", s.duration_at or "none"] + (["--decomposition"] if s.decomposition else [])
    args += ["--workloads", ",".join(s.workloads), "--budget", s.budget]
    if results is not None:
        args += ["--results", str(results)]
    return args


def provenance(s: PaperSettings, args: list[str], runs: list[tuple[str, int, RunConfig]], records: dict[str, dict[str, Any]],
               status: dict[str, str], *, git: dict[str, Any], machine: dict[str, Any], wall_s: float,
               execution: dict[str, Any]) -> dict[str, Any]:
    """The provenance record of a results folder: the command (``args``, run from the
    repository root as ``sensaopt ARGS``), the settings, the code (``git``: commit and
    uncommitted changes, taken when the command started), package versions, the machine
    (taken at the start; the load average at the end too), the command's wall time
    (seconds) and, per planned run, its config key (:meth:`RunConfig.key`), its cell, what
    this command did with it (``status``: computed, reused = stored before, failed,
    missing) and its simulation and whole-run wall times (seconds)."""
    import shlex

    from sensaopt.result import package_versions
    from sensaopt.sweep.provenance import load_average

    plan = []
    for label, g, cfg in runs:
        key = cfg.key()
        r = records.get(key) or {}
        plan.append({"key": key, "workload": label, "node_gpus": g, "node": node_of(cfg), "policy": policy_label(cfg), "seed": cfg.seed,
                     "preset": cfg.preset,
                     "status": status.get(key, "missing"), "simulate_s": r.get("simulate_s"), "wall_s": r.get("wall_s"),
                     **({"lease": r["lease"]} if r.get("lease") else {})})
    counts = {k: sum(1 for p in plan if p["status"] == k) for k in ("computed", "reused", "failed", "missing")}
    return {"command": "sensaopt " + shlex.join(args), "args": args, "settings": settings_record(s), "git": git,
            "versions": package_versions(), "machine": {**machine, "loadavg_end": load_average()}, "wall_s": round(wall_s, 1),
            "execution": execution, "runs_total": len(plan), **{f"runs_{k}": v for k, v in counts.items()}, "runs": plan}


def write_report(outdir: str | Path, cells: list[dict[str, Any]], rows: list[dict[str, Any]], md: str,
                 runs: list[tuple[str, int, RunConfig]], records: dict[str, dict[str, Any]], field: str = "--out-dir",
                 parquet: bool = False) -> list[Path]:
    """Write :data:`REPORT_FILES` into ``outdir``: table.md (``md``), table.csv (``cells``,
    one row per cell: means and interval bounds), runs.csv (``rows``, one per run with its
    config key), with ``parquet`` the same two tables as :data:`PARQUET_FILES`, and, when
    there are cells, the figures (:func:`figures`); ``field`` names the option in errors.
    Returns the paths written."""
    from sensaopt.outputs import write_bytes, write_text
    from sensaopt.tables import table_bytes

    d = Path(outdir)
    write_text(d / "table.md", md, field=field)
    write_text(d / "table.csv", table_csv(cells), field=field)
    write_text(d / "runs.csv", table_csv(rows), field=field)
    paths = [d / "table.md", d / "table.csv", d / "runs.csv"]
    if parquet:
        for name, table in zip(PARQUET_FILES, (cells, rows)):
            write_bytes(d / name, table_bytes(table, list(table[0]) if table else [], "parquet"), field=field)
            paths.append(d / name)
    return paths + (figures(cells, runs, records, d, field) if cells else [])
