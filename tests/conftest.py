"""Shared fixtures. Real traces are read from ../shared/traces (override with the
SENSAOPT_TRACES environment variable); tests that need them skip when absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
INSTANCE_FILES = sorted((REPO / "instances").glob("*.json"))


def traces_dir() -> Path:
    return Path(os.environ.get("SENSAOPT_TRACES", REPO.parent / "shared" / "traces"))


@pytest.fixture
def shared_traces() -> Path:
    d = traces_dir()
    if not d.is_dir():
        pytest.skip(f"shared traces not found at {d} (set SENSAOPT_TRACES)")
    return d
