"""`synthgen export --format verl|verifiers|trl|sft`: every format loads with `datasets` (and verl's own
dataset class, and verifiers, where their venvs are installed), carries the student prompt exactly as
synthgen renders it, a ground truth that scores a right answer 1.0 and a wrong one 0.0, and the
measurement; splits are disjoint, deterministic and keep lineages and chains whole; `--format sft`
holds only verified solved attempts; bad input is one line, exit 2, and nothing written."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import types
from pathlib import Path

import polars as pl
import pytest

from synthgen.interop.records import MEASUREMENT_FIELDS, ground_truth, measurement, problem_of, student_prompt
from synthgen.store.layout import StageDir

datasets = pytest.importorskip("datasets", reason="export needs the hub extra (datasets)")
pytest.importorskip("huggingface_hub", reason="export needs the hub extra (huggingface_hub)")

PROBLEM_FORMATS = ("verl", "trl", "verifiers")


# -- helpers ---------------------------------------------------------------------------------------
def _export(cli, run, out, fmt, *args):
    rc, _, err = cli("export", run, out, "--format", fmt, *args)
    assert rc == 0, err
    return out


def _files(out: Path, fmt: str) -> dict[str, Path]:
    """{split: file} of an export, as its provenance lists them."""
    facts = json.loads((out / "synthgen_export.json").read_text())
    assert facts["format"] == fmt
    return {split: out / name for split, name in facts["export"]["files"].items()}


def _load(path: Path):
    datasets.disable_progress_bars()
    return datasets.load_dataset("parquet", data_files={"x": str(path)}, split="x")


def _problem_rows(out: Path, fmt: str) -> dict[str, list[dict]]:
    """Each split's rows as (problem_id, prompt, truth, measurement, row), whatever the format's columns."""
    out_rows: dict[str, list[dict]] = {}
    for split, path in _files(out, fmt).items():
        rows = []
        for row in _load(path):
            if fmt == "verl":
                meta = {k: v for k, v in row["extra_info"].items() if k not in ("split", "index")}
                truth = row["reward_model"]["ground_truth"]
            elif fmt == "trl":
                meta = {k: row[k] for k in MEASUREMENT_FIELDS}
                truth = row["ground_truth"]
            else:
                meta, truth = row["info"], row["answer"]
            rows.append(
                {"problem_id": meta["problem_id"], "prompt": row["prompt"], "truth": truth, "meta": meta, **row}
            )
        out_rows[split] = rows
    return out_rows


def _source_rows(run: Path) -> dict[str, dict]:
    """What the export should hold: the binned problems, then the chains' other problems, by problem id,
    each with its chain columns (null outside chains) and, for a chain step no bin holds, its level as bin."""
    binned = StageDir(run, "bin").read().to_dicts()
    links = {r["problem_id"]: r for r in StageDir(run, "chain/links").read().to_dicts()}
    chained = {r["problem_id"]: r for r in StageDir(run, "chain/problems").read().to_dicts()}
    rows = {r["problem_id"]: r for r in binned}
    for pid, row in chained.items():
        rows.setdefault(pid, {**row, "difficulty": links[pid]["level"]})
    for pid, row in rows.items():
        link = links.get(pid) or {}
        row.update({k: link.get(k) for k in ("chain_id", "level", "position")})
    return rows


def _same(a, b) -> bool:
    return a == b or (isinstance(a, float) and isinstance(b, float) and abs(a - b) < 1e-12)


def _one_line_exit_2(rc: int, err: str) -> bool:
    return rc == 2 and len(err.strip().splitlines()) == 1 and err.startswith("synthgen: error:")


# -- the three problem formats ---------------------------------------------------------------------
@pytest.mark.parametrize("fmt", PROBLEM_FORMATS)
def test_rows_carry_the_student_prompt_the_ground_truth_and_the_measurement(demo_run, cli, tmp_path, fmt):
    out = _export(cli, demo_run, tmp_path / fmt, fmt, "--test-fraction", "0.3")
    splits = _problem_rows(out, fmt)
    assert set(splits) == {"train", "test"} and all(splits.values())
    source = _source_rows(demo_run)
    exported = [r for rows in splits.values() for r in rows]
    assert sorted(r["problem_id"] for r in exported) == sorted(source)  # every problem once, bins and chains
    assert any(r["meta"]["chain_id"] for r in exported)  # the demo has chains
    for split, rows in splits.items():
        assert [r["problem_id"] for r in rows] == sorted(r["problem_id"] for r in rows)  # sorted, deterministic
        for index, r in enumerate(rows):
            row = source[r["problem_id"]]
            assert r["prompt"] == student_prompt(row)
            problem = problem_of(r["truth"])
            assert (problem.env, problem.code, list(problem.inputs), list(problem.outputs)) == (
                row["env"],
                row["code"],
                row["inputs"],
                row["outputs"],
            )
            expected = measurement(row)
            assert set(r["meta"]) == set(MEASUREMENT_FIELDS)
            assert all(_same(r["meta"][k], expected[k]) for k in MEASUREMENT_FIELDS), r["problem_id"]
            if fmt == "verl":
                assert r["data_source"] == f"synthgen/{row['env']}" and r["ability"] == "code"
                assert r["reward_model"]["style"] == "rule"
                assert (r["extra_info"]["split"], r["extra_info"]["index"]) == (split, index)
            if fmt == "verifiers":
                assert "task" not in r and r["info"]["env"] == row["env"]
    if fmt != "verifiers":  # the card's header makes the folder itself a dataset with both splits
        datasets.disable_progress_bars()
        whole = datasets.load_dataset(str(out))
        assert {s: whole[s].num_rows for s in whole} == {s: len(rows) for s, rows in splits.items()}


@pytest.mark.parametrize("fmt", PROBLEM_FORMATS)
def test_the_ground_truth_scores_a_right_answer_1_and_a_wrong_one_0_in_every_environment(pool, cli, tmp_path, fmt):
    """The example problems of every environment (contest included) in a bin stage; the exported
    ground truth, read back from the file, scores each example's answer and a wrong one."""
    from synthgen.interop import scorer
    from tests.helpers.interop import ENVS, RIGHT, WRONG, example_rows, write_bin_run

    run = write_bin_run(tmp_path / "run", example_rows(pool))
    out = _export(cli, run, tmp_path / fmt, fmt)
    rows = _problem_rows(out, fmt)["train"]
    truths = {problem_of(r["truth"]).env: r["truth"] for r in rows}
    assert set(truths) == set(ENVS)
    envs = sorted(truths)
    rewards = scorer.score([truths[e] for e in envs for _ in (0, 1)], [a for e in envs for a in (RIGHT[e], WRONG[e])])
    assert [r.value for r in rewards] == [1.0, 0.0] * len(envs), [(e, r) for e, r in zip(envs * 2, rewards)]


# -- splits ----------------------------------------------------------------------------------------
def _test_ids(out: Path) -> set[str]:
    return {r["extra_info"]["problem_id"] for r in _load(out / "test.parquet")}


def test_test_fraction_is_deterministic_disjoint_and_keeps_lineages_and_chains_whole(demo_run, cli, tmp_path):
    first = _export(cli, demo_run, tmp_path / "a", "verl", "--test-fraction", "0.3")
    again = _export(cli, demo_run, tmp_path / "b", "verl", "--test-fraction", "0.3")
    for name in ("train.parquet", "test.parquet"):  # the same run and seed give the same files
        assert (first / name).read_bytes() == (again / name).read_bytes(), name
    source = _source_rows(demo_run)
    test = _test_ids(first)
    train = {r["extra_info"]["problem_id"] for r in _load(first / "train.parquet")}
    assert test and train and not test & train and test | train == set(source)
    for key in ("lineage_id", "chain_id"):  # no lineage and no chain on both sides
        sides = {source[p][key] for p in test} & {source[p][key] for p in train}
        assert sides <= {None}, key
    assert 0.15 <= len(test) / len(source) <= 0.45
    others = [
        _test_ids(_export(cli, demo_run, tmp_path / f"s{seed}", "verl", "--test-fraction", "0.3", "--seed", seed))
        for seed in (1, 2, 3)
    ]
    assert any(o != test for o in others)  # another seed draws another split


def test_test_bins_put_those_bins_in_test_and_a_chain_follows_its_hard_start(demo_run, cli, tmp_path):
    out = _export(cli, demo_run, tmp_path / "out", "trl", "--test-bins", "medium,easy")
    source = _source_rows(demo_run)
    start_bin = {r["chain_id"]: r["difficulty"] for r in source.values() if r["position"] == 0}
    test = _load(out / "test.parquet").to_polars()
    train = _load(out / "train.parquet").to_polars()
    for rows, side in ((test, True), (train, False)):
        for pid, chain, difficulty in rows.select("problem_id", "chain_id", "difficulty").iter_rows():
            decides = start_bin[chain] if chain else difficulty
            assert (decides in {"medium", "easy"}) is side, (pid, chain, difficulty)
    assert set(test["problem_id"]) | set(train["problem_id"]) == set(source)


# -- sft -------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def attempts_run(tmp_path_factory):
    """A small demo-style run whose generate stage kept every attempt (`--keep-attempts all`): solved
    and failed ones, so that the export's choice of the solved ones is tested too."""
    from rich.console import Console

    from synthgen.demo.run import curate, generate_settings
    from synthgen.demo.scripted.launch import start_scripted_server
    from synthgen.demo.settings import DemoSettings
    from synthgen.stages.generate import run as generate
    from synthgen.stages.seeds import run as seeds
    from synthgen.stages.seeds.settings import SeedsSettings

    run_dir = tmp_path_factory.mktemp("attempts-run") / "run"
    settings = DemoSettings(run_dir=run_dir, seeds=16, turns=4, attempts=8, progress=False)
    console = Console(stderr=True, quiet=True)
    with start_scripted_server(seed=0, mode="process") as server:
        seeds.run(SeedsSettings(run_dir=run_dir, n=settings.seeds, seed=0), console=console)
        kept = generate_settings(settings, server.url)
        kept.keep_attempts = "all"
        generate.run(kept, console=console)
        curate(settings, server.url, console)
    return run_dir


def test_sft_rows_are_verified_solved_attempts_of_their_problem(attempts_run, cli, tmp_path):
    from synthgen.interop import scorer
    from synthgen.store.attempts import read_attempts

    out = _export(
        cli, attempts_run, tmp_path / "sft", "sft", "--max-attempts-per-problem", "2", "--test-fraction", "0.3"
    )
    files = _files(out, "sft")
    assert set(files) == {"train", "test"}
    source = {r["problem_id"]: r for r in StageDir(attempts_run, "bin").read().to_dicts()}
    kept = pl.from_arrow(read_attempts(attempts_run))
    assert (kept["reward"] == 0.0).any()  # failed attempts are there to be left out
    by_key = {(r["turn_id"], r["attempt"]): r for r in kept.to_dicts()}
    solved = kept.filter(pl.col("reward") == 1.0).sort("attempt")
    rows, sides = [], {}
    for split, path in files.items():
        part = _load(path).to_list()
        assert part and [r["problem_id"] for r in part] == sorted(r["problem_id"] for r in part)
        sides[split] = {r["problem_id"] for r in part}
        rows += part
    assert not sides["train"] & sides["test"]
    per_problem: dict[str, list[int]] = {}
    for r in rows:
        problem = source[r["problem_id"]]
        *prompt, answer = r["messages"]
        assert prompt == [{**m, "reasoning": None} for m in student_prompt(problem)]
        attempt = by_key[(problem["turn_id"], r["attempt"])]  # an attempt of the measurement exported
        assert answer == {"role": "assistant", "content": attempt["content"], "reasoning": attempt["reasoning"]}
        assert attempt["reward"] == 1.0 and r["reward"] == 1.0 and attempt["problem_id"] == r["problem_id"]
        assert all(_same(r[k], v) for k, v in measurement(problem).items() if k != "problem_id")
        per_problem.setdefault(r["problem_id"], []).append(r["attempt"])
    for pid, indices in per_problem.items():  # at most 2 each: the lowest solved indices
        mine = solved.filter(pl.col("turn_id") == source[pid]["turn_id"])["attempt"].to_list()
        assert indices == mine[:2], pid
    assert set(per_problem) == set(solved["problem_id"]) & set(source)
    assert any(r["messages"][-1]["reasoning"] for r in rows)  # the scripted server returns reasoning
    rewards = scorer.score(
        [ground_truth(source[r["problem_id"]]) for r in rows], [r["messages"][-1]["content"] for r in rows]
    )
    assert {x.value for x in rewards} == {1.0}  # every assistant message is verified solved


# -- the verifiers package and verl's own dataset class -----------------------------------------------
def _install(out: Path, target: Path) -> None:
    """`pip install OUT` as the card says for a machine offline: no index, no build isolation."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--target",
            str(target),
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_verifiers_package_installs_offline_and_hands_its_data_to_synthgen(demo_run, cli, tmp_path, monkeypatch):
    out = _export(cli, demo_run, tmp_path / "pkg", "verifiers", "--test-bins", "hard")
    facts = json.loads((out / "synthgen_export.json").read_text())["export"]
    env_id = facts["env_id"]
    assert env_id == "synthgen-env-" + re.sub(r"[^a-z0-9]+", "-", demo_run.name.lower()).strip("-")
    target = tmp_path / "site"
    _install(out, target)
    module_name = env_id.replace("-", "_")  # how verifiers.load_environment finds the module
    metadata = next(target.glob(f"{module_name}-*.dist-info")) / "METADATA"
    text = metadata.read_text()
    assert f"Name: {env_id}" in text and "Requires-Dist: synthgen" in text and "Requires-Dist: verifiers" in text
    calls = []
    stub = types.ModuleType("synthgen.interop.verifiers")
    stub.load_environment = lambda **kwargs: calls.append(kwargs) or "environment"
    monkeypatch.setitem(sys.modules, "synthgen.interop.verifiers", stub)
    monkeypatch.syspath_prepend(str(target))
    module = importlib.import_module(module_name)
    monkeypatch.setitem(sys.modules, module_name, module)  # gone again after the test
    assert Path(module.__file__).is_relative_to(target)  # the installed copy, not OUT
    assert module.load_environment(split="test", max_turns=1) == "environment"
    [call] = calls
    data_dir = Path(call.pop("data_dir"))
    assert call == {"split": "test", "max_turns": 1} and data_dir.is_relative_to(target)
    for split, name in facts["files"].items():  # the package data is the export's
        installed = _load(data_dir / f"{split}.parquet")
        assert installed.to_list() == _load(out / name).to_list() and installed.num_rows > 0


def _venv_or_skip(name: str, probe: str, tmp_path: Path) -> None:
    """Skip, with the reason, where the library's venv is missing or cannot import what the test needs."""
    from tests.helpers.interop import missing_venv, run_in_venv

    reason = missing_venv(name)
    if reason:
        pytest.skip(reason)
    script = tmp_path / f"probe-{name}.py"
    script.write_text(probe + "\n")
    proc = run_in_venv(name, script, timeout=300)
    if proc.returncode:
        last = (proc.stderr.strip().splitlines() or ["?"])[-1]
        pytest.skip(f"the {name} venv cannot import what this test needs: {last}")


VERL_SCRIPT = """
import json, sys
from omegaconf import OmegaConf
from verl.utils.dataset.rl_dataset import RLHFDataset
from synthgen.train.tiny import build_tokenizer

config = OmegaConf.create({"prompt_key": "prompt", "max_prompt_length": 8192, "filter_overlong_prompts": True})
dataset = RLHFDataset(data_files=sys.argv[1:], tokenizer=build_tokenizer(), config=config)
for i in range(len(dataset)):
    item = dataset[i]
    print(json.dumps({"data_source": item["data_source"], "index": int(item["index"]),
                      "ground_truth": item["reward_model"]["ground_truth"], "extra_info": item["extra_info"]},
                     default=str))
"""


def test_verls_own_dataset_class_loads_the_verl_export(demo_run, cli, tmp_path):
    from tests.helpers.interop import read_json_lines, run_in_venv

    _venv_or_skip("verl", "import verl.utils.dataset.rl_dataset, omegaconf", tmp_path)
    out = _export(cli, demo_run, tmp_path / "verl", "verl", "--test-fraction", "0.3")
    script = tmp_path / "load.py"
    script.write_text(VERL_SCRIPT)
    proc = run_in_venv("verl", script, out / "train.parquet", timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    items = read_json_lines(proc.stdout)
    expected = _load(out / "train.parquet").to_list()
    assert len(items) == len(expected) > 0
    for item, row in zip(items, expected):
        assert item["data_source"] == row["data_source"] and item["index"] == row["extra_info"]["index"]
        assert item["ground_truth"] == row["reward_model"]["ground_truth"]
        assert item["extra_info"]["problem_id"] == row["extra_info"]["problem_id"]


# -- the card and the provenance ---------------------------------------------------------------------
def _verl_file() -> str:
    return str(Path(importlib.util.find_spec("synthgen.interop").submodule_search_locations[0], "verl.py").resolve())


@pytest.mark.parametrize(
    ("fmt", "says"),
    [
        (
            "verl",
            [
                "python3 -m verl.trainer.main_ppo",
                "data.train_files={out}/train.parquet",
                "data.val_files={out}/test.parquet",
                "reward.custom_reward_function.path=pkg://synthgen.interop.verl",
                "reward.custom_reward_function.name=compute_score",
                "data.sampler.class_path=pkg://synthgen.interop.verl",
                "data.sampler.class_name=CurriculumSampler",
                "custom_reward_function.path={verl} custom_reward_function.name=compute_score",
                "`compute_score_batch` with `reward_model.reward_manager=batch`",
                "python -c 'import synthgen.interop.verl as m; print(m.__file__)'",
            ],
        ),
        ("trl", ["from synthgen.interop.trl import reward", "reward_funcs=[reward]", '"test": "{out}/test.parquet"']),
        ("verifiers", ["pip install {out}", "vf-eval {env_id} -m", 'id = "{env_id}"', "[[orchestrator.train.env]]"]),
    ],
)
def test_the_card_says_which_trainer_and_how_to_point_it_at_the_files(demo_run, cli, tmp_path, fmt, says):
    out = _export(cli, demo_run, tmp_path / fmt, fmt, "--test-fraction", "0.3")
    card = (out / "README.md").read_text()
    facts = json.loads((out / "synthgen_export.json").read_text())
    values = {"out": str(out.resolve()), "verl": _verl_file(), "env_id": facts["export"]["env_id"]}
    for line in says:
        assert line.format(**values) in card, line
    for block in re.findall(r"```python\n(.*?)```", card, re.S):  # the code the card shows is Python
        ast.parse(block)
    fields = card.split("## Fields")[1].split("\n## ")[0]
    columns = pq_columns(next(iter(_files(out, fmt).values())))
    for column in columns:  # every column is explained
        assert re.search(rf"^\| `{re.escape(column)}` \| \S", fields, re.M), column
    assert facts["export"]["test_fraction"] == 0.3 and facts["export"]["split_seed"] == 0
    assert {s: v["rows"] for s, v in facts["export"]["splits"].items()} == {
        s: _load(p).num_rows for s, p in _files(out, fmt).items()
    }


def pq_columns(path: Path) -> list[str]:
    import pyarrow.parquet as pq

    return pq.read_schema(path).names


def test_sft_card_says_how_to_fine_tune(attempts_run, cli, tmp_path):
    out = _export(cli, attempts_run, tmp_path / "sft", "sft")
    card = (out / "README.md").read_text()
    assert "SFTTrainer" in card and f'"train": "{out.resolve()}/train.parquet"' in card and "test.parquet" not in card
    for block in re.findall(r"```python\n(.*?)```", card, re.S):
        ast.parse(block)
    assert json.loads((out / "synthgen_export.json").read_text())["export"]["sft"]["per_problem"] == 4


# -- bad input -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--format", "parquet"], "--format"),
        (["--format", "sft"], "--keep-attempts solved"),
        (["--format", "verl", "--test-fraction", "0.2", "--test-bins", "hard"], "give one of them"),
        (["--test-fraction", "0.2"], "--format hf"),
        (["--format", "trl", "--test-fraction", "1.5"], "test-fraction"),
        (["--format", "verl", "--test-bins", "nope"], "'nope'"),
        (["--format", "verifiers", "--push-to-hub", "someone/env"], "pip"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_writes_nothing(demo_run, cli, tmp_path, args, words):
    rc, _, err = cli("export", demo_run, tmp_path / "out", *args)
    assert _one_line_exit_2(rc, err) and words in err, err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("fmt", ["verl", "verifiers", "trl"])
def test_an_unfinished_stage_is_exit_2_for_every_format(demo_run, cli, tmp_path, fmt):
    run = tmp_path / "run"
    shutil.copytree(demo_run, run)
    for marker in (run / "chain" / "links").glob("*.done"):
        marker.unlink()
    rc, _, err = cli("export", run, tmp_path / "out", "--format", fmt)
    assert _one_line_exit_2(rc, err) and "chain/links" in err, err
    assert not (tmp_path / "out").exists()


def test_sft_of_unfinished_attempts_is_exit_2_and_keeps_the_earlier_export(attempts_run, cli, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(attempts_run, run)
    out = _export(cli, run, tmp_path / "out", "sft")
    before = (out / "train.parquet").read_bytes()
    for marker in (run / "generate-attempts").glob("*.done"):
        marker.unlink()
    rc, _, err = cli("export", run, out, "--format", "sft")
    assert _one_line_exit_2(rc, err) and "generate-attempts" in err, err
    assert (out / "train.parquet").read_bytes() == before


def test_push_to_hub_uploads_a_trainer_format_that_loads_with_both_splits(demo_run, cli, tmp_path, monkeypatch):
    """Everything runs as for a user up to huggingface_hub's two network calls, which record instead."""
    from huggingface_hub import HfApi

    uploads = []

    def upload_folder(self, **kwargs):
        datasets.disable_progress_bars()
        loaded = datasets.load_dataset(kwargs["folder_path"])  # what the Hub would serve
        uploads.append({**kwargs, "loaded": {s: loaded[s].num_rows for s in loaded}})

    monkeypatch.setenv("HF_TOKEN", "hf_not_a_real_token")
    monkeypatch.setattr(HfApi, "create_repo", lambda self, repo_id, **kw: f"https://huggingface.co/datasets/{repo_id}")
    monkeypatch.setattr(HfApi, "upload_folder", upload_folder)
    rc, _, err = cli(
        "export", demo_run, tmp_path / "out", "--format", "trl", "--test-bins", "hard", "--push-to-hub", "someone/x"
    )
    assert rc == 0, err
    [upload] = uploads
    splits = json.loads((tmp_path / "out" / "synthgen_export.json").read_text())["export"]["splits"]
    assert upload["loaded"] == {s: v["rows"] for s, v in splits.items()} and set(splits) == {"train", "test"}
    assert "*.parquet" in upload["delete_patterns"]  # an earlier export's files go, whatever its format
