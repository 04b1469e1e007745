"""Shuffled k-ary randomized response, an UPPER bound for every n through its blanket
(proofs/shuffle_blanket.py).

Setting: n users, each reporting its input symbol with probability p = e^ε0/Z and every other symbol
with probability q = 1/Z (Z = e^ε0 + k − 1), the reports shuffled (the release is their histogram);
replace-one neighbours change the victim's input x to x′.

Blanket: every report law is q·k·Uniform(k) + (1 − k·q)·δ_(own symbol) (p − q = 1 − k·q), so each other
user is, with probability λ = k/Z, a uniform report independent of its input, and its own symbol
otherwise. Revealing which users are not blanket reports (their reports are then known) is a
post-processing in reverse: the release is a function of the revealed one, so for every background,
both orders, δ(ε) <= E_N g(N), N ~ Bin(n − 1, λ), g(N) the hockey-stick divergence of the victim's
report plus N uniform reports. Given N the symbols other than x, x′ are interchangeable and
(a, b) = (the counts on x and on x′) is sufficient: with M = N + 1 reports, P(a, b) = T(a, b)·
(λ + kγ·a/M) and Q(a, b) = T(a, b)·(λ + kγ·b/M), T the multinomial law of M uniform reports and
γ = p − q; in s = a + b ~ Bin(M, 2/k), a | s ~ Bin(s, 1/2), P − E·Q is linear in a for each s
(:mod:`verifier.shuffle.linear_tails`). The pair is symmetric (a ↔ b), so both orders give the same g.
g does not increase with N (one more uniform report is a Markov kernel applied to both laws), so N is
bucketed at the buckets' left ends; N below the window counts with g <= 1. For k = 2 it is the clone
bound with randomized response's share (proofs/shuffle_binary.py); for k >= 3 it keeps the victim's
reports on the other k − 2 symbols mixed with the blanket's, which the clone share (any k) throws away.

Cost: one binomial window of a per value of s across the buckets (Bin(s, 1/2)), then O(1) per s and
bucket for each ε; ε(δ) by bisection on ε with the rigorous δ bound (32 halvings of [0, ε0]).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from flint import arb

from verifier._directed import arb_bound, up, with_precision
from verifier._types import Side
from verifier._validation import check_integer, check_nonnegative, check_open_unit, check_positive
from verifier.analytic._search import smallest_passing
from verifier.errors import NotApplicable
from verifier.shuffle.linear_tails import BinomialRows, Linear, outer_window, positive_sum
from verifier.shuffle.worst import UNIT_ROUNDOFF

__all__ = ["BLANKET_CITATION", "USERS_LIMIT", "BlanketBound", "blanket_bound", "exp_bounds"]

BLANKET_CITATION = (
    "shuffled k-ary randomized response: every report is uniform with probability k/(e^eps0 + k - 1) whatever its "
    "input; revealing the non-uniform ones leaves the victim's report among N uniform ones, N binomial "
    "(proofs/shuffle_blanket.py), its hockey-stick divergence bounded in float64 with proven error bounds: UPPER"
)

#: The largest n: the windows' arrays take ~3 kB per user (measured at n = 10^5, k = 3: 1.0 s of CPU for this
#: bound, 1.5 s for the one-symbol pairs of :mod:`verifier.shuffle.one_symbol`, 0.9 GB peak together).
USERS_LIMIT = 100_000

_U = UNIT_ROUNDOFF
_TAU = 1e-20  # Chernoff mass allowed outside each side of a window
_BUCKET_SHARE = 0.002  # a bucket of N spans about this share of N's mean (the bound's excess is about a quarter of it, in ε)
_HALVINGS = 32


def exp_bounds(epsilon: float) -> tuple[float, float]:
    """(lower, upper) float bounds on e^ε."""
    with with_precision(128):
        ball = arb(epsilon).exp()
    return arb_bound(ball, Side.LOWER), arb_bound(ball, Side.UPPER)


class BlanketBound:
    """The blanket UPPER bound on δ(ε) and ε(δ) of n shuffled k-ary ε0-randomized-response reports, every
    background and both orders (module docstring)."""

    def __init__(self, epsilon0: float, k: int, users: int) -> None:
        self.epsilon0 = check_positive("epsilon0", epsilon0)
        self.k = check_integer("k", k, minimum=2)
        self.users = check_integer("users", users, minimum=2)
        if self.users > USERS_LIMIT:
            raise NotApplicable(f"the blanket bound's windows take ~3 kB per user: n = {self.users} is above {USERS_LIMIT}")
        with with_precision(128):
            big = arb(self.epsilon0).exp()
            z = big + (self.k - 1)
            lam, lam_c = self.k / z, (big - 1) / z
            two, two_c = arb(2) / self.k, arb(self.k - 2) / self.k
            self._lam = float(lam.mid())
            self._kgamma = float((self.k * (big - 1) / z).mid())
            n_lo, n_pmf, n_rel = outer_window(self.users - 1, lam, lam_c, _TAU)
        mean = (self.users - 1) * self._lam
        width = max(1, int(_BUCKET_SHARE * mean))
        starts = list(range(n_lo, n_lo + len(n_pmf), width))
        self._weights = []
        for i, start in enumerate(starts):
            chunk = n_pmf[start - n_lo : start - n_lo + width]
            mass = float(np.sum(chunk)) * (1 + n_rel + (len(chunk) + 2) * _U) + (_TAU if i == len(starts) - 1 else 0.0)
            self._weights.append(float(up(mass)))
        self._below = _TAU if n_lo > 0 else 0.0
        self._sizes = [start + 1 for start in starts]  # M = N + 1 reports
        outers = []
        for size in self._sizes:
            with with_precision(128):
                outers.append(outer_window(size, two, two_c, _TAU))
        s_lo = min(o[0] for o in outers)
        s_hi = max(o[0] + len(o[1]) for o in outers)
        with with_precision(128):
            self._rows = BinomialRows(list(range(s_lo, s_hi)), arb(1) / 2, arb(1) / 2, _TAU)
        # every bucket's rows in one family of terms, its weight folded into the coefficients
        weight, size, row, rel = [], [], [], 0.0
        for (start, pmf, pmf_rel), m, w in zip(outers, self._sizes, self._weights):
            weight.append(w * pmf)
            size.append(np.full(len(pmf), float(m)))
            row.append(np.arange(start - s_lo, start - s_lo + len(pmf), dtype=np.int64))
            rel = max(rel, pmf_rel)
        self._w = np.concatenate(weight)
        self._row = np.concatenate(row)
        self._s = (s_lo + self._row).astype(np.float64)  # row j holds Bin(s_lo + j, 1/2)
        self._alpha = self._kgamma / np.concatenate(size)
        self._eta = rel + 24 * _U
        self._outside = 4 * _TAU * (1 + self._kgamma)  # the windows of s and a, P's weight at most λ + kγ

    def delta_upper(self, epsilon: float) -> float:
        """An UPPER bound on δ(ε), every background and both orders; 0 from ε0 on (every likelihood ratio of
        the shuffle is at most e^ε0: post-processing of the victim's report)."""
        if check_nonnegative("epsilon", epsilon) >= self.epsilon0:
            return 0.0
        big = exp_bounds(epsilon)[0]
        lam, w, alpha, s = self._lam, self._w, self._alpha, self._s
        c1 = w * alpha * (1 + big)
        terms = Linear(w * (lam - big * (lam + alpha * s)), c1, w * (lam + big * (lam + alpha * s)), c1.copy(), self._eta, self._row)
        total = positive_sum(self._rows, terms, Side.UPPER) + self._below + self._outside
        return min(1.0, float(up(total * (1 + 4 * _U))))

    def epsilon_upper(self, delta: float) -> float:
        """An UPPER bound on ε(δ): the end of a bisection on [0, ε0] whose δ bound is <= δ (ε0 passes:
        :meth:`delta_upper` is 0 there)."""
        target = check_open_unit("delta", delta)
        return smallest_passing(lambda e: self.delta_upper(e) <= target, 0.0, self.epsilon0, tolerance=0.0, steps=_HALVINGS)[1]


@functools.lru_cache(maxsize=8)
def blanket_bound(epsilon0: float, k: int, users: int) -> BlanketBound:
    """The bound for (ε0, k, n), cached: certify asks both directions and quantities of one scheme."""
    return BlanketBound(epsilon0, k, users)
