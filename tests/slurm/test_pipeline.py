"""`synthgen slurm pipeline` end to end on the local Slurm cluster, the server path included.

The jobs' `vllm.command` is a stand-in that takes vLLM's command line (`serve MODEL ... --port P`)
and starts the scripted server (not a model) on that port, so every template path that starts a
server and waits for it runs for real: each generate task's own server, and the chain step's.
Everything else is the real pipeline: generate array -> filter -> bin -> chain -> train, chained
with afterok. A second test shows that a chain step whose server never comes up fails its job and
the training job after it never starts.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from synthgen.store.layout import StageDir
from tests.helpers.slurm import SYNTHGEN, wait_finished

pytestmark = [pytest.mark.slurm, pytest.mark.slow, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]

FAKE_VLLM = """#!/bin/bash
# Stands in for `vllm serve MODEL [options] --port P`: the scripted server (not a model) on port P.
[ "$1" = serve ] || {{ echo "fake vllm: only 'serve' is supported" >&2; exit 2; }}
model=$2; shift 2
port=8000
while [ $# -gt 0 ]; do
    case $1 in --port) port=$2; shift 2 ;; *) shift ;; esac
done
exec {synthgen} scripted-server --host 127.0.0.1 --port "$port" --model "$model"
"""

BROKEN_VLLM = """#!/bin/bash
echo "fake vllm: out of GPU memory" >&2
exit 1
"""


def _config(tmp_path: Path, vllm_command: Path, port: int) -> Path:
    config = tmp_path / "run.yaml"
    config.write_text(f"""
run_dir: {tmp_path / "run"}
seeds: {{n: 8, seed: 3}}
generate: {{turns: 3, max_in_flight: 64, progress: false, sandbox: {{workers: 1}}}}
chain: {{progress: false, sandbox: {{workers: 1}}}}
train: {{model: {tmp_path / "tiny"}, recipe: {ROOT / "recipes/tiny-cpu.yaml"}, max_steps: 2, curriculum: uniform}}
slurm:
  executable: {SYNTHGEN}
  num_shards: 2
  generate: {{cpus_per_task: 1, gpus_per_node: 0, time: "20:00"}}
  curate: {{cpus_per_task: 1, gpus_per_node: 0, time: "20:00"}}
  train: {{nodes: 1, gpus_per_node: 0, use_vllm_server: false, cpus_per_task: 1, time: "20:00",
           accelerate_command: {Path(SYNTHGEN).parent / "accelerate"}}}
  vllm: {{command: {vllm_command}, port: {port}, ready_timeout_s: 120}}
""")
    return config


def _script(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text.format(synthgen=SYNTHGEN))
    path.chmod(0o755)
    return path


def _job_ids(out: str) -> dict[str, str]:
    return {m.group(1): m.group(2) for m in re.finditer(r"^(\w+): job (\d+)", out, re.M)}


def _state(job: str) -> str:
    out = subprocess.run(["scontrol", "show", "job", job], capture_output=True, text=True).stdout
    match = re.search(r"\bJobState=(\S+)", out)
    return match.group(1) if match else "GONE"


def test_pipeline_runs_every_stage_with_its_own_servers(cli, cluster, tmp_path, monkeypatch):
    pytest.importorskip("trl")
    monkeypatch.chdir(tmp_path)
    config = _config(tmp_path, _script(tmp_path, "fake-vllm", FAKE_VLLM), port=18300)
    assert cli("--config", config, "seeds")[0] == 0
    assert cli("train", "--make-tiny-model", tmp_path / "tiny")[0] == 0

    rc, out, err = cli("--config", config, "slurm", "pipeline")
    assert rc == 0, err
    jobs = _job_ids(out)
    assert list(jobs) == ["generate", "filter", "bin", "chain", "train"], out
    wait_finished(jobs["train"], timeout_s=800)

    run = tmp_path / "run"
    logs = {p.name: p.read_text() for p in (run / "slurm" / "logs").iterdir()}
    for stage in ("generate", "filter", "bin", "chain", "train"):
        assert _state(jobs[stage]) in ("COMPLETED", "GONE"), (stage, logs)
    assert all(StageDir(run, "generate").is_done(f"shard-{i:05d}-of-00002") for i in range(2))
    chain_log = next(text for name, text in logs.items() if name.startswith("synthgen-chain-"))
    assert "wait-ready: ready" in chain_log  # the chain step started its own server and waited for it
    generate_logs = [text for name, text in logs.items() if name.startswith("synthgen-generate-")]
    assert len(generate_logs) == 2 and all("wait-ready: ready" in text for text in generate_logs)
    assert (run / "bin").is_dir() and (run / "chain").is_dir()
    assert list((run / "train").glob("checkpoint-*")), logs


def test_a_chain_step_without_a_server_fails_and_training_never_starts(cli, cluster, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = _config(tmp_path, _script(tmp_path, "broken-vllm", BROKEN_VLLM), port=18400)
    assert cli("--config", config, "seeds")[0] == 0
    # generate ran elsewhere (here, against a scripted server in this process); only curation is left
    from synthgen.demo.scripted.launch import start_scripted_server

    with start_scripted_server(seed=0) as server:
        for shard in range(2):
            rc, _, err = cli(
                "--config", config, "generate", "--base-url", server.url, "--shard", shard, "--num-shards", 2
            )
            assert rc == 0, err
    rc, out, err = cli("--config", config, "slurm", "pipeline", "--model", tmp_path / "tiny")
    assert rc == 0, err
    jobs = _job_ids(out)
    assert list(jobs) == ["filter", "bin", "chain", "train"], out
    wait_finished(jobs["chain"], timeout_s=600)
    assert _state(jobs["filter"]) in ("COMPLETED", "GONE") and _state(jobs["bin"]) in ("COMPLETED", "GONE")
    assert _state(jobs["chain"]) == "FAILED"
    # afterok can never be satisfied: the training job waits with that reason until cancelled
    out = subprocess.run(["squeue", "-h", "-j", jobs["train"], "-o", "%T %r"], capture_output=True, text=True).stdout
    assert "DependencyNeverSatisfied" in out or _state(jobs["train"]) == "CANCELLED", out
    subprocess.run(["scancel", jobs["train"]])
    assert not (tmp_path / "run" / "train").exists()
