"""A planted set for the chance probes (synthgen.envs.chance): per environment one problem whose
reward a no-skill strategy earns by construction, and one sound control, as teacher answers a
scripted responder plays back, with the student's right answer to each.

    PLANTED["deduction"].problem, .chance, .strategies     # the rate its construction implies
    PlantedResponder()                                     # a scripted (not a model) chat responder

Each problem carries a marker (a comment in its code, a word in its message) that the student's
prompt shows, so the responder knows which right answer to give: half of a request's samples get
it, the rest a reply that does not parse, so every pass rate is 0.5 and in the filter's band.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass

from synthgen.envs.problem import Problem

WRONG = "I do not know."


@dataclass(frozen=True)
class Planted:
    problem: Problem
    teacher: str  # the teacher completion that writes it
    right: str  # a student completion that solves it
    chance: float  # the chance rate its construction implies
    strategies: tuple[str, ...]  # the strategies that reach it
    drawn: bool = False  # the rate is a random strategy's: the measured share has a Wilson interval


def _answer(code: str, inputs: list[str], message: str = "") -> str:
    blocks = [f"```python\n{code}```"] + [f"```input\n{x}\n```" for x in inputs]
    if message:
        blocks.append(f"```message\n{message}\n```")
    return "Here is the puzzle.\n\n" + "\n\n".join(blocks) + "\n"


def _made(env: str, code: str, inputs: list[str], right: str, chance: float, strategies, message="", **extra):
    problem = Problem(env=env, code=code, inputs=inputs, message=message, **extra)
    teacher_code = code + "".join(f"\n\n{extra[k]}" for k in ("pre_test_code", "test_code") if extra.get(k))
    drawn = env == "abduction" and chance not in (0.0, 1.0)
    return Planted(problem, _answer(teacher_code, inputs, message), right, chance, tuple(strategies), drawn)


_PRIME = (
    "def f(n):\n    # planted-deduction: a predicate, so a coin flip is right half the time\n    if n < 2:\n"
    "        return False\n    return all(n % d for d in range(2, int(n ** 0.5) + 1))\n"
)
_SUM_SQUARES = "def f(xs):\n    # control-deduction\n    return sum(x * x for x in xs)\n"
# Strings drawn like 'hello' have a length uniform on 0..10 (synthgen.envs.chance): 7 of 11 lengths win.
_LONG = "def f(s):\n    # planted-abduction: most inputs map to True\n    return len(s) > 3\n"
_MIRROR = "def f(s):\n    # control-abduction\n    return s[::-1] + s\n"
_REMAINDER = "def f(x):\n    return x % 3\n"
_SQUARE = "def f(x):\n    return x * x + 1\n"
_YES = "def f(text):\n    a, b = map(int, text.split())\n    return 'YES\\n' if a + b > 5 else 'NO\\n'\n"
_SUM = "def f(text):\n    a, b = map(int, text.split())\n    return str(a + b) + '\\n'\n"
_BUGGY = "def f(x):\n    # {marker}\n    return x // 2 if x != 57 else -1\n"
_LAX = "def pre_test_f(x):\n    return True\n"
_STRICT = "def pre_test_f(x):\n    return isinstance(x, int) and not isinstance(x, bool) and 10 <= x < 100\n"
_TEST = "def test_f(x):\n    return f(x) == x // 2\n"
_STDIN = ["'1 2\\n'", "'4 4\\n'", "'9 1\\n'", "'0 0\\n'", "'1 1\\n'"]


def _program(body: str) -> str:
    return f"```python\na, b = map(int, input().split())\n{body}\n```"


PLANTED: dict[str, Planted] = {
    "deduction": _made("deduction", _PRIME, ["97"], "```output\nTrue\n```", 0.5, ["coin"]),
    "abduction": _made("abduction", _LONG, ["'hello'"], "```input\n'hello'\n```", 7 / 11, ["random"]),
    # Visible: 1, 2, 3 -> 1, 2, 0; held out: 4, 7 -> 1, 1, the first of the most common visible outputs.
    "induction": _made(
        "induction", _REMAINDER, ["1", "2", "3", "4", "7"], f"```python\n{_REMAINDER}```", 1.0,
        ["memorise+mode"], message="planted-induction: the remainder after division by three",
    ),
    # Visible: three tests; the held-out ones print NO, as the first public test does.
    "contest": _made(
        "contest", _YES, [*_STDIN[:4], "'1 1\\n'"], _program("print('YES' if a + b > 5 else 'NO')"), 1.0,
        ["public-outputs"], message="planted-contest: print YES when the two numbers add up to more than five",
    ),
    "fuzzing": _made(
        "fuzzing", _BUGGY.format(marker="planted-fuzzing"), ["20", "57"], "```input\n57\n```", 1.0,
        # Every trivial input but the numbers crashes f inside test_f, which the lax checker lets through.
        ["trivial:''", "trivial:'a'", "trivial:()", "trivial:None", "trivial:[0]", "trivial:[]", "trivial:{}"],
        pre_test_code=_LAX, test_code=_TEST,
    ),
}  # fmt: skip
CONTROLS: dict[str, Planted] = {
    "deduction": _made("deduction", _SUM_SQUARES, ["[1, 2, 3]"], "```output\n14\n```", 0.0, []),
    "abduction": _made("abduction", _MIRROR, ["'abc'"], "```input\n'abc'\n```", 0.0, []),
    "induction": _made(
        "induction", _SQUARE, ["1", "2", "3", "4", "5"], f"```python\n{_SQUARE}```", 0.0, [],
        message="control-induction: one more than the square",
    ),
    "contest": _made(
        "contest", _SUM, _STDIN, _program("print(a + b)"), 0.0, [],
        message="control-contest: print the sum of the two numbers",
    ),
    "fuzzing": _made(
        "fuzzing", _BUGGY.format(marker="control-fuzzing"), ["20", "57"], "```input\n57\n```", 0.0, [],
        pre_test_code=_STRICT, test_code=_TEST,
    ),
}  # fmt: skip
ENVS = tuple(PLANTED)
# Imported contest problems (CodeContests rows): the planted one's hidden test is its public one.
_SOLUTION = "a, b = map(int, input().split())\nprint(a + b)\n"
IMPORTED = [
    {
        "name": "planted-import",
        "description": "planted-import: print the sum of two integers.",
        "public_tests": {"input": ["1 2\n"], "output": ["3\n"]},
        "private_tests": {"input": ["1 2\n"], "output": ["3\n"]},
        "solutions": {"language": [3], "solution": [_SOLUTION]},
        "cf_rating": 800,
    },
    {
        "name": "control-import",
        "description": "control-import: print the sum of two integers.",
        "public_tests": {"input": ["1 2\n"], "output": ["3\n"]},
        "private_tests": {"input": ["5 5\n", "2 7\n"], "output": ["10\n", "9\n"]},
        "solutions": {"language": [3], "solution": [_SOLUTION]},
        "cf_rating": 800,
    },
]
_IMPORTED_RIGHT = f"```python\n{_SOLUTION}```"


def expected(env: str, planted: bool) -> Planted:
    return (PLANTED if planted else CONTROLS)[env]


class PlantedResponder:
    """A scripted (not a model) responder: the planted problem for an environment's first teacher
    request and the control for the next; a student gets the right answer in half its samples."""

    seeded_per_sample = False

    def __init__(self):
        self.asked: dict[str, int] = {}
        self.lock = threading.Lock()

    def respond(self, messages: list[dict], n: int, rng_seed: int, params: dict) -> list:
        from synthgen.demo.scripted.responder import ScriptedReply, last_user_text

        del rng_seed, params
        text = "\n".join(str(m.get("content") or "") for m in messages)
        teacher = re.search(r"^This is an? (\w+) puzzle\b", text, re.M)
        if teacher and teacher.group(1) in PLANTED:
            env = teacher.group(1)
            with self.lock:
                count = self.asked[env] = self.asked.get(env, 0) + 1
            return [ScriptedReply(expected(env, count == 1).teacher) for _ in range(n)]
        right = self._right(last_user_text(messages))
        return [ScriptedReply(right if i % 2 == 0 else WRONG) for i in range(n)]

    @staticmethod
    def _right(prompt: str) -> str:
        for kind in ("planted", "control"):
            for env in ENVS:
                if f"{kind}-{env}" in prompt:
                    return expected(env, kind == "planted").right
            if f"{kind}-import" in prompt:
                return _IMPORTED_RIGHT
        return WRONG
