"""`synthgen import`: real code-contest problem sets -> a finished problems folder for `train`.

    synthgen import data/lcb/test6.jsonl --run-dir data/runs/exp1           # -> data/runs/exp1/real/
    synthgen import taco/train.parquet --format apps --output data/real
    synthgen train --data real=data/real:0.55 --data synth=data/runs/exp1/bin:0.45 --curriculum-sources synth ...

Every row becomes a `contest` problem (synthgen.envs.contest). A problem is rejected, with its
reason, when its tests cannot be read, it has none, or no statement; and, when the set gives
reference solutions (APPS, TACO, CodeContests), when none of the first few Python solutions passes
all of its own tests in the sandbox. The output is laid out like `bin`'s, so `train --data` reads
it as a finished source; rejects go to `<output>/rejects.jsonl`, counts to `import_summary.json`.

Every imported problem gets its chance level (synthgen.envs.chance): a program that prints the
public tests' outputs passes when the hidden tests repeat them, an empty one when every expected
output is blank. Such a problem is kept (an imported set is the user's to curate) and counted in
the summary; once `calibrate` has measured it, `filter --input-dir RUN_DIR/calibrate` drops it.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path

import pyarrow as pa

from synthgen.envs.problem import Problem
from synthgen.errors import InfraIncomplete, UserError
from synthgen.evals.data import read_local
from synthgen.stages.importer import formats
from synthgen.stages.importer.settings import ImportSettings
from synthgen.store import records
from synthgen.store.files import file_metadata, write_parquet_atomic, write_text_atomic
from synthgen.store.layout import StageDir
from synthgen.store.measurement import GUESSABLE_AT
from synthgen.store.readiness import WholeStage

SUFFIXES = (".parquet", ".jsonl", ".jsonl.gz", ".json")
# An imported problem was never attempted nor written by a teacher here: its counts are 0.
NOTHING_MEASURED = ("attempts", "scored", "correct", "format_failures", "infra_failures", "teacher_tokens_in")
NOTHING_MEASURED += ("teacher_tokens_out", "student_tokens_in", "student_tokens_out")


def input_files(paths: list[str]) -> list[Path]:
    if not paths:
        raise UserError("give the problem-set files to import (JSON, JSONL or Parquet), or folders of them")
    files: list[Path] = []
    for entry in map(Path, paths):
        if entry.is_dir():
            files += sorted(p for p in entry.rglob("*") if p.is_file() and p.name.endswith(SUFFIXES))
        elif entry.is_file():
            files.append(entry)
        else:
            raise UserError(f"not found: {entry}")
    if not files:
        raise UserError(f"no JSON, JSONL or Parquet files in {', '.join(paths)}")
    return files


def read_problem(row: dict, index: int, settings: ImportSettings) -> formats.RealProblem:
    kind = settings.format if settings.format != "auto" else formats.detect(row)
    if kind is None:
        raise ValueError(f"unknown layout (columns: {', '.join(sorted(row))[:200]}); pass --format")
    read = {"lcb": formats.read_lcb, "apps": formats.read_apps}.get(kind)
    found = read(row, index) if read else formats.read_codecontests(row, index, settings.include_generated)
    if settings.max_tests is not None:
        p = found.problem
        p.inputs, p.outputs = p.inputs[: settings.max_tests], p.outputs[: settings.max_tests]
        p.visible_count = min(p.visible_count or 0, settings.max_tests)
        found.wrapped_outputs = found.wrapped_outputs[: settings.max_tests]
    return found


async def check_solutions(real: formats.RealProblem, env, pool, settings: ImportSettings) -> str | None:
    """None when a reference solution passes every test (it becomes the row's `code`), else why not."""
    tried = real.solutions[: settings.solutions_tried]
    alternative = None
    if any(w is not None for w in real.wrapped_outputs):
        alternative = [w if w is not None else o for w, o in zip(real.wrapped_outputs, real.problem.outputs)]
    last = ""
    for solution in tried:
        for outputs in [real.problem.outputs] + ([alternative] if alternative else []):
            candidate = Problem(**{**real.problem.__dict__, "outputs": outputs})
            reward = await env.check(candidate, solution, pool, settings.sandbox)
            if reward.status == "infra":
                return f"infra: {reward.detail}"
            if reward.value == 1.0:
                real.problem.outputs, real.problem.code = outputs, solution
                return None
            last = reward.detail
    return f"reference solution fails its own tests ({len(tried)} tried; last: {last})"


def _row(real: formats.RealProblem, name: str, digest: str) -> dict:
    fields = real.problem.to_fields()
    return {
        **fields,
        "turn_id": f"import/{name}/{real.key}",
        "seed_id": "",
        "lineage_id": fields["problem_id"],
        "mode": "import",
        "turn": 1,
        "valid": True,
        "reason": "ok",
        **dict.fromkeys(NOTHING_MEASURED, 0),
        "teacher_model": "",
        "student_model": "",
        "settings_hash": digest,
        "difficulty": real.difficulty,
    }


async def _import(settings: ImportSettings, rows: list[dict], name: str, digest: str):
    from synthgen.envs import get_env
    from synthgen.envs.contest import _check_imported
    from synthgen.sandbox import SandboxPool, SandboxUnavailable

    env = get_env("contest")
    kept: list[dict] = []
    rejects: list[dict] = []
    reals: list[formats.RealProblem] = []
    for index, row in enumerate(rows):
        try:
            real = read_problem(row, index, settings)
        except (ValueError, KeyError, TypeError) as exc:
            rejects.append(
                {"key": str(row.get("question_id") or row.get("name") or index), "reason": f"unreadable: {exc}"}
            )
            continue
        verdict = _check_imported(real.problem)
        if not verdict.valid:
            rejects.append({"key": real.key, "reason": f"{verdict.reason}: {verdict.detail}"})
            continue
        reals.append(real)
    checkable = [r for r in reals if r.solutions and settings.check_solutions]
    why: list[str | None] = [None] * len(checkable)
    if checkable:
        try:
            pool = SandboxPool.from_settings(settings.sandbox)
        except SandboxUnavailable as exc:
            raise UserError(f"sandbox unavailable: {str(exc).splitlines()[0]}") from None
        try:
            why = list(await asyncio.gather(*(check_solutions(r, env, pool, settings) for r in checkable)))
        finally:
            pool.close()
    failed = {id(r): w for r, w in zip(checkable, why) if w}
    if any(w.startswith("infra:") for w in failed.values()):
        raise InfraIncomplete("the sandbox failed while checking reference solutions; nothing written, re-run")
    for real in reals:
        if id(real) in failed:
            rejects.append({"key": real.key, "reason": failed[id(real)]})
        else:
            row = _row(real, name, digest)
            # Nothing runs for a contest problem's chance strategies (they print stored text).
            row.update((await env.chance_result(real.problem, [])).to_fields())
            kept.append(row)
    return kept, rejects


class ImportStage(WholeStage):
    """Reads problem-set files; builds a bin-like problems folder (RUN_DIR/real, or --output)."""

    settings: ImportSettings

    def __init__(self, settings: ImportSettings):
        super().__init__(settings, StageDir.at(settings.output_dir(), "bin"))
        self.flag = "--output" if settings.output else "--run-dir"
        self.name = ""  # the set's name in the turn ids
        self.files: list[Path] = []
        self.rows: list[dict] = []
        self.kept: list[dict] = []
        self.rejects: list[dict] = []

    def output_root(self) -> Path:
        return self.output.path

    def prepare(self) -> None:
        s = self.settings
        self.files = input_files(s.paths)
        self.rows = read_local(self.files)[: s.max_problems]
        if not self.rows:
            raise UserError(f"no problems in {', '.join(map(str, self.files))}")
        self.name = s.name or self.files[0].name.split(".")[0]
        self.kept, self.rejects = asyncio.run(_import(s, self.rows, self.name, self.digest))
        if not self.kept:
            first = self.rejects[0]["reason"] if self.rejects else "no rows"
            raise UserError(f"no problem of {len(self.rows)} could be imported (first reason: {first})")

    def build(self, build: StageDir) -> dict:
        kept, rejects = self.kept, self.rejects
        by_level: dict[str, list[dict]] = {}
        for row in kept:
            by_level.setdefault(row["difficulty"], []).append(row)
        schema = records.with_fields(records.PROBLEMS, [pa.field("difficulty", pa.string())])
        meta = file_metadata("import", self.digest, {"source": self.name})
        for level, level_rows in sorted(by_level.items()):
            write_parquet_atomic(build.group_part_path(level), records.table_from_rows(level_rows, schema), meta)
        tests = [len(r["inputs"]) for r in kept]
        self.summary = {
            "files": [str(f) for f in self.files],
            "rows": len(self.rows),
            "kept": len(kept),
            "rejected": len(rejects),
            "reject_reasons": dict(Counter(r["reason"].split(":")[0].split(" (")[0] for r in rejects)),
            "by_difficulty": {k: len(v) for k, v in sorted(by_level.items())},
            "tests_per_problem": {"min": min(tests), "mean": round(sum(tests) / len(tests), 2), "max": max(tests)},
            "call_based": sum(1 for r in kept if r.get("test_code")),
            "checked_by_solution": sum(1 for r in kept if r.get("code")),
            "chance": {
                "guessable": sum(1 for r in kept if (r.get("chance_rate") or 0) >= GUESSABLE_AT),
                "strategies": dict(Counter(s for r in kept for s in r.get("chance_strategies") or [])),
            },
        }
        write_text_atomic(build.path / "import_summary.json", json.dumps(self.summary, indent=1) + "\n")
        write_text_atomic(build.path / "rejects.jsonl", "".join(json.dumps(r) + "\n" for r in rejects))
        return {"rows": len(kept)}


def run(settings: ImportSettings, force: bool = False) -> None:
    del force  # the sets read carry no settings to compare: the output is always rebuilt whole
    stage = ImportStage(settings)
    stage.run(force=True)
    summary, kept, rejects = stage.summary, stage.kept, stage.rejects
    print(
        f"import: {len(kept)} of {len(stage.rows)} problems -> {stage.output.path} "
        f"({summary['tests_per_problem']['mean']} tests each on average, {summary['checked_by_solution']} checked "
        f"by a reference solution); {len(rejects)} rejected" + (f": {summary['reject_reasons']}" if rejects else "")
    )
    if summary["chance"]["guessable"]:
        print(
            f"import: {summary['chance']['guessable']} problems earn the reward without solving at least half the "
            f"time ({summary['chance']['strategies']}): their tests repeat the public ones or expect nothing "
            "(chance_rate; calibrated, `synthgen filter` drops them as guessable)"
        )
