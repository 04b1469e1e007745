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


def test_with_a_time_budget_the_bar_is_the_share_spent():
    """A bar whose fill is the spent share of --time-budget (the mutant that fills by anything else,
    or overflows past the budget, fails); without a budget only the elapsed time is shown."""
    assert _progress.progress_text(0.0, 40.0, "") == "verifier: [....................] 0 s of 40 s budget"
    assert _progress.progress_text(10.0, 40.0, "pld (add)") == (
        "verifier: [#####...............] 10 s of 40 s budget, running pld (add)"
    )
    assert _progress.progress_text(50.0, 40.0, "").startswith("verifier: [" + "#" * 20 + "] 50 s")
    assert _progress.progress_text(12.4, None, "rdp") == "verifier: 12 s, running rdp"


def test_main_passes_the_commands_time_budget(monkeypatch):
    from verifier import cli

    seen = []

    def fake_progress_line(stream=None, budget=None):
        seen.append(budget)
        return _progress.progress_line(io.StringIO(), budget)

    monkeypatch.setattr(cli, "progress_line", fake_progress_line)
    argv = ["certify", "--mechanism", "gaussian", "--sigma", "1", "--epsilon", "3", "--delta", "1e-5"]
    cli.main([*argv, "--time-budget", "35"])
    cli.main(argv)
    assert seen == [35.0, None]
