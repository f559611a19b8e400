"""The README's real-run section, run as written against the scripted server standing in for vLLM.

Only what cannot run here is replaced: the vLLM command (the scripted server, not a model,
serves the same model name instead), the starcoderdata shards (a few written by the test), the
seed count (small), the server address, the upload to the Hub, and the training step (it needs a
model from the Hub; the README test resolves its settings instead). Every synthgen command runs as
its own process, flags as written. Then what a real server would have been sent, and what the rows
record, must be the paper's settings: the teacher at high reasoning effort, the student at low
effort with n = 32 attempts, six turns per seed; and the chains must start in the paper's hard band.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from synthgen.store.files import read_metadata
from synthgen.store.layout import StageDir

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[1]
SYNTHGEN = str(Path(sys.executable).parent / "synthgen")
MODEL = "openai/gpt-oss-120b"
# One seed per file: enough seeds that a few kept problems land in the chains' hard band.
FILES_PER_SHARD = 12


def real_run_commands() -> list[str]:
    """The shell lines of the first bash block after the README heading that names a real run."""
    text = (ROOT / "README.md").read_text()
    heading = re.search(r"^#+ .*real run.*$", text, re.M | re.I)
    assert heading, "the README has no section about a real run"
    block = re.search(r"```bash\n(.*?)```", text[heading.end() :], re.S)
    assert block, "the README's real-run section has no bash block"
    lines, pending = [], ""
    for line in block.group(1).splitlines():
        line = line.split(" #")[0].rstrip() if not line.lstrip().startswith("#") else ""
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line, pending = (pending + line).strip(), ""
        if line:
            lines.append(line)
    return lines


def _starcoder_shards(folder: Path) -> list[str]:
    folder.mkdir(parents=True)
    paths = []
    for part in range(2):
        files = []
        for i in range(FILES_PER_SHARD):
            body = [f"def step_{part}_{i}_{k}(x, y):\n    return (x * {k} + y) % {i + 7}" for k in range(20)]
            files.append("\n\n".join(body) + "\n")
        path = folder / f"train-{part:05d}-of-00002.parquet"
        pq.write_table(pa.table({"content": files, "max_stars_repo_name": [f"org/r{part}"] * FILES_PER_SHARD}), path)
        paths.append(str(path))
    return paths


def _adapt(words: list[str], url: str, shards: list[str]) -> list[str] | None:
    """The command as this machine runs it, or None for a step that cannot run here."""
    if not words or words[0] in ("vllm", "source", "cd", "export") or words[0].endswith("activate"):
        return None
    if "synthgen" not in words[0] or words[1:2] == ["train"]:
        return None
    out: list[str] = [SYNTHGEN]
    skip = False
    for word in words[1:]:
        if skip:
            skip = False
            continue
        if word.startswith("http://") or word.startswith("https://"):
            out.append(url)
        elif "*" in word and word.endswith(".parquet"):
            out.extend(shards)
        elif word == "--n":
            out += ["--n", "24"]
            skip = True
        elif word == "--push-to-hub":  # the upload needs a login and the network; the folder is still written
            skip = True
        else:
            out.append(word)
    return out


def test_the_real_run_section_sends_and_records_the_papers_settings(tmp_path):
    from synthgen.demo.scripted.launch import start_scripted_server

    shards = _starcoder_shards(tmp_path / "starcoder")
    ran = []
    with start_scripted_server(mode="process", seed=0, models=(MODEL,)) as server:
        for line in real_run_commands():
            argv = _adapt(shlex.split(line), server.url, shards)
            if argv is None:
                continue
            proc = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=600)
            assert proc.returncode == 0, f"`{line}` failed:\n{proc.stderr[-3000:]}"
            ran.append(argv[1])
        sent = server.stats()["by_sampling"]
    assert {"seeds", "generate", "filter", "bin", "chain"} <= set(ran), ran

    # What a real vLLM server would have been sent: two kinds of request, no other, besides the
    # preflight's few tiny probes of each role (n, reasoning, seed) before a stage's work.
    teacher = "effort=high n=1 max_tokens=32768"
    student = "effort=low n=32 max_tokens=16384"
    probes = {kind: count for kind, count in sent.items() if kind.endswith(("max_tokens=1", "max_tokens=8"))}
    assert sum(probes.values()) <= 5 * 2 * len(ran), probes
    assert set(sent) - set(probes) == {teacher, student}, sent
    assert sent[teacher] > 0 and sent[student] > 0

    # What the rows and their metadata record.
    run_dir = next(p.parent for p in tmp_path.glob("**/generate") if p.is_dir())
    stage = StageDir(run_dir, "generate")
    settings = json.loads(read_metadata(stage.parts()[0])["settings"])
    assert settings["teacher"]["reasoning_effort"] == "high" and settings["student"]["reasoning_effort"] == "low"
    assert settings["attempts"] == 32 and settings["turns"] == 6
    rows = stage.read()
    assert set(rows["env"]) == {"induction", "abduction", "deduction", "fuzzing"}
    assert rows.group_by("lineage_id").len()["len"].to_list() == [6] * rows["lineage_id"].n_unique()
    assert (rows["attempts"] == 32).all() and set(rows["teacher_model"]) == {"scripted"}

    # The paper's chain set: bin ran with the broad scheme (hard 0.10-0.26), yet every chain starts
    # in the chains scheme's hard band, 0.05-0.16 (the paper's Appendix B).
    links = StageDir(run_dir, "chain/links").read()
    starts = links.filter(links["level"] == "hard")["pass_rate"].to_list()
    assert starts and all(0.05 <= rate <= 0.16 for rate in starts), starts
