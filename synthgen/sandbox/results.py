"""Jobs, their limits and results: what the host sends a zygote and how it turns what comes back
into verdicts (verdicts.py reads the child's records; everything the child wrote is untrusted).

A status the child cannot produce (timeout, killed, infra, ...) only ever comes from what the
zygote observed from outside the child. `infra` means the sandbox failed, never that the answer
was wrong.
"""

from __future__ import annotations

import marshal
import operator
import signal
import struct
from dataclasses import dataclass, field

from synthgen.sandbox import values
from synthgen.sandbox.settings import JOB_MEMORY_MB, JOB_TIMEOUT_S
from synthgen.sandbox.verdicts import CallVerdict, Status, call_verdicts, program_verdict, test_verdicts
from synthgen.text import safe_text

_U32 = struct.Struct(">I")
EXIT_NO_MEMORY = 121  # child.EXIT_NO_MEMORY: the runner itself ran out of memory
MAX_CODE_CHARS = 4 << 20
MAX_CALLS = 10_000
MAX_STDIN_CHARS = 64 << 20
CONTEST_MODES = ("stdin", "call", "expr")
# A contest test's wall clock is WALL_FACTOR times its CPU time plus WALL_EXTRA_S; the whole job's
# backstop is BACKSTOP_FACTOR times its tests' (which exclude waiting for a core).
WALL_FACTOR, WALL_EXTRA_S, BACKSTOP_FACTOR = 1.5, 0.5, 10.0


@dataclass(frozen=True)
class Job:
    """Module source, call expressions evaluated after it, and optional expected encodings.

    `expected` holds canonical encodings (see `values`; `values.from_literal` turns a repr into
    one); it stays in the host. `timeout_s` is the wall clock for the whole job.

    A *program* job (`Job.program(code, stdin)`, for stdin/stdout contest solutions) has no
    calls: `code` runs once as `__main__` with `stdin` on its standard input, and the result
    holds one verdict whose `value` is everything the program printed (its stdout, whole: past
    the value cap it is `output_too_large`, never a cut-off text). Ending by `exit(0)` is fine;
    an uncaught exception or another exit status is `exception`. Judging the output is the
    caller's business, in the host.
    """

    code: str
    calls: tuple[str, ...]
    expected: tuple[str | None, ...] | None = None
    timeout_s: float = JOB_TIMEOUT_S
    memory_mb: int = JOB_MEMORY_MB
    stdin: str | None = None
    tests: tuple[str, ...] | None = None  # a contest-tests job (see contest_job)
    mode: str = ""
    entry: str = ""
    preamble: bool = False
    test_timeout_s: float = 0.0
    _expected_forms: tuple = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.code, str) or len(self.code) > MAX_CODE_CHARS:
            raise ValueError(f"code must be a str of at most {MAX_CODE_CHARS} characters")
        calls = self.calls
        if isinstance(calls, str) or not all(isinstance(c, str) for c in calls):
            raise ValueError("calls must be a sequence of str expressions")
        object.__setattr__(self, "calls", tuple(calls))
        if len(self.calls) > MAX_CALLS:
            raise ValueError(f"at most {MAX_CALLS} calls per job")
        if self.stdin is not None:
            if not isinstance(self.stdin, str) or len(self.stdin) > MAX_STDIN_CHARS:
                raise ValueError(f"stdin must be a str of at most {MAX_STDIN_CHARS} characters")
            if self.calls or self.expected is not None:
                raise ValueError("a program job (stdin given) takes no calls and no expected values")
        if self.tests is not None:
            self._check_tests()
        if not (isinstance(self.timeout_s, (int, float)) and 0 < self.timeout_s <= 600):
            raise ValueError("timeout_s must be a number in (0, 600]")
        if not (isinstance(self.memory_mb, int) and 32 <= self.memory_mb <= 65536):
            raise ValueError("memory_mb must be an int in [32, 65536]")
        self._make_plain()
        if self.expected is None:
            return
        expected = self.expected
        if isinstance(expected, str) or len(expected) != len(self.calls):
            raise ValueError(f"expected must list one encoding (or None) per call ({len(self.calls)})")
        object.__setattr__(self, "expected", tuple(expected))
        forms = []
        for i, text in enumerate(self.expected):
            try:
                forms.append(None if text is None else values.normalize(values.decode(text)))
            except ValueError as exc:
                raise ValueError(f"expected[{i}] is not a value encoding: {exc}") from None
        object.__setattr__(self, "_expected_forms", tuple(forms))

    def _check_tests(self) -> None:
        if self.mode not in CONTEST_MODES:
            raise ValueError(f"a contest-tests job's mode is one of {', '.join(CONTEST_MODES)}, not {self.mode!r}")
        if isinstance(self.tests, str) or not all(isinstance(t, str) for t in self.tests):
            raise ValueError("tests must be a sequence of str")
        if not self.tests or len(self.tests) > MAX_CALLS:
            raise ValueError(f"a contest-tests job has 1 to {MAX_CALLS} tests")
        if sum(len(t) for t in self.tests) > MAX_STDIN_CHARS:
            raise ValueError(f"the tests together are over {MAX_STDIN_CHARS} characters")
        if self.calls or self.stdin is not None or self.expected is not None:
            raise ValueError("a contest-tests job takes no calls, stdin or expected values")
        if self.mode == "call" and not self.entry.isidentifier():
            raise ValueError(f"a call-based job needs the function's name, got {self.entry!r}")
        if not (isinstance(self.test_timeout_s, (int, float)) and 0 < self.test_timeout_s <= 600):
            raise ValueError("test_timeout_s must be a number in (0, 600]")

    def _make_plain(self) -> None:
        """Subclasses of str and int as the plain values they hold: the zygote's wire format
        (marshal, see job_payload) takes exact types only."""
        plain = str.__str__  # (str() would call a subclass's own __str__)
        for name in ("code", "stdin", "mode", "entry"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, plain(value))
        object.__setattr__(self, "calls", tuple(plain(c) for c in self.calls))
        if self.tests is not None:
            object.__setattr__(self, "tests", tuple(plain(t) for t in self.tests))
        object.__setattr__(self, "memory_mb", operator.index(self.memory_mb))

    @classmethod
    def program(cls, code: str, stdin: str, *, timeout_s: float = JOB_TIMEOUT_S, memory_mb: int = JOB_MEMORY_MB) -> Job:
        """A program job: `code` run as a script with `stdin` as its standard input."""
        return cls(code, (), timeout_s=timeout_s, memory_mb=memory_mb, stdin=stdin)

    @property
    def runs(self) -> int:
        """How many verdicts the job's result holds: one per call or test, or one for a program."""
        if self.tests is not None:
            return len(self.tests)
        return 1 if self.stdin is not None else len(self.calls)


@dataclass
class JobResult:
    isolation: str
    calls: list[CallVerdict]
    stdout: str = ""
    stderr: str = ""
    elapsed_s: float = 0.0

    @property
    def infra(self) -> bool:
        """The sandbox failed somewhere in this job: never score it."""
        return any(c.status is Status.INFRA for c in self.calls)

    @property
    def all_passed(self) -> bool:
        return bool(self.calls) and all(c.passed for c in self.calls)

    def same_outcome(self, other: JobResult) -> bool:
        """Same status and same value for every call (what a determinism check compares)."""
        return len(self.calls) == len(other.calls) and all(
            a.status is b.status
            and (a.encoded == b.encoded or bool(a.encoded and b.encoded and values.equal(a.encoded, b.encoded)))
            for a, b in zip(self.calls, other.calls)
        )

    def to_dict(self) -> dict:
        return {
            "isolation": self.isolation,
            "calls": [c.to_dict() for c in self.calls],
            "stdout": self.stdout,
            "stderr": self.stderr,
            "elapsed_s": round(self.elapsed_s, 6),
        }


@dataclass(frozen=True)
class Limits:
    """Size caps per job. Output (stdout + stderr) and results are capped over the whole job, not
    per call, so a job of many calls cannot make the zygote or the host hold more than this."""

    max_value_bytes: int = 1 << 20  # one call's value encoding
    max_result_bytes: int = 4 << 20  # all calls' result records together
    max_output_bytes: int = 1 << 20  # stdout + stderr together (the child is stopped past it)
    keep_output_bytes: int = 64 << 10  # of each stream, kept and reported
    tmp_mb: int = 64
    max_test_output_bytes: int = 4 << 20  # a contest test's stdout or value encoding
    max_tests_result_bytes: int = 32 << 20  # all tests' answers of one contest-tests job

    def result_cap(self, job: Job) -> int:
        if job.tests is not None:
            return min(job.runs * (self.max_test_output_bytes + 4096) + 4096, self.max_tests_result_bytes)
        return min(job.runs * (self.max_value_bytes + 4096) + 4096, self.max_result_bytes)

    def caps(self, job: Job) -> tuple[int, int, int]:
        """What the host keeps of each output stream, the most stdout + stderr may hold together,
        and the most all result records may: past the last two the child is stopped."""
        # A program's stdout is its answer: keep all of it up to the value cap (plus one byte, so
        # that an answer over the cap is seen to be over it rather than cut off).
        if job.stdin is not None:
            return self.max_value_bytes + 1, self.max_output_bytes + self.max_value_bytes, self.result_cap(job)
        return self.keep_output_bytes, self.max_output_bytes, self.result_cap(job)

    def job_payload(self, job: Job) -> bytes:
        """The job as its child reads it (marshal data). Expected values are deliberately not in it."""
        body = {
            "code": job.code,
            "calls": list(job.calls),
            "stdin": job.stdin,
            "cpu": cpu_limit_s(job),
            "mem_mb": job.memory_mb,
            "tmp_mb": self.tmp_mb,
            "val_cap": self.max_value_bytes,
            "res_cap": self.result_cap(job),
        }
        if job.tests is not None:  # (expected outputs are not sent either)
            body |= {"tests": list(job.tests), "mode": job.mode, "entry": job.entry, "preamble": job.preamble}
            body |= {"test_cpu": float(job.test_timeout_s), "test_wall": test_wall_s(job.test_timeout_s)}
            body["val_cap"] = self.max_test_output_bytes
        return marshal.dumps(body, 4)


def contest_job(
    code: str, tests, *, mode: str, entry: str = "", preamble: bool = True, test_timeout_s: float, memory_mb: int
) -> Job:
    """A contest-tests job: one child compiles `code` once and runs `tests` in order, with
    LiveCodeBench's semantics (the sandbox's contest_runner.py says how).

        job = contest_job(program, ["1 2\\n", "3 4\\n"], mode="stdin", test_timeout_s=6.0, memory_mb=512)
        pool.run_sync(job).calls[i].value       # test i: everything it printed
        job = contest_job(code, [values.encode([[1, 2], 3])], mode="call", entry="twoSum", ...)
        pool.run_sync(job).calls[0].encoded     # the returned value's encoding

    `tests`: stdin texts (mode "stdin"), value encodings of argument lists (mode "call", calling
    `entry`) or expressions (mode "expr"); `preamble`: LiveCodeBench's imports first. The result
    holds one verdict per test that ran: the run stops after the first test that did not end ok.
    Judging answers stays with the caller, in the host: expected outputs are never sent.

    Each test has `test_timeout_s` of CPU time and a wall clock (test_wall_s) less the time the
    process waited for a core, so a loaded machine gives the same verdicts; the whole job has a
    generous backstop wall clock for code that never returns to Python, and RLIMIT_CPU."""
    tests = tuple(tests)
    timeout = min(600.0, BACKSTOP_FACTOR * (len(tests) + 1) * test_wall_s(test_timeout_s) + 10.0)
    contest = {"mode": mode, "entry": entry, "preamble": preamble, "test_timeout_s": float(test_timeout_s)}
    return Job(code, (), timeout_s=timeout, memory_mb=memory_mb, tests=tests, **contest)


def test_wall_s(test_timeout_s: float) -> float:
    return WALL_FACTOR * test_timeout_s + WALL_EXTRA_S


def cpu_limit_s(job: Job) -> int:
    """RLIMIT_CPU for a job: past the wall clock, so the wall clock normally ends it first."""
    return int(job.timeout_s) + 2


def infra_result(job: Job, isolation: str, error: str) -> JobResult:
    error = safe_text(error)
    return JobResult(isolation, [CallVerdict(Status.INFRA, error=error) for _ in range(job.runs)])


def _records(blob: bytes) -> list[bytes]:
    out, pos = [], 0
    while pos + 4 <= len(blob):
        (n,) = _U32.unpack_from(blob, pos)
        if pos + 4 + n > len(blob):
            break
        out.append(blob[pos + 4 : pos + 4 + n])
        pos += 4 + n
    return out


def _text(blob: bytes, total: int) -> str:
    text = blob.decode("utf-8", "replace")  # (bytes decoded with "replace" never hold a lone surrogate)
    if total > len(blob):
        text += f"\n[... {total - len(blob)} more bytes not kept]"
    return text


def build_result(job: Job, header: dict, blobs: list[bytes], isolation: str, limits: Limits) -> JobResult:
    """Verdicts for every call from what the zygote observed and what the child reported."""
    res_blob, out_blob, err_blob = blobs
    stdout = _text(out_blob, int(header.get("out_total") or 0))
    stderr = _text(err_blob, int(header.get("err_total") or 0))
    wall = float(header.get("wall") or 0.0)
    if header["end"] == "infra":
        result = infra_result(job, isolation, str(header.get("error") or "sandbox failure"))
        result.stderr = stderr
        return result
    records = _records(res_blob)
    if not records or records[0] != b'["S"]':  # the child never finished its set-up: not the job's fault
        detail = stderr.strip().splitlines()[-1:] or [f"end={header['end']}"]
        result = infra_result(job, isolation, "sandbox child set-up failed: " + detail[0][:500])
        result.stdout, result.stderr, result.elapsed_s = stdout, stderr, wall
        return result
    unfinished = _unfinished(job, header)
    if job.tests is not None:
        verdicts = test_verdicts(job, header, records[1:], limits, unfinished)
    elif job.stdin is not None:
        verdicts = [program_verdict(header, records[1:2], out_blob, limits, unfinished)]
    else:
        verdicts = call_verdicts(job, records[1:], limits, unfinished)
    return JobResult(isolation, verdicts, stdout, stderr, wall)


def _unfinished(job: Job, header: dict) -> CallVerdict:
    """The verdict for calls that never reported, from how the child ended."""
    end = header["end"]
    if end == "timeout":
        return CallVerdict(Status.TIMEOUT, error=f"wall-clock limit of {job.timeout_s:g} s reached")
    if end == "output":
        return CallVerdict(Status.OUTPUT_TOO_LARGE, error="stdout+stderr over the output limit")
    if end == "results":
        return CallVerdict(Status.OUTPUT_TOO_LARGE, error="the job's results together are over the size limit")
    if end == "done":
        return CallVerdict(Status.KILLED, error="the job ended its result stream before the call finished")
    if end == "signal":
        sig = header.get("signal")
        cpu = header.get("cpu") or 0.0
        if sig in (signal.SIGKILL, signal.SIGXCPU) and cpu >= cpu_limit_s(job) - 0.05:
            return CallVerdict(Status.TIMEOUT, error="CPU-time limit reached")
        try:
            name = signal.Signals(sig).name
        except (ValueError, TypeError):
            name = str(sig)
        return CallVerdict(Status.KILLED, error=f"the job's process was killed by {name}")
    code = header.get("code")
    if code == EXIT_NO_MEMORY:
        return CallVerdict(Status.MEMORY, error="out of memory")
    return CallVerdict(Status.KILLED, error=f"the job's process exited (status {code}) before the call finished")
