"""The exact closed forms of a single mechanism step (one Poisson-sampled step included; compositions
of finite pairs such as randomized response, Poisson-sampled or not, by exact sums over types; and
of Gaussian compositions, which are
Gaussian with σ/√m: Steinke 2022, Cor 10; of Sequences whose phases are all (compositions of)
Gaussian steps, a Gaussian with Δ²/σ² = Σ_i m_i Δ_i²/σ_i², by the same corollary; and of
compositions of an (ε₀, δ₀)-DP step, the Kairouz–Oh–Viswanath optimal composition: Steinke 2022,
§7) as a certification method."""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

import numpy as np
from flint import arb

from verifier._directed import arb_bound, with_precision
from verifier._types import Bound, Direction, Quantity, Side
from verifier.certify.method import Guarantee, Method, unwrap_composed
from verifier.pairs import ApproxDP, FinitePair, Gaussian, Laplace, PoissonSubsampled
from verifier.pairs.laplace_composition import LAPLACE_MAX_TIMES, LaplaceComposition
from verifier.pairs.finite_composition import MAX_SUPPORT, FiniteComposition, SubsampledFinite, composed_support
from verifier.pld.tradeoff import staircase_tpr
from verifier.schemes import Composed, Poisson, Scheme, Single
from verifier.schemes import Sequence as SchemeSequence

__all__ = ["ExactPair", "METHODS", "KOV_MAX_TIMES", "TPR_RANGE", "TPR_COARSE", "TPR_FINE"]

#: Most compositions of an ApproxDP step answered by the exact KOV sum (O(T) balls per δ(ε); about
#: 0.1 s for an ε(δ) bisection at this size); longer ones are left to the PLD engine.
KOV_MAX_TIMES = 4096


def _reduce(scheme: Scheme):
    """The single pair equivalent to the scheme, or None: Single(pair) is the pair; an m-fold
    composition of an ApproxDP step, the grouped product pair whose δ(ε) is the KOV closed form
    (pairs.ApproxDPComposition); of another finite pair (randomized response, a DiscretePair), its
    product grouped by type (pairs.FiniteComposition: binomial / multinomial sums) while the support
    stays small; of a Laplace step, the closed-form law of the composed loss (pairs.LaplaceComposition,
    up to LAPLACE_MAX_TIMES steps); one Poisson-sampled step, the subsampled pair (pairs.PoissonSubsampled, REMOVE
    H(M‖Q), ADD H(Q‖M)); T Poisson-sampled steps of a finite pair, the product of the finite
    subsampled pair. (Compositions of a Gaussian are :func:`_gaussian_run`'s: their σ/√m is not a
    float and is rounded both ways.)"""
    scheme, times = unwrap_composed(scheme)
    if isinstance(scheme, Poisson):
        times *= scheme.steps
        if isinstance(scheme.pair, FinitePair):
            return _finite_product(SubsampledFinite(scheme.pair, scheme.rate), times)
        return PoissonSubsampled(scheme.pair, scheme.rate) if times == 1 else None
    if not isinstance(scheme, Single):
        return None
    if times == 1:
        return scheme.pair
    if isinstance(scheme.pair, ApproxDP):
        # Kairouz-Oh-Viswanath optimal composition (Steinke 2022, §7)
        return scheme.pair.composed(times) if times <= KOV_MAX_TIMES else None
    if isinstance(scheme.pair, FinitePair):
        return _finite_product(scheme.pair, times)
    if isinstance(scheme.pair, Laplace) and times <= LAPLACE_MAX_TIMES:
        return LaplaceComposition(scheme.pair.scale, scheme.pair.sensitivity, times)
    return None


def _finite_product(pair: FinitePair, times: int) -> FinitePair | None:
    """The grouped ``times``-fold product of a finite pair, or None when its support is too large."""
    if times == 1:
        return pair
    return FiniteComposition(pair, times) if composed_support(pair, times) <= MAX_SUPPORT else None


def _gaussian_run(scheme: Scheme) -> tuple[Gaussian, int] | None:
    """(step pair, m) for an m-fold composition of one Gaussian step (m = 1 for Single), or None."""
    scheme, times = unwrap_composed(scheme)
    if isinstance(scheme, Single) and isinstance(scheme.pair, Gaussian):
        return scheme.pair, times
    return None


def _directed_gaussian(runs: Sequence[tuple[Gaussian, int]]) -> tuple[Gaussian, Gaussian]:
    """The product of m_i shifted Gaussians of each run is the Gaussian with (Δ/σ)² = Σ m_i (Δ_i/σ_i)²
    (Steinke 2022, Cor 10 for the sum of shifts). Its σ (at Δ = 1) is evaluated in ball arithmetic
    and returned rounded up (the weaker pair, for LOWER bounds) and down (the stronger pair, for
    UPPER bounds): a σ/√m rounded to nearest could land on the weak side and put an "upper" bound
    below the true value."""
    with with_precision():
        mu2 = sum((times * (arb(p.sensitivity) / arb(p.sigma)) ** 2 for p, times in runs), arb(0))
        sigma = 1 / mu2.sqrt()
        return Gaussian(arb_bound(sigma, Side.UPPER)), Gaussian(arb_bound(sigma, Side.LOWER))


def _gaussian_sequence(scheme: Scheme) -> tuple[Gaussian, Gaussian] | None:
    """For a Sequence whose phases are all (compositions of) Gaussian steps: the directed pair of
    :func:`_directed_gaussian`; None if some phase is not a Gaussian run."""
    if not isinstance(scheme, SchemeSequence):
        return None
    runs = [_gaussian_run(phase) for phase in scheme.phases]
    if any(run is None for run in runs):
        return None
    return _directed_gaussian(runs)


def _pairs(scheme: Scheme):
    """(pair whose LOWER ends are bounds, pair whose UPPER ends are bounds) for the scheme, or None."""
    run = _gaussian_run(scheme)
    if run is not None and run[1] > 1:
        return _directed_gaussian([run])
    pair = _reduce(scheme)
    return (pair, pair) if pair is not None else _gaussian_sequence(scheme)


def _gaussian_tpr(weak: Gaussian, strong: Gaussian, fpr: float) -> tuple[float, float]:
    """[lower, upper] on TPR(α) = Φ(Φ⁻¹(α) + μ) = erfc(erfcinv(2α) − μ/√2)/2, μ = Δ/σ (Gaussian DP: Dong,
    Roth & Su 2022, Eq. (2.3); derived from δ(ε) in proofs/tradeoff_conversion.py), in ball arithmetic;
    the weaker pair (smaller μ) gives the lower end, TPR growing with μ. Both directions are equal."""
    if fpr <= 0.0 or fpr >= 1.0:
        return fpr, fpr  # TPR(0) = 0 (the laws are mutually absolutely continuous), TPR(1) = 1
    with with_precision():
        ends = []
        for pair, side in ((weak, Side.LOWER), (strong, Side.UPPER)):
            mu = arb(pair.sensitivity) / arb(pair.sigma)
            ends.append(arb_bound((arb(2 * fpr).erfcinv() - mu / arb(2).sqrt()).erfc() / 2, side))
    return max(fpr, ends[0]), min(1.0, ends[1])


#: ε grid of the exact method's TPR bounds: the range, the coarse step and the fine step around the minimiser.
TPR_RANGE = (-8.0, 24.0)
TPR_COARSE = 0.05
TPR_FINE = 0.0005


class ExactPair(Method):
    name = "exact"
    citation = "closed form of the pair (Steinke 2022, Prop 7 / Cor 8 / Cor 10; §7 KOV for (eps0, delta0)-DP compositions; §6.2 for one Poisson step; exact sums over types for compositions of finite pairs; the closed-form composed Laplace loss), ball arithmetic"
    returns = frozenset({Guarantee.EXACT})
    cost = 0
    scheme_types = (Single, Composed, SchemeSequence, Poisson)
    needs_float_range = False  # ball arithmetic: any σ, any ε0

    def supports(self, scheme: Scheme) -> bool:
        return _pairs(scheme) is not None

    def _bounds(self, lower: float, upper: float, quantity: Quantity, at: float, direction: Direction, pair) -> list[Bound]:
        method = f"exact:{type(pair).__name__.lower()}"
        return [
            Bound(lower, Side.LOWER, direction, quantity, at, method, self.citation),
            Bound(upper, Side.UPPER, direction, quantity, at, method, self.citation),
        ]

    def delta_bounds(self, scheme: Scheme, epsilon: float, direction: Direction) -> Sequence[Bound]:
        weak, strong = _pairs(scheme)
        lower, upper = weak.delta(epsilon, direction).lower, strong.delta(epsilon, direction).upper
        return self._bounds(lower, upper, Quantity.DELTA, epsilon, direction, strong)

    def tpr_curve(self, scheme: Scheme, fprs: Sequence[float], direction: Direction, focus: float) -> list[Sequence[Bound]]:
        """TPR bounds at each FPR: for (compositions of) Gaussian steps the closed form Φ(Φ⁻¹(α) + μ) in ball
        arithmetic (:func:`_gaussian_tpr`); otherwise from the exact δ brackets on an ε grid (verifier.pld.tradeoff.staircase_tpr):
        a coarse grid (step TPR_COARSE on TPR_RANGE) locates the minimiser of δ_U(ε) + e^ε α; a middle
        grid (step 10·TPR_FINE, ±10·TPR_COARSE) and a fine one (step TPR_FINE, ±TPR_COARSE) around it
        make the staircase's first-order gap small where it matters. Rigorous whatever the grid."""
        weak, strong = _pairs(scheme)
        if isinstance(weak, Gaussian) and isinstance(strong, Gaussian):
            return [self._bounds(*_gaussian_tpr(weak, strong, float(fpr)), Quantity.TPR, float(fpr), direction, strong) for fpr in fprs]

        def brackets(grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            ends = [(weak.delta(float(e), direction), strong.delta(float(e), direction)) for e in grid]
            return np.array([w.lower for w, _ in ends]), np.array([u.upper for _, u in ends])

        coarse = np.arange(TPR_RANGE[0], TPR_RANGE[1] + TPR_COARSE / 2, TPR_COARSE)
        coarse_lower, coarse_upper = brackets(coarse)
        note = (
            f"TPR from exact δ brackets on an ε grid (step {TPR_COARSE:g} on {TPR_RANGE}, {TPR_FINE:g} near the minimiser): "
            "staircase lower, minimum upper (proofs/tradeoff_conversion.py, Lemma 4)"
        )
        out = []
        for fpr in fprs:
            centre = float(coarse[int(np.argmin(coarse_upper + np.exp(coarse) * float(fpr)))])
            near = np.union1d(
                np.arange(centre - 10 * TPR_COARSE, centre + 10 * TPR_COARSE, 10 * TPR_FINE),
                np.arange(centre - TPR_COARSE, centre + TPR_COARSE + TPR_FINE / 2, TPR_FINE),
            )
            near_lower, near_upper = brackets(near)
            grid, index = np.unique(np.concatenate([coarse, near]), return_index=True)
            lower = np.concatenate([coarse_lower, near_lower])[index]
            upper = np.concatenate([coarse_upper, near_upper])[index]
            got = staircase_tpr(grid, lower, upper, float(fpr))
            bounds = self._bounds(float(got.lower), float(got.upper), Quantity.TPR, float(fpr), direction, strong)
            out.append([replace(b, note=note) for b in bounds])
        return out

    def tpr_bounds(self, scheme: Scheme, fpr: float, direction: Direction) -> Sequence[Bound]:
        """:meth:`tpr_curve` at one FPR."""
        return self.tpr_curve(scheme, [fpr], direction, fpr)[0]

    def epsilon_bounds(self, scheme: Scheme, delta: float, direction: Direction) -> Sequence[Bound]:
        weak, strong = _pairs(scheme)
        lower, upper = weak.epsilon(delta, direction).lower, strong.epsilon(delta, direction).upper
        return self._bounds(lower, upper, Quantity.EPSILON, delta, direction, strong)


METHODS = [ExactPair()]
