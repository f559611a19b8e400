"""The repository stands alone and keeps its outputs out of git: nothing in it points at files outside
it (a clone has none), and data/ outputs are ignored without hiding anything the repository ships."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Written in pieces so that this file does not match itself.
OUTSIDE = re.compile(
    "|".join([r"\.\./" + "shared", "SPEC" + r"\.md", "SPEC" + " §", "FIELD" + "-NOTES", "paper" + " 000"])
)
TEXT_SUFFIXES = {".py", ".j2", ".sh", ".md", ".yaml", ".yml", ".toml", ".txt", ".cfg", ""}


def _git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)


@pytest.fixture(scope="module")
def tracked() -> list[str]:
    if shutil.which("git") is None or _git("rev-parse", "--is-inside-work-tree").returncode != 0:
        pytest.skip("not a git checkout")
    return [name for name in _git("ls-files", "-z").stdout.split("\0") if name]


def test_nothing_points_outside_the_repository(tracked):
    found = []
    for name in tracked:
        path = ROOT / name
        if path.suffix not in TEXT_SUFFIXES or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        found += [f"{name}:{i}: {line.strip()}" for i, line in enumerate(text.splitlines(), 1) if OUTSIDE.search(line)]
    assert not found, "\n".join(found)


def test_outputs_under_data_are_ignored_and_nothing_shipped_is(tracked):
    outputs = ["data/runs/demo/generate/x.parquet", "data/tiny-model/config.json", "data/exports/demo/README.md"]
    proc = subprocess.run(
        ["git", "-C", str(ROOT), "check-ignore", "--no-index", "--stdin"],
        input="\n".join(outputs),
        capture_output=True,
        text=True,
    )
    assert proc.stdout.split() == outputs
    shipped = subprocess.run(
        ["git", "-C", str(ROOT), "check-ignore", "--no-index", "--stdin"],
        input="\n".join(tracked),
        capture_output=True,
        text=True,
    )
    assert shipped.stdout.split() == [], "tracked files that .gitignore would hide"
    assert "data/README.md" in tracked


def test_argv_builders_spell_flags_as_the_cli_derives_them():
    from tests.helpers.argv import flags, stage

    assert flags(max_seeds=2, progress=False, dedup=True, envs=["a", "b"], skip=None) == [
        "--max-seeds", "2", "--no-progress", "--dedup", "--envs", "a", "--envs", "b",
    ]  # fmt: skip
    assert stage("chain", "r", "http://x/v1", attempts=4) == [
        "chain", "--run-dir", "r", "--base-url", "http://x/v1", "--attempts", "4",
    ]  # fmt: skip


def _classes_with_defaults(kind: str) -> dict[str, set[str]]:
    """{file:class: names of fields declared with a default} of synthgen's dataclasses ("dataclass")
    or of its settings models ("settings": classes built on Section, Settings or a settings mixin)."""
    import ast

    found = {}
    for path in sorted((ROOT / "synthgen").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef):
                continue
            fields = {
                s.target.id
                for s in node.body
                if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and s.value is not None
            }
            is_dataclass = any("dataclass" in ast.unparse(d) for d in node.decorator_list)
            is_settings = any(ast.unparse(b).endswith(("Section", "Settings", "Mixin", "Figures")) for b in node.bases)
            if (kind == "dataclass" and is_dataclass) or (kind == "settings" and is_settings and not is_dataclass):
                found[f"{path.relative_to(ROOT)}:{node.name}"] = fields
    return found


def test_no_settings_are_copied_into_a_second_class_with_its_own_defaults():
    """A settings section reaches the code that uses it as it is: no dataclass re-declares three or
    more of its fields with defaults of its own (where they would drift apart)."""
    models = _classes_with_defaults("settings")
    assert len(models) > 40  # the walk sees the settings models
    copies = [
        (copy, model, sorted(fields & model_fields))
        for copy, fields in _classes_with_defaults("dataclass").items()
        for model, model_fields in models.items()
        if len(fields & model_fields) >= 3
    ]
    assert copies == []
