"""Rendering of the teacher and student prompts from the Jinja2 templates in `prompts/`.

One teacher template (`prompts/_shared/teacher.j2`) serves every environment and turn kind; it
includes the environment's pieces from `prompts/<env>/`, and each environment has its
`student.j2`. Undefined variables are errors (StrictUndefined), so a template and its context
cannot drift apart silently. The prompts carry no machine markers: they are what a model reads.

Templates are found in, first hit wins: `$SYNTHGEN_PROMPTS_DIR`; `<repo>/prompts` (a source
checkout or editable install); `<sys.prefix>/share/synthgen/prompts` (a wheel's data files).
"""

from __future__ import annotations

import os
import re
import sys
from functools import lru_cache
from pathlib import Path

from synthgen.envs import checks
from synthgen.envs.summary import CHAIN_STRATEGIES, MUTATE_STRATEGIES, RowName
from synthgen.errors import UserError
from synthgen.text import jinja_env

ENV_VAR = "SYNTHGEN_PROMPTS_DIR"
DISPLAY_LIMIT = 2000  # characters of one displayed value in a prompt


class Kind(RowName):
    """What a turn asks: a teacher prompt's kind, or none (calibrate measures a problem it was given)."""

    FIRST = "first"
    MUTATE = "mutate"
    CHAIN = "chain"
    CALIBRATE = "calibrate"


TEACHER_KINDS = (Kind.FIRST, Kind.MUTATE, Kind.CHAIN)
TEACHER_TEMPLATE = "_shared/teacher.j2"


def prompts_dir() -> Path:
    """The folder holding the templates (see the module docstring for the search order)."""
    override = os.environ.get(ENV_VAR)
    if override:
        path = Path(override)
        if not path.is_dir():
            raise UserError(f"{ENV_VAR} points to {path}, which is not a folder")
        return path
    candidates = [Path(__file__).resolve().parents[2] / "prompts", Path(sys.prefix) / "share" / "synthgen" / "prompts"]
    for path in candidates:
        if (path / "_shared").is_dir():
            return path
    raise UserError(f"prompt templates not found (looked in {', '.join(map(str, candidates))}); set {ENV_VAR}")


_jinja = lru_cache(maxsize=4)(jinja_env)  # plain text for a model, not HTML


def render(template: str, **context) -> str:
    text = _jinja(str(prompts_dir())).get_template(template).render(**context)
    # Collapse runs of blank lines that conditional blocks leave behind.
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def display(encoded: str | None, limit: int = DISPLAY_LIMIT) -> str:
    """A gold value as Python source for prompts (the repr of the decoded value; nothing evaluated)."""
    from synthgen.sandbox import values  # the sandbox package is only needed once a value is shown

    return "None" if encoded is None else values.display(values.decode(encoded), limit)


def problem_view(problem) -> dict:
    """A problem as templates see it: code, helpers, message, and inputs with displayed outputs
    (`output` is None where the problem has not been run)."""
    outputs = list(problem.outputs or [])
    pairs = [
        {"input": x, "output": display(outputs[i]) if i < len(outputs) else None} for i, x in enumerate(problem.inputs)
    ]
    code = {name: getattr(problem, name).strip("\n") for name in ("code", "pre_test_code", "test_code")}
    return {**code, "message": problem.message, "pairs": pairs, "visible_count": problem.visible_count}


def _base_context(env) -> dict:
    return {
        "env": env.name,
        "helpers": list(env.helpers),
        "n_inputs": env.prompt_inputs(),
        "min_inputs": env.settings.min_inputs,
        "max_inputs": env.settings.max_inputs,
        "allowed_modules": ", ".join(sorted(m for m in checks.ALLOWED_MODULES if not m.startswith("_"))),
    }


def _strategy_for(kind: str, strategy: str | None, summary) -> str | None:
    if kind == "first":
        if strategy not in (None, "first"):
            raise ValueError(f"a first-turn prompt takes no strategy (got {strategy!r})")
        return None
    allowed = MUTATE_STRATEGIES if kind == "mutate" else CHAIN_STRATEGIES
    strategy = strategy or (summary.strategy if kind == "mutate" else CHAIN_STRATEGIES[0])
    if strategy not in allowed:
        raise ValueError(f"unknown {kind} strategy {strategy!r}; choose from {', '.join(allowed)}")
    return strategy


def teacher_messages(
    env, kind: str, *, seed_text=None, previous=None, summary=None, feedback=None, target=None, strategy=None
) -> list[dict]:
    """The teacher's messages for one turn; also `env.teacher_messages(kind, ...)`.

    kind: `first` (needs seed_text), `mutate` (needs previous and summary; strategy defaults to
    summary.strategy, target to the summary's band) or `chain` (needs previous; strategy
    `chain-medium` (the default) or `chain-easy`, target the pass-rate band to land in).
    feedback: what was wrong with the teacher's previous answer, named in the new prompt.
    """
    if kind not in TEACHER_KINDS:
        raise ValueError(f"unknown teacher prompt kind {kind!r}; choose from {', '.join(TEACHER_KINDS)}")
    if kind == "first" and not seed_text:
        raise ValueError("a first-turn prompt needs seed_text")
    if kind != "first" and previous is None:
        raise ValueError(f"a {kind} prompt needs the previous problem")
    if kind == "mutate" and summary is None:
        raise ValueError("a mutate prompt needs the student summary")
    strategy = _strategy_for(kind, strategy, summary)
    if target is None and kind == "mutate":
        target = (summary.target_low, summary.target_high)
    if target is not None:
        low, high = (float(t) for t in target)
        if not 0 <= low <= high <= 1:
            raise ValueError(f"target must be a pass-rate band (low, high) within [0, 1], got {target!r}")
    rate = None if summary is None or summary.pass_rate is None else f"{summary.pass_rate:.3f}"
    context = {
        **_base_context(env),
        "kind": kind,
        "strategy": strategy,
        "seed_text": (seed_text or "").strip("\n"),
        "previous": problem_view(previous) if previous is not None else None,
        "summary": summary,
        "summary_text": summary.render() if summary is not None else None,
        "pass_rate": rate,
        "target_low": f"{target[0]:g}" if target is not None else None,
        "target_high": f"{target[1]:g}" if target is not None else None,
        "feedback": (feedback or "").strip() or None,
    }
    return [{"role": "user", "content": render(TEACHER_TEMPLATE, **context)}]


def student_messages(env, view: dict) -> list[dict]:
    """The student's messages for a problem view already cut down to what the student may see."""
    context = {**_base_context(env), "problem": view}
    return [{"role": "user", "content": render(f"{env.name}/student.j2", **context)}]
