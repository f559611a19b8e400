"""The problem-set layouts `synthgen import` reads, each turned into contest Problems (synthgen.envs.contest).

  lcb           LiveCodeBench rows: question_content, public/private_test_cases (JSON or
                base64+zlib+pickle), starter_code, metadata.func_name, difficulty, question_id
  apps          APPS / TACO rows: question, input_output (JSON: {"inputs", "outputs", "fn_name"?}),
                solutions (JSON list of Python programs), starter_code, difficulty, problem_id / id
  codecontests  CodeContests rows: name, description, public_tests / private_tests (and, when
                asked, generated_tests) as {"input": [...], "output": [...]}, solutions
                {"language": [...], "solution": [...]} (3 = Python 3), difficulty / cf_rating

`detect(row)` names the layout of a row from its columns. Each reader returns a `RealProblem`:
the Problem, the reference solutions worth trying (Python only), and a difficulty folder name.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from synthgen.envs.problem import Problem

PYTHON3 = 3  # CodeContests' language code for Python 3


@dataclass
class RealProblem:
    key: str
    problem: Problem
    solutions: list[str] = field(default_factory=list)
    difficulty: str = "all"
    wrapped_outputs: list = field(default_factory=list)  # APPS call-based: alternative expected values


def detect(row: dict) -> str | None:
    if "question_content" in row and "public_test_cases" in row:
        return "lcb"
    if "input_output" in row and "question" in row:
        return "apps"
    if "description" in row and ("public_tests" in row or "private_tests" in row):
        return "codecontests"
    return None


def _json(value, default):
    if value is None or value == "":
        return default
    if isinstance(value, (dict, list)):
        return value
    return json.loads(value)


def _stdin_text(value) -> str:
    if isinstance(value, list):
        return "\n".join(str(v) for v in value) + "\n"
    return str(value)


# The sets' difficulty names -> the folder a problem goes to (anything else: "all").
LEVELS = {"easy": "easy", "introductory": "easy", "medium": "medium", "interview": "medium", "medium_hard": "medium"}
LEVELS |= {"hard": "hard", "competition": "hard", "very_hard": "hard"}


def _level(value) -> str:
    return LEVELS.get(str(value or "").strip().lower(), "all")


def read_lcb(row: dict, index: int) -> RealProblem:
    from synthgen.evals.lcb import to_problem

    key = str(row.get("question_id") or index)
    return RealProblem(key, to_problem(row), [], _level(row.get("difficulty")))


def read_apps(row: dict, index: int) -> RealProblem:
    from synthgen.sandbox import values

    spec = _json(row.get("input_output"), {})
    fn_name = spec.get("fn_name")
    ins, outs = list(spec.get("inputs") or []), list(spec.get("outputs") or [])
    if len(ins) != len(outs):
        raise ValueError(f"{len(ins)} test inputs but {len(outs)} outputs")
    inputs, outputs, wrapped = [], [], []
    for arg, out in zip(ins, outs):
        if fn_name:
            args = arg if isinstance(arg, list) else [arg]
            inputs.append(", ".join(repr(a) for a in args))
            outputs.append(values.encode(out))
            # APPS call-based outputs are often the value wrapped in a one-item list: either may be meant.
            wrapped.append(values.encode(out[0]) if isinstance(out, list) and len(out) == 1 else None)
        else:
            inputs.append(repr(_stdin_text(arg)))
            outputs.append(values.encode(_stdin_text(out)))
    starter = str(row.get("starter_code") or "")
    problem = Problem(
        env="contest",
        code="",
        inputs=inputs,
        message=str(row.get("question") or "").strip(),
        pre_test_code=starter if fn_name else "",
        test_code=str(fn_name or ""),
        outputs=outputs,
        visible_count=0,
    )
    solutions = [s for s in _json(row.get("solutions"), []) if isinstance(s, str)]
    key = str(row.get("problem_id") or row.get("id") or index)
    return RealProblem(key, problem, solutions, _level(row.get("difficulty")), wrapped if fn_name else [])


def read_codecontests(row: dict, index: int, include_generated: bool = False) -> RealProblem:
    from synthgen.sandbox import values

    groups = ["public_tests", "private_tests"] + (["generated_tests"] if include_generated else [])
    inputs, outputs, public = [], [], 0
    for name in groups:
        tests = _json(row.get(name), {}) or {}
        ins, outs = list(tests.get("input") or []), list(tests.get("output") or [])
        if len(ins) != len(outs):
            raise ValueError(f"{name}: {len(ins)} inputs but {len(outs)} outputs")
        inputs += [repr(str(x)) for x in ins]
        outputs += [values.encode(str(x)) for x in outs]
        if name == "public_tests":
            public = len(ins)
    sols = _json(row.get("solutions"), {}) or {}
    solutions = [s for lang, s in zip(sols.get("language") or [], sols.get("solution") or []) if lang == PYTHON3]
    problem = Problem(
        env="contest",
        code="",
        inputs=inputs,
        message=str(row.get("description") or "").strip(),
        outputs=outputs,
        visible_count=public,
    )
    rating = row.get("cf_rating") or 0
    difficulty = "all" if not rating else "easy" if rating < 1400 else "medium" if rating < 2000 else "hard"
    return RealProblem(str(row.get("name") or index), problem, solutions, difficulty)
