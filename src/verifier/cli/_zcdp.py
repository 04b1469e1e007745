"""``verifier zcdp``: the zCDP parameter ρ of a scheme (an UPPER bound) and the (ε, δ) it converts to
by the chapter's standard conversion (Steinke 2022, Remark 15) and its tight one (Prop 14), each an
UPPER bound. ``--delta`` asks for ε(δ), ``--epsilon`` for δ(ε); ``--json`` prints one object."""

from __future__ import annotations

import argparse
import json

from verifier._types import json_number
from verifier.cli._options import add_direction_option, add_mechanism_options, add_scheme_options, build_scheme
from verifier.errors import InvalidArgument, NotApplicable
from verifier.rdp.conversion import Conversion
from verifier.rdp.zcdp import RHO_CITATION, delta_from_rho, epsilon_from_rho, rho_upper
from verifier.cli import SUMMARIES
from verifier.cli._options import add_budget_option, whole_within_budget

__all__ = ["register"]

#: JSON key suffix and the words each conversion is printed with.
_NAMES = {
    Conversion.CLASSICAL: ("standard", "standard: rho + 2 sqrt(rho ln(1/delta)), Steinke 2022 Remark 15"),
    Conversion.IMPROVED: ("prop14", "tight: Steinke 2022 Prop 14, best order"),
}


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "zcdp",
        help=SUMMARIES["zcdp"],
        description="An upper bound on the zCDP parameter rho of the scheme (Gaussian rho = Delta^2/(2 sigma^2), "
        "pure eps0-DP rho = eps0^2/2, composition adds) and the (epsilon, delta) upper bounds of the "
        "standard (Remark 15) and tight (Prop 14) conversions.",
    )
    add_mechanism_options(parser)
    add_scheme_options(parser, method=False)
    add_direction_option(
        parser,
        "; rho bounds both directions, hence each. replace_one also gives fixed-size batches and Poisson sampling their rho "
        "(steps x the replace-one pair's, Steinke 2022 Lemma 33.6: no amplification), the rule behind the zcdp rows of "
        "`verifier epsilon` there",
    )
    parser.add_argument("--delta", type=float, help="convert to an upper bound on epsilon at this delta in (0, 1)")
    parser.add_argument("--epsilon", type=float, help="convert to an upper bound on delta at this epsilon")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    add_budget_option(parser, whole=True)
    parser.set_defaults(handler=whole_within_budget(_run))


def _run(args: argparse.Namespace) -> int:
    scheme = build_scheme(args)
    try:
        rho = rho_upper(scheme)
    except NotApplicable as exc:
        fix = "zCDP has no rule for sampling under add/remove; under --neighboring replace_one rho is steps x the step's" if args.scheme == "poisson" else ""
        raise InvalidArgument("scheme", args.scheme, f"has no known zCDP parameter ({exc})", fix=fix) from None
    payload: dict = {"rho": json_number(rho), "citation": RHO_CITATION}
    lines = [f"rho <= {rho!r} (zCDP, both directions{', replace-one neighbours' if args.direction == 'replace_one' else ''})"]
    for conversion, (key, words) in _NAMES.items():
        if args.delta is not None:
            found = epsilon_from_rho(rho, args.delta, conversion)
            payload["delta"] = args.delta
            payload[f"epsilon_{key}"] = json_number(found.value)
            lines.append(f"epsilon(delta={args.delta:g}) <= {found.value!r}  ({words}; order {found.order:.6g})")
        if args.epsilon is not None:
            found = delta_from_rho(rho, args.epsilon, conversion)
            payload["epsilon"] = args.epsilon
            payload[f"delta_{key}"] = json_number(found.value)
            lines.append(f"delta(epsilon={args.epsilon:g}) <= {found.value!r}  ({words}; order {found.order:.6g})")
    print(json.dumps(payload) if args.json else "\n".join(lines))
    return 0
