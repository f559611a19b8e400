"""`--help` a person can read: at 80 columns (and 200) no flag name or default is cut, no row
is repeated, the first panel holds at most 20 options, and errors across settings name flags."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from synthgen.cli.table import COMMANDS

BIG = ["train", "generate", "chain", "eval", "calibrate"]
BY_NAME = {c.name: c for c in COMMANDS}


def help_text(command: str, columns: int) -> str:
    """`synthgen COMMAND --help` as a user without a terminal (a pipe) at `columns` sees it."""
    env = {**os.environ, "COLUMNS": str(columns)}
    env.pop("TERMINAL_WIDTH", None)
    done = subprocess.run(
        [sys.executable, "-m", "synthgen", command, "--help"], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def expected_names(command: str) -> list[str]:
    spec = BY_NAME[command]
    names = []
    for flag in spec.flags():
        if flag.argument:
            continue
        names.append(flag.names[0])
        if flag.annotation is bool:
            names.append(f"--no-{flag.names[0][2:]}")
    return names + [a.name for a in spec.aliases]


def defaults(command: str) -> list[str]:
    return [
        m.group(0).replace("\\[", "[")
        for f in BY_NAME[command].flags()
        for m in [re.search(r"\\\[default: .*\]$", f.help)]
        if m
    ]


def rows(text: str) -> list[str]:
    """The option rows: what a user types, one row per option (names and metavar)."""
    return [m.group(1).strip() for m in re.finditer(r"^│ (-\S.*?)(?:  |│$)", text, re.M)]


@pytest.mark.parametrize("columns", [80, 200])
@pytest.mark.parametrize("command", BIG)
def test_help_cuts_nothing_and_repeats_nothing(command, columns):
    text = help_text(command, columns)
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= columns
    for name in expected_names(command):
        assert re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text), (command, columns, name)
    flat = " ".join(line.strip(" │╭╮╰╯─") for line in text.splitlines())
    flat = " ".join(flat.split())
    for default in defaults(command):
        assert default in flat, (command, columns, default)
    found = rows(text)
    assert len(found) >= len(BY_NAME[command].flags()) and len(found) == len(set(found)), command


@pytest.mark.parametrize("command", BIG)
def test_the_first_panel_holds_what_a_user_needs_first_and_at_most_20_options(command):
    text = help_text(command, 80)
    panels = re.findall(r"^╭─ (.*?) ─", text, re.M)
    assert panels[0] in ("Options", "Arguments") and len(panels) >= 4, panels
    first = text.split("╭─ Options")[1].split("╰")[0]
    options = rows("╭─ Options" + first)
    assert len(options) <= 20, (command, len(options))
    assert any(o.startswith("--config") for o in options)
    if command in ("generate", "chain"):
        assert any(o.startswith("--base-url") for o in options) and any(o.startswith("--turns") for o in options) == (
            command == "generate"
        )
        # the knobs of throughput come after the roles
        assert panels.index("Throughput and progress") > panels.index("Teacher")


def test_plain_help_without_a_terminal_has_no_colour_codes():
    assert "\x1b[" not in help_text("generate", 80)


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["filter", "--band-low", "0.5", "--band-high", "0.4"], "--band-low (0.5) exceeds --band-high (0.4)"),
        (["generate", "--shard", "3", "--num-shards", "2"], "--shard 3 is out of range for --num-shards 2"),
    ],
)
def test_an_error_across_settings_names_the_flags(cli, tmp_path, argv, needle):
    rc, _, err = cli(*argv, "--run-dir", tmp_path / "run")
    assert rc == 2 and needle in err and err.count("\n") == 1, err
    assert not (tmp_path / "run").exists()
