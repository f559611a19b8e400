"""The train stage: GRPO on binned problems under a curriculum, on TRL's GRPOTrainer.

Modules: `sources` (--data entries -> weighted sources), `plan` (sources -> env filter -> held-out
splits -> per-env budget, with `selection`), `data` (binned Parquet -> student prompts), `rewards`
(sandbox-verified rewards), `mix` and `sampler` (curriculum weights over source x bin, drawn in
TRL's group layout), `trainer` (GRPOTrainer subclass, per-bin metrics, checkpoint state),
`solve_rates` (per-round and cumulative solve rates), `evaluation` (periodic held-out pass@k),
`recipe` (paper defaults + named YAML recipes -> GRPOConfig), `async_config`, `async_feed` and
`async_run` (`--async`: TRL's AsyncGRPOTrainer, its config, the curriculum as prompt order),
`preflight` (one-line failures before anything loads), `quiet` (what the terminal shows), `run`
(the stage), `tiny` (an offline tiny model for tests and demos). Nothing here is imported by
`synthgen --help`: torch and TRL load only when training starts.
"""
