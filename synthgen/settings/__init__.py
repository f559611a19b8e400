"""The settings machinery: strict pydantic models, YAML/TOML config files, flags over files, a hash.

Each command's settings live beside the code that uses them (`synthgen/<package>/settings.py`);
`base` holds the loading, merging and hashing they all share and `shared` the pieces every stage
has (run dir, shards, inputs, environments). A config file mirrors the CLI: top-level keys that every stage
understands (`run_dir`, `seed`) and one section per command whose keys are that command's flags
with underscores, e.g.

    run_dir: data/runs/demo
    seeds: {n: 64, min_lines: 25}
    generate: {turns: 6, attempts: 32, teacher: {base_url: "http://gpu01:8000/v1"}}
"""
