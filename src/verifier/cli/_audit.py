"""``verifier audit PEER``: hold an installed accountant's numbers against verifier's rigorous
brackets (see :mod:`verifier.audit`). Prints a table (or ``--json``), writes the JSON report to
``--out``. Exit status: 0 nothing unsound found (or the peer is not installed: reported as
skipped), 1 at least one finding."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from verifier._validation import check_integer
from verifier.audit import PEERS, AuditReport, audit
from verifier.cli._table import wrapped
from verifier.cli import SUMMARIES
from verifier.cli._options import add_budget_option, whole_within_budget

__all__ = ["register", "report_lines", "class_table", "LOOSE", "EXIT_NOTHING_CHECKED"]


#: The peer is not installed, so nothing was checked (INCONCLUSIVE's status: neither clean nor a finding).
EXIT_NOTHING_CHECKED = 3


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "audit",
        help=SUMMARIES["audit"],
        description=f"Run a peer accountant ({', '.join(sorted(PEERS))}) on a grid of claims (plus the property catalogue with Hypothesis when "
        "--examples > 0) and report every number below verifier's rigorous lower bound (UNSOUND, with a "
        "reproducer) and how far the others sit above the upper bound. Exit status: 0 no finding, 1 findings, "
        "3 nothing checked (the peer is not installed).",
    )
    parser.add_argument("peer", choices=sorted(PEERS), help="the accountant library to audit")
    parser.add_argument("--examples", type=int, default=0, help="Hypothesis examples per catalogue property (default 0: grid only)")
    parser.add_argument("--quick", action="store_true", help="a few grid cells per accountant")
    parser.add_argument("--json", action="store_true", help="print the JSON report")
    parser.add_argument("--out", metavar="FILE", help="also write the JSON report to FILE")
    add_budget_option(parser, whole=True)
    parser.set_defaults(handler=whole_within_budget(_run))


def _fmt(x: float) -> str:
    return f"{x:.6g}" if math.isfinite(x) else str(x)


def _table(rows) -> list[str]:
    """The rows grouped under their case (mechanism, scheme, δ; in order of first appearance), one
    line each, columns as wide as their widest cell: at most TABLE_WIDTH characters (issue 32: one
    line per row with the case at its end was 243 characters wide)."""
    cells = {
        id(row): (
            row.status,
            row.relation,
            _fmt(row.peer_epsilon),
            f"[{_fmt(row.bracket.lower)}, {_fmt(row.bracket.upper)}]" if row.bracket else "",
            f"{row.excess:+.2%}" if row.excess is not None else "",
            row.accountant,
        )
        for row in rows
    }
    header = ("status", "relation", "peer ε/TPR", "verifier [lower, upper]", "excess", "accountant")
    widths = [max(len(c[i]) for c in (header, *cells.values())) for i in range(len(header))]

    def line(c) -> list[str]:
        left = " ".join(f"{text:<{w}}" for text, w in zip(c[:2], widths[:2]))
        right = " ".join(f"{text:>{w}}" for text, w in zip(c[2:5], widths[2:5]))
        return wrapped(f"  {left} {right}  {c[5]}", " " * (len(left) + len(right) + 5))  # the accountant last, wrapped if need be

    lines = ["case", *line(header)]
    for case in dict.fromkeys(row.case for row in rows):
        lines += wrapped(case, "    ")
        for row in rows:
            if row.case == case:
                lines += line(cells[id(row)])
    return lines


def report_lines(report: AuditReport) -> list[str]:
    """The terminal report: a table of rows, then each finding with its reproducer, then notes."""
    if report.skipped:
        return [f"{report.peer}: skipped ({report.skipped})"]
    lines = [f"audit of {report.peer}: {len(report.rows)} numbers checked, {len(report.findings)} unsound (on the wrong side of verifier's rigorous bracket)"]
    lines += _table(report.rows)
    for row in report.findings:
        what = {"tpr": "TPR", "delta": "δ"}.get(row.quantity, "ε")
        side = f"> {row.bracket.upper!r} (a lower bound above verifier's upper end)" if row.check == "lower_soundness" else f"< {row.bracket.lower!r}"
        lines += wrapped(f"FINDING ({row.check}): {row.accountant}, {row.relation}, {row.case}: {what} = {row.peer_epsilon!r} {side}", "  ")
        if row.note:
            lines += wrapped(f"  ({row.note})", "  ")
        if row.reproducer:  # one line whatever its length: the command is copied and pasted
            lines.append(f"  reproduce: {row.reproducer}" + (f"   → {row.verdict}" if row.verdict else ""))
    for key in dict.fromkeys((r.accountant, r.relation) for r in report.findings if r.check != "lower_soundness"):
        mine = [r for r in report.rows if (r.accountant, r.relation) == key and r.status == "sound"]
        above = [r.case for r in mine if r.excess is not None and r.excess >= 0]
        inside = [r.case for r in mine if r.excess is None or r.excess < 0]
        if above:
            lines += wrapped(f"{key[0]} ({key[1]}) does not bite (at or above verifier's upper bound) at: " + "; ".join(above), "  ")
        if inside:
            lines += wrapped(f"{key[0]} ({key[1]}) is undecided (inside verifier's bracket) at: " + "; ".join(inside), "  ")
    lines += class_table(report)
    lines += [f"note: {note}" for note in report.notes]
    return lines


#: Excess over verifier's upper bound above which a sound number is called loose in the class table.
LOOSE = 0.10


def class_table(report: AuditReport) -> list[str]:
    """One line per group (a peer's event class): how many numbers were judged, how many unsound,
    sound within LOOSE of verifier's upper bound, loose; then the groups judged not at all, why. The
    class column is as wide as its widest name and the last column wraps under itself, so every line
    fits TABLE_WIDTH (issue 40: the notes of unjudged classes made rows 222 characters wide)."""
    groups = list(dict.fromkeys(r.group for r in report.rows if r.group))
    if not groups and not report.unjudged:
        return []
    width = max(len(name) for name in ["class", *groups, *(group for group, _ in report.unjudged)])
    lead = "per class: "
    indent = " " * (len(lead) + width + 32)  # under the finding column

    def row(group: str, counts: tuple[str, str, str, str], finding: str, first: str = " " * len(lead)) -> list[str]:
        n, unsound, sound, loose = counts
        return wrapped(f"{first}{group:{width}} {n:>7} {unsound:>7} {sound:>6} {loose:>6}  {finding}", indent)

    lines = ["", *row("class", ("numbers", "unsound", "sound", "loose"), "finding", lead)]
    for group in groups:
        mine = [r for r in report.rows if r.group == group]
        unsound = sum(r.status == "UNSOUND" for r in mine)
        loose = sum(r.status == "sound" and r.excess is not None and r.excess > LOOSE for r in mine)
        sound = len(mine) - unsound - loose
        lower_only = all(r.bracket is not None and r.bracket.upper == math.inf and r.bracket.lower < math.inf for r in mine)
        finding = "UNSOUND (see FINDING lines)" if unsound else (f"sound, loose by > {LOOSE:.0%} somewhere" if loose else "sound")
        if lower_only and not unsound:
            finding = "not refuted (held against a rigorous lower bound only)"
        lines += row(group, (str(len(mine)), str(unsound), str(sound), str(loose)), finding)
    for group, why in report.unjudged:
        lines += row(group, ("-", "-", "-", "-"), why)
    return lines


def _run(args: argparse.Namespace) -> int:
    examples = check_integer("examples", args.examples, minimum=0)
    report = audit(args.peer, examples=examples, quick=args.quick)
    text = json.dumps(report.to_dict())
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    print(text if args.json else "\n".join(report_lines(report)))
    if report.skipped:  # nothing was checked: never the status of a clean audit (issue 41)
        return EXIT_NOTHING_CHECKED
    return 1 if report.findings else 0
