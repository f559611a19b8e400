"""Commands that show a finished run to others: `synthgen export` (a Hugging Face dataset folder
with its card, optionally pushed to the Hub), `synthgen report` (one self-contained HTML page) and
`synthgen compare` (one page comparing runs)."""

from __future__ import annotations

from synthgen.cli.flags import SettingsCommand
from synthgen.settings.compare import CompareSettings
from synthgen.export.settings import ExportSettings
from synthgen.report.settings import ReportSettings

COMMANDS = [
    SettingsCommand(
        "export",
        ExportSettings,
        "synthgen.export:run",
        help="Write a run's binned problems and chains as a Hugging Face dataset folder with its card "
        "(load it with datasets.load_dataset); --push-to-hub uploads it.",
    ),
    SettingsCommand(
        "report",
        ReportSettings,
        "synthgen.report:run",
        help="Write one self-contained HTML page about a run: yield per turn, pass rates, bins, drop reasons, "
        "tokens, example problems and chains.",
    ),
    SettingsCommand(
        "compare",
        CompareSettings,
        "synthgen.report.compare:run",
        help="Write one self-contained HTML page comparing runs: pass@k and cumulative solve rates over training "
        "steps, yield per turn and the multi-turn / single-turn ratio; runs that differ only in seed are averaged.",
    ),
]
