"""The template: the clean process every job's child is forked from (standard library only).

The zygote forks it once, after its preload and before it reads anything from the host, so the
template's memory holds no job, no result and no earlier child's data, and it never receives
any. On the zygote's request it forks a *spare* child ahead of time (into a new pid namespace)
that waits on a socket of its own; the zygote hands each job to a spare: the job's descriptors
(a memory file with the job's data, the result, stdout and stderr pipes) over SCM_RIGHTS, with
three small numbers (the job's /tmp size, CPU and memory limits) and, at the unsafe level, the
job's working folder. The spare reads its own job from that file (child.run_child_from_fd), so
no process that runs job code ever held another job's data (the zygote, which does, is never
forked again), and the fork itself is off the job's path: the next spare is forked while the
current job runs.

Messages (one datagram each over SOCK_SEQPACKET; numbers big-endian):
  zygote -> template  b"F" + count (1 byte): fork that many spares (back to back, the messages
                      about them after: see _request)
                      b"K" + >i pid: SIGKILL that child (only where no pidfd could be sent)
  template -> zygote  b"P" + >i pid, with the spare's socket and its pidfd (where the kernel
                      has pidfd_open)
                      b"X" + >iid (pid, wait status, CPU seconds) once a child is reaped
                      b"E" + text: the fork failed (the zygote reports the job as infra)
  zygote -> spare     b"J" + >III (tmp_mb, cpu_s, mem_mb) + workdir, with 4 descriptors

The template is not dumpable, dies with the zygote (PR_SET_PDEATHSIG) and exits when the zygote
closes its end; each spare dies with the template (PR_SET_PDEATHSIG, set first thing) and exits
if its socket closes unused, so a job that kills its template ends itself, and the zygote, which
sees the template's socket close, reports the job as infra and exits for the pool to start a
clean worker.
"""

import collections
import gc
import os
import select
import signal
import socket
import struct

import child as ch

JOB_LIMITS = struct.Struct(">III")
PID = struct.Struct(">i")
EXIT_REPORT = struct.Struct(">iid")
# Spares forked per request once jobs flow: forked back to back, each costs the template ~85 page
# faults instead of ~106 one at a time (8: ~79; see Template._request). A waiting spare holds ~50
# pages of its own.
SPARES_PER_REQUEST = 4
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
    except (BrokenPipeError, ConnectionResetError):
        pass  # the zygote ended first
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
        ch.contest_runner.prepare()  # the contest preamble's namespace, which every child starts from
        # Everything alive now lives as long as we do: keep the collector from walking it (a walk
        # writes to every object's header, so each page it visits is copied in live children).
        gc.freeze()

    def serve(self):
        sock_fd = self.sock.fileno()
        while True:
            timeout = NO_PIDFD_POLL_MS if self.unwatched else None
            for fd, _ in self.poller.poll(timeout):
                if fd == sock_fd:
                    try:
                        msg, fds, _, _ = socket.recv_fds(self.sock, 4096, 4)
                    except ConnectionResetError:  # the zygote ended with our messages unread
                        return
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
        for fd in fds:  # no request carries descriptors
            os.close(fd)
        kind = msg[:1]
        if kind == b"K":
            (pid,) = PID.unpack_from(msg, 1)
            if pid in self.unwatched:  # still our unreaped child: the pid cannot name another process
                os.kill(pid, signal.SIGKILL)
            return
        if kind != b"F":
            raise RuntimeError(f"bad request {msg[:1]!r}")
        # The forks come first, back to back, and the messages after: after each fork every page
        # we write is a copy-on-write fault, so the less we do between forks the fewer we take.
        forked = []
        for _ in range(msg[1]):
            forked.append(self._fork_spare(held=[spare for spare in forked if type(spare) is not str]))
        for spare in forked:
            self._announce(spare)

    def _fork_spare(self, held):
        """Fork one spare (a new pid namespace where we can): (pid, our end of its socket), or why
        the fork failed. `held`: the sockets of spares forked before it, not yet handed on (the
        new spare closes them first thing, with ours)."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            if self.new_pid:
                ch.unshare(ch.CLONE_NEWPID)
            try:
                pid = os.fork()
                if pid == 0:
                    _spare(self.prep, theirs, (ours, self.sock, *(sock for _, sock in held)))  # never returns
            finally:
                if self.new_pid:  # later forks go back to our own pid namespace
                    ch.check(ch.libc.setns(self.base_pid_ns, ch.CLONE_NEWPID), "setns pid")
        except OSError as exc:
            ours.close()
            return f"could not fork the job's child: {exc!r}"
        finally:
            theirs.close()
        return pid, ours

    def _announce(self, spare):
        """Tell the zygote of a spare (its pid, its socket and a pidfd), or why its fork failed."""
        if type(spare) is str:
            self.sock.send(b"E" + spare.encode())
            return
        pid, ours = spare
        try:
            pidfd = os.pidfd_open(pid)
        except (AttributeError, OSError):
            pidfd = -1
        if pidfd >= 0:
            self.pidfds[pidfd] = pid
            self.poller.register(pidfd, select.POLLIN)
        else:
            self.unwatched.add(pid)
        socket.send_fds(self.sock, [b"P" + PID.pack(pid)], [ours.fileno()] + ([pidfd] if pidfd >= 0 else []))
        ours.close()

    def _reap(self, pid, flags=0):
        got, status, usage = os.wait4(pid, flags)
        if not got:
            return
        self.unwatched.discard(pid)
        self.sock.send(b"X" + EXIT_REPORT.pack(pid, status, usage.ru_utime + usage.ru_stime))


def _spare(prep, sock, inherited):
    """A spare child: wait for one job's descriptors, then run it. Never returns."""
    try:
        ch.prctl(ch.PR_SET_PDEATHSIG, signal.SIGKILL)
        for other in inherited:  # the template's sockets: their peers must see EOF when it ends
            other.close()
        msg, fds, _, _ = socket.recv_fds(sock, 4096, 4)
        if not msg or msg[:1] != b"J" or len(fds) != 4:
            os._exit(0)  # handed no job (the zygote or template ended)
        tmp_mb, cpu, mem_mb = JOB_LIMITS.unpack_from(msg, 1)
        workdir = msg[1 + JOB_LIMITS.size :].decode() or "/tmp"
        job_limits = prep.for_job({"tmp_mb": tmp_mb, "cpu": cpu, "mem_mb": mem_mb})
    except BaseException:
        os._exit(ch.EXIT_SETUP)
    ch.run_child_from_fd(prep, fds[0], job_limits, list(fds[1:]), workdir)


class Handle:
    """The zygote's end of the template's socket: fork requests, kills, and the exit reports."""

    def __init__(self, sock, pid):
        self.sock, self.pid = sock, pid
        self.exits = {}  # pid -> (wait status, CPU seconds) reported and not yet asked for
        self.exiting = set()  # children answered for and killed, whose exit report has not come
        self.spares = collections.deque()  # (pid, socket fd, pidfd) of spares, or why a fork failed
        self.coming = 0  # spares asked for whose message has not come yet

    def fileno(self):
        return self.sock.fileno()

    def request_spares(self, count):
        """Ask for `count` spare children (forked while the current job runs)."""
        try:
            self.sock.send(b"F" + bytes([count]))
        except OSError as exc:
            raise TemplateGone(f"could not reach it: {exc!r}") from None
        self.coming += count

    def stock(self):
        """Spares at hand or on their way."""
        return len(self.spares) + self.coming

    def spare(self):
        """(pid, its socket, pidfd or -1) of the oldest spare asked for; RuntimeError if its fork
        failed. When it was the last one at hand or on its way, the next SPARES_PER_REQUEST are
        asked for (forked while this job runs; after failed forks too, so no wait is endless)."""
        while not self.spares:
            self._message()
        spare = self.spares.popleft()
        if not self.stock():
            self.request_spares(SPARES_PER_REQUEST)
        if isinstance(spare, str):
            raise RuntimeError(spare)
        return spare

    @staticmethod
    def hand_job(spare_fd, fds, tmp_mb, cpu, mem_mb, workdir):
        """Give a spare its job's descriptors; False if the spare is gone."""
        sock = socket.socket(fileno=spare_fd)
        try:
            socket.send_fds(sock, [b"J" + JOB_LIMITS.pack(tmp_mb, cpu, mem_mb) + workdir.encode()], fds)
            return True
        except OSError:
            return False
        finally:
            sock.close()

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
        """File every message the template has sent so far."""
        while select.select([self.sock], [], [], 0)[0]:
            self._message()

    def _message(self):
        """Wait for the template's next message and file it: an exit report, or a spare (or why
        the fork of one failed)."""
        try:
            msg, fds, _, _ = socket.recv_fds(self.sock, 4096, 2)
        except OSError as exc:
            raise TemplateGone(repr(exc)) from None
        if not msg:
            raise TemplateGone("its socket closed")
        kind = msg[:1]
        if kind == b"X":
            pid, status, cpu = EXIT_REPORT.unpack_from(msg, 1)
            if pid in self.exiting:
                self.exiting.discard(pid)
            else:
                self.exits[pid] = (status, cpu)
        elif kind == b"P" and fds:
            self.coming -= 1
            self.spares.append((PID.unpack_from(msg, 1)[0], fds[0], fds[1] if len(fds) > 1 else -1))
            return
        elif kind == b"E":
            self.coming -= 1
            self.spares.append(msg[1:].decode("utf-8", "replace"))
        else:
            raise TemplateGone(f"unexpected message {kind!r}")
        for fd in fds:
            os.close(fd)
