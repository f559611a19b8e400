"""`synthgen train --online --dry-run`: the plan of an online run (servers, rates, budgets); nothing runs.

It reads what a run would read (the data, the seeds, the recipe) and contacts no server. A
problem the run would stop on is listed under "problems" and the command then exits 2.
"""

from __future__ import annotations

from synthgen.errors import UserError


def _grpo(settings):
    """(prompts per round, G, max_steps, completion length) from the recipe as the run would build it."""
    from synthgen.train.recipe import build_grpo_config, load_recipe, require_learning_rate
    from synthgen.train.run import grpo_overrides, output_dir, resolve_max_steps

    recipe = load_recipe(settings.recipe)
    where = f"recipe {settings.recipe}" if settings.recipe else "no --recipe"
    recipe["learning_rate"] = require_learning_rate(recipe, settings.learning_rate, where)
    max_steps = resolve_max_steps(settings, recipe)
    args = build_grpo_config(recipe, grpo_overrides(settings, output_dir(settings), max_steps, recipe), where=where)
    g = args.num_generations
    return args.generation_batch_size // g, g, max_steps, args.max_completion_length


def describe_plan(settings) -> str:
    from synthgen.online.run import initial_rows, load_seeds, student_url
    from synthgen.train.run import output_dir

    o, problems = settings.online, []
    b, a, c, w, s = o.buffer, o.accept, o.controller, o.worker, o.student

    def read(what, otherwise):
        """`what(settings)`, or `otherwise` with the problem that stops the run listed."""
        try:
            return what(settings)
        except (UserError, ImportError) as exc:
            problems.append(str(exc))
            return otherwise

    prompts, g, max_steps, completion = read(_grpo, (None, settings.num_generations or 8, settings.max_steps, None))
    rows, heldout = read(initial_rows, ([], {}))
    seeds = len(read(load_seeds, {}))
    initial = min(len(rows), b.capacity if w.initial is None else w.initial)
    lines = ["online training plan (dry run: no server contacted, nothing trained)", ""]
    lines.append(f"model {settings.model or '(from the recipe)'}, recipe {settings.recipe}, {max_steps} steps")
    lines.append(f"output {output_dir(settings)}; the pool's log in {output_dir(settings) / 'online'}")
    lines += ["", "servers"]
    lines.append(
        f"  teacher  {o.teacher.base_url}  model {o.teacher.model}, reasoning {o.teacher.reasoning_effort}, "
        f"up to {o.teacher.max_tokens} tokens"
    )
    if s.backend == "inprocess":
        lines.append("  student  the policy in this process (the trainer's model, sampled at step boundaries)")
    else:
        url = read(student_url, None)
        sync = f"a checkpoint written every {s.sync_every} steps" if s.sync_every else "the live policy"
        lines.append(f"  student  {url or '(no URL)'}  model {s.model or settings.model}: {sync}")
    lines.append(f"  student sampling: temperature {s.temperature}, up to {s.max_tokens or completion} tokens")
    lines += ["", "rates"]
    if prompts:
        low = prompts * (b.explore + (1 - b.explore) * min(b.mutate_hard, b.mutate_unseen))
        high = prompts * (b.explore + (1 - b.explore) * b.mutate_informative)
        lines.append(f"  each round trains on {prompts} prompts x G = {g} completions")
        lines.append(f"  requests asked per round: {low:.2f}-{high:.2f} (explore phi = {b.explore}, mutate by class)")
    lines.append(
        f"  worker: {w.mode}, a round every {w.refresh_every} step(s), at most {w.budget} teacher requests "
        f"{'running at once' if w.mode == 'thread' else 'per round'}; queue of at most {w.max_pending}"
    )
    lines += ["", "budgets"]
    rounds = (max_steps or 0) // w.refresh_every
    if w.mode == "sync":
        lines.append(f"  at most {rounds * w.budget} requests over the run ({rounds} worker rounds x {w.budget})")
    lines.append(
        f"  a request: up to {a.max_turns} teacher turns, each with {a.attempts} policy answers "
        f"(at most {a.max_turns * (a.attempts + 1)} LLM samples)"
    )
    lines += ["", "rules"]
    lines.append(f"  accept (SvS): the policy's pass rate over {a.attempts} answers in [{a.low}, {a.high}]")
    lines.append(
        f"  buffer (Frontier Learning): {b.capacity} problems, regret over {b.window} groups (R0 {b.initial_regret}), "
        f"priority + {b.staleness} per stale round, Zipf T {b.zipf_temperature}; mutate informative/easy/hard/"
        f"unseen {b.mutate_informative}/{b.mutate_easy}/{b.mutate_hard}/{b.mutate_unseen} "
        f"(informative in [{b.informative_low}, {b.informative_high}])"
    )
    lines.append(
        f"  retire: success above {b.retire_at} over at least {b.retire_min_groups} groups; "
        f"a harder variant asked with probability {b.respawn}"
    )
    width = (a.high - a.low) / (c.max_level + 1)
    slices = [f"{lv}: {a.high - (lv + 1) * width:.3f}-{a.high - lv * width:.3f}" for lv in range(c.max_level + 1)]
    bands = ", ".join(slices)
    lines.append(f"  controller (SCALER): beta {c.beta}, tau {c.tau}, D {c.max_level}; target slices {bands}")
    lines.append(
        f"  retire an environment: slope <= 0 over {c.k_slope} rounds, accuracy 0 for {c.k_zero}, d = D for {c.k_sat}; "
        f"back after {c.readmit_after} rounds"
    )
    lines += ["", "start"]
    lines.append(
        f"  {initial} problem(s) of the data start the buffer ({len(rows)} available); held-out splits "
        f"{ {k: len(v) for k, v in heldout.items()} or 'none' }"
    )
    lines.append(f"  {seeds} seed snippet(s) for explorations; environments {', '.join(o.envs) or 'all'}")
    if problems:
        lines += ["", "problems"] + [f"  {p}" for p in problems]
    text = "\n".join(lines)
    if problems:
        print(text)
        raise UserError(problems[0])
    return text
