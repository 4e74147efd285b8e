"""Where the read-only calibration data lives (never copied into the repository).

The files, their checksums and sources are :data:`sensaopt.datasets.DATA_FILES`; a file
is read from ``SENSAOPT_TRACES`` when set, otherwise from the local mirror
``shared/traces`` beside the repository when it exists, then from the user cache that
``sensaopt data fetch`` fills (:func:`sensaopt.datasets.search_dirs`). Nothing is read at
import time.
"""

from __future__ import annotations

from pathlib import Path

from sensaopt.datasets import DATA_FILES, locate, search_dirs

CHRONUS_TRACES = {name: DATA_FILES[name].path for name in ("chronus-slo", "chronus-mix1", "chronus-mix2")}
VENUS_THROUGHPUT = DATA_FILES["venus-throughput"].path
PHILLY_RUNTIMES = DATA_FILES["philly-runtimes"].path
ALIBABA_PODS = DATA_FILES["alibaba-pods"].path


def traces_dir() -> Path:
    """The first data folder searched: ``SENSAOPT_TRACES``, else the local mirror when it
    exists, else the user cache (a file may also be in a later one: use :func:`data_file`)."""
    return search_dirs()[0][1]


def data_file(rel: str) -> Path:
    """Absolute path of a calibration file; :class:`InputError` naming the fetch command if it is absent."""
    return locate(rel)
