"""Every example of README.md and docs/**/*.md runs, and prints what the page shows (issue 43, Done
when 3): each ``verifier``/``pytest``/``python`` command is run as a reader would run it (a fresh
process, in a scratch directory beside ``docs/``, ``proofs/`` and ``benchmarks/``), its exit status
compared with the page's ``# exit N``, the numbers of the shown output compared, in order, with the
printed ones to the digits shown (:func:`doc_blocks.numbers_agree`), and its CPU time with the page's
``~N s CPU`` (more than 2× away, either way, fails; an unannotated command must take under
``UNANNOTATED_CPU`` seconds). Python blocks run as scripts, ``pycon`` sessions by doctest, claim files
by ``verifier certify``. Commands annotated at ``SLOW_CPU`` seconds or more, and blocks that import
jax_privacy, Opacus or torch (skipped where those extras are not installed), are marked slow; the
install and whole-suite commands are counted, not run (CI runs them: ``.ci/run``).
"""

from __future__ import annotations

import json
import os
import re
import resource
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import doc_blocks  # noqa: E402

ROOT = doc_blocks.ROOT
#: A command annotated ``~N s CPU`` with N at least this is marked slow (the default run skips it).
SLOW_CPU = 2.0
#: An unannotated command must stay under this many CPU seconds (annotate it otherwise; the margin
#: over SLOW_CPU absorbs a cold byte-code cache on a fresh clone).
UNANNOTATED_CPU = 4.0
#: Start-up noise allowed on top of the 2× band of an annotation (a cold byte-code cache, a loaded machine).
CPU_SLACK = 0.5

BLOCKS = doc_blocks.all_blocks()
COMMANDS = [command for block in BLOCKS for command in block.commands]
RUN = [command for command in COMMANDS if not command.setup]
SCRIPTS = [block for block in BLOCKS if block.kind in ("python", "json") and not block.filename]
#: Optional libraries a block may import: the examples test skips the block without them, and marks it
#: slow (importing jax or torch alone costs 10-20 s of CPU).
OPTIONAL = ("opacus", "torch", "jax_privacy", "jax")
_IMPORT = re.compile(r"^(?:>>> |\.\.\. )?\s*(?:from|import) (\w+)", re.M)


def _optional(body: str) -> set[str]:
    """The optional libraries a block (or the file block a command runs) imports."""
    return set(_IMPORT.findall(body)) & set(OPTIONAL)


def _sessions() -> list[doc_blocks.Block]:
    """The interactive sessions: a page's ``pycon`` blocks are one session, as a reader types them one
    after the other; a block that imports an optional library stands alone (it imports what it uses)."""
    sessions: dict[str, doc_blocks.Block] = {}
    alone = []
    for block in BLOCKS:
        if block.kind != "pycon":
            continue
        if _optional(block.body):
            alone.append(block)
        elif block.page in sessions:
            sessions[block.page].body += "\n" + block.body
        else:
            sessions[block.page] = doc_blocks.Block(block.page, block.line, "pycon", block.body)
    return [*sessions.values(), *alone]


def _block_param(block: doc_blocks.Block):
    return pytest.param(block, id=block.id, marks=[pytest.mark.slow] if _optional(block.body) else [])


def _param(command: doc_blocks.Command):
    slow = command.cpu is not None and command.cpu >= SLOW_CPU
    return pytest.param(command, id=command.id, marks=[pytest.mark.slow] if slow else [])


def _argv(words: str) -> list[str]:
    argv = shlex.split(words)
    head = argv[0]
    if head in ("verifier", ".venv/bin/verifier"):
        return [sys.executable, "-m", "verifier", *argv[1:]]
    if head == "pytest":
        return [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *argv[1:]]
    if head in ("python", "python3", ".venv/bin/python"):
        return [sys.executable, *argv[1:]]
    raise AssertionError(f"the examples test does not know how to run {head!r}: {words}")


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    """One scratch directory per page, with the repository's docs/, proofs/ and benchmarks/ linked
    into it, the page's file blocks (``# NAME.py``) written there and its first claim as claim.json."""
    made: dict[str, Path] = {}

    def directory(page: str) -> Path:
        if page not in made:
            path = tmp_path_factory.mktemp(page.replace("/", "-").removesuffix(".md"))
            for name in ("docs", "proofs", "benchmarks"):
                (path / name).symlink_to(ROOT / name)
            for block in doc_blocks.blocks(ROOT / page):
                if block.filename:
                    (path / block.filename).write_text(block.body, encoding="utf-8")
                elif block.kind == "json" and not (path / "claim.json").exists():
                    (path / "claim.json").write_text(block.body, encoding="utf-8")  # the page's claim.json
            made[page] = path
        return made[page]

    return directory


def _run(argv: list[str], cwd: Path) -> tuple[subprocess.CompletedProcess, float]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    env.pop("COLUMNS", None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=1800)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return result, cpu


def test_the_pages_have_examples():
    """The extractor still finds the blocks (a format change would empty it) and every block is of a
    kind it knows."""
    assert len(RUN) >= 40 and len(SCRIPTS) >= 3
    kinds = {block.kind for block in BLOCKS}
    assert kinds <= {"console", "bash", "sh", "shell", "python", "pycon", "json", "text"}, kinds


@pytest.mark.parametrize("command", [_param(c) for c in RUN])
def test_command(command: doc_blocks.Command, scratch):
    result, cpu = _run(_argv(command.words), scratch(command.page))
    printed = result.stdout + result.stderr
    assert "Traceback" not in printed, f"{command.id}: {command.words}\n{printed[-3000:]}"
    expected = command.exit if command.exit is not None else (0, 1, 3)
    assert result.returncode in (expected if isinstance(expected, tuple) else (expected,)), (
        f"{command.id}: exit {result.returncode}, the page says {expected}: {command.words}\n{printed[-3000:]}"
    )
    problem = doc_blocks.numbers_agree(command.output, printed)
    assert problem is None, f"{command.id}: {problem}: {command.words}\nprinted:\n{printed[-4000:]}"
    if command.cpu is not None:
        assert command.cpu / 2 - CPU_SLACK <= cpu <= 2 * command.cpu + CPU_SLACK, (
            f"{command.id}: the page says ~{command.cpu:g} s CPU, measured {cpu:.1f} s: {command.words}"
        )
    else:
        assert cpu <= UNANNOTATED_CPU, f"{command.id}: {cpu:.1f} s CPU: annotate it (~N s CPU): {command.words}"


@pytest.mark.parametrize("block", [_block_param(b) for b in SCRIPTS + _sessions() + [b for b in BLOCKS if b.filename and _optional(b.body)]])
def test_code_block(block: doc_blocks.Block, scratch):
    for name in _optional(block.body):
        pytest.importorskip(name, reason=f"{block.id} needs {name} (an optional extra)")
    cwd = scratch(block.page)
    if block.kind == "json":
        claim = json.loads(block.body)
        if not ({"mechanism", "scheme"} & set(claim)):
            return
        (cwd / f"claim-{block.line}.json").write_text(block.body, encoding="utf-8")
        result, _ = _run([sys.executable, "-m", "verifier", "certify", f"claim-{block.line}.json"], cwd)
        assert result.returncode in (0, 1, 3), f"{block.id}: exit {result.returncode}\n{result.stdout}{result.stderr}"
        return
    if block.kind == "pycon":
        session = cwd / f"session-{block.line}.txt"
        session.write_text(block.body.replace("…", "..."), encoding="utf-8")
        argv = [sys.executable, "-m", "doctest", "-o", "ELLIPSIS", "-o", "NORMALIZE_WHITESPACE", session.name]
    elif block.filename:  # a file block with optional imports that no command of the page runs
        argv = [sys.executable, block.filename]
    else:
        argv = [sys.executable, "-c", block.body]
    result, _ = _run(argv, cwd)
    assert result.returncode == 0, f"{block.id}:\n{result.stdout[-4000:]}{result.stderr[-4000:]}"


def test_a_mutated_number_fails():
    """The comparison bites: the README's ε bracket with one digit changed no longer agrees with what
    the command prints, while the page's own output does (catches a comparison that accepts anything,
    e.g. one that compares only the count of numbers or only the verdict word)."""
    (command,) = [c for c in COMMANDS if c.page == "README.md" and c.words.startswith("verifier epsilon --sigma 1.1")]
    result, _ = _run(_argv(command.words), ROOT)
    assert doc_blocks.numbers_agree(command.output, result.stdout) is None
    assert "0.91872315685021777" in command.output
    mutated = command.output.replace("0.91872315685021777", "0.91882315685021777", 1)
    assert doc_blocks.numbers_agree(mutated, result.stdout) is not None
    truncated = command.output.replace("0.91872315685021777", "0.9187", 1)  # fewer digits shown still agree
    assert doc_blocks.numbers_agree(truncated, result.stdout) is None
    assert doc_blocks.numbers_agree("CERTIFIED: 1", "VIOLATED: 1") is not None


@pytest.mark.parametrize(
    ("shown", "printed", "agree"),
    [("0.0286", "0.02861", True), ("0.0286", "0.02859", True), ("0.0286", "0.0287", False), ("1", "1.5", False),
     ("2.2564061672269038e-07", "2.2564061672269038e-07", True), ("2.26e-07", "2.2564e-07", True), ("1e-05", "1e-06", False)],
)
def test_number_matches(shown, printed, agree):
    """Rounded or truncated to the digits shown agrees; anything else does not."""
    assert doc_blocks.number_matches(shown, printed) is agree
