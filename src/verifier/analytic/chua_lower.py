"""The Chua et al. lower bound on the privacy profile of 1-out-of-t Gaussian allocation.

The event family is S_C = {v ∈ ℝ^t : max_i v_i > C}, C ∈ ℝ. For the REMOVE pair
P̄_t = (1/t) Σ_i N(Δe_i, σ²I) against Q^t = N(0, σ²I) (Feldman & Shenfeld, Thm 3.1 / Claim C.3),

    P̄_t(S_C) = 1 − Φ((C − Δ)/σ) Φ(C/σ)^{t−1},     Q^t(S_C) = 1 − Φ(C/σ)^t,

by symmetry of the max over coordinates. Since H_{e^ε}(P̄‖Q) = sup_S P̄(S) − e^ε Q(S)
(Feldman & Shenfeld, Def 2.1), every C gives a rigorous LOWER bound on δ→(ε); the ADD direction
uses the complements S_C^c = {max_i v_i <= C}: H_{e^ε}(Q‖P̄) >= Q^t(S_C^c) − e^ε P̄_t(S_C^c).
C is chosen by a float search (it only affects tightness); the bound at the chosen C is evaluated
in ball arithmetic (erfc, log1p, expm1) and rounded down.

Source of the formula: Chua et al. 2024a ("Scalable DP-SGD: shuffling vs. Poisson subsampling"),
as in the Google code vendored by random-allocation (notes/random-allocation.md §3.9).
"""

from __future__ import annotations

import math

import numpy as np
from flint import arb

from verifier._directed import arb_bound
from verifier._types import Bound, Direction, Quantity, Side
from verifier._validation import check_open_unit, check_real
from verifier.analytic._search import smallest_passing
from verifier.errors import NotApplicable
from verifier.pairs import Gaussian
from verifier.pairs.base import evaluate_adaptively
from verifier.schemes import Allocation

__all__ = ["CITATION", "chua_lower_delta", "chua_lower_epsilon", "event_masses"]

CITATION = (
    "Chua et al. 2024a lower bound (events {max_i v_i > C}; Feldman & Shenfeld 2025 Fig. 2 / notes §3.9), "
    "ball arithmetic"
)
METHOD = "chua-lower"

#: Points of the coarse grid over C before the local refinement (tightness only).
_GRID_POINTS = 400


def _log_phi_arb(z: arb) -> tuple[arb, arb]:
    """(ln Φ(z), Φ(−z)) with Φ(−z) = erfc(z/√2)/2, accurate in the far upper tail."""
    tail = (z / arb(2).sqrt()).erfc() / 2
    return (-tail).log1p(), tail


def event_masses(pair: Gaussian, steps: int, c: float) -> tuple[arb, arb]:
    """(P̄_t(max > C), Q^t(max > C)) as balls, for P = N(Δ, σ²), Q = N(0, σ²) per coordinate."""
    s, cc = arb(pair.sigma), arb(c)
    log_phi_c, _ = _log_phi_arb(cc / s)
    log_phi_c1, _ = _log_phi_arb((cc - arb(pair.sensitivity)) / s)
    p_bar = -(log_phi_c1 + (steps - 1) * log_phi_c).expm1()
    q = -(steps * log_phi_c).expm1()
    return p_bar, q


def _objective_float(c: float, pair: Gaussian, steps: int, epsilon: float, direction: Direction) -> float:
    """The event bound at C in float (search only)."""
    from scipy import special  # here, not at import: start-up time (issue 17)

    sigma = pair.sigma
    lc, lc1 = special.log_ndtr(c / sigma), special.log_ndtr((c - pair.sensitivity) / sigma)
    p_bar = -math.expm1(lc1 + (steps - 1) * lc)
    q = -math.expm1(steps * lc)
    if direction is Direction.REMOVE:
        return p_bar - math.exp(epsilon) * q
    return (1 - q) - math.exp(epsilon) * (1 - p_bar)


def _best_c(pair: Gaussian, steps: int, epsilon: float, direction: Direction) -> float:
    sigma, shift = pair.sigma, pair.sensitivity
    scale = sigma * sigma / shift * (abs(epsilon) + math.log(steps) + 1.0)
    grid = np.linspace(-8.0 * sigma, shift + scale + 12.0 * sigma, _GRID_POINTS)
    values = [_objective_float(c, pair, steps, epsilon, direction) for c in grid]
    i = int(np.argmax(values))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    from scipy import optimize  # here, not at import: start-up time (issue 17)

    res = optimize.minimize_scalar(
        lambda c: -_objective_float(c, pair, steps, epsilon, direction), bounds=(lo, hi), method="bounded",
        options={"xatol": 1e-10 * max(1.0, abs(hi))},
    )
    return float(res.x) if -res.fun >= values[i] else float(grid[i])


def _gaussian(scheme: Allocation) -> Gaussian:
    pair = scheme.pair
    if not isinstance(pair, Gaussian):
        raise NotApplicable(f"the Chua et al. event bound is for the Gaussian mechanism, not {type(pair).__name__}")
    if scheme.k != 1 or scheme.epochs != 1:
        raise NotApplicable(f"the event family is for 1-out-of-t, one epoch (got k={scheme.k}, epochs={scheme.epochs})")
    return pair


def _delta_lower(pair: Gaussian, steps: int, epsilon: float, direction: Direction) -> float:
    c = _best_c(pair, steps, epsilon, direction)

    def ball() -> arb:
        p_bar, q = event_masses(pair, steps, c)
        if direction is Direction.REMOVE:
            return p_bar - arb(epsilon).exp() * q
        return (1 - q) - arb(epsilon).exp() * (1 - p_bar)

    return max(arb_bound(evaluate_adaptively(ball), Side.LOWER), 0.0)


def chua_lower_delta(scheme: Allocation, epsilon: float, direction: Direction) -> Bound:
    """Rigorous LOWER bound on δ(ε) of 1-out-of-t Gaussian allocation in ``direction``:
    max over C of P̄(max > C) − e^ε Q(max > C) (REMOVE) or Q(max <= C) − e^ε P̄(max <= C) (ADD)."""
    eps = check_real("epsilon", epsilon)
    value = _delta_lower(_gaussian(scheme), scheme.steps, eps, direction)
    return Bound(value, Side.LOWER, direction, Quantity.DELTA, eps, METHOD, CITATION)


def chua_lower_epsilon(scheme: Allocation, delta: float, direction: Direction) -> Bound:
    """Rigorous LOWER bound on ε(δ): the largest ε found (bisection) at which the event bound on δ(ε)
    still exceeds δ; since δ(·) is non-increasing, ε(δ) is at least that ε."""
    target = check_open_unit("delta", delta)
    pair = _gaussian(scheme)

    def above(e: float) -> bool:
        return _delta_lower(pair, scheme.steps, e, direction) > target

    lo = 0.0
    while not above(lo):
        lo = 2.0 * lo - 1.0  # C → −∞ gives 1 − e^ε > δ for ε < ln(1 − δ)
    failing, _ = smallest_passing(lambda e: not above(e), lo)
    return Bound(failing, Side.LOWER, direction, Quantity.EPSILON, target, METHOD, CITATION)
