"""The pipeline as Slurm jobs: sbatch templates, rendering, submission, server readiness.

    synthgen --config run.yaml slurm pipeline --dry-run   # print the scripts, submit nothing
    synthgen --config run.yaml slurm generate             # submit the shards not finished yet

`render` turns `SlurmSettings` (config section `slurm`) into scripts from `templates/`;
`submit` writes them to `<run_dir>/slurm/` with a copy of the config and calls `sbatch`;
`ready` is the readiness poll the scripts run before they send work to a server.
Nothing here is imported by the other stages, and importing it does no work.
"""
