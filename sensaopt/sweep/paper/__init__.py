"""The paper's experiment: {Philly SLO, MIX1, MIX2, Helios-calibrated} ×
{8-GPU, 16-GPU nodes} × policies × seeds, run as a sweep, reported per cell (workload ×
node size × policy) as the mean and 95 % Student-t interval over the seeds
(:func:`sensaopt.sweep.stats.mean_interval`), the relative change of SensaScale versus
Chronus (the paper's form) with its interval over per-seed paired differences, and figures.

Settings (all recorded in each run's stored config):

* Philly workloads: the three Chronus traces (all 14 days, GPU jobs only) on
  ``philly-8`` (120 × 8 GPUs) / ``philly-16`` (60 × 16); Helios: the Helios-calibrated
  generator (``helios_days`` days of Venus arrivals, deadlines by the SPEC rule) on
  ``helios-8`` (96 × 8) / ``helios-16`` (48 × 16);
* nodes: Synergy's ratio, 3 cores and 62.5 GB per GPU (``node="chronus"``: 16 cores
  and 32 GB per GPU); model types: ``sensitive_fraction`` of the jobs sensitive;
  rounds of ``round_minutes``; ``seeds`` (each drives model types, the Helios generator,
  Helios deadlines and the thinning);
* ``scale`` < 1 runs a scaled-down copy: every job kept with probability ``scale``
  (seeded thinning, the timeline unchanged) on a cluster with ``scale`` × the GPUs
  (rounded to a multiple of 16 so both node sizes have the same total), which keeps
  the offered load.

Reported per run (:data:`RUN_METRICS`): misses (SLO violation rate, and the weighted rate,
which differs from it only where jobs have soft deadlines: MIX2) apart from times (average
JCT; queueing both ways: ``avg_queueing_time`` = first start − arrival, and
``avg_pending_time`` = total minutes released but not running, the Chronus artifact's
count), allocation changes per job (restarts, migrations, resizes) and GPU utilisation.

The parts: :mod:`.settings` (what runs), :mod:`.rows` (tables as data), :mod:`.markdown`
(tables as text), :mod:`.charts` (figures), :mod:`.report` (written together, with provenance).
"""

from .charts import bars_figure, figures, jct_cdf_figure
from .markdown import CELL_TABLES, cells_markdown, comparison_markdown, table_csv, table_markdown
from .report import (
    PARQUET_FILES,
    REPORT_FILES,
    RESULT_FILES,
    build_report,
    configuration_lines,
    paper_args,
    provenance,
    write_report,
)
from .rows import (
    READINGS,
    BaseChoice,
    averages,
    best_baselines,
    bound_values,
    cell_rows,
    main_node,
    missing_bounds,
    reductions,
    run_values,
    servable_values,
    table_rows,
)
from .settings import (
    BOUND_METRICS,
    BUDGET_KNOBS,
    CONFIDENCE,
    DECOMPOSITION,
    DEFAULT_WORKLOADS,
    FIGURE_FILES,
    FIRST_EDITION_POLICIES,
    FULL_GPUS,
    LEGACY_RUN_COLUMNS,
    LEGACY_SETTINGS,
    METRIC_NAMES,
    METRICS,
    OURS,
    PAPER_BUDGET,
    PAPER_REDUCTION,
    POLICIES,
    PRE_BOUNDS_RUN_COLUMNS,
    REDUCTION_HEADERS,
    REDUCTION_METRICS,
    RETIRED_OUT_FLAGS,
    RUN_COLUMNS,
    RUN_METRICS,
    RUN_UNITS,
    SAFETY_NET_S,
    SERVABLE_METRICS,
    SHAPE_WORKLOAD,
    SHAPES,
    WORKLOADS,
    Group,
    PaperSettings,
    budget_knobs,
    check_decomposition,
    cluster_for,
    legacy_args,
    node_of,
    paper_configs,
    policy_defaults,
    policy_label,
    replay_args,
    settings_record,
    workload_choice,
)

__all__ = [
    "BOUND_METRICS", "BUDGET_KNOBS", "BaseChoice", "CELL_TABLES", "CONFIDENCE", "DECOMPOSITION", "DEFAULT_WORKLOADS",
    "FIGURE_FILES", "FIRST_EDITION_POLICIES", "FULL_GPUS", "Group", "LEGACY_RUN_COLUMNS", "LEGACY_SETTINGS", "METRICS",
    "METRIC_NAMES", "OURS", "PAPER_BUDGET", "PAPER_REDUCTION", "PARQUET_FILES", "POLICIES", "PRE_BOUNDS_RUN_COLUMNS",
    "PaperSettings", "READINGS", "REDUCTION_HEADERS", "REDUCTION_METRICS", "REPORT_FILES", "RESULT_FILES",
    "RETIRED_OUT_FLAGS", "RUN_COLUMNS", "RUN_METRICS", "RUN_UNITS", "SAFETY_NET_S", "SERVABLE_METRICS", "SHAPES",
    "SHAPE_WORKLOAD", "WORKLOADS", "averages", "bars_figure", "best_baselines", "bound_values", "budget_knobs",
    "build_report", "cell_rows", "cells_markdown", "check_decomposition", "cluster_for", "comparison_markdown",
    "configuration_lines", "figures", "jct_cdf_figure", "legacy_args", "main_node", "missing_bounds", "node_of",
    "paper_args", "paper_configs", "policy_defaults", "policy_label", "provenance", "reductions", "replay_args",
    "run_values", "servable_values", "settings_record", "table_csv", "table_markdown", "table_rows", "workload_choice",
    "write_report"
]
