"""Commands whose flags are derived from a settings model: one declaration per knob.

    GENERATE = SettingsCommand("generate", GenerateSettings, "synthgen.stages.generate.run:run", extras=[FORCE])
    GENERATE.register(app)              # synthgen generate --turns 6 --teacher-url http://... --force

Every field, nested sections included, becomes a flag (`dedup.threshold` -> `--dedup-threshold`,
or the name `cli(...)` gives it) with the field's description as help and the model's default
shown; types with no flag form (mappings, nested lists) are config-file only unless
`cli(as_text=True)`. Like TRL's `TrlParser`, with pydantic validating and Typer parsing. Every
option's default is None, so a flag counts only when typed: defaults < config file < flags.

Their `--help` (`SettingsHelp`) keeps Typer's look, but where Typer gives each option five columns,
which at 80 columns leave a hundred long flags ~20 characters and cut names with an ellipsis, it
gives names one column and the help beside it or, when a name is too wide, below it: text folds,
nothing is cut. Panels: arguments, "Options", the model's sections, then LAST_PANELS.
"""

from __future__ import annotations

import inspect
import pkgutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import typer
from pydantic import BaseModel
from pydantic_core import PydanticUndefined
from rich.console import Console, Group
from rich.markup import escape
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from synthgen.errors import UserError
from synthgen.settings.base import (
    ConfigFile,
    Settings,
    cli_spec,
    flag_name,
    nested_model,
    put_path,
    set_command_settings,
    without_none,
)

_SIMPLE = (bool, int, float, str, Path)
KEYWORD = inspect.Parameter.KEYWORD_ONLY


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


@dataclass(frozen=True)
class Flag:
    """One settings field as a command-line parameter."""

    path: tuple[str, ...]  # ("teacher", "base_url")
    names: tuple[str, ...]  # ("--teacher-url",)
    annotation: Any  # the Python type Typer parses
    help: str
    panel: str | None = None
    envvar: str | None = None
    argument: bool = False
    metavar: str | None = None
    split: bool = False  # a list: each value may hold several, comma-separated (`--k 1,5` = `--k 1 --k 5`)

    @property
    def param(self) -> str:
        return "__".join(self.path)

    def parameter(self) -> inspect.Parameter:
        if not self.argument:
            return _option(self.param, self.names, self.annotation, self.help, self.panel, self.envvar, self.metavar)
        info = typer.Argument(None, help=self.help, show_default=False, metavar=self.metavar)
        return inspect.Parameter(self.param, KEYWORD, default=info, annotation=self.annotation | None)


@dataclass(frozen=True)
class Alias:
    """One flag that sets several settings at once (`--base-url` for both roles); fields win over it."""

    name: str
    targets: tuple[str, ...]
    help: str
    annotation: Any = str
    panel: str | None = None  # the help panel it is listed in (default: the first, "Options")

    @property
    def param(self) -> str:
        return "alias__" + self.name.lstrip("-").replace("-", "_")

    def parameter(self) -> inspect.Parameter:
        return _option(self.param, (self.name,), self.annotation, self.help, self.panel)


def _option(param: str, names, annotation, help: str, panel=None, envvar=None, metavar=None) -> inspect.Parameter:
    """A settings flag as a keyword parameter whose default None means "not given"."""
    if annotation is bool:
        names, metavar = (f"{names[0]}/--no-{names[0][2:]}",), ""  # a flag takes no value; Typer would print <bool>
    info = typer.Option(
        None, *names, help=help, show_default=False, envvar=envvar, rich_help_panel=panel, metavar=metavar
    )
    return inspect.Parameter(param, KEYWORD, default=info, annotation=annotation | None)


def option(annotation: Any, *names: str, help: str, name: str | None = None, **more: Any) -> inspect.Parameter:
    """An extra parameter that is not a setting (`--force`, `--dry-run`), passed to the command's run
    as `name` (default: from the first flag); a bool is a flag, off unless given."""
    info = typer.Option(False if annotation is bool else None, *names, help=help, **more)
    name = name or names[0].lstrip("-").replace("-", "_")
    return inspect.Parameter(name, KEYWORD, default=info, annotation=annotation)


FORCE = option(
    bool,
    "--force",
    help="Redo output made with other settings: it is replaced, not mixed; LLM answers to requests that are the "
    "same as before come from the run's request cache (not paid for again).",
)
CONFIG = option(
    Path | None,
    "--config",
    "-c",
    name="config_path",
    metavar="FILE",
    help="YAML or TOML settings file (also accepted before the command); keys mirror the flags, flags win. "
    "`synthgen config init` writes one.",
)
PROBE = option(
    bool,
    "--probe",
    help="Also probe each role's server as a run's preflight does (n, reasoning, seed, context length).",
)
BASE_URL = Alias(
    "--base-url",
    ("teacher.base_url", "student.base_url"),
    "One OpenAI-compatible server (e.g. vLLM) for both roles; --teacher-url/--student-url win over it.",
)
MODEL = Alias(
    "--model",
    ("teacher.model", "student.model"),
    "One model name for both roles; --teacher-model/--student-model win over it.",
)


@dataclass
class SettingsCommand:
    """A command: a settings model, the function that runs it, and flags that are not settings."""

    name: str
    model: type[Settings]
    run: str  # "module:function", imported only when the command runs (a fast --help)
    help: str | None = None
    aliases: list[Alias] = field(default_factory=list)
    extras: list[inspect.Parameter] = field(default_factory=list)
    exclude: frozenset[str] = frozenset()  # fields (or whole sections) without a flag in this command

    def flags(self) -> list[Flag]:
        return [
            f
            for f in model_flags(self.model)
            if not any(f.path[: len(e.split("."))] == tuple(e.split(".")) for e in self.exclude)
        ]

    def register(self, app: typer.Typer, *, show: bool = False) -> None:
        flags, aliases = self.flags(), list(self.aliases)
        talks = any(f.path[-1] == "base_url" for f in flags)  # a command that talks to a server
        extras = [*(([PROBE] if talks else []) if show else list(self.extras)), CONFIG]
        model, run = self.model, self.run

        def command(ctx: typer.Context, **values: Any) -> Any:
            config = _config_file(ctx, values.pop("config_path"))
            overrides: dict[str, Any] = {}
            for alias in aliases:
                value = values.pop(alias.param)
                if value is not None:
                    for target in alias.targets:
                        put_path(overrides, target.split("."), value)
            for flag in flags:
                value = values.pop(flag.param)
                if value is not None and flag.split:
                    value = [piece.strip() for v in value for piece in str(v).split(",") if piece.strip()]
                if value is not None:
                    put_path(overrides, flag.path, value)
            names = {".".join(f.path): f.names[0] for f in flags if not f.argument}
            settings = config.resolve(model, overrides, names)
            if show:
                typer.echo(describe(self.name, settings))
                if values.get("probe"):
                    from synthgen.llm.client import probe_settings

                    typer.echo("# what each role's server does (probed):")
                    for line in probe_settings(settings):
                        typer.echo(f"#   {line}")
                return None
            set_command_settings(settings)
            function = pkgutil.resolve_name(run)
            if "config" in inspect.signature(function).parameters:  # it reads other commands' settings
                values["config"] = config
            return function(settings, **values)

        ctx_param = inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context)
        arguments = [f.parameter() for f in flags if f.argument]
        # What a user needs first comes first: the command's own settings, then its one-flag-for-all
        # aliases (--base-url), then what it shares with other commands; panels follow that order.
        own = set(model.__annotations__) if "__annotations__" in model.__dict__ else set()
        first = [f.parameter() for f in flags if not f.argument and f.path[0] in own and f.panel is None]
        rest = [f.parameter() for f in flags if not f.argument and not (f.path[0] in own and f.panel is None)]
        params = [ctx_param, *arguments, *first, *(a.parameter() for a in aliases), *rest, *extras]
        command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        command.__annotations__ = {p.name: p.annotation for p in params}
        doc = f"Print the settings `synthgen {self.name}` would run with, and what each LLM role is sent."
        app.command(self.name, help=doc if show else self.help, cls=SettingsHelp)(command)


def _config_file(ctx: typer.Context, path: Path | None) -> ConfigFile:
    """The command line's config file: `--config` before the command or after it (not both, unless the same)."""
    import dataclasses

    root: ConfigFile = ctx.find_object(ConfigFile) or ConfigFile()
    if path is None:
        return root
    if root.path is not None and Path(root.path).resolve() != Path(path).resolve():
        raise UserError(f"--config is given twice ({root.path} before the command, {path} after it); give one")
    config = dataclasses.replace(root, path=path, _data=None)
    ctx.obj = config
    return config


def model_flags(
    model: type[BaseModel], prefix: tuple[str, ...] = (), flag_prefix: str = "", panel: str | None = None
) -> list[Flag]:
    """The flags of every field of `model`, depth first; fields with no flag form are skipped."""
    out: list[Flag] = []
    for name, info in model.model_fields.items():
        spec = cli_spec(info)
        if spec.get("hidden"):
            continue
        path = (*prefix, name)
        flag = flag_name(name, spec, flag_prefix)
        nested = nested_model(info.annotation)
        if nested is not None:
            section = spec.get("panel") or getattr(nested, "cli_panel", None) or name.replace("_", " ").capitalize()
            out.extend(model_flags(nested, path, f"{flag[2:]}-", section))
            continue
        annotation = str if spec.get("as_text") else _flag_type(info.annotation)
        if annotation is None:
            continue
        split, metavar = False, spec.get("metavar")
        if get_origin(annotation) is list:  # parsed as text and split on commas, then validated by the model
            item = get_args(annotation)[0]
            split, metavar, annotation = True, metavar or f"{item.__name__.upper()},...", list[str]
        default = info.get_default(call_default_factory=True)
        help_text = _sentence(info.description or "")
        shown = _show_default(default)
        if shown is not None:  # escaped: Typer's help is Rich markup, where [default: ...] would vanish
            help_text = f"{help_text} \\[default: {shown}]".strip()
        out.append(
            Flag(
                path,
                (flag,),
                annotation,
                help_text,
                spec.get("panel") or panel or (CONCERNS.get(name) if not prefix else None),
                spec.get("envvar"),
                bool(spec.get("argument")),
                metavar,
                split,
            )
        )
    return out


def _flag_type(annotation: Any) -> Any:
    """The type Typer parses for a field, or None when the field has no flag form."""
    inner = without_none(annotation)
    if inner in _SIMPLE or get_origin(inner) is Literal:
        return inner
    args = [a for a in get_args(inner) if a is not Ellipsis]
    if get_origin(inner) in (list, tuple) and len(args) == 1 and args[0] in _SIMPLE:
        return list[args[0]]  # repeatable flag
    return None


def _sentence(text: str) -> str:
    """A description as help: first letter up (unless it starts a name such as gpt-oss), a full stop."""
    text = text.strip().rstrip(".")
    if not text:
        return ""
    first = text.split()[0]
    if "-" not in first and not any(c.isdigit() for c in first):
        text = text[0].upper() + text[1:]
    return text + "."


def _show_default(value: Any) -> str | None:
    if value is None or value is PydanticUndefined or value == [] or value == {}:  # required: no default
        return None
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def describe(command: str, settings: Settings) -> str:
    """The resolved settings as YAML, the hash, and what each LLM role will be sent."""
    import yaml

    lines = [
        f"# synthgen {command}: resolved settings (model defaults < config file < flags); "
        f"this output is a config file: synthgen {command} --config FILE",
        f"# settings hash: {settings.settings_hash()} (where a run goes, e.g. URLs and workers, is not hashed)",
    ]
    data = settings.model_dump(mode="json")
    body = {settings.section: data} if settings.section else data
    lines.append(yaml.safe_dump(body, sort_keys=False, width=110).rstrip())
    fields = dict(settings)  # the model's own fields, whichever command's model it is
    roles = [(n, fields[n]) for n in ("teacher", "student") if n in fields]
    if roles:
        lines.append("# each request sends:")
    for name, role in roles:
        n = fields.get("attempts", 1) if name == "student" else 1
        sampling = " ".join(f"{k}={v}" for k, v in role.sampling().items())
        lines.append(
            f"#   {name}: POST {role.base_url.rstrip('/')}/chat/completions model={role.model} {sampling} n={n}"
        )
    return "\n".join(lines)
