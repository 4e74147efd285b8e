"""Classify a job's allocation change between two rounds it runs in: THE rule the
simulator, the validator and the policies share (costs in :class:`~sensaopt.instance.Overheads`)."""

from __future__ import annotations

from sensaopt.instance import Change
from sensaopt.schedule import Placement


def classify(prev: tuple[Placement, ...] | None, prev_end: int | None, placements: tuple[Placement, ...], start: int) -> Change:
    """Kind of change for a job running ``placements`` from round ``start`` after
    running ``prev`` up to (not including) round ``prev_end``; ``prev`` None = first start.

    * paused in between (``prev_end != start``) → RESTART, wherever it resumes;
    * another node set, or the same nodes with other GPU counts per node → MIGRATION;
    * same nodes and GPUs per node, other CPU or memory → RESIZE;
    * identical placements → NONE.
    """
    if prev is None:
        return Change.NONE
    if prev_end != start:
        return Change.RESTART
    if prev == placements:
        return Change.NONE
    if len(prev) == 1 and len(placements) == 1:  # the common case
        a, b = prev[0], placements[0]
        if a.node != b.node or a.gpus != b.gpus:
            return Change.MIGRATION
        return Change.RESIZE
    ga: dict[int, int] = {}
    gb: dict[int, int] = {}
    for p in prev:
        ga[p.node] = ga.get(p.node, 0) + p.gpus
    for p in placements:
        gb[p.node] = gb.get(p.node, 0) + p.gpus
    return Change.RESIZE if ga == gb else Change.MIGRATION
