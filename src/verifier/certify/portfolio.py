"""Running the applicable methods for one question and combining their bounds.

For each direction, the best rigorous bracket is [max of lower bounds, min of upper bounds]; a
lower bound above an upper bound for the same question is a defect in verifier and raises
:class:`~verifier.errors.InconsistentBounds` naming both bounds. "Both directions" is the maximum
of the per-direction brackets (Feldman & Shenfeld, Def 2.2).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from typing import Sequence

from verifier._types import Bound, Bracket, Direction, Quantity, Side
from verifier.certify.method import Method
from verifier.certify.registry import methods_for
from verifier.errors import InconsistentBounds, InvalidArgument, NotApplicable
from verifier.schemes import Scheme

__all__ = ["Collected", "collect_bounds", "best_bracket"]


@dataclass(frozen=True)
class Collected:
    """Every bound each method gave for one question, and the best bracket per direction."""

    quantity: Quantity
    at: float
    bounds: tuple[Bound, ...]
    brackets: dict  # Direction -> Bracket
    skipped: tuple[str, ...] = ()

    @property
    def combined(self) -> Bracket:
        """Bracket of the maximum over the requested directions."""
        values = list(self.brackets.values())
        return Bracket(max(b.lower for b in values), max(b.upper for b in values))


def best_bracket(bounds: Sequence[Bound], direction: Direction) -> Bracket:
    """[max lower, min upper] over the bounds in ``direction``; (−∞ or 0, +∞) where a side is missing.

    Raises :class:`InconsistentBounds` if some upper bound lies below some lower bound.
    """
    mine = [b for b in bounds if b.direction is direction]
    uppers = [b for b in mine if b.side is Side.UPPER]
    lowers = [b for b in mine if b.side is Side.LOWER]
    floor = 0.0 if (mine and mine[0].quantity is not Quantity.EPSILON) else -math.inf
    best_upper = min(uppers, key=lambda b: b.value, default=None)
    best_lower = max(lowers, key=lambda b: b.value, default=None)
    upper = best_upper.value if best_upper else math.inf
    lower = best_lower.value if best_lower else floor
    if lower > upper:
        raise InconsistentBounds(
            f"{direction.value} {mine[0].quantity.value}: lower bound {lower!r} from {best_lower.method} "
            f"exceeds upper bound {upper!r} from {best_upper.method}"
        )
    return Bracket(lower, upper)


def collect_bounds(
    scheme: Scheme,
    quantity: Quantity,
    at: float,
    directions: Sequence[Direction],
    *,
    only: Sequence[str] | None = None,
) -> Collected:
    """Run every registered method that supports ``scheme`` (or only those named in ``only``),
    cheapest first, and collect their bounds on ``quantity`` at ``at`` for each direction."""
    methods: list[Method] = methods_for(scheme)
    if only:
        unknown = set(only) - {m.name for m in methods}
        if unknown:
            available = ", ".join(sorted({m.name for m in methods})) or "none"
            raise InvalidArgument("method", ",".join(sorted(unknown)), f"must be one of the methods that apply here: {available}")
        methods = [m for m in methods if m.name in only]
    if not methods:
        raise InvalidArgument("scheme", scheme, "no registered method supports this scheme")
    bounds: list[Bound] = []
    skipped: list[str] = []
    for method in methods:
        for direction in directions:
            start = time.perf_counter()
            try:
                if quantity is Quantity.DELTA:
                    got = method.delta_bounds(scheme, at, direction)
                else:
                    got = method.epsilon_bounds(scheme, at, direction)
            except NotApplicable as exc:
                skipped.append(f"{method.name} ({direction.value}): {exc}")
                continue
            elapsed = time.perf_counter() - start
            bounds.extend(replace(b, seconds=elapsed) for b in got)
    brackets = {d: best_bracket(bounds, d) for d in directions}
    return Collected(quantity, at, tuple(bounds), brackets, tuple(skipped))
