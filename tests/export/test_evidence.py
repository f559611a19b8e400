"""The evidence behind each pass rate reaches the user: the card names the student that measured
them and the intervals, `datasets` loads the new columns, `stats` and `report` show them."""

from __future__ import annotations

import json

import pytest

datasets = pytest.importorskip("datasets", reason="export needs the hub extra (datasets)")
pytest.importorskip("huggingface_hub", reason="export needs the hub extra (huggingface_hub)")


def test_card_stats_and_report_name_the_student_behind_every_pass_rate(demo_run, cli, tmp_path):
    out = tmp_path / "dataset"
    rc, _, err = cli("export", demo_run, out)
    assert rc == 0, err
    datasets.disable_progress_bars()
    rows = datasets.load_dataset(str(out), split="train")
    for column in ("pass_rate_low", "pass_rate_high", "measured_by", "student_effort", "sandbox_isolation"):
        assert column in rows.column_names, column
    assert all(lo <= p <= hi for lo, p, hi in zip(rows["pass_rate_low"], rows["pass_rate"], rows["pass_rate_high"]))
    [measured_by] = set(rows["measured_by"])
    [model] = set(rows["student_model"])
    prose = (out / "README.md").read_text()
    line = next(line for line in prose.splitlines() if line.startswith("**Difficulty measured against**"))
    assert model in line and "effort low" in line and "M=8" in line and measured_by in line
    # Every pass rate the export carries: the binned problems and the chain steps no bin holds.
    chained = datasets.load_dataset(str(out), name="chains", split="train")
    assert f"({len(set(rows['problem_id']) | set(chained['problem_id']))} rows" in line
    provenance = json.loads((out / "synthgen_export.json").read_text())
    assert provenance["measurement"]["measurements"][0]["measured_by"] == measured_by

    rc, text_json, err = cli("stats", demo_run, "--json")
    assert rc == 0, err
    generated = json.loads(text_json)["measurement"]["generated"]
    assert [m["measured_by"] for m in generated["measurements"]] == [measured_by]
    assert 0 < generated["interval_width_mean"] <= generated["interval_width_max"] < 1
    rc, text, _ = cli("stats", demo_run)
    assert f"pass rates measured against {model}" in text

    # The mutation scores: their distribution on the card, per environment and turn in the report.
    mutation = json.loads(text_json)["measurement"]["mutation"]
    assert mutation["rows"] > 0 and 0 <= mutation["quantiles"]["p10"] <= mutation["quantiles"]["p90"] <= 1
    section = prose.split("## How well the tests pin the problems down")[1].split("\n## ")[0]
    assert f"over the\n{rows.num_rows} problems here" in section.replace("Over the", "over the")
    counts = next(line for line in section.splitlines() if line.startswith("| problems |"))
    assert sum(int(c) for c in counts.strip("|").split("|")[1:]) == rows.num_rows
    assert all(score is not None for score in rows["mutation_score"])

    html = tmp_path / "r.html"
    rc, _, err = cli("report", demo_run, "--output", html, "--examples", "3", "--chains", "0")
    assert rc == 0, err
    page = html.read_text()
    assert "Difficulty measured against" in page and page.count("95% interval [") == 3
    assert "mean mutation score" in page
    for row in mutation["by_env_turn"]:
        assert f'<td>{row["env"]}</td><td class="n">{row["turn"]}</td>' in page


def test_lineage_columns_load_and_the_card_summarises_them(demo_run, cli, tmp_path):
    import polars as pl

    from synthgen.store.layout import StageDir

    out = tmp_path / "dataset"
    rc, _, err = cli("export", demo_run, out)
    assert rc == 0, err
    datasets.disable_progress_bars()
    rows = datasets.load_dataset(str(out), split="train")
    for column in ("seed_id", "lineage_id", "parent_id", "turn", "strategy"):
        assert column in rows.column_names, column
    chains = datasets.load_dataset(str(out), name="chains", split="train")
    assert {"chain_id", "level", "position"} <= set(chains.column_names)
    prose = (out / "README.md").read_text()
    section = prose.split("## Lineage")[1].split("\n## ")[0]
    turns = pl.Series("turn", rows["turn"]).value_counts().sort("turn")
    header = next(line for line in section.splitlines() if line.startswith("| teacher turn |"))
    counts = next(line for line in section.splitlines() if line.startswith("| problems |"))
    assert [int(c) for c in header.strip("|").split("|")[1:]] == turns["turn"].to_list()
    assert [int(c) for c in counts.strip("|").split("|")[1:]] == turns["count"].to_list()
    # Yield by strategy: valid generated problems of each strategy, and how many made it here.
    generated = StageDir(demo_run, "generate").read(["turn_id", "strategy", "valid"]).filter(pl.col("valid"))
    exported = set(rows["turn_id"])
    for strategy, part in generated.group_by("strategy"):
        kept = sum(t in exported for t in part["turn_id"].to_list())
        assert f"| `{strategy[0]}` | {part.height} | {kept} |" in section
