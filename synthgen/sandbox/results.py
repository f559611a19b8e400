"""Jobs, their limits and results: what the host sends a job's child and how it turns what comes
back into verdicts. A status the child cannot produce (timeout, killed, infra) only comes from
outside the child; `infra` means the sandbox failed, never that the answer was wrong.
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
    """Module source, call expressions evaluated after it, and optional expected encodings (see
    `values.from_literal`; they stay in the host). `timeout_s` is the whole job's wall clock.

    A *program* job (`Job.program(code, stdin)`) runs `code` as `__main__` with `stdin` as its
    standard input; its one verdict's `value` is its whole stdout (`output_too_large` past the
    value cap); `exit(0)` is fine, an uncaught exception or another exit status is `exception`."""

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
        if isinstance(self.calls, str) or not all(isinstance(c, str) for c in self.calls):
            raise ValueError("calls must be a sequence of str expressions")
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
        # marshal (job_payload) takes exact types: subclasses of str and int become plain values.
        object.__setattr__(self, "memory_mb", operator.index(self.memory_mb))
        for name in ("code", "stdin", "mode", "entry", "calls", "tests"):
            value = getattr(self, name)
            if value is not None:
                plain = str.__str__(value) if isinstance(value, str) else tuple(map(str.__str__, value))
                object.__setattr__(self, name, plain)
        forms = [None] * len(self.calls)
        if self.expected is not None:
            if isinstance(self.expected, str) or len(self.expected) != len(self.calls):
                raise ValueError(f"expected must list one encoding (or None) per call ({len(self.calls)})")
            object.__setattr__(self, "expected", tuple(self.expected))
            for i, text in enumerate(self.expected):
                try:
                    forms[i] = None if text is None else values.normalize(values.decode(text))
                except ValueError as exc:
                    raise ValueError(f"expected[{i}] is not a value encoding: {exc}") from None
        object.__setattr__(self, "_expected_forms", tuple(forms))

    def _check_tests(self) -> None:
        if self.mode not in CONTEST_MODES:
            raise ValueError(f"a contest-tests job's mode is one of {', '.join(CONTEST_MODES)}, not {self.mode!r}")
        if isinstance(self.tests, str) or not all(isinstance(t, str) for t in self.tests):
            raise ValueError("tests must be a sequence of str")
        if not 0 < len(self.tests) <= MAX_CALLS or sum(map(len, self.tests)) > MAX_STDIN_CHARS:
            raise ValueError(f"a contest-tests job has 1 to {MAX_CALLS} tests of {MAX_STDIN_CHARS} characters in all")
        if self.calls or self.stdin is not None or self.expected is not None:
            raise ValueError("a contest-tests job takes no calls, stdin or expected values")
        if self.mode == "call" and not self.entry.isidentifier():
            raise ValueError(f"a call-based job needs the function's name, got {self.entry!r}")
        if not (isinstance(self.test_timeout_s, (int, float)) and 0 < self.test_timeout_s <= 600):
            raise ValueError("test_timeout_s must be a number in (0, 600]")

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
        return vars(self) | {"calls": [c.to_dict() for c in self.calls], "elapsed_s": round(self.elapsed_s, 6)}


@dataclass(frozen=True)
class Limits:
    """Size caps per job. Output (stdout + stderr) and results are capped over the whole job, not
    per call, so a job of many calls cannot make the host hold more than this."""

    max_value_bytes: int = 1 << 20  # one call's value encoding
    max_result_bytes: int = 4 << 20  # all calls' result records together
    max_output_bytes: int = 1 << 20  # stdout + stderr together (the child is stopped past it)
    keep_output_bytes: int = 64 << 10  # of each stream, kept and reported
    tmp_mb: int = 64
    max_test_output_bytes: int = 4 << 20  # a contest test's stdout or value encoding
    max_tests_result_bytes: int = 32 << 20  # all tests' answers of one contest-tests job

    def caps(self, job: Job) -> tuple[int, int, int]:
        """Bytes kept of each stream (of a program's stdout, its answer: the value cap and one more),
        and the most stdout + stderr and the result records may hold before the child is stopped."""
        each, most = self.max_value_bytes, self.max_result_bytes
        if job.tests is not None:
            each, most = self.max_test_output_bytes, self.max_tests_result_bytes
        results = min(job.runs * (each + 4096) + 4096, most)
        if job.stdin is not None:
            return self.max_value_bytes + 1, self.max_output_bytes + self.max_value_bytes, results
        return self.keep_output_bytes, self.max_output_bytes, results

    def job_payload(self, job: Job) -> bytes:
        """The job as its child reads it (marshal data). Expected values are deliberately not in it."""
        body = {"code": job.code, "calls": list(job.calls), "stdin": job.stdin, "cpu": cpu_limit_s(job)}
        body |= {"mem_mb": job.memory_mb, "tmp_mb": self.tmp_mb, "val_cap": self.max_value_bytes}
        body["res_cap"] = self.caps(job)[2]
        if job.tests is not None:  # (expected outputs are not sent either)
            body |= {"tests": list(job.tests), "mode": job.mode, "entry": job.entry, "preamble": job.preamble}
            body |= {"test_cpu": float(job.test_timeout_s), "test_wall": test_wall_s(job.test_timeout_s)}
            body["val_cap"] = self.max_test_output_bytes
        return marshal.dumps(body, 4)


def contest_job(
    code: str, tests, *, mode: str, entry: str = "", preamble: bool = True, test_timeout_s: float, memory_mb: int
) -> Job:
    """A contest-tests job: one child compiles `code` and runs `tests` (stdin texts, encodings of
    argument lists for `entry`, or expressions) in order with LiveCodeBench's semantics (see
    contest_runner.py) until a test is not ok; a verdict's `value` (stdin) or `encoded` is its
    answer. A test's wall clock (test_wall_s) excludes waiting for a core: load flips no verdict."""
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
    return JobResult(isolation, [CallVerdict(Status.INFRA, error=safe_text(error))] * job.runs)


def _records(blob: bytes) -> list[bytes]:
    """The whole length-prefixed records in `blob` (a cut-off last one is dropped)."""
    out, pos = [], 0
    while pos + 4 <= len(blob):
        end = pos + 4 + _U32.unpack_from(blob, pos)[0]
        if end > len(blob):
            break
        out.append(blob[pos + 4 : end])
        pos = end
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
    records = _records(res_blob)
    if not records or records[0] != b'["S"]':  # the child never finished its set-up: not the job's fault
        detail = stderr.strip().splitlines()[-1:] or [f"end={header['end']}"]
        verdict = CallVerdict(Status.INFRA, error=safe_text("sandbox child set-up failed: " + detail[0][:500]))
        return JobResult(isolation, [verdict] * job.runs, stdout, stderr, wall)
    unfinished = _unfinished(job, header)
    if job.tests is not None:
        verdicts = test_verdicts(job, header, records[1:], limits, unfinished)
    elif job.stdin is not None:
        verdicts = [program_verdict(header, records[1:2], out_blob, limits, unfinished)]
    else:
        verdicts = call_verdicts(job, records[1:], limits, unfinished)
    return JobResult(isolation, verdicts, stdout, stderr, wall)


_SIGNAL_NAMES = {sig.value: sig.name for sig in signal.Signals}
_ENDS = {  # how the child ended -> the verdict of calls that never reported
    "output": CallVerdict(Status.OUTPUT_TOO_LARGE, error="stdout+stderr over the output limit"),
    "results": CallVerdict(Status.OUTPUT_TOO_LARGE, error="the job's results together are over the size limit"),
    "done": CallVerdict(Status.KILLED, error="the job ended its result stream before the call finished"),
}


def _unfinished(job: Job, header: dict) -> CallVerdict:
    """The verdict for calls that never reported, from how the child ended."""
    end, sig, code = header["end"], header.get("signal"), header.get("code")
    if end == "timeout":
        return CallVerdict(Status.TIMEOUT, error=f"wall-clock limit of {job.timeout_s:g} s reached")
    if end == "signal":
        if sig in (signal.SIGKILL, signal.SIGXCPU) and (header.get("cpu") or 0.0) >= cpu_limit_s(job) - 0.05:
            return CallVerdict(Status.TIMEOUT, error="CPU-time limit reached")
        return CallVerdict(Status.KILLED, error=f"the job's process was killed by {_SIGNAL_NAMES.get(sig, sig)}")
    if end in _ENDS:
        return _ENDS[end]
    if code == EXIT_NO_MEMORY:
        return CallVerdict(Status.MEMORY, error="out of memory")
    return CallVerdict(Status.KILLED, error=f"the job's process exited (status {code}) before the call finished")
