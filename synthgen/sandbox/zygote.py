"""Sandbox zygote: a small pre-started Python that forks one child per job (standard library only).

The pool copies this file and values.py into a private folder and starts

    python3 -S -s -B zygote.py MODE HASHSEED [UID GID]

MODE is "bwrap" (already inside bubblewrap as an unprivileged user), "setuid" (started as root
on the host) or "unsafe" (rlimits only). It imports nothing from synthgen.

Start-up, by mode:
  bwrap   unshare a user, pid and mount namespace of its own and fork once; the forked copy is
          pid 1 there and holds all capabilities *inside* that user namespace only, which is what
          lets it give every job a fresh pid namespace and its child a fresh tmpfs /tmp.
  setuid  unshare the network and mount namespaces (no network for any job).
  every   PR_SET_DUMPABLE=0 (no job can open our /proc/<pid>/mem), common stdlib modules
          pre-imported, `random` seeded with HASHSEED, then one self-test job, then "ready".

Per job: the zygote forks the job's child into a new pid namespace (the child is its pid 1, so
it cannot see or signal the zygote, and killing it ends everything it started). The child moves
to fresh mount and IPC namespaces, mounts a private tmpfs on /tmp (its working directory), drops
privileges (all capabilities in bwrap mode, setuid in setuid mode), sets rlimits, points
stdin at /dev/null and stdout/stderr at capture pipes, closes every other descriptor except its
result pipe, and runs the code and the calls. The zygote watches the pipes and a pidfd, enforces
the wall clock with SIGKILL, caps what it keeps, and forwards raw bytes to the host, which decodes
and judges them. Nothing in here decides whether an answer is right.

Wire format (all lengths 4-byte big-endian): frames are LEN + KIND(1 byte) + BODY.
  host -> zygote  b"J" + job JSON
  zygote -> host  b"R" + info JSON (ready) | b"D" + header JSON, results, stdout, stderr (each LEN + bytes)
  child -> zygote (result pipe) LEN + JSON records: ["S"] once set-up is done, then one
  [index, status, encoding, error] per call in order.
"""

import ctypes
import fcntl
import json
import os
import random
import resource
import select
import shutil
import signal
import struct
import sys
import tempfile
import time

PRELOAD = (
    "abc array ast base64 bisect calendar cmath collections collections.abc contextlib copy csv "
    "dataclasses datetime decimal enum fractions functools heapq io itertools json keyword math "
    "numbers operator pprint random re statistics string struct textwrap types typing "
    "unicodedata"
).split()

CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWUSER = 0x00020000, 0x08000000, 0x10000000
CLONE_NEWPID, CLONE_NEWNET = 0x20000000, 0x40000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 1 << 14, 1 << 18
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS = 1, 4, 38
EXIT_SETUP, EXIT_NO_MEMORY = 120, 121
_U32 = struct.Struct(">I")
_libc = ctypes.CDLL(None, use_errno=True)


def _check(ret, what):
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _unshare(flags):
    _check(_libc.unshare(flags), "unshare")


def _mount_tmpfs(path, options):
    _check(_libc.mount(b"tmpfs", path.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, options.encode()), "mount " + path)


def _make_mounts_private():
    _check(_libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "make / private")


def _prctl(option, value):
    _check(_libc.prctl(option, value, 0, 0, 0), f"prctl {option}")


def _write_file(path, text):
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _drop_all_capabilities():
    header, data = _CapHeader(0x20080522, 0), (_CapData * 2)()
    _check(_libc.capset(ctypes.byref(header), data), "capset")


# ---------------------------------------------------------------------------------------------
# framing


def _read_exact(fd, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = os.read(fd, n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _frame(kind, *parts):
    body = kind + b"".join(_U32.pack(len(p)) + p for p in parts) if kind == b"D" else kind + parts[0]
    return _U32.pack(len(body)) + body


# ---------------------------------------------------------------------------------------------
# the zygote


class Zygote:
    def __init__(self, mode, seed, uid, gid, chan_in, chan_out):
        self.mode, self.seed, self.uid, self.gid = mode, seed, uid, gid
        self.chan_in, self.chan_out = chan_in, chan_out
        self.new_pid = mode in ("bwrap", "setuid")
        self.base_pid_ns = os.open("/proc/self/ns/pid", os.O_RDONLY) if self.new_pid else -1

    def serve(self):
        while True:
            head = _read_exact(self.chan_in, 4)
            if head is None:
                return
            body = _read_exact(self.chan_in, _U32.unpack(head)[0])
            if body is None or body[:1] != b"J":
                return
            try:
                frame = self.run_job(json.loads(body[1:]))
            except Exception as exc:  # the sandbox could not run it: the host reports infra
                header = {"end": "infra", "error": f"zygote could not run the job: {exc!r}"}
                frame = _frame(b"D", json.dumps(header).encode(), b"", b"", b"")
            _write_all(self.chan_out, frame)

    def run_job(self, job):
        """Run one job in a fresh child; return the b"D" frame for the host."""
        t0 = time.monotonic()
        workdir = tempfile.mkdtemp(prefix="job-") if self.mode == "unsafe" else "/tmp"
        pipes = [os.pipe() for _ in range(3)]  # results, stdout, stderr
        try:
            if self.new_pid:
                _unshare(CLONE_NEWPID)
            try:
                pid = os.fork()
                if pid == 0:
                    Child(self, job, [w for _, w in pipes], workdir).run()  # never returns
            finally:
                if self.new_pid:  # later forks go back to our own pid namespace
                    _check(_libc.setns(self.base_pid_ns, CLONE_NEWPID), "setns pid")
                for _, w in pipes:
                    os.close(w)
            header, blobs = self._supervise(pid, job, [r for r, _ in pipes], t0)
        finally:
            for r, _ in pipes:
                os.close(r)
            if self.mode == "unsafe":
                shutil.rmtree(workdir, ignore_errors=True)
        return _frame(b"D", json.dumps(header).encode(), *blobs)

    def _supervise(self, pid, job, fds, t0):
        res_fd = fds[0]
        bufs = {fd: bytearray() for fd in fds}
        totals = {fd: 0 for fd in fds}
        try:
            pidfd = os.pidfd_open(pid)
        except (AttributeError, OSError):
            pidfd = -1
        poller = select.poll()
        for fd in fds + ([pidfd] if pidfd >= 0 else []):
            poller.register(fd, select.POLLIN)
        open_fds, exited, end, reaped = set(fds), False, None, None
        deadline = t0 + job["timeout"]
        while (open_fds or not exited) and not end:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                end = "timeout"
                break
            if not open_fds and pidfd < 0:  # no pidfd here: poll for the exit
                reaped = os.wait4(pid, os.WNOHANG)
                if reaped[0]:
                    break
                reaped = None
                time.sleep(min(remaining, 0.002))
                continue
            for fd, _ in poller.poll(remaining * 1000.0):
                if fd == pidfd:
                    exited = True
                    poller.unregister(pidfd)
                    continue
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    poller.unregister(fd)
                    open_fds.discard(fd)
                    continue
                end = self._take(fd, chunk, bufs, totals, res_fd, job)
                if end:
                    break
        if reaped is None:
            if end:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            reaped = os.wait4(pid, 0)
        _, status, usage = reaped
        if pidfd >= 0:
            os.close(pidfd)
        for fd in open_fds:  # every writer is gone now: take what is left in the pipe
            os.set_blocking(fd, False)
            while not end:
                try:
                    chunk = os.read(fd, 1 << 16)
                except BlockingIOError:
                    break
                if not chunk:
                    break
                end = self._take(fd, chunk, bufs, totals, res_fd, job)
        header = {
            "end": end or ("signal" if os.WIFSIGNALED(status) else "exit"),
            "code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
            "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
            "cpu": usage.ru_utime + usage.ru_stime,
            "wall": time.monotonic() - t0,
            "out_total": totals[fds[1]],
            "err_total": totals[fds[2]],
        }
        return header, [bytes(bufs[fd]) for fd in fds]

    @staticmethod
    def _take(fd, chunk, bufs, totals, res_fd, job):
        """Keep a chunk within the caps; say why the child must be stopped, if it must."""
        totals[fd] += len(chunk)
        if fd == res_fd:
            if totals[fd] > job["res_cap"]:
                return "results"
            bufs[fd] += chunk
            return None
        room = job["out_keep"] - len(bufs[fd])
        if room > 0:
            bufs[fd] += chunk[:room]
        output = sum(n for f, n in totals.items() if f != res_fd)
        return "output" if output > job["out_limit"] else None


# ---------------------------------------------------------------------------------------------
# the child: set-up, then the job


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
            _unshare(CLONE_NEWNS | CLONE_NEWIPC)
            owner = f",uid={z.uid},gid={z.gid}" if z.mode == "setuid" else ""
            _mount_tmpfs("/tmp", f"size={job['tmp_mb']}m,nr_inodes=8192,mode=0700{owner}")
            if z.mode == "setuid":  # a /proc that shows this job's pid namespace only, and no host tmp
                _check(_libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None), "mount /proc")
                for path in ("/var/tmp", "/dev/shm"):
                    if os.path.isdir(path):
                        _mount_tmpfs(path, f"size=1m,nr_inodes=64,mode=0700{owner}")
        os.chdir(self.workdir)
        if z.mode == "setuid":
            os.setgroups([])
            os.setresgid(z.gid, z.gid, z.gid)
            os.setresuid(z.uid, z.uid, z.uid)
        elif z.mode == "bwrap":
            _drop_all_capabilities()
        _prctl(PR_SET_NO_NEW_PRIVS, 1)
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
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
    _write_all(3, _U32.pack(len(data)) + data)


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
    import values

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


# ---------------------------------------------------------------------------------------------
# start-up


def _enter_own_namespaces():
    """bwrap mode: become pid 1 of a user+pid+mount namespace we hold capabilities in."""
    uid, gid = os.getuid(), os.getgid()
    _unshare(CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS)
    _write_file("/proc/self/setgroups", "deny")
    _write_file("/proc/self/uid_map", f"{uid} {uid} 1")
    _write_file("/proc/self/gid_map", f"{gid} {gid} 1")
    _make_mounts_private()
    pid = os.fork()
    if pid:  # stay as a shim: exit with the zygote's status, so bwrap ends when it does
        os.closerange(0, 1 << 20)
        _prctl(PR_SET_DUMPABLE, 0)
        while True:
            try:
                _, status = os.waitpid(pid, 0)
                os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
            except InterruptedError:
                continue
    return uid, gid


def main(argv):
    mode, seed = argv[1], int(argv[2])
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    chan_in, chan_out = os.dup(0), os.dup(1)
    devnull = os.open("/dev/null", os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(2, 1)  # a stray print must not corrupt the channel
    os.close(devnull)
    if mode != "bwrap":
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() == 1:
            return 1
    if mode == "bwrap":
        uid, gid = _enter_own_namespaces()
    elif mode == "setuid":
        uid, gid = int(argv[3]), int(argv[4])
        _unshare(CLONE_NEWNET | CLONE_NEWNS)
        _make_mounts_private()
    elif mode == "unsafe":
        uid, gid = os.getuid(), os.getgid()
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    _prctl(PR_SET_DUMPABLE, 0)
    loaded = 0
    for name in PRELOAD:
        try:
            __import__(name)
            loaded += 1
        except ImportError:
            pass
    import values  # noqa: F401  (the children encode with it)

    zygote = Zygote(mode, seed, uid, gid, chan_in, chan_out)
    _self_test(zygote)
    info = {"pid": os.getpid(), "mode": mode, "python": sys.version.split()[0], "preloaded": loaded}
    _write_all(chan_out, _frame(b"R", json.dumps(info).encode()))
    zygote.serve()
    return 0


def _self_test(zygote):
    job = {"code": "def f(x):\n    return [x, 'a', (1.5,)]\n", "calls": ["f(2)"], "timeout": 10.0, "cpu": 10,
           "mem_mb": 1024, "tmp_mb": 1, "out_keep": 1024, "out_limit": 1 << 16, "val_cap": 1 << 16, "res_cap": 1 << 17}
    frame = zygote.run_job(job)
    expected = b'["S"]' in frame and b'[0, "ok", "[2,\\"a\\",{\\"tuple\\":[{\\"float\\":\\"1.5\\"}]}]", null]' in frame
    if not expected:
        sys.stderr.write(f"zygote self-test failed: {frame[:2000]!r}\n")
        raise SystemExit(3)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
