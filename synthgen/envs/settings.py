"""Settings of the environments: what they share when they render, validate and score problems, how the
student's pass rate picks the next turn's strategy, and the mutation score (synthgen.envs.mutation)."""

from __future__ import annotations

from typing import Annotated, ClassVar

from pydantic import Field, model_validator

from synthgen.settings.base import Section, cli

Rate = Annotated[float, Field(ge=0, le=1)]  # a pass rate


class MutationSettings(Section):
    """Mutants of the teacher's f (and simple baselines) run on each valid problem's inputs, in the sandbox."""

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
    chance_probes: bool = Field(
        True,
        description="measure every valid problem's chance level (the reward no-skill strategies earn: "
        "synthgen.envs.chance) in the same sandbox job: the chance_rate and chance_strategies columns",
        json_schema_extra=cli("--chance-probes"),
    )
    # The probes add measurement columns beside the problems; they change no problem and no pass
    # rate, so runs made before them keep their settings hash (as keep_attempts does).
    unhashed: ClassVar[frozenset[str]] = frozenset({"chance_probes"})


class ProgressionSettings(Section):
    """How the student's pass rate p picks the next turn's strategy (the bands: synthgen.envs.summary)."""

    easier_at: Rate = Field(
        0.0, description="pass rate at or below which the teacher is asked for an easier problem (0: never solved)"
    )
    target_low: Rate = Field(
        0.35, description="low end of the target pass-rate band; below it (and above easier_at) ask for somewhat easier"
    )
    target_high: Rate = Field(
        0.65, description="high end of the target pass-rate band; above it ask for a harder problem"
    )

    @model_validator(mode="after")
    def _ordered(self):
        if not self.easier_at <= self.target_low <= self.target_high:
            raise ValueError("progression needs easier_at <= target_low <= target_high")
        return self


class EnvSettings(Section):
    """Knobs the environments share when they render, validate and score problems."""

    cli_panel: ClassVar[str] = "Environments"
    holdout_fraction: float = Field(
        0.5, gt=0, lt=1, description="induction: share of the input/output pairs hidden from the student (at least one)"
    )
    min_inputs: int = Field(3, ge=1, le=100, description="induction: fewest inputs a problem may have")
    max_inputs: int = Field(10, ge=1, le=100, description="induction: most inputs a problem may have")
    max_output_chars: int = Field(2000, ge=16, le=1_000_000, description="longest gold output, in characters")
    min_distinct_outputs: int = Field(
        2, ge=1, le=100, description="induction: distinct outputs needed, so that a constant function cannot pass"
    )
