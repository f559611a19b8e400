"""`synthgen train --online`: GRPO on TRL while a generation worker keeps the problem pool fresh.

    synthgen train --online --data RUN_DIR/bin --model PATH --recipe tiny-cpu --max-steps 50 \
        --online-teacher-url http://localhost:8000/v1 --output RUN_DIR/train-online

The same recipe, model, rewards (the environments' verifiers in the sandbox), periodic evaluation
and checkpoints as `synthgen train` (synthgen.train.run); what differs is where prompts come from:
the pool (synthgen.online.pool), which starts from `--data` (optional) and the worker's first
explorations, and changes at every step boundary. `--resume` picks the newest checkpoint that
holds the pool's state and continues with the same pool and schedule.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import time
from functools import partial
from pathlib import Path

from synthgen.errors import UserError

log = logging.getLogger(__name__)


def check_online(settings, world: int) -> None:
    """Combinations that cannot work, as one line each (exit 2)."""
    o = settings.online
    if o.student.backend == "inprocess" and world > 1:
        raise UserError(
            "--online-student-backend inprocess samples with this process's model; with several training "
            "processes serve the policy (--use-vllm --vllm-mode server, or --online-student-sync-every N)"
        )
    if o.student.backend == "inprocess" and o.worker.mode == "thread":
        raise UserError(
            "--online-worker-mode thread needs a server student: the in-process model cannot train and "
            "sample at once (use --online-worker-mode sync)"
        )
    if o.student.sync_every and o.student.backend != "server":
        raise UserError(
            "--online-student-sync-every writes checkpoints for a server student (--online-student-backend server)"
        )
    if settings.curriculum != "uniform":
        log.warning("online: --curriculum %s is ignored; the pool's buffer decides what is drawn", settings.curriculum)


def student_url(settings) -> str:
    """The policy's server: --online-student-url, or TRL's vLLM server in --vllm-mode server."""
    s = settings.online.student
    if s.base_url:
        return s.base_url
    if settings.use_vllm and settings.vllm_mode == "server" and settings.vllm_server_base_url:
        return settings.vllm_server_base_url.rstrip("/") + "/v1"
    raise UserError("--online-student-backend server needs --online-student-url (or --vllm-mode server)")


def online_checkpoint(settings, out: Path) -> Path | None:
    """The checkpoint to resume from: --resume-from, or the newest complete one (its pool state written last)."""
    from synthgen.online.session import STATE_FILE

    if settings.resume_from:
        path = Path(settings.resume_from)
        if not (path / "trainer_state.json").exists() or not (path / STATE_FILE).exists():
            raise UserError(f"not a checkpoint of an online run (no trainer_state.json and {STATE_FILE}): {path}")
        return path
    if not settings.resume:
        return None
    found = []
    for folder in out.glob("checkpoint-*") if out.is_dir() else []:
        tail = folder.name.rsplit("-", 1)[-1]
        if tail.isdigit() and (folder / "trainer_state.json").exists() and (folder / STATE_FILE).exists():
            found.append((int(tail), folder))
    if not found:
        log.warning("--resume: no complete online checkpoint in %s yet; starting from step 0", out)
        return None
    return max(found)[1]


def load_seeds(settings) -> dict[str, str]:
    """seed_id -> snippet of the finished seeds stage the explorations draw from."""
    from synthgen.store.layout import StageDir

    folder = settings.online.worker.seeds_dir
    stage = StageDir.at(folder, "seeds") if folder else StageDir(settings.run_dir, "seeds")
    if not stage.path.is_dir():
        if settings.online.buffer.explore > 0:
            raise UserError(
                f"online: explorations need seed snippets and {stage.path} has none: run `synthgen seeds` "
                "(or pass --online-worker-seeds-dir DIR, or --online-buffer-explore 0)"
            )
        return {}
    stage.require_complete()
    frame = stage.read(["seed_id", "text"]).unique("seed_id", keep="first").sort("seed_id")
    return dict(zip(frame["seed_id"].to_list(), frame["text"].to_list()))


def initial_rows(settings):
    """(rows the buffer starts from, held-out splits): --data as `synthgen train` plans it, if any."""
    from synthgen.train.selection import seeded_order, select_data

    if not settings.data and not (Path(settings.run_dir) / "bin").is_dir():
        return [], {}
    plan = select_data(settings)
    # A seeded order, round-robin over the bins, so that a small buffer spans the data's difficulties.
    by_bin: dict[str, list] = {}
    for row in seeded_order(plan.rows, settings.seed, "online"):
        by_bin.setdefault(row["difficulty"], []).append(row)
    rounds = itertools.zip_longest(*(by_bin[b] for b in sorted(by_bin)))
    return [row for round_ in rounds for row in round_ if row is not None], plan.heldout


def run_online(settings, *, scorer=None, prompt_fn=None, callbacks=None, evaluators=None) -> Path:
    from datasets import Dataset

    from synthgen.interop.records import student_prompt
    from synthgen.online.session import OnlineSession
    from synthgen.online.trainer import OnlineGRPOTrainer, PoolDataset
    from synthgen.train.evaluation import add_periodic_eval
    from synthgen.train.quiet import install_progress
    from synthgen.train.recipe import build_grpo_config, describe
    from synthgen.train.rewards import EnvScorer, SandboxReward
    from synthgen.train.run import (
        grpo_overrides,
        output_dir,
        recipe_and_model,
        recipe_origin,
        resolve_max_steps,
    )

    started = time.time()
    for name in ("httpx", "httpx2"):  # one INFO line per LLM request otherwise
        logging.getLogger(name).setLevel(logging.WARNING)
    check_online(settings, int(os.environ.get("WORLD_SIZE", "1")))
    recipe, model = recipe_and_model(settings)
    out = output_dir(settings)
    max_steps = resolve_max_steps(settings, recipe)
    prompt_fn = prompt_fn or student_prompt
    rows, heldout = initial_rows(settings)
    if settings.eval.steps and not (heldout or evaluators):
        raise UserError("--eval-every needs held-out problems: --eval-heldout-fraction F or --eval-heldout DIR")
    if recipe.get("dataloader_num_workers"):
        log.warning("online: dataloader_num_workers set to 0 (the pool grows in this process)")
    recipe["dataloader_num_workers"] = 0
    args = build_grpo_config(recipe, grpo_overrides(settings, out, max_steps, recipe), where=recipe_origin(settings))
    seeds = load_seeds(settings)
    own_pool = None
    if scorer is None:
        scorer = EnvScorer(settings.sandbox)
        sandbox = scorer.start()
    else:
        from synthgen.sandbox import SandboxPool, SandboxUnavailable

        try:
            sandbox = own_pool = SandboxPool.from_settings(settings.sandbox)
        except SandboxUnavailable as exc:
            raise UserError(f"sandbox unavailable: {str(exc).splitlines()[0]}") from None
    reward = SandboxReward(scorer, max_completion_length=args.max_completion_length)
    session = None
    try:
        placeholder = Dataset.from_list([{"prompt": [{"role": "user", "content": ""}], "registry_index": 0}])
        trainer = OnlineGRPOTrainer(
            model=model, reward_funcs=[reward], args=args, train_dataset=placeholder, callbacks=callbacks
        )
        reward.eos_token_id = getattr(trainer.processing_class, "eos_token_id", None)
        acc = trainer.accelerator
        session = OnlineSession(
            settings, out, trainer.geometry, prompt_fn, main=acc.is_main_process, world=acc.num_processes
        )
        session.pool.seeds = seeds
        trainer.session = session
        trainer.train_dataset = PoolDataset(session.pool)
        install_progress(trainer)
        add_periodic_eval(trainer, settings, args, scorer, prompt_fn, list(evaluators or []), heldout)
        checkpoint = online_checkpoint(settings, out)
        if checkpoint is not None:
            step = session.restore(checkpoint)
            log.info("online: resuming at step %d from %s: %s", step, checkpoint, session.pool.counts())
        else:
            session.log.clear()
            seeded = session.seed_pool(rows)
            log.info("online: the buffer starts with %d problem(s) of the data", seeded)
        if acc.is_main_process:
            session.driver = make_driver(settings, trainer, sandbox, out)
            session.driver.start()
        if checkpoint is None:
            session.fill(settings.online.worker.min_pool or trainer.geometry.prompts)
        log.info(
            "online: %s, %d steps, %d prompts x G=%d per round; %s",
            session.pool.counts(),
            args.max_steps,
            trainer.geometry.prompts,
            trainer.geometry.generations,
            describe(args),
        )
        trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint else None)
    finally:
        final = None
        if session is not None:
            final = session.finish(trainer.state.global_step, write=bool(session.pool.rows))
        if hasattr(scorer, "close"):
            scorer.close()
        if own_pool is not None:
            own_pool.close()
    trainer.save_model(str(out))
    if acc.is_main_process:
        summary = dict(model=model, online=final, max_steps=max_steps, global_step=trainer.state.global_step)
        resumed = str(checkpoint) if checkpoint else None
        summary |= dict(resumed_from=resumed, grpo=describe(args), seconds=round(time.time() - started, 1))
        (out / "train_summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return out


def make_driver(settings, trainer, sandbox, out: Path):
    """The worker driver with its student: the trainer's model or the policy's server."""
    from synthgen.llm.settings import RoleSettings, StudentSettings
    from synthgen.online.drivers import WorkerDriver
    from synthgen.online.student import InProcessStudent, ServerStudent
    from synthgen.turns.settings import TurnLoopSettings

    o = settings.online
    max_tokens = o.student.max_tokens or trainer.args.max_completion_length
    if o.student.backend == "server":
        role = RoleSettings(
            base_url=student_url(settings),
            model=o.student.model or str(settings.model),
            reasoning_effort=None,
            temperature=o.student.temperature,
            max_tokens=max_tokens,
            timeout_s=o.student.timeout_s,
        )
        name, cache = role.model, out / "online" / "cache" / "student.sqlite"
        make_student = partial(ServerStudent, role, o.llm, max_in_flight=o.max_in_flight, cache_path=cache)
    else:
        name = "policy"
        make_student = partial(InProcessStudent, trainer, temperature=o.student.temperature, max_tokens=max_tokens)

    turn_settings = TurnLoopSettings(
        attempts=o.accept.attempts,
        seed=settings.seed,
        teacher=o.teacher,
        student=StudentSettings(model=name, reasoning_effort=None),
        sandbox=settings.sandbox,
        env=o.env,
        progress=False,
    )
    return WorkerDriver(o, turn_settings, sandbox, make_student, out / "online" / "cache", settings.settings_hash())
