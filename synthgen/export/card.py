"""The dataset card: README.md with the YAML header the Hugging Face Hub reads, then the prose.

The header (configs, features, split sizes, license, size category, tags) is written by the
libraries that read it back (`datasets` for configs and features, `huggingface_hub` for the rest).
The prose is templates/card.md.j2 (how the data was made, models, stage settings, integrity,
counts, drop reasons, fields, limits); a trainer `--format` gets templates/train.md.j2 instead of
the loading section: the command or code that points that trainer at the files, and the splits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import yaml

from synthgen.export.tables import CHAINS_CONFIG, DEFAULT_CONFIG, SPLIT, ConfigTable
from synthgen.store.run_info import StageInfo
from synthgen.text import jinja_env

TEMPLATES = Path(__file__).parent / "templates"
PAPER = (
    'Sancaktar et al., "A Deep Dive into Scaling RL for Code Generation with Synthetic Data and Curricula", '
    "arXiv:2603.24202, 2026"
)
TAGS = ["code", "synthetic", "reinforcement-learning", "verifiable-rewards", "curriculum-learning", "synthgen"]

# What each exported column holds (synthgen/store/records.py defines the types).
FIELD_TEXT: dict[str, str] = {
    "chain_id": "the chain this problem belongs to (chains config)",
    "level": "hard, medium or easy: the problem's place in its chain (chains config)",
    "position": "0 = hard, 1 = medium, 2 = easy (chains config)",
    "turn_id": "unique id of the teacher turn that wrote the problem (seed/env/lineage/turn)",
    "problem_id": "content hash of (env, code, inputs, message): the same problem has the same id in any run",
    "seed_id": "content hash of the seed snippet the lineage started from",
    "lineage_id": "the root of the mutation chain this turn belongs to",
    "parent_id": "the problem this turn mutated (empty on the first turn)",
    "env": "induction, abduction, deduction or fuzzing",
    "mode": "multi (multi-turn), single (independent single-turn samples) or chain",
    "turn": "the teacher turn, 1-based",
    "code": "the teacher's Python function `f` (fuzzing: the buggy function)",
    "inputs": "the inputs, each as argument-list source text (`3, [1, 2]`)",
    "outputs": "gold outputs from executing `code` in the sandbox, in a type-tagged encoding",
    "message": "the natural-language hint (induction)",
    "pre_test_code": "fuzzing: the checker an input must pass",
    "test_code": "fuzzing: the test the buggy function must fail",
    "visible_count": "induction: how many input/output pairs the student sees (the rest are held out)",
    "valid": "always true here: the problem parsed, ran and passed every check",
    "reason": "always `ok` here (dropped rows carry a reason code)",
    "reason_detail": "free-text detail of the reason (empty here)",
    "pass_rate": "correct / scored student attempts: the problem's measured difficulty",
    "attempts": "student attempts asked for (M)",
    "scored": "attempts that got a reward (not infrastructure failures)",
    "correct": "attempts that were correct",
    "format_failures": "attempts whose answer could not be parsed or was cut off",
    "infra_failures": "attempts lost to server or sandbox failures (not counted in the pass rate)",
    "summary": "the summary of the student's attempts the teacher saw before writing this turn",
    "solved_examples": "a few of this problem's solved student answers",
    "failed_examples": "a few of this problem's failed student answers",
    "strategy": "how the teacher was asked to change the previous problem (first, easier, harder, similar, ...)",
    "teacher_reasoning": "the teacher's reasoning text, when the run kept it",
    "teacher_answer": "the teacher's raw answer when it could not be parsed (at most 8 KiB; empty here)",
    "teacher_tokens_in": "prompt tokens of the teacher request",
    "teacher_tokens_out": "completion tokens of the teacher answer (reasoning included)",
    "student_tokens_in": "prompt tokens of the student request (once per request)",
    "student_tokens_out": "completion tokens of all student attempts",
    "teacher_model": "the model that wrote the problem, as the server named it",
    "student_model": "the model whose pass rate is recorded, as the server named it",
    "settings_hash": "hash of the generate settings that made the row",
    "difficulty": "the bin the pass rate falls in (hard, medium, easy_medium, easy or custom names)",
    # How sure each pass rate is and who measured it (synthgen.store.measurement).
    "pass_rate_low": "lower end of the 95% Wilson interval of the pass rate over the scored attempts",
    "pass_rate_high": "upper end of the 95% Wilson interval of the pass rate over the scored attempts",
    "student_endpoint": "the server the student ran on (recorded; not part of measured_by)",
    "student_effort": "the student's reasoning effort",
    "student_temperature": "the student's sampling temperature",
    "sandbox_isolation": "the sandbox isolation level that scored the attempts",
    "synthgen_version": "the synthgen version that measured the pass rate",
    "measured_by": "hash of student model, sampling, M, sandbox isolation and synthgen version: "
    "equal ids were measured the same way",
    "mutation_score": "share of near misses of f (and simple baselines) whose outputs on the inputs differ "
    "from f's; fuzzing: share of trivial inputs the checker keeps from earning the reward",
    "mutants": "mutants and baselines scored",
    "mutants_caught": "mutants and baselines the inputs caught",
    "surviving_mutants": "kinds of the near misses that passed (arithmetic, comparison, boundary, constant, ...)",
    "chance_rate": "the reward's rate under the best strategy with no understanding of the problem (an empty "
    "value, a coin flip, echoing the input, memorising the visible pairs, random inputs), scored by the "
    "environment's own verifier: a pass rate near it says nothing about skill",
    "chance_strategies": "the no-skill strategies that reach the chance rate (empty when it is 0)",
    # `synthgen calibrate`: the measurement a re-measured pass rate replaced (empty otherwise).
    "prior_pass_rate": "the pass rate before `synthgen calibrate` re-measured it with another student",
    "prior_pass_rate_low": "lower end of the prior pass rate's 95% Wilson interval",
    "prior_pass_rate_high": "upper end of the prior pass rate's 95% Wilson interval",
    "prior_student_model": "the student that measured the prior pass rate",
    "prior_measured_by": "the measured_by id of the prior pass rate",
    "prior_difficulty": "the bin the problem was in before calibration",
}

# The columns of the trainer formats (synthgen.export.formats), around the measurement fields above.
FORMAT_FIELD_TEXT: dict[str, str] = {
    "data_source": "`synthgen/<environment>`: which reward a verl reward manager routes the row to",
    "prompt": "the student's chat messages (role, content), as synthgen renders them for training",
    "ability": "always `code`",
    "reward_model": "`style` (`rule`) and `ground_truth`: the JSON a verifier needs (environment, code, inputs, "
    "gold outputs)",
    "extra_info": "`split`, `index` (the row's place in its file) and the measurement fields below",
    "ground_truth": "the JSON a verifier needs: environment, code, inputs, gold outputs "
    "(synthgen.interop.records.problem_of reads it back)",
    "answer": "the ground truth: the JSON a verifier needs (environment, code, inputs, gold outputs)",
    "info": "the measurement fields below",
    "messages": "the student prompt, then the solved attempt as the assistant's message (`reasoning`: the "
    "server's reasoning text, null when it returned none)",
    "attempt": "the attempt's index among the problem's M attempts",
    "reward": "always 1.0: synthgen's verifier scored the attempt correct",
    "split": "train or test",
    "index": "the row's place in its file",
    "difficulty": "the problem's bin (hard, medium, easy_medium, easy or custom names); for a chain step that no "
    "bin holds, its chain level",
    "chain_id": "the chain this problem belongs to (null when it is in none)",
    "level": "hard, medium or easy: the problem's place in its chain (null outside chains)",
    "position": "0 = hard, 1 = medium, 2 = easy in its chain (null outside chains)",
}
# Each trainer format's section title and the trainer it is for (templates/train.md.j2).
TRAINERS: dict[str, tuple[str, str]] = {
    "verl": ("Training with verl", "verl's PPO/GRPO trainer (`verl.trainer.main_ppo`, its `RLHFDataset`)"),
    "trl": ("Training with TRL", "a plain TRL `GRPOTrainer` script (or open-r1's)"),
    "verifiers": (
        "Training with verifiers and prime-rl",
        "verifiers (`vf-eval`, `verifiers.load_environment`) and prime-rl",
    ),
    "sft": (
        "Fine-tuning on solved attempts (SFT)",
        "supervised fine-tuning on chat messages (TRL's `SFTTrainer`, or any trainer that reads `messages`)",
    ),
}
WHERE_MEASURED = {"verl": "extra_info.", "verifiers": "info.", "trl": "", "sft": ""}

_SIZES = [(1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")]
_SIZES += [(10_000_000, "1M<n<10M"), (100_000_000, "10M<n<100M"), (1_000_000_000, "100M<n<1B")]


def size_category(rows: int) -> str:
    """The Hub's size_categories value for a row count: one per power of ten from 1K to 1B."""
    return next((name for bound, name in _SIZES if rows < bound), "n>1B")


@dataclass
class TrainerExport:
    """A trainer format's files: what the card's training section and synthgen_export.json say of them."""

    format: str
    out: str  # the export folder, resolved: the card's commands point at it
    tables: dict[str, pa.Table]  # split -> its rows
    files: dict[str, str]  # split -> its file, relative to `out`
    splits: dict[str, dict[str, Any]]  # split -> {"rows": n, "by_bin": {bin: n}}
    split_rule: str | None
    problems: int
    chained: int
    sft: dict[str, Any] | None
    env_id: str
    data_folder: str
    verl_reward_path: str
    split_seed: int | None
    test_fraction: float | None
    test_bins: list[str]

    @property
    def title(self) -> str:
        return TRAINERS[self.format][0]

    @property
    def trainer(self) -> str:
        return TRAINERS[self.format][1]

    def provenance(self) -> dict[str, Any]:
        """The facts for scripts: files, rows per split and bin, how the split was drawn."""
        keep = ("files", "splits", "problems", "chained", "sft", "test_fraction", "test_bins", "split_seed", "env_id")
        out = {key: getattr(self, key) for key in keep if getattr(self, key) is not None}
        return out | ({"verl_reward_path": self.verl_reward_path} if self.format == "verl" else {})


@dataclass
class CardFacts:
    """Everything the card says, gathered by synthgen.export."""

    pretty_name: str
    license: str
    configs: list[ConfigTable]
    stages: dict[str, StageInfo]
    models: dict[str, dict[str, int]]
    scripted: bool
    bins: list[Any]  # synthgen.stages.bin.settings.Bin, hard first
    env_bin_counts: dict[str, dict[str, int]]
    filter_stats: dict[str, Any]
    drop_reasons: list[tuple[str, int, str]]  # (code, rows, words)
    seed_sources: dict[str, int]
    run_name: str
    version: str
    outside: int = 0  # kept problems outside every bin (not exported)
    partial: list[str] = field(default_factory=list)  # stages read with --allow-partial
    repo_id: str | None = None
    measurement: dict[str, Any] | None = None  # synthgen.store.measurement.evidence of the binned and chain rows
    chains_remeasured: bool = False  # `synthgen chain --remeasure` measured the chain steps anew on purpose
    mutation: dict[str, Any] | None = None  # synthgen.store.measurement.mutation_summary of the binned rows
    lineage: dict[str, Any] | None = None  # synthgen.export._lineage
    integrity: dict[str, Any] | None = None  # synthgen.export._integrity: chance, mutation, widths, checks
    format: str = "hf"
    exported: TrainerExport | None = None

    @property
    def binned_rows(self) -> int:
        return sum(c.rows for c in self.configs if c.env)

    @property
    def count_columns(self) -> list[str]:
        """The bins, hard first, then any other difficulty the counts hold (a chain level no bin has)."""
        names = [b.name for b in self.bins]
        found = {name for counts in self.env_bin_counts.values() for name in counts}
        return names + sorted(found - set(names))

    @property
    def chains(self) -> int:
        chain = next((c for c in self.configs if c.name == CHAINS_CONFIG), None)
        return len(set(chain.table.column("chain_id").to_pylist())) if chain else 0


def header(facts: CardFacts) -> str:
    """The YAML between the card's `---` lines: hf's configs, or a trainer format's one config of splits."""
    from datasets import DatasetInfo, Features, SplitDict, SplitInfo
    from datasets.info import DatasetInfosDict
    from datasets.utils.metadata import MetadataConfigs
    from huggingface_hub import DatasetCardData

    if facts.exported is None:
        tags, rows = TAGS, facts.binned_rows + sum(c.rows for c in facts.configs if not c.env)
        configs: dict[str, dict[str, Any]] = {
            DEFAULT_CONFIG: {"data_files": [{"split": SPLIT, "path": "data/*/*/*.parquet"}], "default": True}
        }
        configs |= {c.name: {"data_files": [{"split": SPLIT, "path": f"{c.folder}/*.parquet"}]} for c in facts.configs}
        # config -> split -> its tables; the default config is every binned table
        groups = {DEFAULT_CONFIG: {SPLIT: [c.table for c in facts.configs if c.env]}}
        groups |= {c.name: {SPLIT: [c.table]} for c in facts.configs}
    else:
        tables = facts.exported.tables
        tags, rows = [*TAGS, facts.format], sum(t.num_rows for t in tables.values())
        files = [{"split": s, "path": path} for s, path in facts.exported.files.items()]
        configs = {"default": {"data_files": files, "default": True}}
        groups = {"default": {split: [table] for split, table in tables.items()}}
    data = DatasetCardData(
        pretty_name=facts.pretty_name,
        license=facts.license,
        language=["en"],
        task_categories=["text-generation"],
        tags=tags,
        size_categories=[size_category(rows)],
    )
    infos = {}
    for name, by_split in groups.items():
        first = next((t for parts in by_split.values() for t in parts), None)
        if first is None:
            continue
        splits = SplitDict()
        for split, parts in by_split.items():
            nbytes, count = sum(t.nbytes for t in parts), sum(t.num_rows for t in parts)
            splits.add(SplitInfo(name=split, num_bytes=nbytes, num_examples=count))
        infos[name] = DatasetInfo(
            config_name=name,
            features=Features.from_arrow_schema(first.schema),
            splits=splits,
            dataset_size=sum(t.nbytes for parts in by_split.values() for t in parts),
        )
    MetadataConfigs(configs).to_dataset_card_data(data)
    DatasetInfosDict(infos).to_dataset_card_data(data)
    return data.to_yaml()


def split_rule(test_fraction: float | None, test_bins: list[str], seed: int) -> str | None:
    """How the test split was drawn, in the card's words (synthgen.export.splits); None without one."""
    if test_fraction is not None:
        return (
            f"The test split holds about {test_fraction:g} of each bin's problems (`--test-fraction "
            f"{test_fraction:g} --seed {seed}`), drawn by whole lineages (a seed's problem and its mutations) "
            "joined with the chains through them, so that no near-copy of a test problem and no part of a "
            "test chain is in train."
        )
    if test_bins:
        return (
            f"The test split holds the problems of the bins {', '.join(test_bins)} (`--test-bins "
            f"{','.join(test_bins)}`); a chain goes where its hard start goes."
        )
    return None


def format_columns(fmt: str, schema) -> list[tuple[str, str]]:
    """(name, meaning) of a trainer format's columns, the measurement fields under their parent."""
    from synthgen.interop.records import MEASUREMENT_FIELDS

    def text(name: str) -> str:
        return FORMAT_FIELD_TEXT.get(name) or FIELD_TEXT.get(name, "")

    where = WHERE_MEASURED[fmt]
    out = [(name, text(name)) for name in schema.names]
    if where:
        nested = (["split", "index"] if fmt == "verl" else []) + list(MEASUREMENT_FIELDS)
        out += [(f"{where}{name}", text(name)) for name in nested]
    return out


def prose(facts: CardFacts) -> str:
    env = jinja_env(TEMPLATES, extensions=["jinja2.ext.do"])
    env.filters["yaml"] = lambda value: yaml.safe_dump(value, sort_keys=True, width=100).rstrip()
    if facts.format == "hf":
        names = list(dict.fromkeys(name for c in facts.configs for name in c.table.schema.names))
        columns = [(name, FIELD_TEXT.get(name, "")) for name in names]
    else:
        columns = format_columns(facts.format, next(iter(facts.exported.tables.values())).schema)
    return env.get_template("card.md.j2").render(
        f=facts,
        paper=PAPER,
        columns=columns,
        default_config=DEFAULT_CONFIG,
        split=SPLIT,
        load_from=facts.repo_id or "PATH/TO/THIS/FOLDER",
    )


def card(facts: CardFacts) -> str:
    return f"---\n{header(facts)}\n---\n\n{prose(facts)}"
