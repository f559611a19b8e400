"""Typed, validated settings for every stage, loaded from a YAML/TOML file and overridden by flags.

One module per stage's settings lives beside this file; `base` holds the loading, merging and
hashing that they all share. A config file mirrors the CLI: top-level keys that every stage
understands (`run_dir`, `seed`) and one section per command whose keys are that command's flags
with underscores, e.g.

    run_dir: data/runs/demo
    seeds: {n: 64, min_lines: 25}
    generate: {turns: 6, attempts: 32, teacher: {base_url: "http://gpu01:8000/v1"}}
"""

from synthgen.settings.base import (
    ENV_NAMES,
    Settings,
    load_config_file,
    resolve_settings,
    settings_hash,
)

__all__ = ["ENV_NAMES", "Settings", "load_config_file", "resolve_settings", "settings_hash"]
