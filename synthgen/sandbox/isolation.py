"""Isolation levels: which one this machine supports, and the command that starts a zygote in it.

Strongest first; `choose()` probes each by starting a real zygote (which runs a self-test job
before it says it is ready) and takes the first that works:

  bwrap         the zygote runs inside bubblewrap, started as uid 65534 with an empty environment:
                every namespace unshared (no network, own pids), only /usr and the zygote's own
                folder mounted, read-only; each job's child gets fresh pid, user, mount and IPC
                namespaces, a fresh tmpfs /tmp, no capabilities and a seccomp filter (seccomp.py).
  setuid-netns  (host root, no working bwrap) the zygote runs as root in a network namespace of its
                own; each job's child gets fresh pid, mount and IPC namespaces and a private tmpfs
                /tmp, /var/tmp and /dev/shm, switches to uid 65534, then gets a user namespace of
                its own and the same seccomp filter. The host file system stays readable wherever
                "others" may read.
  rlimits-only  resource limits and a private temporary folder only: no real isolation. Refused
                unless the caller passes allow_unsafe=True, and then loudly warned about.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from synthgen.errors import UserError
from synthgen.sandbox.libraries import THREADS_ENV, Libraries, find_libraries

LEVELS = ("bwrap", "setuid-netns", "rlimits-only")
ZYGOTE_MODE = {"bwrap": "bwrap", "setuid-netns": "setuid", "rlimits-only": "unsafe"}
SANDBOX_UID = SANDBOX_GID = 65534  # nobody / nogroup
PROBE_TIMEOUT_S = 30.0
_HERE = Path(__file__).resolve().parent
_log = logging.getLogger("synthgen.sandbox")
# What the zygote's folder holds (the zygote first: the rest are imported, so compiled beforehand).
SANDBOX_MODULES = (
    "zygote.py",
    "child.py",
    "seccomp.py",
    "contest_runner.py",
    "contest_program.py",
    "values.py",
)


class SandboxUnavailable(UserError, RuntimeError):
    """No acceptable isolation level works on this machine (the message says why, level by level).

    A UserError: the CLI reports it as one line with exit code 2, since the fix is on the
    machine (install bubblewrap, run as root) and not in the code."""


@dataclass
class Plan:
    """How to start zygotes: the level, the interpreter, and the folder holding zygote.py."""

    level: str
    python: str
    sandbox_dir: str
    extra_binds: list[str] = field(default_factory=list)
    libraries: Libraries | None = None  # packages importable in the sandbox (see find_libraries)

    def command(self, seed: int) -> tuple[list[str], dict]:
        """argv and extra Popen keyword arguments for one zygote with this hash seed."""
        mode = ZYGOTE_MODE[self.level]
        popen: dict = {"env": {}, "cwd": "/"}
        env = self.libraries.env() if self.libraries else dict(THREADS_ENV)
        if self.level == "bwrap":
            binds = self.extra_binds + (self.libraries.binds if self.libraries else [])
            argv = _bwrap_argv(self.python, self.sandbox_dir, seed, binds, env)
            if os.geteuid() == 0:  # bwrap started as root would keep capabilities: drop to nobody
                popen.update(user=SANDBOX_UID, group=SANDBOX_GID, extra_groups=[])
            return argv, popen
        popen["env"] = {"PYTHONHASHSEED": str(seed), "PYTHONUTF8": "1", **env}
        argv = [self.python, "-S", "-s", "-B", os.path.join(self.sandbox_dir, "zygote.py"), mode, str(seed)]
        if self.level == "setuid-netns":
            argv += [str(SANDBOX_UID), str(SANDBOX_GID)]
        return argv, popen


def _bwrap_argv(python: str, sandbox_dir: str, seed: int, extra_binds: list[str], env: dict) -> list[str]:
    argv = [
        shutil.which("bwrap") or "bwrap",
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--hostname",
        "sandbox",
        "--ro-bind",
        "/usr",
        "/usr",
    ]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            argv += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            argv += ["--ro-bind", top, top]
    for path in extra_binds:
        argv += ["--ro-bind", path, path]
    argv += [
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--dir",
        "/tmp",
        "--ro-bind",
        sandbox_dir,
        "/sb",
        "--chdir",
        "/",
        "--clearenv",
        "--setenv",
        "PYTHONHASHSEED",
        str(seed),
        "--setenv",
        "PYTHONUTF8",
        "1",
        *[part for name, value in env.items() for part in ("--setenv", name, value)],
        "--remount-ro",
        "/dev",
        "--remount-ro",
        "/",  # "/" last, or later mounts fail
        python,
        "-S",
        "-s",
        "-B",
        "/sb/zygote.py",
        "bwrap",
        str(seed),
    ]
    return argv


def default_python() -> str:
    """The interpreter for zygotes: the system's /usr/bin/python3 (readable by every user,
    ~13 ms to start), else the one running now."""
    system = "/usr/bin/python3"
    if os.access(system, os.X_OK):
        return system
    return os.path.realpath(sys.executable)


def usable_cpus() -> int:
    """CPUs this process may run on (respects taskset and cpusets, unlike os.cpu_count())."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def prepare_sandbox_dir() -> str:
    """A fresh world-readable folder with the zygote's stdlib-only modules (SANDBOX_MODULES).

    Its name carries our pid; folders left by processes that no longer exist (a host killed
    with SIGKILL cannot clean up) are removed here.
    """
    base = "/tmp" if os.path.isdir("/tmp") else tempfile.gettempdir()
    _remove_stale_dirs(base)
    path = tempfile.mkdtemp(prefix=f"synthgen-sandbox-{os.getpid()}-", dir=base)
    os.chmod(path, 0o755)
    for name in SANDBOX_MODULES:
        shutil.copyfile(_HERE / name, os.path.join(path, name))
        os.chmod(os.path.join(path, name), 0o644)
    cache = os.path.join(path, "__pycache__")
    os.mkdir(cache)
    os.chmod(cache, 0o755)
    return path


def _remove_stale_dirs(base: str) -> None:
    """Remove sandbox folders of pools whose process is gone, and any bwrap still naming one: a
    host killed while bwrap was starting leaves bwrap's child blocked forever (before it has
    armed --die-with-parent); its command line holds the folder's unique name."""
    try:
        names = os.listdir(base)
    except OSError:
        return
    stale = []
    for name in names:
        parts = name.split("-")
        if len(parts) != 4 or parts[:2] != ["synthgen", "sandbox"] or not parts[2].isdigit():
            continue
        try:
            os.kill(int(parts[2]), 0)
        except ProcessLookupError:
            stale.append(os.path.join(base, name))
        except OSError:
            pass
    if not stale:
        return
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                argv = fh.read().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"bwrap") and any(path.encode() in argv for path in stale):
            try:
                os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass
    for path in stale:
        shutil.rmtree(path, ignore_errors=True)


def compile_modules(plan: Plan) -> None:
    """Pre-compile the imported modules with the zygote's interpreter (read-only in the sandbox)."""
    subprocess.run(
        [plan.python, "-m", "py_compile"] + [os.path.join(plan.sandbox_dir, n) for n in SANDBOX_MODULES[1:]],
        env={},
        capture_output=True,
        timeout=60,
        check=False,
    )
    for root, dirs, files in os.walk(plan.sandbox_dir):
        for name in dirs + files:
            os.chmod(os.path.join(root, name), 0o755 if name in dirs else 0o644)


def candidates(isolation: str) -> list[str]:
    if isolation == "auto":
        return list(LEVELS)
    if isolation not in LEVELS:
        raise ValueError(f"unknown isolation {isolation!r}; choose one of: auto, {', '.join(LEVELS)}")
    return [isolation]


def choose(isolation: str, allow_unsafe: bool, python: str | None = None, libraries=("numpy",)) -> Plan:
    """Probe the candidate levels and return a Plan for the strongest that works."""
    python = python or default_python()
    found = find_libraries(python, tuple(libraries))
    reasons: list[str] = []
    sandbox_dir = prepare_sandbox_dir()
    try:
        for level in candidates(isolation):
            if level == "rlimits-only" and not allow_unsafe:
                reasons.append("rlimits-only: refused (no isolation; pass allow_unsafe=True to accept it)")
                continue
            plan = Plan(level, python, sandbox_dir, _extra_binds(python) if level == "bwrap" else [], found)
            why = _unsupported(plan)
            if why:
                reasons.append(f"{level}: {why}")
                continue
            compile_modules(plan)
            why = probe(plan)
            if why:
                reasons.append(f"{level}: {why}")
                continue
            if level == "rlimits-only":
                message = (
                    "SANDBOX RUNS WITHOUT ISOLATION (rlimits only): code under test can read and write "
                    "whatever this user can and reach the network. Only for trusted code."
                )
                _log.warning(message)
                warnings.warn(message, RuntimeWarning, stacklevel=3)
            return plan
    except BaseException:
        shutil.rmtree(sandbox_dir, ignore_errors=True)
        raise
    shutil.rmtree(sandbox_dir, ignore_errors=True)
    raise SandboxUnavailable("no usable sandbox isolation here: " + "; ".join(reasons))


def _extra_binds(python: str) -> list[str]:
    """Folders an interpreter outside /usr needs inside bwrap (its prefix)."""
    real = os.path.realpath(python)
    if real.startswith("/usr/"):
        return []
    return (
        [os.path.realpath(sys.base_prefix)]
        if real == os.path.realpath(sys.executable)
        else [os.path.dirname(os.path.dirname(real))]
    )


def _unsupported(plan: Plan) -> str | None:
    if plan.level == "bwrap" and not shutil.which("bwrap"):
        return "bubblewrap is not installed (Debian: apt-get install bubblewrap)"
    if plan.level == "setuid-netns" and os.geteuid() != 0:
        return "needs root to switch to an unprivileged user"
    if not os.path.exists(plan.python):
        return f"no interpreter at {plan.python}"
    return None


def probe(plan: Plan) -> str | None:
    """Start one zygote and wait for it to pass its self-test; None if it did, else why not."""
    argv, popen = plan.command(seed=0)
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    with tempfile.TemporaryFile() as log:
        try:
            proc = subprocess.Popen(
                argv, stdin=theirs, stdout=subprocess.DEVNULL, stderr=log, start_new_session=True, **popen
            )
        except OSError as exc:
            ours.close()
            return f"could not start: {exc}"
        finally:
            theirs.close()
        try:
            ours.settimeout(PROBE_TIMEOUT_S)
            ready = ours.recv(1 << 12)[:1] == b"R"
        except OSError:
            ready = False
        finally:
            ours.close()
            kill_worker(proc)
        if ready:
            return None
        log.seek(0)
        tail = log.read().decode("utf-8", "replace").strip().splitlines()[-3:]
        return f"zygote failed its start-up (exit {proc.returncode}): {' | '.join(tail) or 'no message'}"


def kill_worker(proc: subprocess.Popen) -> None:
    """SIGKILL a worker and reap it; close our ends of its pipes.

    The whole process group goes: bwrap killed during its start-up would otherwise leave its
    child blocked forever, before that child has set --die-with-parent's signal or left the group.
    Later, the sandbox dies with bwrap (--die-with-parent) and jobs with the zygote (pid namespace).
    """
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # (start_new_session: the worker leads its own group)
    except OSError:
        pass
    try:
        proc.kill()
    except OSError:
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
