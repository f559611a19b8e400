"""One teacher turn and its student evaluation: the unit of work that generate and chain share.

A turn asks the teacher for a problem (from a seed, as a mutation of the previous problem, or as
an easier chain step), parses and validates it in the sandbox, has the student attempt it M
times, scores every attempt in the sandbox and summarises the result for the next turn. Every
outcome, valid or not, becomes one PROBLEMS row; infrastructure failures are carried as such
(reason `infra`, or attempts counted in `infra_failures`) and never as a wrong answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from synthgen.envs import reasons
from synthgen.envs.base import Environment, FormatError, Problem, Reward, Summary, summarize


@dataclass
class TurnRequest:
    lineage_id: str
    seed_id: str
    env: Environment
    mode: str  # multi | single | chain
    turn: int
    kind: str  # first | mutate | chain
    strategy: str  # first | easier | harder | similar | chain-easier
    seed_text: str | None = None
    previous: Problem | None = None
    summary: Summary | None = None
    sample: int = 0  # which of several samples of one request this turn is (single-turn mode)

    @property
    def turn_id(self) -> str:
        return f"{self.lineage_id}:t{self.turn}"


@dataclass
class TurnOutcome:
    row: dict[str, Any]
    problem: Problem | None = None  # set when the problem is valid
    summary: Summary | None = None  # set when the student was evaluated
    rewards: list[Reward] = field(default_factory=list)


class TurnRunner:
    """Runs turns with one LLM client, one sandbox pool and one set of generate settings."""

    def __init__(self, llm, pool, settings, settings_hash: str):
        self.llm, self.pool, self.settings, self.settings_hash = llm, pool, settings, settings_hash

    def teacher_messages(self, req: TurnRequest) -> list[dict]:
        return req.env.teacher_messages(req.kind, seed_text=req.seed_text, previous=req.previous, summary=req.summary)

    async def run(self, req: TurnRequest, completion=None) -> TurnOutcome:
        """Run one turn; `completion` lets a caller pass a teacher answer it already holds."""
        row = self._base_row(req)
        if completion is None:
            completion = (await self.llm.complete("teacher", self.teacher_messages(req), 1, key=req.turn_id))[0]
        row["teacher_tokens_in"] = completion.prompt_tokens
        row["teacher_tokens_out"] = completion.completion_tokens
        if self.settings.keep_reasoning:
            row["teacher_reasoning"] = completion.reasoning
        if completion.status == "infra":
            return TurnOutcome(self._reject(row, reasons.INFRA, f"teacher request failed: {completion.error}"))
        if completion.status == "truncated":
            return TurnOutcome(self._reject(row, reasons.FORMAT_ERROR, "teacher answer truncated (finish_reason=length)"))
        try:
            problem = req.env.parse_teacher(completion.content)
        except FormatError as exc:
            return TurnOutcome(self._reject(row, exc.reason, exc.detail))
        row.update(problem.to_fields())
        problem, verdict = await req.env.validate(problem, self.pool, self.settings.env, self.settings.sandbox)
        row.update(problem.to_fields())
        if not verdict.valid:
            return TurnOutcome(self._reject(row, verdict.reason, verdict.detail))
        return await self._evaluate(row, req, problem)

    async def _evaluate(self, row: dict[str, Any], req: TurnRequest, problem: Problem) -> TurnOutcome:
        m = self.settings.attempts
        answers = await self.llm.complete("student", req.env.student_messages(problem), m, key=req.turn_id)
        row["student_tokens_in"] = sum(a.prompt_tokens for a in answers)
        row["student_tokens_out"] = sum(a.completion_tokens for a in answers)
        scorable = [i for i, a in enumerate(answers) if a.status != "infra"]
        rewards: list[Reward] = [Reward(None, "infra", f"student request failed: {a.error}") for a in answers]
        if scorable:
            scored = await req.env.rewards(
                problem,
                [answers[i].content for i in scorable],
                self.pool,
                self.settings.sandbox,
                truncated=[answers[i].status == "truncated" for i in scorable],
            )
            for i, reward in zip(scorable, scored):
                rewards[i] = reward
        summary = summarize(problem, rewards, self.settings.progression)
        row.update(
            valid=True,
            reason=reasons.OK,
            pass_rate=summary.pass_rate,
            scored=summary.scored,
            correct=summary.correct,
            format_failures=summary.format_failures,
            infra_failures=summary.infra_failures,
        )
        return TurnOutcome(row, problem, summary, rewards)

    def _base_row(self, req: TurnRequest) -> dict[str, Any]:
        return {
            "turn_id": req.turn_id,
            "problem_id": None,
            "seed_id": req.seed_id,
            "lineage_id": req.lineage_id,
            "parent_id": req.previous.problem_id if req.previous else None,
            "env": req.env.name,
            "mode": req.mode,
            "turn": req.turn,
            "valid": False,
            "reason": reasons.OK,
            "attempts": self.settings.attempts,
            "scored": 0,
            "correct": 0,
            "format_failures": 0,
            "infra_failures": 0,
            "summary": req.summary.render() if req.summary else None,
            "strategy": req.strategy,
            "teacher_tokens_in": 0,
            "teacher_tokens_out": 0,
            "student_tokens_in": 0,
            "student_tokens_out": 0,
            "teacher_model": self.settings.teacher.model,
            "student_model": self.settings.student.model,
            "settings_hash": self.settings_hash,
        }

    @staticmethod
    def _reject(row: dict[str, Any], reason: str, detail: str) -> dict[str, Any]:
        row.update(valid=False, reason=reason, reason_detail=detail, pass_rate=None)
        return row
