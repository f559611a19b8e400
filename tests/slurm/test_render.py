"""`synthgen slurm` without a cluster: rendered scripts, skipped shards, dependencies, settings.

Fast; runs everywhere. Submission is exercised with a stand-in `sbatch` on PATH that records its
arguments; the real cluster is in test_cluster.py.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from synthgen.slurm.render import array_spec
from synthgen.store.layout import StageDir

TEMPLATES = Path(__file__).resolve().parents[2] / "synthgen" / "slurm" / "templates"

CLUSTER_CONFIG = """\
run_dir: runs/r1
slurm:
  partition: gpu-big
  account: proj-42
  qos: high
  setup: ["module load cuda/12.4", "source /opt/envs/sg/bin/activate"]
  executable: /opt/envs/sg/bin/synthgen
  array_parallelism: 2
  num_shards: 4
  extra_sbatch: ["--exclusive"]
  generate: {time: "02:00:00", mem: 64G}
  vllm: {model: "my org/model's name", tensor_parallel_size: 4, port: 9000, extra_args: ["--max-model-len", "65536"]}
  train: {nodes: 3, gpus_per_node: 4, accelerate_config: recipes/accelerate/zero3.yaml}
"""


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cfg.yaml").write_text(CLUSTER_CONFIG)
    return tmp_path


def _scripts(out: str) -> dict[str, str]:
    """The files a dry run printed, by file name."""
    parts = re.split(r"^# ==> (.+) <==$", out, flags=re.M)
    return {Path(parts[i]).name: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def _mark_done(run_dir: Path, shards: list[int], n: int) -> None:
    stage = StageDir(run_dir, "generate")
    for i in shards:
        stage.mark_done(StageDir.shard_name(i, n), {"rows": 1, "settings_hash": "x"})


def _bash_ok(path: Path) -> None:
    proc = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
    assert proc.returncode == 0, f"{path.name}: {proc.stderr}"
    beside = Path(sys.executable).parent / "shellcheck"
    shellcheck = str(beside) if beside.is_file() else shutil.which("shellcheck")
    if shellcheck:
        proc = subprocess.run([shellcheck, "-S", "warning", str(path)], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout


# -- pure pieces ----------------------------------------------------------------------------------
def test_array_spec_lists_indices_and_compresses_runs():
    assert array_spec([0, 1, 2, 3]) == "0-3"
    assert array_spec([1, 3], 2) == "1,3%2"
    assert array_spec([8, 7, 5, 2, 1, 0, 5]) == "0-2,5,7-8"
    with pytest.raises(ValueError):
        array_spec([])


def test_pending_shards_skip_completion_markers(tmp_path):
    assert StageDir(tmp_path, "generate").pending(4) == [0, 1, 2, 3]
    _mark_done(tmp_path, [0, 2], 4)
    _mark_done(tmp_path, [1], 8)  # another sharding's marker does not count
    assert StageDir(tmp_path, "generate").pending(4) == [1, 3]


# -- generate --------------------------------------------------------------------------------------
def test_generate_dry_run_submits_only_unfinished_shards(cli, workdir):
    _mark_done(workdir / "runs/r1", [0, 2], 4)
    rc, out, err = cli("--config", "cfg.yaml", "slurm", "generate", "--dry-run")
    assert rc == 0, err
    script = _scripts(out)["generate.sbatch"]
    assert "#SBATCH --array=1,3%2\n" in script
    assert "NUM_SHARDS=4\n" in script and '--shard "$SHARD" --num-shards "$NUM_SHARDS"' in script
    for line in (
        "--requeue",
        "--signal=B:USR1@120",
        "--partition=gpu-big",
        "--account=proj-42",
        "--qos=high",
        "--time=02:00:00",
        "--mem=64G",
        "--gpus-per-node=4",
        "--exclusive",
        f"--chdir={workdir}",
        f"--output={workdir}/runs/r1/slurm/logs/%x-%A_%a.out",
    ):
        assert f"#SBATCH {line}\n" in script, line
    # Own server per task: the model name is shell-quoted, the gpt-oss reasoning parser is on.
    assert "vllm serve 'my org/model'\"'\"'s name'" in script
    assert "--tensor-parallel-size 4" in script and "--reasoning-parser openai_gptoss" in script
    assert "--max-model-len 65536" in script and "PORT=$(( 9000 + SHARD % 100 ))" in script
    assert 'slurm wait-ready "$BASE_URL"' in script and "trap 'forward no' TERM" in script
    assert "module load cuda/12.4\nsource /opt/envs/sg/bin/activate\n" in script
    assert "SYNTHGEN=(/opt/envs/sg/bin/synthgen)" in script
    slurm_dir = workdir / "runs/r1/slurm"
    _bash_ok(slurm_dir / "generate.sbatch")
    config_copy = re.search(r"^CONFIG=(\S+)$", script, re.M).group(1)
    assert Path(config_copy).read_text() == CLUSTER_CONFIG and Path(config_copy).parent == slurm_dir
    assert (slurm_dir / "logs").is_dir()  # Slurm would not create it


def test_generate_with_a_shared_server_starts_none(cli, workdir):
    rc, out, err = cli(
        "--config",
        "cfg.yaml",
        "slurm",
        "generate",
        "--dry-run",
        "--num-shards",
        "3",
        "--base-url",
        "http://gpu07:8000/v1",
        "--parallelism",
        "1",
    )
    assert rc == 0, err
    script = _scripts(out)["generate.sbatch"]
    assert "#SBATCH --array=0-2%1\n" in script and "NUM_SHARDS=3\n" in script
    assert "vllm serve" not in script and "--gpus-per-node" not in script
    assert "BASE_URL=http://gpu07:8000/v1\n" in script and 'BASE_URL_ARGS=(--base-url "$BASE_URL")' in script


def test_generate_with_the_configs_servers_and_a_container_wrapper(cli, workdir):
    (workdir / "c.yaml").write_text(
        "generate: {teacher: {base_url: 'http://t:1/v1'}, student: {base_url: 'http://s:2/v1'}}\n"
        "slurm: {executable: 'apptainer exec --nv /img/sg.sif synthgen', vllm: {start_server: false}}\n"
    )
    rc, out, err = cli("--config", "c.yaml", "slurm", "generate", "--dry-run")
    assert rc == 0, err
    script = _scripts(out)["generate.sbatch"]
    assert "SYNTHGEN=(apptainer exec --nv /img/sg.sif synthgen)" in script
    assert '"${SYNTHGEN[@]}" slurm wait-ready http://t:1/v1 http://s:2/v1 --timeout 1800' in script
    assert "BASE_URL_ARGS=()" in script and "vllm serve" not in script
    _bash_ok(workdir / "data/runs/default/slurm/generate.sbatch")


def test_generate_with_everything_done_submits_nothing(cli, workdir):
    _mark_done(workdir / "runs/r1", [0, 1, 2, 3], 4)
    rc, out, err = cli("--config", "cfg.yaml", "slurm", "generate")  # no sbatch needed: nothing to submit
    assert rc == 0, err
    assert "all 4 shards are finished" in out
    assert not (workdir / "runs/r1/slurm/generate.sbatch").exists()


def test_flags_override_the_config(cli, workdir):
    rc, out, err = cli(
        "--config", "cfg.yaml", "slurm", "generate", "--dry-run", "--partition", "debug", "--run-dir", "runs/other"
    )
    assert rc == 0, err
    script = _scripts(out)["generate.sbatch"]
    assert "#SBATCH --partition=debug\n" in script and f"RUN_DIR={workdir}/runs/other\n" in script


def test_no_cluster_names_without_a_config(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc, out, err = cli("slurm", "pipeline", "--dry-run", "--model", "m")
    assert rc == 0, err
    scripts = _scripts(out)
    assert {"generate.sbatch", "filter.sbatch", "bin.sbatch", "chain.sbatch", "train.sbatch", "submit.sh"} <= set(
        scripts
    )
    for name, text in scripts.items():
        for option in ("--partition", "--account", "--qos", "--mem=", "module load", "--exclusive"):
            assert option not in text, (name, option)
    for template in TEMPLATES.glob("*.j2"):
        text = template.read_text()
        for word in ("--partition", "--account", "module load", "/home/", "/fsx", "/scratch", "hopper", "conda"):
            assert word not in text, (template.name, word)


# -- curate, train, pipeline -------------------------------------------------------------------------
def test_pipeline_chains_every_stage_with_afterok(cli, workdir):
    rc, out, err = cli(
        "--config",
        "cfg.yaml",
        "slurm",
        "pipeline",
        "--dry-run",
        "--model",
        "/models/student",
        "--output",
        "ckpt",
        "--curriculum",
        "reverse-medium",
    )
    assert rc == 0, err
    scripts = _scripts(out)
    submit = scripts["submit.sh"]
    order = [m.group(1) for m in re.finditer(r"^(\w+)_JOB=", submit, re.M)]
    assert order == ["GENERATE", "FILTER", "BIN", "CHAIN", "TRAIN"]
    for stage, before in (("FILTER", "GENERATE"), ("BIN", "FILTER"), ("CHAIN", "BIN"), ("TRAIN", "CHAIN")):
        assert f'{stage}_JOB=$(sbatch --parsable --dependency="afterok:${before}_JOB"' in submit
    for stage in ("filter", "bin", "chain"):
        text = scripts[f"{stage}.sbatch"]
        assert "#SBATCH --time=12:00:00\n" in text and "#SBATCH --output=" in text
    for stage in ("filter", "bin"):  # CPU steps: no model, no server
        text = scripts[f"{stage}.sbatch"]
        assert f'exec "${{SYNTHGEN[@]}}" --config "$CONFIG" {stage} --run-dir "$RUN_DIR"' in text
        assert "vllm serve" not in text and "wait-ready" not in text and "--gpus-per-node" not in text
    # chain talks to the teacher and the student: it starts its own server as generate does, waits
    # for it, points chain at it, and does not exec (the trap must stop the server afterwards).
    chain = scripts["chain.sbatch"]
    assert "vllm serve 'my org/model'\"'\"'s name'" in chain and 'slurm wait-ready "$BASE_URL"' in chain
    assert '"${SYNTHGEN[@]}" --config "$CONFIG" chain --run-dir "$RUN_DIR" "${BASE_URL_ARGS[@]}"' in chain
    assert "exec " not in chain and "#SBATCH --gpus-per-node=" in chain
    train = scripts["train.sbatch"]
    assert "#SBATCH --nodes=3\n" in train and "#SBATCH --gpus-per-node=4\n" in train
    assert "trl vllm-serve --model /models/student" in train and "srun --kill-on-bad-exit=1" in train
    assert "--num_processes $(( NUM_MACHINES * 4 ))" in train
    assert "--config_file recipes/accelerate/zero3.yaml" in train
    assert f"--data {workdir}/runs/r1/bin\n" in train and f"--output {workdir}/ckpt\n" in train
    assert "--curriculum reverse-medium\n" in train
    assert (
        '--vllm-server-url http://"${VLLM_HOST}":"${VLLM_PORT}"' in train
        and 'wait-ready "http://${VLLM_HOST}:${VLLM_PORT}/health/"' in train
    )
    for path in (workdir / "runs/r1/slurm").glob("*.s*"):
        _bash_ok(path)


def test_train_on_one_node_needs_no_server(cli, workdir):
    rc, _, err = cli("--config", "cfg.yaml", "slurm", "train", "--dry-run", "--model", "m", "--train-nodes", "1")
    assert rc == 2 and "at least 2" in err
    cfg = workdir / "one.yaml"
    cfg.write_text("slurm: {train: {nodes: 1, use_vllm_server: false, gpus_per_node: 2}}\n")
    rc, out, err = cli("--config", cfg, "slurm", "train", "--dry-run", "--after", "77")
    assert rc == 0, err
    train = _scripts(out)["train.sbatch"]
    assert "vllm-serve" not in train and "--use-vllm" not in train and "NUM_MACHINES=$NUM_NODES" in train
    assert "--dependency=afterok:77 train.sbatch" in _scripts(out)["submit.sh"]


def test_curate_refuses_while_generate_is_unfinished(cli, workdir):
    rc, _, err = cli("--config", "cfg.yaml", "slurm", "curate")
    assert rc == 2 and "no finished generate shard" in err
    _mark_done(workdir / "runs/r1", [0, 1], 4)
    rc, _, err = cli("--config", "cfg.yaml", "slurm", "curate")
    assert rc == 2 and "2 generate shard(s)" in err and "--after" in err


def test_bad_settings_are_one_line_errors(cli, workdir):
    (workdir / "bad.yaml").write_text("slurm: {extra_sbatch: ['exclusive']}\n")
    rc, _, err = cli("--config", "bad.yaml", "slurm", "generate", "--dry-run")
    assert rc == 2 and "extra_sbatch" in err and len(err.strip().splitlines()) == 1


def test_sbatch_options_are_stripped_before_the_one_line_check():
    from synthgen.slurm.settings import JobResources

    assert JobResources(extra_sbatch=["--exclusive\n", " --qos=high"]).extra_sbatch == ["--exclusive", "--qos=high"]
    with pytest.raises(ValueError, match="is one line"):
        JobResources(extra_sbatch=["--exclusive\n--qos=high"])


# -- submission with a stand-in sbatch -------------------------------------------------------------
@pytest.fixture
def fake_sbatch(tmp_path, monkeypatch):
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir()
    log = tmp_path / "sbatch.log"
    script = bin_dir / "sbatch"
    script.write_text(f'#!/bin/bash\necho "$*" >> {log}\nn=$(wc -l < {log})\necho "$((100 + n));cluster"\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return log


def test_submit_chains_job_ids_and_records_them(cli, workdir, fake_sbatch):
    _mark_done(workdir / "runs/r1", [3], 4)
    rc, out, err = cli("--config", "cfg.yaml", "slurm", "pipeline", "--model", "m")
    assert rc == 0, err
    calls = fake_sbatch.read_text().splitlines()
    slurm_dir = workdir / "runs/r1/slurm"
    assert calls == [
        f"--parsable {slurm_dir}/generate.sbatch",
        f"--parsable --dependency=afterok:101 {slurm_dir}/filter.sbatch",
        f"--parsable --dependency=afterok:102 {slurm_dir}/bin.sbatch",
        f"--parsable --dependency=afterok:103 {slurm_dir}/chain.sbatch",
        f"--parsable --dependency=afterok:104 {slurm_dir}/train.sbatch",
    ]
    assert "generate: job 101 (array 0-2%2: 3 shard(s))" in out and "train: job 105, after chain 104" in out
    records = [json.loads(line) for line in (slurm_dir / "jobs.jsonl").read_text().splitlines()]
    assert [r["job_id"] for r in records] == ["101", "102", "103", "104", "105"]
    assert records[0]["array"] == "0-2%2"


# -- wait-ready ----------------------------------------------------------------------------------
class _Models(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's name)
        code = 200 if self.path in ("/v1/models", "/health/") else 404
        self.send_response(code)
        self.end_headers()
        self.wfile.write(b'{"data": []}')

    def log_message(self, *args):
        pass


def test_wait_ready(cli):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Models)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        root = f"http://127.0.0.1:{server.server_address[1]}"
        rc, out, _ = cli("slurm", "wait-ready", f"{root}/v1", f"{root}/health/", "--timeout", "5")
        assert rc == 0 and "ready after" in out
        rc, _, err = cli("slurm", "wait-ready", f"{root}/nothing", "--timeout", "0.3", "--interval", "0.1")
        assert rc == 1 and "not ready after 0.3 s" in err
    finally:
        server.shutdown()
        server.server_close()
    dead = subprocess.Popen(["true"])
    dead.wait()
    rc, _, err = cli("slurm", "wait-ready", "http://127.0.0.1:9/v1", "--timeout", "30", "--pid", str(dead.pid))
    assert rc == 1 and "exited before" in err


# -- packaging -------------------------------------------------------------------------------------
def test_templates_ship_in_the_wheel():
    """pyproject's package-data must carry the templates, or an installed synthgen cannot render."""
    import fnmatch

    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib

    root = TEMPLATES.parents[2]
    package_data = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"].get("package-data", {})
    for template in TEMPLATES.glob("*.j2"):
        shipped = False
        for package, globs in package_data.items():
            package_dir = root / package.replace(".", "/")
            if package_dir in template.parents:
                rel = template.relative_to(package_dir).as_posix()
                shipped = shipped or any(fnmatch.fnmatch(rel, g) for g in globs)
        assert shipped, f"{template.name} is not in pyproject's package-data {package_data}"
