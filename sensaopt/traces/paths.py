"""Where the read-only calibration data lives (never copied into the repository).

``SENSAOPT_TRACES`` overrides the folder; the default is the ``shared/traces`` folder
next to the repository (``Path(sensaopt.__file__).resolve().parents[2] / "shared" / "traces"``).
Nothing is read at import time.
"""

from __future__ import annotations

import os
from pathlib import Path

import sensaopt
from sensaopt.errors import InputError

CHRONUS_TRACES = {
    "chronus-slo": "chronus-philly/trace_job_Philly_SLO.csv",
    "chronus-mix1": "chronus-philly/trace_job_Philly_MIX1.csv",
    "chronus-mix2": "chronus-philly/trace_job_Philly_MIX2.csv",
}
VENUS_THROUGHPUT = "helios/Venus_cluster_throughput.csv"
PHILLY_RUNTIMES = "philly/philly_runtime_from_alibaba_v2020_analysis.csv"
ALIBABA_PODS = "alibaba-v2023/openb_pod_list_default.csv"


def traces_dir() -> Path:
    env = os.environ.get("SENSAOPT_TRACES")
    if env:
        return Path(env)
    return Path(sensaopt.__file__).resolve().parents[2] / "shared" / "traces"


def data_file(rel: str) -> Path:
    """Absolute path of a calibration file; :class:`InputError` if it is absent."""
    p = traces_dir() / rel
    if not p.is_file():
        raise InputError(str(p), "(file)", "calibration/trace data not found (set SENSAOPT_TRACES to the shared traces folder)")
    return p
