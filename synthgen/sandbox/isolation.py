"""How a worker starts and what it can see: the isolation levels, the libraries bound in, the command.

Two levels; `choose()` probes them by running a job in a real zygote (SandboxPool's probe):

  bwrap         the real sandbox. The zygote runs inside bubblewrap as uid 65534 with an empty
                environment: every namespace unshared (no network, own pids), only /usr, the
                zygote's own folder and the libraries below mounted, read-only; each job's child
                gets fresh pid, user, mount and IPC namespaces, a fresh tmpfs /tmp, no
                capabilities and a seccomp filter (seccomp.py).
  rlimits-only  a development fallback where bubblewrap is missing: resource limits and a private
                temporary folder, NOTHING ELSE. Code under test runs as this user, can read and
                write whatever this user can, and can reach the network. Refused unless the caller
                passes allow_unsafe=True, and then loudly warned about.

Libraries (`sandbox.libraries`, numpy by default, as on contest judges): this environment's copy
when the sandbox interpreter has the same Python major.minor and uid 65534 can read it (bound
read-only at the same path, with its `NAME.libs`), else the sandbox interpreter's own copy
(Debian's python3-numpy), else missing in the sandbox, with a warning. Math libraries run one
thread (THREADS_ENV), as the graders set it: a job's CPU time is its own.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import logging
import os
import select
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from synthgen.errors import UserError

LEVELS = ("bwrap", "rlimits-only")
SANDBOX_UID = SANDBOX_GID = 65534  # nobody / nogroup
PROBE_TIMEOUT_S = 30.0
THREADS_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
_HERE = Path(__file__).resolve().parent
_log = logging.getLogger("synthgen.sandbox")
# What the zygote's folder holds (bound read-only at /sb in the sandbox).
SANDBOX_MODULES = ("zygote.py", "child.py", "seccomp.py", "contest_runner.py", "values.py")
# Run by the sandbox interpreter (with its `site`): its version and where its own copies of the names are.
_ASK = (
    "import importlib.util, json, sys\n"
    "found = {}\n"
    "for name in sys.argv[1:]:\n"
    "    spec = importlib.util.find_spec(name)\n"
    "    if spec and spec.submodule_search_locations:\n"
    "        found[name] = list(spec.submodule_search_locations)[0]\n"
    "print(json.dumps({'version': sys.version_info[:2], 'found': found}))\n"
)


class SandboxUnavailable(UserError, RuntimeError):
    """No acceptable isolation level works here (the message says why, level by level). A UserError
    (one line, exit code 2 in the CLI): the fix is on the machine (install bubblewrap), not in the code."""


@dataclass
class Libraries:
    """Where each wanted library comes from: folders to bind and the import path to add."""

    binds: list[str] = field(default_factory=list)
    path: list[str] = field(default_factory=list)
    found: dict[str, str] = field(default_factory=dict)  # name -> package folder
    missing: dict[str, str] = field(default_factory=dict)  # name -> why


def find_libraries(python: str, names: tuple[str, ...]) -> Libraries:
    """Resolve `names` for the sandbox interpreter `python`; a warning for each one it will lack."""
    out = Libraries()
    if not names:
        return out
    try:
        done = subprocess.run([python, "-c", _ASK, *names], capture_output=True, timeout=60, env={}, check=False)
        own = json.loads(done.stdout or b"{}")
    except (OSError, subprocess.SubprocessError, ValueError):
        own = {}
    same_abi = own.get("version") == list(sys.version_info[:2])
    for name in names:
        here, theirs = _here(name), own.get("found", {}).get(name)
        if here and same_abi and _world_readable(here):
            folder = here
            out.binds += [p for p in (here, os.path.join(os.path.dirname(here), f"{name}.libs")) if os.path.isdir(p)]
        elif theirs and _world_readable(theirs):
            folder = theirs
            out.binds += [] if os.path.realpath(theirs).startswith("/usr/") else [theirs]
        else:
            ours = "not readable by other users" if same_abi else "for Python {}.{}".format(*sys.version_info)
            why = f"; this environment's copy is {ours}" if here else ""
            out.missing[name] = f"not installed for the sandbox interpreter{why} ({python})"
            _log.warning("sandbox: %s is not importable in the sandbox (%s)", name, out.missing[name])
            continue
        out.found[name] = folder
        if os.path.dirname(folder) not in out.path:
            out.path.append(os.path.dirname(folder))
    return out


def _here(name: str) -> str | None:
    """This environment's copy of package `name`, or None."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return os.path.realpath(list(spec.submodule_search_locations)[0])


def _world_readable(folder: str) -> bool:
    """Whether uid 65534 can read `folder` and reach it (it and every parent searchable by others)."""
    path = Path(os.path.realpath(folder))
    try:
        readable = path.stat().st_mode & stat.S_IROTH
        return bool(readable) and all(p.stat().st_mode & stat.S_IXOTH for p in (path, *path.parents))
    except OSError:
        return False


@dataclass
class Plan:
    """How to start zygotes: the level, the interpreter, the folder holding zygote.py, the libraries."""

    level: str
    python: str
    sandbox_dir: str
    libraries: Libraries = field(default_factory=Libraries)

    def command(self, seed: int, preload: tuple[str, ...] = ()) -> tuple[list[str], dict]:
        """argv and extra Popen keyword arguments for one zygote with this hash seed (`preload`:
        libraries it imports before forking any child)."""
        env = {"PYTHONHASHSEED": str(seed), "PYTHONUTF8": "1", **THREADS_ENV}
        if self.libraries.path:
            env["PYTHONPATH"] = os.pathsep.join(self.libraries.path)
        if self.level == "rlimits-only":
            zygote = os.path.join(self.sandbox_dir, "zygote.py")
            return [self.python, "-S", "-s", "-B", zygote, "unsafe", str(seed), *preload], {"env": env, "cwd": "/"}
        argv = [shutil.which("bwrap") or "bwrap", "--unshare-all", "--die-with-parent", "--new-session"]
        argv += ["--hostname", "sandbox", "--ro-bind", "/usr", "/usr"]
        for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
            if os.path.islink(top):
                argv += ["--symlink", os.readlink(top), top]
            elif os.path.isdir(top):
                argv += ["--ro-bind", top, top]
        for path in _prefix_binds(self.python) + self.libraries.binds:
            argv += ["--ro-bind", path, path]
        argv += ["--proc", "/proc", "--dev", "/dev", "--dir", "/tmp", "--ro-bind", self.sandbox_dir, "/sb"]
        argv += ["--chdir", "/", "--clearenv"]
        argv += [part for name, value in env.items() for part in ("--setenv", name, value)]
        argv += ["--remount-ro", "/dev", "--remount-ro", "/"]  # "/" last, or later mounts fail
        argv += [self.python, "-S", "-s", "-B", "/sb/zygote.py", "bwrap", str(seed), *preload]
        popen: dict = {"env": {}, "cwd": "/"}
        if os.geteuid() == 0:  # bwrap started as root would keep capabilities: drop to nobody
            popen.update(user=SANDBOX_UID, group=SANDBOX_GID, extra_groups=[])
        return argv, popen


def _prefix_binds(python: str) -> list[str]:
    """The folder an interpreter outside /usr needs inside bwrap: its prefix (PREFIX/bin/python)."""
    real = os.path.realpath(python)
    return [] if real.startswith("/usr/") else [os.path.dirname(os.path.dirname(real))]


def default_python() -> str:
    """The interpreter for zygotes: the system's /usr/bin/python3 (readable by every user), else this one."""
    system = "/usr/bin/python3"
    return system if os.access(system, os.X_OK) else os.path.realpath(sys.executable)


def usable_cpus() -> int:
    """CPUs this process may run on (respects taskset and cpusets, unlike os.cpu_count())."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def prepare_sandbox_dir() -> str:
    """A fresh folder with the zygote's modules (SANDBOX_MODULES), readable by uid 65534. Its name
    carries our pid: folders of processes that no longer exist (a host killed with SIGKILL cannot
    clean up) are removed here."""
    base = "/tmp" if os.path.isdir("/tmp") else tempfile.gettempdir()
    _remove_stale_dirs(base)
    path = tempfile.mkdtemp(prefix=f"synthgen-sandbox-{os.getpid()}-", dir=base)
    os.chmod(path, 0o755)
    for name in SANDBOX_MODULES:
        shutil.copyfile(_HERE / name, os.path.join(path, name))
        os.chmod(os.path.join(path, name), 0o644)
    return path


def _remove_stale_dirs(base: str) -> None:
    """Remove sandbox folders of pools whose process is gone, and any bwrap still naming one: a
    host killed while bwrap was starting leaves bwrap's child blocked forever (before it has
    armed --die-with-parent); its command line holds the folder's unique name."""
    stale = []
    for name in os.listdir(base):
        parts = name.split("-")
        if len(parts) == 4 and parts[:2] == ["synthgen", "sandbox"] and parts[2].isdigit():
            try:
                os.kill(int(parts[2]), 0)
            except ProcessLookupError:
                stale.append(os.path.join(base, name))
            except OSError:
                pass
    for pid in filter(str.isdigit, os.listdir("/proc") if stale else []):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                argv = fh.read().split(b"\0")
            if argv[0].endswith(b"bwrap") and any(path.encode() in argv for path in stale):
                os.kill(int(pid), signal.SIGKILL)
        except OSError:
            pass
    for path in stale:
        shutil.rmtree(path, ignore_errors=True)


def choose(isolation: str, allow_unsafe: bool, python: str | None, libraries: tuple[str, ...], probe) -> Plan:
    """A Plan for `isolation` ("auto": the strongest level that works, as `probe(plan)` finds:
    None, or why not); SandboxUnavailable if none does."""
    if isolation != "auto" and isolation not in LEVELS:
        raise SandboxUnavailable(f"isolation {isolation!r} is unavailable: the levels are auto, {', '.join(LEVELS)}")
    python = python or default_python()
    if not os.path.exists(python):
        raise SandboxUnavailable(f"sandbox isolation unavailable: no interpreter at {python}")
    found = find_libraries(python, tuple(libraries))
    reasons: list[str] = []
    sandbox_dir = prepare_sandbox_dir()
    try:
        for level in LEVELS if isolation == "auto" else [isolation]:
            plan = Plan(level, python, sandbox_dir, found)
            if level == "rlimits-only" and not allow_unsafe:
                why = "refused: no isolation (accept it with allow_unsafe=True, on the command line --allow-unsafe)"
            elif level == "bwrap" and not shutil.which("bwrap"):
                why = "bubblewrap is not installed (Debian: apt-get install bubblewrap)"
            else:
                why = probe(plan)
            if why is None:
                if level == "rlimits-only":
                    message = (
                        "SANDBOX RUNS WITHOUT ISOLATION (rlimits only): code under test can read and write "
                        "whatever this user can and reach the network. Only for trusted code."
                    )
                    _log.warning(message)
                    warnings.warn(message, RuntimeWarning, stacklevel=3)
                return plan
            reasons.append(f"{level}: {why}")
        raise SandboxUnavailable("sandbox isolation unavailable here: " + "; ".join(reasons))
    except BaseException:
        shutil.rmtree(sandbox_dir, ignore_errors=True)
        raise


class WorkerGone(Exception):
    """The zygote died, broke the protocol or missed a deadline: it cannot be trusted any more."""


class Zygote:
    """One started zygote (zygote.py): its process, the socket to it and its stderr (for errors)."""

    def __init__(self, plan: Plan, seed: int, preload: tuple[str, ...] = ()):
        argv, popen = plan.command(seed, preload)
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 (kept as long as the zygote lives)
        self.proc: subprocess.Popen | None = None
        try:
            self.proc = subprocess.Popen(
                argv, stdin=theirs, stdout=subprocess.DEVNULL, stderr=self.log, start_new_session=True, **popen
            )
        except OSError as exc:
            self.close()
            raise WorkerGone(f"could not start a worker: {exc}") from None
        finally:
            theirs.close()

    def wait_ready(self) -> None:
        if not select.select([self.sock], [], [], PROBE_TIMEOUT_S)[0]:
            raise WorkerGone("sandbox worker did not start in time")
        if self.message()[0] != b"R":
            raise WorkerGone("sandbox worker broke the protocol at start-up")

    def message(self) -> tuple[bytes, dict]:
        """The zygote's next message: its kind and its JSON body (WorkerGone at its end)."""
        try:
            msg = self.sock.recv(1 << 12)
        except OSError:  # (ECONNRESET when it ended with our messages unread)
            msg = b""
        if not msg:
            words = self.last_words()
            ended = "the sandbox's zygote (the template of every job's child) ended"
            raise WorkerGone(f"{ended}: {words}" if words else ended)
        try:
            return msg[:1], json.loads(msg[1:])
        except ValueError:
            raise WorkerGone("sandbox worker broke the protocol") from None

    def last_words(self) -> str:
        """The last line the zygote wrote to its stderr (most failures explain themselves there)."""
        self.log.seek(max(0, self.log.seek(0, os.SEEK_END) - 4096))
        lines = self.log.read().decode("utf-8", "replace").strip().splitlines()
        return lines[-1][:300] if lines else ""

    def close(self) -> None:
        """Kill the zygote's whole process group (bwrap killed mid-start-up would leave its child
        blocked for ever) and reap it; its jobs die with it (bwrap --die-with-parent, pid namespaces)."""
        self.sock.close()
        if self.proc is not None:
            with contextlib.suppress(OSError):
                os.killpg(self.proc.pid, signal.SIGKILL)  # (start_new_session: it leads its own group)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=10)
        self.log.close()
