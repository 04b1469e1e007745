"""Rounding toward safety, in one place.

Everything that moves a floating-point number to the safe side of the truth lives here: one-ulp
steps after a rounded operation, conversion of ball-arithmetic (arb) results to float brackets,
and the fate of mass that leaves a grid (+∞ for DOMINATING objects, dropped for DOMINATED ones).
No other module writes floor/ceil on loss indices or nextafter on bounds.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
import numpy.typing as npt
from flint import arb, ctx

from verifier._types import Bracket, Dominance, Side
from verifier.errors import NumericalFailure

__all__ = [
    "ARB_PRECISION_BITS",
    "up",
    "down",
    "toward",
    "arb_bracket",
    "arb_bound",
    "arb_bounds_many",
    "Intervals",
    "binned_sum",
    "loss_index",
    "with_precision",
    "ratio_sum_breakpoints",
    "EXACT_RTOL",
    "log_index",
]

#: Working precision (bits) of the ball arithmetic behind the closed forms: far beyond float64, so
#: the final outward rounding to float64 (one ulp each side) dominates the bracket width.
ARB_PRECISION_BITS = 128

#: A value is flagged "exact" only when its rigorous bracket (the value and a matching bound on the
#: other side) is at most this wide, relative: exact to 12 digits, not merely "a formula that is
#: an equality" evaluated with a loose rounding allowance (issues 19 and 30).
EXACT_RTOL = 1e-12

#: Unit roundoff of binary64.
_U = 2.0**-53


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


def arb_bounds_many(balls: Sequence[arb]) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Float arrays (lower, upper) with lower[i] <= every number in balls[i] <= upper[i] (±inf where
    a ball is not finite): :func:`arb_bound` for many balls at once, about three times cheaper.

    ``float`` of a ball's exact lower (upper) end e is a neighbouring double ê of e (arf_get_d rounds
    in a fixed direction, so faithfully, 0 below the subnormal range), so down(ê) < e < up(ê): one
    step outward, as :func:`arb_bound` takes unless the end is a double. NaN gives ±∞."""
    lower = np.fromiter((float(b.lower()) for b in balls), dtype=np.float64, count=len(balls))
    upper = np.fromiter((float(b.upper()) for b in balls), dtype=np.float64, count=len(balls))
    ends = _outward(lower, upper)
    return ends.lo, ends.hi


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


def ratio_sum_breakpoints(step_exponent: int) -> npt.NDArray[np.int64]:
    """Directed re-binning table for sums on the geometric grid {e^{iΔ}}, Δ = 2^-step_exponent.

    For lattice ratios x = e^{uΔ} >= y = e^{vΔ} (m = v − u <= 0) the sum is x + y = e^{(u + g(m)/Δ)Δ}
    with g(m) = ln(1 + e^{mΔ}) in (0, ln 2]; rounded UP onto the grid it lands at index u + h(m),
    h(m) = ⌈g(m)/Δ⌉ in {1, …, S}, S = ⌈ln 2/Δ⌉, and rounded DOWN at u + h(m) − 1 (g(m)/Δ is never an
    integer: e^{sΔ} − e^{mΔ} = 1 has no solution by Lindemann–Weierstrass). h is non-decreasing, so
    it is given by its breakpoints: entry s−1 is M_s = max{m <= 0 : h(m) <= s} = ⌊ln(e^{sΔ} − 1)/Δ⌋
    (s < S) and M_S = 0. Floats locate each breakpoint; ball arithmetic settles the ones within
    1e-6 of an integer (Lindemann–Weierstrass again guarantees that raising precision separates them).
    """
    step = 2.0**-step_exponent
    count = _settle_floor(lambda: arb(2).log() / arb(step)) + 1
    s = np.arange(1, count, dtype=np.float64)
    q = np.log(np.expm1(s * step)) / step
    breaks = np.floor(q).astype(np.int64)
    frac = q - np.floor(q)
    for index in np.nonzero((frac < 1e-6) | (frac > 1 - 1e-6))[0]:
        breaks[index] = _settle_floor(lambda si=int(s[index]): ((arb(si) * arb(step)).expm1()).log() / arb(step))
    return np.append(breaks, np.int64(0))


def _settle_floor(fn) -> int:
    """⌊x⌋ for a ball-valued x that is not an integer, raising precision until the ball decides it."""
    bits = ARB_PRECISION_BITS
    while bits <= 1 << 14:
        with with_precision(bits):
            x = fn()
            lo = x.lower().floor()
            if lo == x.upper().floor():
                return int(lo.unique_fmpz())
        bits *= 2
    raise NumericalFailure("could not separate a grid breakpoint from an integer")  # pragma: no cover


def log_index(value: int, step_exponent: int, dominance: Dominance) -> int:
    """⌈ln(value)/Δ⌉ (DOMINATING: a grid loss >= ln value) or ⌊ln(value)/Δ⌋ (DOMINATED), Δ = 2^-step_exponent,
    for a positive integer ``value``; exact (ball arithmetic), used to snap the ∓ln t shift of random
    allocation onto the loss grid."""
    if value == 1:
        return 0
    step = 2.0**-step_exponent
    floor = _settle_floor(lambda: arb(value).log() / arb(step))
    return floor + 1 if dominance is Dominance.DOMINATING else floor


@dataclass(frozen=True)
class Intervals:
    """Elementwise float intervals [lo, hi] (arrays) under outward-rounded arithmetic: every
    operation contains the exact result for any members of its operands. numpy's +, −, ×, ÷ are
    IEEE-754 binary64 operations rounded to nearest (no fused multiply-add), so each result is within
    half a spacing of the exact one, and one nextafter step outward contains it; min/max of the
    candidate ends give the interval product and quotient (Moore 1966, §2.2). A NaN end (∞ − ∞,
    0·∞) becomes the infinite end; a quotient whose divisor may be 0 is the whole line."""

    lo: npt.NDArray[np.float64]
    hi: npt.NDArray[np.float64]

    @classmethod
    def point(cls, x: npt.ArrayLike) -> "Intervals":
        """Exact floats as intervals of width 0."""
        x = np.asarray(x, dtype=np.float64)
        return cls(x, x)

    def __getitem__(self, index) -> "Intervals":
        return Intervals(self.lo[index], self.hi[index])

    def __add__(self, other: "Intervals") -> "Intervals":
        with np.errstate(invalid="ignore", over="ignore"):
            return _outward(self.lo + other.lo, self.hi + other.hi)

    def __sub__(self, other: "Intervals") -> "Intervals":
        with np.errstate(invalid="ignore", over="ignore"):
            return _outward(self.lo - other.hi, self.hi - other.lo)

    def __mul__(self, other: "Intervals") -> "Intervals":
        with np.errstate(invalid="ignore", over="ignore"):
            ends = (self.lo * other.lo, self.lo * other.hi, self.hi * other.lo, self.hi * other.hi)
        return _outward(_nan_reduce(np.fmin, ends, -np.inf), _nan_reduce(np.fmax, ends, np.inf))

    def __truediv__(self, other: "Intervals") -> "Intervals":
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            ends = (self.lo / other.lo, self.lo / other.hi, self.hi / other.lo, self.hi / other.hi)
        lo = _nan_reduce(np.fmin, ends, -np.inf)
        hi = _nan_reduce(np.fmax, ends, np.inf)
        may_be_zero = (other.lo <= 0.0) & (other.hi >= 0.0) | np.isnan(other.lo) | np.isnan(other.hi)
        return _outward(np.where(may_be_zero, -np.inf, lo), np.where(may_be_zero, np.inf, hi))


def binned_sum(bins: npt.NDArray[np.int64], values: Intervals) -> Intervals:
    """Per bin b = 0..max(bins), an interval containing Σ_{i: bins_i = b} x_i for any x_i in the
    non-negative intervals ``values``: the float sums of the ends (np.bincount) scaled by
    1 ∓ (k + 2)u for a bin of k terms (recursive summation of k non-negative terms is within
    (k − 1)u/(1 − (k − 1)u) of the exact sum, relative; Higham 2002, Lemma 3.1), one more step outward."""
    counts = np.bincount(bins)
    lo = np.maximum(np.bincount(bins, weights=np.maximum(values.lo, 0.0), minlength=counts.size), 0.0)
    hi = np.bincount(bins, weights=values.hi, minlength=counts.size)
    return Intervals(np.maximum(down(lo * (1.0 - (counts + 2) * _U)), 0.0), up(hi * (1.0 + (counts + 2) * _U)))


def _nan_reduce(pick, ends, if_nan: float) -> npt.NDArray[np.float64]:
    """``pick`` (np.fmin or np.fmax) over the candidate ends; ``if_nan`` where any is NaN."""
    out = functools.reduce(pick, ends)
    nan = functools.reduce(np.logical_or, (np.isnan(e) for e in ends))
    return np.where(nan, if_nan, out)


def _outward(lo: npt.NDArray[np.float64], hi: npt.NDArray[np.float64]) -> Intervals:
    """[down(lo), up(hi)], NaN ends infinite."""
    lo = np.where(np.isnan(lo), -np.inf, np.nextafter(lo, -np.inf))
    hi = np.where(np.isnan(hi), np.inf, np.nextafter(hi, np.inf))
    return Intervals(lo, hi)
