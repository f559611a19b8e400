"""Libraries importable in the sandbox (numpy by default): where they come from, how they get in.

Contest judges and the official graders' environments have numpy; solutions import it. The
sandbox runs its own interpreter (`sandbox.python`, /usr/bin/python3 by default) as uid 65534,
without `site`, with only /usr and its own folder visible. For each name in `sandbox.libraries`:

  1. this environment's copy (what `import NAME` finds here, e.g. the venv's numpy), when its
     compiled modules fit the sandbox interpreter (the same Python major.minor) and uid 65534
     can read it: the package folder (and its `NAME.libs` folder of bundled shared libraries)
     is bound read-only into the sandbox at the same path, and its parent goes on PYTHONPATH;
  2. else the sandbox interpreter's own copy (Debian's python3-numpy in /usr/lib/python3/
     dist-packages, which .ci/sandbox-setup.sh installs): its parent goes on PYTHONPATH;
  3. else the library is missing in the sandbox, said once as a warning (programs importing it
     fail with ModuleNotFoundError, as they would on a judge without it).

Math libraries run one thread (OPENBLAS/OMP/MKL_NUM_THREADS=1), as the graders set it: a job's
CPU time is its own.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import stat
import subprocess
import sys
from dataclasses import dataclass, field

THREADS_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
_log = logging.getLogger("synthgen.sandbox")
_cache: dict[tuple, Libraries] = {}
_ASK = (
    "import importlib.util, json, sys\n"
    "out = {'version': list(sys.version_info[:2]), 'found': {}}\n"
    "for name in sys.argv[1:]:\n"
    "    try:\n"
    "        spec = importlib.util.find_spec(name)\n"
    "    except Exception:\n"
    "        spec = None\n"
    "    if spec is not None and spec.submodule_search_locations:\n"
    "        out['found'][name] = list(spec.submodule_search_locations)[0]\n"
    "print(json.dumps(out))\n"
)


@dataclass
class Libraries:
    """Where each wanted library comes from: folders to bind and the import path to add."""

    binds: list[str] = field(default_factory=list)
    path: list[str] = field(default_factory=list)
    found: dict[str, str] = field(default_factory=dict)  # name -> package folder
    missing: dict[str, str] = field(default_factory=dict)  # name -> why

    def env(self) -> dict[str, str]:
        env = dict(THREADS_ENV)
        if self.path:
            env["PYTHONPATH"] = os.pathsep.join(self.path)
        return env

    def key(self) -> tuple:
        return tuple(self.binds), tuple(self.path)


def find_libraries(python: str, names: tuple[str, ...]) -> Libraries:
    """Resolve `names` for the sandbox interpreter `python` (cached per process)."""
    key = (python, names)
    if key not in _cache:
        _cache[key] = _resolve(python, names)
        for name, why in _cache[key].missing.items():
            _log.warning("sandbox: %s is not importable in the sandbox (%s)", name, why)
    return _cache[key]


def _resolve(python: str, names: tuple[str, ...]) -> Libraries:
    out = Libraries()
    if not names:
        return out
    own = _ask(python, names)
    same_abi = own.get("version") == list(sys.version_info[:2])
    for name in names:
        here = _here(name)
        if here and same_abi and _world_readable(here):
            site = os.path.dirname(here)
            out.binds += [p for p in (here, os.path.join(site, f"{name}.libs")) if os.path.isdir(p)]
            _add(out.path, site)
            out.found[name] = here
        elif name in own.get("found", {}) and _world_readable(own["found"][name]):
            _add(out.path, os.path.dirname(own["found"][name]))
            out.found[name] = own["found"][name]
            if not os.path.realpath(own["found"][name]).startswith("/usr/"):
                out.binds.append(own["found"][name])
        else:
            why = "not installed for the sandbox interpreter"
            if here and not same_abi:
                why += f"; this environment's copy is for Python {sys.version_info[0]}.{sys.version_info[1]}"
            elif here:
                why += "; this environment's copy is not readable by other users"
            out.missing[name] = why + f" ({python})"
    return out


def _add(path: list[str], folder: str) -> None:
    if folder not in path:
        path.append(folder)


def _here(name: str) -> str | None:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return os.path.realpath(list(spec.submodule_search_locations)[0])


def _ask(python: str, names: tuple[str, ...]) -> dict:
    """The sandbox interpreter's version and its own copies of `names` (run with its `site`)."""
    try:
        done = subprocess.run([python, "-c", _ASK, *names], capture_output=True, timeout=60, env={}, check=False)
        return json.loads(done.stdout or b"{}")
    except (OSError, subprocess.SubprocessError, ValueError):
        return {}


def _world_readable(folder: str) -> bool:
    """Whether uid 65534 can reach and read `folder` (every parent searchable by others)."""
    path = os.path.realpath(folder)
    try:
        if not os.stat(path).st_mode & stat.S_IROTH:
            return False
        while True:
            if not os.stat(path).st_mode & stat.S_IXOTH:
                return False
            parent = os.path.dirname(path)
            if parent == path:
                return True
            path = parent
    except OSError:
        return False
