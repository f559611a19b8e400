"""The export card's integrity section, read from the demo run's export: per environment and bin the
chance rates, mutation scores and interval widths of the rows exported, and what each check dropped."""

from __future__ import annotations

import json

import polars as pl
import pytest

from synthgen.store.layout import StageDir

pytest.importorskip("datasets", reason="export needs the hub extra (datasets)")
pytest.importorskip("huggingface_hub", reason="export needs the hub extra (huggingface_hub)")

HEADING = "## Integrity: can the rewards be earned without solving?"


def _section(text: str) -> str:
    start = text.index(HEADING)
    return text[start : text.index("\n## ", start + 1)]


def _table(section: str, first: str) -> list[list[str]]:
    """The cells of the markdown table whose header starts with `first`."""
    lines = section.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first} |"))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def test_the_card_reads_chance_mutation_and_widths_per_env_and_bin_and_what_each_check_dropped(demo_run, cli, tmp_path):
    out = tmp_path / "export"
    rc, _, err = cli("export", demo_run, out)
    assert rc == 0, err
    section = _section((out / "README.md").read_text())
    binned = StageDir(demo_run, "bin").read()
    assert binned["chance_rate"].null_count() == 0  # the demo measured every problem's chance level

    rows = {(r[0], r[1]): r for r in _table(section, "environment")}
    expected = binned.group_by("env", "difficulty").agg(
        pl.len().alias("n"),
        pl.col("chance_rate").mean().alias("chance"),
        (pl.col("chance_rate") >= 0.5).sum().alias("guessable"),
        pl.col("mutation_score").mean().alias("mutation"),
        (pl.col("pass_rate_high") - pl.col("pass_rate_low")).max().alias("widest"),
    )
    assert set(rows) == {(e, d) for e, d in expected.select("env", "difficulty").iter_rows()}
    for env, difficulty, n, chance, guessable, mutation, widest in expected.iter_rows():
        cells = rows[(env, difficulty)]
        assert int(cells[2]) == n and cells[3] == f"{chance:.2f}" and int(cells[5]) == guessable
        assert cells[6] == f"{mutation:.2f}" and cells[9] == f"{widest:.2f}", cells
    # Kept problems sit below the filter's maximum chance rate: none at a coin flip's rate or above.
    assert all(int(r[5]) == 0 for r in rows.values())

    filter_stats = json.loads((demo_run / "filter" / "stats.json").read_text())
    checks = {r[0].strip("`"): r for r in _table(section, "check")}
    assert set(checks) == {"trivial", "weak_tests", "guessable", "contaminated", "near_duplicate"}
    for code, cells in checks.items():
        assert int(cells[3]) == filter_stats["reasons"][code], code
    assert checks["guessable"][2] == "`--max-chance-rate 0.5`" and checks["weak_tests"][2] == "off"
    assert checks["contaminated"][2] == "off" and filter_stats["reasons"]["guessable"] > 0
    assert f"Of the {binned.height} problems here, {binned.height} have a chance rate" in section

    provenance = json.loads((out / "synthgen_export.json").read_text())["integrity"]
    assert provenance["chance"]["measured"] == binned.height
    assert {c["check"]: c["dropped"] for c in provenance["checks"]}["guessable"] == filter_stats["reasons"]["guessable"]
