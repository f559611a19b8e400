"""`synthgen prompts show`: print the messages a turn would send for a seed or a stored problem.

The run's own settings (the prompts' knobs) come from the config file, and a chain turn's target
band from chain's bands: both live in the stages, which synthgen.envs.verify may not import.
"""

from __future__ import annotations

import json

from synthgen.envs.tool_settings import PromptsShowSettings
from synthgen.envs.verify import preview, problem_row, read_text
from synthgen.errors import UserError
from synthgen.settings.base import ConfigFile

CHAIN_TARGETS = {"chain-medium": "medium", "chain-easy": "easy"}


def show(settings: PromptsShowSettings, config: ConfigFile) -> None:
    """Print the messages (or, for a turn whose answer did not parse, the answer as written)."""
    from synthgen.envs import get_env
    from synthgen.stages.chain.run import chain_bands
    from synthgen.stages.chain.settings import ChainSettings
    from synthgen.stages.generate.settings import GenerateSettings

    s = settings
    run_settings = config.settings(ChainSettings if s.kind == "chain" else GenerateSettings)
    try:
        environment = get_env(s.env, run_settings.env)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    row = problem_row(s.env, s.stored_in, s.problem_id, s.problem)
    if row is not None and row.get("problem_id") is None and row.get("teacher_answer") is not None:
        # A turn whose answer did not parse: no problem to build a prompt from; show what was written.
        detail = f"{row['reason']}: {row.get('reason_detail') or ''}".rstrip(": ")
        print(f"===== teacher answer of {row['turn_id']} (did not parse: {detail}) =====")
        print(row["teacher_answer"].rstrip("\n"))
        return
    level = chain_bands().get(CHAIN_TARGETS.get(s.strategy or "chain-medium", "")) if s.kind == "chain" else None
    messages = preview(
        environment,
        s.kind,
        run_settings,
        seed_text=read_text(s.seed_file) if s.seed_file else None,
        row=row,
        pass_rate=s.pass_rate,
        strategy=s.strategy,
        feedback=s.feedback,
        student=s.student,
        band=(level.low, level.high) if level else None,
    )
    if s.as_json:
        print(json.dumps(messages, indent=1, ensure_ascii=False))
        return
    for message in messages:
        print(f"===== {message['role']} =====")
        print(message["content"].rstrip("\n"))
