"""Every ``verifier`` command shown in the code blocks of README.md and the docs' pages parses with
today's CLI, and every ``docs/…`` file they link or run exists (issue 19, "Commands finish"): a renamed
or removed flag, or a moved example file, fails here instead of in a reader's terminal, within
milliseconds. tests/docs/test_examples.py runs the commands themselves."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest

from verifier.cli import build_parser
from verifier.cli._options import check_option_uses
from verifier.errors import InvalidArgument

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "docs"))
import doc_blocks  # noqa: E402

#: README.md and the docs' pages: every example a reader can copy.
README = "\n".join(page.read_text(encoding="utf-8") for page in doc_blocks.pages())
_BLOCKS = re.findall(r"```(?:console|bash|shell|sh)\n(.*?)```", README, re.S)
_COMMAND = re.compile(r"^(?:\$ )?(?:\.venv/bin/verifier|verifier|python3? -m verifier) ")


def _commands() -> list[str]:
    """Command lines (continuations joined, comments dropped) in the README's shell blocks."""
    found = []
    for block in _BLOCKS:
        lines = block.split("\n")
        i = 0
        while i < len(lines):
            if _COMMAND.match(lines[i]):
                words = lines[i].split(" #")[0].rstrip()
                while words.endswith("\\") and i + 1 < len(lines):
                    i += 1
                    words = words[:-1] + " " + lines[i].split(" #")[0].strip()
                found.append(words.removeprefix("$ "))
            i += 1
    return found


COMMANDS = _commands()


def test_the_readme_shows_commands():
    assert len(COMMANDS) >= 20  # the extractor still finds the blocks (a format change would empty it)


@pytest.mark.parametrize("command", COMMANDS)
def test_readme_command_parses(command):
    words = shlex.split(command)
    argv = words[3:] if words[0].startswith("python") else words[1:]
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exit_:  # argparse's usage error
        pytest.fail(f"README command no longer parses (status {exit_.code}): {command}")
    if hasattr(args, "scheme"):
        try:
            check_option_uses(args)
        except InvalidArgument as error:
            pytest.fail(f"README command gives an option its scheme does not use ({error}): {command}")


def test_readme_example_files_exist():
    referenced = set(re.findall(r"(docs/[\w./-]+\.(?:json|npy|csv))", README))
    assert referenced, "the README runs docs/examples/two-phase-run.json"
    missing = sorted(path for path in referenced if not (ROOT / path).is_file())
    assert not missing


def _test_command(text: str) -> str:
    """The line that installs the test extras and runs pytest."""
    (line,) = [line for line in text.splitlines() if "pip install -e '.[test" in line and "pytest" in line and not line.lstrip().startswith("#")]
    return line.strip()


def test_ci_runs_exactly_the_readme_test_command():
    """CI (``.ci/run``) and a newcomer following the README run the same thing: on two xdist workers,
    one file per worker, without the opacus extra (torch) in the default install. Catches: a README
    or CI command edited alone, or torch creeping back into the default test run."""
    readme = _test_command((ROOT / "README.md").read_text(encoding="utf-8"))
    assert readme == _test_command((ROOT / ".ci" / "run").read_text(encoding="utf-8"))
    assert "-n 2 --dist loadfile" in readme and "'.[test,peers]'" in readme


def test_default_test_extras_do_not_pull_torch():
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    default = " ".join(extras["test"] + extras["peers"]).lower()
    assert "opacus" not in default and "torch" not in default
    assert any(dep.startswith("pytest-xdist") for dep in extras["test"])
    assert any(dep.startswith("opacus") for dep in extras["opacus"])


def test_readme_timings_agree_with_the_last_measured_run():
    """Every README command annotated ``~N s CPU`` has a row in benchmarks/readme_timings.md (written
    by benchmarks/readme_timings.py from measured runs) and the README's figure is neither below the
    measured CPU time nor more than 2× away from it (issue 32, done when 3: a README timing that
    drifted from the last measured run fails here; rerun the script with --update)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import readme_timings

    annotated = readme_timings.annotated_commands(README)
    assert len(annotated) >= 6, "the README's ~N s CPU annotations are no longer found"
    measured = readme_timings.recorded((ROOT / "benchmarks" / "readme_timings.md").read_text(encoding="utf-8"))
    for command, seconds in annotated:
        assert command in measured, f"no measured run of: {command} (python benchmarks/readme_timings.py --only '…' --update)"
        assert readme_timings.verdict(seconds, measured[command]) == "ok", (command, seconds, measured[command])
    # the flags themselves (catches a checker that never fires): the figures
    assert readme_timings.verdict(6, 18.5).startswith("DRIFT") and readme_timings.verdict(6, 9.8).startswith("OVER")
    assert readme_timings.verdict(30, 14.3).startswith("DRIFT") and readme_timings.verdict(13, 9.8) == "ok"
