"""Settings of `synthgen filter`: the pass-rate band, near-duplicate and contamination rules
(the paper's Section 4.1)."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import BeforeValidator, ConfigDict, Field, field_validator, model_validator

from synthgen.settings.base import Section, cli
from synthgen.settings.shared import InputSettings, RunSettings, split_commas


class DedupSettings(Section):
    """MinHash near-duplicate removal (synthgen.stages.filter.dedup); within a cluster the problem whose pass
    rate is closest to 0.5 stays (ties: the earliest turn, then the smallest turn_id)."""

    model_config = ConfigDict(extra="forbid")
    enabled: bool = Field(True, description="remove MinHash near-duplicates", json_schema_extra=cli("--dedup"))
    threshold: float = Field(0.8, gt=0, le=1, description="Jaccard similarity that makes a near-duplicate")
    num_perm: int = Field(128, ge=16, le=1024)
    ngram: int = Field(5, ge=1, le=64, description="tokens per shingle")
    seed: int = Field(1, ge=0, description="datasketch MinHash seed")
    signature: Literal["token_hashes", "shingle_bytes"] = Field(
        "token_hashes",
        description="how a shingle is hashed: token_hashes combines its tokens' hashes (fast); "
        "shingle_bytes hashes its text with --dedup-hash, exactly datasketch's MinHash",
    )
    hash: Literal["xxh32", "sha1"] = Field(
        "xxh32", description="shingle hash of signature shingle_bytes; sha1 is datasketch's default"
    )
    verify: bool = Field(True, description="link an LSH candidate pair only if its estimated Jaccard >= threshold")
    recall_weight: float = Field(
        0.9, ge=0.5, lt=1, description="LSH (bands, rows) weight on recall; see synthgen.stages.filter.dedup"
    )
    per_env: bool = Field(True, description="compare problems of the same environment only")
    against: list[str] = Field(
        default_factory=list,
        description="earlier runs (or their filter folders) whose "
        "kept problems count as taken: new near-duplicates of them are dropped; repeatable",
    )
    workers: int | None = Field(None, ge=1, le=1024, description="signature processes (default: usable CPUs)")
    unhashed: ClassVar[frozenset[str]] = frozenset({"workers"})

    @model_validator(mode="after")
    def _hash_of_kind(self):
        if self.signature == "token_hashes" and self.hash != "xxh32":
            raise ValueError(f"hash {self.hash!r} is for signature shingle_bytes (token_hashes hash tokens with xxh64)")
        return self


class ContaminationSettings(Section):
    """Word n-gram overlap with reference texts (benchmark problems and solutions)."""

    model_config = ConfigDict(extra="forbid")
    references: list[str] = Field(
        default_factory=list,
        description="reference texts (benchmark problems, solutions): Parquet or JSONL(.gz) files; repeatable",
    )
    columns: list[str] = Field(default_factory=lambda: ["text"], description="text columns of the reference files")
    ngram: int = Field(13, ge=3, le=64, description="words per n-gram")
    min_matches: int = Field(1, ge=1, description="shared n-grams that make a problem contaminated")
    benchmarks: Annotated[list[str], BeforeValidator(split_commas)] = Field(
        default_factory=list,
        description="evaluation benchmarks to check against, as `synthgen eval` loads them (LCB in its date "
        "window): lcb, humaneval, math500, aime2024, comma-separated or repeated",
    )
    data_dir: str | None = Field(
        None, description="local copies of the benchmarks (DATA_DIR/<benchmark>.jsonl or .parquet), as eval's"
    )
    minhash_threshold: float = Field(
        0.7,
        gt=0,
        le=1,
        description="estimated Jaccard with a benchmark text (MinHash) that makes a problem contaminated",
    )
    unhashed: ClassVar[frozenset[str]] = frozenset({"data_dir"})

    @field_validator("benchmarks", mode="after")
    @classmethod
    def _known(cls, value: list[str]) -> list[str]:
        known = ("lcb", "humaneval", "math500", "aime2024")
        unknown = [b for b in value if b not in known]
        if unknown:
            raise ValueError(f"unknown benchmark {unknown[0]!r}; choose from {', '.join(known)}")
        return list(dict.fromkeys(value))

    @field_validator("columns")
    @classmethod
    def _some_columns(cls, value: list[str]) -> list[str]:
        if not value:
            raise ValueError("at least one reference column is needed")
        return value


class FilterSettings(InputSettings, RunSettings):
    section = "filter"
    unhashed: ClassVar[frozenset[str]] = frozenset({"run_dir", "input_dir", "rows_per_part", "allow_partial"})

    input_dir: str | None = Field(None, description="folder of problem Parquet files (default RUN_DIR/generate)")
    band_low: float = Field(0.01, ge=0, le=1, description="lowest pass rate kept (inclusive; the paper: 0.01)")
    band_high: float = Field(0.97, ge=0, le=1, description="highest pass rate kept (inclusive; the paper: 0.97)")
    rejects: bool = Field(True, description="write rejected rows with their reason to RUN_DIR/filter/rejects/")
    rows_per_part: int = Field(100_000, ge=1, description="rows per output Parquet part")
    min_mutation_score: float | None = Field(
        None,
        ge=0,
        le=1,
        description="reject problems whose mutation score (share of near misses of f their inputs catch) "
        "is below this, or was not measured",
    )
    max_chance_rate: float | None = Field(
        0.5,  # chosen from measurements: the description and the README say which
        ge=0,
        le=1,
        description="reject problems whose chance rate (the reward's rate under the best strategy with no "
        "understanding: synthgen.envs.chance) is at or above this, reason guessable; rows without one are kept. "
        "Default 0.5, a coin flip's rate: measured chance rates sit at 0 or at 1 with few between (demo bank: 149 "
        "of 182 valid problems at 0, 17 at 1; CRUXEval's 800 functions as deduction and abduction problems: 857 "
        "of 1574 at 0, 608 at 1), deduction's coin flips at exactly 0.5, and below 0.5 only abduction's "
        "random-input rates (median 0.05), which the pass rate above chance accounts for. 1 drops only what a "
        "no-skill strategy always solves; `max_chance_rate: null` in a config file drops nothing",
    )
    dedup: DedupSettings = Field(default_factory=DedupSettings)
    contamination: ContaminationSettings = Field(default_factory=ContaminationSettings)

    @model_validator(mode="after")
    def _band(self):
        if self.band_low > self.band_high:
            raise ValueError(f"band_low ({self.band_low}) exceeds band_high ({self.band_high})")
        return self
