"""One module per CLI command; each exposes `register(app)`. Imports here must stay cheap."""

from synthgen.commands import (
    bin_,
    chain,
    demo,
    filter_,
    generate,
    prompts,
    sandbox,
    scripted_server,
    seeds,
    slurm,
    stats,
    train,
    verify,
)

REGISTERED = [
    seeds.register,
    generate.register,
    filter_.register,
    bin_.register,
    chain.register,
    train.register,
    slurm.register,
    stats.register,
    demo.register,
    verify.register,
    prompts.register,
    sandbox.register,
    scripted_server.register,
]
