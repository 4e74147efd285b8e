"""Classify a job's allocation change between two rounds it runs in: THE rule the
simulator, the validator and the policies share (costs in :class:`~sensaopt.instance.Overheads`)."""

from __future__ import annotations

from dataclasses import dataclass

from sensaopt.instance import Change, Overheads
from sensaopt.schedule import Placement

# the members as module globals: a global lookup, not an Enum class attribute, per call
NONE, RESTART, MIGRATION, RESIZE = Change.NONE, Change.RESTART, Change.MIGRATION, Change.RESIZE


@dataclass(frozen=True, slots=True)
class ChangeCosts:
    """Minutes one job loses in the first round of each kind of change (its GPU count's
    :class:`~sensaopt.instance.Overheads`); no change costs nothing."""

    restart: float
    migration: float
    resize: float

    @classmethod
    def of(cls, overheads: Overheads, gpus: int) -> ChangeCosts:
        return cls(*overheads.costs(gpus))

    def minutes(self, kind: Change) -> float:
        if kind is NONE:
            return 0.0
        if kind is RESTART:
            return self.restart
        return self.migration if kind is MIGRATION else self.resize


def classify(prev: tuple[Placement, ...] | None, prev_end: int | None, placements: tuple[Placement, ...], start: int) -> Change:
    """Kind of change for a job running ``placements`` from round ``start`` after
    running ``prev`` up to (not including) round ``prev_end``; ``prev`` None = first start.

    * paused in between (``prev_end != start``) → RESTART, wherever it resumes;
    * another node set, or the same nodes with other GPU counts per node → MIGRATION;
    * same nodes and GPUs per node, other CPU or memory on some node → RESIZE;
    * the same GPUs, cores and GB on every node (in any placement order) → NONE.
    """
    if prev is None:
        return NONE
    if prev_end != start:
        return RESTART
    if len(prev) == 1 and len(placements) == 1:  # the common case, attribute by attribute
        a, b = prev[0], placements[0]
        if a is b:
            return NONE
        if a.node != b.node or a.gpus != b.gpus:
            return MIGRATION
        return NONE if a.cpus == b.cpus and a.mem_gb == b.mem_gb else RESIZE
    if prev == placements:
        return NONE
    ga = _per_node(prev)
    gb = _per_node(placements)
    if {n: v[0] for n, v in ga.items()} != {n: v[0] for n, v in gb.items()}:
        return MIGRATION
    return NONE if ga == gb else RESIZE


def _per_node(pls: tuple[Placement, ...]) -> dict[int, tuple[int, int, float]]:
    """GPUs, cores and GB per node (summed, should a node appear twice)."""
    out: dict[int, tuple[int, int, float]] = {}
    for p in pls:
        g, c, m = out.get(p.node, (0, 0, 0.0))
        out[p.node] = (g + p.gpus, c + p.cpus, m + p.mem_gb)
    return out
