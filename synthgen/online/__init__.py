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

What each paper states, and where synthgen departs from it (every number is a setting):

SvS (Liang et al., self-play with variational problem synthesis). States: the policy (G = 8)
synthesises variants of problems it solves 12.5%-50% of the time, from its own correct solutions;
the band [12.5%, 62.5%] of the policy's group accuracy on a variant is the *synthesizer's* reward
(1 inside, 0 outside: too easy usually means the answer leaked into the text), while the variants
themselves join the solver's training whenever 0 < accuracy < 1 (the only ones with a GRPO
signal). Here: the band is an *admission gate* (our reading, not SvS's rule): a candidate joins
the pool only when its pass rate over `accept.attempts` = 8 policy answers lies in [12.5%, 62.5%],
so the pool holds none of the problems SvS would train on at 62.5%-87.5%; `accept.high` 0.875
(with 8 answers, every accuracy strictly between 0 and 1) gives SvS's training rule instead. No
synthesizer is rewarded: the variants are written by the separate teacher (the paper's multi-turn
loop), not by the policy, and from the problem and the policy's answers (solved and failed) rather
than from one correct solution, because the teacher here is a stronger model writing executable
problems whose gold outputs come from running its code. Which problems get variants is Frontier
Learning's mutation rule below, not SvS's [12.5%, 50%] filter; a candidate that misses the band is
mutated again (up to `accept.max_turns` turns) rather than dropped, since the paper's loop showed
that the teacher lands more problems when told how the student did.

Frontier Learning (Faro et al.). States: a buffer of B_max = 100 levels (generator
configurations), problem regret 1[s >= 1] - s/n, level regret averaged over a window of n_w = 16
problems, priority = regret + lambda_s (t - t_last) with lambda_s = 0.05, R_0 = 0.5, n_l = 4 levels
per step drawn by a Zipf distribution over priority rank (T_z = 1), each slot replaced by a
uniformly random new level with probability phi = 0.3 and otherwise mutated with p_inf = 0.4
(success in (0.05, 0.95)), p_easy = 0.25 (> 0.95), p_hard = 0.02 (< 0.05), p_uns = 0, the new
level used in the same batch; admitting into a full buffer evicts the lowest priority. Here: all
of those numbers are the defaults. A level is one problem (a synthgen problem has no generator
to draw fresh instances from), so the window holds the problem's last 16 rollout groups (G
completions each) and each drawn slot is one prompt; the draw uses the round as t. A new level
costs a teacher lineage (minutes for gpt-oss at high effort) and must pass SvS's gate, so
exploration and mutation do not replace the slot in the same batch: the slot trains on the drawn
problem and the decision becomes a teacher request; what the teacher gets accepted joins the
buffer at a later step boundary, its acceptance group seeding its window. Exploration therefore
costs teacher budget, not training slots, and no untested random problem is trained on. Beyond
the paper (the issue asks for it): a problem whose windowed success exceeds 0.95 (over >= 4 groups,
or when it is the lowest priority a full buffer evicts) is mastered and retires, and its lineage
asks the teacher for a harder variant with probability `respawn`. Advantages stay the paper's
(reward minus group mean, no scaling); Frontier Learning's mean-absolute-deviation scaling is not
adopted.

SCALER. States: per environment, d(0) = 0 and d <- clip(d + beta (acc - tau), 0, D) from the
accuracy on the step's k instances; a real d is realised as h = round(k (d - floor d)) instances at
floor(d) + 1 and k - h at floor(d); an environment retires when the least-squares slope of d over
K_slope steps is <= 0, when accuracy is 0 for K_zero steps, or d = D for K_sat steps, and retired
environments are re-admitted later (the replacement keeps the active set's size). The excerpt
gives no values for beta, tau, D or the K's: the defaults here (beta 0.5, tau 0.375, D 4,
K_slope 50, K_zero 10, K_sat 10, re-admission after 50 rounds) are ours. Here: acc is the
policy's training accuracy on the environment's rollouts of the round; a level is a slice of
SvS's band (D + 1 slices, level 0 the easiest) that the teacher's request aims at (the paper's
progression strategy is chosen against that slice); curation decides which environments get
teacher budget (new requests), while sampling stays with the Frontier buffer; with four
environments there is no pool to replace from, so re-admission is by time and the last active
environment never retires.
"""
