"""The ``--report FILE.html`` option: a self-contained HTML report of the verdict (see
:mod:`verifier.report.html`)."""

from __future__ import annotations

import argparse
import sys

from verifier.certify.calibrate import Calibration
from verifier.certify.verdict import Outcome
from verifier.errors import InvalidArgument

__all__ = ["add_report_option", "write_report_if_asked"]


def add_report_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--report",
        metavar="FILE.html",
        help="also write a self-contained HTML report (verdict, brackets, every bound, Monte Carlo evidence, δ(ε) plot, versions)",
    )


def write_report_if_asked(args: argparse.Namespace, outcome: Outcome, calibration: Calibration | None = None) -> None:
    """Write the report to ``--report`` when given (matplotlib is imported only then). A write that
    fails after the verdict (the path was checked before the computation; a disk may still fill up)
    is said on stderr and leaves the verdict's exit status alone: a VIOLATED claim never reads as
    "bad input" because of its report (issue 32)."""
    if args.report is None:
        return
    from verifier.report.html import write_report

    try:
        write_report(args.report, outcome, calibration=calibration)
    except (InvalidArgument, OSError) as exc:
        print(f"verifier: the report was not written: {exc}", file=sys.stderr)
