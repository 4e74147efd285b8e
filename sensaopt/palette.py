"""One palette for every figure: colour-blind-safe colours, one colour per policy everywhere.

Policies and solvers take Okabe & Ito's eight colours (Okabe & Ito 2008, "Color Universal
Design"), a fixed one per known name (:data:`POLICY_COLORS`; the exact MILP backends take
greys, CP-SAT black); any other name gets one of
Paul Tol's muted colours chosen from a checksum of the name, so it too is the same in
every figure, process and session. Gantt bars are coloured by model class (image,
language, speech; :data:`CLASS_COLORS`, Paul Tol's light scheme, readable under black
labels); model curves take shades of their class colour. A missed deadline is
vermillion (:data:`MISSED`). Colours are ``#rrggbb`` strings, usable by matplotlib as is.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable

OKABE_ITO: dict[str, str] = {
    "black": "#000000", "orange": "#E69F00", "sky blue": "#56B4E9", "bluish green": "#009E73",
    "yellow": "#F0E442", "blue": "#0072B2", "vermillion": "#D55E00", "reddish purple": "#CC79A7",
}
"""Okabe & Ito's eight colours ("Color Universal Design"), distinguishable under the common colour-vision deficiencies."""

POLICY_COLORS: dict[str, str] = {
    "sensascale": OKABE_ITO["blue"],
    "chronus": OKABE_ITO["orange"],
    "synergy-tune": OKABE_ITO["bluish green"],
    "edf": OKABE_ITO["reddish purple"],
    "fifo": OKABE_ITO["sky blue"],
    "rolling-cpsat": OKABE_ITO["vermillion"],
    "rolling-milp": OKABE_ITO["yellow"],
    "cpsat": OKABE_ITO["black"],  # exact schedules: black / greys, the reference the policies are measured against
    "exact": OKABE_ITO["black"],
    "milp:highs": "#777777",
    "milp:cbc": "#BBBBBB",
}
"""The fixed colour of each known policy or solver (keys as :func:`policy_key` returns them)."""

# Paul Tol's muted scheme, for names not in POLICY_COLORS (chosen by a checksum of the name)
TOL_MUTED = ("#332288", "#88CCEE", "#44AA99", "#117733", "#999933", "#DDCC77", "#CC6677", "#882255", "#AA4499")

MODEL_CLASSES = ("image", "language", "speech")
"""The catalog's model classes (``SensitivityProfile.task``; profiles given in an instance are ``custom``)."""

CLASS_COLORS: dict[str, str] = {"image": "#77AADD", "language": "#EEDD88", "speech": "#44BB99", "custom": "#DDDDDD"}
"""Gantt colour per model class (Paul Tol's light scheme: light blue, light yellow, mint; pale grey for
others), all far from :data:`MISSED`."""

MISSED = OKABE_ITO["vermillion"]  # a missed deadline
RESOURCE_COLORS: dict[str, str] = {"gpu": OKABE_ITO["bluish green"], "cpu": OKABE_ITO["blue"], "mem": OKABE_ITO["orange"]}
"""Utilization lines: GPUs, CPU cores, memory."""


def policy_key(name: str) -> str:
    """The palette key of a policy or solver label (``"heuristic:sensascale"`` and ``"sensascale"`` are one policy).

    Args:
        name: a policy or solver label.

    Returns:
        ``name`` stripped, lower case, ``heuristic:`` dropped.
    """
    key = name.strip().lower()
    return key.split(":", 1)[1] if key.startswith("heuristic:") else key


def policy_color(name: str) -> str:
    """The colour of a policy or solver, the same in every figure, process and session.

    Args:
        name: a policy or solver label (:func:`policy_key` makes it a key).

    Returns:
        ``"#rrggbb"``: fixed for the known names (:data:`POLICY_COLORS`), else one of
        :data:`TOL_MUTED` picked by the CRC-32 of the key.
    """
    key = policy_key(name)
    if key in POLICY_COLORS:
        return POLICY_COLORS[key]
    return TOL_MUTED[zlib.crc32(key.encode()) % len(TOL_MUTED)]


def policy_colors(names: Iterable[str]) -> dict[str, str]:
    """The colour of each policy (:func:`policy_color`).

    Args:
        names: policy or solver labels.

    Returns:
        ``{name: "#rrggbb"}``, in the given order.
    """
    return {n: policy_color(n) for n in names}


def class_color(task: str) -> str:
    """The Gantt colour of a model class.

    Args:
        task: a model class (``SensitivityProfile.task``: image, language, speech, custom).

    Returns:
        ``"#rrggbb"`` from :data:`CLASS_COLORS` (``custom`` and unknown classes: pale grey).
    """
    return CLASS_COLORS.get(task, CLASS_COLORS["custom"])


def shade(color: str, amount: float) -> str:
    """``color`` mixed with black or white.

    Args:
        color: ``"#rrggbb"``.
        amount: in [-1, 1]: the fraction of black (< 0) or white (> 0) mixed in.

    Returns:
        The mixed colour, ``"#RRGGBB"``.

    Raises:
        ValueError: ``amount`` is outside [-1, 1].
    """
    if not -1.0 <= amount <= 1.0:
        raise ValueError(f"shade amount must be in [-1, 1], got {amount}")
    rgb = [int(color[i:i + 2], 16) for i in (1, 3, 5)]
    target = 255 if amount > 0 else 0
    mixed = [round(c + (target - c) * abs(amount)) for c in rgb]
    return "#" + "".join(f"{c:02X}" for c in mixed)


def model_colors(tasks: dict[str, str]) -> dict[str, str]:
    """A colour per model: shades of its class colour from darker to lighter in the given
    order, so that models of one class read as one family.

    Args:
        tasks: ``{model name: model class}``.

    Returns:
        ``{model name: "#RRGGBB"}``.
    """
    out: dict[str, str] = {}
    for task in dict.fromkeys(tasks.values()):
        members = [m for m, t in tasks.items() if t == task]
        n = len(members)
        for k, m in enumerate(members):
            out[m] = shade(class_color(task), -0.75 + 0.75 * k / max(n - 1, 1))  # from 75 % towards black to the class colour
    return out
