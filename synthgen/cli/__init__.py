"""The command line: the Typer app, flags derived from settings, one table of every command."""
