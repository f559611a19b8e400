"""Program jobs (stdin/stdout solutions): the input reaches every way Python reads it, the whole
stdout comes back as the answer, endings map to honest verdicts, and the isolation properties of
call jobs still hold. Each runs at every isolation level available here."""

from __future__ import annotations

import os

import pytest

from synthgen.sandbox import Job, Status
from tests.helpers.sandbox import assert_serves


def run_program(pool, code: str, stdin: str = "", timeout_s: float = 2.0):
    result = pool.run_sync(Job.program(code, stdin, timeout_s=timeout_s, memory_mb=256))
    assert result.isolation == pool.isolation and len(result.calls) == 1
    assert not result.infra, result.calls
    assert_serves(pool)
    return result.calls[0]


@pytest.mark.parametrize(
    "code",
    [
        "n = int(input())\nprint(sum(map(int, input().split())) * n)",
        "import sys\nn = int(sys.stdin.readline())\nprint(n * sum(int(x) for x in sys.stdin.readline().split()))",
        "data = open(0).read().split()\nprint(int(data[0]) * sum(map(int, data[1:])))",
        "import sys\nd = sys.stdin.buffer.read().split()\nsys.stdout.buffer.write(b'%d\\n' % (int(d[0]) * sum(map(int, d[1:]))))",
        "import os\nd = os.read(0, 1000).split()\nos.write(1, b'%d\\n' % (int(d[0]) * sum(map(int, d[1:]))))",
        "def main():\n    n = int(input())\n    print(n * sum(map(int, input().split())))\n\nif __name__ == '__main__':\n    main()",
    ],
)
def test_every_way_of_reading_stdin_and_writing_stdout(pool, code):
    verdict = run_program(pool, code, "2\n1 2 3\n")
    assert verdict.status is Status.OK and verdict.value == "12\n"


def test_exit_zero_is_a_finished_program_and_other_exits_are_errors(pool):
    assert run_program(pool, "import sys\nprint('x')\nsys.exit(0)").value == "x\n"
    assert run_program(pool, "print('x')\nexit()").value == "x\n"
    flushed = run_program(pool, "import os, sys\nprint('fast')\nsys.stdout.flush()\nos._exit(0)")
    assert flushed.status is Status.OK and flushed.value == "fast\n"
    bad = run_program(pool, "import sys\nprint('x')\nsys.exit(3)")
    assert bad.status is Status.EXCEPTION and "exit status 3" in bad.error
    raised = run_program(pool, "x = int(input())\nprint(1 // x)", "0\n")
    assert raised.status is Status.EXCEPTION and "ZeroDivisionError" in raised.error and "(line 2)" in raised.error
    dry = run_program(pool, "input()\ninput()", "only one line\n")
    assert dry.status is Status.EXCEPTION and "EOFError" in dry.error


def test_a_program_that_never_ends_times_out(pool):
    verdict = run_program(pool, "while True:\n    pass", timeout_s=0.5)
    assert verdict.status is Status.TIMEOUT
    waiting = run_program(
        pool, "import sys\nsys.stdin = open('/dev/zero')\nwhile True: sys.stdin.read(1)", timeout_s=0.5
    )
    assert waiting.status is Status.TIMEOUT


def test_output_over_the_cap_is_too_large_never_a_cut_off_answer(pool):
    verdict = run_program(pool, "import sys\nsys.stdout.write('7' * (3 << 20))")
    assert verdict.status is Status.OUTPUT_TOO_LARGE and verdict.value is None
    big = run_program(pool, "print('ab' * 300000)")  # 600 KB: under the 1 MiB value cap, kept whole
    assert big.status is Status.OK and big.value == "ab" * 300000 + "\n"


def test_large_and_unicode_input_arrive_whole(pool):
    text = "é€😀 " * 200_000 + "\n"
    verdict = run_program(pool, "import sys\nt = sys.stdin.read()\nprint(len(t), t[:3])", text)
    assert verdict.value == f"{len(text)} é€😀\n"


def test_a_forged_result_record_cannot_replace_the_output(pool):
    code = (
        "import os, struct, json\n"
        "rec = json.dumps([0, 'ok', None, None]).encode()\n"
        "os.write(3, struct.pack('>I', len(rec)) + rec)\n"
        "print('real output')\n"
    )
    verdict = run_program(pool, code)
    assert verdict.status is Status.OK and verdict.value == "real output\n"


def test_stdin_is_the_jobs_own_and_gone_afterwards(pool):
    first = run_program(pool, "import sys\nsys.stdin.read()\nopen('/tmp/left', 'w').write('secret')\nprint('x')", "a")
    assert first.value == "x\n"
    later = run_program(pool, "import os\nprint(os.path.exists('/tmp/left'), repr(open(0).read()))", "b")
    assert later.value == "False 'b'\n"


def test_the_host_environment_stays_out(pool):
    os.environ["SYNTHGEN_TEST_SECRET"] = "hunter2"
    try:
        code = "import os\nprint(os.environ.get('SYNTHGEN_TEST_SECRET'), open('/proc/1/environ', 'rb').read().count(b'hunter2'))"
        verdict = run_program(pool, code)
    finally:
        del os.environ["SYNTHGEN_TEST_SECRET"]
    # Either pid 1's environment is readable and holds no secret, or it is not readable at all.
    assert verdict.value == "None 0\n" or (verdict.status is Status.EXCEPTION and "hunter2" not in verdict.error)


def test_program_jobs_reject_calls_and_expected_values():
    with pytest.raises(ValueError, match="takes no calls"):
        Job("print(1)", ("f()",), stdin="")
    with pytest.raises(ValueError, match="stdin must be a str"):
        Job("print(1)", (), stdin=b"x")  # type: ignore[arg-type]
    assert Job.program("print(1)", "").runs == 1 and Job("x = 1", ("x", "x")).runs == 2
