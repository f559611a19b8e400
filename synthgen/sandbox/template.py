"""The template: the clean process every job's child is forked from (standard library only).

The zygote forks it once, after its preload and before it reads anything from the host, so the
template's memory holds no job, no result and no earlier child's data, and it never receives
any: the zygote sends it only "fork a child" requests carrying the job's descriptors (a
read-only memory file with the job's JSON, and the result, stdout and stderr pipes) over a
SOCK_SEQPACKET socket pair (SCM_RIGHTS), plus three small numbers (the job's /tmp size, CPU
and memory limits) and, at the unsafe level, the job's working folder. A child forked from here
reads its own job from its own descriptor (child.run_child_from_fd), so no process that runs
job code ever held another job's data (the zygote, which does, is never forked again).

Messages (one datagram each; numbers big-endian):
  zygote -> template  b"F" + >III (tmp_mb, cpu_s, mem_mb) + workdir, with 4 descriptors
                      b"K" + >i pid: SIGKILL that child (only where no pidfd could be sent)
  template -> zygote  b"P" + >i pid, with the child's pidfd where the kernel has pidfd_open
                      b"X" + >iid (pid, wait status, CPU seconds) once it is reaped
                      b"E" + text: the fork failed (the zygote reports the job as infra)

The template is not dumpable, dies with the zygote (PR_SET_PDEATHSIG) and exits when the zygote
closes its end; each child dies with the template (child.py sets PR_SET_PDEATHSIG too), so a
job that kills its template ends itself, and the zygote, which sees the socket close, reports
the job as infra and exits for the pool to start a clean worker.
"""

import gc
import os
import select
import signal
import socket
import struct

import child as ch

FORK_REQUEST = struct.Struct(">III")
PID = struct.Struct(">i")
EXIT_REPORT = struct.Struct(">iid")
NO_PIDFD_POLL_MS = 2  # only where the kernel has no pidfd_open: how often to look for exits


class TemplateGone(Exception):
    """The template process ended (a job killed it, or it failed): the zygote cannot fork a clean
    child again (forking itself would hand job data on), so it reports the job as infra and exits."""


def start(prep, new_pid, keep_fds):
    """Fork the template; return the zygote's Handle on it. `keep_fds` are the zygote's own
    descriptors (its host channel) that the template must not hold."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pid = os.fork()
    if pid:
        theirs.close()
        return Handle(ours, pid)
    status = 0
    try:
        ours.close()
        for fd in keep_fds:
            os.close(fd)
        ch.prctl(ch.PR_SET_PDEATHSIG, signal.SIGKILL)
        ch.prctl(ch.PR_SET_DUMPABLE, 0)
        if os.getppid() == 1 and not new_pid:
            os._exit(1)  # the zygote is already gone
        Template(prep, new_pid, theirs).serve()
    except BaseException as exc:  # noqa: BLE001 (the zygote sees the socket close and reports it)
        status = 1
        try:
            os.write(2, f"sandbox template failed: {exc!r}\n".encode())
        except OSError:
            pass
    os._exit(status)


class Template:
    def __init__(self, prep, new_pid, sock):
        self.prep, self.new_pid, self.sock = prep, new_pid, sock
        self.base_pid_ns = os.open("/proc/self/ns/pid", os.O_RDONLY) if new_pid else -1
        self.pidfds = {}  # our pidfd of a live child -> its pid
        self.unwatched = set()  # live children we have no pidfd for (old kernels)
        self.poller = select.poll()
        self.poller.register(sock.fileno(), select.POLLIN)
        # Everything alive now lives as long as we do: keep the collector from walking it (a walk
        # writes to every object's header, so each page it visits is copied in live children).
        gc.freeze()

    def serve(self):
        sock_fd = self.sock.fileno()
        while True:
            timeout = NO_PIDFD_POLL_MS if self.unwatched else None
            for fd, _ in self.poller.poll(timeout):
                if fd == sock_fd:
                    msg, fds, _, _ = socket.recv_fds(self.sock, 4096, 4)
                    if not msg:
                        return  # the zygote is gone
                    self._request(msg, fds)
                else:
                    self._reap(self.pidfds.pop(fd))
                    self.poller.unregister(fd)
                    os.close(fd)
            for pid in list(self.unwatched):
                self._reap(pid, os.WNOHANG)

    def _request(self, msg, fds):
        kind = msg[:1]
        if kind == b"K":
            (pid,) = PID.unpack_from(msg, 1)
            if pid in self.unwatched:  # still our unreaped child: the pid cannot name another process
                os.kill(pid, signal.SIGKILL)
            return
        if kind != b"F" or len(fds) != 4:
            raise RuntimeError(f"bad request {msg[:1]!r} with {len(fds)} descriptors")
        try:
            self._fork(msg, fds)
        finally:
            for fd in fds:
                os.close(fd)

    def _fork(self, msg, fds):
        tmp_mb, cpu, mem_mb = FORK_REQUEST.unpack_from(msg, 1)
        workdir = msg[1 + FORK_REQUEST.size :].decode() or "/tmp"
        job_limits = self.prep.for_job({"tmp_mb": tmp_mb, "cpu": cpu, "mem_mb": mem_mb})
        job_fd, writes = fds[0], list(fds[1:])
        try:
            if self.new_pid:
                ch.unshare(ch.CLONE_NEWPID)
            try:
                pid = os.fork()
                if pid == 0:
                    ch.run_child_from_fd(self.prep, job_fd, job_limits, writes, workdir)  # never returns
            finally:
                if self.new_pid:  # later forks go back to our own pid namespace
                    ch.check(ch.libc.setns(self.base_pid_ns, ch.CLONE_NEWPID), "setns pid")
        except OSError as exc:
            self.sock.send(b"E" + f"could not fork the job's child: {exc!r}".encode())
            return
        try:
            pidfd = os.pidfd_open(pid)
        except (AttributeError, OSError):
            pidfd = -1
        if pidfd >= 0:
            self.pidfds[pidfd] = pid
            self.poller.register(pidfd, select.POLLIN)
            socket.send_fds(self.sock, [b"P" + PID.pack(pid)], [pidfd])
        else:
            self.unwatched.add(pid)
            self.sock.send(b"P" + PID.pack(pid))

    def _reap(self, pid, flags=0):
        got, status, usage = os.wait4(pid, flags)
        if not got:
            return
        self.unwatched.discard(pid)
        self.sock.send(b"X" + EXIT_REPORT.pack(pid, status, usage.ru_utime + usage.ru_stime))


class Handle:
    """The zygote's end of the template's socket: fork requests, kills, and the exit reports."""

    def __init__(self, sock, pid):
        self.sock, self.pid = sock, pid
        self.exits = {}  # pid -> (wait status, CPU seconds) reported and not yet asked for
        self.exiting = set()  # children answered for and killed, whose exit report has not come

    def fileno(self):
        return self.sock.fileno()

    def send_fork(self, fds, tmp_mb, cpu, mem_mb, workdir):
        """Ask for a child on these descriptors (job file, results, stdout, stderr)."""
        request = b"F" + FORK_REQUEST.pack(tmp_mb, cpu, mem_mb) + workdir.encode()
        try:
            socket.send_fds(self.sock, [request], fds)
        except OSError as exc:
            raise TemplateGone(f"could not reach it: {exc!r}") from None

    def forked(self):
        """(pid, pidfd or -1) of the child just asked for; RuntimeError if the fork failed."""
        while True:
            msg, fds = self._message()
            if msg is None:
                continue
            if msg[:1] == b"P":
                return PID.unpack_from(msg, 1)[0], (fds[0] if fds else -1)
            if msg[:1] == b"E":
                raise RuntimeError(msg[1:].decode("utf-8", "replace"))
            raise TemplateGone(f"unexpected message {msg[:1]!r}")

    def kill(self, pid, pidfd):
        """SIGKILL a child (its whole pid namespace); by pidfd, so that a reused pid is never hit."""
        if pidfd < 0:
            try:
                self.sock.send(b"K" + PID.pack(pid))
            except OSError:
                pass  # the template is gone, and its children with it
            return
        try:
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def has_exited(self, pid):
        return pid in self.exits

    def exit_of(self, pid):
        """(wait status, CPU seconds) of a child that exited or was killed, once it is reaped."""
        while pid not in self.exits:
            self._message()
        return self.exits.pop(pid)

    def forget(self, pid):
        """A child answered for: its exit report is not needed (`reap_exited` waits for it)."""
        if self.exits.pop(pid, None) is None:
            self.exiting.add(pid)

    def reap_exited(self, keep):
        """File the reports sent so far; wait while more than `keep` forgotten children live."""
        self.file_pending()
        while len(self.exiting) > keep:
            self._message()

    def file_pending(self):
        """File every message the template has sent so far (between forks: exit reports only)."""
        while select.select([self.sock], [], [], 0)[0]:
            msg, _ = self._message()
            if msg is not None:
                raise TemplateGone(f"unexpected message {msg[:1]!r}")

    def _message(self):
        """The template's next message (waits for it); exit reports are filed and give (None, [])."""
        try:
            msg, fds, _, _ = socket.recv_fds(self.sock, 4096, 1)
        except OSError as exc:
            raise TemplateGone(repr(exc)) from None
        if not msg:
            raise TemplateGone("its socket closed")
        if msg[:1] != b"X":
            return msg, fds
        pid, status, cpu = EXIT_REPORT.unpack_from(msg, 1)
        if pid in self.exiting:
            self.exiting.discard(pid)
        else:
            self.exits[pid] = (status, cpu)
        return None, fds
