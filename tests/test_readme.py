"""The README's two set-up commands stay true: CI runs the test one verbatim."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_readme_opens_with_two_commands_and_ci_runs_the_second():
    lines = (ROOT / "README.md").read_text().splitlines()
    block = lines[lines.index("```bash") + 1 : lines.index("```bash") + 3]
    assert lines.index("```bash") <= 3 and lines[lines.index("```bash") + 3] == "```"
    main_job, tests = block
    assert "synthgen demo" in main_job and "pytest" in tests
    assert tests in (ROOT / ".ci" / "run").read_text().splitlines()
