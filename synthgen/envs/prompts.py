"""Rendering of the teacher and student prompts from the Jinja2 templates in `prompts/`.

Templates: `prompts/<env>/{first,mutate,chain,student}.j2`, with the instructions every
environment shares in `prompts/_shared/` (header, rules, answer-format pieces, the previous
problem, the student summary). Undefined variables are errors (StrictUndefined), so a template
and its context cannot drift apart silently.

Where the templates are found, first hit wins:
  1. `$SYNTHGEN_PROMPTS_DIR`;
  2. `<repo>/prompts` for a source checkout or editable install (two levels above this package);
  3. `<sys.prefix>/share/synthgen/prompts` for an installed wheel (shipped as data files).

Every teacher prompt starts with `Environment: <env>` and `Task: first|mutate|chain`, and mutate
and chain prompts with `Strategy: easier|harder|similar`; student prompts with
`Environment: <env>` and `Task: solve`. These marker lines are part of the contract with the
scripted server's brain (synthgen.scripted.bank), which reads them.
"""

from __future__ import annotations

import os
import sys
from functools import lru_cache
from pathlib import Path

from synthgen.envs import checks

ENV_VAR = "SYNTHGEN_PROMPTS_DIR"
DISPLAY_LIMIT = 2000  # characters of one displayed value in a prompt


def prompts_dir() -> Path:
    """The folder holding the templates (see the module docstring for the search order)."""
    override = os.environ.get(ENV_VAR)
    if override:
        path = Path(override)
        if not path.is_dir():
            from synthgen.errors import UserError

            raise UserError(f"{ENV_VAR} points to {path}, which is not a folder")
        return path
    candidates = [
        Path(__file__).resolve().parents[2] / "prompts",
        Path(sys.prefix) / "share" / "synthgen" / "prompts",
    ]
    for path in candidates:
        if (path / "_shared").is_dir():
            return path
    from synthgen.errors import UserError

    raise UserError(f"prompt templates not found (looked in {', '.join(map(str, candidates))}); set {ENV_VAR}")


@lru_cache(maxsize=4)
def _jinja(folder: str):
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(folder),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,  # partials end in a newline, so includes stack cleanly
        autoescape=False,  # plain text for a model, not HTML
    )


def render(template: str, **context) -> str:
    text = _jinja(str(prompts_dir())).get_template(template).render(**context)
    # Collapse runs of blank lines that conditional blocks leave behind.
    lines: list[str] = []
    for line in text.split("\n"):
        if line.strip() == "" and lines and lines[-1].strip() == "":
            continue
        lines.append(line.rstrip())
    return "\n".join(lines).strip() + "\n"


def problem_view(problem) -> dict:
    """A problem as templates see it: code, helpers, message, and inputs with displayed outputs."""
    from synthgen.envs.runner import display

    outputs = list(problem.outputs or [])
    pairs = [
        {"input": x, "output": display(outputs[i], DISPLAY_LIMIT) if i < len(outputs) else None}
        for i, x in enumerate(problem.inputs)
    ]
    return {
        "code": problem.code.strip("\n"),
        "pre_test_code": problem.pre_test_code.strip("\n"),
        "test_code": problem.test_code.strip("\n"),
        "message": problem.message,
        "pairs": pairs,
        "visible_count": problem.visible_count,
    }


def _base_context(env) -> dict:
    return {
        "env": env.name,
        "n_inputs": env.prompt_inputs(),
        "min_inputs": env.settings.min_inputs,
        "max_inputs": env.settings.max_inputs,
        "allowed_modules": ", ".join(sorted(m for m in checks.ALLOWED_MODULES if not m.startswith("_"))),
    }


def teacher_messages(env, kind: str, *, seed_text=None, previous=None, summary=None) -> list[dict]:
    from synthgen.envs.base import TEACHER_KINDS

    if kind not in TEACHER_KINDS:
        raise ValueError(f"unknown teacher prompt kind {kind!r}; choose from {', '.join(TEACHER_KINDS)}")
    context = _base_context(env)
    if kind == "first":
        if not seed_text:
            raise ValueError("a first-turn prompt needs seed_text")
        context.update(task="first", strategy=None, seed_text=seed_text.strip("\n"))
    else:
        if previous is None:
            raise ValueError(f"a {kind} prompt needs the previous problem")
        if kind == "mutate" and summary is None:
            raise ValueError("a mutate prompt needs the student summary")
        strategy = "easier" if kind == "chain" else summary.strategy
        context.update(
            task=kind,
            strategy=strategy,
            previous=problem_view(previous),
            summary=summary,
            summary_text=summary.render() if summary is not None else None,
            pass_rate=None if summary is None or summary.pass_rate is None else f"{summary.pass_rate:.3f}",
            target_low=summary.target_low if summary is not None else 0.35,
            target_high=summary.target_high if summary is not None else 0.65,
        )
    return [{"role": "user", "content": render(f"{env.name}/{kind}.j2", **context)}]


def student_messages(env, problem) -> list[dict]:
    view = problem_view(problem)
    # The student must never see what it is asked to find: cut the view down per environment
    # here, in code, rather than trusting each template to leave the right parts out.
    pairs = view["pairs"]
    if env.name == "induction":
        shown = problem.visible_count if problem.visible_count is not None else max(1, len(pairs) - 1)
        view["pairs"] = pairs[:shown]
    elif env.name == "abduction":
        view["pairs"] = [{"input": None, "output": p["output"]} for p in pairs[:1]]
    elif env.name == "deduction":
        view["pairs"] = [{"input": p["input"], "output": None} for p in pairs[:1]]
    else:  # fuzzing: the example inputs include the teacher's bug-triggering one
        view["pairs"] = []
    context = {**_base_context(env), "task": "solve", "strategy": None, "problem": view}
    return [{"role": "user", "content": render(f"{env.name}/student.j2", **context)}]
