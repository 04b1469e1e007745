"""A progress line on stderr for runs that take longer than a few seconds.

Shown only when stderr is a terminal (never in pipes, files or tests): after SHOW_AFTER_SECONDS, a
line ``verifier: 12 s, running allocation-pld (remove)`` is redrawn every second (the label is what
the portfolio is computing now, :data:`verifier._budget.ACTIVITY`), and erased when the command
finishes, so the result printed on stdout is unchanged.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from typing import Iterator

from verifier._budget import ACTIVITY

__all__ = ["progress_line", "SHOW_AFTER_SECONDS"]

#: A run shorter than this shows nothing.
SHOW_AFTER_SECONDS = 3.0


@contextlib.contextmanager
def progress_line(stream=None) -> Iterator[None]:
    """Draw the progress line on ``stream`` (default stderr) while the block runs, if it is a tty."""
    stream = sys.stderr if stream is None else stream
    if not getattr(stream, "isatty", lambda: False)():
        yield
        return
    done = threading.Event()
    started = time.monotonic()
    drawn = [False]

    def draw() -> None:
        if done.wait(SHOW_AFTER_SECONDS):
            return
        while not done.is_set():
            label = ACTIVITY.label
            text = f"verifier: {time.monotonic() - started:.0f} s" + (f", running {label}" if label else "")
            try:
                stream.write("\r\033[K" + text)
                stream.flush()
                drawn[0] = True
            except (OSError, ValueError):
                return
            done.wait(1.0)

    thread = threading.Thread(target=draw, name="verifier-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join(timeout=1.0)
        if drawn[0]:
            with contextlib.suppress(OSError, ValueError):
                stream.write("\r\033[K")
                stream.flush()
