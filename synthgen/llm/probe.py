"""`synthgen config show COMMAND --probe`: the preflight's findings for a command's settings, nothing run.

The probe itself is synthgen.llm.preflight's; this runs it through an LLMClient built from any
command's settings (teacher and student roles, or eval's one `model`) from synchronous code.
"""

from __future__ import annotations

import asyncio

from pydantic import BaseModel

from synthgen.errors import UserError
from synthgen.llm.client import LLMClient
from synthgen.llm.settings import LLMSettings, RoleSettings


def probe_settings(settings: BaseModel) -> list[str]:
    """`config show --probe`: the preflight lines of a command's settings, from synchronous code;
    UserError for what would stop a run. The roles are the settings' typed fields, matched below:
    eval's one `model` (n samples per problem), or a teacher and a student (`attempts` samples,
    generate's `single_turn` K for the teacher; the demo's `base_url` for roles without their own)."""
    match settings:
        case BaseModel(model=RoleSettings() as model, llm=LLMSettings() as llm):
            teacher = student = model
            labels, samples = {"teacher": "model", "student": "model"}, {"teacher": 2}
        case BaseModel(
            teacher=RoleSettings() as teacher,
            student=RoleSettings() as student,
            llm=LLMSettings() as llm,
            attempts=int(attempts),
        ):
            labels, samples = None, {"teacher": 1, "student": attempts}
        case _:
            raise UserError(f"--probe: {type(settings).__name__} names no teacher and student, nor a model")
    match settings:  # a single-turn run asks the teacher for that many samples at once
        case BaseModel(single_turn=int(single)) if single:
            samples["teacher"] = single
    match settings:  # the demo's one server, unless a role names its own
        case BaseModel(base_url=str(shared)) if shared:
            teacher, student = (
                r if "base_url" in r.model_fields_set else r.model_copy(update={"base_url": shared})
                for r in (teacher, student)
            )
    lines: list[str] = []

    async def probe() -> None:
        async with LLMClient(
            teacher, student, llm.model_copy(update={"probe": True}), labels=labels, notify=lines.append
        ) as client:
            await client.preflight(0, samples)

    asyncio.run(probe())
    return lines
