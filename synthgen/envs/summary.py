"""What the next teacher turn learns about the student: the `Summary` of M attempts and the strategy it implies.

The paper's teacher sees the preceding problem and a summary of the student's attempts (pass
rate, a few solved and failed answers), and is told a strategy chosen from the pass rate p
(Section 3.3 and Appendix F). The paper names p = 0 -> easier and p > 0.65 -> harder, aiming at
0.35-0.65; the other cases are our reading, every boundary a ProgressionSettings field:

    p <= easier_at                    easier           (default easier_at = 0: never solved)
    easier_at < p < target_low        somewhat-easier  (toward the target band)
    target_low <= p <= target_high    similar          (a new variant at the same level)
    p > target_high                   harder
    no attempt scored                 similar          (no evidence either way)

Chain steps have their own strategies (`chain-medium`, `chain-easy`), chosen by the chain stage.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from synthgen.envs.problem import Reward
from synthgen.envs.settings import ProgressionSettings


class RowName(str, Enum):
    """A name written to rows and prompts as its plain string (not `StrEnum`: Python 3.10 is supported)."""

    def __str__(self) -> str:
        return self.value


class Strategy(RowName):
    """How a new problem relates to the previous one: the rows' `strategy` column."""

    FIRST = "first"
    EASIER = "easier"
    SOMEWHAT_EASIER = "somewhat-easier"
    SIMILAR = "similar"
    HARDER = "harder"
    CHAIN_MEDIUM = "chain-medium"
    CHAIN_EASY = "chain-easy"


MUTATE_STRATEGIES = (Strategy.EASIER, Strategy.SOMEWHAT_EASIER, Strategy.SIMILAR, Strategy.HARDER)
CHAIN_STRATEGIES = (Strategy.CHAIN_MEDIUM, Strategy.CHAIN_EASY)
STRATEGIES = tuple(Strategy)
EXAMPLE_CHARS = 3000  # longest student answer shown in a summary
EXAMPLES_SHOWN = 2  # solved and failed answers each


@dataclass
class Summary:
    """The student's M attempts at one problem, as the next teacher turn sees them."""

    pass_rate: float | None  # correct / scored; None when nothing was scored
    attempts: int
    scored: int  # attempts with a reward (format failures count as 0; infra is left out)
    correct: int
    format_failures: int = 0
    infra_failures: int = 0
    solved: list[str] = field(default_factory=list)  # up to two shortest distinct correct answers
    failed: list[str] = field(default_factory=list)  # up to two shortest distinct wrong answers
    strategy: str = "similar"  # one of MUTATE_STRATEGIES
    target_low: float = 0.35
    target_high: float = 0.65

    def render(self) -> str:
        """The text the teacher reads (also stored in the PROBLEMS `summary` column of the next turn)."""
        lines = [
            f"The student made {self.attempts} attempts; {self.scored} could be scored "
            f"and {self.correct} of those were correct."
        ]
        if self.format_failures:
            lines.append(f"{self.format_failures} answers could not be read; they count as wrong.")
        if self.infra_failures:
            lines.append(f"{self.infra_failures} attempts were lost to infrastructure failures and are left out.")
        rate = "unknown (no attempt could be scored)" if self.pass_rate is None else f"{self.pass_rate:.3f}"
        lines.append(f"Pass rate: {rate}")
        for title, answers in (("Solved example", self.solved), ("Failed example", self.failed)):
            for i, answer in enumerate(answers, 1):
                if len(answer) > EXAMPLE_CHARS:  # one huge answer must not crowd out the prompt
                    answer = answer[:EXAMPLE_CHARS] + f"\n[... {len(answer) - EXAMPLE_CHARS} more characters]"
                lines += ["", f"{title} {i}:", "```", answer.strip("\n"), "```"]
        # The closing lines follow the counts, never only the examples: a summary without example
        # answers (a preview, or a row whose wrong answers were all unreadable) must not contradict them.
        if not self.correct:
            lines += ["", "No attempt was correct."]
        elif not self.solved:
            lines += ["", "No correct answer is shown."]
        if self.scored and self.correct == self.scored:
            lines += ["", "No attempt was wrong."]
        elif not self.failed:
            lines += ["", "No wrong answer is shown."]
        return "\n".join(lines)

    @classmethod
    def from_row(cls, row: dict[str, Any], progression: ProgressionSettings) -> Summary:
        """The summary of a stored PROBLEMS row (its counts and its `solved_examples` / `failed_examples`)."""
        rate = row.get("pass_rate")
        counts = ("attempts", "scored", "correct", "format_failures", "infra_failures")
        return cls.of(
            progression,
            pass_rate=None if rate is None else float(rate),
            **{name: int(row.get(name) or 0) for name in counts},
            solved=[str(a) for a in (row.get("solved_examples") or [])],
            failed=[str(a) for a in (row.get("failed_examples") or [])],
        )

    @classmethod
    def made_up(cls, pass_rate: float, progression: ProgressionSettings, attempts: int = 32) -> Summary:
        """A summary with the given pass rate and no example answers (for previews such as `prompts show`)."""
        correct = round(pass_rate * attempts)
        return cls.of(progression, pass_rate=correct / attempts, attempts=attempts, scored=attempts, correct=correct)

    @classmethod
    def of(cls, progression: ProgressionSettings, **counts: Any) -> Summary:
        """A summary of `counts` with the strategy and target band the progression gives its pass rate."""
        return cls(
            **counts,
            strategy=choose_strategy(counts["pass_rate"], progression),
            target_low=progression.target_low,
            target_high=progression.target_high,
        )


def choose_strategy(pass_rate: float | None, progression: ProgressionSettings) -> str:
    """The next mutate strategy for pass rate p (see the module docstring for the bands)."""
    if pass_rate is None:
        return "similar"
    if pass_rate <= progression.easier_at:
        return "easier"
    if pass_rate < progression.target_low:
        return "somewhat-easier"
    if pass_rate <= progression.target_high:
        return "similar"
    return "harder"


def summarize(rewards: list[Reward], progression: ProgressionSettings) -> Summary:
    """Pass rate over scored attempts (infra excluded), examples, and the next strategy."""
    scored = [r for r in rewards if r.value is not None]
    correct = [r for r in scored if r.value == 1.0]
    rate = (len(correct) / len(scored)) if scored else None
    wrong = [r for r in scored if r.value != 1.0]
    # Parsed wrong answers teach the teacher more than unreadable ones: show those first.
    wrong_answers = [r.answer for r in wrong if r.status == "ok" and r.answer] or [
        f"(unreadable answer: {r.detail})" for r in wrong if r.status == "format"
    ]
    return Summary.of(
        progression,
        pass_rate=rate,
        attempts=len(rewards),
        scored=len(scored),
        correct=len(correct),
        format_failures=sum(r.status == "format" for r in rewards),
        infra_failures=sum(r.status == "infra" for r in rewards),
        solved=_shortest_distinct([r.answer for r in correct if r.answer]),
        failed=_shortest_distinct(wrong_answers),
    )


def _shortest_distinct(answers: list[str], k: int = EXAMPLES_SHOWN) -> list[str]:
    unique = list(dict.fromkeys(a.strip() for a in answers if a.strip()))
    return sorted(unique, key=lambda a: (len(a), a))[:k]
