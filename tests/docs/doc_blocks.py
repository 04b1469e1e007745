"""The examples of README.md and docs/**/*.md, read as a reader would run them (issue 43).

A page's fenced blocks are of these kinds:

- ``console``: ``$ command`` lines (continued with a trailing backslash), each followed by the output
  it prints (``…`` marks an elision; two spaces and ``# …`` end an output line with a note that is not
  output). A comment ``# exit N`` on the command gives its exit status and
  ``~N s CPU`` its cost.
- ``bash``/``sh``/``shell``: one command per line (continued with a backslash), no output shown.
- ``python``: a script; one whose first line is ``# NAME.py`` is a file that later commands of the
  page use (written into the page's scratch directory), the others run as they are.
- ``pycon``: an interactive session, run by :mod:`doctest` (``…`` or ``...`` elide).
- ``json``: a claim file (has a ``mechanism`` or ``scheme``), certified; other JSON must parse.
- ``text``: output shown without its command; not run.

:func:`numbers_agree` is the comparison: the numbers of the shown output must appear, in order, among
the numbers the command printed, each equal to the printed one rounded or truncated to the digits
shown.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from decimal import ROUND_DOWN, ROUND_HALF_EVEN, Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from readme_timings import pages  # noqa: E402  (the pages whose commands carry timing promises)
#: Blocks whose info string starts with one of these are Sphinx directives (toctree, eval-rst), not examples.
_DIRECTIVE = "{"
_FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```", re.S | re.M)
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
_VERDICT = re.compile(r"\b(CERTIFIED|VIOLATED|INCONCLUSIVE|REFUTED|UNSOUND)\b")
_EXIT = re.compile(r"#.*?\bexit (\d+)")
_CPU = re.compile(r"~(\d+(?:\.\d+)?) s CPU")
#: A note on a shown output line (two spaces, then ``# …``): the page's comment, not the command's output.
_NOTE = re.compile(r"\s{2,}# .*$")
#: Commands a reader runs to install or to run the whole test suite; the suite (CI's ``.ci/run``) runs
#: them itself, so the examples test counts them but does not run them.
_SETUP = re.compile(
    r"^(python3 -m venv|\.venv/bin/pip |pip |apt-get |sudo |\.venv/bin/python -m pytest -q -n 2|"
    r"\.venv/bin/python -m sphinx|\.venv/bin/python -m pytest|VERIFIER_FUZZ_EXAMPLES=)"
)


@dataclass
class Command:
    """One command line of a page, with the output the page shows for it."""

    page: str
    line: int
    words: str
    output: str = ""
    exit: int | None = None
    cpu: float | None = None
    setup: bool = False

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


@dataclass
class Block:
    """One fenced block of a page."""

    page: str
    line: int
    kind: str
    body: str
    commands: list[Command] = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def filename(self) -> str | None:
        """``NAME.py`` for a python block that starts with ``# NAME.py`` (a file, not a script)."""
        match = re.match(r"# ([\w.-]+\.py)\n", self.body)
        return match.group(1) if self.kind == "python" and match else None


def blocks(path: Path) -> list[Block]:
    """The example blocks of one page, in order."""
    text = path.read_text(encoding="utf-8")
    name = path.relative_to(ROOT).as_posix()
    found = []
    for match in _FENCE.finditer(text):
        info, body = match.group(1).strip(), match.group(2)
        if info.startswith(_DIRECTIVE):
            continue
        line = text.count("\n", 0, match.start()) + 1
        kind = info.split()[0] if info else "text"
        block = Block(name, line, kind, body)
        if kind == "console":
            block.commands = _console(name, line, body)
        elif kind in ("bash", "sh", "shell"):
            block.commands = _script(name, line, body)
        found.append(block)
    return found


def _joined(lines: list[str], i: int) -> tuple[str, str, int]:
    """(words, comment, index of the last line) of the command starting at lines[i]."""
    words, _, comment = lines[i].partition(" #")
    words = words.rstrip()
    while words.endswith("\\") and i + 1 < len(lines):
        i += 1
        more, _, more_comment = lines[i].partition(" #")
        words, comment = words[:-1].rstrip() + " " + more.strip(), comment + " " + more_comment
    return " ".join(words.split()), comment, i


def _command(page: str, line: int, words: str, comment: str) -> Command:
    exit_ = _EXIT.search("#" + comment)
    cpu = _CPU.search(comment)
    words = words.removeprefix("$ ")
    return Command(
        page,
        line,
        words,
        exit=int(exit_.group(1)) if exit_ else None,
        cpu=float(cpu.group(1)) if cpu else None,
        setup=bool(_SETUP.match(words)),
    )


def _console(page: str, line: int, body: str) -> list[Command]:
    lines = body.split("\n")
    commands: list[Command] = []
    i = 0
    while i < len(lines):
        if lines[i].startswith("$ "):
            words, comment, last = _joined(lines, i)
            commands.append(_command(page, line + 1 + i, words, comment))
            i = last
        elif commands:
            commands[-1].output += _NOTE.sub("", lines[i]) + "\n"
        i += 1
    return commands


def _script(page: str, line: int, body: str) -> list[Command]:
    lines = body.split("\n")
    commands = []
    i = 0
    while i < len(lines):
        if lines[i].strip() and not lines[i].lstrip().startswith("#"):
            words, comment, last = _joined(lines, i)
            commands.append(_command(page, line + 1 + i, words, comment))
            i = last
        i += 1
    return commands


def all_blocks() -> list[Block]:
    return [block for path in pages() for block in blocks(path)]


def number_matches(shown: str, printed: str) -> bool:
    """``printed`` rounds (half to even) or truncates to ``shown`` at the last digit shown, in decimal
    (an integer shown must be equal)."""
    want, have = Decimal(shown), Decimal(printed)
    if "." not in shown and "e" not in shown.lower():
        return want == have
    exponent = Decimal(1).scaleb(want.as_tuple().exponent)
    return any(have.quantize(exponent, rounding=mode) == want for mode in (ROUND_HALF_EVEN, ROUND_DOWN))


def numbers_agree(shown: str, printed: str) -> str | None:
    """None when the shown output's numbers and verdict words appear, in order, in the printed output;
    otherwise the first shown token that is missing, with what follows it."""
    wanted = _NUMBER.findall(shown)
    have = _NUMBER.findall(printed)
    j = 0
    for token in wanted:
        while j < len(have) and not number_matches(token, have[j]):
            j += 1
        if j == len(have):
            return f"the shown number {token} is not printed (in order, to the digits shown)"
        j += 1
    words = iter(_VERDICT.findall(printed))
    for word in _VERDICT.findall(shown):
        if word not in words:
            return f"the shown word {word} is not printed (in order)"
    return None
