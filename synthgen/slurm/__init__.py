"""The pipeline as Slurm jobs: sbatch templates, rendering, submission, server readiness.

    synthgen --config run.yaml slurm pipeline --dry-run   # print the scripts, submit nothing
    synthgen --config run.yaml slurm generate             # submit the shards not finished yet

Nothing here is imported by the other stages, and importing it does no work.
"""
