"""A job no node can hold is named before it is submitted, instead of pending forever."""

from __future__ import annotations

import shutil

import pytest

from synthgen.slurm.render import ResourceRequest, SbatchJob
from synthgen.slurm.submit import Node, parse_sinfo, warnings_for

SINFO = """gpu01|gpu*|64|gpu:h100:8(S:0-1)
gpu02|gpu*|64|gpu:h100:8(S:0-1)
cpu01|cpu|16|(null)
cpu01|debug|16|(null)
"""


def _job(stage, partition=None, nodes=1, cpus=1, gpus=0):
    return SbatchJob(stage, "", None, request=ResourceRequest(partition, nodes, cpus, gpus))  # type: ignore[arg-type]


def test_sinfo_lines_become_nodes_with_their_partitions_and_gpus():
    nodes, default = parse_sinfo(SINFO)
    assert default == "gpu"
    assert Node(("gpu",), 64, 8) in nodes and Node(("cpu", "debug"), 16, 0) in nodes


def test_jobs_that_fit_get_no_warning_and_those_that_cannot_are_named():
    nodes, default = parse_sinfo(SINFO)
    assert warnings_for([_job("generate", cpus=8, gpus=8), _job("filter", "cpu", cpus=16)], nodes, default) == []
    lines = warnings_for(
        [
            _job("generate", cpus=128),
            _job("chain", "cpu", gpus=1),
            _job("train", nodes=5),
            _job("bin", "nowhere"),
            _job("calibrate", "cpu", cpus=32),
        ],
        nodes,
        default,
    )
    assert len(lines) == 5
    assert "generate: asks for 128 CPUs" in lines[0] and "slurm.generate.cpus_per_task" in lines[0]
    assert "chain: asks for 1 GPUs" in lines[1] and "slurm.curate.gpus_per_node" in lines[1]
    assert "train: asks for 5 nodes but partition gpu has 2" in lines[2]
    assert "partition nowhere has no nodes" in lines[3]
    assert "calibrate: asks for 32 CPUs" in lines[4] and "slurm.calibrate.cpus_per_task" in lines[4]


@pytest.mark.slurm
def test_the_local_cluster_warns_about_the_default_eight_cpus(cli, cluster, tmp_path, monkeypatch):
    if shutil.which("sinfo") is None:
        pytest.skip("no sinfo")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.yaml").write_text("run_dir: run\nslurm: {vllm: {shared_url: 'http://127.0.0.1:9/v1'}}\n")
    rc, _, err = cli(
        "--config", tmp_path / "run.yaml", "slurm", "generate", "--dry-run", "--generate-cpus-per-task", "4096"
    )
    assert rc == 0
    assert "generate: asks for 4096 CPUs per task" in err and "pend forever" in err
