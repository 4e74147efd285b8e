"""Errors that reach the user as one line (the CLI prints them and exits with code 2)."""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")  # ASCII control characters


def one_line(text: str) -> str:
    """``text`` with every control character it quotes from user input (a newline in a
    job id or file name) shown escaped (``\\n``): an error is one line wherever it is printed."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


class SensaoptError(Exception):
    """Base class of the errors sensaopt reports to the user without a traceback."""


class InputError(SensaoptError, ValueError):
    """Bad user input: names the file, the field and (when known) the job."""

    def __init__(self, file: str, field: str, message: str, job: str | None = None):
        self.file, self.field, self.message, self.job = file, field, message, job
        super().__init__(str(self))

    def __str__(self) -> str:
        job = f" (job {self.job})" if self.job is not None else ""
        return one_line(f"{self.file}: {self.field}{job}: {self.message}")


class ArgumentError(InputError, TypeError):
    """A bad argument of the Python API or a bad policy knob (wrong type, not finite, out
    of range, unknown): ``where`` is the function or option (``solve()``, ``--set``,
    ``policy_config``), ``field`` the argument or knob. An :class:`InputError` (the CLI
    prints one line, exit 2), and a ``TypeError`` too, which a wrong argument was before."""

    def __init__(self, where: str, name: str, message: str, job: str | None = None):
        super().__init__(where, name, message, job)


class UnknownNameError(SensaoptError, KeyError):
    """An unknown name in a registry (solver, policy, ...): a :class:`SensaoptError` for
    the Python API, and a ``KeyError``, which it was before. Prints as its message
    (a plain ``KeyError`` would quote it)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class ScheduleError(SensaoptError):
    """A schedule breaks a rule of the instance (raised by the validator)."""

    def __init__(self, rule: str, message: str, job: str | None = None, round_: int | None = None):
        self.rule, self.message, self.job, self.round = rule, message, job, round_
        super().__init__(str(self))

    def __str__(self) -> str:
        where = []
        if self.job is not None:
            where.append(f"job {self.job}")
        if self.round is not None:
            where.append(f"round {self.round}")
        at = f" ({', '.join(where)})" if where else ""
        return one_line(f"invalid schedule [{self.rule}]{at}: {self.message}")


class PolicyError(SensaoptError):
    """A policy returned a decision the cluster cannot carry out."""
