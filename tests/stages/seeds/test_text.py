"""`synthgen seeds` on user files whose text holds lone surrogates: stored escaped, never a crash."""

from __future__ import annotations

import json

from synthgen.store.layout import StageDir


def test_surrogate_escapes_in_a_solutions_file_are_stored_escaped(cli, tmp_path):
    lines = [f"def step_{k}(x):\n    return x + {k}  # \ud800 marker" for k in range(15)]
    code = "\n".join(lines) + "\n"  # 30 lines, each function's comment holds a lone surrogate
    path = tmp_path / "sol.jsonl"
    path.write_text(json.dumps({"problem_id": "p\udfff", "code": code}) + "\n")  # json.dumps writes \ud800 escapes
    rc, _, err = cli("seeds", "solutions", path, "--run-dir", tmp_path / "r", "--n", "5")
    assert rc == 0, err
    seeds = StageDir(tmp_path / "r", "seeds").read()
    assert seeds.height >= 1
    assert seeds["text"].str.contains("# \\ud800 marker", literal=True).all()
    assert seeds["origin"].str.contains("#p\\udfff", literal=True).all()
