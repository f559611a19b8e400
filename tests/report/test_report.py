"""`synthgen report RUN_DIR`: one HTML file with everything inside it, that a browser shows with every
plot loaded; a run in progress gets a report too."""

from __future__ import annotations

import base64
import re
import shutil

import pytest

from tests.helpers.browser import check_page

pytest.importorskip("matplotlib", reason="the report needs the plot extra (matplotlib)")

FIGURES = 6  # yield, pass rates, bins, drop reasons, per environment, tokens


@pytest.fixture(scope="module")
def report(demo_run, tmp_path_factory):
    from synthgen.cli.app import app, run_guarded

    path = tmp_path_factory.mktemp("report") / "demo.html"
    assert run_guarded(app, ["report", str(demo_run), "--output", str(path), "--examples", "4", "--chains", "2"]) == 0
    return path


def test_report_is_one_self_contained_file(report, demo_run):
    from synthgen.store.layout import StageDir

    html = report.read_text()
    chains = min(2, StageDir(demo_run / "chain", "links").read()["chain_id"].n_unique())  # --chains 2, as many as made
    sources = re.findall(r'<img src="([^"]+)"', html)
    assert len(sources) == FIGURES
    for src in sources:
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
    assert not re.search(r'(src|href)="(?!data:|#)', html)  # nothing fetched from anywhere
    assert "<script" not in html
    for section in ("stages", "yield", "pass-rates", "bins", "reasons", "envs", "tokens", "examples", "chains"):
        assert f'id="{section}"' in html, section
    assert chains >= 1 and html.count('class="problem"') == 4 + chains * 3  # the examples, and chains of three
    assert "hard &rarr; medium &rarr; easy" in html
    assert "arXiv:2603.24202" in html and "Scripted run" in html


def test_report_in_a_headless_browser_shows_every_image(report, tmp_path):
    _, picture = check_page(report, tmp_path, title="synthgen report", images=FIGURES, colours=200)
    width, height = picture.size
    assert width == 1200 and height > 3000  # the whole page, not the first screen


def test_a_run_in_progress_gets_a_report_that_says_so(demo_run, cli, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(demo_run, run, ignore=shutil.ignore_patterns("filter", "bin", "chain", "cache"))
    for marker in (run / "generate").glob("*.done"):
        marker.unlink()
    rc, _, err = cli("report", run)
    assert rc == 0, err
    html = (run / "report.html").read_text()
    assert "no (1 shard(s) unmarked)" in html
    assert "No binned problems yet." in html and "No chains yet" in html
    assert 1 <= html.count("<img ") < FIGURES


def test_a_run_with_only_seeds_gets_a_page_without_plots(demo_run, cli, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(demo_run / "seeds", run / "seeds")
    rc, _, err = cli("report", run, "--output", tmp_path / "seeds.html")
    assert rc == 0, err
    html = (tmp_path / "seeds.html").read_text()
    assert "<img " not in html and "No generate stage yet." in html


def test_bad_input_is_one_line(cli, tmp_path):
    rc, _, err = cli("report", tmp_path / "missing")
    assert rc == 2 and "not found" in err and len(err.strip().splitlines()) == 1
    (tmp_path / "empty").mkdir()
    rc, _, err = cli("report", tmp_path / "empty")
    assert rc == 2 and "no stage output" in err
    rc, _, err = cli("report", tmp_path / "empty", "--examples", "-1")
    assert rc == 2 and "examples" in err
