"""A lineage's state, one teacher turn and its student evaluation: what generate, chain, calibrate
and online share.

A `Lineage` keeps what the next turn builds on (the last valid problem, the student's results on
it, what was wrong with the latest answer) and makes each `TurnRequest`; `TurnRunner` runs it: the
teacher writes a problem (from a seed, as a mutation of the previous one, or as an easier chain
step), the sandbox validates it, the student attempts it M times, the sandbox scores every attempt
and the result is summarised for the next turn. Every finished outcome, valid or not, is one
PROBLEMS row. A turn an infrastructure failure stopped (the teacher request, a student request,
the sandbox) did not finish: its outcome carries `infra` and keeps no row; a re-run retries it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from synthgen.envs import reasons
from synthgen.envs.base import Environment
from synthgen.envs.parsing import FormatError
from synthgen.envs.problem import Problem, Reward
from synthgen.envs.prompts import Kind
from synthgen.envs.summary import RowName, Strategy, Summary, summarize
from synthgen.store.measurement import provenance, wilson
from synthgen.turns.report import TOKEN_COLUMNS

if TYPE_CHECKING:
    from synthgen.sandbox import SandboxPool
    from synthgen.turns.settings import TurnLoopSettings


class Mode(RowName):
    """How a lineage makes its problems: the rows' `mode` column."""

    MULTI = "multi"
    SINGLE = "single"
    CHAIN = "chain"
    ONLINE = "online"


@dataclass(kw_only=True)
class TurnRequest:
    lineage_id: str
    seed_id: str
    env: Environment
    mode: str  # a Mode (calibrate keeps its input row's)
    turn: int
    kind: Kind
    strategy: str  # a Strategy (calibrate keeps its input row's)
    seed_text: str | None = None
    previous: Problem | None = None
    summary: Summary | None = None  # the student's results on `previous`, shown to the teacher
    feedback: str | None = None  # what was wrong with the previous answer ("<reason>: <detail>")
    target: tuple[float, float] | None = None  # the pass-rate band the new problem should land in
    key: str | None = None  # the turn's identity, when it differs from the lineage (chain tries)
    turns_left: int = 1  # turns its unit has left, this one included: how soon its requests get a slot

    @property
    def priority(self) -> int:
        """Requests the unit still has ahead at this turn's teacher request (two a turn): longest first."""
        return 2 * max(1, self.turns_left)

    @property
    def turn_id(self) -> str:
        return f"{self.key or self.lineage_id}:t{self.turn}"


def feedback_of(row: dict) -> str:
    """What the next teacher prompt is told about an invalid turn: "<reason>: <detail>"."""
    detail = (row.get("reason_detail") or "").strip()
    return f"{row['reason']}: {detail}" if detail else str(row["reason"])


@dataclass
class Lineage:
    """A lineage's state between turns, the one place generate, chain and online keep it: the
    problem the next turn builds on, the student's results on it, and what was wrong with the
    latest answer. `request` makes the next turn's request, `absorb` takes in its outcome."""

    lineage_id: str
    seed_id: str
    env: Environment
    mode: Mode
    seed_text: str | None = None
    previous: Problem | None = None
    summary: Summary | None = None
    feedback: str | None = None

    def request(
        self,
        turn: int,
        *,
        turns_left: int = 1,
        key: str | None = None,
        strategy: Strategy | None = None,
        target: tuple[float, float] | None = None,
    ) -> TurnRequest:
        """Turn `turn`: from the seed until a problem is valid, then a mutation of the last valid one
        (a chain step names its `strategy` and `target` band)."""
        kind = Kind.CHAIN if self.mode is Mode.CHAIN else Kind.FIRST if self.previous is None else Kind.MUTATE
        if strategy is None:
            strategy = Strategy.FIRST if self.previous is None else Strategy(self.summary.strategy)
        return TurnRequest(
            lineage_id=self.lineage_id, seed_id=self.seed_id, env=self.env, mode=self.mode, seed_text=self.seed_text,
            previous=self.previous, summary=self.summary, feedback=self.feedback,
            turn=turn, kind=kind, strategy=strategy, key=key, target=target, turns_left=turns_left,
        )  # fmt: skip

    def absorb(self, outcome: TurnOutcome, summary: Summary | None = None) -> bool:
        """Build on a valid, measured outcome (with `summary` in place of its own, when given); else
        tell the next turn what was wrong. True when the outcome was valid."""
        if outcome.problem is None or outcome.summary is None:
            self.feedback = feedback_of(outcome.row)
            return False
        self.previous, self.summary, self.feedback = outcome.problem, summary or outcome.summary, None
        return True


@dataclass
class TurnOutcome:
    row: dict[str, Any]
    problem: Problem | None = None  # set when the problem is valid
    summary: Summary | None = None  # set when the student was evaluated
    rewards: list[Reward] = field(default_factory=list)
    # The student's completions behind `rewards`, in attempt order (set with them): what
    # --keep-attempts keeps whole (synthgen.store.attempts); the row keeps only a summary.
    answers: list[Any] = field(default_factory=list)
    infra: str | None = None  # the kind of infrastructure failure that stopped the turn; no row then
    cause: str | None = None  # its "<kind>: <message>", for the summary and the stats file

    @property
    def finished(self) -> bool:
        return self.infra is None

    @classmethod
    def failed(cls, row: dict[str, Any], cause: str | None) -> TurnOutcome:
        """A turn stopped by an infrastructure failure; `cause` is "<kind>: <message>"."""
        return cls(row, infra=(cause or "unknown").split(":", 1)[0].strip() or "unknown", cause=cause)


RAW_ANSWER_CHARS = 8192  # an answer that did not parse is kept in its row up to this many characters


def raw_answer(text: str) -> str:
    """An unparsed answer as its row keeps it: safe text (the client made it so), bounded."""
    if len(text) <= RAW_ANSWER_CHARS:
        return text
    return text[:RAW_ANSWER_CHARS] + f"\n[... {len(text) - RAW_ANSWER_CHARS} more characters not kept]"


class TurnRunner:
    """Runs turns with one LLM client, one sandbox pool and one set of turn-loop settings."""

    def __init__(self, llm, pool: SandboxPool, settings: TurnLoopSettings, settings_hash: str):
        self.llm, self.pool, self.settings, self.settings_hash = llm, pool, settings, settings_hash
        self.mutation_sandbox_s = 0.0  # sandbox wall time the mutation scores took (bench/mutation.py)
        # Mutation scores running beside their turn's student request: a signal cancels them with
        # the units (cancelling a unit reaches them only after it unwinds, a few loop turns later).
        self.side_tasks: set[asyncio.Task] = set()

    def teacher_messages(self, req: TurnRequest) -> list[dict]:
        return req.env.teacher_messages(
            req.kind,
            seed_text=req.seed_text,
            previous=req.previous,
            summary=req.summary,
            feedback=req.feedback,
            target=req.target,
            strategy=req.strategy if req.kind is Kind.CHAIN else None,  # a mutation's comes with its summary
        )

    async def run(self, req: TurnRequest, completion=None) -> TurnOutcome:
        """Run one turn; `completion` lets a caller pass a teacher answer it already holds."""
        row = self._base_row(req)
        if completion is None:
            messages = self.teacher_messages(req)
            [completion] = await self.llm.complete("teacher", messages, 1, key=req.turn_id, priority=req.priority)
        if completion.status == "infra":
            return TurnOutcome.failed(row, completion.error)
        if completion.status == "prompt_too_long":  # the server's context cannot hold this prompt
            return TurnOutcome(self._reject(row, reasons.PROMPT_TOO_LONG, f"teacher {completion.error}"))
        row["teacher_model"] = completion.model or self.settings.teacher.model
        row["teacher_tokens_in"] = completion.prompt_tokens
        row["teacher_tokens_out"] = completion.completion_tokens
        if self.settings.keep_reasoning:
            row["teacher_reasoning"] = completion.reasoning
        if completion.status == "truncated":
            truncated = "teacher answer truncated (finish_reason=length)"
            row["teacher_answer"] = raw_answer(completion.content)
            return TurnOutcome(self._reject(row, reasons.FORMAT_ERROR, truncated))
        try:
            problem = req.env.parse_teacher(completion.content)
        except FormatError as exc:
            row["teacher_answer"] = raw_answer(completion.content)  # what the model wrote, for report
            return TurnOutcome(self._reject(row, exc.reason, exc.detail))
        row.update(problem.to_fields())
        problem, verdict = await req.env.validate(problem, self.pool, self.settings.env, self.settings.sandbox)
        row.update(problem.to_fields())
        if verdict.reason == reasons.INFRA:
            return TurnOutcome.failed(row, f"sandbox: {verdict.detail}" if verdict.detail else "sandbox")
        if not verdict.valid:
            return TurnOutcome(self._reject(row, verdict.reason, verdict.detail))
        return await self._evaluate_beside_probes(row, req, problem)

    async def measure(self, req: TurnRequest, row: dict[str, Any], problem: Problem) -> TurnOutcome:
        """Only the student part of a turn, on a problem that exists (`synthgen calibrate`): M attempts
        scored in the sandbox; `row` (the problem's own row) gets the new measurement, and the
        mutation score and chance level measured anew beside it, as generate measures them."""
        row = dict(row, attempts=self.settings.attempts, student_tokens_in=0, student_tokens_out=0)
        return await self._evaluate_beside_probes(row, req, problem)

    async def _evaluate_beside_probes(self, row: dict[str, Any], req: TurnRequest, problem: Problem) -> TurnOutcome:
        """The student's M attempts, with the mutation score and the chance probes (one sandbox job
        per problem) running in the sandbox while the student's request is out."""
        scoring = asyncio.ensure_future(self._mutation_score(req, problem))
        self.side_tasks.add(scoring)
        scoring.add_done_callback(self.side_tasks.discard)
        try:
            outcome = await self._evaluate(row, req, problem)
        except BaseException:
            scoring.cancel()
            raise
        result = await scoring
        if result is not None and result.infra and outcome.finished:
            return TurnOutcome.failed(row, "sandbox")
        if result is not None and outcome.finished:
            row.update(result.to_fields())
            self.mutation_sandbox_s += result.sandbox_s
        return outcome

    async def _mutation_score(self, req: TurnRequest, problem: Problem):
        cfg = self.settings.mutation
        if not (cfg.enabled or cfg.chance_probes):
            return None
        return await req.env.mutation_score(
            problem, self.pool, self.settings.sandbox, cfg.max_mutants, mutate=cfg.enabled, probes=cfg.chance_probes
        )

    async def _evaluate(self, row: dict[str, Any], req: TurnRequest, problem: Problem) -> TurnOutcome:
        m = self.settings.attempts
        messages = req.env.student_messages(problem)
        answers = await self.llm.complete("student", messages, m, key=req.turn_id, priority=req.priority - 1)
        failed = next((a for a in answers if a.status == "infra"), None)
        if failed is not None:  # the ok answers are cached; a re-run asks only for the missing ones
            return TurnOutcome.failed(row, failed.error)
        too_long = next((a for a in answers if a.status == "prompt_too_long"), None)
        if too_long is not None:  # no student answer can be had for this problem on this server
            return TurnOutcome(self._reject(row, reasons.PROMPT_TOO_LONG, f"student {too_long.error}"))
        served = next((a.model for a in answers if a.model), None)
        row["student_model"] = served or self.settings.student.model
        # Prompt tokens sit on the first sample of each request, completion tokens on every sample.
        row["student_tokens_in"] = sum(a.prompt_tokens for a in answers)
        row["student_tokens_out"] = sum(a.completion_tokens for a in answers)
        rewards = await req.env.rewards(
            problem,
            [a.content for a in answers],
            self.pool,
            self.settings.sandbox,
            truncated=[a.status == "truncated" for a in answers],
        )
        broken = next((r for r in rewards if r.status == "infra"), None)
        if broken is not None:
            return TurnOutcome.failed(row, f"sandbox: {broken.detail}" if broken.detail else "sandbox")
        summary = summarize(rewards, self.settings.progression)
        low, high = wilson(summary.correct, summary.scored)
        row.update(pass_rate_low=low, pass_rate_high=high)
        row.update(provenance(self.settings.student, self.settings.attempts, row["student_model"], self.pool.isolation))
        s = summary
        row.update(valid=True, reason=reasons.OK, pass_rate=s.pass_rate, scored=s.scored, correct=s.correct)
        row.update(format_failures=s.format_failures, infra_failures=s.infra_failures)
        row.update(solved_examples=list(s.solved), failed_examples=list(s.failed))
        return TurnOutcome(row, problem, summary, rewards, answers)

    def _base_row(self, req: TurnRequest) -> dict[str, Any]:
        s, parent = self.settings, req.previous.problem_id if req.previous else None
        row = dict(
            turn_id=req.turn_id, problem_id=None, seed_id=req.seed_id, lineage_id=req.lineage_id, parent_id=parent
        )
        row |= dict(env=req.env.name, mode=req.mode, turn=req.turn, valid=False, reason=reasons.OK, attempts=s.attempts)
        row |= dict.fromkeys(("scored", "correct", "format_failures", "infra_failures", *TOKEN_COLUMNS), 0)
        row["summary"] = req.summary.render() if req.summary else None
        row |= dict(strategy=req.strategy, teacher_model=s.teacher.model, student_model=s.student.model)
        return row | {"settings_hash": self.settings_hash}

    @staticmethod
    def _reject(row: dict[str, Any], reason: str, detail: str) -> dict[str, Any]:
        row.update(valid=False, reason=reason, reason_detail=detail, pass_rate=None)
        return row
