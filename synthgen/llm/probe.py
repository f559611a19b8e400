"""`synthgen config show COMMAND --probe`: the preflight's findings for a command's settings, nothing run.

The probe itself is synthgen.llm.preflight's; this runs it through an LLMClient built from any
command's settings (teacher and student roles, or eval's one `model`) from synchronous code.
"""

from __future__ import annotations

import asyncio

from synthgen.llm.client import LLMClient
from synthgen.llm.settings import LLMSettings, RoleSettings


def probe_settings(settings) -> list[str]:
    """`config show --probe`: the preflight lines of a command's settings (roles teacher and
    student, or eval's one `model`), from synchronous code; UserError for what would stop a run."""
    labels = None
    samples = {"teacher": getattr(settings, "single_turn", 0) or 1, "student": getattr(settings, "attempts", 2)}
    if isinstance(getattr(settings, "model", None), RoleSettings):  # eval: one role, n samples per problem
        teacher = student = settings.model
        labels, samples = {"teacher": "model", "student": "model"}, {"teacher": 2}
    else:
        teacher, student = settings.teacher, settings.student
        shared = getattr(settings, "base_url", None)  # the demo's one server, unless a role names its own
        if shared:
            teacher, student = (
                r if "base_url" in r.model_fields_set else r.model_copy(update={"base_url": shared})
                for r in (teacher, student)
            )
    llm = getattr(settings, "llm", None) or LLMSettings()
    lines: list[str] = []

    async def probe() -> None:
        async with LLMClient(
            teacher, student, llm.model_copy(update={"probe": True}), labels=labels, notify=lines.append
        ) as client:
            await client.preflight(0, samples)

    asyncio.run(probe())
    return lines
