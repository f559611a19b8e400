"""LiveCodeBench code generation as contest problems: the date window and the LCBv5 difficulty splits.

A row of `livecodebench/code_generation_lite` (mirrored as `lighteval/code_generation_lite`):
question_title, question_content, platform, question_id, contest_id, contest_date, starter_code,
difficulty (easy | medium | hard), public_test_cases (JSON: a list of {input, output, testtype:
"stdin" | "functional"}), private_test_cases (the same JSON, or base64 -> zlib -> pickle -> it),
metadata (JSON; `func_name` for call-based LeetCode problems). The pickle only ever wraps a str, so
it is read with an unpickler that refuses every global (nothing can run) and must yield a str.

Each problem becomes a `contest` Problem (synthgen.envs.contest), scored by that environment as in
training, in the splits `<start>-<end>` (e.g. 2024.08-2025.05, the paper's window) and `v5-easy`,
`v5-medium`, `v5-hard` (the LCBv5 period by difficulty); a problem may be in both. One whose test
cases cannot be read is skipped, with its id and the reason. Test-case integers may have any
number of digits (some outputs pass Python's 4300-digit limit): they are read in pieces and
written as hex literals, which have no such limit.
"""

from __future__ import annotations

import base64
import datetime as dt
import io
import json
import pickle
import zlib

from synthgen.envs.problem import Problem
from synthgen.errors import UserError
from synthgen.evals.data import Column, EvalItem, env_scorer

MAX_TESTS_BYTES = 1 << 30  # a decompressed private-test field larger than this is refused
COLUMNS = (
    Column(("question_content",), (str,)),
    Column(("public_test_cases",), (str, list), required=False),
    Column(("private_test_cases",), (str, list), required=False),
    Column(("metadata",), (str, dict), required=False),
    Column(("contest_date",), (str, dt.date), required=False),
    *(Column((name,), (str,), required=False) for name in ("difficulty", "starter_code", "question_title")),
    Column(("question_id",), (str, int), required=False),
)
_DIGITS = 4000  # decimal digits converted at once (under the interpreter's 4300-digit limit)


class _StringsOnly(pickle.Unpickler):
    """An unpickler for data, not objects: every global is refused, so no code can run."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"refused global {module}.{name}: only plain strings are read here")

    def persistent_load(self, pid):
        raise pickle.UnpicklingError("refused persistent id")


def decode_tests(field) -> list[dict]:
    """A test-case field as the list of {input, output, testtype} it holds (JSON, or compressed)."""
    if field is None or field == "":
        return []
    if isinstance(field, list):
        return field
    text = str(field)
    try:
        tests = json.loads(text)
    except ValueError:
        tests = json.loads(_unpack(text))
    if not isinstance(tests, list) or not all(isinstance(t, dict) for t in tests):
        raise ValueError("the test cases are not a list of objects")
    return tests


def _unpack(text: str) -> str:
    """base64 -> zlib -> pickle of a str, read without running anything."""
    raw = base64.b64decode(text.encode("ascii"), validate=False)
    inflater = zlib.decompressobj()
    data = inflater.decompress(raw, MAX_TESTS_BYTES)
    if inflater.unconsumed_tail:
        raise ValueError(f"compressed test cases expand past {MAX_TESTS_BYTES} bytes")
    value = _StringsOnly(io.BytesIO(data)).load()
    if isinstance(value, bytes):
        value = value.decode("utf-8")
    if not isinstance(value, str):
        raise ValueError(f"the pickled test cases are a {type(value).__name__}, not a string")
    return value


def big_int(text: str) -> int:
    """A decimal integer literal of any length (json's parse_int, which would stop at 4300 digits)."""
    sign, digits = (-1, text[1:]) if text.startswith("-") else (1, text)
    if len(digits) <= _DIGITS:
        return sign * int(digits)
    cut = len(digits) - len(digits) // 2
    return sign * (big_int(digits[:cut]) * 10 ** (len(digits) - cut) + big_int(digits[cut:]))


_JSON, _JSON_BIG_INTS = json.JSONDecoder(), json.JSONDecoder(parse_int=big_int)


def read_json(text: str):
    """json.loads, integers of any length included (the hook, a Python call per integer, only
    for text the plain decoder refuses: over Python's 4,300-digit limit, or not JSON)."""
    try:
        return _JSON.decode(text)
    except ValueError:
        return _JSON_BIG_INTS.decode(text)


def literal(value) -> str:
    """`repr` of a JSON value, with integers too long for decimal text written in hex."""
    if type(value) is int and value.bit_length() > 12000:
        return hex(value)
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{literal(k)}: {literal(v)}" for k, v in value.items()) + "}"
    return repr(value)


def contest_date(row: dict) -> dt.date | None:
    value = row.get("contest_date")
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str) and value:
        try:
            return dt.datetime.fromisoformat(value.replace("Z", "+00:00")).date()
        except ValueError:
            return dt.date.fromisoformat(value[:10])
    return None


def to_problem(row: dict) -> Problem:
    """A LiveCodeBench row as a contest Problem (public tests first; see synthgen.envs.contest)."""
    from synthgen.sandbox import values

    public, private = decode_tests(row.get("public_test_cases")), decode_tests(row.get("private_test_cases"))
    metadata = row.get("metadata") or "{}"
    metadata = json.loads(metadata) if isinstance(metadata, str) else dict(metadata)
    func = str(metadata.get("func_name") or "")
    inputs, outputs = [], []
    for test in public + private:
        if test.get("testtype") == "functional":
            args = [read_json(line) for line in str(test["input"]).split("\n") if line.strip()]
            inputs.append(", ".join(literal(a) for a in args))
            outputs.append(values.encode(read_json(test["output"])))
        else:
            inputs.append(repr(str(test["input"])))
            outputs.append(values.encode(str(test["output"])))
    call_based = any(t.get("testtype") == "functional" for t in public + private)
    return Problem(
        env="contest",
        code="",
        inputs=inputs,
        message=str(row.get("question_content") or "").strip(),
        pre_test_code=str(row.get("starter_code") or "") if call_based else "",
        test_code=func if call_based else "",
        outputs=outputs,
        visible_count=len(public),
    )


def splits_of(row: dict, settings) -> tuple[str, ...]:
    """The splits a problem belongs to under the LCB settings (the window, LCBv5 by difficulty)."""
    day = contest_date(row)
    if day is None:
        return ()
    out = []
    if settings.start <= day <= settings.end:
        out.append(f"{settings.start:%Y.%m}-{settings.end:%Y.%m}")
    difficulty = str(row.get("difficulty") or "").lower()
    if settings.v5_start <= day <= settings.v5_end and difficulty in ("easy", "medium", "hard"):
        out.append(f"v5-{difficulty}")
    return tuple(out)


def items(rows: list[dict], settings, pool, sandbox, skipped: list | None = None) -> list[EvalItem]:
    """The problems of the splits as eval items; an unreadable one is left out, (id, reason) in `skipped`."""
    from synthgen.envs import get_env

    env = get_env("contest")
    out = []
    for row in rows:
        splits = splits_of(row, settings)
        if not splits:
            continue
        ident = str(row.get("question_id") or row.get("question_title") or len(out))
        try:
            problem = to_problem(row)
            if not problem.inputs:
                raise ValueError("no test cases")
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError, pickle.UnpicklingError) as exc:
            if skipped is not None:
                skipped.append((ident, f"unreadable test cases: {str(exc)[:300]}"))
            continue
        out.append(
            EvalItem("lcb", ident, splits, env.student_messages(problem), env_scorer(env, problem, pool, sandbox))
        )
    if not out and skipped:
        raise UserError(
            f"lcb: no readable problem in the splits ({len(skipped)} unreadable; {skipped[0][0]}: {skipped[0][1]})"
        )
    if not out:
        raise UserError(
            f"lcb: no problem dated in {settings.start}..{settings.end} or {settings.v5_start}..{settings.v5_end} "
            f"in {len(rows)} rows"
        )
    return out
