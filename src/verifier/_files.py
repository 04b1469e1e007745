"""Files written whole or not at all.

A result file (a certificate, a plot) is written to a temporary file in the target's directory and
renamed over the target (``os.replace``, atomic on POSIX and Windows within one file system), so a
run interrupted at any moment (SIGINT, SIGTERM, a crash) leaves either the previous file or the
complete new one, never a truncated file that a script could read as a result.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import IO, Iterator

from verifier.errors import InvalidArgument

__all__ = ["atomic_output", "write_text_atomically"]


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike, option: str, mode: str = "w") -> Iterator[IO]:
    """Open a temporary file next to ``path`` for writing; on a clean exit from the block it is
    flushed to disk and renamed to ``path``, on any exception (or signal) it is removed.

    A target that cannot be written is an invalid ``option`` (exit status 2 on the command line).
    """
    target = Path(path)
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent if str(target.parent) else ".")
    except OSError as exc:
        raise InvalidArgument(option, str(target), f"cannot be written ({exc.strerror})") from None
    try:
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
