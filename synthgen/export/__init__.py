"""`synthgen export RUN_DIR OUT`: a run's problems as a Hugging Face dataset folder or a trainer's files, with a card.

    synthgen export data/runs/exp1 data/exports/exp1 --push-to-hub my-org/synthgen-exp1
    synthgen export data/runs/exp1 data/exports/exp1-verl --format verl --test-fraction 0.05

`--format hf` (the default): one Parquet config per (environment, bin), one for the chains and
one, `kept`, of every problem the filter kept (synthgen.export.tables), README.md (the card:
synthgen.export.card) and synthgen_export.json (the same facts for scripts). `--format
verl|verifiers|trl|sft`: the problems one row each (synthgen.export.portable), split on request
(synthgen.export.splits), in each trainer's columns (synthgen.export.formats, .package), with a
card that says how to point the trainer at them; sft needs a run that kept solved attempts.
Only finished stages are read unless --allow-partial (the card says so). OUT is built beside the
old one and swapped in, and every check that can refuse runs first: exit 2 leaves OUT as it was.
`--push-to-hub` uploads OUT as it is on disk, deleting the Parquet files an earlier export had in
the same commit; a Hub that is unreachable or failing (network, 5xx) is exit 3, OUT stays written.
"""

from __future__ import annotations

import json
import os
from importlib.util import find_spec
from pathlib import Path

import polars as pl
from rich.console import Console
from rich.table import Table

from synthgen import __version__
from synthgen.errors import InfraIncomplete, UserError
from synthgen.export import formats, package, splits, tables
from synthgen.export.card import CardFacts, TrainerExport, card, split_rule
from synthgen.export.settings import ExportSettings
from synthgen.settings.base import ENV_NAMES
from synthgen.store.files import file_metadata, read_metadata, write_text_atomic
from synthgen.store.layout import StageDir
from synthgen.store.measurement import chance_summary, evidence, integrity_table, mutation_summary
from synthgen.store.paths import output_folder
from synthgen.store.run_info import REASON_TEXT, bins_of, check_run_dir, filter_reasons, is_scripted, models, read_json
from synthgen.store.run_info import stages as stage_infos

PROVENANCE = "synthgen_export.json"


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
    try:  # `datasets` writes the card's features the way it reads them back; both come with the hub extra
        import datasets  # noqa: F401
        import huggingface_hub  # noqa: F401
    except ImportError:
        raise UserError("synthgen export needs datasets and huggingface_hub: pip install 'synthgen[hub]'") from None
    run_dir = check_run_dir(settings.run_dir)
    out = check_out(settings.out, run_dir)
    if settings.push_to_hub:
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
        configs += [c for c in (chains, tables.read_kept(run_dir, settings.allow_partial)) if c is not None]
        binned = pl.concat([pl.from_arrow(c.table) for c in configs if c.env], how="vertical_relaxed")
        facts = _facts(settings, run_dir, configs, infos, bins, binned)
        rows = facts.binned_rows
    else:
        written, problems = _trainer_format(settings, run_dir, bin_status, chains, bins)
        # The card's "how it was made" counts the chains from their config; no config is written.
        facts = _facts(settings, run_dir, configs + ([chains] if chains is not None else []), infos, bins, problems)
        facts.format, facts.exported = settings.format, written
        rows = problems.height
    facts.partial = (["bin"] if bin_status.partial else []) + [n for n, info in infos.items() if info.partial_input]

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
        message = f"synthgen {__version__} export of run {run_dir.name} ({settings.format}): {rows} problems"
        url = push(out, settings.push_to_hub, private=settings.private, message=message)
        console.print(f"export: pushed to {url}")
    return out


DELETE_STALE = ["data/**", "chains/**", "kept/**", "*.parquet"]
_NETWORK_MODULES = {"httpx", "httpx2", "httpcore", "requests", "urllib3", "aiohttp"}


def check_login() -> None:
    """Refuse before any work when no Hub token is configured (HF_TOKEN or `hf auth login`)."""
    from huggingface_hub import get_token

    if not get_token():
        raise UserError("--push-to-hub needs a Hugging Face login: run `hf auth login` or set HF_TOKEN")


def push(folder: Path, repo_id: str, *, private: bool, message: str) -> str:
    """Create the dataset repository if needed and upload `folder` to it; returns the repository URL."""
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError, LocalTokenNotFoundError, OfflineModeIsEnabled

    api = HfApi()
    try:
        url = api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        api.upload_folder(
            repo_id=repo_id,
            folder_path=str(folder),
            repo_type="dataset",
            commit_message=message,
            delete_patterns=DELETE_STALE,
        )
    except OfflineModeIsEnabled:
        raise UserError(
            f"cannot push to {repo_id}: HF_HUB_OFFLINE is set (unset it to upload; {folder} is written)"
        ) from None
    except LocalTokenNotFoundError:
        raise UserError("--push-to-hub needs a Hugging Face login: run `hf auth login` or set HF_TOKEN") from None
    except HfHubHTTPError as exc:
        status = getattr(exc.response, "status_code", None) if getattr(exc, "response", None) is not None else None
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if status is not None and status >= 500:
            raise InfraIncomplete(
                f"the Hub failed ({first}); {folder} is written, re-run to retry the upload"
            ) from None
        raise UserError(f"the Hub refused the upload to {repo_id}: {first}") from None
    except Exception as exc:
        if not (isinstance(exc, OSError) or type(exc).__module__.split(".")[0] in _NETWORK_MODULES):
            raise
        raise InfraIncomplete(
            f"cannot reach the Hub ({type(exc).__name__}: {exc}); {folder} is written, re-run to retry the upload"
        ) from None
    return str(url)


def _trainer_format(settings: ExportSettings, run_dir: Path, bin_status, chains, bins):
    """The rows of a trainer format, split, rendered and built into tables; nothing written yet."""
    from synthgen.export.portable import portable_problems, render
    from synthgen.store.attempts import read_attempts

    problems = portable_problems(bin_status, chains)
    attempts = read_attempts(run_dir) if settings.format == "sft" else None
    if settings.format == "sft" and attempts is None:
        raise UserError(
            f"--format sft needs the student's attempts and run {run_dir} kept none: run generate (or calibrate) "
            "with --keep-attempts solved"
        )
    split = {"test_fraction": settings.test_fraction, "test_bins": settings.test_bins, "seed": settings.seed}
    rows = render(problems, splits.assign(problems, **split, bin_order=[b.name for b in bins]))
    if attempts is not None:
        built, sft = formats.sft_tables(rows, attempts, settings.max_attempts_per_problem)
    else:
        built, sft = formats.problem_tables(settings.format, rows), None
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
        verl_reward_path=str(Path(find_spec("synthgen.interop.verl").origin).resolve()),  # verl takes a file
        split_seed=settings.seed if settings.test_fraction is not None else None,
        test_fraction=settings.test_fraction,
        test_bins=list(settings.test_bins),
    )
    return written, problems


def _facts(settings: ExportSettings, run_dir: Path, configs, infos, bins, binned) -> CardFacts:
    counts: dict[str, dict[str, int]] = {}
    for env, difficulty, n in binned.group_by("env", "difficulty").len().sort("env", "difficulty").iter_rows():
        counts.setdefault(env, {})[difficulty or ""] = n
    counts = {env: counts[env] for env in [e for e in ENV_NAMES if e in counts] + sorted(set(counts) - set(ENV_NAMES))}
    seeds = StageDir(run_dir, "seeds")
    sources = dict(sorted(seeds.read(["source"]).group_by("source").len().iter_rows())) if seeds.parts() else {}
    filter_stats = read_json(run_dir / "filter" / "stats.json") or {}
    words = {**INTEGRITY_CHECKS, **REASON_TEXT}
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
        lineage=_lineage(run_dir, binned),
        integrity=_integrity(binned, bins, infos, filter_stats),
    )


# The checks that keep a reward from being earned without solving, in the card's words: what each
# check (a filter reason code) asks, and the filter setting that turns it on or sets it, if any.
INTEGRITY_CHECKS = {
    "trivial": "a constant or a one-line function (len, sum, sorted, ...) reproduces every output (induction, at "
    "generation)",
    "weak_tests": "the inputs do not tell f from its near misses (mutation score below the minimum)",
    "guessable": "a strategy with no understanding earns the reward (chance rate at or above the maximum)",
    "contaminated": "the problem overlaps an evaluation benchmark or a reference text",
    "near_duplicate": "a near-duplicate (MinHash) of a problem that was kept",
}
INTEGRITY_SETTINGS = {"weak_tests": "min_mutation_score", "guessable": "max_chance_rate"}


def _integrity(binned, bins, infos, filter_stats: dict) -> dict:
    """The card's integrity section: per environment and bin the distributions of chance rates,
    mutation scores and interval widths; the chance summary; every check with what it dropped."""
    recorded = (infos.get("filter").settings if infos.get("filter") else None) or {}
    counts = filter_stats.get("reasons") or {}
    cont = filter_stats.get("contamination") or {}
    checks = []
    for code, question in INTEGRITY_CHECKS.items():
        setting = INTEGRITY_SETTINGS.get(code)
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
    recorded = [read_metadata(part).get("measurement") for part in StageDir(run_dir, "chain/links").parts()]
    return any(json.loads(r).get("remeasure") for r in recorded if r)


def _lineage(run_dir: Path, exported: pl.DataFrame) -> dict | None:
    """The card's lineage summary: how many teacher turns a kept problem took, and the yield of each
    strategy (exported / generated valid); None without a generate stage."""
    stage = StageDir(run_dir, "generate")
    if not stage.parts() or exported.height == 0:
        return None
    generated = stage.read(["turn_id", "turn", "strategy", "valid"]).filter(pl.col("valid"))
    ids = set(exported["turn_id"].to_list())
    generated = generated.with_columns(pl.col("turn_id").is_in(list(ids)).alias("exported"))
    turns = dict(sorted((int(t), n) for t, n in exported.group_by("turn").len().iter_rows()))
    strategies = []
    for strategy, part in sorted(generated.group_by("strategy"), key=lambda kv: str(kv[0][0])):
        kept, n = int(part["exported"].sum()), part.height
        strategies.append({"strategy": strategy[0] or "-", "valid": n, "exported": kept, "yield": round(kept / n, 4)})
    with_parent = exported.filter(pl.col("parent_id").is_not_null()).height if "parent_id" in exported.columns else 0
    return {
        "problems": exported.height,
        "seeds": exported["seed_id"].n_unique(),
        "lineages": exported["lineage_id"].n_unique(),
        "mean_turn": round(float(exported["turn"].mean()), 3),
        "turns": turns,
        "mutated": with_parent,
        "by_strategy": strategies,
    }


COPIED_FACTS = ("models", "scripted", "partial", "measurement", "mutation", "integrity", "lineage", "format")


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
        "stages": {
            name: {"rows": s.rows, "settings_hash": s.settings_hashes, "settings": s.settings, "finished": s.finished}
            for name, s in facts.stages.items()
        },
        "drop_reasons": {code: n for code, n, _ in facts.drop_reasons},
        **{key: getattr(facts, key) for key in COPIED_FACTS},
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
