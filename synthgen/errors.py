"""Error types that the CLI maps to exit codes: bad input -> 2 with one line, anything else -> 1."""


class UserError(Exception):
    """Bad input from the user (paths, config, flags, data): reported as one line, exit code 2."""
