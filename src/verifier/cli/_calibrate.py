"""``verifier calibrate``: the value of σ (or the rate, steps, epochs) that meets an (ε, δ) target
with a certificate, and the proven bracket on the best possible value.

Exit status: 0 a certified value was found, 3 no value in the parameter's range could be certified
(INCONCLUSIVE), 2 invalid input. ``--json`` prints the calibration with the final point's certificate.
"""

from __future__ import annotations

import argparse
import json
import sys

from verifier.certify.calibrate import DEFAULT_TOLERANCE, KNOBS, Calibration, Probe, calibrate
from verifier.certify.certificate import to_certificate
from verifier.certify.verdict import Verdict
from verifier.cli._certify import add_neighboring_option, claim_json_from_flags, summary_lines
from verifier.cli._options import add_budget_option, add_mechanism_options, add_scheme_options, budget_of
from verifier.cli._report import add_report_option, write_report_if_asked
from verifier.errors import NotCertified
from verifier.cli import SUMMARIES

__all__ = ["register", "calibration_lines"]


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "calibrate",
        help=SUMMARIES["calibrate"],
        description="Find the value of one parameter (σ by default) at which a rigorous upper bound meets the "
        "target (ε, δ), and a rigorous lower bound showing how far it is from the best possible value. "
        "Exit status: 0 found, 3 nothing in range certified, 2 invalid input.",
    )
    add_mechanism_options(parser)
    add_scheme_options(parser)
    add_neighboring_option(parser)
    parser.add_argument("--epsilon", type=float, required=True, help="target ε")
    parser.add_argument("--delta", type=float, required=True, help="target δ in (0, 1)")
    parser.add_argument(
        "--parameter",
        choices=tuple(KNOBS),
        default="sigma",
        help="the free parameter (default: sigma). A value given for it (e.g. --sigma 3) is the search's first probe: "
        "the answer is certified and within --tolerance of the best value either way, but the probes, hence the digits "
        "of the answer, depend on where the search starts",
    )
    parser.add_argument(
        "--tolerance",
        type=float,
        default=DEFAULT_TOLERANCE,
        help=f"stop when the bracket on the best value is this narrow, relative (default {DEFAULT_TOLERANCE})",
    )
    add_budget_option(parser, "; shared by the probes: once it is spent the answer is the bracket proven by then")
    parser.add_argument("--json", action="store_true", help="print the calibration and the final point's certificate as JSON")
    add_report_option(parser)
    parser.set_defaults(handler=_run)


def calibration_lines(result: Calibration) -> list[str]:
    """The answer, the proven bracket on the best value, the probes, and the final point's summary."""
    name, claim = result.parameter, result.outcome.claim
    safer = "smallest" if KNOBS[name].larger_is_safer else "largest"
    if result.unsafe is None:
        where = f"no value was proven unsafe, so the {safer} safe {name} is not bracketed"
    else:
        low, high = sorted((result.unsafe, result.safe))
        where = f"the {safer} safe {name} lies in [{low!r}, {high!r}] (gap {result.gap:.3%})"
    counts = {v: sum(p.verdict is v for p in result.probes) for v in Verdict}
    tally = ", ".join(f"{n} {v.value}" for v, n in counts.items() if n)
    if result.budget_spent:
        where += " (--time-budget spent: the bracket proven by then)"
    return [
        f"{name} = {result.safe!r} meets (ε={claim.epsilon!r}, δ={claim.delta!r}) with a certificate; {where}",
        f"  {len(result.probes)} probes ({tally}) in {result.seconds:.3g} s; certificate of {name} = {result.safe!r}:",
        *("  " + line for line in summary_lines(result.outcome)),
    ]


def _progress(probe: Probe) -> None:
    print(f"  probe {probe.value!r}: {probe.verdict.value} ({probe.seconds:.2g} s)", file=sys.stderr, flush=True)


def _run(args: argparse.Namespace) -> int:
    claim = claim_json_from_flags(args)
    try:
        result = calibrate(
            claim, args.parameter, tolerance=args.tolerance, only=args.method, progress=None if args.json else _progress, time_budget=budget_of(args)
        )
    except NotCertified as exc:
        print(f"verifier: INCONCLUSIVE: {exc}", file=sys.stderr)
        return Verdict.INCONCLUSIVE.exit_status
    if args.json:
        print(json.dumps({**result.to_dict(), "certificate": to_certificate(result.outcome)}))
    else:
        print("\n".join(calibration_lines(result)))
    write_report_if_asked(args, result.outcome, result)
    return 0
