"""The README's and the docs' timing promises, measured (issue 32, done when 3; issue 43): every
command of README.md and docs/**/*.md (:func:`pages`) annotated ``# … ~N s CPU …`` is run as a user would run it, one fresh process each, and its CPU time (user +
sys of the child: what load on a shared machine does not inflate) and wall time are recorded beside
the README's figure, with the machine's load when it started.

    .venv/bin/python benchmarks/readme_timings.py [--only TEXT ...] [--update] [--out FILE.md]

A README figure more than 2× away from the measured CPU time, either way, is flagged ``DRIFT`` in
the output (a stale promise in either direction); one below the measured time is flagged ``OVER``
(the command takes more than the README says). ``--update`` rewrites each annotation to the
measured CPU time rounded up (a ceiling of 1.25× the measurement, so a rerun is not flagged OVER
for noise). With ``--only``, the rows of the other commands in the existing table are kept (with
their own numbers; the header then describes the latest run). The Markdown goes to ``benchmarks/readme_timings.md``; ``tests/cli/test_readme_commands.py``
checks that every annotated command has a row there and that the README agrees with it within 2×;
``tests/docs/test_examples.py`` measures them again when it runs the examples.

Commands run in a scratch directory (their output files land there) with ``docs/`` linked into it,
as ``python -m verifier …`` with this interpreter.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import shlex
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from production import run_context, run_process  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def pages() -> list[Path]:
    """README.md and every Markdown page of the documentation (``docs/_build`` and the benchmark pages
    the docs build generates excluded): the pages whose examples a reader runs."""
    docs = sorted(p for p in (ROOT / "docs").rglob("*.md") if "_build" not in p.parts and "generated" not in p.parts)
    return [README, *docs]

OUT = ROOT / "benchmarks" / "readme_timings.md"
#: The annotation on a README command line: ``~N s CPU``.
ANNOTATION = re.compile(r"~(\d+(?:\.\d+)?) s CPU")
_COMMAND = re.compile(r"^(?:\$ )?(?:\.venv/bin/verifier|verifier) ")
#: Drift beyond this factor, either way, is flagged.
DRIFT = 2.0
#: --update writes this multiple of the measured CPU time, rounded up.
HEADROOM = 1.25
TIMEOUT_S = 1800


def annotated_commands(text: str) -> list[tuple[str, float]]:
    """(command, README's CPU seconds) for each command line of a shell block carrying ``~N s CPU``
    in its comment (continuation lines joined; the comment may sit on the last one)."""
    found = []
    for block in re.findall(r"```(?:console|bash|shell|sh)\n(.*?)```", text, re.S):
        lines = block.split("\n")
        i = 0
        while i < len(lines):
            if _COMMAND.match(lines[i]):
                words, comment = lines[i].partition(" #")[::2]
                words = words.rstrip()
                while words.endswith("\\") and i + 1 < len(lines):
                    i += 1
                    more, more_comment = lines[i].partition(" #")[::2]
                    words, comment = words[:-1] + " " + more.strip(), comment + more_comment
                match = ANNOTATION.search(comment)
                if match:
                    found.append((_normal(words), float(match.group(1))))
            i += 1
    return found


def _normal(words: str) -> str:
    """A command line as ``verifier …`` with single spaces (the README writes ``$ verifier`` or ``.venv/bin/verifier``)."""
    return " ".join(words.removeprefix("$ ").removeprefix(".venv/bin/").split())


def recorded(text: str) -> dict[str, float]:
    """command -> measured CPU seconds, from a table this script wrote."""
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 4 and cells[0].startswith("`verifier"):
            rows[cells[0].strip("`")] = float(cells[2])
    return rows


def verdict(readme: float, cpu: float) -> str:
    """ok, OVER (the command took more CPU than the README says) or DRIFT (more than 2× away)."""
    if readme > DRIFT * cpu or cpu > DRIFT * readme:
        return f"DRIFT (README ~{readme:g} s, measured {cpu:.1f} s: more than {DRIFT:g}× away)"
    if cpu > readme:
        return f"OVER (README ~{readme:g} s, measured {cpu:.1f} s)"
    return "ok"


def _argv(command: str) -> list[str]:
    words = shlex.split(command)
    return [sys.executable, "-m", "verifier", *words[1:]]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append", help="run only the commands containing this text (repeatable: any of them)")
    parser.add_argument("--update", action="store_true", help="rewrite the README's annotations with the measured CPU times")
    parser.add_argument("--out", type=Path, default=OUT, help=f"Markdown output (default {OUT.relative_to(ROOT)})")
    args = parser.parse_args()
    texts = {page: page.read_text(encoding="utf-8") for page in pages()}
    commands = [(c, s) for text in texts.values() for c, s in annotated_commands(text) if args.only is None or any(text in c for text in args.only)]
    rows, flagged = [], 0
    with tempfile.TemporaryDirectory(prefix="readme-timings-") as scratch:
        for name in ("docs", "proofs", "benchmarks"):
            os.symlink(ROOT / name, Path(scratch) / name)
        cwd = os.getcwd()
        os.chdir(scratch)
        try:
            for command, readme in commands:
                load = os.getloadavg()[0]
                got = run_process(_argv(command), TIMEOUT_S)
                cpu = got.get("cpu", got.get("cpu_at_least", math.nan))
                wall = got.get("wall", got.get("wall_at_least", math.nan))
                status = verdict(readme, cpu) if "rc" in got else f"TIMEOUT after {TIMEOUT_S} s"
                flagged += status != "ok"
                rows.append((command, readme, cpu, wall, load, got.get("rc"), status))
                print(f"CPU {cpu:7.1f} s  wall {wall:7.1f} s  load {load:4.1f}  exit {got.get('rc')}  {command}\n    {status}", flush=True)
        finally:
            os.chdir(cwd)
    earlier = args.out.read_text(encoding="utf-8").splitlines() if args.out.exists() else []
    rerun = {row[0] for row in rows}
    kept = [  # --only keeps the others' rows; a full run drops rows of commands the README no longer annotates
        line for line in earlier if args.only is not None and line.startswith("| `verifier") and line.split("`")[1] not in rerun
    ]
    args.out.write_text(_markdown(rows) + "".join(f"{line}\n" for line in kept), encoding="utf-8")
    if args.update:
        for page, text in texts.items():
            for command, _, cpu, *_ in rows:
                text = _rewrite(text, command, math.ceil(HEADROOM * cpu))
            if text != texts[page]:
                page.write_text(text, encoding="utf-8")
    print(f"{flagged} of {len(rows)} README timings flagged; table in {args.out}")
    return 1 if flagged and not args.update else 0


def _rewrite(text: str, command: str, seconds: int) -> str:
    """``text`` with the annotation of ``command`` set to ``~seconds s CPU``."""
    out, lines, i = [], text.split("\n"), 0
    while i < len(lines):
        start = i
        words = lines[i].partition(" #")[0].rstrip()
        while words.endswith("\\") and i + 1 < len(lines):
            i += 1
            words = words[:-1] + " " + lines[i].partition(" #")[0].strip()
        chunk = lines[start : i + 1]
        if _COMMAND.match(lines[start]) and _normal(words) == command:
            chunk = [ANNOTATION.sub(f"~{seconds} s CPU", line) for line in chunk]
        out += chunk
        i += 1
    return "\n".join(out)


def _markdown(rows: list[tuple]) -> str:
    now, _, machine = run_context()
    out = [
        "# README timings, measured (issue 32)\n",
        f"Generated by `benchmarks/readme_timings.py` on {now}, {machine}. One fresh process per command",
        "(`python -m verifier …`, start-up included), run one after the other. CPU = user + sys of the",
        "process (what the README's `~N s CPU` promises); wall includes waiting for a core on a shared",
        "machine, so the load average (1 min) at each start is given. A README figure more than 2× away",
        "from the measured CPU time is flagged DRIFT, one below it OVER.\n",
        "| command | README (s CPU) | measured CPU (s) | wall (s) | load | exit | status |",
        "|---|---|---|---|---|---|---|",
    ]
    for command, readme, cpu, wall, load, rc, status in rows:
        out.append(f"| `{command}` | {readme:g} | {cpu:.1f} | {wall:.1f} | {load:.1f} | {rc} | {status} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
