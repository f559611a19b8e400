"""The verifiers environment package from `synthgen export --format verifiers`, in verifiers' venv
(.ci/trainers-setup.sh): installed, loaded by id, evaluated by verifiers itself against a scripted chat
server (not a model) that answers each example right once and wrong once; then with the sandbox failing."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from synthgen.demo.scripted.launch import start_scripted_server
from tests.helpers.interop import (
    ENVS,
    RIGHT,
    ROOT,
    WRONG,
    AnswerResponder,
    missing_venv,
    read_json_lines,
    run_in_venv,
    venv_python,
)

pytestmark = pytest.mark.slow
SCRIPT = Path(__file__).with_name("verifiers_script.py")


@pytest.fixture(scope="module")
def vf_run(exports, tmp_path_factory):
    reason = missing_venv("verifiers")
    if reason:
        pytest.skip(reason)
    package = exports["verifiers"]
    (module,) = [p for p in package.iterdir() if (p / "__init__.py").is_file()]
    target = tmp_path_factory.mktemp("vf-site")
    # Installed into a folder of its own (not the shared venv): `pip install OUT`, as a user does.
    pip = [str(venv_python("verifiers")), "-m", "pip", "install", "-q", "--no-deps", "--target", str(target)]
    proc = subprocess.run([*pip, str(package)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = pq.read_table(module / "data" / "train.parquet").to_pylist()
    answers = {
        r["prompt"][-1]["content"]: (RIGHT[r["info"]["env"]], WRONG[r["info"]["env"]])
        for r in rows
        if r["info"]["lineage_id"].startswith("example-")
    }
    responder = AnswerResponder(answers)
    env_id = module.name.replace("_", "-")
    with start_scripted_server(responder) as server:
        paths = os.pathsep.join([str(target), str(ROOT)])
        proc = run_in_venv("verifiers", SCRIPT, env_id, server.url, RIGHT["contest"], env={"PYTHONPATH": paths})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    lines = read_json_lines(proc.stdout)
    return {"env": lines[0], "runs": {line["run"]: line["rollouts"] for line in lines[1:]}, "responder": responder}


def verdicts(rollouts) -> dict[tuple[str, str], list[dict]]:
    """(env, right|wrong) -> the rollouts that answered that way."""
    out: dict[tuple[str, str], list[dict]] = {}
    for r in rollouts:
        for env in ENVS:
            for kind, text in (("right", RIGHT[env]), ("wrong", WRONG[env])):
                if r["text"] == text:
                    out.setdefault((env, kind), []).append(r)
    return out


def test_verifiers_loads_the_package_with_synthgens_rubric(vf_run):
    env = vf_run["env"]
    assert env["cls"] == "SingleTurnEnv" and env["rows"] == 17 and env["groups"]
    assert env["funcs"][:2] == ["synthgen", "synthgen_infra"] and env["weights"][:2] == [1.0, 0.0]


def test_its_rubric_scores_right_1_and_wrong_0_in_every_env(vf_run, verify_verdicts):
    found = verdicts(vf_run["runs"]["plain"])
    for env in ENVS:
        right, wrong = found[(env, "right")], found[(env, "wrong")]
        assert [r["reward"] for r in right] == [verify_verdicts[env][0]] == [1.0], env
        assert [r["reward"] for r in wrong] == [verify_verdicts[env][1]] == [0.0], env
        assert all(r["error"] is None and r["metrics"]["synthgen_infra"] == 0.0 for r in right + wrong)


def test_a_sandbox_failure_is_an_infra_error_retried_and_neutral_not_a_wrong_answer(vf_run):
    found = verdicts(vf_run["runs"]["infra"])
    (failed,) = found[("contest", "right")]
    assert "SandboxError" in str(failed["error"]) and failed["metrics"]["synthgen_infra"] == 1.0
    (other,) = found[("contest", "wrong")]
    assert failed["reward"] == other["reward"] == 0.0  # its group's mean: advantage 0
    assert all(r["error"] is None for key, rs in found.items() if key[0] != "contest" for r in rs)
    # verifiers ran the failed group again (max_retries=1): two more requests for that prompt than for the others.
    counts = sorted(vf_run["responder"].requests.values())
    assert counts[-1] == counts[0] + 2
