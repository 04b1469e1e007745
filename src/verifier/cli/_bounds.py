"""``verifier bounds``: every applicable method's bounds on δ(ε) over a grid of ε (research view),
and, in a table of their own below, the estimate-only methods' (Monte Carlo) ESTIMATEs with their
confidence intervals: statistical evidence, never a bound column.

The scheme comes from the mechanism/scheme flags, or from a claim file / ``--example`` (whose
(ε, δ) is then marked). ``--plot FILE.png`` draws the curves on a log scale with the claim marked.
"""

from __future__ import annotations

import argparse
import textwrap
import json
from typing import Sequence

import numpy as np

from verifier._types import json_number
from verifier._validation import check_integer, check_open_unit, check_real
from verifier.certify.claim import load_claim
from verifier.certify.examples import DEMO, EXAMPLES, example
from verifier.cli._options import add_budget_option, add_mechanism_options, add_output_options, budget_of, add_scheme_options, build_scheme, model_json_from_flags, requested_directions
from verifier.cli._table import TABLE_WIDTH, numbered_table, table_number, wrapped
from verifier.cli._certify import describe_model
from verifier.errors import InvalidArgument
from verifier.rdp.checkin_published import RESULT_ORDERS, checkin_results
from verifier.report import plot_delta_curves
from verifier.report.curves import EstimateCurve, grid_curves
from verifier.cli import SUMMARIES

__all__ = ["register", "table_lines", "estimate_lines", "TABLE_WIDTH"]

#: Most grid points one call may ask for (each costs one call of every method per direction).
MAX_POINTS = 1000


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "bounds",
        help=SUMMARIES["bounds"],
        description="Every applicable method's rigorous bounds on δ(ε) at a grid of ε, per direction, and "
        "the estimate-only methods' (Monte Carlo) estimates with their confidence intervals, apart.",
    )
    parser.add_argument("claim", nargs="?", help="claim JSON file: use its scheme and mark its (ε, δ)")
    parser.add_argument("--example", choices=[e.name for e in EXAMPLES + DEMO], help="use a built-in example claim")
    add_mechanism_options(parser)
    add_scheme_options(parser)
    grid = parser.add_argument_group("ε grid and claim")
    grid.add_argument("--epsilon-min", type=float, default=0.0, help="smallest ε of the grid (default 0)")
    grid.add_argument("--epsilon-max", type=float, default=8.0, help="largest ε of the grid (default 8)")
    grid.add_argument("--points", type=int, default=17, help=f"number of grid points, 2..{MAX_POINTS} (default 17)")
    grid.add_argument("--epsilon", type=float, help="claimed ε to mark (with --delta)")
    grid.add_argument("--delta", type=float, help="claimed δ to mark (with --epsilon)")
    parser.add_argument("--plot", metavar="FILE.png", help="draw the curves to this image file")
    add_budget_option(parser, "; the grid points share it")
    add_output_options(parser)
    parser.set_defaults(handler=_run)


def _setup(args: argparse.Namespace):
    """(scheme, directions, claim mark or None, title) from the claim file, example or flags."""
    if args.claim is not None or args.example is not None:
        if args.claim is not None and args.example is not None:
            raise InvalidArgument("example", args.example, "give either a claim file or --example, not both")
        claim = load_claim(args.claim) if args.claim is not None else example(args.example).parsed()
        mark = None if claim.epsilon is None else (claim.epsilon, claim.delta)  # a ρ or TPR claim has no (ε, δ) to mark
        return claim.model, claim.directions, mark, describe_model(claim.mechanism, claim.scheme, claim.neighboring)
    scheme = build_scheme(args)
    if (args.epsilon is None) != (args.delta is None):
        raise InvalidArgument("epsilon" if args.epsilon is None else "delta", None, "mark a claim with both --epsilon and --delta")
    mark = None
    if args.epsilon is not None:
        mark = (check_real("epsilon", args.epsilon), check_open_unit("delta", args.delta))
    relation = "add_or_remove" if args.direction == "both" else args.direction
    return scheme, requested_directions(args), mark, describe_model(*model_json_from_flags(args), relation)


def _grid(args: argparse.Namespace) -> np.ndarray:
    low = check_real("epsilon_min", args.epsilon_min)
    high = check_real("epsilon_max", args.epsilon_max)
    if not high > low:
        raise InvalidArgument("epsilon_max", high, f"must be > epsilon_min = {low:g}")
    points = check_integer("points", args.points, minimum=2, maximum=MAX_POINTS)
    return np.linspace(low, high, points)


def _run(args: argparse.Namespace) -> int:
    scheme, directions, mark, title = _setup(args)
    epsilons = _grid(args)
    curves, estimates, cut = grid_curves(scheme, directions, epsilons, args.method, time_budget=budget_of(args))
    if args.plot:
        if not curves:
            raise InvalidArgument("plot", args.plot, "draws rigorous bounds only, and the methods selected give estimates only")
        plot_delta_curves(epsilons, curves, args.plot, claim=mark, title=title)
    if args.json:
        print(
            json.dumps(
                {
                    "scheme": title,
                    "epsilons": epsilons.tolist(),
                    "claim": None if mark is None else {"epsilon": mark[0], "delta": mark[1]},
                    "curves": [
                        {"method": c.method, "direction": c.direction.value, "side": c.side.value, "values": [json_number(v) for v in c.values]}
                        for c in curves
                    ],
                    "estimates": [
                        {
                            "method": e.method,
                            "direction": e.direction.value,
                            "side": "estimate",
                            "confidence": e.confidence,
                            "values": [json_number(v) for v in e.values],
                            "lower": [json_number(v) for v in e.lower],
                            "upper": [json_number(v) for v in e.upper],
                        }
                        for e in estimates
                    ],
                    "plot": args.plot,
                    "cut_by_time_budget": cut,
                    "results": [{"result": r.result, "label": r.label, "orders": list(RESULT_ORDERS), "values": [json_number(v) for v in r.values]} for r in checkin_results(scheme)],
                }
            )
        )
        return 0
    for line in wrapped(f"bounds on δ(ε) for {title}", "    "):
        print(line)
    for line in table_lines(epsilons, curves) + estimate_lines(epsilons, estimates):
        print(line)
    if mark is not None:
        print(f"claim: (ε={mark[0]:g}, δ={mark[1]:g})")
    if cut:
        print(f"--time-budget of {args.time_budget:g} s spent: methods cut (no bound from them there) at {len(cut)} of {len(epsilons)} points: {'; '.join(cut)}")
    if args.plot:
        print(f"plot written to {args.plot}")
    _print_results(scheme)
    return 0


_EPS_COLUMN = 8
_VALUE_COLUMN = 13  # " %12.6g": 2.22507e-308 is 12 characters (subnormals print as <1e-300 or 0)


def table_lines(epsilons, curves) -> list[str]:
    """The δ(ε) table in blocks at most TABLE_WIDTH wide: one column per curve, headed by its number
    [i], with the key (method, direction, side) listed under the table; 6 significant digits (the
    --json output has every digit); no lines without curves (only estimate-only methods ran)."""
    columns = [(c.label, [table_number(v, c.side.value) for v in c.values]) for c in curves]
    return numbered_table("ε", [f"{e:.4g}" for e in epsilons], columns, x_width=_EPS_COLUMN, cell=_VALUE_COLUMN)


def estimate_lines(epsilons, estimates: Sequence[EstimateCurve]) -> list[str]:
    """The estimate-only methods' δ(ε) in a table of their own (never among the bound columns),
    at most TABLE_WIDTH wide: per estimate [Ei] three columns, the estimate and its confidence
    interval's lower and upper ends, with the key under the table."""
    if not estimates:
        return []
    width = 3 * _VALUE_COLUMN
    per_block = max(1, (TABLE_WIDTH - _EPS_COLUMN) // width)
    lines = ["ESTIMATES of δ(ε) (statistical evidence with a confidence interval, not bounds; never in a verdict):"]
    for start in range(0, len(estimates), per_block):
        block = list(enumerate(estimates))[start : start + per_block]
        lines.append(f"{'ε':>{_EPS_COLUMN}}" + "".join(f"{f'[E{i + 1}]':>{_VALUE_COLUMN}}{'lower':>{_VALUE_COLUMN}}{'upper':>{_VALUE_COLUMN}}" for i, _ in block))
        for index, eps in enumerate(epsilons):
            cells = "".join(
                f" {table_number(v[index], side):>{_VALUE_COLUMN - 1}}" for _, e in block for v, side in ((e.values, None), (e.lower, "lower"), (e.upper, "upper"))
            )
            lines.append(f"{eps:>{_EPS_COLUMN}.4g}" + cells)
    lines += wrapped("key: " + "; ".join(f"[E{i + 1}] {e.label}" for i, e in enumerate(estimates)))
    return lines


def _print_results(scheme) -> None:
    """The per-round RDP results of the paper a scheme comes from, each with its label (only
    UPPER / LOWER values are bounds; the others are published formulas, never used in a verdict)."""
    results = checkin_results(scheme)
    if not results:
        return
    print(f"per-round RDP (nats) at orders {', '.join(str(a) for a in RESULT_ORDERS)}; label = guarantee; results [i] below")
    for i, r in enumerate(results):
        print(f"  [{i + 1}] {r.label:<22} " + " ".join(f"{v:.6g}" for v in r.values))
    for i, r in enumerate(results):  # the citations, wrapped, as a footnote list
        for line in textwrap.wrap(f"[{i + 1}] {r.result}", TABLE_WIDTH - 2, subsequent_indent="    ", break_on_hyphens=False):
            print(f"  {line}")
