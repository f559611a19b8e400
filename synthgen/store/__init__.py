"""The run directory on disk: stage folders, atomic files and swaps, markers and status, locks,
schemas and their checks."""
