"""Every applicable method's rigorous bounds on δ(ε) over a grid of ε, as plottable curves, and the
estimate-only methods' (Monte Carlo) estimates with their confidence intervals beside them."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from verifier._types import Bound, Direction, Estimate, Quantity, Side
from verifier.certify.portfolio import collect_bounds, cut_by_budget, select_methods
from verifier.errors import InvalidArgument, NotApplicable, NumericalFailure
from verifier.report.plots import Curve
from verifier.schemes import Scheme

__all__ = ["EstimateCurve", "bounding_methods", "delta_curves", "grid_curves", "tpr_curves"]


@dataclass(frozen=True)
class EstimateCurve:
    """One estimate-only method's statistical estimates of δ(ε) in one direction at the ε grid, with
    confidence intervals [lower, upper] that hold jointly with probability ``confidence`` at each
    point (NaN where the method gave no estimate). Evidence, never a bound: it is kept apart from
    the :class:`Curve` columns and never enters a bracket."""

    method: str
    direction: Direction
    confidence: float
    values: tuple[float, ...]
    lower: tuple[float, ...]
    upper: tuple[float, ...]

    @property
    def label(self) -> str:
        return f"{self.method} {self.direction.value} ESTIMATE ({self.confidence:.0%} interval)"


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
    names = bounding_methods(scheme, only)
    if focus is None:
        return grid_curves(scheme, directions, epsilons, names)[0]
    return _whole_grid(scheme, directions, len(epsilons), names, lambda method, direction: method.delta_curve(scheme, [float(e) for e in epsilons], direction, focus))


def tpr_curves(
    scheme: Scheme, directions: Sequence[Direction], fprs: Sequence[float], only: Sequence[str] | None, focus: float
) -> list[Curve]:
    """One curve of rigorous bounds on the attacker's TPR per (method, direction, side) at every FPR of
    ``fprs`` (NaN where a method gave no bound), each method answering the whole grid at once,
    tightest at ``focus`` (:meth:`Method.tpr_curve`); methods without trade-off bounds give none."""
    names = bounding_methods(scheme, only)
    return _whole_grid(scheme, directions, len(fprs), names, lambda method, direction: method.tpr_curve(scheme, [float(f) for f in fprs], direction, focus))


def _whole_grid(scheme: Scheme, directions: Sequence[Direction], points: int, names: Sequence[str], answer) -> list[Curve]:
    """Curves from ``answer(method, direction)`` (a list of bounds per grid point) for each method in
    ``names`` and direction; a method that declines or fails gives no curve."""
    values = _Columns(points)
    for method in select_methods(scheme, names):
        for direction in directions:
            try:
                per_point = answer(method, direction)
            except (NotApplicable, NumericalFailure):
                continue
            for index, bounds in enumerate(per_point):
                for bound in bounds:
                    values.put(index, bound)
    return values.curves()


def grid_curves(
    scheme: Scheme, directions: Sequence[Direction], epsilons: np.ndarray, only: Sequence[str] | None, *, time_budget: float | None = None
) -> tuple[list[Curve], list[EstimateCurve], list[str]]:
    """The portfolio at every grid point (each point as tight as each method gets it): one
    :class:`Curve` per (method, direction, side) of rigorous bounds, one :class:`EstimateCurve`
    per (method, direction) of the estimate-only methods among those applicable (``only``), whose
    time allowance is the portfolio's (a share of the rigorous methods' time), and what the time
    budget cut (``ε=…: `` and the methods it stopped or never started there; the whole grid shares
    ``time_budget`` seconds, so once it is spent only the closed forms run: NaN elsewhere)."""
    methods = select_methods(scheme, only)
    if not methods:
        raise InvalidArgument("method", only or "all", f"no method applies to {scheme!r}")
    values = _Columns(len(epsilons))
    estimates: dict[tuple[str, Direction], list[Estimate | None]] = {}
    cut: list[str] = []
    started = time.perf_counter()
    for index, eps in enumerate(epsilons):
        left = None if time_budget is None else max(0.0, time_budget - (time.perf_counter() - started))
        got = collect_bounds(scheme, Quantity.DELTA, float(eps), directions, only=[m.name for m in methods], time_budget=left)
        gone = cut_by_budget(got.skipped)
        if gone:
            cut.append(f"ε={float(eps):g}: {', '.join(sorted(gone))}")
        for bound in got.bounds:
            values.put(index, bound)
        for estimate in got.estimates:
            estimates.setdefault((estimate.method, estimate.direction), [None] * len(epsilons))[index] = estimate
    ordered = sorted(estimates.items(), key=lambda kv: (kv[0][0], kv[0][1].value))
    return values.curves(), [_estimate_curve(m, d, column) for (m, d), column in ordered], cut


def _estimate_curve(method: str, direction: Direction, column: Sequence[Estimate | None]) -> EstimateCurve:
    given = [e for e in column if e is not None]

    def field(name: str) -> tuple[float, ...]:
        return tuple(math.nan if e is None else getattr(e, name) for e in column)

    return EstimateCurve(method, direction, min(e.confidence for e in given), field("value"), field("lower"), field("upper"))


class _Columns:
    """Bounds gathered per (method, direction, side), NaN where a method gave none at a point."""

    def __init__(self, points: int) -> None:
        self.points = points
        self.values: dict[tuple[str, Direction, Side], list[float]] = {}

    def put(self, index: int, bound: Bound) -> None:
        self.values.setdefault((bound.method, bound.direction, bound.side), [math.nan] * self.points)[index] = bound.value

    def curves(self) -> list[Curve]:
        ordered = sorted(self.values.items(), key=lambda kv: (kv[0][0], kv[0][1].value, kv[0][2].value))
        return [Curve(m, d, s, tuple(v)) for (m, d, s), v in ordered]
