"""Settings machinery shared by every stage: strict models, file loading, merging, a stable hash."""

from __future__ import annotations

import hashlib
import json
import math
import sys
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError, ValidationInfo, field_validator

from synthgen.envs import DEFAULT_ENVIRONMENTS, env_names
from synthgen.errors import UserError

# The environment names, read from the registry (synthgen.envs.ENVIRONMENTS, which imports nothing).
ENV_NAMES: tuple[str, ...] = env_names()
DEFAULT_ENV_NAMES: tuple[str, ...] = DEFAULT_ENVIRONMENTS  # generate's default (the paper's four)

# Keys a config file may hold at the top level, shared by every stage that has such a field.
SHARED_KEYS: frozenset[str] = frozenset({"run_dir", "seed"})
# Sections a config file may hold: one per command that takes settings (`section` of its model).
SECTIONS: frozenset[str] = frozenset(
    {
        "seeds",
        "generate",
        "filter",
        "bin",
        "chain",
        "calibrate",
        "train",
        "eval",
        "import",
        "slurm",
        "stats",
        "plan",
        "demo",
        "scripted_server",
        "export",
        "report",
        "verify",
        "sandbox",
        "prompts",
        "serve",
        "match",
        "compare",
    }
)

S = TypeVar("S", bound="Settings")

# Every number a setting holds is finite and at most this large (so no product of settings, no
# conversion to a C integer and no sleep overflows); a field named `*_s` holds seconds and is at
# most MAX_SECONDS (about 115 days: past that, a wait is a hang). Fields may set tighter bounds.
MAX_MAGNITUDE = 10**15
MAX_SECONDS = 10**7


def check_number(value: Any, name: str) -> Any:
    """`value` (or each number inside a list, tuple or mapping) finite and in range, else ValueError."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            check_number(item, name)
    elif isinstance(value, dict):
        for item in value.values():
            check_number(item, name)
    elif isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError("must be a finite number")
        seconds = name.endswith("_s") and not name.endswith("_per_s")
        limit = MAX_SECONDS if seconds else MAX_MAGNITUDE
        if abs(value) > limit:
            raise ValueError(f"must be at most {limit:g}{' seconds' if seconds else ''} in size")
    return value


class Section(BaseModel):
    """Base of every settings model and nested section: unknown keys are errors, and every number
    is finite and in range (`check_number`), checked once here for every field of every model."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    @field_validator("*", mode="after")
    @classmethod
    def _numbers_in_range(cls, value: Any, info: ValidationInfo) -> Any:
        return check_number(value, info.field_name or "")


def cli(
    flag: str | None = None,
    *,
    argument: bool = False,
    envvar: str | None = None,
    hidden: bool = False,
    metavar: str | None = None,
    as_text: bool = False,
) -> dict[str, Any]:
    """How a settings field appears on the command line, for `Field(json_schema_extra=cli(...))`.

    By default every field is a flag named after it (`max_in_flight` -> `--max-in-flight`; a field
    of a nested section gets the section's prefix: `dedup.threshold` -> `--dedup-threshold`).
    `flag` renames it: a full name (`--input`) or, inside a section, the part after the prefix
    (`url` -> `--teacher-url`). `argument` makes it positional; `envvar` also reads it from the
    environment (Slurm's array variables); `hidden` keeps it to config files only (secrets,
    structures); `as_text` takes a structured field as one string its validator parses.
    """
    spec = {
        "flag": flag,
        "argument": argument,
        "envvar": envvar,
        "hidden": hidden,
        "metavar": metavar,
        "as_text": as_text,
    }
    return {"cli": {k: v for k, v in spec.items() if v not in (None, False)}}


class Settings(Section):
    """Base of every stage's settings: unknown keys are errors, values are validated on assignment.

    `unhashed` names fields that change how a run executes but not what it produces (worker
    counts, shard index, progress display); they are left out of `settings_hash` so that every
    shard of a Slurm array, and a resumed run with more workers, share one hash.
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=True, frozen=False)
    section: ClassVar[str] = ""
    unhashed: ClassVar[frozenset[str]] = frozenset()

    def hashed_view(self) -> dict[str, Any]:
        data = self.model_dump(mode="json")
        return _drop_unhashed(self, data)

    def settings_hash(self) -> str:
        return settings_hash(self)


def _drop_unhashed(model: BaseModel, data: dict[str, Any]) -> dict[str, Any]:
    skip = getattr(model, "unhashed", frozenset())
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key in skip:
            continue
        child = getattr(model, key, None)
        if isinstance(child, BaseModel) and isinstance(value, dict):
            value = _drop_unhashed(child, value)
        out[key] = value
    return out


def settings_hash(settings: Settings) -> str:
    """A short, stable hash of everything in `settings` that shapes the output."""
    canonical = json.dumps(settings.hashed_view(), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def load_config_file(path: Path | None) -> dict[str, Any]:
    """Read a YAML or TOML config file into a dict; any problem is a one-line UserError."""
    if path is None:
        return {}
    path = Path(path)
    if not path.is_file():
        raise UserError(f"config file not found: {path}")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot read config file {path}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise UserError(f"config file {path} is not UTF-8 text (byte {exc.start} cannot be decoded)") from None
    try:
        if path.suffix.lower() == ".toml":
            if sys.version_info >= (3, 11):
                import tomllib
            else:  # pragma: no cover - exercised on 3.10 only
                import tomli as tomllib
            data = tomllib.loads(text)
        else:
            import yaml

            data = yaml.safe_load(text)
    except Exception as exc:  # parser errors differ by library; all mean the same to the user
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UserError(f"config file {path} is not valid {_kind(path)}: {first}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UserError(f"config file {path} must hold a mapping of settings, not {type(data).__name__}")
    return data


def _kind(path: Path) -> str:
    return "TOML" if path.suffix.lower() == ".toml" else "YAML"


def resolve_settings(
    model: type[S],
    file_data: dict[str, Any],
    overrides: dict[str, Any],
    *,
    known_sections: frozenset[str] = frozenset(),
    flag_names: dict[str, str] | None = None,
) -> S:
    """Build `model` from the config file's shared keys and section, then explicit flag values.

    Flags override the file; the file overrides the model's defaults. Nested mappings (such as
    `teacher:`) merge key by key, so a flag like `--teacher-url` keeps the file's teacher model.
    `flag_names` (a field's dotted path -> its flag) lets an error name the flag too.
    """
    stray = [k for k in file_data if k not in SHARED_KEYS and k not in known_sections]
    if stray:
        raise UserError(
            f"unknown key in config file: {stray[0]!r} (expected one of: "
            f"{', '.join(sorted(SHARED_KEYS | known_sections))})"
        )
    merged: dict[str, Any] = {k: v for k, v in file_data.items() if k in SHARED_KEYS and k in model.model_fields}
    section = file_data.get(model.section, {}) if model.section else {}
    if section is None:
        section = {}
    if not isinstance(section, dict):
        raise UserError(f"config section {model.section!r} must be a mapping")
    merged = _deep_merge(merged, section)
    merged = _deep_merge(merged, {k: v for k, v in overrides.items() if v is not None})
    try:
        return model.model_validate(merged)
    except ValidationError as exc:
        raise UserError(describe_validation_error(exc, model.section, flag_names)) from None


def _deep_merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def describe_validation_error(exc: ValidationError, section: str = "", flag_names: dict[str, str] | None = None) -> str:
    """The first validation problem as one line: which setting (and flag), what is wrong, what was given."""
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err.get("loc", ()))
    name = f"{section}.{where}" if section and where else (where or section or "settings")
    flag = (flag_names or {}).get(where)
    message = err.get("msg", "invalid value")
    if err.get("type") == "extra_forbidden":
        return f"unknown setting {name!r}"
    given = err.get("input")
    shown = "" if isinstance(given, dict) else f" (got {given!r})"
    return f"invalid setting {name!r}{f' ({flag})' if flag else ''}: {message}{shown}"
