"""`synthgen export RUN_DIR OUT`: a run's problems as a Hugging Face dataset folder, with its card.

    synthgen export data/runs/exp1 data/exports/exp1
    synthgen export data/runs/exp1 data/exports/exp1 --push-to-hub my-org/synthgen-exp1 --license apache-2.0

OUT holds one Parquet config per (environment, bin), one for the chains and one, `kept`, of every
problem the filter kept (synthgen.export.tables),
README.md (the dataset card: synthgen.export.card) and synthgen_export.json (the same facts for
scripts). `datasets.load_dataset(OUT, name="induction-hard")` loads a config; without a name, the
`all` config. Only finished stages are read (bin, and chain when the run has one); --allow-partial
reads the finished shards on purpose and the card says so. OUT is built beside the old one and
swapped in, so a killed export leaves the previous export or none. `--push-to-hub` uploads the
folder with `huggingface_hub` (synthgen.export.hub).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from rich.console import Console
from rich.table import Table

from synthgen import __version__
from synthgen.errors import UserError
from synthgen.export import tables
from synthgen.export.card import CardFacts, card
from synthgen.export.lineage import lineage_summary
from synthgen.export.settings import ExportSettings
from synthgen.store.files import file_metadata, write_text_atomic
from synthgen.store.layout import StageDir
from synthgen.store.measurement import evidence, mutation_summary
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
    bin_status = StageDir.of(run_dir, "bin").require_complete(settings.allow_partial)
    if bin_status.partial:
        console.print(f"[yellow]export: {bin_status.note()}[/yellow]")
    bins = bins_of(infos.get("bin"))
    configs = tables.binned_configs(bin_status, bins)
    chains = tables.read_chains(run_dir, settings.allow_partial)
    if chains is not None:
        configs.append(chains)
    kept = tables.read_kept(run_dir, settings.allow_partial)
    if kept is not None:
        configs.append(kept)
    facts = _facts(settings, run_dir, configs, infos, bins)
    read_partially = ["bin"] if bin_status.partial else []
    facts.partial = read_partially + [name for name, info in infos.items() if info.partial_input]

    meta = file_metadata("export", bin_status.settings_hash or "", {"run": run_dir.name})
    with StageDir.at(out, "export").rebuild() as build:
        for config in configs:
            tables.write_config(build.path, config, settings.rows_per_file, meta)
        write_text_atomic(build.path / "README.md", card(facts))
        write_text_atomic(build.path / PROVENANCE, json.dumps(_provenance(facts), indent=1, sort_keys=True) + "\n")
    _show(configs, out, console)

    if settings.push_to_hub:
        from synthgen.export.hub import push

        message = f"synthgen {__version__} export of run {run_dir.name}: {facts.binned_rows} problems"
        url = push(out, settings.push_to_hub, private=settings.private, message=message)
        console.print(f"export: pushed to {url}")
    return out


def _facts(settings: ExportSettings, run_dir: Path, configs, infos, bins) -> CardFacts:
    import polars as pl

    binned = pl.concat([pl.from_arrow(c.table) for c in configs if c.env], how="vertical_relaxed")
    counts: dict[str, dict[str, int]] = {}
    for c in configs:
        if c.env:
            counts.setdefault(c.env, {})[c.difficulty or ""] = c.rows
    seeds = StageDir.of(run_dir, "seeds")
    sources = {}
    if seeds.parts():
        frame = seeds.read(["source"])
        sources = dict(sorted(frame.group_by("source").len().iter_rows()))
    filter_stats = read_json(run_dir / "filter" / "stats.json") or {}
    reasons = [(code, n, REASON_TEXT.get(code, "")) for code, n in filter_reasons(run_dir).items()]
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
        measurement=evidence(binned),
        mutation=mutation_summary(binned),
        lineage=lineage_summary(run_dir, binned),
    )


def _provenance(facts: CardFacts) -> dict:
    return {
        "synthgen_version": facts.version,
        "run": facts.run_name,
        "license": facts.license,
        "configs": {
            c.name: {"rows": c.rows, "files": c.files, "env": c.env, "bin": c.difficulty} for c in facts.configs
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
        "lineage": facts.lineage,
    }


def _show(configs, out: Path, console: Console) -> None:
    console.print(f"export: wrote {out}")
    table = Table(show_edge=False)
    table.add_column("config", no_wrap=True)
    table.add_column("rows", justify="right")
    table.add_column("files", justify="right")
    for c in configs:
        table.add_row(c.name, str(c.rows), str(len(c.files or [])))
    console.print(table)
    where = os.path.relpath(out) if not Path(out).is_absolute() else str(out)
    console.print(f'export: load with datasets.load_dataset("{where}", name="{configs[0].name}")', soft_wrap=True)
