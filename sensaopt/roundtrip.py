"""The exported MILP and back: ``sensaopt export`` writes the model file with its
objective scale and offset as comments and a sidecar JSON (``MODEL.json`` beside
``MODEL``); ``sensaopt import-solution`` reads an external solver's solution of it
(:mod:`sensaopt.solution_files`) and rebuilds, validates and scores the schedule.

The sidecar (:data:`SIDECAR_VERSION`) holds everything the import needs, so it does not
re-run sensaopt's model building (which may have changed since the export): the
instance (as exported, change costs scaled), the model file's SHA-256, the objective's
``scale`` and ``offset`` (model objective in minutes = file objective / scale + offset;
MPS/LP files drop the constant) and, per placement variable ``x_*`` of the model, the job,
round and placements it stands for.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sensaopt.errors import InputError, SensaoptError
from sensaopt.instance import Instance
from sensaopt.schedule import Placement, Schedule
from sensaopt.solution_files import SolutionFile
from sensaopt.validator import Evaluation

SIDECAR_VERSION = 1
COMMENT = {"mps": "*", "lp": "\\"}  # comment-line prefix of each format


def sidecar_path(model: str | Path) -> Path:
    """The sidecar of a model file: ``MODEL.json`` beside it (``model.mps`` -> ``model.mps.json``)."""
    p = Path(model)
    return p.with_name(p.name + ".json")


def objective_comment(fmt: str, scale: float, offset: float, sidecar: str) -> str:
    """The comment lines that open an exported model file (``fmt``: mps or lp)."""
    c = COMMENT[fmt]
    return (f"{c} sensaopt: model objective (minutes) = file objective / {scale!r} + {offset!r}\n"
            f"{c} sensaopt: objective_scale {scale!r}\n{c} sensaopt: objective_offset_minutes {offset!r}\n"
            f"{c} sensaopt: sidecar {sidecar} (sensaopt import-solution MODEL SOLUTION -o schedule.json)\n")


def export_files(instance: Instance, model_tmp: Path, fmt: str, horizon: int | None,
                 model_name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Write the model to ``model_tmp`` (its final name ``model_name``), opened by the
    objective comments; return (size info as :func:`sensaopt.exact.milp.export_model`
    gives it, the sidecar record). The warm start is an exact solve's default
    (:data:`sensaopt.warm_start.DEFAULT_START_POLICY`), simulated once the size is checked."""
    from sensaopt.exact.common import DEFAULT_HORIZON_SLACK, DEFAULT_MAX_VARS, DEFAULT_WORK_SCALE, WarmStart, prepare
    from sensaopt.exact.milp import build_milp, export_model
    from sensaopt.exact.model.data import placements_of, precheck_size
    from sensaopt.io import instance_to_dict
    from sensaopt.result import package_versions
    from sensaopt.warm_start import DEFAULT_START_POLICY, choose_start

    precheck_size(instance, horizon, DEFAULT_HORIZON_SLACK, DEFAULT_MAX_VARS)  # before the warm start's simulations
    start = choose_start(instance, DEFAULT_START_POLICY).schedule
    info = export_model(instance, str(model_tmp), start, fmt, horizon=horizon)
    # the same model again (the same data, built the same way) for its variables' meaning
    data = prepare(instance, info["horizon"], DEFAULT_HORIZON_SLACK, False, DEFAULT_WORK_SCALE, DEFAULT_MAX_VARS,
                   WarmStart.of(instance, start)).data
    mb = build_milp(data)
    if len(mb.backend.prob.variables()) != info["variables"]:  # type: ignore[attr-defined]
        raise SensaoptError("export: the model built for the sidecar differs from the one written (variable counts)")
    placements = {x.name: [data.jobs[k].id, t + data.start_round, [[p.node, p.gpus, p.cpus, p.mem_gb]
                                                                  for p in placements_of(data, data.jobs[k], pair)]]
                  for (k, t, pair), x in mb.vars.x.items()}
    scale, offset = info["objective_scale"], info["objective_offset_minutes"]
    text = model_tmp.read_text()
    model_tmp.write_text(objective_comment(fmt, scale, offset, sidecar_path(model_name).name) + text)
    sidecar = {"sensaopt_export": SIDECAR_VERSION, "versions": package_versions(), "model": Path(model_name).name, "format": fmt,
               "model_sha256": hashlib.sha256(model_tmp.read_bytes()).hexdigest(),
               "objective": "model objective (minutes) = file objective / objective_scale + objective_offset_minutes",
               "objective_scale": scale, "objective_offset_minutes": offset, "horizon_rounds": info["horizon"],
               "variables": info["variables"], "constraints": info["constraints"], "instance": instance_to_dict(instance),
               "placements": placements}
    return info, sidecar


@dataclass(frozen=True)
class Imported:
    """A solution read back: the ``instance`` it is for, the rebuilt ``schedule``, the
    validator's ``evaluation``, the ``solution`` file's content and the model objective it
    reports in minutes (``file_objective_minutes``; None when the file gives none)."""

    instance: Instance
    schedule: Schedule
    evaluation: Evaluation
    solution: SolutionFile
    file_objective_minutes: float | None


def read_sidecar(model: Path, sidecar: Path) -> dict[str, Any]:
    """The sidecar of ``model``, checked: its version and that it describes this very file (SHA-256)."""
    from sensaopt.io import check_regular_file, read_json

    for f in (model, sidecar):
        if f.exists():
            check_regular_file(f)
    if not sidecar.is_file():
        raise InputError(str(sidecar), "(file)", f"no sidecar of {model} (written by `sensaopt export` beside the model; --sidecar PATH)")
    raw = read_json(sidecar)
    if not isinstance(raw, dict) or raw.get("sensaopt_export") != SIDECAR_VERSION:
        raise InputError(str(sidecar), "sensaopt_export", f"not a sensaopt export sidecar (version {SIDECAR_VERSION})")
    for key in ("model_sha256", "objective_scale", "objective_offset_minutes", "instance", "placements"):
        if key not in raw:
            raise InputError(str(sidecar), key, "missing")
    if hashlib.sha256(model.read_bytes()).hexdigest() != raw["model_sha256"]:
        raise InputError(str(model), "(file)", f"is not the model {sidecar} describes (SHA-256 differs: exported again, or edited?)")
    return raw


def import_solution(model: str | Path, solution: str | Path, sidecar: str | Path | None = None, fmt: str | None = None) -> Imported:
    """The schedule a solver's ``solution`` of the exported ``model`` stands for, validated.
    :class:`InputError` (one line) for a sidecar that does not match, an unreadable
    solution, or one that names none of the model's placement variables."""
    from sensaopt.exact.model.values import finish_minutes
    from sensaopt.io import instance_from_dict
    from sensaopt.solution_files import read_solution
    from sensaopt.validator import check_schedule

    model, solution = Path(model), Path(solution)
    side = Path(sidecar) if sidecar is not None else sidecar_path(model)
    raw = read_sidecar(model, side)
    inst = instance_from_dict(raw["instance"], str(side))
    sol = read_solution(solution, fmt)
    placements: dict[str, list[Any]] = raw["placements"]
    if not set(sol.values) & set(placements):  # a model's solution always lists a placement variable that is 1
        raise InputError(str(solution), "(solution)", f"names none of the placement variables of {model} (a solution of another model?)")
    rounds: dict[int, dict[str, tuple[Placement, ...]]] = {}
    for name, value in sol.values.items():
        if value > 0.5 and name in placements:
            job, r, pls = placements[name]
            if job in rounds.setdefault(r, {}):
                raise InputError(str(solution), name, f"places job {job} twice in round {r} (not a solution of the model)")
            rounds[r][job] = tuple(Placement(*p) for p in pls)
    R = inst.round_minutes
    schedule = Schedule.from_rounds(sorted(rounds.items()), R)
    # the model rounds work up to its units: cut every round after a job's true completion
    # (as sensaopt.exact.model.values.schedule_of_rounds does for sensaopt's own solves)
    for jid, fin in finish_minutes(inst, schedule).items():
        if fin is not None:
            last = int(round(fin / R)) - 1
            for r in rounds:
                if r > last:
                    rounds[r].pop(jid, None)
    schedule = Schedule.from_rounds(sorted(rounds.items()), R)
    ev = check_schedule(inst, schedule)
    file_obj = None if sol.objective is None else sol.objective / raw["objective_scale"] + raw["objective_offset_minutes"]
    return Imported(inst, schedule, ev, sol, file_obj)

