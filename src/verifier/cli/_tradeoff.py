"""``verifier tradeoff``: rigorous brackets on a membership attacker's true-positive rate at given
false-positive rates, TPR(α) = 1 − β(α) on the trade-off curve (Dong, Roth & Su 2022), from every
method that bounds the whole δ(ε) curve (verifier.pld.tradeoff; proofs/tradeoff_conversion.py).

Under ``both``/``add_or_remove`` (and ``replace_one``) the bracket is that of the larger TPR of the two
directions: the attacker picks the direction it is strongest in."""

from __future__ import annotations

import argparse
import json
from typing import Sequence

import numpy as np

from verifier._types import Bracket, Quantity, json_number
from verifier.certify.portfolio import Collected, collect_bounds
from verifier.cli._options import add_mechanism_options, add_output_options, add_scheme_options, build_scheme, number_list
from verifier.cli._options import requested_directions
from verifier.pld.tradeoff import DEFAULT_FPRS, check_fprs

__all__ = ["register", "PLOT_POINTS"]

#: FPR grid points of ``--plot`` (log-spaced from the smallest FPR asked, or 1e-5, to 1).
PLOT_POINTS = 41


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "tradeoff",
        help="bounds on a membership attacker's TPR at given FPRs (the trade-off curve)",
        description="Rigorous brackets on the best true-positive rate of a membership-inference attacker at "
        "each false-positive rate α (TPR(α) = 1 − β(α), β the trade-off function), per neighbouring direction.",
    )
    add_mechanism_options(parser)
    add_scheme_options(parser)
    parser.add_argument(
        "--fpr", metavar="A,B,…",
        help="comma-separated false-positive rates in [0, 1] (default: " + ",".join(f"{a:g}" for a in DEFAULT_FPRS) + ")",
    )
    parser.add_argument("--plot", metavar="FILE.png", help="draw TPR against FPR, the band between the bounds shaded, to this image file")
    add_output_options(parser)
    parser.set_defaults(handler=_run)


def _rows(scheme, directions, fprs: Sequence[float], only) -> list[Collected]:
    return [collect_bounds(scheme, Quantity.TPR, float(fpr), directions, only=only) for fpr in fprs]


def _beta(tpr: Bracket) -> Bracket:
    """β = 1 − TPR with the ends swapped and rounded outward."""
    from verifier._directed import down, up

    return Bracket(max(0.0, down(1.0 - float(tpr.upper))), min(1.0, up(1.0 - float(tpr.lower))))


def _run(args: argparse.Namespace) -> int:
    scheme = build_scheme(args)
    directions = requested_directions(args)
    fprs = check_fprs("fpr", number_list("fpr", args.fpr) if args.fpr is not None else list(DEFAULT_FPRS))
    rows = _rows(scheme, directions, fprs, args.method)
    if args.plot:
        _plot(args, scheme, directions, fprs)
    if args.json:
        print(json.dumps({
            "quantity": "tpr",
            "direction": args.direction,
            "points": [
                {
                    "fpr": json_number(float(fpr)),
                    "tpr": {"lower": json_number(float(c.combined.lower)), "upper": json_number(float(c.combined.upper))},
                    "beta": {"lower": json_number(_beta(c.combined).lower), "upper": json_number(_beta(c.combined).upper)},
                    "directions": {d.value: {"lower": json_number(float(b.lower)), "upper": json_number(float(b.upper))} for d, b in c.brackets.items()},
                    "bounds": [b.to_dict() for b in c.bounds],
                }
                for fpr, c in zip(fprs, rows)
            ],
        }))
        return 0
    print(f"membership attacker, direction {args.direction}: best TPR at each FPR (rigorous [lower, upper]); β = 1 − TPR")
    print(f"{'FPR':>8}  {'TPR lower':>22} {'TPR upper':>22}  {'β lower':>22} {'β upper':>22}  methods")
    for fpr, c in zip(fprs, rows):
        tpr, beta = c.combined, _beta(c.combined)
        methods = ",".join(sorted({b.method for b in c.bounds if b.rigorous})) or "none"
        print(f"{fpr:>8g}  {float(tpr.lower):>22.17g} {float(tpr.upper):>22.17g}  {float(beta.lower):>22.17g} {float(beta.upper):>22.17g}  {methods}")
    return 0


def _plot(args: argparse.Namespace, scheme, directions, fprs: np.ndarray) -> None:
    from verifier.report.curves import tpr_curves
    from verifier.report.plots import plot_tradeoff

    positive = fprs[fprs > 0]
    low = min(1e-5, float(positive.min())) if positive.size else 1e-5
    grid = np.unique(np.concatenate([np.logspace(np.log10(low), 0.0, PLOT_POINTS), positive]))
    focus = float(np.median(positive)) if positive.size else 1e-2
    curves = tpr_curves(scheme, directions, grid, args.method, focus)
    plot_tradeoff(grid, curves, args.plot, title=f"membership-inference trade-off: {type(scheme).__name__}, {args.direction}")
