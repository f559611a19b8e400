"""`synthgen plan`: a run's cost before it starts, in the keys `synthgen stats` counts after it."""

from __future__ import annotations

import json

import pytest

from synthgen.store.layout import StageDir

# A plan measured on a run and applied to that run's own config must give back its counts: the
# figures are the run's averages, so requests and tokens match up to rounding (tolerance 1%).
TOLERANCE = 0.01


def _close(estimate: float, actual: float) -> bool:
    return abs(estimate - actual) <= TOLERANCE * max(1.0, abs(actual))


@pytest.mark.slow
def test_a_plan_from_a_finished_demo_run_matches_what_that_run_spent(cli, tmp_path):
    run_dir = tmp_path / "demo"
    rc, _, err = cli("demo", "--run-dir", run_dir, "--seeds", "8", "--turns", "2", "--attempts", "4", "--no-progress")
    assert rc == 0, err
    config = tmp_path / "run.yaml"
    config.write_text(f"run_dir: {run_dir}\nseeds: {{n: 8}}\ngenerate: {{turns: 2, attempts: 4}}\n")

    rc, out, err = cli("plan", config, "--from-run", run_dir, "--json")
    assert rc == 0, err
    plan = json.loads(out)
    estimate = plan["estimate"]
    rc, out, err = cli("stats", run_dir, "--json")
    assert rc == 0, err
    counted = json.loads(out)["cost"]
    # What the generate stage's client sent (a healthy server: no retries).
    sent = json.loads(next(StageDir(run_dir, "generate").path.glob("stats-*.json")).read_text())["llm_this_run"]

    assert sum(plan["lineages"].values()) == estimate["turns"] / 2 == counted["turns"] / 2
    for role in ("teacher", "student"):
        assert _close(estimate["requests"][role], counted["requests"][role])
        assert _close(estimate["requests"][role], sent[role]["requests"])
        tokens = estimate["tokens"][role]
        assert _close(tokens["prompt"], counted["tokens"][role]["prompt"])
        assert _close(tokens["completion"], counted["tokens"][role]["completion"])
        assert _close(tokens["prompt"], sent[role]["prompt_tokens"])
        assert _close(tokens["completion"], sent[role]["completion_tokens"])
    assert _close(estimate["kept"], counted["kept"]) and counted["kept"] > 0
    assert _close(estimate["gpu_hours"]["total"], counted["gpu_hours"]["total"])
    assert counted["per_kept"]["tokens"] == pytest.approx(counted["tokens"]["total"] / counted["kept"], rel=1e-3)

    # The same run planned at ten times the seeds and on other GPUs scales as it should.
    config.write_text(f"run_dir: {tmp_path / 'next'}\nseeds: {{n: 80}}\ngenerate: {{turns: 2, attempts: 4}}\n")
    rc, out, err = cli("plan", config, "--from-run", run_dir, "--json", "--gpus", "4")
    assert rc == 0, err
    bigger = json.loads(out)["estimate"]
    assert _close(bigger["requests"]["teacher"], 10 * estimate["requests"]["teacher"])
    assert _close(bigger["wall_hours"], bigger["gpu_hours"]["total"] / 4)


def test_a_plan_without_a_run_uses_the_defaults_and_reads_its_config(cli, tmp_path):
    config = tmp_path / "run.yaml"
    config.write_text(
        f"run_dir: {tmp_path}\nseeds: {{n: 100}}\ngenerate: {{turns: 3, attempts: 8, envs: [induction, fuzzing]}}\n"
        "plan: {valid_share: 0.5, teacher_completion_tokens: 1000, gpus: 2}\n"
    )
    rc, out, err = cli("plan", config, "--json", "--teacher-tokens-per-s", "1000")
    assert rc == 0, err
    plan = json.loads(out)
    estimate = plan["estimate"]
    assert plan["lineages"] == {"induction": 50, "fuzzing": 50} and "defaults" in plan["figures"]
    assert estimate["requests"] == {"teacher": 300, "student": 150, "total": 450}
    assert estimate["tokens"]["teacher"]["completion"] == 300 * 1000
    assert estimate["student_attempts"] == 150 * 8 and estimate["throughput"]["gpus"] == 2
    assert estimate["throughput"]["teacher_tokens_per_s"] == 1000.0  # a flag wins over the file
    rc, out, err = cli("plan", config)  # the table
    assert rc == 0 and "GPU-hours" in out and "per kept problem" in out


def test_plan_bad_inputs_are_one_line_exit_2(cli, tmp_path):
    rc, _, err = cli("plan", tmp_path / "missing.yaml")
    assert rc == 2 and "config file not found" in err and len(err.strip().splitlines()) == 1
    rc, _, err = cli("plan", "--from-run", tmp_path)
    assert rc == 2 and "no generate rows" in err and len(err.strip().splitlines()) == 1
    rc, _, err = cli("plan", "--valid-share", "1.5")
    assert rc == 2 and "valid_share" in err
