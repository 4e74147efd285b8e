"""Finished sweep runs on disk, one JSON file per run named by its config hash.

``<root>/runs/<key>.json`` holds a finished run; ``<root>/failed/<key>.json`` the last
error of a failed one (retried by the next sweep). Files are written atomically
(:func:`sensaopt.io.atomic_write_text`), so an interrupted sweep never leaves a
half-written result and resumes by skipping every key already in ``runs/``.
"""

from __future__ import annotations

import json
from pathlib import Path

from sensaopt.io import atomic_write_text


class ResultStore:
    def __init__(self, root: str | Path):
        self.root = Path(root)

    def path(self, key: str) -> Path:
        return self.root / "runs" / f"{key}.json"

    def has(self, key: str) -> bool:
        """A finished run: its file exists and parses (a damaged file counts as missing,
        so the run is redone rather than lost)."""
        return self.get(key) is not None

    def get(self, key: str) -> dict | None:
        p = self.path(key)
        if not p.is_file():
            return None
        try:
            return json.loads(p.read_text())
        except json.JSONDecodeError:
            return None  # cannot happen with atomic writes; treat as missing

    def put(self, record: dict) -> None:
        atomic_write_text(self.path(record["key"]), json.dumps(record))
        failed = self.root / "failed" / f"{record['key']}.json"
        if failed.exists():
            failed.unlink()

    def put_failure(self, key: str, config: dict, error: str) -> None:
        atomic_write_text(self.root / "failed" / f"{key}.json", json.dumps({"key": key, "config": config, "error": error}))

    def keys(self) -> list[str]:
        d = self.root / "runs"
        return sorted(p.stem for p in d.glob("*.json")) if d.is_dir() else []

    def records(self) -> list[dict]:
        return [r for k in self.keys() if (r := self.get(k)) is not None]
