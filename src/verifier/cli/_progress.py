"""A progress bar on stderr for runs that take longer than a few seconds.

Shown only when stderr is a terminal (never in pipes, files or tests): after SHOW_AFTER_SECONDS, a
line is redrawn every second and erased when the command finishes, so the result printed on stdout
is unchanged. With ``--time-budget`` the bar is the share of the budget spent (the only total a
certification knows in advance: the methods stop at it), e.g.
``verifier: [#######.............] 12 s of 35 s budget, running allocation-pld (remove)``; without
one, the elapsed time: ``verifier: 12 s, running allocation-pld (remove)``. The label is what the
portfolio is computing now (:data:`verifier._budget.ACTIVITY`).
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from typing import Iterator

from verifier._budget import ACTIVITY

__all__ = ["progress_line", "progress_text", "SHOW_AFTER_SECONDS"]

#: A run shorter than this shows nothing.
SHOW_AFTER_SECONDS = 3.0

#: Characters in the bar.
BAR_WIDTH = 20


def progress_text(elapsed: float, budget: float | None, label: str) -> str:
    """The progress line after ``elapsed`` seconds of a run with ``budget`` seconds (None: none)."""
    if budget is not None and budget > 0:
        filled = min(BAR_WIDTH, int(BAR_WIDTH * elapsed / budget))
        text = f"verifier: [{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {elapsed:.0f} s of {budget:.0f} s budget"
    else:
        text = f"verifier: {elapsed:.0f} s"
    return text + (f", running {label}" if label else "")


@contextlib.contextmanager
def progress_line(stream=None, budget: float | None = None) -> Iterator[None]:
    """Draw the progress line on ``stream`` (default stderr) while the block runs, if it is a tty;
    ``budget`` is the run's ``--time-budget`` in seconds, if it has one."""
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
            text = progress_text(time.monotonic() - started, budget, ACTIVITY.label)
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
