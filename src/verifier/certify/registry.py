"""The registry of certification methods, collected from the adapter modules."""

from __future__ import annotations

import importlib
from typing import Iterator

from verifier._types import Bound, Direction, Quantity, Side
from verifier.certify.method import Method
from verifier.certify.methods import ADAPTERS
from verifier.errors import NotApplicable
from verifier.schemes import Scheme

__all__ = ["all_methods", "methods_for", "query_bounds", "side_bounds"]


def all_methods() -> list[Method]:
    """Every registered method, cheapest first."""
    methods: list[Method] = []
    for module_name in ADAPTERS:
        methods.extend(importlib.import_module(module_name).METHODS)
    return sorted(methods, key=lambda m: m.cost)


def methods_for(scheme: Scheme) -> list[Method]:
    """The registered methods that support ``scheme``, cheapest first."""
    return [m for m in all_methods() if m.supports(scheme)]


def query_bounds(scheme: Scheme, quantity: Quantity, at: float, direction: Direction, side: Side) -> Iterator[tuple[Method, list[Bound]]]:
    """For each registered method that supports ``scheme`` and gives bounds of ``side``, cheapest
    first: the method and every rigorous bound it gives on ``quantity`` at ``at``, of either side
    (possibly none; both sides at one value where the method answers the query exactly). A method
    that declines the case (NotApplicable), or cannot answer ε(0) (pure DP) when that is the
    question, is passed over. ``quantity`` TPR asks :meth:`Method.tpr_bounds` (``at`` is the
    false-positive rate)."""
    pure_dp = quantity is Quantity.EPSILON and at == 0.0
    for method in methods_for(scheme):
        if side not in method.sides() or (pure_dp and not method.answers_pure_dp):
            continue
        try:
            if quantity is Quantity.TPR:
                found = method.tpr_bounds(scheme, at, direction)
            else:
                found = method.quantity_bounds(scheme, quantity, at, direction)
        except NotApplicable:
            continue
        yield method, [b for b in found if b.rigorous]


def side_bounds(scheme: Scheme, quantity: Quantity, at: float, direction: Direction, side: Side) -> Iterator[tuple[Method, list[Bound]]]:
    """:func:`query_bounds` kept to ``side``: for each method that gives bounds of that side, its
    rigorous bounds of that side. For methods that bound a scheme through an equivalent, dominating
    or member one (shuffled batches, banded Poisson, a class's member)."""
    for method, found in query_bounds(scheme, quantity, at, direction, side):
        yield method, [b for b in found if b.side is side]
