"""Importance sampling for the Gaussian random allocation (one round: k = 1, one epoch).

Chua et al. (2024a), as vendored in random_allocation (notes/random-allocation.md §3.9): sample only
the region where the statistic f = (1 − e^{ε−L})_+ can be non-zero, and multiply by its probability.
In standard units (Z_i = Y_i/σ ~ N(0, 1), a = Δ/σ, M = max_i Z_i, T = t coordinates):

- REMOVE, L = ln((1/T) Σ_i e^{a Z_i − a²/2 + a²[i=1]}): since Σ_i e^{a Z_i + a²[i=1]} <= e^{aM}(e^{a²} + T − 1),
  L <= aM + log1p(expm1(a²)/T) − a²/2, which is <= ε when M <= c = (ε − log1p(expm1(a²)/T))/a + a/2.
  Region {M >= c}, probability 1 − Φ(c)^T. Sampled exactly: M from its law conditioned on M >= c
  (CDF Φ^T, inverted in logs), the argmax uniform among the T coordinates, the others i.i.d.
  N(0, 1) conditioned on <= M.
- ADD, L = −ln((1/T) Σ_i e^{a Z_i − a²/2}): since Σ_i e^{a Z_i} >= e^{aM}, L <= −aM + ln T + a²/2, which
  is < ε when M > c = (ln T − ε)/a + a/2. Region {M <= c}, probability Φ(c)^T; every coordinate is
  i.i.d. N(0, 1) conditioned on <= c.

(For σ = Δ = 1 these are the notes' C = ½ + σ²(ε − log1p(expm1(1/σ²)/T)) and C = ½ + σ²(ln T − ε);
the two inequalities are the notes' [DERIVED] check, re-derived here and tested in
tests/montecarlo/test_importance.py by sampling the complement.) f decreases in ε, so a region
built for ε_min serves every ε >= ε_min: one sample set gives the estimates at all requested ε.

The region probability ("scale") is computed with scipy's log_ndtr/expm1 in float64 (relative
error ~1e-15, not directed); the estimators round the scaled interval outward by one ulp.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from verifier._types import Direction
from verifier.montecarlo.samplers import BATCH_COORDINATES, coordinate_losses_to_allocation
from verifier.pairs import Gaussian

__all__ = ["region_threshold", "region_probability", "sample_importance"]


def region_threshold(pair: Gaussian, t: int, direction: Direction, epsilon_min: float) -> float:
    """The threshold c on max_i Z_i outside of which f vanishes for every ε >= ``epsilon_min``."""
    a = pair.sensitivity / pair.sigma
    if direction is Direction.REMOVE:
        return (epsilon_min - math.log1p(math.expm1(a * a) / t)) / a + 0.5 * a
    return (math.log(t) - epsilon_min) / a + 0.5 * a


def region_probability(pair: Gaussian, t: int, direction: Direction, epsilon_min: float) -> float:
    """Probability of the sampled region under the direction's first distribution's max law."""
    from scipy.special import log_ndtr  # here, not at import: start-up time (issue 17)

    c = region_threshold(pair, t, direction, epsilon_min)
    log_inside = t * float(log_ndtr(c))  # ln Φ(c)^T
    return -math.expm1(log_inside) if direction is Direction.REMOVE else math.exp(log_inside)


def _below(log_cap: npt.NDArray[np.float64] | float, size: tuple[int, ...], rng: np.random.Generator) -> npt.NDArray[np.float64]:
    """N(0, 1) draws conditioned on Z <= cap, given ln Φ(cap) (inverse CDF in logs)."""
    from scipy.special import ndtri_exp  # here, not at import: start-up time (issue 17)

    u = 1.0 - rng.random(size)  # (0, 1]
    return ndtri_exp(np.log(u) + log_cap)


def _coordinates(pair: Gaussian, t: int, n: int, direction: Direction, c: float, scale: float, rng: np.random.Generator) -> npt.NDArray[np.float64]:
    """(n × t) standard-normal coordinates drawn from the region's conditional law."""
    from scipy.special import log_ndtr, ndtri_exp  # here, not at import: start-up time (issue 17)

    if direction is Direction.ADD:
        return _below(float(log_ndtr(c)), (n, t), rng)
    u = 1.0 - rng.random(n)
    top = ndtri_exp(np.log1p(-scale * u) / t)  # M | M >= c: Φ(M)^T uniform on (Φ(c)^T, 1]
    z = _below(log_ndtr(top)[:, None], (n, t), rng)
    z[np.arange(n), rng.integers(0, t, size=n)] = top
    return z


def sample_importance(
    pair: Gaussian, t: int, direction: Direction, epsilon_min: float, size: int, rng: np.random.Generator
) -> tuple[npt.NDArray[np.float64], float]:
    """(losses, scale): ``size`` allocation losses drawn from the region for ``epsilon_min``, and the
    region's probability, so that δ(ε) = scale · E[(1 − e^{ε−L})_+] for every ε >= ε_min."""
    a = pair.sensitivity / pair.sigma
    c = region_threshold(pair, t, direction, epsilon_min)
    scale = region_probability(pair, t, direction, epsilon_min)
    if scale == 0.0:
        return np.full(size, -np.inf), 0.0
    rows = max(1, BATCH_COORDINATES // t)
    parts = []
    for start in range(0, size, rows):
        n = min(rows, size - start)
        coordinates = a * _coordinates(pair, t, n, direction, c, scale, rng) - 0.5 * a * a
        if direction is Direction.REMOVE:
            coordinates[:, 0] += a * a
        parts.append(coordinate_losses_to_allocation(coordinates, direction))
    return (np.concatenate(parts) if parts else np.empty(0)), scale
