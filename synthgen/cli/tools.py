"""The debugging tools: `synthgen verify` scores one answer against one problem, showing every
step; `synthgen sandbox` runs untrusted Python jobs from JSON lines, one verdict line per job.
Their flags derive from synthgen.envs.tool_settings, as the stages' do."""

from __future__ import annotations

from synthgen.cli.flags import SettingsCommand
from synthgen.envs.tool_settings import SandboxRunSettings, VerifySettings

COMMANDS = [
    SettingsCommand(
        "verify",
        VerifySettings,
        "synthgen.envs.verify:run",
        exclude=frozenset({"sandbox.workers"}),
        help="Validate a problem, parse a student answer, run it in the sandbox and print the reward.",
    ),
    SettingsCommand(
        "sandbox",
        SandboxRunSettings,
        "synthgen.sandbox.cli:run",
        help='Run jobs in the sandbox: {"id", "code", "calls", "expected", "timeout_s", "memory_mb"} per line; '
        'each result line: {"id", "isolation", "calls": [{"status", "value", "match", "error"}, ...]}. '
        "Statuses: ok, exception, timeout, memory, output_too_large, killed, infra. A line's own timeout_s "
        "and memory_mb win over --timeout-s and --memory-mb.",
    ),
]
