"""Run inside verl's venv (tests/interop/test_readme_trainers.py): the README's verl command line, as verl reads it.

    python readme_verl_script.py OVERRIDES_JSON

The overrides are the README command's `key=value` arguments (the model path pointed at a tiny local
model). verl's trainer composes them with its own Hydra config, then builds the dataset, the reward
function and the sampler from that config; this script does the same up to the first batch and prints
one JSON line: the dataset's length, the first batch's indices and the reward of one nonsense answer.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(overrides_json: str) -> None:
    import verl
    from hydra import compose, initialize_config_dir
    from verl.experimental.reward_loop import migrate_legacy_reward_impl
    from verl.trainer.main_ppo import create_rl_dataset, create_rl_sampler
    from verl.trainer.ppo.reward import get_custom_reward_fn
    from verl.utils import hf_tokenizer

    overrides = json.loads(overrides_json)
    with initialize_config_dir(config_dir=str(Path(verl.__file__).parent / "trainer" / "config"), version_base=None):
        config = migrate_legacy_reward_impl(compose(config_name="ppo_trainer", overrides=overrides))
    tokenizer = hf_tokenizer(config.actor_rollout_ref.model.path)
    dataset = create_rl_dataset(config.data.train_files, config.data, tokenizer, None, is_train=True)
    sampler = create_rl_sampler(config.data, dataset)
    batch = list(sampler)[: config.data.train_batch_size]
    score = get_custom_reward_fn(config)
    row = dataset.dataframe[0]
    result = score(
        data_source=row["data_source"],
        solution_str="no idea",
        ground_truth=row["reward_model"]["ground_truth"],
        extra_info=row["extra_info"],
    )
    print(json.dumps({"rows": len(dataset), "batch": batch, "reward": result}, sort_keys=True), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
