"""The train stage: GRPO on binned problems under a curriculum, on TRL's GRPOTrainer.

`run` is the stage and `command` what the CLI calls; `selection` and `data` choose and read the
problems; `curriculum` and `frontier` give the draw its weights, `trainer` draws and records
per bin, `rewards` scores in the sandbox, `recipe` builds GRPOConfig; `async_run` is `--async` on
TRL's AsyncGRPOTrainer. Nothing here is imported by `synthgen --help`: torch and TRL load only
when training starts.
"""
