"""Every number a setting holds is finite and in range: a walk over every settings model feeds
inf, NaN and huge values to each numeric field and expects a validation error there, and the CLI
turns them into one line naming the flag (exit 2)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import typing

import pytest
from pydantic import BaseModel, ValidationError

import synthgen
from synthgen.settings.base import MAX_MAGNITUDE, MAX_SECONDS


def _settings_modules() -> list[str]:
    """Every module that declares settings: `settings.py` (or `*_settings.py`) beside its owner,
    and the shared pieces in synthgen.settings."""
    names = []
    for info in pkgutil.walk_packages(synthgen.__path__, "synthgen."):
        leaf = info.name.rsplit(".", 1)[-1]
        if leaf == "settings" or leaf.endswith("_settings") or info.name.startswith("synthgen.settings."):
            names.append(info.name)
    return names


def _models() -> list[type[BaseModel]]:
    found = {}
    for name in _settings_modules():
        module = importlib.import_module(name)
        for obj in vars(module).values():
            if inspect.isclass(obj) and issubclass(obj, BaseModel) and obj.__module__ == module.__name__:
                found[f"{name}.{obj.__qualname__}"] = obj
    return [found[k] for k in sorted(found)]


def _kinds(annotation) -> set[type]:
    """The scalar types a field annotation holds (list[int] -> {int, list})."""
    out = set()
    for arg in typing.get_args(annotation) or ():
        out |= _kinds(arg)
    origin = typing.get_origin(annotation)
    if origin in (list, tuple, dict, set):
        out.add(origin)
    if annotation in (int, float):
        out.add(annotation)
    return out


def _hostile(name: str, kinds: set[type]) -> list:
    """Values each numeric field must refuse, shaped like the field."""
    huge = (MAX_SECONDS if name.endswith("_s") and not name.endswith("_per_s") else MAX_MAGNITUDE) * 10
    scalars = [float("inf"), float("-inf"), float("nan"), 1e309] if float in kinds else []
    scalars += [huge] if kinds & {int, float} else []
    if dict in kinds:
        return [{"x": (v, v)} for v in scalars]
    if list in kinds or tuple in kinds:
        return [[v] for v in scalars]
    return scalars


CASES = [
    pytest.param(model, name, value, id=f"{model.__name__}.{name}={value!r}")
    for model in _models()
    for name, field in model.model_fields.items()
    for value in _hostile(name, _kinds(field.annotation))
]


def test_the_walk_sees_the_numeric_settings():
    names = {(p.values[0].__name__, p.values[1]) for p in CASES}
    assert ("TrainSettings", "learning_rate") in names and ("LLMSettings", "backoff_initial_s") in names
    assert ("PlanSettings", "teacher_prompt_tokens") in names and ("RoleSettings", "timeout_s") in names
    assert len(CASES) > 300


@pytest.mark.parametrize(("model", "name", "value"), CASES)
def test_every_numeric_setting_refuses_inf_nan_and_huge_values(model, name, value):
    with pytest.raises(ValidationError) as caught:
        model.model_validate({name: value})
    assert any(err["loc"][:1] == (name,) for err in caught.value.errors()), caught.value


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["train", "--learning-rate", "inf"], "--learning-rate"),
        (["train", "--learning-rate", "nan"], "--learning-rate"),
        (["generate", "--llm-backoff-initial-s", "inf", "--max-outage", "2"], "--llm-backoff-initial-s"),
        (["generate", "--teacher-timeout-s", "1e309"], "--teacher-timeout-s"),
        (["eval", "--model-timeout-s", "1e12"], "--model-timeout-s"),
        (["plan", "--teacher-prompt-tokens", "1e309"], "--teacher-prompt-tokens"),
        (["plan", "--validation-jobs", "nan"], "--validation-jobs"),
        (["plan", "--teacher-tokens-per-s", "inf"], "--teacher-tokens-per-s"),
    ],
)
def test_the_cli_refuses_them_in_one_line_naming_the_flag(cli, args, flag):
    rc, out, err = cli(*args)
    assert rc == 2, err
    assert len(err.strip().splitlines()) == 1 and flag in err and "Traceback" not in err
