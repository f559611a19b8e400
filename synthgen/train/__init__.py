"""The train stage: GRPO on binned problems under a curriculum, on TRL's GRPOTrainer.

Modules: `data` (binned Parquet -> student prompts), `rewards` (sandbox-verified rewards),
`sampler` (curriculum sampler in TRL's group layout), `trainer` (GRPOTrainer subclass, per-bin
metrics, checkpoint state), `recipe` (paper defaults + YAML recipes -> GRPOConfig), `run` (the
stage), `tiny` (an offline tiny model for tests and demos). Nothing here is imported by
`synthgen --help`: torch and TRL load only when training starts.
"""
