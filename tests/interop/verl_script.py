"""Run inside verl's own venv (tests/interop/test_verl.py): verl's code paths on a synthgen verl export.

    python verl_script.py EXPORT_DIR TOKENIZER_DIR ANSWERS_JSON

ANSWERS_JSON maps env -> [right completion, wrong completion]. Prints one JSON line per check:
  {"check": "dataset", ...}      verl's dataset class (from verl's own config) on train.parquet, real tokenizer
  {"check": "manager", ...}      the scores verl's reward managers computed, per env and answer
  {"check": "infra", ...}        what the managers do when the sandbox fails on one sample
  {"check": "sampler", ...}      the bins of the batches verl's dataloader drew through our sampler
Everything is composed and loaded the way verl's trainer does it (Hydra config, load_extern_object
through `pkg://`), so a renamed verl option or class fails here.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import torch


def emit(**fields) -> None:
    print(json.dumps(fields, sort_keys=True), flush=True)


def compose(overrides: list[str]):
    import verl
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from verl.experimental.reward_loop import migrate_legacy_reward_impl

    config_dir = str(Path(verl.__file__).parent / "trainer" / "config")
    with initialize_config_dir(config_dir=config_dir, version_base=None):
        config = hydra_compose(config_name="ppo_trainer", overrides=overrides)
    return migrate_legacy_reward_impl(config)  # what verl's main_ppo does first


def chat_ids(tokenizer, messages) -> list[int]:
    """The prompt's token ids as verl's agent loop makes them (transformers 5 returns a BatchEncoding)."""
    ids = tokenizer.apply_chat_template(list(messages), add_generation_prompt=True, tokenize=True)
    return list(ids["input_ids"] if hasattr(ids, "keys") else ids)


def batch_of(dataset, tokenizer, indices: list[int], responses: list[str]):
    """A DataProto as a rollout leaves it: left-padded prompts, right-padded responses, verl's non-tensor columns."""
    from verl import DataProto
    from verl.utils.dataset.rl_dataset import collate_fn

    items = collate_fn([dataset[i] for i in indices])
    prompts = [chat_ids(tokenizer, m) for m in items["raw_prompt"]]
    answers = [tokenizer.encode(r, add_special_tokens=False) + [tokenizer.eos_token_id] for r in responses]
    width_p, width_r = max(map(len, prompts)), max(map(len, answers))
    pad = tokenizer.pad_token_id
    prompt_ids = torch.tensor([[pad] * (width_p - len(p)) + list(p) for p in prompts])
    prompt_mask = torch.tensor([[0] * (width_p - len(p)) + [1] * len(p) for p in prompts])
    response_ids = torch.tensor([list(r) + [pad] * (width_r - len(r)) for r in answers])
    response_mask = torch.tensor([[1] * len(r) + [0] * (width_r - len(r)) for r in answers])
    tensors = {
        "prompts": prompt_ids,
        "responses": response_ids,
        "input_ids": torch.cat([prompt_ids, response_ids], dim=1),
        "attention_mask": torch.cat([prompt_mask, response_mask], dim=1),
    }
    non_tensors = {k: items[k] for k in ("data_source", "reward_model", "extra_info")}
    return DataProto.from_dict(tensors=tensors, non_tensors=non_tensors)


def scores_of(output, data) -> list[float]:
    """The score each sample got: the reward tensor's value at its last response token."""
    tensor = output["reward_tensor"] if isinstance(output, dict) else output
    return [float(row.sum()) for row in tensor]


def main(export_dir: str, tokenizer_dir: str, answers_json: str) -> None:
    from verl.trainer.main_ppo import create_rl_dataset, create_rl_sampler
    from verl.trainer.ppo.reward import get_custom_reward_fn, load_reward_manager
    from verl.utils import hf_tokenizer
    from verl.utils.dataset.rl_dataset import collate_fn
    from verl.workers.reward_manager import BatchRewardManager, NaiveRewardManager

    answers = json.loads(Path(answers_json).read_text())
    train = str(Path(export_dir) / "train.parquet")
    base = [
        f"data.train_files={train}",
        f"data.val_files={train}",
        f"actor_rollout_ref.model.path={tokenizer_dir}",
        "data.max_prompt_length=8192",
        "data.filter_overlong_prompts=True",  # runs the real tokenizer's chat template over every prompt
        "data.filter_overlong_prompts_workers=1",
        "data.dataloader_num_workers=0",
        "reward.custom_reward_function.path=pkg://synthgen.interop.verl",
    ]
    tokenizer = hf_tokenizer(tokenizer_dir)
    config = compose([*base, "reward.custom_reward_function.name=compute_score"])

    # 1. verl's dataset class, chosen by verl's config, on the export.
    dataset = create_rl_dataset([train], config.data, tokenizer, None, is_train=True)
    first = dataset[0]
    rendered = tokenizer.apply_chat_template(list(first["raw_prompt"]), add_generation_prompt=True, tokenize=False)
    emit(
        check="dataset",
        cls=type(dataset).__name__,
        rows=len(dataset),
        data_source=str(first["data_source"]),
        has_truth=bool(first["reward_model"]["ground_truth"]),
        difficulty=first["extra_info"]["difficulty"],
        prompt_in_template=first["raw_prompt"][0]["content"] in rendered,
        prompt_tokens=len(chat_ids(tokenizer, first["raw_prompt"])),
    )

    # 2. The reward managers, with the reward function verl loads from its config.
    rows = [dataset[i] for i in range(len(dataset))]
    by_env = {}
    for i, row in enumerate(rows):
        if row["extra_info"]["lineage_id"].startswith("example-"):
            by_env[row["extra_info"]["env"]] = i
    envs = sorted(answers)
    indices = [by_env[e] for e in envs for _ in (0, 1)]
    responses = [answers[e][k] for e in envs for k in (0, 1)]
    data = batch_of(dataset, tokenizer, indices, responses)
    labels = [[e, kind] for e in envs for kind in ("right", "wrong")]

    # verl 0.6's worker-side managers, each with the function verl's own config names for it.
    managers = {}
    for manager, cls, name in (
        ("legacy-naive", NaiveRewardManager, "compute_score"),
        ("legacy-batch", BatchRewardManager, "compute_score_batch"),
    ):
        score = get_custom_reward_fn(compose([*base, f"reward.custom_reward_function.name={name}"]))
        managers[manager] = cls(tokenizer=tokenizer, num_examine=0, compute_score=score)
        out = managers[manager](data, return_dict=True)
        emit(
            check="manager",
            manager=manager,
            labels=labels,
            scores=scores_of(out, data),
            keys=sorted(out["reward_extra_info"]),
        )

    # The trainer's own path in this verl: the reward loop's manager, built by load_reward_manager.
    loop_manager = load_reward_manager(config, tokenizer)
    loop = loop_manager.loop

    async def each():
        return await asyncio.gather(*(loop_manager.run_single(data[i : i + 1]) for i in range(len(data))))

    results = loop.run_until_complete(each())
    scores = [float(r["reward_score"]) for r in results]
    keys = sorted(results[0]["reward_extra_info"])
    emit(check="manager", manager=f"reward-loop-{type(loop_manager).__name__}", labels=labels, scores=scores, keys=keys)

    # What each manager does when the sandbox fails on a sample (the right contest answer, here): the
    # scorer reports `infra` for it, as a sandbox whose worker died does.
    from synthgen.envs.problem import Reward
    from synthgen.interop import scorer

    real_score = scorer.score
    failing = answers["contest"][0]

    def score_failing(truths, completions, truncated=None):
        rewards = real_score(truths, completions, truncated)
        return [Reward(None, "infra", "worker died") if c == failing else r for c, r in zip(completions, rewards)]

    scorer.score = score_failing
    try:
        raised = {}
        for name, call in (
            ("legacy-naive", lambda: managers["legacy-naive"](data, return_dict=True)),
            ("reward-loop", lambda: loop.run_until_complete(each())),
        ):
            try:
                call()
                raised[name] = None
            except Exception as exc:  # what verl lets through to its trainer
                raised[name] = type(exc).__name__
        out = managers["legacy-batch"](data, return_dict=True)
        emit(
            check="infra",
            labels=labels,
            raised=raised,
            batch_scores=scores_of(out, data),
            batch_infra=[float(x) for x in out["reward_extra_info"]["infra"]],
        )
    finally:
        scorer.score = real_score

    # 3. The curriculum sampler, created by verl from its config, drawn through verl's dataloader.
    from torchdata.stateful_dataloader import StatefulDataLoader

    steps, batch_size = 6, 4
    sampler_config = compose(
        [
            *base,
            "reward.custom_reward_function.name=compute_score",
            f"data.train_batch_size={batch_size}",
            "data.sampler.class_path=pkg://synthgen.interop.verl",
            "data.sampler.class_name=CurriculumSampler",
            "+data.sampler.curriculum=classic",
            f"+data.sampler.steps={steps}",
            "+data.sampler.seed=3",
        ]
    )
    sampler = create_rl_sampler(sampler_config.data, dataset)
    loader = StatefulDataLoader(
        dataset=dataset, batch_size=batch_size, num_workers=0, drop_last=True, collate_fn=collate_fn, sampler=sampler
    )
    batches = list(loader)
    emit(
        check="sampler",
        cls=type(sampler).__name__,
        batches=len(loader),
        bins=[[info["difficulty"] for info in batch["extra_info"]] for batch in batches],
        rows=[[int(info["index"]) for info in batch["extra_info"]] for batch in batches],
        all_bins=[row["extra_info"]["difficulty"] for row in rows],
        weights={str(s): sampler.weights(s) for s in range(steps)},
    )


if __name__ == "__main__":
    main(*sys.argv[1:4])
