"""Output paths checked before any work: a folder (or a file's folder) that exists or can be
created, is a folder, is writable and is not a symlink loop; else one line, exit 2.

    out = output_folder(settings.output, "--output")       # train, eval, export, a stage's run dir
    html = output_file(settings.output, "--output")         # report: a file to write

Nothing is created here: a command that then stops on other bad input leaves no empty folder.
Writability is tried, not inferred from permission bits (root ignores them; a read-only mount
does not): a temporary file is made in the nearest existing folder and removed at once.
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

from synthgen.errors import UserError


def output_folder(path: Path | str, flag: str) -> Path:
    """`path` as a folder synthgen can write into (it may not exist yet), or a one-line UserError."""
    path = Path(path)
    _check_links(path, flag)
    if path.exists():
        if not path.is_dir():
            raise UserError(f"{flag} {path} is a file, not a folder")
        _probe(path, path, flag)
    else:
        _probe(_nearest_existing(path, flag), path, flag)
    return path


def output_file(path: Path | str, flag: str) -> Path:
    """`path` as a file synthgen can write (replacing it if it exists), or a one-line UserError."""
    path = Path(path)
    _check_links(path, flag)
    if path.is_dir():
        raise UserError(f"{flag} {path} is a folder; name the file to write")
    output_folder(path.parent, flag)
    return path


def _check_links(path: Path, flag: str) -> None:
    """A symlink loop or a dangling link anywhere on the path (os.stat says which)."""
    for part in [path, *path.parents]:
        if not part.is_symlink():
            continue
        try:
            os.stat(part)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise UserError(f"{flag} {path}: {part} is a symlink loop") from None
            if exc.errno == errno.ENOENT:
                raise UserError(f"{flag} {path}: {part} is a link to nothing ({os.readlink(part)})") from None
            raise UserError(f"{flag} {path}: cannot reach {part} ({exc.strerror})") from None


def _nearest_existing(path: Path, flag: str) -> Path:
    """The closest existing folder above `path`: where it would be created (a file there: refused)."""
    for parent in path.absolute().parents:
        if parent.exists():
            if not parent.is_dir():
                raise UserError(f"{flag} {path} cannot be created: {parent} is a file, not a folder")
            return parent
    return Path("/")


def _probe(folder: Path, path: Path, flag: str) -> None:
    try:
        fd, name = tempfile.mkstemp(prefix=".synthgen-write-check-", dir=folder)
    except OSError as exc:
        where = "" if folder == path else f" (in {folder})"
        raise UserError(f"{flag} {path} is not writable{where}: {exc.strerror}") from None
    os.close(fd)
    os.unlink(name)
