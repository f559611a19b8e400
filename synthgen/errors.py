"""Error types that the CLI maps to exit codes; anything else is a bug: a traceback and exit code 1.

InfraIncomplete (a server down, a crashed sandbox, a full disk: `OutOfSpace`) saves what succeeded
and marks nothing finished: exit 3, so that a Slurm dependency (`afterok`) does not start the next
stage on incomplete data, and a re-run retries exactly the failed part. `stop_on_sigterm` makes
SIGTERM raise Interrupted anywhere in the main thread (the CLI installs it first thing), so that a
signal before or after a stage's own handling (start-up, the last writes) still exits 143.
"""

import signal
import threading

EXIT_BAD_INPUT = 2
EXIT_INFRA = 3


class UserError(Exception):
    """Bad input from the user (paths, config, flags, data): reported as one line, exit code 2."""


class InfraIncomplete(Exception):
    """Work left unfinished by infrastructure failures; a re-run retries it (exit code 3)."""


class OutOfSpace(InfraIncomplete):
    """The disk (or quota) filled up while writing `path`: infrastructure, exit 3. Files are written
    atomically and markers last, so nothing half-written is kept and nothing more is marked finished."""

    def __init__(self, path, cause: BaseException | str = ""):
        why = str(cause).strip().splitlines()[0] if str(cause).strip() else "no space left on the device"
        super().__init__(
            f"out of space writing {path} ({why}); nothing more was marked finished: free space and re-run"
        )
        self.path = path


def is_out_of_space(exc: BaseException) -> bool:
    """A full disk or quota, as the OS, pyarrow (an OSError naming errno 28) or SQLite reports it."""
    import errno
    import sqlite3

    if isinstance(exc, OSError):
        text = str(exc).lower()
        return exc.errno in (errno.ENOSPC, errno.EDQUOT) or "no space left" in text or "quota exceeded" in text
    return isinstance(exc, sqlite3.OperationalError) and "disk is full" in str(exc).lower()


class Interrupted(Exception):
    """A signal stopped the work; finished results are saved and a re-run continues."""

    def __init__(self, signum: int, what: str = "the run"):
        super().__init__(f"{what} stopped by {signal.Signals(signum).name}; finished work is saved, re-run to continue")
        self.signum = signum


def _raise_interrupted(signum: int, frame) -> None:
    raise Interrupted(signum, "synthgen")


def stop_on_sigterm() -> None:
    """SIGTERM raises Interrupted in the main thread (as Ctrl+C raises KeyboardInterrupt)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _raise_interrupted)
