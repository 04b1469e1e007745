"""``verifier rdp``: the RDP curve of a scheme (bounds on D_α, in nats, per order, with a flag
saying where the value is exact, and the side: UPPER for every accountant, LOWER for the shuffle
model, whose worst case is unknown and whose specific-pair divergence, Liew et al. Eq. (8), is a
lower bound).

``--direction both`` prints the order-wise maximum of the two directions (exact only where both are).
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from verifier.cli._options import (
    add_mechanism_options,
    add_output_options,
    add_scheme_options,
    build_scheme,
    requested_directions,
    scheme_notes,
)
from verifier.errors import InvalidArgument, NotApplicable
from verifier.rdp import DEFAULT_ORDERS, check_orders, curve_for
from verifier.cli import SUMMARIES
from verifier.cli._options import add_budget_option, whole_within_budget

__all__ = ["register", "parse_orders"]


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "rdp",
        help=SUMMARIES["rdp"],
        description="Bounds on the Rényi divergence D_α (nats) of the scheme at each order (upper bounds; "
        "lower bounds for --scheme shuffle, marked 'side'), with 'exact' true where the value is the exact "
        "divergence of what is described (rounded toward the side).",
    )
    add_mechanism_options(parser)
    add_scheme_options(parser, method=False)
    parser.add_argument("--orders", default=None, help="comma-separated Rényi orders > 1 (default: 2,3,…,256)")
    add_output_options(parser)
    add_budget_option(parser, whole=True)
    parser.set_defaults(handler=whole_within_budget(_run))


def parse_orders(text: str | None) -> np.ndarray:
    """Orders from "2,3,8" (default: the integers 2…256)."""
    if text is None:
        return check_orders(DEFAULT_ORDERS)
    try:
        values = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise InvalidArgument("orders", text, "must be comma-separated numbers > 1", "e.g. --orders 2,3,8") from None
    return check_orders(values)


def _run(args: argparse.Namespace) -> int:
    orders = parse_orders(args.orders)
    scheme = build_scheme(args)
    try:
        curves = [curve_for(scheme, orders, d) for d in requested_directions(args)]
    except NotApplicable as exc:  # the scheme's theorems do not cover this pair: a bad combination of options
        raise InvalidArgument("scheme", args.scheme, str(exc)) from None
    values = np.max([c.values for c in curves], axis=0)
    exact = np.all([c.exact for c in curves], axis=0)
    citations = sorted({c.citation for c in curves})
    side = curves[0].side.value
    if args.json:
        payload = {
            "orders": [float(a) for a in orders],
            "values": [float(v) if np.isfinite(v) else "inf" for v in values],
            "exact": [bool(e) for e in exact],
            "direction": args.direction,
            "citation": "; ".join(citations),
            "side": side,
            "notes": scheme_notes(scheme),
        }
        print(json.dumps(payload))
        return 0
    print(f"RDP curve, direction {args.direction} ({side} bounds on D_alpha, nats)")
    print(f"{'order':>10} {'value':>24} {'exact':>6}")
    for a, v, e in zip(orders, values, exact):
        print(f"{a:>10g} {v:>24.17g} {'yes' if e else 'no':>6}")
    print("; ".join(citations))
    for note in scheme_notes(scheme):
        print(note)
    return 0
