"""Every command of `synthgen`, in one table: its name, its settings model and the function that
runs it (a "module:function" imported only when the command runs, so `synthgen --help` stays fast).

Each command's flags, help and defaults derive from its settings model (synthgen.cli.flags); the
config file's sections are the table's models' sections. No command does its work here.
"""

from __future__ import annotations

from pathlib import Path

import typer
from pydantic import BaseModel

from synthgen.cli.flags import BASE_URL, FORCE, MODEL, Alias, SettingsCommand, option
from synthgen.demo.scripted.launch import SCRIPTED_SERVER_HELP
from synthgen.demo.scripted.settings import ScriptedServerSettings
from synthgen.demo.settings import DemoSettings
from synthgen.envs.tool_settings import PromptsShowSettings, VerifySettings
from synthgen.evals.settings import EvalSettings, ServeSettings
from synthgen.export.settings import ExportSettings
from synthgen.llm.settings import LLMSettings, RoleSettings, StudentSettings, TeacherSettings
from synthgen.report.settings import CompareSettings, ReportSettings
from synthgen.sandbox.settings import SandboxRunSettings
from synthgen.settings.base import ConfigFile, SectionKeys, key_names, nested_model
from synthgen.slurm.settings import SlurmSettings, WaitReadySettings
from synthgen.stages.bin.settings import BinSettings
from synthgen.stages.calibrate.settings import CalibrateSettings
from synthgen.stages.chain.settings import ChainSettings
from synthgen.stages.filter.settings import FilterSettings
from synthgen.stages.generate.settings import GenerateSettings
from synthgen.stages.importer.settings import ImportSettings
from synthgen.stages.match.settings import MatchSettings
from synthgen.stages.plan.settings import PlanSettings
from synthgen.stages.seeds.settings import SeedsSettings
from synthgen.stages.stats.settings import StatsSettings
from synthgen.train.settings import TrainSettings

# -- flags that are not settings, and names several settings share -----------------------------
# `train --online`: the teacher's server (the student is the policy, whose server --online-student-url names).
ONLINE_CLIENT = [
    Alias(
        "--base-url",
        ("online.teacher.base_url",),
        "With --online: the teacher's server (as --online-teacher-url).",
        panel="Online training",
    ),
    Alias("--llm-use-n", ("online.llm.use_n",), "With --online: as --online-llm-use-n.", bool, "Online training"),
]
TRAIN_EXTRAS = [
    option(
        str | None,
        "--show-schedule",
        metavar="NAME|FILE",
        help="Print a curriculum's weights by step (scaled to --max-steps if given) and exit.",
    ),
    option(
        Path | None,
        "--make-tiny-model",
        metavar="DIR",
        help="Write a tiny random model and tokenizer to DIR (offline demos) and exit.",
    ),
    option(
        bool,
        "--dry-run",
        help="With --online: print the plan (servers, rates, budgets); with --async: the async trainer's "
        "config and prompt order. Then exit; nothing is contacted or trained.",
    ),
]
EVAL_BASE_URL = Alias("--base-url", ("model.base_url",), "The OpenAI-compatible server (the same as --model-url).")
EVAL_MODEL = Alias("--model", ("model.model",), "The model name the server serves (the same as --model-name).")
# HumanEval comes from its package's file and held-out problems from folders: no hub data set to name.
EVAL_NO_HUB = frozenset(f"{b}.{f}" for b in ("humaneval", "heldout") for f in ("dataset", "config", "split"))

SLURM_DRY_RUN = option(bool, "--dry-run", help="Write and print the scripts; submit nothing.")
SLURM_FORCE = option(bool, "--force", help="Submit even if an earlier generate array still runs.")
SLURM_AFTER = option(str | None, "--after", help="Job id (e.g. the generate array) the first job waits for.")
SLURM_SHARED = Alias(
    "--base-url", ("vllm.shared_url",), "A running OpenAI-compatible server that every job shares (no per-job vLLM)."
)
SLURM_TRAIN = [
    option(Path | None, "--data", help="Binned data (default: RUN_DIR/bin)."),
    option(str | None, "--model", help="Model to train (path or name); also what trl vllm-serve serves."),
    option(str | None, "--output", help="Checkpoint folder."),
    option(str | None, "--curriculum", help="Curriculum name (see synthgen train --help)."),
]
# What only the array jobs (generate, calibrate) use.
SLURM_NO_ARRAY = frozenset({"generate", "calibrate", "num_shards", "array_parallelism", "requeue", "signal_grace_s"})
SLURM_CALIBRATE = [
    option(Path | None, "--input-dir", help="Problem set to re-measure (default: calibrate.input_dir)."),
    option(str | None, "--after", help="Job id (e.g. the bin job) the array waits for."),
    option(bool, "--force", help="Submit even if an earlier calibrate array still runs."),
    SLURM_DRY_RUN,
]

# -- the table -------------------------------------------------------------------------------------
COMMANDS: list[SettingsCommand] = [
    SettingsCommand(
        "seeds",
        SeedsSettings,
        "synthgen.stages.seeds.run:run",
        extras=[FORCE],
        help="Sample code snippets (seeds) from source trees, starcoderdata-style Parquet or whole solutions.",
    ),
    SettingsCommand(
        "generate",
        GenerateSettings,
        "synthgen.stages.generate.run:run",
        aliases=[BASE_URL, MODEL],
        extras=[FORCE],
        help="Run the multi-turn teacher/student loop on the seeds; resumable and shardable.",
    ),
    SettingsCommand(
        "filter",
        FilterSettings,
        "synthgen.stages.filter.run:run",
        extras=[FORCE],
        help="Drop invalid, out-of-band, contaminated and near-duplicate problems; every drop has a reason.",
    ),
    SettingsCommand(
        "bin",
        BinSettings,
        "synthgen.stages.bin.run:run",
        extras=[FORCE],
        help="Split kept problems into difficulty bins by pass rate.",
    ),
    SettingsCommand(
        "chain",
        ChainSettings,
        "synthgen.stages.chain.run:run",
        aliases=[BASE_URL, MODEL],
        extras=[FORCE],
        help="Build hard -> medium -> easy chains from kept problems in --start-band (default 0.05-0.16), "
        "each step checked by the student.",
    ),
    SettingsCommand(
        "calibrate",
        CalibrateSettings,
        "synthgen.stages.calibrate.run:run",
        exclude=frozenset({"teacher", "mutation", "progression", "keep_reasoning"}),
        extras=[FORCE],
        help="Re-measure the pass rates of a problem set (a bin, chains, a filter output, an export) with "
        "another student; resumable and shardable.",
    ),
    SettingsCommand(
        "stats",
        StatsSettings,
        "synthgen.stages.stats.run:print_stats",
        help="Summarise a run from whatever stages it has: counts, yield per turn, reasons, pass rates, tokens.",
    ),
    SettingsCommand(
        "match",
        MatchSettings,
        "synthgen.stages.match.run:run",
        help="Subsample a problem set to another's pass-rate histogram, per environment (matched difficulty).",
    ),
    SettingsCommand(
        "plan",
        PlanSettings,
        "synthgen.stages.plan.run:run",
        help="Estimate a generate run before it starts: requests, tokens, sandbox jobs, GPU-hours, wall time "
        "and cost per kept problem, from an earlier run (--from-run) or default per-request figures.",
    ),
    # The demo's --base-url is its own setting: without it (and without --teacher-url/--student-url)
    # the scripted server serves the roles.
    SettingsCommand(
        "demo",
        DemoSettings,
        "synthgen.demo.run:run",
        aliases=[MODEL],
        help="Run seeds -> generate -> filter -> bin -> chain end to end, small (the scripted server "
        "unless --base-url).",
    ),
    SettingsCommand(
        "train",
        TrainSettings,
        "synthgen.train.command:run",
        aliases=ONLINE_CLIENT,
        extras=TRAIN_EXTRAS,
        help="Train with GRPO (TRL) on binned problems, drawing bins by a curriculum schedule (or, with --online, "
        "from a problem pool that a teacher keeps at the policy's frontier).",
    ),
    SettingsCommand(
        "eval",
        EvalSettings,
        "synthgen.evals.run:run",
        aliases=[EVAL_BASE_URL, EVAL_MODEL],
        extras=[FORCE],
        exclude=EVAL_NO_HUB,
        help="Evaluate a served model (or each training checkpoint) on LiveCodeBench, HumanEval, Math500, AIME2024 "
        "and held-out problems: pass@k per benchmark and split.",
    ),
    SettingsCommand(
        "import",
        ImportSettings,
        "synthgen.stages.importer.run:run",
        help="Turn real code-contest sets (LiveCodeBench, APPS/TACO, CodeContests) into a problems folder that "
        "`train --data` reads; reference solutions are checked against their tests.",
    ),
    SettingsCommand(
        "serve",
        ServeSettings,
        "synthgen.evals.serve:run",
        help="Serve a checkpoint over an OpenAI-compatible chat API on CPU: a small debug server (vLLM for real runs).",
    ),
    SettingsCommand(
        "scripted-server",
        ScriptedServerSettings,
        "synthgen.demo.scripted.launch:scripted_server_command",
        help=SCRIPTED_SERVER_HELP,
    ),
    SettingsCommand(
        "export",
        ExportSettings,
        "synthgen.export:run",
        help="Write a run's binned problems and chains as a Hugging Face dataset folder with its card, or as "
        "verl / verifiers / TRL / SFT files (--format); --push-to-hub uploads it.",
    ),
    SettingsCommand(
        "report",
        ReportSettings,
        "synthgen.report:run",
        help="Write one self-contained HTML page about a run: yield per turn, pass rates, bins, drop reasons, "
        "tokens, example problems and chains.",
    ),
    SettingsCommand(
        "compare",
        CompareSettings,
        "synthgen.report.compare:run",
        help="Write one self-contained HTML page comparing runs: pass@k and cumulative solve rates over training "
        "steps, yield per turn and the multi-turn / single-turn ratio; runs that differ only in seed are averaged.",
    ),
    SettingsCommand(
        "verify",
        VerifySettings,
        "synthgen.envs.verify:run",
        exclude=frozenset({"sandbox.workers"}),
        help="Validate a problem, parse a student answer, run it in the sandbox and print the reward.",
    ),
    SettingsCommand(
        "sandbox",
        SandboxRunSettings,
        "synthgen.cli.sandbox:run",
        help='Run jobs in the sandbox: {"id", "code", "calls", "expected", "timeout_s", "memory_mb"} per line; '
        'each result line: {"id", "isolation", "calls": [{"status", "value", "match", "error"}, ...]}. '
        "Statuses: ok, exception, timeout, memory, output_too_large, killed, infra. A line's own timeout_s "
        "and memory_mb win over --timeout-s and --memory-mb.",
    ),
]

# Command groups: `synthgen prompts show`, `synthgen slurm ...`.
GROUPS: dict[str, tuple[str, list[SettingsCommand]]] = {
    "prompts": (
        "Render the prompts a run sends, for a seed or a stored problem, without any server.",
        [
            SettingsCommand(
                "show",
                PromptsShowSettings,
                "synthgen.cli.prompts_show:show",
                help="Print the messages a turn would send for a seed or a stored problem.",
            )
        ],
    ),
    "slurm": (
        "Run the pipeline as Slurm jobs: print the sbatch scripts (--dry-run) or submit them.",
        [
            SettingsCommand(
                "generate",
                SlurmSettings,
                "synthgen.slurm.commands:generate",
                aliases=[SLURM_SHARED],
                extras=[SLURM_FORCE, SLURM_DRY_RUN],
                exclude=frozenset({"curate", "train", "calibrate"}),
                help="Submit the generate array for the shards that have no completion marker yet.",
            ),
            SettingsCommand(
                "curate",
                SlurmSettings,
                "synthgen.slurm.commands:curate",
                aliases=[SLURM_SHARED],
                extras=[SLURM_AFTER, SLURM_DRY_RUN],
                exclude=SLURM_NO_ARRAY | {"train"},
                help="Submit filter -> bin -> chain, each step waiting (afterok) for the one before.",
            ),
            SettingsCommand(
                "train",
                SlurmSettings,
                "synthgen.slurm.commands:train",
                extras=[*SLURM_TRAIN, SLURM_AFTER, SLURM_DRY_RUN],
                exclude=SLURM_NO_ARRAY | {"curate", "vllm"},
                help="Submit GRPO training: one node runs `trl vllm-serve`, the others `accelerate launch`.",
            ),
            SettingsCommand(
                "pipeline",
                SlurmSettings,
                "synthgen.slurm.commands:pipeline",
                aliases=[SLURM_SHARED],
                extras=[*SLURM_TRAIN[1:], SLURM_FORCE, SLURM_DRY_RUN],
                exclude=frozenset({"calibrate"}),
                help="Submit generate (unfinished shards) -> filter -> bin -> chain -> train, chained with afterok.",
            ),
            SettingsCommand(
                "calibrate",
                SlurmSettings,
                "synthgen.slurm.commands:calibrate",
                aliases=[SLURM_SHARED],
                extras=SLURM_CALIBRATE,
                exclude=frozenset({"generate", "curate", "train", "num_shards", "array_parallelism"}),
                help="Submit the calibrate array (another student re-measures a problem set) for its unfinished "
                "shards.",
            ),
            SettingsCommand(
                "wait-ready",
                WaitReadySettings,
                "synthgen.slurm.commands:wait_ready_command",
                help="Wait until every server answers; exit 0 when ready, 1 on timeout or a dead server.",
            ),
        ],
    ),
}


def every_command() -> list[SettingsCommand]:
    """The table's commands, groups included."""
    return [*COMMANDS, *(command for _, commands in GROUPS.values() for command in commands)]


def sections() -> frozenset[str]:
    """The sections a config file may hold: one per settings model of the table."""
    return frozenset(command.model.section for command in every_command() if command.model.section)


def config_keys() -> dict[str, SectionKeys]:
    """What each config section may say besides its model's fields and flags: the alias flags of the
    commands that read it, and where the shared `llm:` section's keys go in its settings."""
    out: dict[str, SectionKeys] = {}
    for command in every_command():
        section = command.model.section
        if not section:
            continue
        aliases = {a.name[2:].replace("-", "_"): a.targets for a in command.aliases if a.annotation is not bool}
        aliases = {**(out[section].aliases if section in out else {}), **aliases}
        out[section] = SectionKeys(command.model, aliases, llm_targets(command.model, aliases))
    return out


def llm_targets(model: type[BaseModel], aliases: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    """Where each key of the shared `llm:` section goes in `model`: `base_url` and `model` where the
    command's `--base-url` and `--model` go (or its own `base_url`, as demo's), `api_key` beside
    those URLs, `teacher`/`student` to its roles of those kinds, the client's settings to its client."""
    nested = dict(_nested_paths(model))
    base = aliases.get("base_url") or (("base_url",) if "base_url" in model.model_fields else ())
    roles = [p.rpartition(".")[0] for p in base if "." in p]
    found = {
        "base_url": base,
        "model": aliases.get("model") or tuple(f"{r}.model" for r in roles),
        "api_key": tuple(f"{r}.api_key" for r in roles if issubclass(nested.get(r, object), RoleSettings)),
        "teacher": tuple(p for p, m in nested.items() if issubclass(m, TeacherSettings)),
        "student": tuple(p for p, m in nested.items() if issubclass(m, StudentSettings)),
        "client": tuple(p for p, m in nested.items() if issubclass(m, LLMSettings)),
    }
    paths = {".".join(p) for p in key_names(model).values()}
    return {k: tuple(p for p in v if p in paths) for k, v in found.items()}


def _nested_paths(model: type[BaseModel], prefix: str = ""):
    for name, info in model.model_fields.items():
        inner = nested_model(info.annotation)
        if inner is not None:
            yield f"{prefix}{name}", inner
            yield from _nested_paths(inner, f"{prefix}{name}.")


def config_file(path: Path | None) -> ConfigFile:
    """The command line's config file, with what every section may say (see `config_keys`)."""
    return ConfigFile(path, sections(), config_keys(), llm_models=(RoleSettings, LLMSettings))


def register_all(app: typer.Typer) -> None:
    """Every command of the table on `app`, and `config show` for each settings model."""
    from synthgen.cli import config

    for command in COMMANDS:
        command.register(app)
    for name, (help_text, commands) in GROUPS.items():
        group = typer.Typer(name=name, help=help_text, no_args_is_help=True, add_completion=False)  # -h: from app
        app.add_typer(group, name=name)
        for command in commands:
            command.register(group)
    # `config show slurm` prints the cluster settings every slurm sub-command shares.
    show = [*COMMANDS, SettingsCommand("slurm", SlurmSettings, "synthgen.slurm.commands:generate")]
    config.register(app, show)
