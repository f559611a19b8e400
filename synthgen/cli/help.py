"""`--help` of the settings commands: panels in the order a user needs them, readable at any width.

Typer's help gives each option five columns, so at 80 columns a hundred long flag names leave the
help ~20 characters and cut names and defaults with an ellipsis. This help keeps Typer's look but
gives names one column, with the help beside it when every name fits in under half the width and
below it otherwise: text folds, nothing is cut. Panels: arguments, "Options", the model's sections,
then the settings a user seldom sets first (LAST_PANELS).
"""

from __future__ import annotations

from typing import Any

import typer.core
from rich.console import Console, Group
from rich.markup import escape
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

# Help panels, by concern, for the top-level settings that many commands share and that a user
# seldom sets first; a command's own settings stay in the first panel ("Options") unless the field
# names another with `cli(panel=...)`. These panels come after every other.
SHARDS = "Shards (Slurm arrays)"
THROUGHPUT = "Throughput and progress"
KEPT = "What is kept"
CONCERNS: dict[str, str] = {
    **dict.fromkeys(("shard", "num_shards"), SHARDS),
    **dict.fromkeys(("max_in_flight", "max_active", "max_buffer_rows", "progress", "progress_every_s"), THROUGHPUT),
    "workers": THROUGHPUT,
    **dict.fromkeys(("keep_reasoning", "keep_attempts"), KEPT),
}
LAST_PANELS = (KEPT, THROUGHPUT, SHARDS)

ARGUMENTS = "Arguments"
OPTIONS = "Options"
# From this width on the console is not a terminal's (synthgen.cli.app.PLAIN_COLUMNS).
PLAIN_WIDTH = 10_000
# The widest name column, as a share of the width, that still leaves the help beside it readable.
NAME_SHARE = 0.45


class SettingsHelp(typer.core.TyperCommand):
    """A Typer command whose `--help` is `render_help`."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        console = Console(highlight=False)
        if console.width >= PLAIN_WIDTH:  # no terminal: lines are left unwrapped, but panels need a width
            console = Console(highlight=False, width=80)
        render_help(self, ctx, console)


def panels(command: Any, ctx: Any) -> dict[str, list[Any]]:
    """The command's visible parameters by help panel, panels in the order they are shown."""
    found: dict[str, list[Any]] = {ARGUMENTS: [], OPTIONS: []}
    for param in command.get_params(ctx):
        if getattr(param, "hidden", False):
            continue
        default = ARGUMENTS if isinstance(param, typer.core.TyperArgument) else OPTIONS
        found.setdefault(getattr(param, "rich_help_panel", None) or default, []).append(param)
    order = [name for name in found if name not in LAST_PANELS] + [name for name in LAST_PANELS if name in found]
    return {name: found[name] for name in order if found[name]}


def names(param: Any, ctx: Any) -> str:
    """What a user types: `--turns <int>`, `--progress / --no-progress`, `RUN_DIR`."""
    if isinstance(param, typer.core.TyperArgument):
        return param.display_name_raw + ("..." if param.nargs != 1 and param.metavar is None else "")
    shown = ", ".join(param.opts)
    if param.secondary_opts:
        shown += " / " + ", ".join(param.secondary_opts)
    metavar = "" if getattr(param, "is_flag", False) else (param.display_type_rich(ctx) or "")
    return f"{shown} {metavar}".strip()


def help_text(param: Any) -> Text:
    """The parameter's help (rich markup, as Typer reads it), its environment variable, `required`."""
    text = Text.from_markup(getattr(param, "help", None) or "")
    envvar = getattr(param, "envvar", None)
    if envvar:
        text.append(f" [env var: {envvar if isinstance(envvar, str) else ', '.join(envvar)}]", style="dim")
    if param.required:
        text.append(" [required]", style="red")
    return text


def render_help(command: Any, ctx: Any, console: Console) -> None:
    console.print(Padding(Text(command.get_usage(ctx)), (1, 1, 0, 1)))
    if command.help:
        console.print(Padding(Text.from_markup(command.help.strip()), (1, 1, 0, 1)))
    console.print()
    shown = panels(command, ctx)
    rows = {name: [(names(p, ctx), help_text(p)) for p in params] for name, params in shown.items()}
    widest = max((len(n) for entries in rows.values() for n, _ in entries), default=0)
    side_by_side = widest <= NAME_SHARE * (console.width - 4)
    for name, entries in rows.items():
        console.print(Panel(_body(entries, widest, side_by_side), title=name, title_align="left", border_style="dim"))
    if command.epilog:
        console.print(Padding(Text.from_markup(escape(command.epilog)), 1))


def _body(entries: list[tuple[str, Text]], widest: int, side_by_side: bool) -> Any:
    if side_by_side:
        table = Table(box=None, show_header=False, expand=True, padding=(0, 1), pad_edge=False)
        table.add_column(no_wrap=True, width=widest, style="bold cyan")
        table.add_column(ratio=1, overflow="fold")
        for name, text in entries:
            table.add_row(name, text)
        return table
    parts: list[Any] = []
    for name, text in entries:
        parts.append(Text(name, style="bold cyan", overflow="fold"))
        if text.plain:
            parts.append(Padding(text, (0, 0, 0, 4)))
    return Group(*parts)
