"""Sandbox zygote: a small pre-started Python that runs one fresh child per job (standard library only).

The pool copies this file and the other modules in isolation.SANDBOX_MODULES into a private folder and starts

    python3 -S -s -B zygote.py MODE HASHSEED [UID GID]

MODE is "bwrap" (already inside bubblewrap as an unprivileged user), "setuid" (started as root
on the host) or "unsafe" (rlimits only). It imports nothing from synthgen.

Start-up, by mode:
  bwrap   unshare a user, pid and mount namespace of its own and fork once; the forked copy is
          pid 1 there and holds all capabilities *inside* that user namespace only, which is what
          lets it give every job a fresh pid namespace and its child a fresh tmpfs /tmp.
  setuid  unshare the network and mount namespaces (no network for any job).
  every   PR_SET_DUMPABLE=0 (no job can open our /proc/<pid>/mem), common stdlib modules
          pre-imported, a lean template forked (template.py), numpy imported, a heavy one forked
          for jobs naming numpy (it costs a fork ~2 ms), a self-test through each, then "ready".

Per job: the zygote puts the job (marshal data) in a memory file of its own, makes the result, stdout
and stderr pipes, and hands those descriptors to a spare child the template forked ahead of time (pid 1
of a new pid namespace, so it cannot see or signal the zygote or the template, and killing it ends
everything it started), which reads its job from that file; the template forks the next spare
meanwhile. Jobs pass through the zygote's memory but no child is ever forked from it, so no job can
read another's code, calls or results (the template that forks them never held any). child.py says
what the child does. The zygote watches the child's pipes and a pidfd, enforces the wall clock with
SIGKILL, caps what it keeps, and forwards raw bytes to the host, which decodes and judges them; the
template reaps the children and reports their exit status and CPU time. Nothing in here decides
whether an answer is right. If a template dies (a job at the unsafe level can kill it), the
zygote reports the job as infra and exits with status 3; the pool starts a fresh worker.

Wire format (all lengths 4-byte big-endian): frames are LEN + KIND(1 byte) + BODY.
  host -> zygote  b"J" + the job: a dict of str, int, float, bool, None and lists, as marshal
                  data of version 4 (any Python 3 reads it, and its reader is C alone: a fresh
                  child decoding JSON runs the json package's Python code, ~15 more pages copied)
  zygote -> host  b"R" + info JSON (ready) | b"D" + header JSON, results, stdout, stderr (each LEN + bytes);
                  a header with "stop": true is the zygote's last frame (jobs sent after it never ran)
  child -> zygote (result pipe) LEN + JSON records: ["S"] once set-up is done, then one
  [index, status, encoding, error] per call in order.
"""

import fcntl
import gc
import importlib.util
import json
import marshal
import os
import select
import shutil
import signal
import struct
import sys
import tempfile
import time

import child as ch  # (the folder of this script is first on sys.path)
import template as tp

PRELOAD = (  # common standard modules, imported once here, not per child
    "abc array ast base64 bisect calendar cmath collections collections.abc contextlib copy csv "
    "dataclasses datetime decimal enum fractions functools heapq io itertools json keyword math "
    "numbers operator pprint random re statistics string struct textwrap types typing unicodedata"
)
HEAVY = ("numpy",)  # preloaded (where sandbox.libraries binds it) in the heavy template only
F_SETPIPE_SZ = 1031
RESULT_POLL_S = 0.005
MAX_EXITING = 4  # answered children whose exit is not yet reported, at most; beyond, the zygote waits
_U32 = struct.Struct(">I")

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


def _frame(kind, *parts):
    if kind != b"D":
        body = kind + parts[0]
        return _U32.pack(len(body)) + body
    pack = _U32.pack
    body = bytearray(kind)
    for part in parts:
        body += pack(len(part))
        body += part
    return pack(len(body)) + body


# ---------------------------------------------------------------------------------------------
# the zygote


class Zygote:
    def __init__(self, mode, seed, uid, gid, chan_in, chan_out):
        self.mode, self.seed, self.uid, self.gid = mode, seed, uid, gid
        self.chan_in, self.chan_out = chan_in, chan_out
        self.prep = ch.Prepared(mode, uid, gid, seed, None if mode == "unsafe" else "/tmp")
        self.prep.fixed_environment()
        # Before anything from the host is read: no template's memory ever holds a job.
        new_pid = mode in ("bwrap", "setuid")
        # Bound under /tmp (a venv there), a heavy library is hidden by each job's fresh /tmp: one template.
        hidden = any(_hidden_from_jobs(name) for name in HEAVY)
        self.templates = [] if hidden else [tp.start(self.prep, new_pid, (chan_in, chan_out))]  # lean
        self.heavy_names = [name.encode() for name in HEAVY if _preload(name) and not hidden]
        if self.heavy_names or hidden:
            self.templates.append(tp.start(self.prep, new_pid, (chan_in, chan_out)))
        self.lean, self.heavy = self.templates[0], self.templates[-1]
        for template in self.templates:
            template.request_spares(1)  # the first job's child

    def template_for(self, text):
        """The heavy template if the job's data names a heavy library, else the lean one (marshal keeps
        a str's characters as they are: ASCII or UTF-8)."""
        return self.heavy if any(name in text for name in self.heavy_names) else self.lean

    def serve(self):
        """Run jobs until the host closes the channel (0) or the template is gone (3)."""
        while True:
            head = _read_exact(self.chan_in, 4)
            if head is None:
                return 0
            body = _read_exact(self.chan_in, _U32.unpack(head)[0])
            if body is None or body[:1] != b"J":
                return 0
            gone, raw = None, memoryview(body)[1:]
            try:
                frame = self.run_job(marshal.loads(raw), raw, self.template_for(body))
            except tp.TemplateGone as exc:
                gone = exc
                header = {"end": "infra", "error": f"the sandbox's template process ended ({exc})", "stop": True}
                frame = _frame(b"D", json.dumps(header).encode(), b"", b"", b"")
            except Exception as exc:  # the sandbox could not run it: the host reports infra
                header = {"end": "infra", "error": f"zygote could not run the job: {exc!r}"}
                frame = _frame(b"D", json.dumps(header).encode(), b"", b"", b"")
            del body, raw
            ch.write_all(self.chan_out, frame)
            if gone is not None:
                sys.stderr.write(f"sandbox template process ended ({gone}): this worker stops\n")
                return 3

    def run_job(self, job, raw, template):
        """Run one job (`raw`: its marshal data) in a spare child of `template`; return the b"D" frame.

        The child gets its job through a memory file of its own and writes to fresh pipes; what
        it is sent is only those descriptors and three numbers. Taking the last spare asks for the
        next batch (template.Handle.spare), which the template forks while this job runs."""
        t0 = time.monotonic()
        for each in self.templates:
            each.reap_exited(MAX_EXITING)
        workdir = tempfile.mkdtemp(prefix="job-") if self.mode == "unsafe" else ""
        reads, sent, pidfd = [], [], -1
        try:
            job_fd = os.memfd_create("job")
            sent.append(job_fd)
            ch.write_all(job_fd, raw)
            for _ in range(3):  # results, stdout, stderr
                r, w = os.pipe()
                reads.append(r)
                sent.append(w)
            try:
                fcntl.fcntl(sent[1], F_SETPIPE_SZ, 1 << 20)
            except OSError:
                pass  # over this user's pipe-buffer allowance: the default size still works
            for attempt in range(3):
                pid, spare_fd, pidfd = template.spare()
                if template.hand_job(spare_fd, sent, job["tmp_mb"], job["cpu"], job["mem_mb"], workdir):
                    break
                template.kill(pid, pidfd)  # a spare that died waiting: take the next one
                template.forget(pid)
                if pidfd >= 0:
                    os.close(pidfd)
                pidfd = -1
                if attempt == 2:
                    raise RuntimeError("the template's spare children keep dying")
            for fd in sent:
                os.close(fd)
            sent.clear()
            try:
                header, res, out, err = self._supervise(template, pid, pidfd, job, reads, t0)
            except tp.TemplateGone:
                template.kill(pid, pidfd)
                raise
        finally:
            for fd in reads + sent + ([pidfd] if pidfd >= 0 else []):
                os.close(fd)
            if workdir:
                shutil.rmtree(workdir, ignore_errors=True)
        return _frame(b"D", header, res, out, err)

    # ---- one child ---------------------------------------------------------------------------

    def _supervise(self, template, pid, pidfd, job, fds, t0):
        """Wait for the child within the wall clock, collecting its pipes; kill it if it must stop.
        Returns the header (JSON) and what the result, stdout and stderr pipes held.

        The result pipe (1 MiB) is read when the child closes it (after its last record, ["E"]), on
        its exit or every RESULT_POLL_S; output pipes as data comes. After ["E"] the answer goes back
        at once; the exit report (pidfd, or the template's) is collected during later jobs.
        """
        bufs = [bytearray(), bytearray(), bytearray()]  # by index: results, stdout, stderr
        totals = [0, 0, 0]
        for fd in fds:
            os.set_blocking(fd, False)
        poller = select.poll()
        poller.register(fds[0], 0)  # no wake-up per record; POLLHUP once the child has closed it
        poller.register(fds[1], select.POLLIN)
        poller.register(fds[2], select.POLLIN)
        # The exit shows on the pidfd; without one, as the template's exit report. (With a pidfd,
        # reports of earlier children wait for the next job's start: no extra wake-up here.)
        template_fd = -1 if pidfd >= 0 else template.fileno()
        poller.register(pidfd if pidfd >= 0 else template_fd, select.POLLIN)
        deadline = t0 + job["timeout"]
        wait_ms = RESULT_POLL_S * 1000.0
        end = None
        while not end:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                end = "timeout"
                break
            exited = closed = False
            for fd, _ in poller.poll(min(remaining * 1000.0, wait_ms)):
                if fd == pidfd:
                    exited = True
                elif fd == template_fd:
                    template.file_pending()
                    exited = exited or template.has_exited(pid)
                elif fd == fds[0]:
                    closed = True
                    poller.unregister(fd)
                elif not end:
                    i = 1 if fd == fds[1] else 2
                    end, eof = self._drain(fd, i, bufs, totals, job)
                    if eof:
                        poller.unregister(fd)
            end = end or self._drain(fds[0], 0, bufs, totals, job)[0]
            if exited:
                break
            if closed and not end and bufs[0].endswith(ch.END_RECORD):
                end = "done"  # every call reported: answer now, without waiting for the exit
                break
        if end == "done":
            return self._answer_now(template, pid, pidfd, job, fds, bufs, totals, t0)
        if end:
            template.kill(pid, pidfd)
        status, cpu = template.exit_of(pid)
        for i in range(3):  # every writer is gone now: take what is left in the pipes (within the caps)
            stop = self._drain(fds[i], i, bufs, totals, job)[0]
            end = end or stop
        if end is None:
            end = "signal" if os.WIFSIGNALED(status) else "exit"
        header = '{"end":"%s","code":%s,"signal":%s,"cpu":%r,"wall":%r,"out_total":%d,"err_total":%d}' % (
            end,
            os.WEXITSTATUS(status) if os.WIFEXITED(status) else "null",
            os.WTERMSIG(status) if os.WIFSIGNALED(status) else "null",
            cpu,
            time.monotonic() - t0,
            totals[1],
            totals[2],
        )
        return header.encode(), bytes(bufs[0]), bytes(bufs[1]), bytes(bufs[2])

    def _answer_now(self, template, pid, pidfd, job, fds, bufs, totals, t0):
        """The header and pipes of a child that reported everything; it is killed (a job that wrote
        ["E"] early ends there) and, while the host has the next job waiting, its exit report is
        left for `_reap_exited` (when idle, it is awaited first: no process outlives its answer)."""
        template.kill(pid, pidfd)
        template.forget(pid)
        if not select.select([self.chan_in], [], [], 0)[0]:  # no job waiting: nothing to gain, wait now
            template.reap_exited(0)
        end = None
        for i in (1, 2):  # it flushed them before closing the result pipe: what is there is all
            end = end or self._drain(fds[i], i, bufs, totals, job)[0]
        header = '{"end":"%s","code":null,"signal":null,"cpu":null,"wall":%r,"out_total":%d,"err_total":%d}' % (
            end or "done",
            time.monotonic() - t0,
            totals[1],
            totals[2],
        )
        return header.encode(), bytes(bufs[0]), bytes(bufs[1]), bytes(bufs[2])

    @staticmethod
    def _drain(fd, i, bufs, totals, job):
        """Read what pipe `i` (0 results, 1 stdout, 2 stderr) holds, within the caps: (why the child
        must stop or None, at EOF)."""
        buf = bufs[i]
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except BlockingIOError:
                return None, False
            if not chunk:
                return None, True
            totals[i] += len(chunk)
            if i == 0:
                if totals[0] > job["res_cap"]:
                    return "results", False
                buf += chunk
                continue
            room = job["out_keep"] - len(buf)
            if room > 0:
                buf += chunk[:room]
            if totals[1] + totals[2] > job["out_limit"]:
                return "output", False


# ---------------------------------------------------------------------------------------------
# start-up


def _enter_own_namespaces():
    """bwrap mode: become pid 1 of a user+pid+mount namespace we hold capabilities in."""
    uid, gid = os.getuid(), os.getgid()
    ch.unshare(ch.CLONE_NEWUSER | ch.CLONE_NEWPID | ch.CLONE_NEWNS)
    ch.map_own_ids(ch.id_maps(uid, gid))
    ch.make_mounts_private()
    pid = os.fork()
    if pid:  # stay as a shim: exit with the zygote's status, so bwrap ends when it does
        os.closerange(0, 1 << 20)
        ch.prctl(ch.PR_SET_DUMPABLE, 0)
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
        ch.prctl(ch.PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() == 1:
            return 1
    if mode == "bwrap":
        uid, gid = _enter_own_namespaces()
    elif mode == "setuid":
        uid, gid = int(argv[3]), int(argv[4])
        ch.unshare(ch.CLONE_NEWNET | ch.CLONE_NEWNS)
        ch.make_mounts_private()
    elif mode == "unsafe":
        uid, gid = os.getuid(), os.getgid()
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    ch.prctl(ch.PR_SET_DUMPABLE, 0)
    loaded = sum(_preload(name) for name in PRELOAD.split())
    zygote = Zygote(mode, seed, uid, gid, chan_in, chan_out)
    _self_test(zygote)
    gc.freeze()  # what is alive now lives as long as the zygote: no collection need walk it again
    info = {
        "pid": os.getpid(),
        "templates": [template.pid for template in zygote.templates],
        "mode": mode,
        "python": sys.version.split()[0],
        "preloaded": loaded + len(zygote.heavy_names),
    }
    ch.write_all(chan_out, _frame(b"R", json.dumps(info).encode()))
    return zygote.serve()


def _hidden_from_jobs(name):
    """Whether `name` would load from a folder each job's child mounts afresh (/tmp)."""
    try:
        spec = importlib.util.find_spec(name)
        return bool(spec and spec.origin and os.path.realpath(spec.origin).startswith(("/tmp/", "/var/tmp/")))
    except (ImportError, ValueError):
        return False


def _preload(name):
    """Import `name` now (so that children find it loaded); False if it cannot load here."""
    try:
        __import__(name)
        return True
    except Exception:  # noqa: BLE001 (a library that cannot load here is simply not preloaded)
        return False


def _self_test(zygote):
    job = {"code": "def f(x):\n    return [x, 'a', (1.5,)]\n", "calls": ["f(2)"], "timeout": 10.0, "cpu": 10}
    job.update(mem_mb=1024, tmp_mb=1, out_keep=1024, out_limit=1 << 16, val_cap=1 << 16, res_cap=1 << 17)
    for template in zygote.templates:
        frame = zygote.run_job(job, marshal.dumps(job, 4), template)
        expected = b'["S"]' in frame and b'[0,"ok","[2,\\"a\\",{\\"tuple\\":[{\\"float\\":\\"1.5\\"}]}]",null]' in frame
        if not expected:
            sys.stderr.write(f"zygote self-test failed: {frame[:2000]!r}\n")
            raise SystemExit(3)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
