"""The paper's figures: the bar chart of every cell and the JCT CDFs (:func:`figures`)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sensaopt.sweep.config import RunConfig

from .settings import FIGURE_FILES, METRICS, Group, _group, _groups, _policies, node_of, policy_label

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def bars_figure(cells: list[dict[str, Any]], scale: str | None = None) -> Figure:
    """The three :data:`METRICS` (one panel each) per workload × node size × node shape.

    One bar per policy in its :func:`sensaopt.palette.policy_color` at the mean over seeds
    (:func:`cell_rows`), caps for the 95 % Student-t interval only where there is one (no caps
    with one seed); each group's tick names its seeds. One legend above the panels (never over
    bars), its title saying what bars and caps are and the ``scale``.

    Args:
        cells: :func:`cell_rows` rows (``seeds``, each metric's mean, ``_lo`` and ``_hi``).
        scale: the runs' scale, e.g. :func:`sensaopt.plot.scale_text`'s
            (None: not stated).

    Returns:
        The figure (not attached to pyplot).
    """
    from matplotlib.figure import Figure

    from sensaopt.palette import policy_color
    from sensaopt.plot import INTERVAL_NOTE, interval_caps, seeds_text

    groups, pols = _groups(cells), _policies(cells)
    by = {(*_group(r), r["policy"]): r for r in cells}
    fig = Figure(figsize=(max(12, 1.2 * len(groups)), 10), layout="constrained")
    axes = fig.subplots(3, 1)
    x = np.arange(len(groups))
    wdt = 0.8 / max(1, len(pols))
    seeds = {grp: seeds_text(r.get("seeds", 1) for r in cells if _group(r) == grp) for grp in groups}

    def col(rs: list[dict[str, Any] | None], k: str, mult: float) -> np.ndarray:
        return np.array([np.nan if r is None or r.get(k) is None else r[k] * mult for r in rs], dtype=float)

    for ax, (k, title, mult) in zip(axes, METRICS):
        for i, p in enumerate(pols):
            rs = [by.get((*grp, p)) for grp in groups]
            vals = col(rs, k, mult)
            pos = x + (i - (len(pols) - 1) / 2) * wdt
            bars = ax.bar(pos, np.nan_to_num(vals, nan=0.0), wdt, label=p, color=policy_color(p))
            for b in bars:
                b.set_gid(f"bar:{p}")
            interval_caps(ax, pos, vals, col(rs, f"{k}_lo", mult), col(rs, f"{k}_hi", mult), f"ci:{p}")
        ax.set_xticks(x, [f"{w}\n{g}-GPU" + ("" if n == "synergy" else f"\n{n}") + f"\n{seeds[(w, g, n)]}" for w, g, n in groups])
        ax.set_ylabel(title)
    note = f"bars: {INTERVAL_NOTE}" + ("" if scale is None else f"; {scale}")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside upper center", ncol=min(max(1, len(pols)), 6), frameon=False,
               title=note)
    return fig


def jct_cdf_figure(runs: list[tuple[str, int, RunConfig]], records: dict[str, dict[str, Any]],
                   groups: list[Group]) -> Figure:
    """JCT CDF (minutes, log x) per (workload, node size, node shape) in ``groups``.

    One line per policy in its :func:`sensaopt.palette.policy_color`, the finished jobs of
    all its stored seeds pooled, each narrower than the one before and drawn over it
    (:func:`sensaopt.plot.stacked_widths`: coinciding CDFs stay visible); each panel's title names its cluster preset and seeds, the
    legend above the panels the runs' scale
    (:func:`sensaopt.plot.scale_text`).

    Args:
        runs: :func:`paper_configs` triples (workload label, GPUs per node, run configuration).
        records: stored run records by config key (``jct``: minutes per finished job).
        groups: the panels, as :func:`_groups` returns them.

    Returns:
        The figure (not attached to pyplot).
    """
    from matplotlib.figure import Figure
    from matplotlib.ticker import NullFormatter

    from sensaopt.palette import policy_color
    from sensaopt.plot import scale_text, seeds_text, stacked_widths

    n = len(groups)
    cols = min(4, max(1, n))
    n_rows = math.ceil(n / cols) if n else 1
    fig = Figure(figsize=(4 * cols, 3.2 * n_rows + 0.4), layout="constrained")
    axes = fig.subplots(n_rows, cols, squeeze=False)
    pooled: dict[Group, dict[str, list[float]]] = {}
    seeds: dict[Group, dict[str, set[int]]] = {}
    presets: dict[Group, set[str]] = {}
    wanted = set(groups)
    for label, g, cfg in runs:
        grp = (label, g, node_of(cfg))
        if grp not in wanted:
            continue
        r = records.get(cfg.key())  # after the cheap filter: key() hashes the whole config
        if r is not None and r.get("jct"):
            pooled.setdefault(grp, {}).setdefault(policy_label(cfg), []).extend(r["jct"])
            seeds.setdefault(grp, {}).setdefault(policy_label(cfg), set()).add(cfg.seed)
            presets.setdefault(grp, set()).add(cfg.preset)
    shown: dict[str, Any] = {}
    for ax, grp in zip(axes.flat, groups):
        lines = pooled.get(grp, {})
        for k, ((pol, jct), width) in enumerate(zip(lines.items(), stacked_widths(len(lines)))):  # coinciding lines stay visible
            v = np.sort(np.asarray(jct, dtype=float))
            (line,) = ax.plot(v, np.arange(1, len(v) + 1) / len(v), label=pol, color=policy_color(pol), gid=f"cdf:{pol}",
                              linewidth=width, zorder=2 + 0.01 * k)
            shown.setdefault(pol, line)
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())  # decade labels only: minor ones collide on short ranges
        counts = [len(s) for s in seeds.get(grp, {}).values()]
        ax.set_title(f"{grp[0]}, {grp[1]}-GPU " + ("" if grp[2] == "synergy" else f"{grp[2]} ") + "nodes\n"
                     + f"{', '.join(sorted(presets.get(grp, set()))) or 'no runs'}, {seeds_text(counts)} pooled", fontsize=9)
        ax.set_xlabel("JCT (min), seeds pooled")
        ax.set_ylabel("CDF")
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    if shown:
        fig.legend(list(shown.values()), list(shown), loc="outside upper center", ncol=min(len(shown), 6), frameon=False,
                   title=scale_text(cfg.sample for label, g, cfg in runs if (label, g, node_of(cfg)) in wanted))
    return fig


def figures(cells: list[dict[str, Any]], runs: list[tuple[str, int, RunConfig]], records: dict[str, dict[str, Any]],
            outdir: str | Path, field: str = "-o") -> list[Path]:
    """Write fig_bars.png (:func:`bars_figure` of :func:`cell_rows`) and fig_jct_cdf.png (:func:`jct_cdf_figure`)
    into ``outdir`` (:data:`FIGURE_FILES`), each atomically and never onto a symlink, FIFO or device (:mod:`sensaopt.outputs`).

    Args:
        cells: :func:`cell_rows` rows.
        runs: :func:`paper_configs` triples; their kept job fractions give the scale the bars state.
        records: stored run records by config key.
        outdir: the folder written into.
        field: the option named in errors.

    Returns:
        The paths written.
    """
    from sensaopt.outputs import staged
    from sensaopt.plot import scale_text

    paths = [Path(outdir) / name for name in FIGURE_FILES]
    scale = scale_text(cfg.sample for _, _, cfg in runs)
    for p, fig in zip(paths, (bars_figure(cells, scale), jct_cdf_figure(runs, records, _groups(cells)))):
        with staged(p, field=field) as tmp:
            fig.savefig(tmp, dpi=110, format="png")
    return paths


