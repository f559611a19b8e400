"""Pipeline stages: each module has `run(settings)` and reads/writes one stage folder of a run."""
