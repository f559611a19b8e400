"""The job's child: what runs between the zygote's fork and the job's exit (standard library only).

Copied next to zygote.py and imported by it as `child`; it also holds the few system calls both
need (unshare, mount, setns, prctl, capset) through ctypes. `Child(...).run()` never returns:

  set-up  (before any job code) new session; stdin /dev/null, stdout/stderr to capture pipes,
          result pipe on fd 3, every other descriptor closed; fresh mount and IPC namespaces
          with a private tmpfs /tmp as working directory (setuid mode: also /var/tmp, /dev/shm
          and a /proc of its own pid namespace); privileges dropped (setuid to the sandbox user,
          or every capability in bwrap mode); no_new_privs; die with the zygote; rlimits on
          core dumps, open files, file size, locked memory, message queues, CPU time, processes
          (0: no fork, no threads) and address space; `random` seeded with the zygote's seed.
  record  ["S"] on the result pipe: set-up is done. Without it the host reports `infra`.
  run     exec the code, then evaluate each call; one record per call, written at once:
          [index, "ok", encoding, null] | [index, "exception" | "memory" | "output_too_large",
          null, message]. Exit 0. Nothing here compares values: expected values never get here.
"""

import ctypes
import fcntl
import json
import os
import random
import resource
import signal
import struct
import sys
import tempfile

import values

CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWUSER = 0x00020000, 0x08000000, 0x10000000
CLONE_NEWPID, CLONE_NEWNET = 0x20000000, 0x40000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 1 << 14, 1 << 18
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS = 1, 4, 38
EXIT_SETUP, EXIT_NO_MEMORY = 120, 121
_U32 = struct.Struct(">I")
libc = ctypes.CDLL(None, use_errno=True)


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


def write_file(path, text):
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def drop_all_capabilities():
    header, data = _CapHeader(0x20080522, 0), (_CapData * 2)()
    check(libc.capset(ctypes.byref(header), data), "capset")



def write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


class Child:
    def __init__(self, zygote, job, write_fds, workdir):
        self.z, self.job, self.write_fds, self.workdir = zygote, job, write_fds, workdir

    def run(self):
        try:
            self._setup()
            _emit(["S"])
        except BaseException as exc:
            try:
                os.write(2, f"sandbox child set-up failed: {exc!r}\n".encode())
            finally:
                os._exit(EXIT_SETUP)
        try:
            _run_calls(self.job)
        except MemoryError:
            os._exit(EXIT_NO_MEMORY)
        except BaseException:
            os._exit(EXIT_SETUP + 2)
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(0)

    def _setup(self):
        z, job = self.z, self.job
        os.setsid()
        devnull = os.open("/dev/null", os.O_RDWR)
        res_w, out_w, err_w = self.write_fds
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 64) for fd in (devnull, out_w, err_w, res_w)]
        for target, fd in enumerate(high):
            os.dup2(fd, target)
        os.closerange(4, 1 << 20)
        if z.mode in ("bwrap", "setuid"):
            unshare(CLONE_NEWNS | CLONE_NEWIPC)
            owner = f",uid={z.uid},gid={z.gid}" if z.mode == "setuid" else ""
            mount_tmpfs("/tmp", f"size={job['tmp_mb']}m,nr_inodes=8192,mode=0700{owner}")
            if z.mode == "setuid":  # a /proc that shows this job's pid namespace only, and no host tmp
                check(libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None), "mount /proc")
                for path in ("/var/tmp", "/dev/shm"):
                    if os.path.isdir(path):
                        mount_tmpfs(path, f"size=1m,nr_inodes=64,mode=0700{owner}")
        os.chdir(self.workdir)
        if z.mode == "setuid":
            os.setgroups([])
            os.setresgid(z.gid, z.gid, z.gid)
            os.setresuid(z.uid, z.uid, z.uid)
        elif z.mode == "bwrap":
            drop_all_capabilities()
        prctl(PR_SET_NO_NEW_PRIVS, 1)
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        os.environ["TMPDIR"] = self.workdir
        os.environ["HOME"] = self.workdir
        tempfile.tempdir = None
        mib = 1 << 20
        for name, value in (
            ("RLIMIT_CORE", 0),
            ("RLIMIT_NOFILE", 64),
            ("RLIMIT_FSIZE", job["tmp_mb"] * mib),
            ("RLIMIT_MEMLOCK", 0),
            ("RLIMIT_MSGQUEUE", 0),
            ("RLIMIT_CPU", job["cpu"]),
            ("RLIMIT_NPROC", 0),
            ("RLIMIT_AS", job["mem_mb"] * mib),
        ):
            resource.setrlimit(getattr(resource, name), (value, value))
        sys.argv = ["solution"]
        random.seed(z.seed)  # `random` re-seeds itself from urandom in every fork: make jobs repeatable


def _emit(record):
    data = json.dumps(record).encode()
    write_all(3, _U32.pack(len(data)) + data)


def _describe(exc):
    try:
        text = f"{type(exc).__name__}: {exc}".rstrip(": ")
    except BaseException:
        text = type(exc).__name__
    tb, line = exc.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<solution>":
            line = tb.tb_lineno
        tb = tb.tb_next
    text = text[:2000]
    return text if line is None else f"{text} (line {line})"


def _run_calls(job):
    calls, cap = job["calls"], job["val_cap"]
    scope = {"__name__": "solution", "__builtins__": __builtins__}
    try:
        exec(compile(job["code"], "<solution>", "exec"), scope)
    except MemoryError:
        for i in range(len(calls)):
            _emit([i, "memory", None, "MemoryError while running the module"])
        return
    except BaseException as exc:
        error = "while running the module: " + _describe(exc)
        del exc
        for i in range(len(calls)):
            _emit([i, "exception", None, error])
        return
    for i, call in enumerate(calls):
        try:
            value = eval(compile(call, f"<call {i}>", "eval"), scope)
            text = values.encode(value)
            del value
            record = [i, "ok", text, None] if len(text) <= cap else [
                i, "output_too_large", None, f"the value's encoding is {len(text)} bytes; the limit is {cap}"]
            del text
        except MemoryError:
            record = [i, "memory", None, "MemoryError"]
        except BaseException as exc:
            record = [i, "exception", None, _describe(exc)]
            del exc
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:
                pass
        _emit(record)


