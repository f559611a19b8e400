"""`train --async` (TRL's AsyncGRPOTrainer) on CPU, up to where it needs a GPU and a vLLM server.

What runs here: the config built from synthgen's settings (each mapped field), the refusals, the
curriculum sampler laid out as the prompt order that TRL's rollout process walks (through TRL's
own `_repeat_iterator`), the sandboxed reward pickled as TRL's spawned process receives it and
scored through TRL's own `_score_group`, TRL's whole rollout loop (in a thread) against a stand-in
for vLLM's token-level /v1/completions (tests/helpers/token_server.py), the dry run through the CLI,
and the trainer built with TRL's seams for a rollout worker and a weight transfer. What does not:
generation on vLLM itself, the spawned rollout process, the NCCL weight sync and the loss (TRL's
tree attention runs on a CUDA flash-attention kernel); bench/train_async.py runs those on a GPU.
"""

from __future__ import annotations

import asyncio
import contextlib
import pickle
import queue
import time
import types

import pytest

pytest.importorskip("trl")
pytest.importorskip("trl.experimental.async_grpo")

from synthgen.errors import UserError  # noqa: E402
from synthgen.train.settings import TrainSettings  # noqa: E402


def settings(binned_dir, tiny_model, tmp_path, **more) -> TrainSettings:
    base = dict(
        data=[str(binned_dir)],
        model=str(tiny_model),
        recipe="tiny-cpu",
        curriculum="reverse-medium",
        max_steps=6,
        output=str(tmp_path / "out"),
        async_grpo=True,
    )
    return TrainSettings(**{**base, **more})


def test_every_mapped_field_comes_from_the_settings_or_the_recipe(binned_dir, tiny_model, tmp_path):
    from synthgen.train.async_run import ASYNC_CARRIED, prepare

    s = settings(
        binned_dir,
        tiny_model,
        tmp_path,
        seed=7,
        learning_rate=3e-6,
        num_generations=4,
        per_device_train_batch_size=8,
        gradient_accumulation_steps=2,
        max_completion_length=10,
        save_steps=3,
        logging_steps=2,
        report_to=["tensorboard"],
        vllm_server_base_url="http://gpu07:8123",
        max_staleness=2,
    )
    args = prepare(s).args
    expected = {
        "output_dir": str(tmp_path / "out"),
        "max_steps": 6,
        "seed": 7,
        "learning_rate": 3e-6,
        "lr_scheduler_type": "constant_with_warmup",  # the paper's defaults, not TRL async's "constant"
        "warmup_steps": 0.02,
        "num_generations": 4,
        "temperature": 1.0,
        "epsilon": 0.2,
        "epsilon_high": 0.25,  # TRL async's default would be epsilon (0.2)
        "per_device_train_batch_size": 8,
        "gradient_accumulation_steps": 2,
        "max_completion_length": 10,
        "save_steps": 3,
        "logging_steps": 2,
        "report_to": ["tensorboard"],
        "vllm_server_base_url": "http://gpu07:8123",
    }
    assert set(expected) == set(ASYNC_CARRIED)
    got = {k: getattr(getattr(args, k), "value", getattr(args, k)) for k in expected}
    assert got == expected
    assert args.max_staleness == 2
    assert args.bf16 is False and args.use_cpu is True  # the recipe's keys that AsyncGRPOConfig shares


def test_the_paper_recipe_drops_the_synchronous_trainers_keys(binned_dir, tiny_model, tmp_path):
    from synthgen.train.async_run import describe_setup, prepare

    p = prepare(settings(binned_dir, tiny_model, tmp_path, recipe="qwen3-8b-base", max_steps=40), dry_run=True)
    assert p.args.learning_rate == pytest.approx(1.4e-7) and p.args.warmup_steps == 800
    assert {"steps_per_generation", "use_vllm", "vllm_mode", "vllm_gpu_memory_utilization", "beta"} <= set(p.dropped)
    assert p.args.max_staleness == 4  # TRL's default when --max-staleness is not given
    text = describe_setup(p)
    assert "steps_per_generation" in text and "group std" in text


@pytest.mark.parametrize(
    "more, words",
    [
        ({"curriculum": "frontier"}, "use a schedule"),
        ({"steps_per_generation": 2}, "--steps-per-generation"),
        ({"num_iterations": 2}, "--num-iterations"),
        ({"vllm_mode": "colocate"}, "separate vLLM server"),
        ({"save_completions": "solved"}, "--save-completions"),
        ({"per_device_train_batch_size": 12}, "whole groups"),
    ],
)
def test_what_async_cannot_do_is_refused(binned_dir, tiny_model, tmp_path, more, words):
    from synthgen.train.async_run import prepare

    with pytest.raises(UserError, match=words):
        prepare(settings(binned_dir, tiny_model, tmp_path, **more))


def test_a_kl_term_in_the_recipe_is_refused(binned_dir, tiny_model, tmp_path):
    from synthgen.train.async_run import prepare

    recipe = tmp_path / "kl.yaml"
    recipe.write_text("extends: tiny-cpu\nbeta: 0.04\n", encoding="utf-8")
    with pytest.raises(UserError, match="no reference model"):
        prepare(settings(binned_dir, tiny_model, tmp_path, recipe=str(recipe)))


def test_the_prompt_order_is_the_curriculum_samplers_draw(binned_dir, tiny_model, tmp_path):
    from trl.experimental.async_grpo.async_rollout_worker import _AsyncRolloutLoop

    from synthgen.train.async_run import prepare, rounds_needed

    p = prepare(settings(binned_dir, tiny_model, tmp_path, max_steps=12))
    k, g = p.groups_per_step, p.args.num_generations
    assert k == 16 // 8  # tiny-cpu: 16 completions a step, G = 8
    rounds = rounds_needed(12, p.args.max_staleness)
    assert len(p.dataset) == rounds * k
    bins = list(p.dataset["difficulty"])
    for r in range(rounds):
        drawn = bins[r * k : (r + 1) * k]
        assert drawn == p.draw.history[r]  # row r*K+j is the sampler's j-th draw of round r
        weights = p.run.spec.schedule.weights_at(r)
        assert all(weights.get(b, 0) > 0 for b in drawn), (r, drawn, weights)
    assert set(bins[:k]) != set(bins[11 * k : 12 * k])  # reverse-medium moves between bins over the run

    # TRL's rollout process walks this dataset: each row is one group of G, in order.
    walker = types.SimpleNamespace(dataset=p.dataset, _dataset_iter=iter(p.dataset), num_generations=g)
    walk = _AsyncRolloutLoop._repeat_iterator(walker)
    groups = [next(walk) for _ in range(3 * k * g)]
    ids = [row["problem_id"] for _, row in groups]
    assert [gid for gid, _ in groups] == [i // g for i in range(3 * k * g)]
    assert ids[::g] == list(p.dataset["problem_id"][: 3 * k])


@pytest.fixture(scope="module")
def sandbox_ok():
    from synthgen.sandbox.settings import SandboxSettings
    from synthgen.train.rewards import EnvScorer

    probe = EnvScorer(SandboxSettings(workers=2))
    try:
        probe.start()
    except Exception as exc:  # a machine where no isolation level works
        pytest.skip(f"sandbox unavailable: {exc}")
    probe.close()


def test_the_reward_pickles_into_trls_process_and_scores_through_trls_code(
    sandbox_ok, binned_dir, tiny_model, tmp_path
):
    from trl.experimental.async_grpo.async_rollout_worker import (
        RolloutGroup,
        TrainingSequence,
        _AsyncRolloutLoop,
    )

    from synthgen.sandbox.settings import SandboxSettings
    from synthgen.sandbox.values import decode
    from synthgen.train.async_run import prepare
    from synthgen.train.rewards import EnvScorer, SandboxReward

    p = prepare(settings(binned_dir, tiny_model, tmp_path))
    row = p.dataset[0]
    gold = decode(row["outputs"][0])
    reward = pickle.loads(pickle.dumps(SandboxReward(EnvScorer(SandboxSettings(workers=2)), eos_token_id=0)))
    texts = [f"```output\n{gold}\n```", "```output\n-12345\n```", f"```output\n{gold}\n```", "no answer"]
    group = RolloutGroup(
        prompts=[row["prompt"]] * 4,
        reward_kwargs={k: [v] * 4 for k, v in row.items() if k != "prompt"},  # as TRL builds it
        completions=[[{"role": "assistant", "content": t}] for t in texts],
        completions_ids=[[5, 0]] * 4,
        completions_sequences=[[TrainingSequence([1, 5, 0], [0, 1, 1], [0.0, -1.0, -1.0], "r")]] * 4,
        tool_call_counts=[0] * 4,
        tool_failure_counts=[0] * 4,
        model_version=0,
        group_id=0,
        env_rewards=[None] * 4,
        rollout_rewards=[None] * 4,
    )
    loop = types.SimpleNamespace(
        reward_funcs=[reward], reward_func_names=["sandbox"], _env_reward_types=[], _provides_rollout_reward=False
    )
    try:
        samples = asyncio.run(_AsyncRolloutLoop._score_group(loop, group))
    finally:
        reward.scorer.close()
    assert [s.metrics["reward"] for s in samples] == [1.0, 0.0, 1.0, 0.0]
    assert samples[0].advantage > 0 > samples[1].advantage


def test_dry_run_through_the_cli_and_a_real_run_without_a_gpu(cli, binned_dir, tiny_model, tmp_path):
    base = ["train", "--async", "--data", binned_dir, "--model", tiny_model, "--recipe", "tiny-cpu"]
    base += ["--curriculum", "reverse-medium", "--max-steps", "4", "--output", tmp_path / "out"]
    rc, out, err = cli(*base, "--dry-run", "--vllm-server-url", "http://gpu07:8000", "--max-staleness", "1")
    assert rc == 0, err
    assert "AsyncGRPOTrainer" in out and "http://gpu07:8000" in out and "max_staleness=1" in out
    assert "prompt order: " in out and "step 0: medium x2" in out  # reverse-medium opens on medium
    assert "chat template is not one TRL's async trainer can parse" in out  # the tiny model's own template
    assert not (tmp_path / "out").exists()  # a dry run writes nothing
    import torch

    if torch.cuda.is_available():
        return
    rc, _, err = cli(*base)
    assert rc == 2 and err.strip().count("\n") == 0 and "CUDA GPU" in err


def test_a_trl_without_async_grpo_is_one_line_and_exit_2(cli, binned_dir, tiny_model, tmp_path, monkeypatch):
    monkeypatch.setattr("synthgen.train.async_run.ASYNC_MODULE", "trl.experimental.no_async_here")
    rc, _, err = cli(
        "train", "--async", "--dry-run", "--data", binned_dir, "--model", tiny_model, "--recipe", "tiny-cpu"
    )
    assert rc == 2 and err.strip().count("\n") == 0 and "lacks" in err


class _StandInWorker:
    """TRL's RolloutWorkerProtocol without a process or a server (TRL's own seam for tests)."""

    def __init__(self):
        self.rollout_buffer, self.metrics_queue = queue.Queue(), queue.Queue()

    def start(self): ...
    def stop(self): ...
    def update_model_version(self, version): ...
    def check_health(self, stale_after_s): ...


class _NoWeightSync:
    def init_weight_transfer(self): ...
    def pause(self): ...
    def send_weights(self, iterator): ...
    def resume(self): ...
    def destroy(self): ...


@pytest.mark.slow
def test_the_trainer_is_built_over_the_ordered_prompts(binned_dir, tiny_model, tmp_path, monkeypatch):
    import trl.experimental.async_grpo.async_grpo_trainer as trl_async

    from synthgen.train.async_run import build_trainer, prepare
    from synthgen.train.rewards import SandboxReward

    # The two calls TRL makes at construction that need CUDA (peak FLOPs) and the requests package.
    monkeypatch.setattr(trl_async, "get_peak_flops_per_device", lambda *a: None)
    monkeypatch.setattr(trl_async, "VLLMClient", lambda *a, **k: types.SimpleNamespace())
    p = prepare(settings(binned_dir, tiny_model, tmp_path, report_to=["none"]))
    reward = SandboxReward(lambda rows, texts, truncated: [0.0] * len(rows))
    trainer = build_trainer(p, reward, rollout_worker=_StandInWorker(), weight_transfer=_NoWeightSync())
    assert trainer.train_dataset["problem_id"] == p.dataset["problem_id"]
    assert trainer.args.max_inflight_tasks == p.args.max_staleness * 16  # staleness x completions a step
    assert trainer.args.ignore_data_skip is True and trainer.args.max_steps == 6
    assert any(type(c).__name__ == "TrainerLog" for c in trainer.callback_handler.callbacks)


def test_a_recipe_may_set_the_async_trainers_own_keys_and_a_typo_stops(binned_dir, tiny_model, tmp_path):
    from synthgen.train.async_run import prepare

    recipe = tmp_path / "async.yaml"
    recipe.write_text("extends: tiny-cpu\ndtype: bfloat16\nweight_sync_steps: 2\n", encoding="utf-8")
    args = prepare(settings(binned_dir, tiny_model, tmp_path, recipe=str(recipe))).args
    assert (args.dtype, args.weight_sync_steps) == ("bfloat16", 2)
    recipe.write_text("extends: tiny-cpu\nmax_stalenes: 2\n", encoding="utf-8")
    with pytest.raises(UserError, match="max_stalenes"):
        prepare(settings(binned_dir, tiny_model, tmp_path, recipe=str(recipe)))


def test_the_bench_says_why_it_cannot_run_and_exits_2(tiny_model):
    import subprocess
    import sys
    from pathlib import Path

    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU machine runs the bench itself")
    bench = Path(__file__).resolve().parents[2] / "bench" / "train_async.py"
    done = subprocess.run(
        [sys.executable, str(bench), "--model", str(tiny_model)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 2 and "cannot run here: no CUDA GPU" in done.stderr
    assert done.stderr.strip().count("\n") == 0


@pytest.mark.slow
def test_trls_rollout_loop_walks_the_order_and_scores_in_the_sandbox(sandbox_ok, binned_dir, tiny_model, tmp_path):
    """TRL's own rollout loop (in a thread here, not its spawned process) against a stand-in server."""
    import itertools
    import threading

    from transformers import AutoTokenizer
    from trl.chat_template_utils import qwen3_template
    from trl.experimental.async_grpo.async_rollout_worker import _AsyncRolloutLoop

    from synthgen.sandbox.settings import SandboxSettings
    from synthgen.sandbox.values import decode
    from synthgen.train.async_run import prepare
    from synthgen.train.rewards import EnvScorer, SandboxReward
    from tests.helpers.token_server import token_server

    p = prepare(settings(binned_dir, tiny_model, tmp_path))
    tok = AutoTokenizer.from_pretrained(tiny_model)
    tok.response_template = qwen3_template  # the tiny model's own template is not one TRL knows (a real run stops)
    end = tok.convert_tokens_to_ids("<|im_end|>")
    gold = {row["code"]: decode(row["outputs"][0]) for row in p.dataset}
    turn = itertools.count()

    def answer(prompt_ids):  # every other completion right
        text = tok.decode(prompt_ids)
        value = gold[next(c for c in gold if c in text)] if next(turn) % 2 == 0 else -12345
        return tok.encode(f"```output\n{value}\n```", add_special_tokens=False) + [end]

    scorer = EnvScorer(SandboxSettings(workers=2))
    reward = pickle.loads(pickle.dumps(SandboxReward(scorer, max_completion_length=64, eos_token_id=end)))
    g, want = p.args.num_generations, 3
    with token_server(answer) as (url, requests):
        loop = _AsyncRolloutLoop(
            model_name=str(tiny_model),
            dataset=p.dataset,
            reward_funcs=[reward],
            processing_class=tok,
            eos_token_ids=[end],
            rollout_buffer=queue.Queue(),
            model_version_value=types.SimpleNamespace(value=0),
            heartbeat_value=types.SimpleNamespace(value=0.0),
            failed_event=threading.Event(),
            exception_info_queue=queue.Queue(),
            metrics_queue=queue.Queue(),
            num_generations=g,
            max_inflight_tasks=g,  # one group at a time: groups arrive in the dataset's order
            vllm_server_url=url,
            max_tokens=64,
        )
        thread = threading.Thread(target=loop.run, daemon=True)
        thread.start()
        samples, deadline = [], time.monotonic() + 180
        try:
            while len(samples) < want * g and thread.is_alive() and time.monotonic() < deadline:
                with contextlib.suppress(queue.Empty):
                    samples.append(loop.rollout_buffer.get(timeout=1))
        finally:
            loop._loop.call_soon_threadsafe(loop._stop_event.set)
            thread.join(60)
            reward.scorer.close()
    assert not thread.is_alive() and not loop._failed_event.is_set() and len(samples) == want * g
    assert requests[0]["max_tokens"] == 64 and requests[0]["return_token_ids"] is True
    for s in samples:
        row = p.dataset[s.group_id]  # group i is row i of the curriculum order
        assert s.prompt == row["prompt"]
        text = s.completion[-1]["content"]
        assert s.metrics["reward"] == (1.0 if f"\n{gold[row['code']]}\n" in text else 0.0), text
    assert sorted({s.group_id for s in samples}) == list(range(want))
    assert {s.metrics["reward"] for s in samples} == {0.0, 1.0}
