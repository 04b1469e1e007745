"""``verifier delta`` and ``verifier epsilon``: the exact privacy profile of one mechanism step."""

from __future__ import annotations

import argparse

from verifier._types import Bound, Bracket, Quantity, Side
from verifier._validation import check_open_unit, check_real
from verifier.cli._options import add_mechanism_options, add_output_options, build_pair, emit, requested_directions

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    delta = subparsers.add_parser("delta", help="bounds on δ at a given ε", description="Rigorous bracket of δ(ε).")
    add_mechanism_options(delta)
    delta.add_argument("--epsilon", type=float, required=True, help="ε (any real number)")
    add_output_options(delta)
    delta.set_defaults(handler=_run_delta)

    epsilon = subparsers.add_parser("epsilon", help="bounds on ε at a given δ", description="Rigorous bracket of ε(δ).")
    add_mechanism_options(epsilon)
    epsilon.add_argument("--delta", type=float, required=True, help="δ in (0, 1)")
    add_output_options(epsilon)
    epsilon.set_defaults(handler=_run_epsilon)


def _exact_bounds(pair, quantity: Quantity, at: float, brackets: dict) -> list[Bound]:
    citation = f"{type(pair).__name__} closed form (verifier.pairs, ball arithmetic)"
    return [
        Bound(getattr(bracket, side.value), side, direction, quantity, at, f"exact:{type(pair).__name__.lower()}", citation)
        for direction, bracket in brackets.items()
        for side in (Side.LOWER, Side.UPPER)
    ]


def _report(args: argparse.Namespace, quantity: Quantity, at: float, brackets: dict) -> int:
    pair = build_pair(args)
    combined = Bracket(max(b.lower for b in brackets.values()), max(b.upper for b in brackets.values()))
    emit(
        args,
        quantity=quantity.value,
        at=at,
        lower=combined.lower,
        upper=combined.upper,
        bounds=_exact_bounds(pair, quantity, at, brackets),
    )
    return 0


def _run_delta(args: argparse.Namespace) -> int:
    epsilon = check_real("epsilon", args.epsilon)
    pair = build_pair(args)
    brackets = {d: pair.delta(epsilon, d) for d in requested_directions(args)}
    return _report(args, Quantity.DELTA, epsilon, brackets)


def _run_epsilon(args: argparse.Namespace) -> int:
    delta = check_open_unit("delta", args.delta)
    pair = build_pair(args)
    brackets = {d: pair.epsilon(delta, d) for d in requested_directions(args)}
    return _report(args, Quantity.EPSILON, delta, brackets)
