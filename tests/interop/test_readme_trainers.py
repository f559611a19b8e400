"""The README's "Training with another trainer" section, run as written as far as a machine without a GPU allows.

Each command comes from the README's own text. What is replaced, and only that: the run (a finished
demo run stands at `data/runs/exp1` in a scratch folder), the model (a tiny local one in place of a
Hub name), the server (`vf-eval` talks to a scripted stand-in, not a model), `pip install` goes to a
folder of its own (not the shared venv), and the GRPO arguments shrink to two steps on a CPU. verl's
command stops where training would start: its config is composed from the README's overrides, and
its dataset, reward function and sampler are built from that config as verl's trainer builds them.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from synthgen.interop.curriculum import ScheduleIndices
from tests.helpers.interop import ROOT, missing_venv, read_json_lines, run_in_venv, venv_python

pytestmark = pytest.mark.slow
HERE = Path(__file__).parent
SYNTHGEN = str(Path(sys.executable).parent / "synthgen")


def _section() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("## Training with another trainer\n")
    return text[start : text.index("\n## ", start + 1)]


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", _section(), re.S)


def _commands(block: str) -> list[list[str]]:
    """A bash block's commands, continuation lines joined, as argument lists."""
    return [shlex.split(line) for line in block.replace("\\\n", " ").splitlines() if line.strip()]


@pytest.fixture
def workdir(demo_run, tmp_path):
    """A scratch folder whose `data/runs/exp1` is the finished demo run, where the README's commands run."""
    # A copy, not a link: the export names the verifiers package after the run folder's own name.
    shutil.copytree(demo_run, tmp_path / "data" / "runs" / "exp1", ignore=shutil.ignore_patterns("cache"))
    return tmp_path


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    pytest.importorskip("transformers")
    from synthgen.train.tiny import make_tiny_model

    return make_tiny_model(tmp_path_factory.mktemp("tiny") / "model")


def _synthgen(argv: list[str], cwd: Path) -> None:
    assert argv[0] == "synthgen", argv
    proc = subprocess.run([SYNTHGEN, *argv[1:]], capture_output=True, text=True, timeout=600, cwd=cwd)
    assert proc.returncode == 0, f"{shlex.join(argv)}:\n{proc.stderr[-3000:]}"


def test_the_verl_command_as_written_builds_verls_dataset_reward_and_curriculum(workdir, tiny_model):
    reason = missing_venv("verl")
    if reason:
        pytest.skip(reason)
    export, train = _commands(_blocks("bash")[0])
    _synthgen(export, workdir)
    assert train[:3] == ["python3", "-m", "verl.trainer.main_ppo"]
    overrides = [
        a if not a.startswith("actor_rollout_ref.model.path=") else f"{a.split('=')[0]}={tiny_model}" for a in train[3:]
    ]
    assert len(overrides) == len(train) - 3 and any(a.startswith("actor_rollout_ref.model.path=") for a in train)
    proc = run_in_venv("verl", HERE / "readme_verl_script.py", json.dumps(overrides), cwd=workdir)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    (result,) = read_json_lines(proc.stdout)
    settings = dict(a.lstrip("+").split("=", 1) for a in overrides)
    rows = pq.read_table(workdir / settings["data.train_files"]).to_pylist()
    assert result["rows"] == len(rows)
    # The first step's batch is the schedule's, drawn by the one implementation every trainer shares.
    order = ScheduleIndices(
        [r["extra_info"]["difficulty"] for r in rows],
        settings["data.sampler.curriculum"],
        batch_size=int(settings["data.train_batch_size"]),
        steps=int(settings["data.sampler.steps"]),
    )
    assert result["batch"] == order.batch(0)
    assert result["reward"] == {"score": 0.0, "acc": 0.0, "infra": 0.0, "status": "format"}


def test_the_verifiers_commands_as_written_install_and_evaluate_the_environment(workdir, tmp_path):
    reason = missing_venv("verifiers")
    if reason:
        pytest.skip(reason)
    from synthgen.demo.scripted.launch import start_scripted_server
    from tests.helpers.interop import AnswerResponder

    export, install, evaluate = _commands(_blocks("bash")[1])
    _synthgen(export, workdir)
    assert install[:2] == ["pip", "install"]
    site = tmp_path / "site"
    pip = [str(venv_python("verifiers")), "-m", "pip", "install", "-q", "--no-deps", "--target", str(site)]
    proc = subprocess.run([*pip, *install[2:]], capture_output=True, text=True, timeout=600, cwd=workdir)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert evaluate[0] == "vf-eval" and "-b" in evaluate
    responder = AnswerResponder({})  # answers "no idea" to everything: a format failure, reward 0
    with start_scripted_server(responder) as server:
        argv = list(evaluate)
        argv[argv.index("-b") + 1] = server.url
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)]),
            "OPENAI_API_KEY": "unused",
            "HF_HUB_OFFLINE": "1",
            "HF_DATASETS_OFFLINE": "1",
        }
        vf_eval = str(venv_python("verifiers").parent / "vf-eval")
        proc = subprocess.run(
            [vf_eval, *argv[1:], "--disable-tui", "--save-results", "--output-dir", str(tmp_path / "results")],
            capture_output=True,
            text=True,
            timeout=600,
            cwd=workdir,
            env=env,
            stdin=subprocess.DEVNULL,
        )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    assert sum(responder.requests.values()) > 0  # the environment's prompts reached the server
    saved = list((tmp_path / "results").rglob("*.jsonl"))
    assert saved, f"vf-eval saved no results:\n{proc.stdout[-2000:]}"
    rollouts = [json.loads(line) for p in saved for line in p.read_text().splitlines() if line.strip()]
    assert rollouts and all(r["reward"] == 0.0 for r in rollouts)


def test_the_trl_script_and_the_curriculum_as_written_train_on_the_trl_export(workdir, tiny_model):
    pytest.importorskip("trl")
    prose = _section()
    (export,) = re.findall(r"`(synthgen export \S+ \S+ --format trl)`", prose)
    _synthgen(shlex.split(export), workdir)
    script, curriculum = _blocks("python")
    assert script.count('model="Qwen/Qwen3-8B-Base"') == 1
    script = script.replace('model="Qwen/Qwen3-8B-Base"', f"model={str(tiny_model)!r}")
    small = (
        'GRPOConfig(output_dir="outputs/trl-grpo", max_steps=2, per_device_train_batch_size=4, num_generations=2, '
        "max_completion_length=12, beta=0.0, use_cpu=True, bf16=False, logging_steps=1, save_strategy='no', "
        "report_to='none', disable_tqdm=True)"
    )
    script, replaced = re.subn(r"GRPOConfig\([^)]*\)", small, script)
    assert replaced == 1
    report = (
        "\nimport json\n"
        "print('README-RESULT', json.dumps({'steps': trainer.state.global_step, 'order': len(order),"
        " 'first': order.batch(0), 'bins': list(data['difficulty'])}))\n"
    )
    program = script + "\n" + curriculum + report
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=900, cwd=workdir, env=env
    )
    assert proc.returncode == 0, proc.stderr[-6000:]
    # TRL prints its logs as dicts too: the result is the line the README's code did not print.
    (line,) = [x for x in proc.stdout.splitlines() if x.startswith("README-RESULT ")]
    result = json.loads(line.removeprefix("README-RESULT "))
    assert result["steps"] == 2
    assert result["order"] == 64 * 2000
    expected = ScheduleIndices(result["bins"], "reverse-medium", batch_size=64, steps=2000)
    assert result["first"] == expected.batch(0)
