"""The job's child: what runs between the zygote's fork and the job's exit (standard library only).

Copied next to zygote.py and imported by it as `child`; it also holds the few system calls both
need (unshare, mount, setns, prctl, capset) through ctypes. The zygote forks the child and calls
`run_child`, which never returns:

  read    the job (marshal data) from its own memory file, the only job data this process holds.
  set-up  (before any job code) own process group; stdin /dev/null (a program job: an in-memory
          file holding its input), stdout/stderr to the capture pipes, the result pipe on fd 3,
          every other descriptor closed; at "bwrap" fresh user, mount and IPC namespaces (nothing
          per-user, such as keyrings, outlives the job) with a private tmpfs /tmp as working
          directory, then every capability dropped; no_new_privs; die with the zygote; the seccomp
          deny-list (seccomp.py: threads may start, no new process); rlimits on core dumps, open
          files, file size, locked memory, message queues, CPU time and address space; `random`
          seeded.
  record  ["S"] on the result pipe: set-up is done. Without it the host reports `infra`.
  run     `run_job`: one record per call or test, written at once; nothing here compares values
          (expected values never get here). Then ["E"], the result pipe closed, exit.
"""

import builtins
import contextlib
import ctypes
import fcntl
import json
import marshal
import os
import random
import resource
import signal
import struct
import sys
import tempfile
import traceback

import contest_runner
import seccomp
import values

CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID = 0x00020000, 0x08000000, 0x10000000, 0x20000000
MS_NOSUID, MS_NODEV, MS_REC, MS_PRIVATE = 2, 4, 1 << 14, 1 << 18
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS = 1, 4, 38
EXIT_SETUP, EXIT_NO_MEMORY = 120, 121
libc = ctypes.CDLL(None, use_errno=True)


def check(ret, what):
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def unshare(flags):
    check(libc.unshare(flags), "unshare")


def make_mounts_private():
    check(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "make / private")


def prctl(option, value):
    check(libc.prctl(option, value, 0, 0, 0), f"prctl {option}")


def id_maps(uid, gid):
    """What to write to setgroups, uid_map and gid_map to map our own uid/gid to themselves."""
    return b"deny", f"{uid} {uid} 1".encode(), f"{gid} {gid} 1".encode()


def map_own_ids(maps):
    """After unshare(CLONE_NEWUSER): write `id_maps(...)` (the one mapping an unprivileged process
    may write; /proc/self is only writable while we are dumpable)."""
    prctl(PR_SET_DUMPABLE, 1)
    for name, data in zip(("/proc/self/setgroups", "/proc/self/uid_map", "/proc/self/gid_map"), maps):
        fd = os.open(name, os.O_WRONLY)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
    prctl(PR_SET_DUMPABLE, 0)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def run_child(mode, seed, fds, workdir):
    """The forked child: read its job, set up, run it, exit. `fds`: the job's memory file and the
    write ends of its result, stdout and stderr pipes. Never returns."""
    try:
        signal.set_wakeup_fd(-1)  # the zygote's: closed here, and its number is about to be reused
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        job_fd, *pipes = fds
        job = marshal.loads(os.pread(job_fd, os.fstat(job_fd).st_size, 0))
        _setup(mode, seed, job, pipes, workdir)
        emit("S")
    except BaseException as exc:
        try:
            os.write(2, f"sandbox child set-up failed: {exc!r}\n".encode())
        finally:
            os._exit(EXIT_SETUP)
    try:
        run_job(job)
        finish()
    except MemoryError:
        os._exit(EXIT_NO_MEMORY)
    except BaseException:
        os._exit(EXIT_SETUP + 2)


def _stdin_file(text):
    """A descriptor on an in-memory file holding a program's input, made before the rlimits and
    the seccomp filter, so that neither touches it."""
    fd = os.memfd_create("stdin", 0)
    with open(fd, "wb", closefd=False) as file:
        file.write(text.encode("utf-8", "surrogatepass"))
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _setup(mode, seed, job, pipes, workdir):
    # Its own process group, not a new session: setsid() also makes a scheduler autogroup, and no
    # process here has a controlling terminal to leave (bwrap runs with --new-session).
    os.setpgid(0, 0)
    stdin = os.open("/dev/null", os.O_RDWR) if job.get("stdin") is None else _stdin_file(job["stdin"])
    res_w, out_w, err_w = pipes
    order = [fcntl.fcntl(fd, fcntl.F_DUPFD, 64) for fd in (stdin, out_w, err_w, res_w)]  # no dup2 overwrites a source
    for target, fd in enumerate(order):
        os.dup2(fd, target)
    os.closerange(4, 1 << 20)
    mib = 1 << 20
    if mode == "bwrap":
        maps = id_maps(os.getuid(), os.getgid())
        unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWIPC)  # the mount and IPC ones belong to the new user namespace
        map_own_ids(maps)
        options = f"size={job['tmp_mb']}m,nr_inodes=8192,mode=0700".encode()
        check(libc.mount(b"tmpfs", b"/tmp", b"tmpfs", MS_NOSUID | MS_NODEV, options), "mount /tmp")
    os.chdir(workdir)
    if mode == "bwrap":  # drop the capabilities the new user namespace gave us
        check(libc.capset(ctypes.byref(_CapHeader(0x20080522, 0)), (_CapData * 2)()), "capset")
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if seccomp.PRCTL_ARGS is not None:
        check(libc.prctl(*seccomp.PRCTL_ARGS), "seccomp")
    os.environ["TMPDIR"] = os.environ["HOME"] = workdir
    tempfile.tempdir = None
    limits = {"CORE": 0, "NOFILE": 64, "FSIZE": job["tmp_mb"] * mib, "MEMLOCK": 0, "MSGQUEUE": 0}
    limits.update(CPU=job["cpu"], AS=job["mem_mb"] * mib)
    for name, value in limits.items():
        resource.setrlimit(getattr(resource, "RLIMIT_" + name), (value, value))
    sys.argv = ["solution"]
    random.seed(seed)  # `random` re-seeds itself from urandom in every fork: make jobs repeatable


# The sandbox runs without `site`, which is what defines exit() and quit(): scripts use them.
builtins.exit = builtins.quit = sys.exit


def run_job(job):
    """Run a job after set-up: its records go to the result pipe (fd 3); the caller then ends the child."""
    if job.get("tests") is not None:
        contest_runner.run(job)
    elif job.get("stdin") is None:
        _run_calls(job)
    else:
        _run_program(job)


def emit(*fields):
    """Write one record, a JSON list after its length, on the result pipe; return its size."""
    data = json.dumps(fields, separators=(",", ":")).encode()
    view = memoryview(struct.pack(">I", len(data)) + data)
    while view:
        view = view[os.write(3, view) :]
    return len(data) + 4


def finish():
    """End the job: what it printed flushed, then ["E"] (every call or test has reported, so the
    host can answer now, not after this process's exit), then exit 0."""
    flush(sys.stdout, sys.stderr)
    emit("E")
    os._exit(0)


def flush(*streams):
    """What the job printed goes out, whatever state it left the streams in."""
    for stream in streams:
        with contextlib.suppress(BaseException):
            stream.flush()


def text_in(newline=None):
    """A new text stream over fd 0 (nothing the zygote's own stream objects hold is in it)."""
    return open(0, encoding="utf-8", errors="replace", newline=newline, closefd=False)


def text_out():
    return open(1, "w", 1 << 16, encoding="utf-8", errors="replace", closefd=False)


def failure(exc, during=None):
    """(status, None, error) of job code that raised `exc` (`during` says what, if not a call or test)."""
    if isinstance(exc, MemoryError):
        return "memory", None, "MemoryError" if during is None else f"MemoryError while {during}"
    return "exception", None, describe(exc) if during is None else f"while {during}: {describe(exc)}"


def describe(exc):
    """ "Type: message (line N)" for an exception raised by job code (its __str__ may misbehave)."""
    name = type(exc).__name__
    try:
        message = str(exc)
    except BaseException:
        message = "<unprintable>"
    text = (f"{name}: {message}" if message else name)[:2000]
    lines = [line for frame, line in traceback.walk_tb(exc.__traceback__) if frame.f_code.co_filename == "<solution>"]
    return f"{text} (line {lines[-1]})" if lines else text


def _run_program(job):
    """Run the code once as `__main__` on the prepared stdin; one record, [0, status, null, error]."""
    sys.stdin = sys.__stdin__ = text_in()
    sys.stdout = sys.__stdout__ = text_out()
    status, error = "ok", None
    try:
        exec(compile(job["code"], "<solution>", "exec"), {"__name__": "__main__", "__builtins__": builtins})
    except SystemExit as exc:
        if exc.code is not None and exc.code != 0:
            text = exc.code if isinstance(exc.code, str) else f"exit status {exc.code!r}"
            status, error = "exception", f"SystemExit: {str(text)[:2000]}"
    except BaseException as exc:
        status, _, error = failure(exc)
    emit(0, status, None, error)


def _run_calls(job):
    """Run the module, then evaluate each call; one record per call, written at once."""
    scope = {"__name__": "solution", "__builtins__": builtins}
    failed = None
    try:
        exec(compile(job["code"], "<solution>", "exec"), scope)
    except BaseException as exc:
        failed = failure(exc, "running the module")
    for i, call in enumerate(job["calls"]):
        status, text, error = failed or _call(scope, i, call, job["val_cap"])
        flush(sys.stdout, sys.stderr)
        emit(i, status, text, error)


def _call(scope, i, call, cap):
    try:
        text = values.encode(eval(compile(call, f"<call {i}>", "eval"), scope))
    except BaseException as exc:
        return failure(exc)
    if len(text) > cap:
        return "output_too_large", None, f"the value's encoding is {len(text)} bytes; the limit is {cap}"
    return "ok", text, None
