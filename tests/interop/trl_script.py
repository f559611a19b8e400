"""A plain TRL GRPO script, as a researcher writes one outside `synthgen train` (tests/interop/test_trl.py).

    python trl_script.py TRL_EXPORT_DIR MODEL_DIR OUTPUT_DIR

Two GRPO steps of the tiny model on CPU with `synthgen.interop.trl.reward` on `train.parquet` of
`synthgen export --format trl`; prints the trainer's log history as one JSON line.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from datasets import load_dataset
from trl import GRPOConfig, GRPOTrainer

from synthgen.interop.trl import reward


def main(export_dir: str, model_dir: str, output_dir: str) -> None:
    data = load_dataset("parquet", data_files=str(Path(export_dir) / "train.parquet"), split="train")
    args = GRPOConfig(
        output_dir=output_dir,
        max_steps=2,
        per_device_train_batch_size=4,  # two prompts x G = 2 completions
        num_generations=2,
        max_completion_length=12,
        learning_rate=1e-5,
        beta=0.0,
        use_cpu=True,
        bf16=False,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        dataloader_num_workers=0,
        disable_tqdm=True,
        seed=0,
    )
    trainer = GRPOTrainer(model=model_dir, reward_funcs=[reward], train_dataset=data, args=args)
    trainer.train()
    print(json.dumps({"history": trainer.state.log_history, "global_step": trainer.state.global_step}), flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:4])
