"""Settings of the environments' tools, so that their flags derive from one declaration as the
stages' do: `synthgen verify` (one answer against one problem) and `synthgen prompts show` (the
messages a turn would send)."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Literal

from pydantic import Field

from synthgen.envs.settings import EnvSettings
from synthgen.sandbox.settings import SandboxSettings
from synthgen.settings.base import Settings, cli


class VerifySettings(Settings):
    """`synthgen verify PROBLEM ANSWER`: validate the problem, score the answer, show every step."""

    section: ClassVar[str] = "verify"
    problem: str = Field(
        json_schema_extra=cli(argument=True, metavar="PROBLEM"),
        description="a JSON file with the problem's fields, or FILE.parquet:ROW (row number, turn_id or problem_id)",
    )
    answer: str = Field(
        json_schema_extra=cli(argument=True, metavar="ANSWER"),
        description="a text file with the raw student completion ('-' reads standard input)",
    )
    env_name: str | None = Field(
        None, json_schema_extra=cli("--env"), description="the problem's environment (default: its env field)"
    )
    truncated: bool = Field(False, description="score the answer as cut off by max tokens (a format failure)")
    env: EnvSettings = Field(default_factory=EnvSettings)
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)


class PromptsShowSettings(Settings):
    """`synthgen prompts show`: which turn's messages to render, for a seed or a stored problem."""

    section: ClassVar[str] = "prompts"
    env: str = Field(json_schema_extra=cli("--env"), description="environment whose prompts to render")
    kind: Literal["first", "mutate", "chain"] = Field("first", description="teacher prompt kind")
    seed_file: Path | None = Field(None, description="first turn: a file whose text is the seed snippet")
    # Not `run_dir`: a config file's run_dir must not turn every preview into a stored-problem one.
    stored_in: Path | None = Field(
        None, json_schema_extra=cli("--run-dir"), description="run directory holding the stored problem"
    )
    problem_id: str | None = Field(
        None,
        description="the stored problem's problem_id, or a turn_id (with --run-dir; an unparsed turn shows its answer)",
    )
    problem: str | None = Field(
        None, description="a problem as a JSON file with its fields (as verify reads them), or FILE.parquet:ROW"
    )
    pass_rate: float | None = Field(
        None, ge=0.0, le=1.0, description="make up the student summary with this pass rate (of the attempts)"
    )
    strategy: str | None = Field(
        None,
        description="override the strategy: easier, somewhat-easier, similar, harder (mutate); chain-medium or "
        "chain-easy (chain, default chain-medium)",
    )
    feedback: str | None = Field(None, description="what was wrong with the teacher's last answer")
    student: bool = Field(False, description="show the student's messages for the problem instead")
    as_json: bool = Field(False, json_schema_extra=cli("--json"), description="print the messages as JSON, as sent")
