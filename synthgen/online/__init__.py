"""`synthgen train --online`: the paper's teacher in the training loop, with the policy as its student.

Sancaktar et al. ("A Deep Dive into Scaling RL for Code Generation with Synthetic Data and
Curricula") generate offline against a fixed student. Here a generation worker runs beside GRPO
(TRL's GRPOTrainer) and keeps a problem pool at the policy's frontier:

    run.py        the entry point: recipe, model, rewards, evaluation and checkpoints as `train`
    trainer.py    OnlineGRPOTrainer: the pool's dataset and sampler, the scored rounds, the step boundary
    session.py    what a step boundary does; checkpoints and resume; multi-process broadcast
    pool.py       the pool: training set, buffer, draws, retirement, admissions, the log rows
    buffer.py     Frontier Learning's buffer (regret, priority, rank-based Zipf, eviction)
    controller.py SCALER's controller and environment curation
    worker.py     explore / mutate / respawn requests, their queue, a request made a job, and one
                  job: the paper's multi-turn loop (synthgen.turns.turn) with SvS's band as the gate
    student.py    the policy as student: in-process, or an OpenAI-compatible server that serves it
    drivers.py    the worker's thread: sync (at step boundaries) or thread mode (beside training)
    log.py        the Parquet log (synthgen.store.records.ONLINE_*)
    plan.py       `--dry-run`

What each paper states, and where synthgen departs from it: docs/online.md.
"""
