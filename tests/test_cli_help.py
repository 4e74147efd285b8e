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
    assert re.search(r"--time-limit SECONDS\b", help_of(["solve"], capsys))


def _commands() -> list[tuple[list[str], object]]:
    """(path, click command) of the root, every group and every command."""
    from sensaopt.cli import _command, _load_extra

    _load_extra()
    out: list[tuple[list[str], object]] = []

    def walk(cmd: object, path: list[str]) -> None:
        out.append((path, cmd))
        for name, sub in getattr(cmd, "commands", {}).items():
            walk(sub, [*path, name])

    walk(_command(), [])
    return out


COMMANDS = [path for path, _ in _commands()]


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "sensaopt")
def test_every_help_has_real_metavars_shown_defaults_and_whole_summaries(path: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    import click

    text = help_of(path, capsys)
    usage = text.split("\n\n")[0]
    assert not re.search(r"\{[A-Za-z_]+\}|<[\w\[\]]+>", usage), usage  # typer's {INSTANCE}, <path>
    assert not re.search(r"<(str|int|float|path|bool|list\[\w+\])>", text), text
    cmd = {tuple(p): c for p, c in _commands()}[tuple(path)]
    ctx = click.Context(cmd, info_name="sensaopt")
    for p in cmd.params:  # type: ignore[attr-defined]
        rec = p.get_help_record(ctx)
        if p.param_type_name != "option" or rec is None or p.name == "help":
            continue
        flag = getattr(p, "is_flag", False) and not p.secondary_opts  # off unless given: no default to show
        assert flag or "[default: " in rec[1] or "required]" in rec[1], f"{' '.join(path)} {rec[0]}: no default shown: {rec[1]!r}"
        assert "[default: ()]" not in rec[1] and "[default: None]" not in rec[1], rec
        assert not re.search(r"\{[A-Za-z_]+\}|<[\w\[\]]+>", rec[0]), rec[0]
    for name, sub in getattr(cmd, "commands", {}).items():  # the command list: each summary whole (its docstring's first paragraph)
        whole = " ".join((sub.help or "").strip().split("\n\n")[0].split())
        assert whole and not whole.endswith("..."), name
        assert whole in " ".join(text.split()), f"{name}: summary cut: {whole!r}"


def test_a_folder_command_refuses_dash_o_naming_out_dir(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["simulate", "--trace", "synthetic", "-o", str(tmp_path / "a")],
                 ["sweep", "--trace", "synthetic", "--store", str(tmp_path / "b")],
                 ["instances", "from-trace", "--trace", "synthetic", "--output", str(tmp_path / "c")],
                 ["experiment", "ablation", "--out", str(tmp_path / "d")]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "give it as --out-dir DIR" in err[0], err
    assert list(tmp_path.iterdir()) == []


def test_commands_running_one_policy_default_to_sensascale(capsys: pytest.CaptureFixture[str]) -> None:
    from sensaopt.cli.options import DEFAULT_POLICY

    assert DEFAULT_POLICY == "sensascale"
    for path in (["solve"], ["simulate"], ["sweep"], ["gap"], ["round-gap"]):
        text = " ".join(help_of(path, capsys).split())
        assert re.search(r"--policy NAME .*?\[default: sensascale\]", text), path
