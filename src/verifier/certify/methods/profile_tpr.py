"""TPR at FPR from the privacy profile's bracket, for schemes whose methods bound δ(ε) but not the
trade-off curve ("profile-tpr"): shuffled batches, matrix mechanisms, truncated Poisson and
with-replacement batches, the shuffle model of additive noise.

On a fixed grid of ε >= 0 (:data:`GRID`) the best rigorous bracket on δ(ε) in the direction comes
from every other registered method (:func:`verifier.certify.portfolio.collect_bounds`); then

- UPPER: TPR(α) <= min over the grid of δ_U(ε) + e^ε α (proofs/tradeoff_conversion.py, Lemma 1: any
  finite grid, the error on the safe side), and <= 1;
- LOWER: TPR(α) >= max over the grid of min(α + d(1 − α), α e^ε/(1 − d)) with d = δ_L(ε) (the second
  term only for α < (1 − d)e^{−ε}; proofs/tradeoff_from_profile.py), and >= α.

Both in ball arithmetic, rounded outward. The grid is coarse, so the bracket is wider than a
method that knows the whole curve; it is asked only where none does (:data:`SCHEMES`).
"""

from __future__ import annotations

import time
from typing import Sequence

from flint import arb

from verifier._directed import arb_bound, with_precision
from verifier._types import Bound, Direction, Quantity, Side
from verifier.certify.method import Guarantee, Method
from verifier.errors import NotApplicable
from verifier.schemes import BandedPoisson, MatrixMechanism, MatrixPoisson, Scheme, Shuffle, ShuffledBatches, TruncatedPoisson, WithReplacement

__all__ = ["ProfileTPR", "METHODS", "GRID", "SCHEMES", "CHEAP_COST", "NARROW", "GRID_SECONDS", "tpr_from_profile"]

#: The ε at which δ(ε) is bracketed.
GRID = (0.0, 0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0)
#: Methods cheaper than this answer the grid first (a closed form per ε instead of a PLD per ε);
#: all are asked at the ε where the cheap bracket is wider than NARROW (relative), sharing
#: GRID_SECONDS of wall-clock time over the grid; the two brackets are intersected (both rigorous).
#: The time is shared, not given per point, because a method's first answer often fills a cache
#: that answers the other points at once: with 10 s a point, ``mmcc`` on MatrixPoisson(bsr(20, 3),
#: q = 0.1), 9.3 s of CPU for its first δ, was interrupted at every point at load 4 and the scheme
#: got no TPR bound; shared, the grid took 20 s of wall-clock time and gives TPR(0.1) >= 0.188.
CHEAP_COST = 2
NARROW = 0.05
GRID_SECONDS = 140.0
#: Scheme types with no method that bounds the trade-off curve itself.
SCHEMES = (ShuffledBatches, MatrixMechanism, BandedPoisson, MatrixPoisson, TruncatedPoisson, WithReplacement, Shuffle)


def tpr_from_profile(fpr: float, profile: Sequence[tuple[float, float, float]]) -> tuple[float, float]:
    """(LOWER, UPPER) on TPR at ``fpr`` from (ε, δ_L(ε), δ_U(ε)) triples with ε >= 0 (module docstring);
    each term is a ball rounded toward safety before the minimum or maximum is taken."""
    upper, lower = 1.0, fpr
    with with_precision():
        alpha = arb(fpr)
        for eps, low, high in profile:
            if eps < 0:
                raise NotApplicable("the lower side's lemma needs eps >= 0")
            grow = arb(eps).exp()
            upper = min(upper, arb_bound(arb(high) + grow * alpha, Side.UPPER))
            if low >= 1.0:
                continue
            d = arb(low)
            terms = [arb_bound(alpha + d * (1 - alpha), Side.LOWER)]
            if not arb_bound((1 - d) * (-arb(eps)).exp(), Side.UPPER) <= fpr:  # alpha may be below a_max: case (ii) counts
                terms.append(arb_bound(alpha * grow / (1 - d), Side.LOWER))
            lower = max(lower, min(terms))
    return max(0.0, lower), min(1.0, upper)


class ProfileTPR(Method):
    name = "profile-tpr"
    citation = "TPR from the delta(eps) bracket on a grid: Lemma 1 of proofs/tradeoff_conversion.py above, proofs/tradeoff_from_profile.py below"
    returns = frozenset({Guarantee.UPPER, Guarantee.LOWER})
    cost = 3
    scheme_types = SCHEMES
    needs_float_range = False

    def supports(self, scheme: Scheme) -> bool:
        return isinstance(scheme, SCHEMES)

    def delta_bounds(self, scheme: Scheme, epsilon: float, direction: Direction) -> Sequence[Bound]:
        raise NotApplicable("bounds TPR at FPR only (from the other methods' delta(eps))")

    def epsilon_bounds(self, scheme: Scheme, delta: float, direction: Direction) -> Sequence[Bound]:
        raise NotApplicable("bounds TPR at FPR only (from the other methods' delta(eps))")

    def tpr_bounds(self, scheme: Scheme, fpr: float, direction: Direction) -> Sequence[Bound]:
        return self.tpr_curve(scheme, [fpr], direction, fpr)[0]

    def tpr_curve(self, scheme: Scheme, fprs: Sequence[float], direction: Direction, focus: float) -> list[Sequence[Bound]]:
        from verifier.certify.portfolio import collect_bounds
        from verifier.certify.registry import methods_for

        cheap = [m.name for m in methods_for(scheme) if m.cost < CHEAP_COST and m.name != self.name]
        profile, left = [], GRID_SECONDS
        for eps in GRID:
            low, high = 0.0, 1.0
            if cheap:
                bracket = collect_bounds(scheme, Quantity.DELTA, eps, (direction,), only=cheap).brackets[direction]
                low, high = max(low, float(bracket.lower)), min(high, float(bracket.upper))
            if high - low > NARROW * max(high, 1e-300) and left > 0:  # the cheap methods leave it wide: ask all
                started = time.perf_counter()
                bracket = collect_bounds(scheme, Quantity.DELTA, eps, (direction,), time_budget=left).brackets[direction]
                left -= time.perf_counter() - started
                low, high = max(low, float(bracket.lower)), min(high, float(bracket.upper))
            profile.append((eps, low, high))
        if all(high >= 1.0 and low <= 0.0 for _, low, high in profile):
            raise NotApplicable("no method bounds delta(eps) for this scheme")
        out = []
        for fpr in fprs:
            lower, upper = tpr_from_profile(float(fpr), profile)
            out.append([Bound(lower, Side.LOWER, direction, Quantity.TPR, float(fpr), self.name, self.citation, note=f"{len(GRID)}-point eps grid"),
                        Bound(upper, Side.UPPER, direction, Quantity.TPR, float(fpr), self.name, self.citation, note=f"{len(GRID)}-point eps grid")])
        return out


METHODS = [ProfileTPR()]
