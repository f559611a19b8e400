"""One config language: every flag is a key of its command's section, a shared `llm:` section,
`--config` before or after the command, `config init` and `config show` output that read back,
and unknown keys answered with "did you mean"."""

from __future__ import annotations

import re

import pytest
import yaml

from synthgen.cli.table import COMMANDS, every_command
from synthgen.settings.base import flag_keys

# Commands whose settings need a value no default gives (positional arguments, a required input).
NEEDS = {
    "calibrate": ["--input-dir", "x"],
    "stats": ["r"],
    "match": ["a", "--like", "b", "--output", "c"],
    "serve": ["ckpt"],
    "export": ["r", "o"],
    "report": ["r"],
    "compare": ["a"],
    "verify": ["p.json", "a.txt"],
}
SHOWN = [c.name for c in COMMANDS] + ["slurm"]


def settings_of(out: str) -> dict:
    """The one section of `config show COMMAND` output."""
    (section,) = yaml.safe_load("\n".join(x for x in out.splitlines() if not x.startswith("#"))).values()
    return section


def test_section_keys_may_be_flag_names_with_dashes_or_underscores(cli, tmp_path):
    cfg = tmp_path / "run.yaml"
    cfg.write_text(
        'chain: {base_url: "http://h:1/v1", max-in-flight: 8, teacher_url: "http://t:2/v1", max_outage: 5m}\n'
    )
    rc, out, err = cli("config", "show", "chain", "--config", cfg)
    assert rc == 0, err
    data = settings_of(out)
    assert data["max_in_flight"] == 8 and data["llm"]["max_outage_s"] == 300.0
    # the alias key sets both roles; the role's own flag name wins over it, whatever the order
    assert data["teacher"]["base_url"] == "http://t:2/v1" and data["student"]["base_url"] == "http://h:1/v1"


@pytest.mark.parametrize("command", every_command(), ids=lambda c: c.name)
def test_every_flag_is_a_key_of_its_section_that_sets_what_the_flag_sets(command):
    keys = flag_keys(command.model)
    for flag in command.flags():
        key = flag.names[0].removeprefix("--").replace("-", "_")
        assert keys.get(key) == flag.path, (command.name, flag.names[0], keys.get(key))


def test_the_shared_llm_section_reaches_every_command_that_talks_to_a_server(cli, tmp_path):
    cfg = tmp_path / "run.yaml"
    cfg.write_text(
        'llm: {base_url: "http://h:1/v1", model: m, teacher: {effort: medium}, use-n: false}\n'
        'chain: {student_url: "http://s:2/v1"}\n'
    )
    for command in ("generate", "chain", "demo"):
        rc, out, err = cli("--config", cfg, "config", "show", command)
        assert rc == 0, (command, err)
        assert "model=m reasoning_effort=medium" in out, command
        assert settings_of(out)["llm"]["use_n"] is False, command
        if command != "demo":  # the demo has its own --base-url (else the scripted server), which llm: sets
            assert "teacher: POST http://h:1/v1/chat/completions model=m" in out, command
        else:
            assert settings_of(out)["base_url"] == "http://h:1/v1"
    rc, out, _ = cli("--config", cfg, "config", "show", "chain")
    assert "student: POST http://s:2/v1/chat/completions model=m" in out  # the section wins over llm:
    rc, out, _ = cli("--config", cfg, "config", "show", "chain", "--student-url", "http://f:3/v1")
    assert "student: POST http://f:3/v1/chat/completions" in out  # the flag wins over both
    rc, out, err = cli("--config", cfg, "config", "show", "eval")
    assert rc == 0 and settings_of(out)["model"]["base_url"] == "http://h:1/v1", err
    rc, out, err = cli("--config", cfg, "config", "show", "train")
    teacher = settings_of(out)["online"]["teacher"]
    assert rc == 0 and (teacher["base_url"], teacher["model"]) == ("http://h:1/v1", "m"), err
    assert settings_of(out)["model"] is None  # train's own --model (the policy) is not the server's model
    rc, out, err = cli("--config", cfg, "config", "show", "seeds")  # a command without a server ignores it
    assert rc == 0, err


def test_config_is_accepted_after_the_command_too(cli, tmp_path):
    cfg = tmp_path / "seeds.yaml"
    cfg.write_text("seeds: {n: 5}\n")
    rc, out, err = cli("config", "show", "seeds", "--config", cfg)
    assert rc == 0 and settings_of(out)["n"] == 5, err
    rc, out, err = cli("config", "show", "seeds", "-c", cfg)
    assert rc == 0 and settings_of(out)["n"] == 5, err
    rc, out, err = cli("-c", cfg, "config", "show", "seeds", "-c", cfg)  # the same file twice is one file
    assert rc == 0 and settings_of(out)["n"] == 5, err
    other = tmp_path / "other.yaml"
    other.write_text("seeds: {n: 6}\n")
    rc, _, err = cli("-c", cfg, "config", "show", "seeds", "-c", other)
    assert rc == 2 and "--config is given twice" in err and err.count("\n") == 1
    run_dir = tmp_path / "run"
    rc, _, err = cli("seeds", "--config", cfg, "dir", tmp_path / "no-such-tree", "--run-dir", run_dir)
    assert rc == 2 and "No such option" not in err and "not found" in err


@pytest.mark.parametrize(
    "text, needle",
    [
        ("generate: {atempts: 3}\n", "unknown setting 'generate.atempts' (did you mean 'attempts'?)"),
        ("generate: {teacher: {urll: x}}\n", "unknown setting 'generate.teacher.urll' (did you mean 'url'?)"),
        ("generat: {}\n", "unknown key in config file: 'generat' (did you mean 'generate'?)"),
        ("llm: {modle: x}\n", "unknown setting 'llm.modle' (did you mean 'model'?)"),
        ("attempts: 3\n", "'attempts' at the top level; it is a setting of generate, chain"),
        ("filter: {dedup: {treshold: 0.5}}\n", "(did you mean 'threshold'?)"),
    ],
)
def test_an_unknown_key_is_one_line_with_the_closest_name(cli, tmp_path, text, needle):
    """Any command reading the file checks every section: a typo in generate's stops seeds too."""
    cfg = tmp_path / "typo.yaml"
    cfg.write_text(text)
    rc, out, err = cli("config", "show", "seeds", "--config", cfg)
    assert rc == 2 and needle in err and err.count("\n") == 1 and not out, err


@pytest.mark.parametrize("command", SHOWN)
def test_config_show_output_runs_as_config_unchanged(cli, tmp_path, command):
    args = ["config", "show", *command.split(), *NEEDS.get(command, [])]
    flags = ["--turns", "3"] if command in ("generate", "demo") else []
    rc, first, err = cli(*args, *flags)
    assert rc == 0, err
    cfg = tmp_path / "shown.yaml"
    cfg.write_text(first)
    rc, again, err = cli(*args, "--config", cfg)
    assert rc == 0, err
    assert again == first
    if flags:
        assert settings_of(first)["turns"] == 3  # what the flag set is in the file, not just defaults


def test_config_init_output_runs_as_config_unchanged_and_every_line_uncommented_too(cli, tmp_path):
    rc, text, err = cli("config", "init")
    assert rc == 0, err
    cfg = tmp_path / "init.yaml"
    cfg.write_text(text)
    # every line a key (commented or not) or a comment: each key has its flag's help beside it
    assert re.search(r"^  turns: 6  # Teacher turns per lineage", text, re.M)
    assert re.search(r"^  # teacher_url: \"http://127.0.0.1:8000/v1\"  # ", text, re.M)
    assert re.search(r"^llm:$", text, re.M)
    uncommented = tmp_path / "all.yaml"
    uncommented.write_text(
        "\n".join(
            re.sub(r"^(\s*)# ([a-z_]+: )", r"\1\2", line) for line in text.splitlines() if "(required)" not in line
        )
    )
    for command in SHOWN:
        args = ["config", "show", *command.split(), *NEEDS.get(command, [])]
        rc, plain, err = cli(*args)
        assert rc == 0, err
        rc, out, err = cli(*args, "--config", cfg)
        assert (rc, out) == (0, plain), (command, err)
        rc, out, err = cli(*args, "--config", uncommented)
        assert rc == 0, (command, err)


def test_config_init_for_one_command_writes_a_file_and_keeps_an_existing_one(cli, tmp_path):
    target = tmp_path / "gen.yaml"
    rc, out, err = cli("config", "init", "generate", "--output", target)
    assert rc == 0 and target.is_file() and "--config" in out, err
    text = target.read_text()
    assert "generate:" in text and "\nseeds:" not in text
    rc, _, err = cli("config", "init", "generate", "--output", target)
    assert rc == 2 and "exists" in err and target.read_text() == text
    rc, _, err = cli("config", "init", "generat")
    assert rc == 2 and "did you mean 'generate'?" in err
    rc, out, err = cli("generate", "--config", target, "--help")
    assert rc == 0, err
