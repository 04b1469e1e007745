"""Confidence bounds on the mean of i.i.d. samples in [0, 1], from their count, sum and sum of squares.

Every Monte Carlo statistic verifier averages, f = (1 − e^{ε−L})_+, lies in [0, 1] (Feldman &
Shenfeld, Def 2.1, third form), so distribution-free bounds for bounded variables apply:

- ``"kl"``: the KL–Chernoff bound (Hoeffding 1963, Thm 1; the confidence bound used by Chua et al.
  2024a, see notes/random-allocation.md §3.9). For [0,1]-valued X_i with mean μ,
  P(X̄ ≥ p) <= e^{−n·kl(p‖μ)} for p >= μ, where kl is the Bernoulli KL divergence; inverting gives the
  upper bound min{p >= X̄ : n·kl(X̄‖p) >= ln(1/err)} and the mirrored lower bound.
- ``"bernstein"``: the empirical Bernstein bound (Maurer & Pontil 2009, Thm 4): with probability
  >= 1 − err, μ <= X̄ + sqrt(2 V ln(2/err)/n) + 7 ln(2/err)/(3(n−1)), V the unbiased sample variance;
  the lower bound applies it to 1 − X. Much tighter than KL when the samples vary little (importance
  sampling).
- ``"kl+bernstein"``: both, each at half the error, and the tighter of the two on each side.

``lower`` and ``upper`` together hold with probability >= ``confidence``: each side is given
(1 − confidence)/2. The bisections return the end of their final interval on the safe side.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from verifier._types import Bracket
from verifier._validation import check_choice, check_integer, check_open_unit
from verifier.errors import InvalidArgument

__all__ = ["INTERVALS", "mean_interval", "kl_upper", "kl_lower", "bernstein_upper", "bernstein_lower"]

INTERVALS = ("kl", "bernstein", "kl+bernstein")

#: Bisection steps on p ∈ [0, 1]: 2^-80 is far below any meaningful confidence width.
_BISECTION_STEPS = 80


def _bernoulli_kl(q: npt.NDArray[np.float64], p: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """kl(q‖p) = q ln(q/p) + (1−q) ln((1−q)/(1−p)), with log1p for the second term (no cancellation
    in 1 − p when p is tiny, the regime of small δ)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        second = np.where(q < 1.0, (1.0 - q) * (np.log1p(-q) - np.log1p(-p)), 0.0)
        first = np.where(q > 0.0, q * np.log(q / p), 0.0)  # scipy.special.rel_entr without scipy's import
    return first + second


def _bisect(q: npt.NDArray[np.float64], level: float, lo: npt.NDArray[np.float64], hi: npt.NDArray[np.float64], upward: bool) -> npt.NDArray[np.float64]:
    """The end of [lo, hi] where kl(q‖·) >= level after bisection (kl(q‖·) rises away from q)."""
    for _ in range(_BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        far = _bernoulli_kl(q, mid) >= level
        if upward:
            hi, lo = np.where(far, mid, hi), np.where(far, lo, mid)
        else:
            lo, hi = np.where(far, mid, lo), np.where(far, hi, mid)
    return hi if upward else lo


def kl_upper(mean: npt.ArrayLike, n: int, err: float) -> npt.NDArray[np.float64]:
    """Smallest p >= mean with n·kl(mean‖p) >= ln(1/err) (1 if none): an upper confidence bound at
    level 1 − err on the mean of n i.i.d. [0,1] samples (Hoeffding 1963, Thm 1)."""
    q = np.clip(np.asarray(mean, dtype=float), 0.0, 1.0)
    return _bisect(q, math.log(1.0 / err) / n, q.copy(), np.ones_like(q), upward=True)


def kl_lower(mean: npt.ArrayLike, n: int, err: float) -> npt.NDArray[np.float64]:
    """Largest p <= mean with n·kl(mean‖p) >= ln(1/err) (0 if none): the mirrored lower bound."""
    q = np.clip(np.asarray(mean, dtype=float), 0.0, 1.0)
    return _bisect(q, math.log(1.0 / err) / n, np.zeros_like(q), q.copy(), upward=False)


def _bernstein_width(variance: npt.ArrayLike, n: int, err: float) -> npt.NDArray[np.float64]:
    log_term = math.log(2.0 / err)
    return np.sqrt(2.0 * np.maximum(variance, 0.0) * log_term / n) + 7.0 * log_term / (3.0 * (n - 1))


def bernstein_upper(mean: npt.ArrayLike, variance: npt.ArrayLike, n: int, err: float) -> npt.NDArray[np.float64]:
    """Empirical Bernstein upper bound at level 1 − err (Maurer & Pontil 2009, Thm 4), capped at 1."""
    m = np.asarray(mean, dtype=float)
    if n < 2:
        return np.ones_like(m)
    return np.minimum(1.0, m + _bernstein_width(variance, n, err))


def bernstein_lower(mean: npt.ArrayLike, variance: npt.ArrayLike, n: int, err: float) -> npt.NDArray[np.float64]:
    """Empirical Bernstein lower bound (Thm 4 applied to 1 − X), floored at 0."""
    m = np.asarray(mean, dtype=float)
    if n < 2:
        return np.zeros_like(m)
    return np.maximum(0.0, m - _bernstein_width(variance, n, err))


def mean_interval(
    n: int,
    total: npt.ArrayLike,
    total_squares: npt.ArrayLike,
    confidence: float,
    interval: str = "kl",
) -> tuple[npt.NDArray[np.float64], Bracket]:
    """Sample mean and a two-sided confidence interval (joint level ``confidence``) on the mean of
    ``n`` i.i.d. samples in [0, 1], from Σx and Σx² (arrays: one entry per statistic)."""
    n = check_integer("samples", n, minimum=1)
    level = check_open_unit("confidence", confidence)
    check_choice("interval", interval, INTERVALS)
    s = np.atleast_1d(np.asarray(total, dtype=float))
    s2 = np.atleast_1d(np.asarray(total_squares, dtype=float))
    if ((s < 0) | (s > n * (1 + 1e-12))).any():
        raise InvalidArgument("total", s, f"a sum of {n} samples in [0, 1] must lie in [0, {n}]")
    mean = np.clip(s / n, 0.0, 1.0)
    variance = np.maximum(s2 - n * mean * mean, 0.0) / (n - 1) if n > 1 else np.full_like(mean, 0.25)
    side_err = (1.0 - level) / 2.0
    if interval == "kl":
        lower, upper = kl_lower(mean, n, side_err), kl_upper(mean, n, side_err)
    elif interval == "bernstein":
        lower, upper = bernstein_lower(mean, variance, n, side_err), bernstein_upper(mean, variance, n, side_err)
    else:
        half = side_err / 2.0
        lower = np.maximum(kl_lower(mean, n, half), bernstein_lower(mean, variance, n, half))
        upper = np.minimum(kl_upper(mean, n, half), bernstein_upper(mean, variance, n, half))
    lower = np.clip(np.minimum(lower, mean), 0.0, 1.0)
    upper = np.clip(np.maximum(upper, mean), 0.0, 1.0)
    return mean, Bracket(lower, upper)
