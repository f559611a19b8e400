"""A sample's contest tests in the job's child: the program loaded once, its tests run in order
(standard library only). Expected outputs never get here.

LiveCodeBench's grader's semantics (lcb_runner/evaluation/testing_util.py):
  * its preamble (`from string import *` ... `from builtins import *`, the modules, a recursion
    limit of 50000) runs first, in the program's namespace (once, in the zygote: `prepare`); mode
    "expr" (HumanEval's) runs the program bare;
  * "stdin": a trailing `if __name__ == '__main__':` unwrapped, imports hoisted, the rest one
    function, called per test with the input on fd 0 (an in-memory file: `input()`, `sys.stdin`,
    `open(0)` all read it); what it printed on fd 1 is reported; `exit()` ends a test normally;
  * "call": the module runs once; `Solution()` (if the code has `class Solution`) or the module's
    function is called with each test's arguments; the value is reported as an encoding (numpy
    scalars as Python numbers); "expr": each test is an expression evaluated in the module;
  * int/str conversion up to 50000 digits; threads allowed (new processes are not: seccomp);
  * each test, and the load, has `test_cpu` seconds of CPU time and `test_wall` seconds of wall
    clock less the time spent waiting for a core (/proc/self/schedstat), so a busy machine neither
    cuts a test nor lets one run longer; the run stops after the first test that did not end "ok".
One record per test that ran: [index, status, text, error, cpu_s, wall_s].
"""

import ast
import builtins
import math
import os
import resource
import signal
import sys
import time

import child
import values

_MODULES = "string re datetime collections heapq bisect copy math random statistics itertools functools operator io sys"
PREAMBLE = "".join(f"from {name} import *\n" for name in [*_MODULES.split(), "json", "builtins", "typing"])
PREAMBLE += "".join(f"import {name}\n" for name in [*_MODULES.split(), "json"])
_prepared = {}  # the preamble's namespace, built once in the zygote
_now = {"index": 0, "cpu": 0.0, "wall": 0.0, "waited": 0.0, "limit": 0.0, "sent": 0, "cap": 0}


def prepare():
    """In the zygote, before it forks any child (no job data is near): run the preamble once, so
    that each child starts from its namespace instead of importing every module again."""
    _prepared.update(_preamble_scope())


def _preamble_scope():
    scope = {"__name__": "solution", "__builtins__": builtins}
    exec(compile(PREAMBLE, "<preamble>", "exec"), scope)
    return scope


def _record(i, status, text, error, cpu, wall):
    _now["sent"] += child.emit(i, status, text, None if error is None else error[:2000], cpu, wall)


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
        with open("/proc/self/schedstat", "rb", buffering=0) as file:
            return int(file.read().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return 0.0


def _own_wall(wall):
    """A test's wall clock less its waiting for a core."""
    return wall - max(0.0, _run_queue_s() - _now["waited"])


def _out_of_time(signum, _frame):
    """A test ran past a limit: report it and end the job (the program cannot catch this)."""
    if signum == signal.SIGALRM:
        left = _now["limit"] - _own_wall(time.monotonic() - _now["wall"])
        if left > 0.005:  # part of it was waiting for a core: that time is not the program's
            signal.setitimer(signal.ITIMER_REAL, left)
            return
    cpu, wall = _disarm()
    what = "CPU-time" if signum == signal.SIGPROF else "wall-clock"
    _record(_now["index"], "timeout", None, f"{what} limit of the test reached", cpu, wall)
    child.finish()


class _Streams:
    """fd 0 and fd 1 as in-memory files renewed per test, and the text streams over them: the
    same stream objects for every test, since a program may hold on to them (`from sys import
    stdin` is hoisted, so it runs once)."""

    def __init__(self, with_stdin):
        self.in_fd = os.memfd_create("stdin", 0) if with_stdin else -1
        self.out_fd = os.memfd_create("stdout", 0)
        os.dup2(self.out_fd, 1)
        # Lines end at "\n" only and "\r" is kept, as the grader's in-memory input has them.
        self.stdin, self.stdout = child.text_in(newline="\n"), child.text_out()
        self.start("")

    def start(self, text):
        """Before a test: its input on fd 0, an empty fd 1, the original streams back in place."""
        if self.in_fd >= 0:
            os.ftruncate(self.in_fd, 0)
            os.dup2(self.in_fd, 0)
            try:  # fd 0 is empty now; seeking to its end drops what earlier tests left in the buffers
                self.stdin.seek(0, os.SEEK_END)
            except (ValueError, OSError):
                self.stdin = child.text_in(newline="\n")  # the program closed it
            os.lseek(self.in_fd, 0, os.SEEK_SET)
            with open(self.in_fd, "wb", closefd=False) as file:
                file.write(text.encode("utf-8", "surrogatepass"))
            os.lseek(self.in_fd, 0, os.SEEK_SET)
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
        return None if size > cap else os.pread(self.out_fd, size, 0).decode("utf-8", "replace")


def run(job):
    """Run every test of `job` in order (see the module docstring)."""
    sys.set_int_max_str_digits(50000)
    mode, tests = job["mode"], job["tests"]
    limits = (float(job["test_cpu"]), float(job["test_wall"]), resource.getrlimit(resource.RLIMIT_CPU)[1])
    cap, _now["cap"] = job["val_cap"], job["res_cap"] - 4096
    streams = _Streams(mode == "stdin")
    signal.signal(signal.SIGPROF, _out_of_time)
    signal.signal(signal.SIGALRM, _out_of_time)
    _arm(0, limits)
    try:
        test = load(job)
    except BaseException as exc:
        cpu, wall = _disarm()
        return _record(0, *child.failure(exc, "loading the program"), cpu, wall)
    _disarm()
    for i, text in enumerate(tests):
        streams.start(text)
        status, value, error = "ok", None, None
        _arm(i, limits)
        try:
            value = test(text)
        except BaseException as exc:
            status, value, error = child.failure(exc)
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
    kind = type(value)
    if depth > values.MAX_DEPTH:
        return value
    if kind in (list, tuple, set, frozenset):
        return kind(_plain(item, depth + 1) for item in value)
    if kind is dict:
        return {_plain(key, depth + 1): _plain(item, depth + 1) for key, item in value.items()}
    numpy = sys.modules.get("numpy")
    return value.item() if numpy is not None and isinstance(value, numpy.generic) else value


def load(job):
    """Run the module once; return what one test calls with its input."""
    mode, code = job["mode"], job["code"]
    tree = _wrapped(code) if mode == "stdin" else ast.parse(code, "<solution>")
    scope = {"__name__": "solution", "__builtins__": builtins}
    if job.get("preamble"):
        # The grader's preamble comes first, so a __future__ import is a SyntaxError there too.
        if any(isinstance(node, ast.ImportFrom) and node.module == "__future__" for node in tree.body):
            raise SyntaxError("from __future__ imports must occur at the beginning of the file")
        scope = _prepared or _preamble_scope()
        # The preamble's `from sys import *` bound the zygote's: this child's are bound again.
        scope.update(argv=sys.argv, stdin=sys.stdin, stdout=sys.stdout, stderr=sys.stderr)
        sys.setrecursionlimit(50000)
    exec(compile(tree, "<solution>", "exec"), scope)
    if mode == "stdin":
        main = scope["wrapped_function"]
        return lambda text: _as_script(main)
    if mode == "expr":
        return lambda text: eval(compile(text, "<test>", "eval"), scope)
    owner = scope["Solution"]() if "class Solution" in code else None
    method = getattr(owner, job["entry"]) if owner is not None else scope.get(job["entry"])
    if method is None:
        raise NameError(f"the program defines no function {job['entry']!r}")
    return lambda text: method(*values.decode(text))


def _wrapped(code):
    """LiveCodeBench's shape of a stdin program: a trailing `if __name__ == '__main__':` unwrapped,
    imports on top, the rest one function's body."""
    body = ast.parse(code, "<solution>").body
    if body and isinstance(body[-1], ast.If) and ast.unparse(body[-1].test).strip() == "__name__ == '__main__'":
        body = body[:-1] + body[-1].body
    imports = [node for node in body if isinstance(node, (ast.Import, ast.ImportFrom))]
    function = ast.parse("def wrapped_function():\n    pass").body[0]
    function.body = [node for node in body if not isinstance(node, (ast.Import, ast.ImportFrom))] or function.body
    return ast.Module(body=imports + [function], type_ignores=[])


def _as_script(main):
    try:
        main()
    except SystemExit:
        pass  # exit() ends the program; what it printed is its answer
