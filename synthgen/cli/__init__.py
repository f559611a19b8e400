"""The command line: the Typer app, flags derived from settings models, and the table of every command."""
