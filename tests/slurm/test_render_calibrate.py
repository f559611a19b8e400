"""`synthgen slurm calibrate` without a cluster: the array over unfinished shards, the student's server,
errors, and submission with a stand-in sbatch. The real cluster is in test_cluster_calibrate.py."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
from pathlib import Path

import pytest

from synthgen.store.layout import StageDir
from tests.helpers.problem_rows import problem_row

CONFIG = """\
run_dir: runs/r1
calibrate: {student: {model: Qwen/Qwen3-8B-Base, base_url: "http://student-node:8001/v1"}, num_shards: 4}
slurm:
  partition: gpu-big
  setup: ["source /opt/envs/sg/bin/activate"]
  executable: /opt/envs/sg/bin/synthgen
  array_parallelism: 9
  calibrate: {time: "03:00:00", array_parallelism: 2, cpus_per_task: 4}
  vllm: {model: openai/gpt-oss-120b, tensor_parallel_size: 2, port: 9000}
"""


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    import pyarrow.parquet as pq

    from synthgen.store import records

    monkeypatch.chdir(tmp_path)
    (tmp_path / "cfg.yaml").write_text(CONFIG)
    row = problem_row(turn_id="s/deduction/l/1", problem_id="p1", seed_id="s", lineage_id="l", env="deduction")
    row.update(code="def f(x):\n    return x + 1\n", inputs=["1"], outputs=["2"])
    (tmp_path / "set" / "easy").mkdir(parents=True)
    pq.write_table(records.table_from_rows([row], records.PROBLEMS), tmp_path / "set" / "easy" / "part-00000.parquet")
    return tmp_path


def _script(out: str, name: str = "calibrate.sbatch") -> str:
    parts = re.split(r"^# ==> (.+) <==$", out, flags=re.M)
    scripts = {Path(parts[i]).name: parts[i + 1] for i in range(1, len(parts) - 1, 2)}
    return scripts[name]


def _mark_done(run_dir: Path, shards: list[int], n: int) -> None:
    stage = StageDir(run_dir, "calibrate")
    for i in shards:
        stage.mark_done(StageDir.shard_name(i, n), {"rows": 1, "settings_hash": "x"})


def _calibrate(cli, *args):
    return cli("--config", "cfg.yaml", "slurm", "calibrate", "--input-dir", "set", *args)


def test_the_array_covers_the_unfinished_shards_and_its_server_serves_the_student(cli, workdir):
    _mark_done(workdir / "runs/r1", [1], 4)
    _mark_done(workdir / "runs/r1", [0], 8)  # another sharding's marker does not count
    rc, out, err = _calibrate(cli, "--dry-run")
    assert rc == 0, err
    script = _script(out)
    for line in ("--array=0,2-3%2", "--time=03:00:00", "--cpus-per-task=4", "--gpus-per-node=2", "--requeue"):
        assert f"#SBATCH {line}\n" in script, line
    assert "--signal=B:USR1@120" in script and "trap 'forward yes' USR1" in script
    assert "NUM_SHARDS=4\n" in script and f"INPUT_DIR={workdir}/set\n" in script
    assert 'MARKER="$RUN_DIR/calibrate/$(printf shard-%05d-of-%05d.done "$SHARD" "$NUM_SHARDS")"' in script
    # The task's own server serves the student of the config, not generate's teacher, without gpt-oss's parser.
    assert "vllm serve Qwen/Qwen3-8B-Base \\\n    --tensor-parallel-size 2" in script
    assert "gpt-oss" not in script and "--reasoning-parser" not in script
    assert 'BASE_URL_ARGS=(--student-url "$BASE_URL")' in script
    command = script[script.index('"${SYNTHGEN[@]}" --config "$CONFIG" calibrate') :].split(" &\n")[0]
    assert '--run-dir "$RUN_DIR" --input-dir "$INPUT_DIR"' in command
    assert "--student-model Qwen/Qwen3-8B-Base" in command
    assert '--shard "$SHARD" --num-shards "$NUM_SHARDS" "${BASE_URL_ARGS[@]}"' in command
    path = workdir / "runs/r1/slurm/calibrate.sbatch"
    assert path.read_text().strip() == script.strip()
    proc = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_flags_choose_the_shards_the_model_and_a_shared_server(cli, workdir):
    rc, out, err = _calibrate(
        cli, "--dry-run", "--calibrate-num-shards", "3", "--calibrate-model", "ckpt/step-400", "--vllm-port", "7000"
    )
    assert rc == 0, err
    script = _script(out)
    assert "#SBATCH --array=0-2%2\n" in script and "vllm serve ckpt/step-400" in script
    assert "--student-model ckpt/step-400" in script and "PORT=$(( 7000 + SHARD % 100 ))" in script
    rc, out, err = _calibrate(cli, "--dry-run", "--base-url", "http://big:8000/v1")
    assert rc == 0, err
    script = _script(out)
    assert "vllm serve" not in script and "BASE_URL=http://big:8000/v1\n" in script
    assert "--gpus-per-node" not in script and "--student-model" not in script  # the config names the model


def test_without_a_server_of_its_own_the_task_waits_for_the_configs_student(cli, workdir):
    rc, out, err = _calibrate(cli, "--dry-run", "--no-vllm-start-server")
    assert rc == 0, err
    script = _script(out)
    assert "slurm wait-ready http://student-node:8001/v1 --timeout" in script and "vllm serve" not in script
    assert "BASE_URL_ARGS=()" in script


def test_finished_shards_submit_nothing_and_bad_input_is_one_line(cli, workdir):
    _mark_done(workdir / "runs/r1", [0, 1, 2, 3], 4)
    rc, out, err = _calibrate(cli)  # no sbatch needed: nothing to submit
    assert rc == 0 and "calibrate: all 4 shards are finished" in out, err
    assert not (workdir / "runs/r1/slurm/calibrate.sbatch").exists()
    for args, why in (
        (["--input-dir", "nowhere"], "is not a folder"),
        (["--input-dir", "runs"], "holds no Parquet files"),
        ([], "needs the problem set"),
    ):
        rc, _, err = cli("--config", "cfg.yaml", "slurm", "calibrate", "--dry-run", "--run-dir", "runs/r2", *args)
        assert rc == 2 and why in err and len(err.strip().splitlines()) == 1, (args, err)


@pytest.fixture
def fake_slurm(tmp_path, monkeypatch):
    """A stand-in sbatch (records its arguments) and squeue (says every job it is asked about runs)."""
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir()
    log = tmp_path / "sbatch.log"
    tools = {
        "sbatch": f'#!/bin/bash\necho "$*" >> {log}\nn=$(wc -l < {log})\necho "$((200 + n));cluster"\n',
        "squeue": '#!/bin/bash\nfor id in $(echo "${@: -1}" | tr , " "); do echo "$id RUNNING"; done\n',
    }
    for name, text in tools.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod((bin_dir / name).stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return log


def test_submission_waits_for_a_job_and_refuses_while_an_earlier_array_runs(cli, workdir, fake_slurm):
    rc, out, err = _calibrate(cli, "--after", "77")
    assert rc == 0, err
    slurm_dir = workdir / "runs/r1/slurm"
    assert fake_slurm.read_text().splitlines() == [f"--parsable --dependency=afterok:77 {slurm_dir}/calibrate.sbatch"]
    assert "calibrate: job 201 (array 0-3%2: 4 shard(s)), after job 77" in out
    records = [json.loads(line) for line in (slurm_dir / "jobs.jsonl").read_text().splitlines()]
    assert [(r["stage"], r["job_id"], r["array"]) for r in records] == [("calibrate", "201", "0-3%2")]
    # Job 201 still runs (squeue says so): a second array would measure the same shards twice.
    rc, _, err = _calibrate(cli)
    assert rc == 2 and "calibrate job(s) 201" in err and "--force" in err
    rc, out, err = _calibrate(cli, "--force")
    assert rc == 0 and "calibrate: job 202" in out, err
