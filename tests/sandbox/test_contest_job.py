"""Contest-tests jobs (synthgen.sandbox.contest_job): one process for a sample's tests, in order,
stopping at the first failure; each test's own limits hold even against a program that tries to
switch them off; the answers are reported, never judged, inside the sandbox."""

from __future__ import annotations

from synthgen.sandbox import Status, contest_job, values


def run(pool, code, tests, mode="stdin", entry="", limit=1.0):
    job = contest_job(code, tests, mode=mode, entry=entry, test_timeout_s=limit, memory_mb=256)
    result = pool.run_sync(job)
    assert not result.infra, result.calls
    return result.calls


def test_tests_share_one_process_and_one_instance(pool):
    code = (
        "class Solution:\n    def __init__(self):\n        self.n = 0\n"
        "    def f(self, x):\n        self.n += x\n        return self.n\n"
    )
    calls = run(pool, code, [values.encode([1]), values.encode([2]), values.encode([3])], mode="call", entry="f")
    assert [c.encoded for c in calls] == ["1", "3", "6"]


def test_the_run_stops_at_the_first_failure(pool):
    code = "n = int(input())\nprint(10 // n)\n"
    calls = run(pool, code, ["5\n", "0\n", "2\n"])
    assert [c.status for c in calls] == [Status.OK, Status.EXCEPTION] and calls[0].value == "2\n"
    assert "ZeroDivisionError" in calls[1].error


def test_limits_hold_when_the_program_switches_the_timers_off(pool):
    code = (
        "import signal\nsignal.setitimer(signal.ITIMER_PROF, 0)\n"
        "signal.signal(signal.SIGALRM, signal.SIG_IGN)\nwhile True:\n    pass\n"
    )
    calls = run(pool, code, ["", ""], limit=0.5)
    assert [c.status for c in calls] == [Status.TIMEOUT]  # RLIMIT_CPU ends it a second later


def test_a_sleeper_is_cut_by_the_wall_clock(pool):
    calls = run(pool, "import time\ntime.sleep(60)\n", [""], limit=0.3)
    assert calls[0].status is Status.TIMEOUT and "wall-clock" in calls[0].error and calls[0].cpu_s < 0.3


def test_each_test_reads_its_own_input_and_prints_its_own_output(pool):
    code = "import sys\nprint(sys.stdin.read().upper(), end='')\n"
    calls = run(pool, code, ["a\n", "b\n", "c\n"])
    assert [c.value for c in calls] == ["A\n", "B\n", "C\n"]


def test_input_left_in_stdins_buffer_does_not_reach_the_next_test(pool):
    code = "import sys\nprint(sys.stdin.buffer.readline().decode(), end='')\n"
    calls = run(pool, code, ["a1\na2\n", "b1\nb2\n"])
    assert [c.value for c in calls] == ["a1\n", "b1\n"]


def test_the_preamble_names_are_there_and_its_streams_are_the_childs_own(pool):
    code = (
        "print(stdin is sys.stdin, stdout is sys.stdout, argv is sys.argv, sys.getrecursionlimit())\n"
        "print(Counter('aab')['a'], gcd(12, 18), isqrt(17), List, deque, exit is sys.exit)\n"
        "print(sys.stdin.seekable(), sys.stdout.seekable(), sys.stdin.read(), sys.stdin.tell())\n"
    )
    calls = run(pool, code, ["x", "yz"])
    for call, text in zip(calls, ["x", "yz"]):
        first, second, third = call.value.splitlines()
        assert first == "True True True 50000"
        assert second == "2 6 4 typing.List <class 'collections.deque'> True"
        assert third == f"True True {text} {len(text)}"  # (the streams are built in the template)


def test_without_the_preamble_a_program_runs_bare(pool):
    tests = ["'Counter' in globals()", "__import__('sys').getrecursionlimit() < 50000"]
    job = contest_job("x = 1\n", tests, mode="expr", preamble=False, test_timeout_s=1.0, memory_mb=256)
    calls = pool.run_sync(job).calls
    assert [c.value for c in calls] == ["False", "True"]  # (the values as reported in mode "expr")


def test_a_job_that_rebinds_preamble_names_leaves_the_next_job_the_originals(pool):
    spoil = "Counter = None\nstring.ascii_letters = 'x'\nsys.stdout.write('spoiled\\n')\n"
    check = "print(Counter('ab')['a'], len(string.ascii_letters))\n"
    for _ in range(2 * pool.workers):  # every worker's next child, after one that spoiled its own
        assert run(pool, spoil, [""])[0].value == "spoiled\n"
        assert run(pool, check, [""])[0].value == "1 52\n"


# Each one is false where it is left in place, inside the wrapped function (__name__ is "solution").
GUARDS = [
    "__name__ == '__main__'", '__name__ == "__main__"', "(__name__) == ('__main__')", "__name__=='__main__'",
    "__name__ == '__ma' 'in__'", "__name__ == r'__main__'", "'__main__' == __name__", "__name__ == u'__main__'",
    "__name__ == f'__main__'", "__name__ == b'__main__'", "__name__ in ('__main__',)",
    "__name__ == '__main__' == '__main__'", "__name__ == '__main__' and True", "__name__ == '__main__ '",
]  # fmt: skip


def test_a_trailing_main_guard_is_unwrapped_exactly_where_the_graders_unparse_check_says(pool):
    import ast

    for guard in GUARDS:
        unwrapped = ast.unparse(ast.parse(guard, mode="eval").body).strip() == "__name__ == '__main__'"
        calls = run(pool, f"import sys\nif {guard}:\n    print('ran')\n", [""])
        assert calls[0].value == ("ran\n" if unwrapped else ""), guard


_PREPARED_OR_NOT = """
import json, os, sys
sys.path.insert(0, sys.argv[1])
import contest_runner
if sys.argv[2] == "prepared":
    contest_runner.prepare()
job = json.loads(sys.argv[3])
pipe = os.pipe()
r, w = os.dup2(pipe[0], 40), os.dup2(pipe[1], 41)  # (fd 3 is the result's: keep the pipe clear of it)
os.close(pipe[0])
os.close(pipe[1])
pid = os.fork()
if pid == 0:
    os.close(r)
    os.dup2(w, 3)
    contest_runner.run(job)
    os._exit(0)
os.close(w)
data = b""
while chunk := os.read(r, 1 << 16):
    data += chunk
os.waitpid(pid, 0)
sys.stdout.write(data.decode())
"""


def test_the_runner_answers_the_same_with_or_without_the_templates_preparation(tmp_path):
    import json
    import re
    import subprocess
    import sys
    from pathlib import Path

    import synthgen.sandbox

    folder = str(Path(synthgen.sandbox.__file__).resolve().parent)
    code = "import sys\nprint(input(), exit is sys.exit, stdin is sys.stdin, len(ascii_letters), gcd(4, 6))\n"
    job = {"mode": "stdin", "code": code, "tests": ["a\n", "b\n"], "preamble": True, "test_cpu": 5, "test_wall": 5}
    job |= {"val_cap": 1 << 16, "res_cap": 1 << 20, "entry": ""}
    answers = {}
    for how in ("prepared", "bare"):
        argv = [sys.executable, "-S", "-s", "-B", "-c", _PREPARED_OR_NOT, folder, how, json.dumps(job)]
        out = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=tmp_path).stdout
        answers[how] = re.findall(r'\[(\d+),"(\w+)","([^"]*)"', out)
    assert (
        answers["prepared"]
        == answers["bare"]
        == [("0", "ok", "a True True 52 2\\n"), ("1", "ok", "b True True 52 2\\n")]
    )
