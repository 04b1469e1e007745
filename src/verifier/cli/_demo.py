"""``verifier demo``: certify the built-in example claims, one per verdict.

Prints each example's verdict beside the verdict it must get; exits 0 when every example gets its
expected verdict and 4 (a defect in verifier) otherwise. ``--json`` prints the certificates.
"""

from __future__ import annotations

import argparse
import json
import sys

from verifier.certify.certificate import to_certificate
from verifier.certify.examples import EXAMPLES
from verifier.certify.verdict import certify
from verifier.cli._certify import summary_lines

__all__ = ["register"]

_EXIT_MISMATCH = 4


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="certify three built-in example claims (certified, violated, inconclusive)",
        description="Certify the built-in example claims: one CERTIFIED, one VIOLATED, one INCONCLUSIVE.",
    )
    parser.add_argument("--json", action="store_true", help="print the certificates as one JSON list")
    parser.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    certificates, mismatches = [], []
    for item in EXAMPLES:
        outcome = certify(item.parsed())
        if outcome.verdict is not item.expected:
            mismatches.append(f"{item.name}: got {outcome.verdict.value}, expected {item.expected.value}")
        if args.json:
            certificates.append({"example": item.name, "certificate": to_certificate(outcome)})
            continue
        print(f"== {item.name}: {item.claim['source']}")
        print("\n".join(summary_lines(outcome)))
        print(f"  why: {item.story}\n")
    if args.json:
        print(json.dumps(certificates))
    for line in mismatches:
        print(f"verifier: DEMO MISMATCH (a defect in verifier, please report): {line}", file=sys.stderr)
    return _EXIT_MISMATCH if mismatches else 0
