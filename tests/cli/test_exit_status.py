"""The exit status is the CLI's API (issue 19): a crash must never read as VIOLATED (1).

Each test runs ``verifier`` in a subprocess, as a CI script would. A defect is provoked by replacing
a command's handler with one that raises (the broken implementation these tests catch: a ``main``
without the catch-all, where Python exits 1 with a traceback).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

TIMEOUT_S = 120  # generous: the machine is shared; no assertion is about speed

#: Runs ``main`` with the certify handler replaced by ``BODY`` (a statement run on each call).
_PATCHED = textwrap.dedent(
    """
    import sys, time
    import verifier.cli._certify as certify_cli
    def broken(args):
        {body}
    certify_cli._run = broken
    from verifier.cli import main
    sys.exit(main(sys.argv[1:]))
    """
)


def _run_patched(body: str, *argv: str, **kwargs) -> subprocess.CompletedProcess:
    code = _PATCHED.format(body=body)
    return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=TIMEOUT_S, **kwargs)


def _verifier(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "verifier", *argv], capture_output=True, text=True, timeout=TIMEOUT_S)


@pytest.mark.parametrize("error", ["ZeroDivisionError('float division by zero')", "MemoryError()"])
def test_unexpected_exception_exits_4_with_one_line_and_no_traceback(error):
    result = _run_patched(f"raise {error}", "certify", "--example", "gaussian-certified")
    assert result.returncode == 4, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "DEFECT" in lines[0] and "report" in lines[0] and "--debug" in lines[0]
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_debug_shows_the_traceback_before_or_after_the_command():
    for argv in (("--debug", "certify", "--example", "gaussian-certified"), ("certify", "--example", "gaussian-certified", "--debug")):
        result = _run_patched("raise ZeroDivisionError('boom')", *argv)
        assert result.returncode == 4
        assert "Traceback (most recent call last)" in result.stderr and "ZeroDivisionError: boom" in result.stderr


def test_verdicts_keep_their_statuses():
    """0 and 1 only with a verdict printed (the catch-all must not swallow them)."""
    certified = _verifier("certify", "--example", "gaussian-certified")
    violated = _verifier("certify", "--example", "gaussian-replace-one-violated")
    assert certified.returncode == 0 and certified.stdout.startswith("CERTIFIED")
    assert violated.returncode == 1 and violated.stdout.startswith("VIOLATED")


def test_invalid_input_exits_2_with_one_line():
    result = _verifier("certify", "--sigma", "-1", "--epsilon", "1", "--delta", "1e-5")
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "sigma" in result.stderr


def _wait_for(path: Path, child: subprocess.Popen, timeout: float = TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert child.poll() is None, child.stderr.read()
        assert time.monotonic() < deadline, "the child never started"
        time.sleep(0.05)


@pytest.mark.parametrize(("signum", "status", "word"), [(signal.SIGINT, 130, "SIGINT"), (signal.SIGTERM, 143, "SIGTERM")])
def test_signal_exits_with_128_plus_signal_and_leaves_no_partial_file(tmp_path, signum, status, word):
    """The handler writes half a certificate through the atomic writer, then hangs; the signal must
    end the run with its status, one line, and neither the target nor a temporary file left."""
    started = tmp_path / "started"
    target = tmp_path / "certificate.json"
    body = (
        "from verifier._files import atomic_output\n"
        f"    with atomic_output({str(target)!r}, 'output') as h:\n"
        "        h.write('{\"verdict\": ')\n"
        f"        open({str(started)!r}, 'w').close()\n"
        "        time.sleep(600)"
    )
    code = _PATCHED.format(body=body)
    # a shell without job control starts background jobs with SIGINT ignored, and Python keeps an
    # ignored SIGINT: restore the default so the test does not depend on how pytest was launched
    child = subprocess.Popen(
        [sys.executable, "-c", code, "certify", "--example", "gaussian-certified"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    try:
        _wait_for(started, child)
        child.send_signal(signum)
        _, err = child.communicate(timeout=TIMEOUT_S)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == status
    assert err.strip().count("\n") == 0 and word in err
    assert list(tmp_path.iterdir()) == [started]  # no certificate.json, no .part file


def test_closed_pipe_exits_141_with_one_line():
    """``verifier … | head -c 1``: the reader goes away; status 141, no BrokenPipeError traceback."""
    reader, writer = os.pipe()
    os.close(reader)  # nobody reads: the first write raises EPIPE
    result = subprocess.run([sys.executable, "-m", "verifier", "certify", "--example", "gaussian-certified", "--json"], stdout=writer, stderr=subprocess.PIPE, text=True, timeout=TIMEOUT_S)
    os.close(writer)
    assert result.returncode == 141
    assert result.stderr.strip().count("\n") == 0 and "SIGPIPE" in result.stderr


def test_output_writes_the_certificate_whole(tmp_path):
    target = tmp_path / "cert.json"
    result = _verifier("certify", "--example", "gaussian-certified", "--output", str(target))
    assert result.returncode == 0
    assert json.loads(target.read_text(encoding="utf-8"))["verdict"] == "CERTIFIED"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cert.json"]


def test_output_to_an_unwritable_place_is_invalid_input(tmp_path):
    result = _verifier("certify", "--example", "gaussian-certified", "--output", str(tmp_path / "missing" / "cert.json"))
    assert result.returncode == 2 and "output" in result.stderr


@pytest.mark.parametrize("module", ["verifier._fast.rdp_series", "verifier._fast.hockey"])
def test_a_kernel_or_dependency_that_fails_to_import_is_a_defect_not_violated(module):
    """A compiled kernel that cannot be imported: the console script's import guard exits 4
    with one line naming the module. Broken implementation caught: an entry point that imports
    ``verifier.cli`` at module level (Python's traceback exits 1, read as VIOLATED)."""
    code = textwrap.dedent(
        f"""
        import sys
        sys.modules[{module!r}] = None  # import of it now raises ImportError, as a missing .so does
        sys.argv = ["verifier", "certify", "--mechanism", "gaussian", "--sigma", "1", "--epsilon", "3", "--delta", "1e-5"]
        from verifier._console import run
        run()
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=TIMEOUT_S)
    assert done.returncode == 4, done.stderr
    assert done.stderr.count("\n") == 1 and module in done.stderr and "Traceback" not in done.stderr


def test_python_dash_m_verifier_uses_the_import_guard():
    done = subprocess.run([sys.executable, "-m", "verifier", "--version"], capture_output=True, text=True, timeout=TIMEOUT_S)
    assert done.returncode == 0 and done.stdout.strip()
