"""Lower bounds and Monte Carlo evidence for matrix mechanisms under random allocation.

Work in units of σ: the pair of Lemma 2.8 is P = (1/b) Σ_i N(μ_i, I_N), Q = N(0, I_N) with
μ_i = Δ·m_i/σ, and Γ = Δ²G/σ² its Gram matrix.

PROJECTION, a rigorous LOWER bound on δ(ε) [derived here, not in the paper]:
- For non-negative C the pair is attained: if the differing element's clipped gradient is the same
  unit vector at every step and every other gradient is zero, the release is C·(its indicator
  column sum) + Z, i.e. exactly P (remove) or Q (add) against the other; so δ(ε) of the mechanism is
  at least δ(ε) of the pair (tightness of Lemma 2.8 for C >= 0).
- A linear statistic Y = wᵀx/‖w‖ is post-processing, so H_γ(P_Y‖Q_Y) <= H_γ(P‖Q). For w = Σ_j c_j μ_j,
  Y ~ (1/b) Σ_i N(ν_i, 1) under P and N(0, 1) under Q, with ν = Γc/√(cᵀΓc) >= 0.
- The likelihood ratio of the projected pair is increasing in y (ν >= 0), so the optimal event is a
  half-line: δ_remove >= (1/b) Σ Φ̄(y* − ν_i) − e^ε Φ̄(y*) with p/q(y*) = e^ε, and
  δ_add >= Φ(y') − e^ε (1/b) Σ Φ(y' − ν_i) with p/q(y') = e^{−ε}. Any y gives a valid bound (the
  event need not be optimal); y is found in floating point, the bound evaluated in ball arithmetic
  and rounded down. Directions tried: the sum of the means (c = 1, the issue's suggestion) and the
  largest single mean (c = e_k); the larger bound is kept.
For C with negative entries the pair built from |C| is not attained, so no lower bound is given.

MONTE CARLO, an ESTIMATE with a confidence interval: δ(ε) = E[(1 − e^{ε−L})_+] over the privacy
loss L of the full N-dimensional pair (L = log p/q under P for remove, log q/p under Q for add),
with the distribution-free KL–Chernoff interval of :mod:`verifier.montecarlo.intervals`.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
from flint import arb

from verifier._directed import arb_bound, with_precision
from verifier._types import Direction, Estimate, Quantity, Side
from verifier._validation import check_integer, check_open_unit, check_real
from verifier.errors import InvalidArgument

__all__ = [
    "CITATION_PROJECTION",
    "CITATION_MC",
    "projection_means",
    "projection_delta_lower",
    "projection_epsilon_lower",
    "mc_delta",
]

CITATION_PROJECTION = "projection of the Lemma 2.8 pair (Schuchardt & Kalinin) onto a linear statistic: post-processing, derived lower bound"
CITATION_MC = "Monte Carlo of the Lemma 2.8 pair's privacy loss (Schuchardt & Kalinin), KL-Chernoff interval"

#: Bisection steps for the threshold y and for ε (interval widths 2^-60 of the bracket).
_STEPS = 60


def projection_means(gamma: npt.ArrayLike) -> list[npt.NDArray[np.float64]]:
    """The projected means ν = Γc/√(cᵀΓc) (units of σ) for the directions tried (module docstring)."""
    g = np.asarray(gamma, dtype=float)
    out = []
    for c in (np.ones(g.shape[0]), np.eye(g.shape[0])[int(np.argmax(np.diagonal(g)))]):
        norm2 = float(c @ g @ c)
        if norm2 > 0:
            out.append(np.maximum(g @ c / math.sqrt(norm2), 0.0))
    return out


def _log_ratio(nu: npt.NDArray[np.float64], y: float) -> float:
    """log p(y)/q(y) of the projected pair: log (1/b) Σ exp(ν_i y − ν_i²/2)."""
    z = nu * y - nu * nu / 2
    top = float(z.max())
    return top + math.log(float(np.exp(z - top).sum()) / len(nu))


def _threshold(nu: npt.NDArray[np.float64], level: float) -> float:
    """y with log p/q(y) ≈ ``level`` (the ratio is increasing in y), by bisection."""
    lo, hi = -50.0 - abs(level), 50.0 + abs(level) + 10.0 * float(nu.max())
    if nu.max() > 0:
        hi = max(hi, (abs(level) + math.log(len(nu)) + 1.0) / float(nu.max()) + float(nu.max()))
    for _ in range(_STEPS):
        mid = (lo + hi) / 2
        if _log_ratio(nu, mid) < level:
            lo = mid
        else:
            hi = mid
    return hi


def _upper_tail(x: arb) -> arb:
    return (x / arb(2).sqrt()).erfc() / 2


def _delta_lower_one(nu: npt.NDArray[np.float64], epsilon: float, direction: Direction) -> float:
    if not np.any(nu > 0):
        return 0.0
    with with_precision():
        e = arb(epsilon).exp()
        b = len(nu)
        if direction is Direction.REMOVE:
            y = arb(_threshold(nu, epsilon))
            value = sum((_upper_tail(y - arb(float(v))) for v in nu), arb(0)) / b - e * _upper_tail(y)
        else:
            y = arb(_threshold(nu, -epsilon))
            value = _upper_tail(-y) - e * sum((_upper_tail(arb(float(v)) - y) for v in nu), arb(0)) / b
        return max(0.0, arb_bound(value, Side.LOWER))


def projection_delta_lower(gamma: npt.ArrayLike, epsilon: float, direction: Direction) -> float:
    """LOWER bound on δ(ε) in ``direction`` for non-negative C (module docstring)."""
    eps = check_real("epsilon", epsilon)
    if not isinstance(direction, Direction):
        raise InvalidArgument("direction", direction, "must be Direction.ADD or Direction.REMOVE")
    return max((_delta_lower_one(nu, eps, direction) for nu in projection_means(gamma)), default=0.0)


def projection_epsilon_lower(gamma: npt.ArrayLike, delta: float, direction: Direction) -> float:
    """LOWER bound on ε(δ): the largest ε found (by bisection) with projection δ_lower(ε) >= δ, so the
    true δ(ε) exceeds δ there and ε(δ) >= ε; 0 when none is found (the trivial bound)."""
    target = check_open_unit("delta", delta)
    if projection_delta_lower(gamma, 0.0, direction) < target:
        return 0.0
    lo, hi = 0.0, 1.0
    while projection_delta_lower(gamma, hi, direction) >= target:
        lo, hi = hi, 2 * hi
        if hi > 1e6:
            return lo
    for _ in range(_STEPS):
        mid = (lo + hi) / 2
        if projection_delta_lower(gamma, mid, direction) >= target:
            lo = mid
        else:
            hi = mid
    return lo


def mc_delta(
    mu: npt.ArrayLike, epsilon: float, direction: Direction, samples: int, seed: int = 0, confidence: float = 0.99
) -> Estimate:
    """Monte Carlo ESTIMATE of δ(ε) of the full pair with means ``mu`` (b×N, units of σ)."""
    from verifier.montecarlo.intervals import mean_interval

    m = np.asarray(mu, dtype=float)
    eps = check_real("epsilon", epsilon)
    n = check_integer("samples", samples, minimum=2)
    b = m.shape[0]
    rng = np.random.default_rng(seed)
    half_norms = 0.5 * np.einsum("ij,ij->i", m, m)
    total = total_sq = 0.0
    chunk = max(1, min(n, 2**22 // max(1, m.size)))
    done = 0
    while done < n:
        size = min(chunk, n - done)
        x = rng.standard_normal((size, m.shape[1]))
        if direction is Direction.REMOVE:
            x += m[rng.integers(0, b, size)]
        z = x @ m.T - half_norms
        top = z.max(axis=1)
        log_ratio = top + np.log(np.exp(z - top[:, None]).sum(axis=1)) - math.log(b)
        loss = log_ratio if direction is Direction.REMOVE else -log_ratio
        f = -np.expm1(np.minimum(eps - loss, 0.0))
        total += float(f.sum())
        total_sq += float((f * f).sum())
        done += size
    mean, bracket = mean_interval(n, total, total_sq, confidence, "kl")
    return Estimate(
        float(mean[0]), float(bracket.lower[0]), float(bracket.upper[0]), confidence, n, direction, Quantity.DELTA, eps, "matrix-mc", CITATION_MC
    )
