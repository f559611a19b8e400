"""Settings: file loading, flag precedence, validation errors, a stable hash."""

from __future__ import annotations

import pytest

from synthgen.cli.table import sections
from synthgen.errors import UserError
from synthgen.settings.base import ConfigFile, load_config_file, resolve_settings
from synthgen.stages.generate.settings import GenerateSettings
from synthgen.stages.seeds.settings import SeedsSettings


def test_yaml_and_toml_give_the_same_settings(tmp_path):
    (tmp_path / "a.yaml").write_text("run_dir: r1\nseeds:\n  n: 7\n  min_lines: 30\n")
    (tmp_path / "a.toml").write_text('run_dir = "r1"\n[seeds]\nn = 7\nmin_lines = 30\n')
    a = resolve_settings(SeedsSettings, load_config_file(tmp_path / "a.yaml"), {})
    b = resolve_settings(SeedsSettings, load_config_file(tmp_path / "a.toml"), {})
    assert a == b and a.n == 7 and a.min_lines == 30 and str(a.run_dir) == "r1"


def test_flags_override_file_and_nested_keys_merge():
    data = {"generate": {"turns": 3, "teacher": {"model": "m-file", "base_url": "http://x/v1"}}}
    s = resolve_settings(GenerateSettings, data, {"turns": 4, "teacher": {"model": "m-flag"}})
    assert s.turns == 4
    assert s.teacher.model == "m-flag" and s.teacher.base_url == "http://x/v1"
    assert s.teacher.reasoning_effort == "high" and s.student.reasoning_effort == "low"


@pytest.mark.parametrize(
    "overrides, needle",
    [
        ({"attempts": -1}, "generate.attempts"),
        ({"envs": ["induction", "golf"]}, "unknown environment 'golf'"),
        ({"progression": {"target_high": 1.5}}, "target_high"),
        ({"turns": 0}, "generate.turns"),
        ({"shard": 3, "num_shards": 2}, "out of range"),
        ({"bogus": 1}, "unknown setting 'generate.bogus'"),
    ],
)
def test_bad_values_are_one_line_errors(overrides, needle):
    with pytest.raises(UserError) as err:
        resolve_settings(GenerateSettings, {}, overrides)
    assert needle in str(err.value) and "\n" not in str(err.value)


def test_unknown_section_and_bad_files_are_rejected(tmp_path):
    (tmp_path / "typo.yaml").write_text("sedes: {}\n")
    with pytest.raises(UserError, match="unknown key in config file: 'sedes'"):
        ConfigFile(tmp_path / "typo.yaml", sections()).data()
    bad = tmp_path / "bad.yaml"
    bad.write_text("seeds: [1, 2\n")
    with pytest.raises(UserError, match="not valid YAML"):
        load_config_file(bad)
    with pytest.raises(UserError, match="config file not found"):
        load_config_file(tmp_path / "missing.yaml")
    (tmp_path / "list.yaml").write_text("- 1\n- 2\n")
    with pytest.raises(UserError, match="must hold a mapping"):
        load_config_file(tmp_path / "list.yaml")


def test_hash_is_stable_and_ignores_execution_only_fields():
    base = GenerateSettings()
    same = GenerateSettings(shard=1, num_shards=4, max_in_flight=8, run_dir="elsewhere")
    same.teacher.base_url = "http://other:9/v1"
    assert base.settings_hash() == same.settings_hash()
    assert base.settings_hash() != GenerateSettings(attempts=8).settings_hash()
    assert base.settings_hash() != GenerateSettings(envs=["induction"]).settings_hash()
    assert GenerateSettings(envs="induction,deduction").envs == ["induction", "deduction"]


def test_the_config_sections_are_the_command_tables_models():
    """A config file may hold one section per settings model of the command table, no hand list."""
    from synthgen.cli.table import every_command

    assert sections() == {c.model.section for c in every_command() if c.model.section}
    assert {"generate", "filter", "train", "slurm", "scripted_server", "prompts", "serve"} <= sections()
