"""Help text a newcomer reads: every command's whole summary (not cut at 45 characters)
and real metavars (FLOAT, INTEGER, PATH, TEXT; arguments in capitals), never typer's
``<float>`` / ``<list[str]>``."""

from __future__ import annotations

import re

import pytest

from sensaopt.cli import main


def help_of(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main([*args, "--help"]) == 0
    return capsys.readouterr().out


def test_the_command_list_shows_whole_summaries(capsys: pytest.CaptureFixture[str]) -> None:
    text = help_of([], capsys)
    listing = text.split("Commands:")[1]
    assert "..." not in listing
    assert "Rebuild the schedule an external solver's solution of an exported model stands for, validate it and write it." in " ".join(
        listing.split())


@pytest.mark.parametrize("command", [["solve"], ["sweep"], ["simulate"], ["experiment", "paper"], ["export"], ["data", "fetch"]])
def test_options_show_real_metavars(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    text = help_of(command, capsys)
    assert not re.search(r"<(str|int|float|path|list\[\w+\])>", text), text
    assert not re.search(r"\{[a-z_]+\}", text), text


def test_numeric_repeatable_workload_options_say_their_type(capsys: pytest.CaptureFixture[str]) -> None:
    text = help_of(["sweep"], capsys)
    assert re.search(r"--load FLOAT\b", text) and re.search(r"--seed INTEGER\b", text)
    assert re.search(r"--time-limit FLOAT\b", help_of(["solve"], capsys))
