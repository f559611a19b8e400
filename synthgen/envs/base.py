"""The environment contract: what the generate loop and the train reward call, and nothing more.

One environment (induction, abduction, deduction, fuzzing; SPEC §2) knows how to

    env = get_env("induction")                       # or get_env(name, EnvSettings(...))
    msgs = env.teacher_messages("first", seed_text=snippet)          # kind: first | mutate | chain
    msgs = env.teacher_messages("mutate", previous=problem, summary=summary)
    problem = env.parse_teacher(completion_text)     # raises FormatError(reason, detail)
    problem, verdict = await env.validate(problem, pool, env_settings, sandbox_settings)
    msgs = env.student_messages(problem)             # only for verdict.valid problems
    rewards = await env.rewards(problem, completions, pool, sandbox_settings, truncated=[...])
    summary = summarize(problem, rewards, progression_settings)   # what the next turn sees
    summary.render()                                              # the text the teacher reads

One attempt alone: `await env.score(problem, completion, pool, sandbox, truncated=False)`, which
is `env.parse_student(text)` (FormatError -> a format failure) then `await env.check(...)`.
`pool` is a synthgen.sandbox.SandboxPool (anything with async `run(job)` and
`run_twice_for_determinism(job)`); `sandbox` a SandboxSettings (timeout_s, memory_mb).

`validate` fills `problem.outputs` (gold values from execution only, in the sandbox's canonical
encoding; for fuzzing, whether test_f passed on each example input) and, for induction,
`problem.visible_count`. A `Reward` is 1.0 or 0.0; an answer that
cannot be read or was truncated is a *format* failure (0.0, counted in the pass rate); an
*infra* failure (sandbox broke) has value None and is never a data point. Prompts are Jinja2
templates in `prompts/` (see synthgen.envs.prompts). All model-written code runs in the sandbox.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from synthgen import records
from synthgen.config.generate import EnvSettings, ProgressionSettings
from synthgen.envs.parsing import FormatError

__all__ = [
    "Environment", "FormatError", "Problem", "Reward", "Summary", "Verdict", "summarize",
    "TEACHER_KINDS", "STRATEGIES",
]

TEACHER_KINDS = ("first", "mutate", "chain")
STRATEGIES = ("easier", "harder", "similar")
MAX_ANSWER_CHARS = 200_000
EXAMPLE_CHARS = 3000  # longest student answer shown in a summary
_FIELDS = ("code", "inputs", "outputs", "message", "pre_test_code", "test_code", "visible_count")


@dataclass
class Problem:
    """A teacher problem. `inputs` are argument-list source texts in canonical form ("3, [1, 2]",
    "s='a,b', k=2"); `outputs` are the gold values of f on them, in the sandbox encoding."""

    env: str
    code: str
    inputs: list[str]
    message: str = ""
    pre_test_code: str = ""  # fuzzing: defines pre_test_f
    test_code: str = ""  # fuzzing: defines test_f
    outputs: list[str] = field(default_factory=list)
    visible_count: int | None = None  # induction: how many leading pairs the student sees

    @property
    def problem_id(self) -> str:
        return records.problem_id(self.env, self.code, self.inputs, self.message)

    def to_fields(self) -> dict[str, Any]:
        """The PROBLEMS columns a problem owns (empty strings become null)."""
        out: dict[str, Any] = {name: getattr(self, name) for name in _FIELDS}
        for name in ("message", "pre_test_code", "test_code"):
            out[name] = out[name] or None
        out["inputs"] = list(self.inputs)
        out["outputs"] = list(self.outputs) if self.outputs else None
        out["problem_id"] = self.problem_id
        out["env"] = self.env
        return out

    @classmethod
    def from_fields(cls, row: dict[str, Any]) -> "Problem":
        """From a PROBLEMS row (or a hand-written JSON object with the same keys)."""
        visible = row.get("visible_count")
        return cls(
            env=str(row["env"]),
            code=str(row.get("code") or ""),
            inputs=[str(x) for x in (row.get("inputs") or [])],
            message=str(row.get("message") or ""),
            pre_test_code=str(row.get("pre_test_code") or ""),
            test_code=str(row.get("test_code") or ""),
            outputs=[str(x) for x in (row.get("outputs") or [])],
            visible_count=None if visible is None else int(visible),
        )

    def program(self) -> str:
        """The module the sandbox runs: f, and for fuzzing the two checkers after it."""
        parts = [self.code, self.pre_test_code, self.test_code]
        return "\n\n\n".join(p for p in parts if p) + "\n"


@dataclass
class Verdict:
    valid: bool
    reason: str  # reasons.OK or one reasons.GENERATION code
    detail: str = ""


@dataclass
class Reward:
    """One scored student attempt."""

    value: float | None  # 1.0 / 0.0; None only when status == "infra"
    status: str  # "ok" | "format" (unreadable or truncated: value 0.0) | "infra" (value None)
    detail: str = ""
    answer: str = ""  # the parsed answer (code, argument list or literal), for summaries
    calls: list = field(default_factory=list)  # the sandbox CallVerdicts behind it (verify prints them)


@dataclass
class Summary:
    """The student's M attempts at one problem, as the next teacher turn sees them (SPEC §4)."""

    pass_rate: float | None  # correct / scored; None when nothing was scored
    attempts: int
    scored: int  # attempts with a reward (format failures count as 0; infra is left out)
    correct: int
    format_failures: int
    infra_failures: int
    solved: list[str]  # up to two shortest distinct correct answers
    failed: list[str]  # up to two shortest distinct wrong answers
    strategy: str  # easier | harder | similar
    target_low: float = 0.35
    target_high: float = 0.65

    def render(self) -> str:
        lines = [f"Attempts: {self.attempts}, scored: {self.scored}, correct: {self.correct}"]
        if self.format_failures:
            lines.append(f"Answers that could not be read (counted as wrong): {self.format_failures}")
        rate = "n/a (no attempt could be scored)" if self.pass_rate is None else f"{self.pass_rate:.3f}"
        lines.append(f"Pass rate: {rate}")
        for title, answers in (("Example of a correct answer", self.solved), ("Example of a wrong answer", self.failed)):
            for i, answer in enumerate(answers, 1):
                if len(answer) > EXAMPLE_CHARS:  # one huge answer must not crowd out the prompt
                    answer = answer[:EXAMPLE_CHARS] + f"\n[... {len(answer) - EXAMPLE_CHARS} more characters]"
                lines.append(f"{title} {i}:\n{answer}")
        if not self.solved:
            lines.append("No attempt was correct.")
        if not self.failed:
            lines.append("No attempt was wrong.")
        return "\n".join(lines)


def choose_strategy(pass_rate: float | None, progression: ProgressionSettings) -> str:
    """SPEC §4: p <= easier_at -> easier; p > harder_above -> harder; otherwise similar."""
    if pass_rate is None:
        return "similar"  # no evidence either way: keep the level
    if pass_rate <= progression.easier_at:
        return "easier"
    if pass_rate > progression.harder_above:
        return "harder"
    return "similar"


def summarize(problem: Problem, rewards: list[Reward], progression: ProgressionSettings) -> Summary:
    """Pass rate over scored attempts (infra excluded), examples, and the next strategy."""
    del problem  # the summary depends on the attempts only; kept in the signature for callers
    scored = [r for r in rewards if r.value is not None]
    correct = [r for r in scored if r.value == 1.0]
    rate = (len(correct) / len(scored)) if scored else None
    wrong = [r for r in scored if r.value != 1.0]
    # Parsed wrong answers teach the teacher more than unreadable ones: show those first.
    wrong_answers = [r.answer for r in wrong if r.status == "ok" and r.answer] or [
        f"(unreadable answer: {r.detail})" for r in wrong if r.status == "format"
    ]
    return Summary(
        pass_rate=rate,
        attempts=len(rewards),
        scored=len(scored),
        correct=len(correct),
        format_failures=sum(r.status == "format" for r in rewards),
        infra_failures=sum(r.status == "infra" for r in rewards),
        solved=_shortest_distinct([r.answer for r in correct if r.answer]),
        failed=_shortest_distinct(wrong_answers),
        strategy=choose_strategy(rate, progression),
        target_low=progression.target_low,
        target_high=progression.target_high,
    )


def _shortest_distinct(answers: list[str], k: int = 2) -> list[str]:
    unique = list(dict.fromkeys(a.strip() for a in answers if a.strip()))
    return sorted(unique, key=lambda a: (len(a), a))[:k]


class Environment(ABC):
    """One environment. Subclasses set `name`, the required helper functions and the parts below."""

    name: str = ""
    helpers: tuple[str, ...] = ()  # functions besides f the teacher must define (fuzzing)

    def __init__(self, settings: EnvSettings | None = None):
        self.settings = settings or EnvSettings()

    # -- teacher ---------------------------------------------------------------------------
    def teacher_messages(
        self,
        kind: str,
        *,
        seed_text: str | None = None,
        previous: Problem | None = None,
        summary: Summary | None = None,
    ) -> list[dict]:
        from synthgen.envs import prompts

        return prompts.teacher_messages(self, kind, seed_text=seed_text, previous=previous, summary=summary)

    @abstractmethod
    def parse_teacher(self, text: str) -> Problem: ...

    @abstractmethod
    async def validate(self, problem: Problem, pool, settings: EnvSettings, sandbox) -> tuple[Problem, Verdict]: ...

    # -- student ---------------------------------------------------------------------------
    def student_messages(self, problem: Problem) -> list[dict]:
        from synthgen.envs import prompts

        return prompts.student_messages(self, problem)

    @abstractmethod
    def parse_student(self, text: str) -> str:
        """The answer in canonical form (code, argument list or encoded literal); FormatError if none."""

    async def rewards(
        self,
        problem: Problem,
        completions: list[str],
        pool,
        sandbox,
        truncated: list[bool] | None = None,
    ) -> list[Reward]:
        """Score every completion; the sandbox runs them concurrently."""
        import asyncio

        flags = list(truncated) if truncated is not None else [False] * len(completions)
        if len(flags) != len(completions):
            raise ValueError("truncated must have one flag per completion")
        return list(await asyncio.gather(*(
            self.score(problem, text, pool, sandbox, truncated=flag) for text, flag in zip(completions, flags)
        )))

    async def score(self, problem: Problem, completion: str, pool, sandbox, truncated: bool = False) -> Reward:
        """One attempt: format failure, infra failure, or a 1/0 reward from the sandbox."""
        if truncated:
            return Reward(0.0, "format", "the answer was cut off (max tokens)")
        try:
            answer = self.parse_student(completion)
        except FormatError as exc:
            return Reward(0.0, "format", exc.detail)
        if len(answer) > MAX_ANSWER_CHARS:  # far beyond any real answer; also beyond the sandbox's job cap
            return Reward(0.0, "format", f"answer longer than {MAX_ANSWER_CHARS} characters")
        return await self.check(problem, answer, pool, sandbox)

    @abstractmethod
    async def check(self, problem: Problem, answer: str, pool, sandbox) -> Reward:
        """Reward a parsed answer."""

    # -- prompt rendering helpers ----------------------------------------------------------
    def prompt_inputs(self) -> int:
        """How many inputs the teacher prompt asks for."""
        return 1
