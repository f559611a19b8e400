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
    assert f"({rows.num_rows} rows" in line
    provenance = json.loads((out / "synthgen_export.json").read_text())
    assert provenance["measurement"]["measurements"][0]["measured_by"] == measured_by

    rc, text, err = cli("stats", demo_run, "--json")
    assert rc == 0, err
    generated = json.loads(text)["measurement"]["generated"]
    assert [m["measured_by"] for m in generated["measurements"]] == [measured_by]
    assert 0 < generated["interval_width_mean"] <= generated["interval_width_max"] < 1
    rc, text, _ = cli("stats", demo_run)
    assert f"pass rates measured against {model}" in text

    html = tmp_path / "r.html"
    rc, _, err = cli("report", demo_run, "--output", html, "--examples", "3", "--chains", "0")
    assert rc == 0, err
    page = html.read_text()
    assert "Difficulty measured against" in page and page.count("95% interval [") == 3
