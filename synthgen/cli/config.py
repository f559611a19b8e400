"""`synthgen config`: a commented config file to start from (init), the settings a command would run with (show).

    synthgen config init generate > run.yaml    # edit it, then: synthgen generate --config run.yaml
    synthgen config init --output run.yaml      # every command's section
    synthgen --config run.yaml config show generate --base-url http://gpu01:8000/v1

init writes one key a line (a flag's name with underscores), its help as a comment: a command's
first options with their defaults, the rest commented out under their `--help` panel, so that
uncommenting a line changes one setting. show takes the stage's own flags: it prints what the
stage would run with.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import typer
from pydantic import BaseModel, TypeAdapter
from pydantic_core import PydanticUndefined

from synthgen.cli.flags import LAST_PANELS, Flag, SettingsCommand, describe
from synthgen.errors import UserError
from synthgen.settings.base import LLM_SECTION, ConfigFile, did_you_mean, model_at
from synthgen.settings.shared import DEFAULT_RUN_DIR

HEADER = """\
# synthgen config file (YAML): keys mirror the flags (`--max-in-flight` -> max_in_flight, dashes or
# underscores), one section per command; flags win over the file. Use it as `synthgen --config FILE
# COMMAND` or `synthgen COMMAND --config FILE`; `synthgen config show COMMAND --config FILE` prints
# what a command would run with. Uncomment a line to change that setting.
"""

LLM_TEMPLATE = f"""\
# The LLM servers, read by every command that talks to one (a section's own keys win over these):
{LLM_SECTION}:
  # base_url: "http://127.0.0.1:8000/v1"  # one OpenAI-compatible server (e.g. vLLM) for every role
  # model: "openai/gpt-oss-120b"  # the model name that server serves
  # api_key: "EMPTY"  # default: $OPENAI_API_KEY, else 'EMPTY' as vLLM expects
  # teacher: {{base_url: "http://gpu01:8000/v1", reasoning_effort: high}}  # one role's own settings
  # student: {{base_url: "http://gpu02:8000/v1", reasoning_effort: low}}
  # max_outage: 10m  # and any other LLM client setting (`synthgen generate --help`, panel "LLM client")
"""
_DEFAULT_NOTE = re.compile(r"\s*\\\[default: .*\]$")


config_app = typer.Typer(
    name="config",
    help="Write a config file to start from (init), or print the settings a command would run with (show).",
    no_args_is_help=True,
    add_completion=False,
)
show_app = typer.Typer(
    name="show",
    help="Print the resolved settings of a command (no STAGE: every stage).",
    invoke_without_command=True,
    add_completion=False,
)


def register(app: typer.Typer, commands: list[SettingsCommand]) -> None:
    """`config init` and `config show` on `app`, for `commands`."""
    by_name = {c.name: c for c in commands}
    app.add_typer(config_app, name="config")
    config_app.add_typer(show_app, name="show")
    for command in commands:
        command.register(show_app, show=True)

    @show_app.callback()
    def show_all(ctx: typer.Context) -> None:
        if ctx.invoked_subcommand is not None:
            return
        config: ConfigFile = ctx.find_object(ConfigFile) or ConfigFile()
        shown = set()
        for command in commands:
            if command.model in shown:
                continue
            shown.add(command.model)
            try:
                settings = config.settings(command.model)
            except UserError as exc:  # a stage with required flags (stats RUN_DIR) has nothing to show yet
                typer.echo(f"# synthgen {command.name}: needs flags ({exc})\n")
                continue
            typer.echo(describe(command.name, settings) + "\n")

    @config_app.command("init")
    def init(
        command: str | None = typer.Argument(
            None, metavar="[COMMAND]", help=f"Only this command's section: {', '.join(by_name)}.", show_default=False
        ),
        output: Path | None = typer.Option(
            None, "--output", "-o", metavar="FILE", help="Write the file here (default: print it)."
        ),
        force: bool = typer.Option(False, "--force", metavar="", help="Replace FILE if it exists."),
    ) -> None:
        """Write a commented config file with every command's settings (or COMMAND's); it reads back as it is."""
        if command is not None and command not in by_name:
            raise UserError(
                f"config init: unknown command {command!r}{did_you_mean(command, by_name)} "
                f"(one of: {', '.join(by_name)})"
            )
        text = template([by_name[command]] if command else list(by_name.values()))
        if output is None:
            typer.echo(text, nl=False)
            return
        if output.exists() and not force:
            raise UserError(f"{output} exists; pass --force to replace it, or choose another --output")
        try:
            output.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UserError(f"cannot write {output}: {exc.strerror}") from None
        typer.echo(f"wrote {output}; use it as: synthgen {command or 'COMMAND'} --config {output}")


def template(commands: list[SettingsCommand]) -> str:
    """The commented config file for `commands`, one section each (commands sharing a model: once)."""
    lines = [HEADER, f"# run_dir: {json.dumps(str(DEFAULT_RUN_DIR))}  # every stage reads and writes RUN_DIR/<stage>/"]
    lines.append(LLM_TEMPLATE.rstrip("\n"))
    seen: set[str] = set()
    for command in commands:
        section = command.model.section
        if not section or section in seen:
            continue
        seen.add(section)
        lines.append("")
        lines.extend(section_lines(command))
    return "\n".join(lines) + "\n"


def section_lines(command: SettingsCommand) -> list[str]:
    """One command's section: its first options set to their defaults, the others commented out."""
    flags = [f for f in command.flags() if f.path != ("run_dir",)]
    first = [f for f in flags if f.panel is None]
    order = list(dict.fromkeys(f.panel for f in flags if f.panel is not None and f.panel not in LAST_PANELS))
    order += [p for p in LAST_PANELS if any(f.panel == p for f in flags)]
    rest = sorted((f for f in flags if f.panel is not None), key=lambda f: order.index(f.panel))
    out = [f"{command.model.section}:  # synthgen {command.name}"]
    out += [_line(command.model, f, active=True) for f in first]
    for alias in command.aliases:
        if alias.annotation is not bool:
            value = json.dumps(_default(command.model, tuple(alias.targets[0].split("."))))
            out.append(f"  # {alias.name[2:].replace('-', '_')}: {value}  # {alias.help}")
    panel: str | None = None
    for flag in rest:
        if flag.panel != panel:
            panel = flag.panel
            out.append(f"  # -- {panel or 'More options'} --")
        out.append(_line(command.model, flag, active=False))
    return out


def _line(model: type[BaseModel], flag: Flag, *, active: bool) -> str:
    key = flag.names[0].lstrip("-").replace("-", "_") if not flag.argument else flag.path[-1]
    default = _default(model, flag.path)
    note = _DEFAULT_NOTE.sub("", flag.help).replace("\\[", "[")
    if default is PydanticUndefined:
        return f"  # {key}: ...  # (required) {note}".rstrip()
    value = json.dumps(default)
    on = active and default is not None
    return f"  {'' if on else '# '}{key}: {value}  # {note}".rstrip()


def _default(model: type[BaseModel], path: tuple[str, ...]) -> Any:
    info = model_at(model, path[:-1]).model_fields[path[-1]]
    if info.is_required():
        return PydanticUndefined
    return TypeAdapter(info.annotation).dump_python(info.get_default(call_default_factory=True), mode="json")
