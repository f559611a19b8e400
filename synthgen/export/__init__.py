"""`synthgen export RUN_DIR OUT`: a run's problems as a Hugging Face dataset folder or a trainer's files, with a card.

    synthgen export data/runs/exp1 data/exports/exp1
    synthgen export data/runs/exp1 data/exports/exp1 --push-to-hub my-org/synthgen-exp1 --license apache-2.0
    synthgen export data/runs/exp1 data/exports/exp1-verl --format verl --test-fraction 0.05
    synthgen export data/runs/exp1 data/exports/exp1-sft --format sft --max-attempts-per-problem 4

`--format verl|verifiers|trl|sft` writes the files another trainer reads: the binned problems and
the chains' problems one row each (synthgen.export.portable), split into train and test on request
(synthgen.export.splits), in each trainer's own columns (synthgen.export.formats; the verifiers
one as an installable package, synthgen.export.package), with a card that says how to point the
trainer at them. `--format sft` writes the solved attempts a run kept (`--keep-attempts solved` in
generate or calibrate); a run that kept none is exit 2.

With `--format hf` (the default), OUT holds one Parquet config per (environment, bin), one for the
chains and one, `kept`, of every problem the filter kept (synthgen.export.tables), README.md (the
dataset card: synthgen.export.card) and synthgen_export.json (the same facts for
scripts). `datasets.load_dataset(OUT, name="induction-hard")` loads a config; without a name, the
`all` config. Only finished stages are read (bin, and chain when the run has one); --allow-partial
reads the finished shards on purpose and the card says so. OUT is built beside the old one and
swapped in, so a killed export leaves the previous export or none. `--push-to-hub` uploads the
folder with `huggingface_hub` (synthgen.export.hub). Every check that can refuse (unfinished
stages, no attempts, an empty split) runs before anything is written: exit 2 leaves OUT as it was.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import polars as pl
from rich.console import Console
from rich.table import Table

from synthgen import __version__
from synthgen.errors import UserError
from synthgen.export import formats, package, splits, tables
from synthgen.export.card import CardFacts, TrainerExport, card, split_rule
from synthgen.export.lineage import lineage_summary
from synthgen.export.settings import ExportSettings
from synthgen.settings.base import ENV_NAMES
from synthgen.store.files import file_metadata, read_metadata, write_text_atomic
from synthgen.store.layout import StageDir
from synthgen.store.measurement import chance_summary, evidence, integrity_table, mutation_summary
from synthgen.store.paths import output_folder
from synthgen.store.run_info import REASON_TEXT, bins_of, check_run_dir, filter_reasons, is_scripted, models, read_json
from synthgen.store.run_info import stages as stage_infos

PROVENANCE = "synthgen_export.json"


def require_libraries() -> None:
    """`datasets` writes the card's features the way it reads them back; both come with the hub extra."""
    try:
        import datasets  # noqa: F401
        import huggingface_hub  # noqa: F401
    except ImportError:
        raise UserError("synthgen export needs datasets and huggingface_hub: pip install 'synthgen[hub]'") from None


def check_out(out: Path, run_dir: Path) -> Path:
    """OUT may be new, empty, or an earlier export; never the run itself or a folder above it."""
    out = output_folder(out, "export OUT")
    resolved, run = out.resolve(), run_dir.resolve()
    if run == resolved or run.is_relative_to(resolved):
        raise UserError(f"{out} holds the run directory {run_dir}; export to a folder of its own")
    if resolved.is_relative_to(run) and resolved.relative_to(run).parts[0] in {"seeds", "generate", "filter", "bin"}:
        raise UserError(f"{out} is inside a stage folder of the run; export to a folder of its own")
    if out.is_dir() and any(out.iterdir()) and not (out / PROVENANCE).is_file():
        raise UserError(f"{out} is not empty and holds no earlier export ({PROVENANCE}); choose another folder")
    return out


def run(settings: ExportSettings, console: Console | None = None) -> Path:
    console = console or Console(stderr=True)
    require_libraries()
    run_dir = check_run_dir(settings.run_dir)
    out = check_out(settings.out, run_dir)
    if settings.push_to_hub:
        from synthgen.export.hub import check_login

        check_login()

    infos = stage_infos(run_dir)
    bin_status = StageDir(run_dir, "bin").require_complete(settings.allow_partial)
    if bin_status.partial:
        console.print(f"[yellow]export: {bin_status.note()}[/yellow]")
    bins = bins_of(infos.get("bin"))
    configs = tables.binned_configs(bin_status, bins)
    chains = tables.read_chains(run_dir, settings.allow_partial)
    # The hf files stay as they were; the trainer formats' files also name their format.
    extra = {"run": run_dir.name} | ({"format": settings.format} if settings.format != "hf" else {})
    meta = file_metadata("export", bin_status.settings_hash or "", extra)
    if settings.format == "hf":
        if chains is not None:
            configs.append(chains)
        kept = tables.read_kept(run_dir, settings.allow_partial)
        if kept is not None:
            configs.append(kept)
        binned = pl.concat([pl.from_arrow(c.table) for c in configs if c.env], how="vertical_relaxed")
        facts = _facts(settings, run_dir, configs, infos, bins, binned)
        rows = facts.binned_rows
    else:
        written, problems = _trainer_format(settings, run_dir, bin_status, chains, bins)
        # The card's "how it was made" counts the chains from their config; no config is written.
        facts = _facts(settings, run_dir, configs + ([chains] if chains is not None else []), infos, bins, problems)
        facts.format, facts.exported = settings.format, written
        rows = problems.height
    read_partially = ["bin"] if bin_status.partial else []
    facts.partial = read_partially + [name for name, info in infos.items() if info.partial_input]

    with StageDir.at(out, "export").rebuild() as build:
        if facts.exported is None:
            for config in configs:
                tables.write_config(build.path, config, settings.rows_per_file, meta)
        else:
            x = facts.exported
            formats.write_tables(build.path, x.data_folder if x.format == "verifiers" else "", x.tables, meta)
            if x.format == "verifiers":
                package.write_package(build.path, facts.run_name, x.problems)
        write_text_atomic(build.path / "README.md", card(facts))
        write_text_atomic(build.path / PROVENANCE, json.dumps(_provenance(facts), indent=1, sort_keys=True) + "\n")
    _show(facts, out, console)

    if settings.push_to_hub:
        from synthgen.export.hub import push

        message = f"synthgen {__version__} export of run {run_dir.name} ({settings.format}): {rows} problems"
        url = push(out, settings.push_to_hub, private=settings.private, message=message)
        console.print(f"export: pushed to {url}")
    return out


def _trainer_format(settings: ExportSettings, run_dir: Path, bin_status, chains, bins):
    """The rows of a trainer format, split, rendered and built into tables; nothing written yet."""
    from synthgen.export.portable import portable_problems, render

    problems = portable_problems(bin_status, chains)
    attempts = _attempts(run_dir) if settings.format == "sft" else None
    order = [b.name for b in bins]
    assigned = splits.assign(
        problems,
        test_fraction=settings.test_fraction,
        test_bins=settings.test_bins,
        seed=settings.seed,
        bin_order=order,
    )
    rows = render(problems, assigned)
    sft = None
    if attempts is not None:
        built, sft = formats.sft_tables(rows, attempts, settings.max_attempts_per_problem)
    else:
        built = formats.problem_tables(settings.format, rows)
    run_name = run_dir.resolve().name
    where = package.data_folder(run_name) if settings.format == "verifiers" else ""
    written = TrainerExport(
        format=settings.format,
        out=str(Path(settings.out).resolve()),
        tables=built,
        files={split: f"{where}/{split}.parquet" if where else f"{split}.parquet" for split in built},
        splits={s: {"rows": t.num_rows, "by_bin": formats.bin_counts(settings.format, t)} for s, t in built.items()},
        split_rule=split_rule(settings.test_fraction, settings.test_bins, settings.seed),
        problems=problems.height,
        chained=int(problems["chain_id"].is_not_null().sum()),
        sft=sft,
        env_id=package.env_id(run_name),
        data_folder=package.data_folder(run_name),
        verl_reward_path=_verl_module_path(),
        split_seed=settings.seed if settings.test_fraction is not None else None,
        test_fraction=settings.test_fraction,
        test_bins=list(settings.test_bins),
    )
    return written, problems


def _verl_module_path() -> str:
    """Where synthgen.interop.verl is installed: verl's custom_reward_function.path takes a file."""
    import synthgen.interop

    return str((Path(synthgen.interop.__file__).parent / "verl.py").resolve())


def _attempts(run_dir: Path):
    """The run's kept attempts; exit 2 naming the flag when it kept none."""
    from synthgen.store.attempts import read_attempts

    attempts = read_attempts(run_dir)
    if attempts is None:
        raise UserError(
            f"--format sft needs the student's attempts and run {run_dir} kept none: run generate (or calibrate) "
            "with --keep-attempts solved"
        )
    return attempts


def _facts(settings: ExportSettings, run_dir: Path, configs, infos, bins, binned) -> CardFacts:
    counts: dict[str, dict[str, int]] = {}
    for env, difficulty, n in binned.group_by("env", "difficulty").len().sort("env", "difficulty").iter_rows():
        counts.setdefault(env, {})[difficulty or ""] = n
    counts = {env: counts[env] for env in [e for e in ENV_NAMES if e in counts] + sorted(set(counts) - set(ENV_NAMES))}
    seeds = StageDir(run_dir, "seeds")
    sources = {}
    if seeds.parts():
        frame = seeds.read(["source"])
        sources = dict(sorted(frame.group_by("source").len().iter_rows()))
    filter_stats = read_json(run_dir / "filter" / "stats.json") or {}
    words = {**REASON_TEXT, **{code: question for code, question, _ in INTEGRITY_CHECKS if code not in REASON_TEXT}}
    reasons = [(code, n, words.get(code, "")) for code, n in filter_reasons(run_dir).items()]
    found = models(binned)
    outside = ((read_json(run_dir / "bin" / "summary.json") or {}).get("outside") or {}).get("total", 0)
    return CardFacts(
        pretty_name=settings.pretty_name or f"synthgen: {run_dir.resolve().name}",
        license=settings.license,
        configs=configs,
        stages=infos,
        models=found,
        scripted=is_scripted(found),
        bins=bins,
        env_bin_counts=counts,
        filter_stats=filter_stats,
        drop_reasons=reasons,
        seed_sources=sources,
        run_name=run_dir.resolve().name,
        version=__version__,
        repo_id=settings.push_to_hub,
        outside=int(outside or 0),
        measurement=evidence(_measured_rows(binned, configs)),
        chains_remeasured=_chains_remeasured(run_dir),
        mutation=mutation_summary(binned),
        lineage=lineage_summary(run_dir, binned),
        integrity=_integrity(binned, bins, infos, filter_stats),
    )


# The checks that keep a reward from being earned without solving, in the card's words: (reason
# code, what the check asks, the filter setting that turns it on or sets it, if any).
INTEGRITY_CHECKS = (
    (
        "trivial",
        "a constant or a one-line function (len, sum, sorted, ...) reproduces every output (induction, at generation)",
        None,
    ),
    (
        "weak_tests",
        "the inputs do not tell f from its near misses (mutation score below the minimum)",
        "min_mutation_score",
    ),
    (
        "guessable",
        "a strategy with no understanding earns the reward (chance rate at or above the maximum)",
        "max_chance_rate",
    ),
    ("contaminated", "the problem overlaps an evaluation benchmark or a reference text", None),
    ("near_duplicate", "a near-duplicate (MinHash) of a problem that was kept", None),
)


def _integrity(binned, bins, infos, filter_stats: dict) -> dict:
    """The card's integrity section: per environment and bin the distributions of chance rates,
    mutation scores and interval widths; the chance summary; every check with what it dropped."""
    recorded = (infos.get("filter").settings if infos.get("filter") else None) or {}
    counts = filter_stats.get("reasons") or {}
    cont = filter_stats.get("contamination") or {}
    checks = []
    for code, question, setting in INTEGRITY_CHECKS:
        if setting is not None:
            value = recorded.get(setting)
            state = "off" if value is None else f"`--{setting.replace('_', '-')} {value:g}`"
        elif code == "contaminated":
            ran = cont.get("benchmarks") or cont.get("references")
            state = ", ".join([*(cont.get("benchmarks") or {}), *(cont.get("references") or [])]) if ran else "off"
        elif code == "near_duplicate":
            dedup = recorded.get("dedup") or {}
            state = (
                f"Jaccard >= {dedup['threshold']:g}" if dedup.get("enabled", True) and "threshold" in dedup else "off"
            )
        else:
            state = "always"
        checks.append({"check": code, "question": question, "setting": state, "dropped": int(counts.get(code, 0) or 0)})
    return {
        "table": integrity_table(binned, [b.name for b in bins]),
        "chance": chance_summary(binned),
        "checks": checks,
        "filtered": bool(filter_stats),
        "unmeasured_kept": (filter_stats.get("chance") or {}).get("unmeasured"),
    }


def _measured_rows(binned, configs):
    """The binned rows and the chain levels no bin holds: every pass rate the export carries, once.

    Chain steps are measured by `synthgen chain`, which may have used another student on purpose
    (`--remeasure`); the card's "difficulty measured against" must name that measurement too."""
    chains = next((c for c in configs if c.name == tables.CHAINS_CONFIG), None)
    if chains is None or chains.rows == 0:
        return binned
    steps = pl.from_arrow(chains.table).filter(~pl.col("problem_id").is_in(binned["problem_id"].implode()))
    return pl.concat([binned, steps.select([c for c in binned.columns if c in steps.columns])], how="diagonal_relaxed")


def _chains_remeasured(run_dir: Path) -> bool:
    """Did `synthgen chain --remeasure` measure the chain steps anew (its parts' metadata say so)?"""
    for part in StageDir(run_dir, "chain/links").parts():
        recorded = read_metadata(part).get("measurement")
        if recorded and json.loads(recorded).get("remeasure"):
            return True
    return False


def _provenance(facts: CardFacts) -> dict:
    return {
        "synthgen_version": facts.version,
        "run": facts.run_name,
        "license": facts.license,
        "configs": {
            c.name: {"rows": c.rows, "files": c.files, "env": c.env, "bin": c.difficulty}
            for c in facts.configs
            if facts.format == "hf"
        },
        "bins": {b.name: b.label() for b in facts.bins},
        "models": facts.models,
        "scripted": facts.scripted,
        "partial": facts.partial,
        "stages": {
            name: {"rows": s.rows, "settings_hash": s.settings_hashes, "settings": s.settings, "finished": s.finished}
            for name, s in facts.stages.items()
        },
        "drop_reasons": {code: n for code, n, _ in facts.drop_reasons},
        "measurement": facts.measurement,
        "mutation": facts.mutation,
        "integrity": facts.integrity,
        "lineage": facts.lineage,
        "format": facts.format,
        **({"export": facts.exported.provenance()} if facts.exported else {}),
    }


def _show(facts: CardFacts, out: Path, console: Console) -> None:
    """What was written: hf's configs and how to load one, or a trainer format's files."""
    x = facts.exported
    table = Table(show_edge=False)
    if x is None:
        console.print(f"export: wrote {out}")
        table.add_column("config", no_wrap=True)
        table.add_column("rows", justify="right")
        table.add_column("files", justify="right")
        for c in facts.configs:
            table.add_row(c.name, str(c.rows), str(len(c.files or [])))
        where = os.path.relpath(out) if not Path(out).is_absolute() else str(out)
        last = f'export: load with datasets.load_dataset("{where}", name="{facts.configs[0].name}")'
    else:
        console.print(f"export: wrote {out} (--format {facts.format})")
        table.add_column("split", no_wrap=True)
        table.add_column("file")
        table.add_column("rows", justify="right")
        for split, name in x.files.items():
            table.add_row(split, name, str(x.splits[split]["rows"]))
        last = f"export: {out}/README.md says how to point {x.trainer} at them"
    console.print(table)
    console.print(last, soft_wrap=True)
