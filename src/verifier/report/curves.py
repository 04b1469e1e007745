"""Every applicable method's rigorous bounds on δ(ε) over a grid of ε, as plottable curves."""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from verifier._types import Bound, Direction, Quantity, Side
from verifier.certify.portfolio import collect_bounds, select_methods
from verifier.errors import InvalidArgument, NotApplicable, NumericalFailure
from verifier.report.plots import Curve
from verifier.schemes import Scheme

__all__ = ["bounding_methods", "delta_curves"]


def bounding_methods(scheme: Scheme, only: Sequence[str] | None) -> list[str]:
    """The applicable methods (of those named in ``only``) that give rigorous bounds; estimate-only
    methods (Monte Carlo) have no curve to draw."""
    names = [m.name for m in select_methods(scheme, only) if m.sides()]
    if not names:
        raise InvalidArgument("method", only or "all", f"no method with rigorous bounds applies to {scheme!r}")
    return names


def delta_curves(
    scheme: Scheme, directions: Sequence[Direction], epsilons: np.ndarray, only: Sequence[str] | None, focus: float | None = None
) -> list[Curve]:
    """One curve per (method, direction, side) (NaN where a method gave no bound at a point). Without
    ``focus``, the portfolio runs at every grid point (each point as tight as the method gets it);
    with ``focus``, each method answers the whole grid at once, tightest near ``focus``
    (:meth:`Method.delta_curve`; e.g. one PLD for all points), and a method that declines or fails
    gives no curve."""
    values: dict[tuple[str, Direction, Side], list[float]] = {}
    names = bounding_methods(scheme, only)

    def put(index: int, bound: Bound) -> None:
        column = values.setdefault((bound.method, bound.direction, bound.side), [math.nan] * len(epsilons))
        column[index] = bound.value

    if focus is None:
        for index, eps in enumerate(epsilons):
            for bound in collect_bounds(scheme, Quantity.DELTA, float(eps), directions, only=names).bounds:
                put(index, bound)
    else:
        for method in select_methods(scheme, names):
            for direction in directions:
                try:
                    per_point = method.delta_curve(scheme, [float(e) for e in epsilons], direction, focus)
                except (NotApplicable, NumericalFailure):
                    continue
                for index, bounds in enumerate(per_point):
                    for bound in bounds:
                        put(index, bound)
    ordered = sorted(values.items(), key=lambda kv: (kv[0][0], kv[0][1].value, kv[0][2].value))
    return [Curve(m, d, s, tuple(v)) for (m, d, s), v in ordered]
