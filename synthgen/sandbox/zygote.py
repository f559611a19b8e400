"""The zygote: one per worker, the clean process every job's child is forked from (standard library only).

The pool copies this file and its siblings (isolation.SANDBOX_MODULES) into a private folder and starts
`python3 -S -s -B zygote.py MODE HASHSEED [LIBRARY...]` (MODE "bwrap", inside bubblewrap, or "unsafe") with fd 0 a
SOCK_SEQPACKET socket to the host. It forks once and leaves a shim waiting behind: in bwrap mode
after unsharing a user, pid and mount namespace, so that the zygote is pid 1 there and holds the
capabilities (in that namespace only) to give each job a fresh pid namespace and tmpfs /tmp. The
zygote is not dumpable, preloads common modules (and LIBRARY...) and sends b"R".

It never reads job data: the host writes each job into a memory file and sends only descriptors,
that file and the write ends of the job's result, stdout and stderr pipes. The zygote forks the
job's child (pid 1 of a new pid namespace: killing it ends everything it started), closes its
copies, enforces the wall clock, reaps the child (SIGCHLD wakes it) and reports how it ended;
the child reads its own job (child.py), the host reads the pipes and judges. Messages, one
datagram each, a kind byte then JSON:
  host -> zygote  b"J" {"id", "timeout"} with the 4 descriptors: start that job's child
                  b"K" {"id"}: kill that job's child now (it answered, or is over a cap)
  zygote -> host  b"R" {"pid", "python"} once ready
                  b"X" {"id", "end": "exit" | "signal" | "timeout", "code", "signal", "cpu"} once reaped
"""

import json
import os
import select
import shutil
import signal
import socket
import sys
import tempfile
import time

import child as ch  # (the folder of this script is first on sys.path)
import contest_runner

PRELOAD = (  # imported once here rather than in every child
    "abc array ast base64 bisect calendar cmath collections collections.abc contextlib copy csv "
    "dataclasses datetime decimal enum fractions functools heapq io itertools json keyword math "
    "numbers operator pprint random re statistics string struct textwrap types typing unicodedata"
)


class Zygote:
    def __init__(self, mode, seed, sock):
        self.mode, self.seed, self.sock = mode, seed, sock
        self.base_pid_ns = os.open("/proc/self/ns/pid", os.O_RDONLY) if mode == "bwrap" else -1
        self.children = {}  # pid -> Child, until reaped

    def serve(self):
        """Start, kill and reap children until the host closes the socket."""
        wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.signal(signal.SIGCHLD, lambda *_: None)  # only to wake the poll below
        signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
        poller = select.poll()
        poller.register(self.sock, select.POLLIN)
        poller.register(wake_r, select.POLLIN)
        while True:
            now = time.monotonic()
            for kid in self.children.values():
                if not kid.timed_out and now >= kid.deadline:
                    kid.kill(timed_out=True)
            deadlines = [kid.deadline - now for kid in self.children.values() if not kid.timed_out]
            events = poller.poll(max(0.0, min(deadlines)) * 1000 + 1 if deadlines else None)
            for fd, _ in events:
                if fd == wake_r:
                    while os.read(wake_r, 1 << 10) == 1 << 10:
                        pass
                    self._reap_exited()
                    continue
                msg, fds, _, _ = socket.recv_fds(self.sock, 1 << 12, 4)
                if not msg:
                    return 0
                body = json.loads(msg[1:])
                if msg[:1] == b"J" and len(fds) == 4:
                    kid = self.start(body["id"], body["timeout"], fds)
                    self.children[kid.pid] = kid
                elif msg[:1] == b"K":
                    for kid in self.children.values():
                        if kid.id == body["id"]:
                            kid.kill()
                else:
                    raise RuntimeError(f"bad message {msg[:1]!r} with {len(fds)} descriptors")

    def _reap_exited(self):
        while self.children:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
            if not pid:
                return
            self._send(b"X", self.children.pop(pid).report(status, usage))

    def start(self, job_id, timeout, fds):
        """Fork the child of one job (fds: its job file and its pipes' write ends, closed here)."""
        workdir = "/tmp" if self.mode == "bwrap" else tempfile.mkdtemp(prefix="job-")
        try:
            if self.base_pid_ns >= 0:
                ch.unshare(ch.CLONE_NEWPID)  # the next fork is pid 1 of a new pid namespace
            try:
                pid = os.fork()
                if pid == 0:
                    ch.run_child(self.mode, self.seed, fds, workdir)  # never returns
            finally:
                if self.base_pid_ns >= 0:  # back to our own, or the next unshare would fail
                    ch.check(ch.libc.setns(self.base_pid_ns, ch.CLONE_NEWPID), "setns")
        finally:
            for fd in fds:
                os.close(fd)
        return Child(job_id, pid, time.monotonic() + timeout, workdir)

    def _send(self, kind, body):
        self.sock.send(kind + json.dumps(body).encode())


class Child:
    def __init__(self, job_id, pid, deadline, workdir):
        self.id, self.pid, self.deadline, self.workdir = job_id, pid, deadline, workdir
        self.timed_out = False

    def kill(self, timed_out=False):
        self.timed_out = self.timed_out or timed_out
        os.kill(self.pid, signal.SIGKILL)  # ours and not yet reaped: the pid cannot name another process

    def report(self, status, usage):
        """The exit report of this child, reaped with `status` and `usage`."""
        if self.workdir != "/tmp":
            shutil.rmtree(self.workdir, ignore_errors=True)
        signaled = os.WIFSIGNALED(status)
        return {
            "id": self.id,
            "end": "timeout" if self.timed_out else "signal" if signaled else "exit",
            "code": None if signaled else os.WEXITSTATUS(status),
            "signal": os.WTERMSIG(status) if signaled else None,
            "cpu": usage.ru_utime + usage.ru_stime,
        }


def _shim(mode):
    """Fork once and wait here, exiting with the zygote's status (so bwrap ends when it does).
    In bwrap mode first enter a user, pid and mount namespace of our own (see the docstring)."""
    if mode == "bwrap":
        maps = ch.id_maps(os.getuid(), os.getgid())
        ch.unshare(ch.CLONE_NEWUSER | ch.CLONE_NEWPID | ch.CLONE_NEWNS)
        ch.map_own_ids(maps)
        ch.make_mounts_private()
    pid = os.fork()
    if pid == 0:
        ch.prctl(ch.PR_SET_PDEATHSIG, signal.SIGKILL)  # killed with the shim (at "unsafe" a job can reach it)
        return
    os.closerange(0, 1 << 20)
    while True:
        try:
            os._exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) & 0xFF)
        except InterruptedError:
            continue


def main(argv):
    mode, seed = argv[1], int(argv[2])
    if mode not in ("bwrap", "unsafe"):
        raise SystemExit(f"unknown mode {mode!r}")
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    ch.prctl(ch.PR_SET_PDEATHSIG, signal.SIGKILL)  # outside bwrap, die with the worker's thread
    sock = socket.socket(fileno=os.dup(0))
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.dup2(2, 1)  # a stray print goes to the log
    _shim(mode)
    ch.prctl(ch.PR_SET_DUMPABLE, 0)  # no job can open our /proc/<pid>/mem
    for name in PRELOAD.split() + argv[3:]:
        try:
            __import__(name)
        except Exception:  # noqa: BLE001 (a module that cannot load here is simply not preloaded)
            pass
    contest_runner.prepare()
    zygote = Zygote(mode, seed, sock)
    zygote._send(b"R", {"pid": os.getpid(), "python": sys.version.split()[0]})
    return zygote.serve()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
