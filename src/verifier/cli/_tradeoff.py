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
from verifier.certify.portfolio import Collected, collect_bounds, cut_by_budget
from verifier.cli._options import add_budget_option, add_mechanism_options, add_output_options, add_scheme_options, budget_of, build_scheme, number_list
from verifier.cli._options import requested_directions
from verifier.pld.tradeoff import DEFAULT_FPRS, check_fprs
from verifier.cli import SUMMARIES

__all__ = ["register", "PLOT_POINTS"]

#: FPR grid points of ``--plot`` (log-spaced from the smallest FPR asked, or 1e-5, to 1).
PLOT_POINTS = 41


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "tradeoff",
        help=SUMMARIES["tradeoff"],
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
    parser.add_argument(
        "--mc-samples", dest="mc_samples", type=int, default=0, metavar="N",
        help="also estimate TPR by Monte Carlo from N simulated outputs per hypothesis (a 99.9%% interval beside the bounds, never a bound; default 0: none)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the Monte Carlo estimate (default 0)")
    add_budget_option(parser, "; the FPRs share it")
    add_output_options(parser)
    parser.set_defaults(handler=_run)


def _rows(scheme, directions, fprs: Sequence[float], only, time_budget: float | None = None) -> list[Collected]:
    """The bounds at each FPR; the FPRs share ``time_budget`` (once it is spent only the closed forms run)."""
    import time

    started, rows = time.perf_counter(), []
    for fpr in fprs:
        left = None if time_budget is None else max(0.0, time_budget - (time.perf_counter() - started))
        rows.append(collect_bounds(scheme, Quantity.TPR, float(fpr), directions, only=only, time_budget=left))
    return rows


def _trivial(tpr: Bracket, fpr: float) -> Bracket:
    """``tpr`` within [α, 1], which holds for every mechanism (a coin flip reaches α; no test exceeds
    1): where no method bounds a side, the trivial end is shown instead of ±∞."""
    return Bracket(min(1.0, max(fpr, float(tpr.lower))), max(fpr, min(1.0, float(tpr.upper))))


def _beta(tpr: Bracket) -> Bracket:
    """β = 1 − TPR with the ends swapped and rounded outward."""
    from verifier._directed import down, up

    return Bracket(max(0.0, down(1.0 - float(tpr.upper))), min(1.0, up(1.0 - float(tpr.lower))))


def _run(args: argparse.Namespace) -> int:
    scheme = build_scheme(args)
    directions = requested_directions(args)
    fprs = check_fprs("fpr", number_list("fpr", args.fpr) if args.fpr is not None else list(DEFAULT_FPRS))
    budget = budget_of(args)
    rows = _rows(scheme, directions, fprs, args.method, budget)
    cut = [f"FPR {fpr:g}: {', '.join(sorted(cut_by_budget(c.skipped)))}" for fpr, c in zip(fprs, rows) if cut_by_budget(c.skipped)]
    estimates = _estimates(scheme, directions, fprs, args.mc_samples, args.seed)
    if args.plot:
        _plot(args, scheme, directions, fprs)
    if args.json:
        print(json.dumps({
            "quantity": "tpr",
            "direction": args.direction,
            "points": [
                {
                    "fpr": json_number(float(fpr)),
                    "tpr": {"lower": json_number(float(_trivial(c.combined, fpr).lower)), "upper": json_number(float(_trivial(c.combined, fpr).upper))},
                    "beta": {"lower": json_number(_beta(_trivial(c.combined, fpr)).lower), "upper": json_number(_beta(_trivial(c.combined, fpr)).upper)},
                    "directions": {d.value: {"lower": json_number(float(b.lower)), "upper": json_number(float(b.upper))} for d, b in c.brackets.items()},
                    "bounds": [b.to_dict() for b in c.bounds],
                    "estimates": [e.to_dict() for e in found],
                }
                for fpr, c, found in zip(fprs, rows, estimates)
            ],
            **({"cut_by_time_budget": cut} if budget is not None else {}),
        }))
        return 0
    print(f"membership attacker, direction {args.direction}: best TPR at each FPR (rigorous [lower, upper]); β = 1 − TPR")
    print(f"{'FPR':>8}  {'TPR lower':>22} {'TPR upper':>22}  {'β lower':>22} {'β upper':>22}  methods")
    for fpr, c in zip(fprs, rows):
        tpr = _trivial(c.combined, float(fpr))
        beta = _beta(tpr)
        methods = ",".join(sorted({b.method for b in c.bounds if b.rigorous})) or "none"
        print(f"{fpr:>8g}  {float(tpr.lower):>22.17g} {float(tpr.upper):>22.17g}  {float(beta.lower):>22.17g} {float(beta.upper):>22.17g}  {methods}")
    if cut:
        print(f"--time-budget of {budget:g} s spent: methods cut (no bound from them there) at {'; '.join(cut)}")
    for fpr, found in zip(fprs, estimates):
        for e in found:
            print(
                f"  estimate (not a bound): {e.direction.value} TPR({fpr:g}) ≈ {e.value:.6g}, {e.confidence:.1%} interval "
                f"[{e.lower:.6g}, {e.upper:.6g}] from {e.samples} samples per hypothesis{', ' + e.note if e.note else ''}"
            )
    return 0


def _estimates(scheme, directions, fprs: Sequence[float], samples: int, seed: int) -> list[list]:
    """Monte Carlo estimates of TPR per FPR and direction (verifier.montecarlo.tradeoff) from the
    simulated pair; an FPR too small for the sample count gets none (said in a note line)."""
    from verifier._validation import check_integer

    samples = check_integer("mc_samples", samples, minimum=0)
    if samples == 0:
        return [[] for _ in fprs]
    from verifier.certify.methods.montecarlo import simulated
    from verifier.errors import NotApplicable
    from verifier.montecarlo.tradeoff import estimate_tpr

    drawn, worst = simulated(scheme)
    note = "" if worst else "of an attained pair of neighbours, not the worst case"
    out = []
    for fpr in fprs:
        found = []
        for direction in directions:
            try:
                found.append(estimate_tpr(drawn, float(fpr), direction, samples, seed=seed, note=note))
            except NotApplicable as exc:
                print(f"  no estimate at FPR {fpr:g} ({direction.value}): {exc}")
        out.append(found)
    return out


def _plot(args: argparse.Namespace, scheme, directions, fprs: np.ndarray) -> None:
    from verifier.report.curves import tpr_curves
    from verifier.report.plots import plot_tradeoff

    positive = fprs[fprs > 0]
    low = min(1e-5, float(positive.min())) if positive.size else 1e-5
    grid = np.unique(np.concatenate([np.logspace(np.log10(low), 0.0, PLOT_POINTS), positive]))
    focus = float(np.median(positive)) if positive.size else 1e-2
    curves = tpr_curves(scheme, directions, grid, args.method, focus)
    plot_tradeoff(grid, curves, args.plot, title=f"membership-inference trade-off: {type(scheme).__name__}, {args.direction}")
