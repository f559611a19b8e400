"""The job's child: what runs between the zygote's fork and the job's exit (standard library only).

Copied next to zygote.py and imported by it as `child`; it also holds the few system calls both
need (unshare, mount, setns, prctl, capset) through ctypes. The template (template.py) forks the
child and calls `run_child_from_fd(...)`, which reads the job (marshal data) from the job's own
memory file and goes on to `run_child(...)`; neither returns:

  set-up  (before any job code) own process group; stdin /dev/null (a program job: an anonymous
          in-memory file holding its input), stdout/stderr to capture pipes,
          result pipe on fd 3, every other descriptor closed; fresh mount and IPC namespaces
          with a private tmpfs /tmp as working directory (setuid mode: also /var/tmp, /dev/shm
          and a /proc of its own pid namespace); a user namespace of its own (so per-user kernel
          state such as keyrings starts empty), after setuid to the sandbox user in setuid mode;
          every capability dropped; no_new_privs; die with the template; a seccomp deny-list on
          x86-64 and aarch64 (mount, namespaces, keyrings, ptrace, bpf, io_uring, modules...);
          rlimits on core dumps, open files, file size, locked memory, message queues, CPU
          time and address space; threads may start but no new process (seccomp: fork, vfork
          and clone without CLONE_THREAD fail); `random` seeded.
  record  ["S"] on the result pipe: set-up is done. Without it the host reports `infra`.
  run     exec the code, then evaluate each call; one record per call, written at once:
          [index, "ok", encoding, null] | [index, "exception" | "memory" | "output_too_large",
          null, message]. Then ["E"], the result pipe closed, exit 0. Nothing here compares
          values: expected values never get here. A program job instead runs the code once as
          `__main__` and writes one record, [0, "ok" | "exception" | "memory", null, message], then
          ["E"]; its answer is its stdout, which the zygote captures from outside.
          A contest-tests job (a "tests" field) is run by contest_runner.py instead.
"""

import builtins
import ctypes
import fcntl
import io
import json
import marshal
import os
import random
import resource
import signal
import struct
import sys
import tempfile

import contest_runner
import seccomp
import values

CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWUSER = 0x00020000, 0x08000000, 0x10000000
CLONE_NEWPID, CLONE_NEWNET = 0x20000000, 0x40000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 1 << 14, 1 << 18
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS = 1, 4, 38
EXIT_SETUP, EXIT_NO_MEMORY = 120, 121
_SIGKILL = int(signal.SIGKILL)
_U32 = struct.Struct(">I")
libc = ctypes.CDLL(None, use_errno=True)
for _name in ("capset", "mount", "prctl", "setns", "unshare"):
    getattr(libc, _name)  # looked up once here, in the zygote (ctypes caches it), not in every child


def check(ret, what):
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def unshare(flags):
    check(libc.unshare(flags), "unshare")


def mount_tmpfs(path, options):
    check(libc.mount(b"tmpfs", path.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, options.encode()), "mount " + path)


def make_mounts_private():
    check(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "make / private")


def prctl(option, value):
    check(libc.prctl(option, value, 0, 0, 0), f"prctl {option}")


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def id_maps(uid, gid):
    """What to write to setgroups, uid_map and gid_map to map our own uid/gid to themselves."""
    return b"deny", f"{uid} {uid} 1".encode(), f"{gid} {gid} 1".encode()


def map_own_ids(maps):
    """After unshare(CLONE_NEWUSER): write `id_maps(...)` (the one mapping an unprivileged process
    may write; /proc/self is only writable while we are dumpable)."""
    check(libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0), "dumpable")
    for name, data in zip((b"/proc/self/setgroups", b"/proc/self/uid_map", b"/proc/self/gid_map"), maps):
        fd = os.open(name, os.O_WRONLY)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
    check(libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), "dumpable")


_CAPSET_ARGS = (ctypes.byref(_CapHeader(0x20080522, 0)), (_CapData * 2)())  # every set empty; built once


def write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class Prepared:
    """What every child of one zygote needs, built once in the zygote before any fork: the child
    then only makes system calls with ready arguments (each Python object it touches after the
    fork costs a copy-on-write page fault, so it touches as few as it can)."""

    def __init__(self, mode, uid, gid, seed, workdir):
        self.mode, self.uid, self.gid, self.seed, self.workdir = mode, uid, gid, seed, workdir
        self.id_maps = id_maps(uid, gid)
        self.owner = f",uid={uid},gid={gid}" if mode == "setuid" else ""
        self._per_limits = {}

    def for_job(self, job):
        """(tmpfs options for /tmp, rlimits) of a job; the same few limits recur, so cached."""
        key = (job["tmp_mb"], job["cpu"], job["mem_mb"])
        got = self._per_limits.get(key)
        if got is None:
            mib = 1 << 20
            options = f"size={job['tmp_mb']}m,nr_inodes=8192,mode=0700{self.owner}".encode()
            limits = tuple(
                (getattr(resource, name), (value, value))
                for name, value in (
                    ("RLIMIT_CORE", 0),
                    ("RLIMIT_NOFILE", 64),
                    ("RLIMIT_FSIZE", job["tmp_mb"] * mib),
                    ("RLIMIT_MEMLOCK", 0),
                    ("RLIMIT_MSGQUEUE", 0),
                    ("RLIMIT_CPU", job["cpu"]),
                    ("RLIMIT_AS", job["mem_mb"] * mib),
                )
            )
            if len(self._per_limits) > 64:
                self._per_limits.clear()
            got = self._per_limits[key] = (options, limits)
        return got

    def fixed_environment(self):
        """Modes whose working directory is the same for every job (/tmp, a fresh tmpfs each time)
        set TMPDIR and HOME once in the zygote; children inherit them."""
        if self.workdir is not None:
            os.environ["TMPDIR"] = self.workdir
            os.environ["HOME"] = self.workdir
            tempfile.tempdir = None


def run_child_from_fd(prep, job_fd, job_limits, write_fds, workdir):
    """The child forked by the template (template.py): read this job's data from `job_fd` (the
    only job data this process ever holds), close it, then `run_child`. Never returns."""
    try:
        size = os.fstat(job_fd).st_size
        data = bytearray()
        while len(data) < size:
            chunk = os.pread(job_fd, size - len(data), len(data))
            if not chunk:
                raise EOFError("job file ended early")
            data += chunk
        os.close(job_fd)
        job = marshal.loads(data)
        del data
    except BaseException as exc:
        try:
            os.write(write_fds[2], f"sandbox child could not read its job: {exc!r}\n".encode())
        finally:
            os._exit(EXIT_SETUP)
    run_child(prep, job, job_limits, write_fds, workdir)


def run_child(prep, job, job_limits, write_fds, workdir):
    """The forked child: set up, run the job, exit. Never returns."""
    try:
        _setup(prep, job_limits, write_fds, workdir, job.get("stdin"))
        write_all(3, _SETUP_DONE)
    except BaseException as exc:
        try:
            os.write(2, f"sandbox child set-up failed: {exc!r}\n".encode())
        finally:
            os._exit(EXIT_SETUP)
    try:
        run_job(job)
    except MemoryError:
        os._exit(EXIT_NO_MEMORY)
    except BaseException:
        os._exit(EXIT_SETUP + 2)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        # Every call has reported: say so and close the stream, so that the zygote can answer now
        # rather than after this process's exit (tearing down its namespaces takes milliseconds).
        write_all(3, END_RECORD)
        os.close(3)
    finally:
        os._exit(0)


_SETUP_DONE = _U32.pack(5) + b'["S"]'
END_RECORD = _U32.pack(5) + b'["E"]'


def _stdin_file(text):
    """A read-only descriptor on an anonymous in-memory file holding `text` (a program's input).

    Made before the rlimits and the seccomp filter, so neither the file-size limit nor anything
    the job does later touches it; it is the job's own input, nothing more."""
    fd = os.memfd_create("stdin", 0)
    write_all(fd, text.encode("utf-8", "surrogatepass"))
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _setup(prep, job_limits, write_fds, workdir, stdin=None):
    mode = prep.mode
    tmp_options, rlimits = job_limits
    # Its own process group, not a new session: setsid() also makes a scheduler autogroup, which
    # costs 0.1-4 ms a job where autogroups are on; and no process here has a controlling terminal
    # to leave (bwrap runs with --new-session, the other levels' zygotes in a session of their own).
    os.setpgid(0, 0)
    devnull = os.open("/dev/null", os.O_RDWR) if stdin is None else _stdin_file(stdin)
    res_w, out_w, err_w = write_fds
    order = (devnull, out_w, err_w, res_w)
    if min(order) < 4:  # a source would be overwritten by an earlier dup2: go through high numbers
        order = [fcntl.fcntl(fd, fcntl.F_DUPFD, 64) for fd in order]
    for target, fd in enumerate(order):
        os.dup2(fd, target)
    os.closerange(4, 1 << 20)
    if mode == "bwrap":
        # Fresh user (nothing per-user, such as keyrings, outlives the job), mount and IPC
        # namespaces in one call; the mount and IPC ones belong to the new user namespace.
        check(libc.unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWIPC), "unshare")
        map_own_ids(prep.id_maps)
        check(libc.mount(b"tmpfs", b"/tmp", b"tmpfs", MS_NOSUID | MS_NODEV, tmp_options), "mount /tmp")
    elif mode == "setuid":
        unshare(CLONE_NEWNS | CLONE_NEWIPC)
        check(libc.mount(b"tmpfs", b"/tmp", b"tmpfs", MS_NOSUID | MS_NODEV, tmp_options), "mount /tmp")
        # a /proc that shows this job's pid namespace only, and no host tmp
        check(libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None), "mount /proc")
        for path in ("/var/tmp", "/dev/shm"):
            if os.path.isdir(path):
                mount_tmpfs(path, f"size=1m,nr_inodes=64,mode=0700{prep.owner}")
    os.chdir(workdir)
    if mode == "setuid":
        os.setgroups([])
        os.setresgid(prep.gid, prep.gid, prep.gid)
        os.setresuid(prep.uid, prep.uid, prep.uid)
        unshare(CLONE_NEWUSER)
        map_own_ids(prep.id_maps)
    if mode != "unsafe":
        check(libc.capset(*_CAPSET_ARGS), "capset")  # the ones the new user namespace gave us
    check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    check(libc.prctl(PR_SET_PDEATHSIG, _SIGKILL, 0, 0, 0), "pdeathsig")
    if seccomp.PRCTL_ARGS is not None:
        check(libc.prctl(*seccomp.PRCTL_ARGS), "seccomp")
    if prep.workdir is None:  # (otherwise the zygote set them once: see Prepared.fixed_environment)
        os.environ["TMPDIR"] = workdir
        os.environ["HOME"] = workdir
        tempfile.tempdir = None
    setrlimit = resource.setrlimit
    for which, limit in rlimits:
        setrlimit(which, limit)
    sys.argv = ["solution"]
    random.seed(prep.seed)  # `random` re-seeds itself from urandom in every fork: make jobs repeatable


# The sandbox runs without `site`, which is what defines exit() and quit(): scripts use them.
builtins.exit = builtins.quit = sys.exit
_record_json = json.JSONEncoder(separators=(",", ":")).encode


def run_job(job):
    """Run a job after set-up: its call, program or test records go to the result pipe (fd 3);
    the caller then ends the child (see `finish`)."""
    if job.get("tests") is not None:
        contest_runner.run(job)
    elif job.get("stdin") is None:
        _run_calls(job)
    else:
        _run_program(job)


def emit(*fields):
    """Write one record, a JSON list after its length, on the result pipe; return its size."""
    data = _record_json(fields).encode()
    view = memoryview(struct.pack(">I", len(data)) + data)
    while view:
        view = view[os.write(3, view) :]
    return len(data) + 4


def finish():
    """End the job: ["E"] (every call or test has reported, so the zygote can answer now, not
    after this process's exit), the result pipe closed, exit 0."""
    flush(sys.stdout, sys.stderr)
    emit("E")
    os.close(3)
    os._exit(0)


def flush(*streams):
    """What the job printed goes out, whatever state it left the streams in."""
    for stream in streams:
        try:
            stream.flush()
        except BaseException:
            pass


def text_in(newline=None):
    """A new text stream over fd 0 (nothing the zygote's own stream objects hold is in it)."""
    raw = io.BufferedReader(io.FileIO(0, "rb", closefd=False))
    return io.TextIOWrapper(raw, encoding="utf-8", errors="replace", newline=newline)


def text_out():
    raw = io.BufferedWriter(io.FileIO(1, "wb", closefd=False), 1 << 16)
    return io.TextIOWrapper(raw, encoding="utf-8", errors="replace")


def describe(exc):
    """ "Type: message (line N)" for an exception raised by job code (its __str__ may misbehave)."""
    name = type(exc).__name__
    try:
        message = str(exc)
    except BaseException:
        message = "<unprintable>"
    text = (f"{name}: {message}" if message else name)[:2000]
    tb, line = exc.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<solution>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return text if line is None else f"{text} (line {line})"


def _run_program(job):
    """Run the code once as `__main__` on the prepared stdin; one record, [0, status, null, error]."""
    sys.stdin = sys.__stdin__ = text_in()
    sys.stdout = sys.__stdout__ = text_out()
    status, error = "ok", None
    try:
        exec(compile(job["code"], "<solution>", "exec"), {"__name__": "__main__", "__builtins__": builtins})
    except SystemExit as exc:
        code = exc.code
        if code is not None and code != 0:
            text = code if isinstance(code, str) else f"exit status {code!r}"
            status, error = "exception", f"SystemExit: {str(text)[:2000]}"
    except MemoryError:
        status, error = "memory", "MemoryError"
    except BaseException as exc:
        status, error = "exception", describe(exc)
    flush(sys.stdout, sys.stderr)
    emit(0, status, None, error)


def _run_calls(job):
    """Run the module, then evaluate each call; one record per call, written at once."""
    scope = {"__name__": "solution", "__builtins__": builtins}
    failed = None
    try:
        exec(compile(job["code"], "<solution>", "exec"), scope)
    except MemoryError:
        failed = ("memory", None, "MemoryError while running the module")
    except BaseException as exc:
        failed = ("exception", None, "while running the module: " + describe(exc))
    for i, call in enumerate(job["calls"]):
        status, text, error = failed or _call(scope, i, call, job["val_cap"])
        flush(sys.stdout, sys.stderr)
        emit(i, status, text, error)


def _call(scope, i, call, cap):
    try:
        text = values.encode(eval(compile(call, f"<call {i}>", "eval"), scope))
    except MemoryError:
        return "memory", None, "MemoryError"
    except BaseException as exc:
        return "exception", None, describe(exc)
    if len(text) > cap:
        return "output_too_large", None, f"the value's encoding is {len(text)} bytes; the limit is {cap}"
    return "ok", text, None
