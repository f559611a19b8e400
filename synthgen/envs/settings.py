"""Settings of the mutation score that generate and chain measure on every valid problem
(synthgen.envs.mutation): do the problem's inputs tell its function from near misses?"""

from __future__ import annotations

from typing import ClassVar

from pydantic import ConfigDict, Field

from synthgen.settings.base import Section, cli


class MutationSettings(Section):
    """Mutants of the teacher's f (and simple baselines) run on each valid problem's inputs, in the sandbox."""

    model_config = ConfigDict(extra="forbid")
    cli_panel: ClassVar[str] = "Mutation score"
    enabled: bool = Field(
        True,
        description="score every valid problem's inputs against mutants of f and baselines (one sandbox job)",
        json_schema_extra=cli("--mutation-score"),
    )
    max_mutants: int = Field(
        32,
        ge=1,
        le=256,
        description="mutants of f per problem at most (kinds in turn)",
        json_schema_extra=cli("--max-mutants"),
    )
