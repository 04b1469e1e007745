"""Output files (issue 32): checked before the computation, written with the user's umask, and a
report that fails to be written after the verdict never changes the verdict's exit status.

The broken implementations these tests catch: a path checked only when the file is written (after
minutes of computing), ``mkstemp``'s 0600 kept on the renamed file, an unwritable ``--report``
turning VIOLATED (1) into invalid input (2), and the plot's reason printed twice (issue 30.5)."""

from __future__ import annotations

import importlib
import os
import stat

import pytest

from verifier.cli import main

#: (command module, argv before the output option, the output option): every command that writes a file.
WRITERS = [
    ("_certify", ["certify", "--example", "gaussian-certified"], "--report"),
    ("_certify", ["certify", "--example", "gaussian-certified"], "--output"),
    ("_calibrate", ["calibrate", "--scheme", "composed", "--times", "10", "--epsilon", "1", "--delta", "1e-5"], "--report"),
    ("_bounds", ["bounds", "--sigma", "1"], "--plot"),
    ("_compare", ["compare", "--sigma-min", "1", "--sigma-max", "2", "--steps", "10", "--delta", "1e-5"], "--out"),
    ("_sweep", ["sweep", "--grid", "sigma=1,2", "--delta", "1e-5", "--in-process"], "--csv"),
    ("_sweep", ["sweep", "--grid", "sigma=1,2", "--delta", "1e-5", "--in-process"], "--plot"),
    ("_audit", ["audit", "autodp"], "--out"),
]


@pytest.mark.parametrize("module, argv, option", WRITERS)
def test_an_unwritable_output_path_is_refused_before_computing(module, argv, option, tmp_path, monkeypatch, capsys):
    def computed(args):
        raise AssertionError("the command computed before checking its output path")

    monkeypatch.setattr(importlib.import_module(f"verifier.cli.{module}"), "_run", computed)
    target = tmp_path / "no-such-directory" / "file.out"
    assert main([*argv, option, str(target)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    name = option.lstrip("-")
    assert len(err) == 1 and err[0].startswith(f"verifier: error: {name}='{target}' is invalid: cannot be written")


def test_a_directory_is_not_a_writable_output(tmp_path, capsys):
    assert main(["certify", "--example", "gaussian-certified", "--report", str(tmp_path)]) == 2
    assert "it is a directory" in capsys.readouterr().err


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_files_get_the_users_umask(mask, mode, tmp_path, capsys):
    """As ``open(path, 'w')`` would: 0666 less the umask (the certificate and the HTML report)."""
    previous = os.umask(mask)
    try:
        assert main(["certify", "--example", "gaussian-certified", "--output", str(tmp_path / "c.json"), "--report", str(tmp_path / "r.html")]) == 0
    finally:
        os.umask(previous)
    for name in ("c.json", "r.html"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == mode, name
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.json", "r.html"]  # no probe file left behind


def test_a_report_that_fails_after_the_verdict_keeps_the_verdicts_status(tmp_path, monkeypatch, capsys):
    import verifier.report.html as html

    def disk_full(path, document):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(html, "write_html", disk_full)
    assert main(["certify", "--example", "gaussian-replace-one-violated", "--report", str(tmp_path / "r.html")]) == 1
    captured = capsys.readouterr()
    assert captured.out.startswith("VIOLATED")
    assert "the report was not written" in captured.err and "No space left on device" in captured.err


def test_the_plot_message_says_its_reason_once(tmp_path):
    from verifier.errors import InvalidArgument
    from verifier.report.plots import pyplot, save_figure

    fig = pyplot().figure()
    with pytest.raises(InvalidArgument) as error:
        save_figure(fig, tmp_path / "missing" / "p.png", "plot")
    assert str(error.value).count("cannot be written") == 1 and str(error.value).count("plot=") == 1
