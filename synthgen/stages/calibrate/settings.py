"""Settings of `synthgen calibrate`: re-measure a problem set's pass rates with another student."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field, model_validator

from synthgen.llm.settings import TeacherSettings
from synthgen.settings.shared import InputSettings, ShardedSettings
from synthgen.turns.settings import KEEP_ATTEMPTS_UNHASHED, TURN_LOOP_UNHASHED, KeepAttemptsSettings, TurnLoopSettings


class CalibrateSettings(InputSettings, KeepAttemptsSettings, TurnLoopSettings, ShardedSettings):
    """The student (`--student-url`, `--student-model`, effort, temperature), M attempts each, the
    sandbox and environments as generate uses them; the teacher is not asked anything."""

    section = "calibrate"
    unhashed: ClassVar[frozenset[str]] = TURN_LOOP_UNHASHED | KEEP_ATTEMPTS_UNHASHED | {"input_dir", "allow_partial"}

    input_dir: str = Field(
        ...,
        description="the problem set to re-measure: a bin folder (or one bin), a chain set, a filter output, "
        "an export, or any folder of synthgen problem Parquet files",
    )
    max_problems: int | None = Field(None, ge=1, description="re-measure at most this many problems (the first by id)")

    @model_validator(mode="after")
    def _no_teacher(self):
        """The teacher role is the student (never asked): the client checks one server, not two."""
        self.__dict__["teacher"] = TeacherSettings(**self.student.model_dump())
        return self
