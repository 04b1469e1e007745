"""The progress line: drawn on a terminal once a run passes SHOW_AFTER_SECONDS, naming what runs,
erased at the end; never written to a pipe or file (the mutant that always draws would corrupt
``verifier … 2> log`` and the exact-output tests)."""

from __future__ import annotations

import io
import time

from verifier._budget import ACTIVITY
from verifier.cli import _progress


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_drawn_on_a_terminal_and_erased(monkeypatch):
    monkeypatch.setattr(_progress, "SHOW_AFTER_SECONDS", 0.05)
    terminal = _Terminal()
    ACTIVITY.set("allocation-pld (remove)")
    try:
        with _progress.progress_line(terminal):
            time.sleep(0.4)
    finally:
        ACTIVITY.set("")
    text = terminal.getvalue()
    assert "verifier: 0 s, running allocation-pld (remove)" in text
    assert text.endswith("\r\033[K")  # erased: the terminal is left as it was


def test_nothing_is_written_to_a_pipe_or_a_short_run(monkeypatch):
    monkeypatch.setattr(_progress, "SHOW_AFTER_SECONDS", 0.05)
    pipe = io.StringIO()
    with _progress.progress_line(pipe):
        time.sleep(0.2)
    assert pipe.getvalue() == ""
    monkeypatch.setattr(_progress, "SHOW_AFTER_SECONDS", 10.0)
    terminal = _Terminal()
    with _progress.progress_line(terminal):
        pass
    assert terminal.getvalue() == ""
