"""The job's child: what runs between the zygote's fork and the job's exit (standard library only).

Copied next to zygote.py and imported by it as `child`; it also holds the few system calls both
need (unshare, mount, setns, prctl, capset) through ctypes. `Child(...).run()` never returns:

  set-up  (before any job code) new session; stdin /dev/null, stdout/stderr to capture pipes,
          result pipe on fd 3, every other descriptor closed; fresh mount and IPC namespaces
          with a private tmpfs /tmp as working directory (setuid mode: also /var/tmp, /dev/shm
          and a /proc of its own pid namespace); a user namespace of its own (so per-user kernel
          state such as keyrings starts empty), after setuid to the sandbox user in setuid mode;
          every capability dropped; no_new_privs; die with the zygote; a seccomp deny-list on
          x86-64 and aarch64 (mount, namespaces, keyrings, ptrace, bpf, io_uring, modules...);
          rlimits on core dumps, open files, file size, locked memory, message queues, CPU
          time, processes (0: no fork, no threads) and address space; `random` seeded.
  record  ["S"] on the result pipe: set-up is done. Without it the host reports `infra`.
  run     exec the code, then evaluate each call; one record per call, written at once:
          [index, "ok", encoding, null] | [index, "exception" | "memory" | "output_too_large",
          null, message]. Exit 0. Nothing here compares values: expected values never get here.
"""

import builtins
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


def map_own_ids(uid, gid):
    """After unshare(CLONE_NEWUSER): map our own uid/gid to themselves (the one mapping an
    unprivileged process may write; /proc/self is only writable while we are dumpable)."""
    prctl(PR_SET_DUMPABLE, 1)
    write_file("/proc/self/setgroups", "deny")
    write_file("/proc/self/uid_map", f"{uid} {uid} 1")
    write_file("/proc/self/gid_map", f"{gid} {gid} 1")
    prctl(PR_SET_DUMPABLE, 0)


def enter_user_namespace(uid, gid):
    unshare(CLONE_NEWUSER)
    map_own_ids(uid, gid)


_CAPSET_ARGS = (ctypes.byref(_CapHeader(0x20080522, 0)), (_CapData * 2)())  # all sets empty; built once


def drop_all_capabilities():
    check(libc.capset(*_CAPSET_ARGS), "capset")



# Syscalls a job never needs and that mostly widen the kernel's attack surface or let state
# outlive the job: name -> (x86-64 number, aarch64 number). They fail with EPERM (clone3 and
# io_uring with ENOSYS, so that libc falls back / reports "not available").
_DENIED = {
    "ptrace": (101, 117), "syslog": (103, 116), "acct": (163, 89), "mount": (165, 40), "umount2": (166, 39),
    "swapon": (167, 224), "swapoff": (168, 225), "reboot": (169, 142), "sethostname": (170, 161),
    "setdomainname": (171, 162), "init_module": (175, 105), "delete_module": (176, 106), "quotactl": (179, 60),
    "kexec_load": (246, 104), "add_key": (248, 217), "request_key": (249, 218), "keyctl": (250, 219),
    "unshare": (272, 97), "perf_event_open": (298, 241), "name_to_handle_at": (303, 264),
    "open_by_handle_at": (304, 265), "setns": (308, 268), "process_vm_readv": (310, 270),
    "process_vm_writev": (311, 271), "finit_module": (313, 273), "kexec_file_load": (320, 294), "bpf": (321, 280),
    "userfaultfd": (323, 282), "open_tree": (428, 428), "move_mount": (429, 429), "fsopen": (430, 430),
    "fsconfig": (431, 431), "fsmount": (432, 432), "fspick": (433, 433), "mount_setattr": (442, 442),
    "pivot_root": (155, 41), "chroot": (161, 51), "vhangup": (153, 58), "lookup_dcookie": (212, 18),
}
_NOT_AVAILABLE = {"clone3": (435, 435), "io_uring_setup": (425, 425), "io_uring_enter": (426, 426),
                  "io_uring_register": (427, 427)}
_ARCHES = {"x86_64": (0, 0xC000003E), "aarch64": (1, 0xC00000B7)}
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter))]


def _seccomp_program():
    """A classic-BPF deny-list for this machine's architecture, or None where we have no table."""
    arch = _ARCHES.get(os.uname().machine)
    if arch is None:
        return None
    column, audit_arch = arch
    ld, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06
    denied = [nums[column] for nums in _DENIED.values()]
    absent = [nums[column] for nums in _NOT_AVAILABLE.values()]
    n = len(denied) + len(absent)
    allow = 3 + (1 if column == 0 else 0) + n  # index of the "allow" return; the denials follow it
    eperm, enosys = allow + 1, allow + 2
    code = [(ld, 0, 0, 4), (jeq, 0, eperm - 2, audit_arch), (ld, 0, 0, 0)]  # foreign arch: deny all
    if column == 0:  # x32 system calls (bit 30) on x86-64: deny
        code.append((jge, eperm - 4, 0, 0x40000000))
    for nr in denied:
        code.append((jeq, eperm - len(code) - 1, 0, nr))
    for nr in absent:
        code.append((jeq, enosys - len(code) - 1, 0, nr))
    code += [(ret, 0, 0, 0x7FFF0000), (ret, 0, 0, 0x00050000 | 1), (ret, 0, 0, 0x00050000 | 38)]
    filters = (_SockFilter * len(code))(*[_SockFilter(*c) for c in code])
    return _SockFprog(len(code), filters), filters


_SECCOMP = _seccomp_program()  # built once in the zygote; each child only installs it
_SECCOMP_ARGS = None if _SECCOMP is None else (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(_SECCOMP[0]), 0, 0)


def install_seccomp():
    if _SECCOMP_ARGS is not None:
        check(libc.prctl(*_SECCOMP_ARGS), "seccomp")


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
        if z.mode == "bwrap":  # a user namespace per job: nothing per-user (keyrings...) outlives it
            enter_user_namespace(z.uid, z.gid)
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
            enter_user_namespace(z.uid, z.gid)
        if z.mode != "unsafe":
            drop_all_capabilities()  # the ones the new user namespace gave us
        prctl(PR_SET_NO_NEW_PRIVS, 1)
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        install_seccomp()
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
    """"Type: message (line N)" for an exception raised by job code (its __str__ may misbehave)."""
    name = type(exc).__name__
    try:
        message = str(exc)
    except BaseException:
        message = "<unprintable>"
    text = f"{name}: {message}" if message else name
    tb, line = exc.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<solution>":
            line = tb.tb_lineno
        tb = tb.tb_next
    text = text[:2000]
    return text if line is None else f"{text} (line {line})"


def _run_calls(job):
    calls, cap = job["calls"], job["val_cap"]
    scope = {"__name__": "solution", "__builtins__": builtins}
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


