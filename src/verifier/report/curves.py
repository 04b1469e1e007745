"""Every applicable method's rigorous bounds on δ(ε) over a grid of ε, as plottable curves."""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from verifier._types import Direction, Quantity, Side
from verifier.certify.portfolio import collect_bounds, select_methods
from verifier.errors import InvalidArgument
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


def delta_curves(scheme: Scheme, directions: Sequence[Direction], epsilons: np.ndarray, only: Sequence[str] | None) -> list[Curve]:
    """One curve per (method, direction, side), from the portfolio run at every grid point (NaN where
    a method gave no bound at a point)."""
    values: dict[tuple[str, Direction, Side], list[float]] = {}
    names = bounding_methods(scheme, only)
    for index, eps in enumerate(epsilons):
        for bound in collect_bounds(scheme, Quantity.DELTA, float(eps), directions, only=names).bounds:
            column = values.setdefault((bound.method, bound.direction, bound.side), [math.nan] * len(epsilons))
            column[index] = bound.value
    ordered = sorted(values.items(), key=lambda kv: (kv[0][0], kv[0][1].value, kv[0][2].value))
    return [Curve(m, d, s, tuple(v)) for (m, d, s), v in ordered]
