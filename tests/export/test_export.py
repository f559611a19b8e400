"""`synthgen export RUN_DIR OUT`: a dataset folder that `datasets` loads per config, with a card the
Hub reads; finished stages only; `--push-to-hub` up to the upload call (the network is the only
thing replaced)."""

from __future__ import annotations

import json
import shutil

import polars as pl
import pytest
import yaml

from synthgen.store.layout import StageDir
from synthgen.store.run_info import stage_info

datasets = pytest.importorskip("datasets", reason="export needs the hub extra (datasets)")
pytest.importorskip("huggingface_hub", reason="export needs the hub extra (huggingface_hub)")


def _card(out):
    text = (out / "README.md").read_text()
    assert text.startswith("---\n")
    header, _, prose = text[4:].partition("\n---\n")
    return yaml.safe_load(header), prose


def _load(out, name=None):
    datasets.disable_progress_bars()
    return datasets.load_dataset(str(out), name=name, split="train")


@pytest.fixture(scope="module")
def exported(demo_run, tmp_path_factory):
    from synthgen.cli.app import app, run_guarded

    out = tmp_path_factory.mktemp("export") / "dataset"
    assert run_guarded(app, ["export", str(demo_run), str(out)]) == 0
    return out


def test_every_config_loads_with_datasets_and_holds_its_env_and_bin(demo_run, exported):
    binned = StageDir(demo_run, "bin").read()
    expected = {f"{env}-{difficulty}": n for env, difficulty, n in binned.group_by("env", "difficulty").len().rows()}
    names = set(datasets.get_dataset_config_names(str(exported)))
    assert names == {*expected, "all", "chains", "kept"}
    for name, rows in expected.items():
        ds = _load(exported, name)
        env, difficulty = name.split("-", 1)
        assert ds.num_rows == rows and set(ds["env"]) == {env} and set(ds["difficulty"]) == {difficulty}, name
    everything = _load(exported)  # the default config
    assert sorted(everything["problem_id"]) == sorted(binned["problem_id"].to_list())
    assert everything.features["inputs"].feature.dtype == "string"


def test_kept_config_is_every_problem_the_filter_kept(demo_run, exported):
    kept = StageDir(demo_run, "filter").read()
    ds = _load(exported, "kept")
    assert sorted(ds["problem_id"]) == sorted(kept["problem_id"].to_list()) and ds.num_rows > 0
    _, prose = _card(exported)
    assert "| `kept` | all | every kept problem | [0.01, 0.97] |" in prose


def test_chains_config_holds_each_chain_hard_to_easy(demo_run, exported):
    links = StageDir(demo_run, "chain/links").read()
    chains = _load(exported, "chains").to_polars()
    assert chains.height == links.height > 0
    for _, chain in chains.group_by("chain_id"):
        assert chain.sort("position")["level"].to_list() == ["hard", "medium", "easy"]
    joined = chains.join(links.select("problem_id", "chain_id", "level"), on=["problem_id", "chain_id", "level"])
    assert joined.height == links.height  # every row sits in the chain and at the level its link says


def test_card_header_and_prose_say_how_the_data_was_made(demo_run, exported):
    header, prose = _card(exported)
    assert header["license"] == "other" and header["size_categories"] == ["n<1K"]
    assert {c["config_name"] for c in header["configs"]} == set(datasets.get_dataset_config_names(str(exported)))
    assert [c["config_name"] for c in header["configs"] if c.get("default")] == ["all"]
    features = {info["config_name"]: [f["name"] for f in info["features"]] for info in header["dataset_info"]}
    one = pl.read_parquet(next((exported / "data").rglob("*.parquet")))
    assert features["all"] == one.columns
    for name in ("generate", "filter", "bin", "chain/problems"):
        assert stage_info(demo_run, name).settings_hashes[0] in prose, name
    assert "arXiv:2603.24202" in prose and "## Known limits" in prose
    assert "`scripted`" in prose and "Not a model's output" in prose  # the demo's rows are the stand-in's
    filter_stats = json.loads((demo_run / "filter" / "stats.json").read_text())
    for reason, n in filter_stats["reasons"].items():
        if n:
            assert f"| `{reason}` | {n} |" in prose, reason
    binned = StageDir(demo_run, "bin").read()
    for env in set(binned["env"]):
        per_bin = binned.filter(pl.col("env") == env)
        assert f"| {env} |" in prose and f" {per_bin.height} |" in prose
    for column in one.columns:  # every field is explained
        line = next(line for line in prose.splitlines() if line.startswith(f"| `{column}` |"))
        assert len(line) > len(f"| `{column}` |  |"), column


def test_provenance_file_and_a_second_export_replaces_the_first(demo_run, exported, cli, tmp_path):
    out = tmp_path / "again"
    assert cli("export", demo_run, out)[0] == 0
    (out / "data" / "stale.txt").write_text("left from an earlier export")
    rc, _, err = cli("export", demo_run, out, "--license", "apache-2.0")
    assert rc == 0, err
    assert not (out / "data" / "stale.txt").exists()
    assert _card(out)[0]["license"] == "apache-2.0"
    facts = json.loads((out / "synthgen_export.json").read_text())
    assert facts["configs"]["chains"]["rows"] == _load(out, "chains").num_rows
    assert facts["stages"]["bin"]["settings_hash"] == stage_info(demo_run, "bin").settings_hashes


def test_only_finished_stages_are_exported(demo_run, cli, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(demo_run, run)
    (run / "bin" / "bin.done").unlink()
    rc, _, err = cli("export", run, tmp_path / "out")
    assert rc == 2 and "not finished" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()
    shutil.copytree(demo_run / "bin", run / "bin", dirs_exist_ok=True)
    for marker in (run / "chain" / "problems").glob("*.done"):
        marker.unlink()
    rc, _, err = cli("export", run, tmp_path / "out")
    assert rc == 2 and "chain/problems" in err


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--push-to-hub", "no-owner"], "OWNER/NAME"),
        (["--license", "Not A License"], "license"),
    ],
)
def test_bad_flags_are_one_line(demo_run, cli, tmp_path, args, words):
    rc, _, err = cli("export", demo_run, tmp_path / "out", *args)
    assert rc == 2 and words in err and len(err.strip().splitlines()) == 1


def test_refuses_a_foreign_folder_and_the_run_itself(demo_run, cli, tmp_path):
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    rc, _, err = cli("export", demo_run, foreign)
    assert rc == 2 and "not empty" in err and (foreign / "notes.txt").exists()
    rc, _, err = cli("export", demo_run, demo_run.parent)
    assert rc == 2 and "holds the run directory" in err


def test_push_to_hub_uploads_the_folder_it_wrote(demo_run, cli, tmp_path, monkeypatch):
    """Everything runs as for a user up to huggingface_hub's two network calls, which record instead."""
    from huggingface_hub import HfApi

    calls = {}

    def create_repo(self, repo_id, **kwargs):
        calls["create_repo"] = {"repo_id": repo_id, **kwargs}
        return f"https://huggingface.co/datasets/{repo_id}"

    def upload_folder(self, **kwargs):
        folder = kwargs["folder_path"]
        calls["upload_folder"] = kwargs
        # What would go up: a folder that loads as it is, card included.
        calls["loaded"] = {name: _load(folder, name).num_rows for name in ("all", "chains")}
        calls["card"] = (tmp_path / "out" / "README.md").read_text()

    monkeypatch.setenv("HF_TOKEN", "hf_not_a_real_token")
    monkeypatch.setattr(HfApi, "create_repo", create_repo)
    monkeypatch.setattr(HfApi, "upload_folder", upload_folder)
    rc, _, err = cli("export", demo_run, tmp_path / "out", "--push-to-hub", "someone/demo", "--private")
    assert rc == 0, err
    assert calls["create_repo"] == {
        "repo_id": "someone/demo",
        "repo_type": "dataset",
        "private": True,
        "exist_ok": True,
    }
    upload = calls["upload_folder"]
    assert upload["repo_id"] == "someone/demo" and upload["repo_type"] == "dataset"
    assert upload["folder_path"] == str(tmp_path / "out") and "data/**" in upload["delete_patterns"]
    assert calls["loaded"]["all"] == StageDir(demo_run, "bin").count_rows() and calls["loaded"]["chains"] > 0
    assert 'load_dataset("someone/demo"' in calls["card"]
    assert "pushed to https://huggingface.co/datasets/someone/demo" in err


def test_push_without_a_login_stops_before_any_work(demo_run, cli, tmp_path, monkeypatch):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setattr("huggingface_hub.get_token", lambda: None)  # no token file on this machine either
    rc, _, err = cli("export", demo_run, tmp_path / "out", "--push-to-hub", "someone/demo")
    assert rc == 2 and "hf auth login" in err and not (tmp_path / "out").exists()


def test_push_offline_is_one_line_and_keeps_the_folder(demo_run, cli, tmp_path, monkeypatch):
    import huggingface_hub.constants

    if not huggingface_hub.constants.HF_HUB_OFFLINE:
        pytest.skip("HF_HUB_OFFLINE was not set when huggingface_hub was imported")
    monkeypatch.setenv("HF_TOKEN", "hf_not_a_real_token")
    rc, _, err = cli("export", demo_run, tmp_path / "out", "--push-to-hub", "someone/demo")
    last = err.strip().splitlines()[-1]
    assert rc == 2 and last.startswith("synthgen: error:") and "HF_HUB_OFFLINE" in last
    assert _load(tmp_path / "out").num_rows > 0


def test_the_card_names_every_measurement_when_chain_measured_its_steps_anew(demo_run, tmp_path, cli, scripted_server):
    """Chain steps measured with another M on purpose (`chain --remeasure`): the card's "difficulty
    measured against" names both measurements with their row counts, and says the steps were re-measured."""
    run_dir = tmp_path / "run"
    shutil.copytree(demo_run, run_dir, ignore=shutil.ignore_patterns("chain", "cache"))
    url = scripted_server(seed=3).url
    rc, _, err = cli("chain", "--run-dir", run_dir, "--base-url", url, "--attempts", "16", "--remeasure")
    assert rc == 0, err
    levels = StageDir(run_dir / "chain", "problems").read().filter(pl.col("mode") == "chain")
    steps = levels.filter(pl.col("attempts") == 16)
    assert steps.height > 0, "no chain step was accepted: the test needs at least one"
    out = tmp_path / "dataset"
    rc, _, err = cli("export", run_dir, out)
    assert rc == 0, err
    _, prose = _card(out)
    measured = prose.split("**Difficulty measured against**", 1)[1].split("\n\n", 1)[0]
    assert "M=8" in measured and "M=16" in measured, measured
    assert "measured anew on purpose (`synthgen chain --remeasure`)" in prose
    provenance = json.loads((out / "synthgen_export.json").read_text())
    assert {m["attempts"] for m in provenance["measurement"]["measurements"]} == {8, 16}
