"""What a generate run costs: requests, tokens, sandbox jobs and GPU time, counted or estimated.

`counted` reads a `Cost` off a run's generate rows (what `synthgen stats` reports), `measured`
turns the same rows into per-request figures and `estimate` scales those to a configured run
(what `synthgen plan` reports), so an estimate and an outcome compare line by line.

Counting rules (the rows' token account, synthgen.turns.report): a teacher turn is one request (a
single-turn lineage one request with n = K); a valid turn one student request with n = M; prompt
tokens count once per request, completion tokens per sample. Sandbox jobs are approximate:
`validation_jobs` per problem checked in the sandbox plus one per scored attempt. GPU time:
prompt tokens at the prefill rate plus completion tokens at the role's decode rate
(ThroughputSettings), spread over the GPUs, kept full.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import polars as pl

from synthgen.envs import reasons as R
from synthgen.stages.generate.plan import SINGLE_SAMPLE
from synthgen.stages.plan.settings import RequestFigures, ThroughputSettings
from synthgen.turns.report import TOKEN_COLUMNS

# Invalid turns whose problem still ran in the sandbox (validation) before it was rejected.
CHECKED_IN_SANDBOX = (R.COMPILE_ERROR, R.EXECUTION_ERROR, R.NONDETERMINISTIC, R.OUTPUT_TOO_LARGE, R.TRIVIAL)


@dataclass
class Cost:
    turns: float
    teacher_requests: float
    student_requests: float
    student_attempts: float
    teacher_prompt_tokens: float
    teacher_completion_tokens: float
    student_prompt_tokens: float
    student_completion_tokens: float
    sandbox_jobs: float
    kept: float | None = None

    def __add__(self, other: Cost) -> Cost:
        total = {f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self) if f.name != "kept"}
        kept = None if self.kept is None or other.kept is None else self.kept + other.kept
        return Cost(**total, kept=kept)

    def as_dict(self, tp: ThroughputSettings) -> dict:
        teacher_s = self.teacher_prompt_tokens / tp.prompt_tokens_per_s
        teacher_s += self.teacher_completion_tokens / tp.teacher_tokens_per_s
        student_s = self.student_prompt_tokens / tp.prompt_tokens_per_s
        student_s += self.student_completion_tokens / tp.student_tokens_per_s
        by_role = {
            "teacher": (self.teacher_prompt_tokens, self.teacher_completion_tokens),
            "student": (self.student_prompt_tokens, self.student_completion_tokens),
        }
        tokens = sum(n for pair in by_role.values() for n in pair)
        requests = self.teacher_requests + self.student_requests
        gpu_hours = (teacher_s + student_s) / 3600
        out = {
            "turns": round(self.turns),
            "requests": {
                "teacher": round(self.teacher_requests),
                "student": round(self.student_requests),
                "total": round(requests),
            },
            "student_attempts": round(self.student_attempts),
            "tokens": {
                **{role: {"prompt": round(p), "completion": round(c)} for role, (p, c) in by_role.items()},
                "total": round(tokens),
            },
            "sandbox_jobs": round(self.sandbox_jobs),
            "gpu_hours": {
                "teacher": round(teacher_s / 3600, 4),
                "student": round(student_s / 3600, 4),
                "total": round(gpu_hours, 4),
            },
            "wall_hours": round(gpu_hours / tp.gpus, 4),
            "throughput": tp.model_dump(include=set(ThroughputSettings.model_fields)),
            "kept": None if self.kept is None else round(self.kept),
            "per_kept": None,
        }
        if self.kept:
            out["per_kept"] = {
                "requests": round(requests / self.kept, 2),
                "tokens": round(tokens / self.kept, 1),
                "sandbox_jobs": round(self.sandbox_jobs / self.kept, 2),
                "gpu_hours": round(gpu_hours / self.kept, 6),
            }
        return out


COST_COLUMNS = ("lineage_id", "env", "mode", "valid", "reason", "scored", "attempts", *TOKEN_COLUMNS)


def counted(rows: pl.DataFrame, kept: int | None, validation_jobs: float = 2.0) -> Cost:
    """The cost of the rows of a generate stage (`COST_COLUMNS`); `kept`: problems filter kept, if run."""
    single = rows.filter(pl.col("mode") == "single")
    single_requests = single["lineage_id"].str.replace(SINGLE_SAMPLE, "").n_unique() if single.height else 0
    valid = rows.filter(pl.col("valid"))
    checked = valid.height + rows.filter(pl.col("reason").is_in(CHECKED_IN_SANDBOX)).height

    def total(frame: pl.DataFrame, column: str) -> float:
        return float(frame[column].sum() or 0)  # nulls, an empty frame and an all-null column add nothing

    return Cost(
        turns=rows.height,
        teacher_requests=rows.height - single.height + single_requests,
        student_requests=valid.height,
        student_attempts=total(valid, "attempts"),
        teacher_prompt_tokens=total(rows, "teacher_tokens_in"),
        teacher_completion_tokens=total(rows, "teacher_tokens_out"),
        student_prompt_tokens=total(rows, "student_tokens_in"),
        student_completion_tokens=total(rows, "student_tokens_out"),
        sandbox_jobs=validation_jobs * checked + total(valid, "scored"),
        kept=kept,
    )


class PerTurn(RequestFigures):
    """Per-request figures (the settings' or measured on a run) and what only a run measures."""

    kept_share: float | None = None  # of turns: kept by filter (None: no filter output)
    scored_share: float = 1.0  # of a valid turn's attempts: run in the sandbox (not formatting failures)
    checked_invalid_share: float = 0.5  # of invalid turns: rejected after running in the sandbox


def measured(rows: pl.DataFrame, kept: int | None, validation_jobs: float) -> PerTurn:
    """Per-request figures of a run's generate rows (`COST_COLUMNS`): its averages."""
    cost = counted(rows, kept, validation_jobs)
    turns = max(cost.turns, 1)
    invalid = rows.filter(~pl.col("valid"))
    checked = invalid.filter(pl.col("reason").is_in(CHECKED_IN_SANDBOX)).height
    scored = float(rows.filter(pl.col("valid"))["scored"].sum() or 0)
    return PerTurn(
        teacher_prompt_tokens=cost.teacher_prompt_tokens / max(cost.teacher_requests, 1),
        teacher_completion_tokens=cost.teacher_completion_tokens / turns,
        student_prompt_tokens=cost.student_prompt_tokens / max(cost.student_requests, 1),
        student_completion_tokens=cost.student_completion_tokens / max(cost.student_attempts, 1),
        valid_share=cost.student_requests / turns,
        kept_share=None if kept is None else kept / turns,
        validation_jobs=validation_jobs,
        scored_share=scored / cost.student_attempts if cost.student_attempts else 1.0,
        checked_invalid_share=checked / invalid.height if invalid.height else 0.0,
    )


def estimate(lineages: int, turns: int, attempts: int, single_turn: int, figures: PerTurn) -> Cost:
    """The cost of `lineages` lineages of `turns` turns (or K single-turn samples) with M = `attempts`."""
    rows = lineages * (single_turn or turns)
    teacher_requests = lineages if single_turn else rows
    valid = rows * figures.valid_share
    checked = valid + (rows - valid) * figures.checked_invalid_share
    return Cost(
        turns=rows,
        teacher_requests=teacher_requests,
        student_requests=valid,
        student_attempts=valid * attempts,
        teacher_prompt_tokens=teacher_requests * figures.teacher_prompt_tokens,
        teacher_completion_tokens=rows * figures.teacher_completion_tokens,
        student_prompt_tokens=valid * figures.student_prompt_tokens,
        student_completion_tokens=valid * attempts * figures.student_completion_tokens,
        sandbox_jobs=checked * figures.validation_jobs + valid * attempts * figures.scored_share,
        kept=None if figures.kept_share is None else rows * figures.kept_share,
    )


def calibration(attempts: int, figures: PerTurn) -> Cost:
    """What `synthgen calibrate` spends on one problem: one student request of n = M, M scored attempts."""
    return Cost(
        turns=0,
        teacher_requests=0,
        student_requests=1,
        student_attempts=attempts,
        teacher_prompt_tokens=0,
        teacher_completion_tokens=0,
        student_prompt_tokens=figures.student_prompt_tokens,
        student_completion_tokens=attempts * figures.student_completion_tokens,
        sandbox_jobs=attempts * figures.scored_share,
    )
