"""Command lines for tests: flags from keyword arguments, so a test names the settings it is about
and the small-run defaults live here once.

    cli(*stage("generate", run_dir, server.url, **SMALL_GENERATE, max_seeds=2))
    subprocess.run(python_m(*stage("chain", run_dir, url, attempts=4)))
"""

from __future__ import annotations

import sys
from typing import Any

# A generate (or chain) run that finishes in seconds against the scripted server.
SMALL_GENERATE: dict[str, Any] = {"attempts": 4, "turns": 2, "lineages_per_seed": 1, "progress": False}


def flags(**values: Any) -> list[str]:
    """`--name value` per keyword (underscores become dashes); True is `--name`, False `--no-name`,
    a list or tuple repeats the flag, None leaves it out."""
    out: list[str] = []
    for name, value in values.items():
        flag = "--" + name.replace("_", "-")
        if value is None:
            continue
        if value is True:
            out.append(flag)
        elif value is False:
            out.append(f"--no-{flag[2:]}")
        elif isinstance(value, (list, tuple)):
            for item in value:
                out += [flag, str(item)]
        else:
            out += [flag, str(value)]
    return out


def stage(command: str, run_dir: Any, url: str | None = None, **values: Any) -> list[str]:
    """`COMMAND --run-dir RUN_DIR [--base-url URL] FLAGS...` as strings."""
    return [command, "--run-dir", str(run_dir), *(["--base-url", url] if url else []), *flags(**values)]


def python_m(*argv: Any) -> list[str]:
    """`python -m synthgen ARGV...`, for a test that kills or signals the process."""
    return [sys.executable, "-m", "synthgen", *map(str, argv)]
