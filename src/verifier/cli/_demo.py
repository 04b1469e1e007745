"""``verifier demo``: the claims users bring, decided: a DP-SGD run (Opacus-style, Poisson
sampling), the same run with balls-in-bins batches, a textbook calibration used outside its proven
range, and a claim stated to the last bit of a float (INCONCLUSIVE: no float64 bound can decide it);
it writes the HTML report of the DP-SGD claim.

Prints one screen per claim; exits 0 when every claim gets its expected verdict and 4 (a defect in
verifier) otherwise. ``--json`` prints the certificates.
"""

from __future__ import annotations

import argparse
import json
import math
import sys

from verifier.certify.certificate import to_certificate
from verifier.certify.examples import DEMO, example
from verifier.certify.verdict import Outcome, certify
from verifier.cli._certify import summary_lines
from verifier.cli import SUMMARIES
from verifier.cli._options import add_budget_option, whole_within_budget

__all__ = ["register", "DEMO_CLAIMS", "REPORTED"]

_EXIT_MISMATCH = 4

#: The claims the demo decides, in order; and the one whose HTML report it writes.
DEMO_CLAIMS = (*DEMO, example("gaussian-at-resolution"))
REPORTED = "dp-sgd-opacus"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "demo",
        help=SUMMARIES["demo"],
        description="Decide the claims users bring (one screen each) and write the HTML report of the DP-SGD claim.",
    )
    parser.add_argument("--json", action="store_true", help="print the certificates as one JSON list")
    parser.add_argument(
        "--report",
        metavar="FILE.html",
        default="verifier-demo-report.html",
        help="where to write the DP-SGD claim's HTML report (default verifier-demo-report.html; '' for none)",
    )
    add_budget_option(parser, whole=True)
    parser.set_defaults(handler=whole_within_budget(_run))


def _resolution(outcome: Outcome) -> str | None:
    """'resolution': the best bracket on ε(claimed δ) over the required directions and its relative
    width. Certify refines only until the verdict is settled, so this is as narrow as the decision
    needed, not as narrow as ``verifier epsilon`` makes it; the line says so."""
    if outcome.epsilon is None:
        return None
    combined = outcome.epsilon.combined
    if not (math.isfinite(combined.lower) and math.isfinite(combined.upper) and combined.upper > 0):
        return None
    width = (combined.upper - combined.lower) / combined.upper
    return f"  resolution: ε(δ={outcome.claim.delta:g}) ∈ [{combined.lower:.6g}, {combined.upper:.6g}], bracket width {width:.3%} (refined only as far as the verdict needed)"


def _run(args: argparse.Namespace) -> int:
    certificates, mismatches = [], []
    for number, item in enumerate(DEMO_CLAIMS, start=1):
        outcome = certify(item.parsed())
        if outcome.verdict is not item.expected:
            mismatches.append(f"{item.name}: got {outcome.verdict.value}, expected {item.expected.value}")
        if args.json:
            certificates.append({"example": item.name, "certificate": to_certificate(outcome)})
        else:
            print(f"== {number}/{len(DEMO_CLAIMS)} {item.name}: {item.claim['source']}")
            print("\n".join(summary_lines(outcome)))
            resolution = _resolution(outcome)
            if resolution:
                print(resolution)
            print(f"  why: {item.explain(outcome)}")
        if item.name == REPORTED and args.report:
            from verifier.report.html import write_report

            write_report(args.report, outcome, points=7)
            if not args.json:
                print(f"  report: {args.report} (self-contained HTML: verdict, brackets, every bound, δ(ε) plot)")
        if not args.json:
            print()
    if args.json:
        print(json.dumps(certificates))
    for line in mismatches:
        print(f"verifier: DEMO MISMATCH (a defect in verifier, please report): {line}", file=sys.stderr)
    return _EXIT_MISMATCH if mismatches else 0
