"""`synthgen verify` on model code whose values and errors hold lone surrogates: it finishes, exit 0."""

from __future__ import annotations

import json

CODE = "def f(x):\n    if x < 0:\n        raise ValueError('\\ud800')\n    return '\\ud800' * x\n"


def test_verify_shows_surrogates_escaped(cli, tmp_path):
    answer = tmp_path / "answer.txt"
    answer.write_text('```output\n"x"\n```\n')
    returns, raises = tmp_path / "returns.json", tmp_path / "raises.json"
    returns.write_text(json.dumps({"env": "deduction", "code": CODE, "inputs": ["2"]}))
    raises.write_text(json.dumps({"env": "deduction", "code": CODE, "inputs": ["-1"]}))
    rc, out, err = cli("verify", returns, answer)
    assert rc == 0, err
    assert "gold output: '\\ud800\\ud800'" in out and out.rstrip().endswith("differs from the gold output")
    rc, out, err = cli("verify", raises, answer)
    assert rc == 0, err
    assert "validation: execution_error" in out and "ValueError: \\ud800 (line 3)" in out
