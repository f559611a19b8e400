"""The environment contract: what the generate loop, the chain stage, `verify` and the train reward call.

One environment (induction, abduction, deduction, fuzzing: Table 1 of Sancaktar et al., "A Deep
Dive into Scaling RL for Code Generation with Synthetic Data and Curricula") knows how to

    env = get_env("induction")                       # or get_env(name, EnvSettings(...))
    msgs = env.teacher_messages("mutate", previous=problem, summary=summary)   # or "first", "chain"
    problem = env.parse_teacher(completion_text)     # raises FormatError(reason, detail)
    problem, verdict = await env.validate(problem, pool, env_settings, sandbox_settings)
    msgs = env.student_messages(problem)             # only for verdict.valid problems
    rewards = await env.rewards(problem, completions, pool, sandbox_settings, truncated=[...])
    summary = summarize(rewards, progression_settings)   # synthgen.envs.summary
    reward = await env.score(problem, completion, pool, sandbox)   # one attempt: parse_student, check

`pool` is a synthgen.sandbox.SandboxPool; `sandbox` a SandboxSettings (timeout_s, memory_mb).

`validate` fills `problem.outputs` (gold values from execution only, in the sandbox's canonical
encoding; for fuzzing, whether test_f passed on each example input) and, for induction,
`problem.visible_count`. A `Reward` is 1.0 or 0.0; an answer that cannot be read or was
truncated is a *format* failure (0.0, counted in the pass rate); an *infra* failure (sandbox
broke) has value None and is never a data point. All model-written code runs in the sandbox.
Everything that differs between environments is a method or attribute here, so no other module
switches on an environment's name.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod

from synthgen.envs import mutation, parsing, prompts, reasons, validation
from synthgen.envs.chance import ChanceResult
from synthgen.envs.parsing import FormatError, short
from synthgen.envs.problem import Problem, Reward, Verdict
from synthgen.envs.settings import EnvSettings

MAX_ANSWER_CHARS = 200_000


def split_holdout(k: int, holdout_fraction: float) -> int:
    """How many of k pairs the student sees: k - round(k * fraction), with at least one of each."""
    return max(1, k - max(1, round(k * holdout_fraction)))


class Environment(ABC):
    """One environment. Subclasses set `name` and implement the abstract methods below."""

    name: str = ""
    helpers: tuple[str, ...] = ()  # functions besides f the teacher must define (fuzzing)
    requested_inputs: int = 1  # how many inputs the teacher prompt asks for (see prompt_inputs)
    needs_code: bool = True  # a problem is its code; False where tests alone define it (imported contests)
    needs_message: bool = False  # the teacher's answer must hold a ```message block

    def __init__(self, settings: EnvSettings | None = None):
        self.settings = settings or EnvSettings()

    # -- teacher ---------------------------------------------------------------------------
    # env.teacher_messages(kind, seed_text=..., previous=..., summary=...): see prompts.teacher_messages.
    teacher_messages = prompts.teacher_messages

    def prompt_inputs(self) -> int:
        """How many inputs the teacher prompt asks for (environments with a range clamp it to their settings)."""
        return self.requested_inputs

    def parse_teacher(self, text: str) -> Problem:
        """The problem in the teacher's answer: f, its inputs, and the message `teacher_message` keeps."""
        answer = parsing.teacher_answer(text, need_message=self.needs_message)
        code = parsing.strip_main_guard(answer.code)
        inputs = parsing.teacher_inputs(answer.input_blocks)
        message = self.teacher_message(answer.message or "", code)
        return Problem(env=self.name, code=code, inputs=inputs, message=message)

    def teacher_message(self, message: str, code: str) -> str:
        """The message a problem keeps. Here it is optional (the student sees the code): kept only if
        it is prose. Environments whose student must not see the code raise FormatError instead."""
        return "" if parsing.has_code(message) else message

    @abstractmethod
    async def validate(self, problem: Problem, pool, settings: EnvSettings, sandbox) -> tuple[Problem, Verdict]: ...

    # -- student ---------------------------------------------------------------------------
    @abstractmethod
    def student_pairs(self, problem: Problem, pairs: list[dict]) -> list[dict]:
        """The input/output pairs the student may see ({"input", "output"} dicts; None hides a side).

        Decided here, in code, rather than trusted to each template: the student must never see
        what it is asked to find."""

    def student_messages(self, problem: Problem) -> list[dict]:
        view = prompts.problem_view(problem)
        view["pairs"] = self.student_pairs(problem, view["pairs"])
        return prompts.student_messages(self, view)

    @abstractmethod
    def parse_student(self, text: str) -> str:
        """The answer in canonical form (code, argument list or encoded literal); FormatError if none."""

    async def rewards(
        self, problem: Problem, completions: list[str], pool, sandbox, truncated: list[bool] | None = None
    ) -> list[Reward]:
        """Score every completion (one truncated flag each); the sandbox runs them concurrently."""
        flags = truncated if truncated is not None else [False] * len(completions)
        pairs = list(zip(completions, flags, strict=True))  # a ValueError when the counts differ
        return list(await asyncio.gather(*(self.score(problem, t, pool, sandbox, truncated=f) for t, f in pairs)))

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

    # -- how well the inputs pin the problem down (synthgen.envs.mutation), and its chance level --
    async def mutation_score(self, problem: Problem, pool, sandbox, limit: int = 32, mutate: bool = True, probes=True):
        """A valid problem's mutation score (a MutationResult): mutants of f and baselines on its
        inputs (with `mutate`), and its chance level (`.chance`, with `probes`), in one sandbox job."""
        wanted = self.chance_probes(problem) if probes else []
        if not self.needs_code or not (mutate or wanted):
            result = mutation.MutationResult(None, measured=mutate)
        else:
            result = await mutation.score_function(problem, pool, sandbox, limit, wanted, mutate)
        if probes and not result.infra:
            ran = [(probe, result.probes.get(probe.name, [None] * len(probe.calls))) for probe in wanted]
            result.chance = await self.chance_result(problem, ran, pool, sandbox)
        return result

    def chance_probes(self, problem: Problem) -> list:
        """The calls (synthgen.envs.chance.Probe) the chance strategies need run in the mutation job."""
        return []

    async def chance_result(self, problem: Problem, ran: list, pool=None, sandbox=None):
        """The chance level (synthgen.envs.chance.ChanceResult) from the probes' verdicts, as
        [(probe, [CallVerdict or None per call])], and the strategies that need nothing run."""
        return ChanceResult()

    # -- `synthgen verify` -----------------------------------------------------------------
    def call_labels(self, problem: Problem, answer: str) -> list[str]:
        """How `verify` names the sandbox calls behind one scored answer, in order."""
        return [f"f({answer})"]

    def verify_notes(self, problem: Problem, answer: str) -> list[str]:
        """Extra lines `verify` prints after the calls (e.g. the gold value compared without running)."""
        return []


class ManyInputs(Environment):
    """An environment whose problem is `f` with several teacher-chosen inputs and a message
    (induction, contest): the prompt asks for a count clamped to the settings' range (at least 2),
    and the teacher's answer gives the code, the inputs and the message, which `teacher_message`
    vets (it must not give the code away)."""

    needs_message = True

    def prompt_inputs(self) -> int:
        return min(max(self.requested_inputs, self.settings.min_inputs, 2), self.settings.max_inputs)


class SingleInput(Environment):
    """The teacher side abduction and deduction share: `f` and exactly one input, run twice (two
    hash seeds) for the gold output o, which must be something a student can read and write back:
    a value whose printed form is a Python literal that decodes to the same value (huge integers,
    whose repr the sandbox refuses to print in decimal, are rejected as output_too_large)."""

    async def validate(self, problem: Problem, pool, settings: EnvSettings, sandbox) -> tuple[Problem, Verdict]:
        from synthgen.sandbox import values

        problem = Problem(**{**problem.__dict__, "outputs": [], "visible_count": None})
        bad = validation.check_inputs(problem, 1, 1, what="input")
        bad = bad or validation.static_checks(problem, ("f",))
        if bad:
            return problem, bad
        verdicts, bad = await validation.run_f(problem, pool, sandbox, settings.max_output_chars)
        if bad:
            return problem, bad
        shown = verdicts[0].value or ""
        try:
            readable = values.equal(values.from_literal(shown), verdicts[0].encoded)
        except ValueError:
            readable = False
        if not readable:
            why = f"the output cannot be written as a Python literal: {short(shown, 80)}"
            return problem, Verdict(False, reasons.OUTPUT_TOO_LARGE, why)
        problem.outputs = [verdicts[0].encoded]
        return problem, Verdict(True, reasons.OK)
