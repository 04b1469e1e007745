"""Order-statistics sampling of the Gaussian allocation loss: an UPPER-biased loss at O(R) cost per
sample instead of O(t) (Chua et al. 2024a, as vendored in random_allocation; notes/random-allocation.md
§3.9 "Order statistics").

Of the d i.i.d. N(0, 1) coordinates that enter the log-sum-exp (d = t − 1 for REMOVE, whose P-coordinate
is drawn separately; d = t for ADD), only the values at ranks k_1 = 1 < k_2 < … < k_R (k-th largest)
are drawn, and every coordinate is replaced by a value on the pessimistic side:

- REMOVE needs an upper bound on Σ e^{a Z_i}: the k_{j+1} − k_j coordinates of ranks [k_j, k_{j+1}) are
  at most the k_j-th largest Y_j, and the d − k_R + 1 of ranks >= k_R at most Y_R;
- ADD needs a lower bound on Σ e^{a Z_i} (its loss is −ln of the mean ratio): the k_j − k_{j−1}
  coordinates of ranks (k_{j−1}, k_j] are at least Y_j, the largest is Y_1, the rest are dropped (>= 0).

So L̃ >= L pointwise, f(L̃) >= f(L), and the estimate is of an upper bound on δ (its ``lower`` end is
therefore reported as 0). With every rank kept (d <= :data:`EXACT_RANKS`) L̃ = L in law.

The order statistics are drawn exactly: with U_(k) the k-th largest of d uniforms, U_(1) ~ Beta(d, 1)
and U_(k_j)/U_(k_{j−1}) ~ Beta(d − k_j + 1, k_j − k_{j−1}) independently (Rényi representation), in logs
via Gamma variates (ln Beta(α, β) = −log1p(G_β/G_α)), then Y_j = Φ^{-1}(U_(k_j)) by ``ndtri_exp``.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from verifier._types import Direction
from verifier.pairs import Gaussian

__all__ = ["EXACT_RANKS", "ranks", "pessimistic_loss", "sample_order_statistics_loss"]

#: All ranks up to this are kept; beyond it the ranks are spaced geometrically by ~1%.
EXACT_RANKS = 100
_GROWTH = 1.01


def ranks(d: int) -> npt.NDArray[np.int64]:
    """Ranks 1..min(d, 100), then ranks spaced by ~1% (×1.01) up to d (d itself always included)."""
    head = np.arange(1, min(d, EXACT_RANKS) + 1)
    tail = []
    k = EXACT_RANKS
    while k < d:
        k = min(d, max(k + 1, math.ceil(k * _GROWTH)))
        tail.append(k)
    return np.concatenate([head, np.array(tail, dtype=np.int64)]).astype(np.int64)


def _weights(rank: npt.NDArray[np.int64], d: int, direction: Direction) -> npt.NDArray[np.float64]:
    """How many coordinates each order statistic stands for (see the module docstring)."""
    if direction is Direction.REMOVE:
        return np.diff(np.append(rank, d + 1)).astype(float)
    return np.diff(np.concatenate([[0], rank])).astype(float)


def pessimistic_loss(
    top: npt.NDArray[np.float64], rank: npt.NDArray[np.int64], d: int, a: float, t: int, direction: Direction,
    first: npt.NDArray[np.float64] | None = None,
) -> npt.NDArray[np.float64]:
    """L̃ from the standard-normal order statistics ``top`` (samples × R, at ``rank`` of d coordinates),
    plus for REMOVE the P-coordinate's N(0, 1) draw ``first``: L̃ >= L for the same coordinates."""
    from scipy.special import logsumexp  # here, not at import: start-up time (issue 17)

    log_w = np.log(_weights(rank, d, direction))
    terms = a * top - 0.5 * a * a + log_w
    if direction is Direction.REMOVE:
        terms = np.concatenate([terms, (a * first + 0.5 * a * a)[:, None]], axis=1)
        return logsumexp(terms, axis=1) - math.log(t)
    return -(logsumexp(terms, axis=1) - math.log(t))


def _top_order_statistics(d: int, rank: npt.NDArray[np.int64], size: int, rng: np.random.Generator) -> npt.NDArray[np.float64]:
    """(size × R) draws of the rank-k_j largest of d i.i.d. N(0, 1), jointly."""
    alpha = (d - rank + 1).astype(float)
    beta = np.diff(np.concatenate([[0], rank])).astype(float)
    g_alpha = rng.standard_gamma(alpha, size=(size, rank.size))
    g_beta = rng.standard_gamma(beta, size=(size, rank.size))
    log_u = np.cumsum(-np.log1p(g_beta / g_alpha), axis=1)
    from scipy.special import ndtri_exp  # here, not at import: start-up time (issue 17)

    return ndtri_exp(log_u)


def sample_order_statistics_loss(pair: Gaussian, t: int, direction: Direction, size: int, rng: np.random.Generator) -> npt.NDArray[np.float64]:
    """``size`` draws of the upper-biased loss L̃ of one round of Gaussian 1-out-of-t allocation."""
    a = pair.sensitivity / pair.sigma
    d = t - 1 if direction is Direction.REMOVE else t
    first = rng.standard_normal(size) if direction is Direction.REMOVE else None
    if d == 0:
        return a * first + 0.5 * a * a  # t = 1: the pair's own loss
    rank = ranks(d)
    return pessimistic_loss(_top_order_statistics(d, rank, size, rng), rank, d, a, t, direction, first)
