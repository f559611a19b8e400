"""Settings machinery shared by every stage: strict models, file loading, merging, a stable hash."""

from __future__ import annotations

import contextvars
import hashlib
import json
import math
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError, ValidationInfo, field_validator

from synthgen.envs import ENVIRONMENTS
from synthgen.errors import UserError

# The environment names, read from the registry (synthgen.envs.ENVIRONMENTS, which imports nothing).
ENV_NAMES: tuple[str, ...] = tuple(ENVIRONMENTS)

# Keys a config file may hold at the top level, shared by every stage that has such a field.
SHARED_KEYS: frozenset[str] = frozenset({"run_dir", "seed"})
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
    if isinstance(value, (list, tuple, set, frozenset, dict)):
        for item in value.values() if isinstance(value, dict) else value:
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
    panel: str | None = None,
) -> dict[str, Any]:
    """How a settings field appears on the command line, for `Field(json_schema_extra=cli(...))`.

    By default a field is a flag named after it (`max_in_flight` -> `--max-in-flight`; in a section,
    with its prefix: `dedup.threshold` -> `--dedup-threshold`). `flag` renames it (`--input`, or in a
    section the part after the prefix: `url` -> `--teacher-url`); `argument` makes it positional;
    `envvar` also reads it from the environment (Slurm's array variables); `hidden` keeps it to config
    files (secrets, structures); `as_text` takes a structured field as one string its validator
    parses; `panel` names its `--help` panel (a nested section's: every flag of the section)."""
    spec = dict(
        flag=flag, argument=argument, envvar=envvar, hidden=hidden, metavar=metavar, as_text=as_text, panel=panel
    )
    return {"cli": {k: v for k, v in spec.items() if v not in (None, False)}}


class Settings(Section):
    """Base of every stage's settings: unknown keys are errors, values are validated on assignment.

    `unhashed` names fields that change how a run executes, not what it produces (worker counts,
    shard index, progress): left out of `settings_hash`, so every shard of a Slurm array, and a
    resumed run with more workers, share one hash."""

    model_config = ConfigDict(validate_assignment=True)  # extra="forbid" comes from Section
    section: ClassVar[str] = ""
    unhashed: ClassVar[frozenset[str]] = frozenset()

    def hashed_view(self) -> dict[str, Any]:
        return _drop_unhashed(self, self.model_dump(mode="json"))

    def settings_hash(self) -> str:
        """A short, stable hash of everything in these settings that shapes the output."""
        canonical = json.dumps(self.hashed_view(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]


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


# The settings the running command was resolved to (set by the CLI), so that a message deep in a
# stage can say what changed since an earlier run; a context variable follows asyncio tasks.
_COMMAND_SETTINGS: contextvars.ContextVar[Settings | None] = contextvars.ContextVar("command_settings", default=None)


def set_command_settings(settings: Settings | None) -> None:
    _COMMAND_SETTINGS.set(settings)


def command_settings(digest: str | None = None) -> Settings | None:
    """The command line's settings; with `digest`, only if they hash to it (a demo runs several stages)."""
    found = _COMMAND_SETTINGS.get()
    if found is None or (digest is not None and found.settings_hash() != digest):
        return None
    return found


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
    toml = path.suffix.lower() == ".toml"
    try:
        if toml:
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
        raise UserError(f"config file {path} is not valid {'TOML' if toml else 'YAML'}: {first}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UserError(f"config file {path} must hold a mapping of settings, not {type(data).__name__}")
    return data


@dataclass(frozen=True)
class SectionKeys:
    """What one command's config section may say besides its model's fields and flag names (the CLI
    derives it from its command table): `aliases`, the command's flags that set several settings
    (`base_url` -> both roles' URLs), and `llm`, where each key of the shared `llm:` section goes in
    this command's settings (`base_url`, `model`, `api_key`, `teacher`, `student`, `client`)."""

    model: type[Settings]
    aliases: dict[str, tuple[str, ...]] = field(default_factory=dict)
    llm: dict[str, tuple[str, ...]] = field(default_factory=dict)


# The shared section every command reads for its LLM roles, and its own keys besides the client's.
LLM_SECTION = "llm"
LLM_ROLE_KEYS = ("base_url", "model", "api_key")
LLM_ROLES = ("teacher", "student")


@dataclass
class ConfigFile:
    """The `--config` file of one command line, read once, and the sections it may hold (one per
    command with settings). `keys` (section -> SectionKeys) lets a section name a setting by its flag
    (`teacher_url`, `max-in-flight`) and the shared `llm:` section reach every command, and every key
    is checked when the file is read, so that a typo in any section is caught by any command."""

    path: Path | None = None
    sections: frozenset[str] = frozenset()
    keys: dict[str, SectionKeys] = field(default_factory=dict)
    llm_models: tuple[type[BaseModel], type[BaseModel]] | None = None  # (a role, the client) for `llm:` keys
    _data: dict[str, Any] | None = field(default=None, repr=False)

    def data(self) -> dict[str, Any]:
        if self._data is None:
            data = load_config_file(self.path)
            check_sections(data, self.sections, self.keys)
            try:
                if self.llm_models:
                    check_llm_section(data, *self.llm_models)
                for name, keys in self.keys.items():
                    section_values(keys.model, _section_dict(data, name), keys, name)
            except UserError as exc:
                raise UserError(f"{exc}{f' in {self.path}' if self.path else ''}") from None
            self._data = data
        return self._data

    def resolve(self, model: type[S], overrides: dict[str, Any], flag_names: dict[str, str] | None = None) -> S:
        """`model` as this file and the given flag values set it (defaults < file < flags)."""
        return resolve_settings(model, self.data(), overrides, flag_names=flag_names, keys=self.keys.get(model.section))

    def settings(self, model: type[S]) -> S:
        """`model` as the file sets it (defaults < file), for commands that read another's settings."""
        return self.resolve(model, {})


def did_you_mean(word: str, candidates: Any) -> str:
    """` (did you mean 'x'?)` for the closest candidate, or "" when none is close."""
    import difflib

    close = difflib.get_close_matches(str(word), sorted(set(candidates)), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_sections(
    file_data: dict[str, Any], known_sections: frozenset[str], keys: dict[str, SectionKeys] | None = None
) -> None:
    """Every top-level key of a config file is a shared key, `llm` or a known section, else a UserError
    that suggests the closest name, or says which sections hold a command's setting (`attempts`)."""
    known = SHARED_KEYS | known_sections | ({LLM_SECTION} if keys else set())
    stray = [k for k in file_data if k not in known]
    if not stray or not known_sections:
        return
    key = stray[0]
    holders = [name for name, section in (keys or {}).items() if str(key).replace("-", "_") in key_names(section.model)]
    if holders:
        raise UserError(
            f"unknown key in config file: {key!r} at the top level; it is a setting of "
            f"{', '.join(holders)}: put it in that section (e.g. `{holders[0]}: {{{key}: ...}}`)"
        )
    raise UserError(
        f"unknown key in config file: {key!r}{did_you_mean(key, known)} (expected one of: {', '.join(sorted(known))})"
    )


# -- config keys: a field's name, or its flag's name, dashes or underscores --------------------------
def flag_name(name: str, spec: dict[str, Any], flag_prefix: str = "") -> str:
    """The flag of a field (`max_in_flight` -> `--max-in-flight`; in a section, `--teacher-url`)."""
    own = spec.get("flag") or name.replace("_", "-")
    return own if own.startswith("--") else f"--{flag_prefix}{own}"


def cli_spec(info: Any) -> dict[str, Any]:
    """What a field's `cli(...)` says (see `cli`); {} when it says nothing."""
    extra = info.json_schema_extra
    return extra.get("cli", {}) if isinstance(extra, dict) else {}


def without_none(annotation: Any) -> Any:
    """`X` for `X | None`; any other annotation as it is."""
    from typing import Union, get_args, get_origin

    if get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        return args[0] if len(args) == 1 else annotation
    return annotation


def nested_model(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model a field holds (`TeacherSettings`, `X | None`), or None."""
    annotation = without_none(annotation)
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def flag_keys(
    model: type[BaseModel], prefix: tuple[str, ...] = (), flag_prefix: str = ""
) -> dict[str, tuple[str, ...]]:
    """Every setting's flag name as a config key (`--teacher-url` -> `teacher_url`) -> its path."""
    out: dict[str, tuple[str, ...]] = {}
    for name, info in model.model_fields.items():
        path = (*prefix, name)
        flag = flag_name(name, cli_spec(info), flag_prefix)
        nested = nested_model(info.annotation)
        if nested is not None:
            out.update(flag_keys(nested, path, f"{flag[2:]}-"))
        else:
            out[flag[2:].replace("-", "_")] = path
    return out


def key_names(model: type[BaseModel]) -> dict[str, tuple[str, ...]]:
    """Every key a section may use at its top level for a setting of `model`, underscored, -> the
    setting's path: its flag's name, and the field's own name (which wins where the two collide)."""
    return {**flag_keys(model), **{name: (name,) for name in model.model_fields}}


def _local_names(model: type[BaseModel]) -> dict[str, str]:
    """The keys a nested mapping (`teacher: {...}`) may use: field names and their flags' own part."""
    out: dict[str, str] = {}
    for name, info in model.model_fields.items():
        own = (cli_spec(info).get("flag") or name).lstrip("-").replace("-", "_")
        out.setdefault(own, name)
    out.update({name: name for name in model.model_fields})
    return out


def section_values(
    model: type[BaseModel], section: dict[str, Any], keys: SectionKeys | None = None, where: str = ""
) -> dict[str, Any]:
    """A config section as the nested dict `model` validates: flag names and dashed names become
    field paths, alias keys (`base_url`) are applied under the explicit ones; an unknown key is a
    UserError that suggests the closest name."""
    flat = flag_keys(model)
    aliases = {k.replace("-", "_"): v for k, v in (keys.aliases if keys else {}).items()}
    low: dict[str, Any] = {}
    high: dict[str, Any] = {}
    for key, value in section.items():
        norm = str(key).replace("-", "_")
        # `dedup: false` is the flag --dedup (dedup.enabled); `dedup: {...}` is the section
        flag_of_section = norm in flat and len(flat[norm]) > 1 and not isinstance(value, dict)
        if norm in model.model_fields and not flag_of_section:
            put_path(high, (norm,), _nested_values(model, norm, value, f"{where}.{norm}"))
        elif norm in flat:
            path = flat[norm]
            put_path(high, path, _nested_values(model_at(model, path[:-1]), path[-1], value, f"{where}.{norm}"))
        elif norm in aliases:
            for path in aliases[norm]:
                put_path(low, tuple(path.split(".")), value)
        else:
            raise UserError(_unknown(key, where, [*flat, *model.model_fields, *aliases]))
    return _deep_merge(low, high)


def _unknown(key: Any, where: str, names: Any) -> str:
    shown = f"{where}.{key}" if where else str(key)
    return f"unknown setting {shown!r}{did_you_mean(str(key).replace('-', '_'), names)}"


def _nested_values(model: type[BaseModel], name: str, value: Any, where: str) -> Any:
    """A nested section's mapping with its keys normalised (`teacher: {url: ...}`)."""
    nested = nested_model(model.model_fields[name].annotation)
    if nested is None or not isinstance(value, dict):
        return value
    local = _local_names(nested)
    out: dict[str, Any] = {}
    for key, sub in value.items():
        norm = str(key).replace("-", "_")
        if norm not in local:
            raise UserError(_unknown(key, where, local))
        out[local[norm]] = _nested_values(nested, local[norm], sub, f"{where}.{norm}")
    return out


def put_path(target: dict[str, Any], path: tuple[str, ...] | list[str], value: Any) -> None:
    """Set `value` at `path` in nested dicts, merging it into a mapping already there."""
    for key in path[:-1]:
        child = target.get(key)
        if not isinstance(child, dict):
            child = target[key] = {}
        target = child
    if isinstance(value, dict) and isinstance(target.get(path[-1]), dict):
        value = _deep_merge(target[path[-1]], value)
    target[path[-1]] = value


def _section_dict(file_data: dict[str, Any], name: str) -> dict[str, Any]:
    section = file_data.get(name, {})
    if section is None:
        return {}
    if not isinstance(section, dict):
        raise UserError(f"config section {name!r} must be a mapping of settings, not {type(section).__name__}")
    return section


def llm_values(file_data: dict[str, Any], keys: SectionKeys | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The shared `llm:` section as one command's settings: (URL and model for every role, the rest).

    The first is applied under the second (a role's own `url` wins over the shared `base_url`)."""
    llm = _section_dict(file_data, LLM_SECTION)
    low: dict[str, Any] = {}
    high: dict[str, Any] = {}
    if not llm or keys is None:
        return low, high
    for key, value in llm.items():
        norm = str(key).replace("-", "_")
        if norm in LLM_ROLE_KEYS:
            for path in keys.llm.get(norm, ()):
                put_path(low, tuple(path.split(".")), value)
            continue
        if norm in LLM_ROLES:
            if value is not None and not isinstance(value, dict):
                raise UserError(f"config section 'llm.{norm}' must be a mapping (of the {norm}'s settings)")
            targets = [(tuple(p.split(".")), value or {}) for p in keys.llm.get(norm, ())]
        else:
            targets = [((*p.split("."), norm), value) for p in keys.llm.get("client", ())]
        for path, given in targets:
            parent = model_at(keys.model, path[:-1])
            name = _local_names(parent).get(path[-1], path[-1])
            put_path(high, (*path[:-1], name), _nested_values(parent, name, given, f"llm.{norm}"))
    return low, high


def model_at(model: type[BaseModel], path: tuple[str, ...]) -> type[BaseModel]:
    """The nested settings model at `path` (a field's parent section)."""
    for name in path:
        model = nested_model(model.model_fields[name].annotation) or model
    return model


def check_llm_section(file_data: dict[str, Any], role_model: type[BaseModel], client_model: type[BaseModel]) -> None:
    """Every key of the shared `llm:` section is a role key, a role or a client setting, else a UserError."""
    llm = _section_dict(file_data, LLM_SECTION)
    client = _local_names(client_model)
    roles = _local_names(role_model)
    for key, value in llm.items():
        norm = str(key).replace("-", "_")
        if norm in LLM_ROLES:
            for sub in (value or {}) if isinstance(value, dict) else {}:
                if str(sub).replace("-", "_") not in roles:
                    raise UserError(_unknown(sub, f"llm.{norm}", roles))
        elif norm not in LLM_ROLE_KEYS and norm not in client:
            raise UserError(_unknown(key, LLM_SECTION, [*LLM_ROLE_KEYS, *LLM_ROLES, *client]))


def resolve_settings(
    model: type[S],
    file_data: dict[str, Any],
    overrides: dict[str, Any],
    *,
    flag_names: dict[str, str] | None = None,
    keys: SectionKeys | None = None,
) -> S:
    """Build `model` from, lowest first, its defaults and the config file's shared keys, the shared
    `llm:` section, the model's own section, then explicit flag values. Nested mappings (`teacher:`)
    merge key by key, so `--teacher-url` keeps the file's teacher model. A section's keys may be field
    or flag names, dashed or not (`section_values`); `flag_names` (a field's dotted path -> its flag)
    lets an error name the flag too."""
    merged: dict[str, Any] = {k: v for k, v in file_data.items() if k in SHARED_KEYS and k in model.model_fields}
    section = _section_dict(file_data, model.section) if model.section else {}
    llm_low, llm_high = llm_values(file_data, keys)
    merged = _deep_merge(_deep_merge(merged, llm_low), llm_high)
    merged = _deep_merge(merged, section_values(model, section, keys, model.section))
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
    if isinstance(given, dict):  # a check across settings (band_low > band_high): name them by their flags
        return f"invalid settings of {name!r}: {_with_flags(message.removeprefix('Value error, '), where, flag_names)}"
    return f"invalid setting {name!r}{f' ({flag})' if flag else ''}: {message} (got {given!r})"


def _with_flags(message: str, where: str, flag_names: dict[str, str] | None) -> str:
    """`band_low (0.5) exceeds band_high` -> `--band-low (0.5) exceeds --band-high`: each setting a
    message names (with an underscore, or followed by its value) as the flag a user types."""
    import re

    prefix = f"{where}." if where else ""
    local = {path[len(prefix) :]: flag for path, flag in (flag_names or {}).items() if path.startswith(prefix)}

    def swap(match: re.Match[str]) -> str:
        word, after = match.group(1), match.group(2)
        named = "_" in word or "." in word or re.match(r" [(\d]", after)
        return local[word] if named and word in local else word

    return re.sub(r"(?<![\w-])([a-z][a-z0-9_]*(?:\.[a-z0-9_]+)*)\b(?=(.?.?))", swap, message)
