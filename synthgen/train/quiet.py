"""Keep `synthgen train`'s terminal output to what a user acts on.

Filtered: progress bars of weights, shards and dataset maps (they fill Slurm logs with carriage
returns) and deprecation notices about calls the libraries make to each other (nothing a user can
change). The Trainer's dict of every metric is one line per logging step (`ProgressLine`); the
full metrics still go to `<output>/trainer_log.jsonl` and to the `report_to` trackers.
"""

from __future__ import annotations

import logging
import time
import warnings

from transformers import TrainerCallback

log = logging.getLogger("synthgen.train")


def quiet_libraries() -> None:
    """Progress bars off and the libraries' warnings about their own internals ignored, for this process."""
    # transformers 5 deprecates a name that TRL 1.16 still calls on every step.
    warnings.filterwarnings("ignore", message=r".*`is_gradient_checkpointing` is deprecated.*", category=FutureWarning)
    import datasets
    import transformers
    from huggingface_hub.utils import disable_progress_bars

    transformers.utils.logging.disable_progress_bar()
    datasets.disable_progress_bars()
    disable_progress_bars()


# What the one-line progress shows, in order: (log key, label, format).
SHOWN = (
    ("reward", "reward", "{:.3f}"),
    ("clip_ratio/region_mean", "clipped", "{:.3f}"),
    ("entropy", "entropy", "{:.3f}"),
    ("learning_rate", "lr", "{:.3g}"),
)


class ProgressLine(TrainerCallback):
    """One log line per logging step: step, reward, clip fraction, entropy, lr, seconds per step, time left."""

    def __init__(self):
        self.started: float | None = None
        self.first_step = 0

    def on_train_begin(self, args, state, control, **kwargs):
        self.started, self.first_step = time.monotonic(), state.global_step

    def on_log(self, args, state, control, logs=None, **kwargs):
        if not logs or not state.is_world_process_zero or "train_runtime" in logs:
            return
        parts = [f"step {state.global_step}/{state.max_steps}"]
        parts += [
            f"{label} {fmt.format(logs[key])}" for key, label, fmt in SHOWN if isinstance(logs.get(key), (int, float))
        ]
        done = state.global_step - self.first_step
        if self.started is not None and done > 0:
            per_step = (time.monotonic() - self.started) / done
            left = per_step * (state.max_steps - state.global_step)
            parts.append(f"{per_step:.2f} s/step, {_duration(left)} left")
        log.info(" | ".join(parts))


def _duration(seconds: float) -> str:
    minutes, _ = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    if days:
        return f"{days}d {hours}h"
    return f"{hours}h {minutes:02d}m" if hours else f"{minutes}m"


def install_progress(trainer) -> None:
    """Replace the Trainer's metric printout (or tqdm bar) with `ProgressLine`."""
    from transformers.trainer_callback import PrinterCallback, ProgressCallback

    trainer.remove_callback(PrinterCallback)
    trainer.remove_callback(ProgressCallback)
    trainer.add_callback(ProgressLine())
