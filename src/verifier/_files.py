"""Files written whole or not at all.

A result file (a certificate, a plot) is written to a temporary file in the target's directory and
renamed over the target (``os.replace``, atomic on POSIX and Windows within one file system), so a
run interrupted at any moment (SIGINT, SIGTERM, a crash) leaves either the previous file or the
complete new one, never a truncated file that a script could read as a result. The renamed file
gets the mode a plain ``open(path, "w")`` would give it (0666 less the umask), not ``mkstemp``'s 0600.
An output path is checked with :func:`check_writable` before a command computes anything.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import IO, Iterator

from verifier.errors import InvalidArgument

__all__ = ["atomic_output", "check_writable", "write_text_atomically"]


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike, option: str, mode: str = "w") -> Iterator[IO]:
    """Open a temporary file next to ``path`` for writing; on a clean exit from the block it is
    flushed to disk and renamed to ``path``, on any exception (or signal) it is removed.

    A target that cannot be written is an invalid ``option`` (exit status 2 on the command line).
    """
    target = Path(path)
    fd, temporary = _temporary_beside(target, option, ".part")
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        encoding = None if "b" in mode else "utf-8"
        with os.fdopen(fd, mode, encoding=encoding) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def write_text_atomically(path: str | os.PathLike, text: str, option: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` whole or not at all (see :func:`atomic_output`)."""
    try:
        with atomic_output(path, option) as handle:
            handle.write(text)
    except IsADirectoryError as exc:
        raise InvalidArgument(option, str(path), f"cannot be written ({exc.strerror})") from None


def check_writable(path: str | os.PathLike, option: str) -> None:
    """Raise :class:`InvalidArgument` naming ``option`` unless a file can be written at ``path``
    (checked before a command computes anything: issue 32). The check creates and removes a
    temporary file in the target's directory, as :func:`atomic_output` will, so it answers for a
    missing directory, a read-only file system and permissions alike (``os.access`` says yes to root)."""
    target = Path(path)
    if target.is_dir():
        raise InvalidArgument(option, str(target), "cannot be written (it is a directory)")
    fd, temporary = _temporary_beside(target, option, ".check")
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(temporary)


def _temporary_beside(target: Path, option: str, suffix: str) -> tuple[int, str]:
    """(descriptor, name) of a new temporary file in ``target``'s directory, or InvalidArgument
    naming ``option`` and the directory that refused it."""
    try:
        return tempfile.mkstemp(prefix=f".{target.name}.", suffix=suffix, dir=target.parent if str(target.parent) else ".")
    except OSError as exc:
        raise InvalidArgument(option, str(target), f"cannot be written ({exc.strerror}: {target.parent})") from None


def _umask() -> int:
    """The process's umask (read by setting it and putting it back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
