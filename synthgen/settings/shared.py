"""Settings pieces every stage shares: where the run lives, shards, inputs, environments, bounds."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from pydantic import Field, field_validator, model_validator

from synthgen.envs import DEFAULT_ENVIRONMENTS
from synthgen.settings.base import ENV_NAMES, Section, Settings, cli

DEFAULT_RUN_DIR = Path("data/runs/default")
# Upper bounds that keep one process within a machine's means (a typo of 10^8 attempts would
# otherwise block the event loop for minutes and take gigabytes); documented in the README.
MAX_ATTEMPTS = 1024
MAX_TURNS = 64
MAX_IN_FLIGHT = 65536


class RunSettings(Settings):
    """A stage that reads and writes under one run directory (`data/runs/<name>/<stage>/`)."""

    run_dir: Path = Field(DEFAULT_RUN_DIR, description="run directory: each stage reads and writes RUN_DIR/<stage>/")
    unhashed: ClassVar[frozenset[str]] = frozenset({"run_dir"})


class InputSettings(Section):
    """A stage that reads another stage's folder, which must be finished unless said otherwise."""

    allow_partial: bool = Field(
        False,
        description="read an unfinished input stage as far as it is finished, on purpose "
        "(the console and the output's metadata say so)",
    )


class ShardedSettings(RunSettings):
    """A stage that a Slurm array splits: task `shard` of `num_shards` does every n-th item."""

    shard: int = Field(
        0, ge=0, description="this task's shard index", json_schema_extra=cli(envvar="SLURM_ARRAY_TASK_ID")
    )
    num_shards: int = Field(1, ge=1, le=100_000, description="number of shards the work is split into")
    unhashed: ClassVar[frozenset[str]] = frozenset({"run_dir", "shard", "num_shards"})

    @model_validator(mode="after")
    def _shard_in_range(self):
        if self.shard >= self.num_shards:
            raise ValueError(f"shard {self.shard} is out of range for num_shards {self.num_shards}")
        return self


def seconds(value):
    """A duration as seconds: a number, or text such as `90`, `90s`, `10m`, `1.5h`."""
    if isinstance(value, str):
        text = value.strip().lower()
        scale = {"s": 1, "m": 60, "h": 3600}.get(text[-1:])
        try:
            return float(text[:-1]) * scale if scale else float(text)
        except ValueError:
            raise ValueError(f"not a duration: {value!r} (write e.g. 90, 90s, 10m or 1h)") from None
    return value


def split_commas(value):
    """`a,b` or [`a,b`, `c`] (a repeated flag) -> [a, b, c]; anything else unchanged."""
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [part.strip() for v in value for part in v.split(",") if part.strip()]
    return value


def check_env_names(names: list[str]) -> list[str]:
    if not names:
        raise ValueError("at least one environment is needed")
    unknown = [n for n in names if n not in ENV_NAMES]
    if unknown:
        raise ValueError(f"unknown environment {unknown[0]!r}; choose from {', '.join(ENV_NAMES)}")
    return list(dict.fromkeys(names))


class EnvListMixin(Section):
    """`envs`: environment names, comma-separated or repeated, each one known. A model whose empty
    list means "every environment" sets `all_when_empty` (and redeclares the field's default)."""

    all_when_empty: ClassVar[bool] = False
    envs: list[str] = Field(
        default_factory=lambda: list(DEFAULT_ENVIRONMENTS),
        description="environments, comma-separated or repeated (contest only when named)",
    )

    @field_validator("envs", mode="before")
    @classmethod
    def _split_envs(cls, value):
        return split_commas(value)

    @field_validator("envs")
    @classmethod
    def _known_envs(cls, value: list[str]) -> list[str]:
        return value if not value and cls.all_when_empty else check_env_names(value)
