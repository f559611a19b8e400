"""`--format verifiers`: the export as an installable verifiers environment package.

    OUT/pyproject.toml                      project `synthgen-env-<run>`, needs synthgen and verifiers
    OUT/synthgen_env_<run>/__init__.py      load_environment(split="train", **kwargs)
    OUT/synthgen_env_<run>/data/train.parquet, test.parquet   (synthgen.export.formats.VERIFIERS)

`verifiers.load_environment("synthgen-env-<run>")` imports the module named after the id (dashes
to underscores) and calls its `load_environment`; ours hands the package's data folder to
`synthgen.interop.verifiers.load_environment`, which builds the environment and synthgen's rubric.
The Parquet files are package data (setuptools `package-data`), so `pip install OUT` installs them
beside the module and the environment needs nothing but the installed package.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from synthgen import __version__
from synthgen.store.files import write_text_atomic

DATA = "data"


def slug(run_name: str) -> str:
    """A run name as a package name part: lower case, letters and digits, single dashes."""
    return re.sub(r"[^a-z0-9]+", "-", run_name.lower()).strip("-") or "run"


def env_id(run_name: str) -> str:
    """The environment id that `vf-eval`, prime-rl and `verifiers.load_environment` take."""
    return f"synthgen-env-{slug(run_name)}"


def module_name(run_name: str) -> str:
    """The module verifiers imports for `env_id(run_name)`."""
    return env_id(run_name).replace("-", "_")


def data_folder(run_name: str) -> str:
    """Where the split files go, relative to OUT."""
    return f"{module_name(run_name)}/{DATA}"


def write_package(folder: Path, run_name: str, rows: int) -> list[str]:
    """Write pyproject.toml and the module (the data files are written by the caller); returns the files."""
    name, module = env_id(run_name), module_name(run_name)
    # JSON strings are TOML basic strings: a run name with quotes or backslashes stays one value.
    description = json.dumps(f"synthgen problems of run {run_name} ({rows} problems) as a verifiers environment")
    pyproject = f'''[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "{name}"
version = "{__version__}"
description = {description}
requires-python = ">=3.10"
dependencies = ["synthgen", "verifiers"]

[tool.setuptools]
packages = ["{module}"]

[tool.setuptools.package-data]
{module} = ["{DATA}/*.parquet"]
'''
    init = f'''"""The verifiers environment `{name}`: the problems of a synthgen run.

Written by `synthgen export --format verifiers` (synthgen {__version__}). Install this folder with
`pip install`, then `verifiers.load_environment("{name}", split="train")` (or "test" when the export
has a test split), `vf-eval {name}`, or a prime-rl environment entry with this id.
"""

from pathlib import Path

DATA_DIR = Path(__file__).parent / "{DATA}"


def load_environment(split: str = "train", **kwargs):
    """This export's `split` as a verifiers environment scored by synthgen's rubric (in its sandbox)."""
    from synthgen.interop.verifiers import load_environment as load

    return load(data_dir=str(DATA_DIR), split=split, **kwargs)
'''
    write_text_atomic(folder / "pyproject.toml", pyproject)
    write_text_atomic(folder / module / "__init__.py", init)
    return ["pyproject.toml", f"{module}/__init__.py"]
