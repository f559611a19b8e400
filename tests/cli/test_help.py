"""Every command's --help: each option explained, flags shown as flags (no `<bool>` value), and the
paper named in words a user can look up (never a path or a file outside the repository)."""

from __future__ import annotations

import re

import click
import pytest
import typer

from synthgen.cli.app import app, command_tree


def _paths(command, prefix=()):
    yield prefix
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from _paths(sub, (*prefix, name))


COMMANDS = list(_paths(command_tree(app)))


def test_every_command_is_listed():
    names = {path[0] for path in COMMANDS if path}
    assert {"seeds", "generate", "filter", "bin", "chain", "train", "stats", "export", "report", "slurm"} <= names


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "synthgen")
def test_help_explains_every_option_and_shows_flags_as_flags(cli, path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    rc, out, err = cli(*path, "--help")
    assert rc == 0, err
    assert "<bool>" not in out and "PydanticUndefined" not in out
    command = command_tree(app)
    for name in path:
        command = command.commands[name]
    for param in command.params:
        if isinstance(param, click.Option):
            assert (param.help or "").strip(), f"{' '.join(path)} {param.opts[0]} has no help"
    assert not re.search("SPEC|FIELD" + "-NOTES|paper" + " 000|[.][.]/" + "shared", out)  # split: no self-match


def test_the_root_lists_commands_without_arguments(cli):
    rc, out, _ = cli()
    assert "export" in out and "report" in out
    assert isinstance(command_tree(app), typer.core.TyperGroup)
