"""``verifier delta`` and ``verifier epsilon``: rigorous brackets from every applicable method."""

from __future__ import annotations

import argparse

from verifier._types import Quantity
from verifier._validation import check_half_open_unit, check_real
from verifier.certify.portfolio import collect_bounds
from verifier.cli._options import (
    add_budget_option,
    add_mechanism_options,
    add_output_options,
    add_scheme_options,
    budget_lines,
    budget_of,
    build_scheme,
    emit,
    refuse_option,
    requested_directions,
)
from verifier.cli import SUMMARIES

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    delta = subparsers.add_parser("delta", help=SUMMARIES["delta"], description="Rigorous bracket of δ(ε).")
    add_mechanism_options(delta)
    add_scheme_options(delta)
    delta.add_argument("--epsilon", type=float, required=True, help="ε (any real number)")
    refuse_option(delta, "--delta", "`verifier delta` computes δ at --epsilon; to decide an (ε, δ) claim use `verifier certify … --epsilon E --delta D`")
    add_budget_option(delta)
    add_output_options(delta)
    delta.set_defaults(handler=_run_delta)

    epsilon = subparsers.add_parser("epsilon", help=SUMMARIES["epsilon"], description="Rigorous bracket of ε(δ).")
    add_mechanism_options(epsilon)
    add_scheme_options(epsilon)
    epsilon.add_argument("--delta", type=float, required=True, help="δ in [0, 1) (0: ε(0), the largest privacy loss, +inf where unbounded)")
    refuse_option(
        epsilon, "--epsilon",
        "`verifier epsilon` computes ε at --delta; to decide an (ε, δ) claim use `verifier certify … --epsilon E --delta D` "
        "(randomized response's parameter is --epsilon0)",
    )
    add_budget_option(epsilon)
    add_output_options(epsilon)
    epsilon.set_defaults(handler=_run_epsilon)


def _run(args: argparse.Namespace, quantity: Quantity, at: float) -> int:
    """The bracket and every bound; under ``--time-budget`` what the methods gave in time (a wider
    bracket, never a wrong one) and a line per method the budget cut (``cut_by_time_budget`` in JSON)."""
    budget = budget_of(args)
    collected = collect_bounds(build_scheme(args), quantity, at, requested_directions(args), only=args.method, time_budget=budget)
    combined = collected.combined
    cut = budget_lines(collected.skipped)
    extra = {"cut_by_time_budget": [line.strip().removeprefix("not run: ") for line in cut]} if budget is not None else None
    emit(args, quantity=quantity.value, at=at, lower=combined.lower, upper=combined.upper, bounds=collected.bounds, extra=extra)
    if cut and not args.json:
        print("\n".join(cut))
    return 0


def _run_delta(args: argparse.Namespace) -> int:
    return _run(args, Quantity.DELTA, check_real("epsilon", args.epsilon))


def _run_epsilon(args: argparse.Namespace) -> int:
    return _run(args, Quantity.EPSILON, check_half_open_unit("delta", args.delta))  # δ = 0: ε(0), the largest privacy loss
