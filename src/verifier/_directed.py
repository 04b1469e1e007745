"""Rounding toward safety, in one place.

Everything that moves a floating-point number to the safe side of the truth lives here: one-ulp
steps after a rounded operation, conversion of ball-arithmetic (arb) results to float brackets,
and the fate of mass that leaves a grid (+∞ for DOMINATING objects, dropped for DOMINATED ones).
No other module writes floor/ceil on loss indices or nextafter on bounds.
"""

from __future__ import annotations

import math
from typing import Iterable

import numpy as np
import numpy.typing as npt
from flint import arb, ctx

from verifier._types import Bracket, Dominance, Side

__all__ = [
    "ARB_PRECISION_BITS",
    "up",
    "down",
    "toward",
    "arb_bracket",
    "arb_bound",
    "loss_index",
    "with_precision",
]

#: Working precision (bits) of the ball arithmetic behind the closed forms: far beyond float64, so
#: the final outward rounding to float64 (one ulp each side) dominates the bracket width.
ARB_PRECISION_BITS = 128


def up(x: float | npt.NDArray[np.float64]) -> float | npt.NDArray[np.float64]:
    """The next float above ``x``: after one correctly rounded operation the exact result is <= this."""
    return np.nextafter(x, np.inf) if isinstance(x, np.ndarray) else math.nextafter(x, math.inf)


def down(x: float | npt.NDArray[np.float64]) -> float | npt.NDArray[np.float64]:
    """The next float below ``x``."""
    return np.nextafter(x, -np.inf) if isinstance(x, np.ndarray) else math.nextafter(x, -math.inf)


def toward(side: Side, x: float) -> float:
    """One ulp toward the safe side: up for an UPPER bound, down for a LOWER bound."""
    return up(x) if side is Side.UPPER else down(x)


class with_precision:
    """Context manager: run arb arithmetic at ``bits`` of precision (restores the previous one)."""

    def __init__(self, bits: int = ARB_PRECISION_BITS) -> None:
        self.bits = bits

    def __enter__(self) -> None:
        self._saved = ctx.prec
        ctx.prec = self.bits

    def __exit__(self, *exc: object) -> None:
        ctx.prec = self._saved


def arb_bound(x: arb, side: Side) -> float:
    """A float on the given side of every number in the ball ``x`` (±inf if the ball is unbounded)."""
    if not x.is_finite():
        return math.inf if side is Side.UPPER else -math.inf
    end = x.upper() if side is Side.UPPER else x.lower()
    f = float(end.mid())  # round-to-nearest of an exact endpoint: off by at most half an ulp
    return f if arb(f) == end else toward(side, f)  # exact endpoints need no step


def arb_bracket(values: arb | Iterable[arb], *, clip: tuple[float, float] | None = None) -> Bracket:
    """Float bracket enclosing an arb ball (or one bracket of arrays for many balls).

    ``clip`` intersects with a range known a priori (e.g. [0, 1] for δ); clipping to a range
    that contains the truth never breaks the enclosure.
    """
    if isinstance(values, arb):
        lo, hi = arb_bound(values, Side.LOWER), arb_bound(values, Side.UPPER)
        if clip is not None:
            lo, hi = max(lo, clip[0]), min(hi, clip[1])
        return Bracket(lo, hi)
    balls = list(values)
    lo = np.array([arb_bound(v, Side.LOWER) for v in balls])
    hi = np.array([arb_bound(v, Side.UPPER) for v in balls])
    if clip is not None:
        lo, hi = np.maximum(lo, clip[0]), np.minimum(hi, clip[1])
    return Bracket(lo, hi)


def loss_index(loss: npt.NDArray[np.float64], step: float, dominance: Dominance) -> npt.NDArray[np.int64]:
    """Grid index of each loss on the grid {i·step}: rounded up for DOMINATING (the grid loss is >= the
    true loss), down for DOMINATED."""
    scaled = np.asarray(loss, dtype=np.float64) / step
    # Division is correctly rounded; step one ulp outward before floor/ceil so that a loss whose exact
    # quotient lies just across an integer is not rounded to the unsafe side.
    if dominance is Dominance.DOMINATING:
        return np.ceil(np.nextafter(scaled, np.inf)).astype(np.int64)
    return np.floor(np.nextafter(scaled, -np.inf)).astype(np.int64)
