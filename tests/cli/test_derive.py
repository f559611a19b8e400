"""Flags derived from the settings models: every knob once, with help, and roles that keep their defaults."""

from __future__ import annotations

import pytest
import yaml

from synthgen.cli.app import app, command_tree
from synthgen.cli.flags import model_flags
from synthgen.cli.table import every_command
from synthgen.stages.generate.settings import GenerateSettings

SETTINGS_COMMANDS = every_command()


def shown(out: str) -> dict:
    """The settings in `synthgen config show COMMAND` output (a config file: one section, the command's)."""
    data = yaml.safe_load("\n".join(line for line in out.splitlines() if not line.startswith("#")))
    (section,) = data.values()
    return section


@pytest.mark.parametrize("command", SETTINGS_COMMANDS, ids=lambda c: c.name)
def test_every_flag_has_help_and_one_name(command):
    flags = command.flags()
    names = [name for f in flags for name in f.names] + [a.name for a in command.aliases]
    assert len(names) == len(set(names)), "a flag name is declared twice"
    for flag in flags:
        assert flag.help.strip(" .") and not flag.help.startswith("["), f"{flag.names[0]} has no help"


def test_every_command_is_derived_from_a_settings_model():
    """No command declares its own flags beside a model (where defaults would drift apart)."""

    def leaves(command, path):
        for name, sub in getattr(command, "commands", {}).items():
            yield from leaves(sub, [*path, name])
        if not getattr(command, "commands", None):
            yield " ".join(path), command

    plain = [path for path, c in leaves(command_tree(app), []) if "SettingsCommand" not in c.callback.__qualname__]
    # `config init` writes a file of the settings of every command; its own arguments (COMMAND,
    # --output, --force) say where, not how any command runs
    assert plain == ["config init"]


def test_every_field_has_a_flag_unless_it_cannot_be_typed():
    covered = {".".join(f.path) for f in model_flags(GenerateSettings)}
    for name in (
        "attempts",
        "turns",
        "teacher.base_url",
        "student.reasoning_effort",
        "sandbox.timeout_s",
        "progression.target_high",
        "env.holdout_fraction",
        "llm.max_attempts",
        "input_dir",
    ):
        assert name in covered
    assert "teacher.api_key" not in covered  # secrets never on a command line (ps shows it)


def test_one_flag_name_for_the_input_folder(cli):
    for name in ("generate", "filter", "bin", "chain"):
        rc, out, _ = cli(name, "--help")
        assert rc == 0 and "--input-dir" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["--base-url", "http://gpu01:8000/v1"],
        ["--student-url", "http://gpu02:8000/v1"],
        ["--student-model", "my-student"],
        ["--teacher-url", "http://gpu01:8000/v1", "--student-url", "http://gpu02:8000/v1"],
        ["--student-temperature", "0.8"],
    ],
    ids=["base-url", "student-url", "student-model", "both-urls", "one-sampling-knob"],
)
def test_roles_keep_their_own_defaults_under_any_override(cli, argv):
    rc, out, err = cli("config", "show", "generate", *argv)
    assert rc == 0, err
    data = shown(out)
    assert data["teacher"]["reasoning_effort"] == "high" and data["teacher"]["max_tokens"] == 32768
    assert data["student"]["reasoning_effort"] == "low" and data["student"]["max_tokens"] == 16384
    assert data["attempts"] == 32 and data["turns"] == 6


def test_config_file_role_keys_keep_the_other_defaults(cli, tmp_path):
    (tmp_path / "run.yaml").write_text(
        "generate:\n  student: {base_url: 'http://gpu02:8000/v1'}\nchain:\n  teacher: {model: big}\n"
    )
    for stage in ("generate", "chain"):
        rc, out, err = cli("--config", tmp_path / "run.yaml", "config", "show", stage)
        assert rc == 0, err
        data = shown(out)
        assert data["student"]["reasoning_effort"] == "low" and data["teacher"]["reasoning_effort"] == "high"


def test_urls_do_not_change_the_settings_hash(cli):
    hashes = set()
    for argv in (
        [],
        ["--base-url", "http://gpu01:8000/v1"],
        ["--teacher-url", "http://a/v1", "--shard", "2", "--num-shards", "4", "--max-in-flight", "8"],
    ):
        rc, out, _ = cli("config", "show", "generate", *argv)
        hashes.add(next(line for line in out.splitlines() if "settings hash" in line).split()[3])
    assert len(hashes) == 1
    rc, out, _ = cli("config", "show", "generate", "--student-effort", "high")
    assert next(line for line in out.splitlines() if "settings hash" in line).split()[3] not in hashes


def test_show_says_what_each_role_is_sent(cli):
    rc, out, _ = cli("config", "show", "generate", "--base-url", "http://gpu01:8000/v1", "--attempts", "16")
    lines = [line for line in out.splitlines() if "POST" in line]
    assert "reasoning_effort=high" in lines[0] and "n=1" in lines[0] and "http://gpu01:8000/v1" in lines[0]
    assert "reasoning_effort=low" in lines[1] and "n=16" in lines[1]


def test_show_without_a_stage_prints_every_stage_from_the_file(cli, tmp_path):
    (tmp_path / "run.yaml").write_text("run_dir: data/runs/x\nseeds: {n: 7}\nbin: {scheme: chains}\n")
    rc, out, err = cli("--config", tmp_path / "run.yaml", "config", "show")
    assert rc == 0, err
    for stage in ("seeds", "generate", "filter", "bin", "chain", "train", "demo", "slurm"):
        assert f"# synthgen {stage}:" in out
    assert "n: 7" in out and "scheme: chains" in out


def test_flags_beat_the_file_and_the_file_beats_defaults(cli, tmp_path):
    (tmp_path / "run.yaml").write_text("generate: {turns: 3, attempts: 8, teacher: {model: file-model}}\n")
    rc, out, _ = cli(
        "--config", tmp_path / "run.yaml", "config", "show", "generate", "--turns", "4", "--teacher-url", "http://t/v1"
    )
    data = shown(out)
    assert (data["turns"], data["attempts"]) == (4, 8)
    assert data["teacher"]["model"] == "file-model" and data["teacher"]["base_url"] == "http://t/v1"


def test_bool_flags_show_as_flags_and_bad_values_are_one_line(cli):
    rc, out, _ = cli("generate", "--help")
    assert "--no-progress" in out and "<bool>  Show live" not in out
    rc, out, err = cli("generate", "--attempts", "100000000")
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "attempts" in err
    rc, out, err = cli("bin", "--scheme", "weird")
    assert rc == 2 and len(err.strip().splitlines()) == 1


def test_commands_are_registered_once():
    names = [c.name for c in app.registered_commands]
    assert len(names) == len(set(names))
