"""The README's two set-up commands stay true: CI runs the test one verbatim."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_readme_opens_with_two_commands_and_ci_runs_the_second():
    lines = (ROOT / "README.md").read_text().splitlines()
    block = lines[lines.index("```bash") + 1 : lines.index("```bash") + 3]
    assert lines.index("```bash") <= 3 and lines[lines.index("```bash") + 3] == "```"
    main_job, tests = block
    assert "synthgen demo" in main_job and "pytest" in tests
    assert tests in (ROOT / ".ci" / "run").read_text().splitlines()


def readme_commands() -> list[list[str]]:
    """Every `synthgen ...` command line in the README's bash blocks, continuation lines joined."""
    import shlex

    text = (ROOT / "README.md").read_text()
    commands, in_block, pending = [], False, ""
    for line in text.splitlines():
        if line.startswith("```"):
            in_block = line.strip() == "```bash"
            continue
        if not in_block:
            continue
        line = pending + line.split(" #")[0].strip() if pending else line.split(" #")[0].strip()
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        pending = ""
        for part in line.split("&&"):
            words = shlex.split(part)
            while words and "synthgen" not in words[0]:
                words = words[1:]
            if words:
                commands.append(words[1:])
    return commands


# Flags that act instead of configuring (the settings would not be shown for them).
_ACTIONS = {"--force": 0, "--dry-run": 0, "--show-schedule": 1, "--make-tiny-model": 1, "--json": 0}


def _settings_argv(words: list[str]) -> list[str]:
    out, skip = [], 0
    for word in words:
        if skip:
            skip -= 1
            continue
        if word in _ACTIONS:
            skip = _ACTIONS[word]
            continue
        out.append(word)
    return out


def test_every_readme_command_resolves_to_the_papers_settings(cli):
    import yaml

    commands = readme_commands()
    stages = {"seeds", "generate", "filter", "bin", "chain", "train", "demo", "stats"}
    checked = 0
    for words in commands:
        config_args: list[str] = []
        while words and words[0] in ("--config", "-c"):
            config_args, words = words[:2], words[2:]
        if not words or words[0] not in stages or config_args:
            continue
        rc, out, err = cli("config", "show", words[0], *_settings_argv(words[1:]))
        assert rc == 0, f"README command `synthgen {' '.join(words)}` does not resolve: {err}"
        (data,) = yaml.safe_load("\n".join(line for line in out.splitlines() if not line.startswith("#"))).values()
        if "teacher" in data:
            assert data["teacher"]["reasoning_effort"] == "high", words
            assert data["student"]["reasoning_effort"] == "low", words
            assert data["attempts"] == 32, words
            if "turns" in data:
                assert data["turns"] == 6, words
            checked += 1
    assert checked >= 3  # generate, chain and the demo with a real server at least


def test_every_config_example_in_the_readme_is_valid(cli, tmp_path):
    """The README's YAML blocks are config files: each section resolves with `config show`."""
    import yaml

    from synthgen.cli.table import sections

    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", text, re.S)
    assert len(blocks) >= 2  # the settings example and the slurm: keys
    shown = set()
    for i, block in enumerate(blocks):
        path = tmp_path / f"example-{i}.yaml"
        path.write_text(block)
        for section in yaml.safe_load(block):
            if section in sections():
                rc, _, err = cli("--config", path, "config", "show", section)
                assert rc == 0, f"README example {i}, section {section}: {err}"
                shown.add(section)
    assert "slurm" in shown


def test_the_readme_stands_alone():
    """It names the paper, and no line of it or of the pages it links sends the reader outside the repository."""
    text = (ROOT / "README.md").read_text()
    assert "arXiv:2603.24202" in text and "Sancaktar" in text
    assert "source .venv/bin/activate" in text
    pages = [ROOT / "README.md", ROOT / "bench" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for page in pages:
        text = page.read_text()
        assert not re.search("SPEC[.]md|FIELD" + "-NOTES|paper" + " 000|[.][.]/" + "shared", text), page  # split
        assert "this " + "stop" not in text, page  # a lab notebook's word: say what changed, and when


def test_the_readme_is_for_users_and_links_every_reference_page():
    """Under 500 lines, in a user's order, every docs/ page linked, every relative link resolving."""
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) < 500
    headings = re.findall(r"^## (.+)$", text, re.M)
    order = ["What it is for", "Quick start", "A real run", "Training with another trainer", "Clusters", "Reference"]
    assert [h for h in headings if h in order] == order, headings
    for page in sorted((ROOT / "docs").glob("*.md")):
        assert f"(docs/{page.name})" in text, f"the README does not link docs/{page.name}"
    for source in [ROOT / "README.md", ROOT / "bench" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", source.read_text()):
            assert (source.parent / target).exists(), f"{source.name}: broken link {target}"


def layout_entries() -> list[tuple[str, str]]:
    """What the README's layout map must say of synthgen/: every package (and loose module) with
    the first line of its docstring, in the tree's order."""
    import ast

    package = ROOT / "synthgen"
    found = []
    for init in sorted(package.rglob("__init__.py")):
        name = "synthgen/" if init.parent == package else str(init.parent.relative_to(package)) + "/"
        found.append((name, init))
    found += [(p.name, p) for p in sorted(package.glob("*.py")) if p.stem not in ("__init__", "__main__")]
    return [(name, (ast.get_docstring(ast.parse(p.read_text())) or "").split("\n")[0]) for name, p in found]


def _layout_block() -> dict[str, str]:
    text = (ROOT / "README.md").read_text()
    block = re.search(r"## Layout\n.*?```\n(.*?)```", text, re.S)
    assert block, "the README has a ## Layout section with the tree in a code block"
    pairs, inside = {}, False
    for line in block.group(1).splitlines():
        inside = line.startswith("synthgen/") or (inside and line.startswith("  "))
        match = re.match(r"^\s*(\S+)\s{2,}(.+)$", line)
        if inside and match:  # the synthgen/ line and the lines indented under it
            pairs[match.group(1)] = match.group(2).strip()
    return pairs


def test_the_layout_map_is_the_tree():
    """Every package of synthgen/ appears in the README's layout with its docstring's first line, and
    nothing under synthgen/ there names a package that is gone."""
    expected = layout_entries()
    shown = _layout_block()
    missing = [f"  {name:<20}{purpose}" for name, purpose in expected if shown.get(name) != purpose]
    assert not missing, "README layout lines to add or fix:\n" + "\n".join(missing)
    names = {name for name, _ in expected}
    stale = [name for name in shown if name not in names]
    assert not stale, f"README layout names what synthgen/ no longer has: {stale}"
