"""A contest-tests job inside the sandbox's child: one process, the program compiled once, a
sample's tests run in order (standard library only; copied next to zygote.py with child.py).

The semantics are LiveCodeBench's grader's (lcb_runner/evaluation/testing_util.py):
  * its preamble of imports (`from string import *` ... `from builtins import *`, the modules
    themselves, a recursion limit of 50000) runs first, in the program's namespace (mode
    "expr", HumanEval's, runs the program bare: `preamble` false); it runs once, in the
    template, and each child starts from that namespace (contest_program.py);
  * mode "stdin": a trailing `if __name__ == '__main__':` is unwrapped, top-level imports are
    hoisted, everything else becomes the body of one function, called once per test with the
    test's input on standard input (a real in-memory file on fd 0, so `input()`, `sys.stdin`,
    `open(0)` and `sys.stdin.buffer` all read it); what it printed (fd 1, an in-memory file
    per test) is reported; `exit()` ends a test normally, its status ignored;
  * mode "call": the module runs once; with `class Solution` in the code one `Solution()`
    instance serves every test, else the module-level function; each test's arguments are a
    value encoding (a list), the returned value is reported as an encoding (numpy scalars as
    Python numbers, Fraction exactly);
  * mode "expr": each test is an expression evaluated in the module's namespace;
  * int/str conversion up to 50000 digits; threads allowed (new processes are not: seccomp);
  * each test, and the load, has its own limit: `test_cpu` seconds of CPU time and `test_wall`
    seconds of wall clock less the time the process waited for a core (the kernel's run-queue
    delay, /proc/self/schedstat), so a busy machine neither cuts a test nor lets one run
    longer; the run stops after the first test that did not end "ok".
Nothing here compares: expected outputs never get here. One record per test that ran,
[index, status, text, error, cpu_s, wall_s] (status ok | exception | memory | output_too_large |
timeout); the caller (child.run_job) then ends the job.
"""

import math
import os
import resource
import signal
import sys
import time

import child
import contest_program
import values

INT_DIGITS = 50000
_now = {"index": 0, "cpu": 0.0, "wall": 0.0, "waited": 0.0, "limit": 0.0, "sent": 0, "cap": 0}


def prepare():
    """In the template, before it forks any child: the preamble's namespace."""
    contest_program.prepare_namespace()


def _record(i, status, text, error, cpu, wall):
    _now["sent"] += child.emit(i, status, text, None if error is None else error[:2000], cpu, wall)


# ---- limits ---------------------------------------------------------------------------------


def _arm(index, limits):
    """Start test `index`'s clocks: SIGPROF after its CPU time, SIGALRM after its wall clock, and a
    soft RLIMIT_CPU a second later (SIGXCPU kills even code that never returns to Python)."""
    cpu_limit, wall_limit, hard = limits
    _now.update(index=index, cpu=time.process_time(), wall=time.monotonic(), waited=_run_queue_s(), limit=wall_limit)
    soft = math.ceil(_now["cpu"] + cpu_limit) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (min(soft, hard), hard))
    signal.setitimer(signal.ITIMER_PROF, cpu_limit)
    signal.setitimer(signal.ITIMER_REAL, wall_limit)


def _disarm():
    signal.setitimer(signal.ITIMER_PROF, 0)
    signal.setitimer(signal.ITIMER_REAL, 0)
    return time.process_time() - _now["cpu"], time.monotonic() - _now["wall"]


def _run_queue_s():
    """Seconds this process's main thread has spent runnable but waiting for a core (0 if unknown)."""
    try:
        fd = os.open("/proc/self/schedstat", os.O_RDONLY | os.O_CLOEXEC)
        try:
            return int(os.read(fd, 128).split()[1]) / 1e9
        finally:
            os.close(fd)
    except (OSError, ValueError, IndexError):
        return 0.0


def _own_wall(wall):
    """A test's wall clock less its waiting for a core."""
    return wall - max(0.0, _run_queue_s() - _now["waited"])


def _out_of_time(signum, frame):
    """A test ran past a limit: report it and end the job (the program cannot catch this)."""
    del frame
    if signum == signal.SIGALRM:
        left = _now["limit"] - _own_wall(time.monotonic() - _now["wall"])
        if left > 0.005:  # part of it was waiting for a core: that time is not the program's
            signal.setitimer(signal.ITIMER_REAL, left)
            return
    cpu, wall = _disarm()
    what = "CPU-time" if signum == signal.SIGPROF else "wall-clock"
    _record(_now["index"], "timeout", None, f"{what} limit of the test reached", cpu, wall)
    child.finish()


# ---- standard streams -----------------------------------------------------------------------


class _Streams:
    """fd 0 and fd 1 as in-memory files renewed per test, and the text streams over them: the
    same stream objects for every test, since a program may hold on to them (`from sys import
    stdin` is hoisted, so it runs once)."""

    def __init__(self, with_stdin):
        self.out_fd = os.memfd_create("stdout", 0)
        self.in_fd = os.memfd_create("stdin", 0) if with_stdin else -1
        if with_stdin:
            os.dup2(self.in_fd, 0)
        os.dup2(self.out_fd, 1)
        # Lines end at "\n" only and "\r" is kept, as the grader's in-memory input has them.
        self.stdin, self.stdout = child.text_in(newline="\n"), child.text_out()
        sys.stdin = sys.__stdin__ = self.stdin
        sys.stdout = sys.__stdout__ = self.stdout

    def start(self, text):
        """Before a test: its input on fd 0, an empty fd 1, the original streams back in place."""
        if self.in_fd >= 0:
            data = text.encode("utf-8", "surrogatepass")
            done = 0
            while done < len(data):
                done += os.pwrite(self.in_fd, data[done:], done)
            os.ftruncate(self.in_fd, len(data))
            os.lseek(self.in_fd, 0, os.SEEK_SET)
            os.dup2(self.in_fd, 0)
            try:
                self.stdin.seek(0)  # drop what an earlier test left in its buffers
            except (ValueError, OSError):
                self.stdin = child.text_in(newline="\n")  # the program closed it
        os.ftruncate(self.out_fd, 0)
        os.lseek(self.out_fd, 0, os.SEEK_SET)
        os.dup2(self.out_fd, 1)
        if sys.stdout is not self.stdout:
            child.flush(sys.stdout)
        sys.stdin = sys.__stdin__ = self.stdin
        sys.stdout = sys.__stdout__ = self.stdout

    def printed(self, cap):
        """What the test wrote to fd 1 (None when over `cap` bytes)."""
        child.flush(sys.stdout, self.stdout, sys.stderr)
        size = os.fstat(self.out_fd).st_size
        if size > cap:
            return None
        return os.pread(self.out_fd, size, 0).decode("utf-8", "replace")


# ---- the run --------------------------------------------------------------------------------


def run(job):
    """Run every test of `job` in order (see the module docstring)."""
    sys.set_int_max_str_digits(INT_DIGITS)
    mode, tests = job["mode"], job["tests"]
    limits = (float(job["test_cpu"]), float(job["test_wall"]), resource.getrlimit(resource.RLIMIT_CPU)[1])
    cap, _now["cap"] = job["val_cap"], job["res_cap"] - 4096
    streams = _Streams(mode == "stdin")
    signal.signal(signal.SIGPROF, _out_of_time)
    signal.signal(signal.SIGALRM, _out_of_time)
    _arm(0, limits)
    try:
        test = contest_program.load(job)
    except MemoryError:
        return _record(0, "memory", None, "MemoryError while loading the program", *_disarm())
    except BaseException as exc:
        cpu, wall = _disarm()
        return _record(0, "exception", None, "while loading the program: " + child.describe(exc), cpu, wall)
    _disarm()
    for i, text in enumerate(tests):
        streams.start(text if mode == "stdin" else "")
        status, value, error = "ok", None, None
        _arm(i, limits)
        try:
            value = test(text)
        except MemoryError:
            status, error = "memory", "MemoryError"
        except BaseException as exc:
            status, error = "exception", child.describe(exc)
        cpu, wall = _disarm()
        if status == "ok" and (cpu > limits[0] or (wall > limits[1] and _own_wall(wall) > limits[1])):
            status, error = "timeout", "time limit of the test reached"  # it stopped our clocks
        out = None
        if status == "ok":
            status, out, error = _answer(mode, value, streams, cap)
        del value
        if status == "ok" and _now["sent"] + len(out or "") > _now["cap"]:
            status, out, error = "output_too_large", None, "the tests' answers together are over the size limit"
        _record(i, status, out, error, cpu, wall)
        if status != "ok":
            return


def _answer(mode, value, streams, cap):
    """(status, text, error) of a test that returned: its stdout, or its value's encoding."""
    printed = streams.printed(cap)
    if mode == "stdin":
        if printed is None:
            return "output_too_large", None, f"printed over {cap} bytes"
        return "ok", printed, None
    try:
        try:
            text = values.encode(value)
        except TypeError:
            text = values.encode(_plain(value))
    except (TypeError, ValueError, RecursionError) as exc:
        if mode == "expr":
            return "ok", None, None  # only its completing counts
        return "exception", None, f"the returned value cannot be reported: {exc}"
    if len(text) > cap:
        return "output_too_large", None, f"the value's encoding is {len(text)} bytes; the limit is {cap}"
    return "ok", text, None


def _plain(value, depth=0):
    """numpy scalars as the Python numbers they equal, inside containers too (what the grader's
    `==` accepts); anything else is left for values.encode to take or refuse."""
    t = type(value)
    if depth > values.MAX_DEPTH:
        return value
    if t in (list, tuple, set, frozenset):
        return t(_plain(x, depth + 1) for x in value)
    if t is dict:
        return {_plain(k, depth + 1): _plain(x, depth + 1) for k, x in value.items()}
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(value, numpy.generic):
        return value.item()
    return value
