"""Exact oracle: binary randomized response under shuffled check-in (Liew, Hasegawa & Takahashi,
Eq. (3)) for small n, by enumeration. Slow and obviously correct; tests hold every bound against it.

Each of n users holds a bit and checks in with probability γ; a checked-in user reports its bit
through randomized response (the true bit with probability p = e^{ε0}/(1 + e^{ε0})), and the
shuffled reports are released. For binary reports the shuffled multiset is (k, c): the number of
check-ins and the number of reported ones. Replace-one neighbours D, D' differ in user 1's bit
(0 in D, 1 in D'); the law of (k, c) depends on the other users only through how many of them hold
a 1, m = 0 … n − 1. For each m the oracle enumerates: a ~ Bin(m, γ) checked-in 1-holders,
b ~ Bin(n − 1 − m, γ) checked-in 0-holders, u ∈ {0, 1} whether user 1 checked in, and the reported
ones Bin(a, p) + Bin(b, 1 − p) (+ user 1's report), summing the point masses of (k, c) exactly as
a float64 sum of products of binomial probabilities (relative error ~1e-15).

δ(ε) over T rounds (one dataset reused each round, so the T-round law is the product) is
Σ_x max(0, P^T(x) − e^ε Q^T(x)), computed exactly for T <= 2 by summing over all pairs of outcomes;
the worst case is the maximum over m and over both orders (D', D) and (D, D') of the neighbours.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
from scipy.stats import binom

__all__ = ["release_laws", "rr_checkin_delta", "MAX_USERS"]

MAX_USERS = 40


def _bin(count: int, prob: float) -> npt.NDArray[np.float64]:
    return binom.pmf(np.arange(count + 1), count, prob)


def release_laws(users: int, rate: float, epsilon0: float, ones: int) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Laws of (k, c) (a (n+1) × (n+1) array indexed [k, c]) with user 1 holding 1 (D') and 0 (D),
    ``ones`` = m of the other n − 1 users holding 1."""
    n, m = users, ones
    if not (1 <= n <= MAX_USERS and 0 <= m <= n - 1):
        raise ValueError(f"need 1 <= n <= {MAX_USERS} and 0 <= m <= n-1, got n={n}, m={m}")
    p = math.exp(epsilon0) / (1 + math.exp(epsilon0))
    out = {1: np.zeros((n + 1, n + 1)), 0: np.zeros((n + 1, n + 1))}
    wa, wb = _bin(m, rate), _bin(n - 1 - m, rate)
    for a in range(m + 1):
        ca = _bin(a, p)
        for b in range(n - m):
            others = np.convolve(ca, _bin(b, 1 - p))  # ones reported by the other checked-in users
            for bit in (0, 1):
                law = out[bit]
                law[a + b, : a + b + 1] += wa[a] * wb[b] * (1 - rate) * others
                own = np.array([1 - p, p]) if bit == 1 else np.array([p, 1 - p])
                law[a + b + 1, : a + b + 2] += wa[a] * wb[b] * rate * np.convolve(others, own)
    return out[1], out[0]


def _delta(p: npt.NDArray[np.float64], q: npt.NDArray[np.float64], epsilon: float, rounds: int) -> float:
    p, q = p.ravel(), q.ravel()
    if rounds == 1:
        return float(np.sum(np.maximum(p - math.exp(epsilon) * q, 0.0)))
    if rounds == 2:
        return float(np.sum(np.maximum(np.outer(p, p) - math.exp(epsilon) * np.outer(q, q), 0.0)))
    raise ValueError("the oracle enumerates T <= 2 rounds exactly")


def rr_checkin_delta(users: int, rate: float, epsilon0: float, epsilon: float, rounds: int = 1) -> float:
    """Exact δ(ε) of T rounds of binary RR under shuffled check-in: the worst case over the other
    users' bits (m) and over both orders of the neighbours."""
    worst = 0.0
    for m in range(users):
        p1, p0 = release_laws(users, rate, epsilon0, m)
        worst = max(worst, _delta(p1, p0, epsilon, rounds), _delta(p0, p1, epsilon, rounds))
    return worst
