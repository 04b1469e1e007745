"""Shuffled k-ary randomized response, LOWER bounds for every n: the exact hockey-stick divergence of
the datasets where every other user holds one symbol (proofs/shuffle_blanket.py).

Setting as :mod:`verifier.shuffle.blanket`; the victim's inputs are the symbols 0 and 1, and the
histogram is lumped to the coordinates (0, 1, z, rest): z a third symbol, rest the k − 3 others (the
lumping is sufficient when no other user holds a symbol of rest: :mod:`verifier.shuffle.histogram`).
If the n − 1 others all hold symbol t, their reports are Mult(n − 1, θ) with θ the report law of t, and
adding the victim's report r gives P(h) = Mult(n, θ)(h)·Σ_c (r(c)/θ(c))·h_c / n (the victim is any
one of the n reports: Mult(n − 1, θ)(h − e_c) = Mult(n, θ)(h)·h_c/(n·θ(c))), linear in h. Two
backgrounds, both orders (t = 1 is t = 0 with the symbols swapped):

- t = z (every other user on a third symbol, k >= 3): the worst background at moderate δ in the
  enumerations of :mod:`verifier.shuffle.histogram`, and within 1.4% of the blanket UPPER bound at
  n = 100 (benchmarks/shuffle.md);
- t = 0 (every other user on the victim's first symbol): the worst one at small δ and small n.

With s = h0 + h1 ~ Bin(n, θ0 + θ1), h0 | s ~ Bin(s, θ0/(θ0 + θ1)) and hz | s ~ Bin(n − s, θz/(θz + θr)),
P − E·Q is linear in h0 given (s, hz) (:mod:`verifier.shuffle.linear_tails`). hz is released only
through one of ``bins`` consecutive blocks of its window (and the block outside the window): a
post-processing, so the divergence of the binned release is still a LOWER bound on the shuffle
model's δ(ε) (64 blocks; 16 lose about 1e-4 of ε at n = 1000 against every hz apart, measured); outcomes
outside the windows are dropped, which only lowers the sum.
"""

from __future__ import annotations

import functools

import numpy as np
from flint import arb

from verifier._directed import with_precision
from verifier._types import Side
from verifier._validation import check_choice, check_integer, check_nonnegative, check_open_unit, check_positive
from verifier.analytic._search import smallest_passing
from verifier.errors import NotApplicable
from verifier.shuffle.blanket import USERS_LIMIT, exp_bounds
from verifier.shuffle.linear_tails import BinomialRows, Linear, outer_window, positive_sum
from verifier.shuffle.worst import UNIT_ROUNDOFF

__all__ = ["ONE_SYMBOL_CITATION", "OneSymbolPair", "one_symbol_lower"]

ONE_SYMBOL_CITATION = (
    "shuffled k-ary randomized response on the datasets where every other user holds one symbol (a third one, or "
    "the changed user's), both orders, the exact hockey-stick divergence of their histogram (linear likelihood "
    "ratio, proofs/shuffle_blanket.py), and for small n every background on at most three symbols, in float64 "
    "with proven error bounds: LOWER"
)

_U = UNIT_ROUNDOFF
_TAU = 1e-20
_BINS = 64
_HALVINGS = 30


class OneSymbolPair:
    """Every other user on symbol ``held`` ("z": a third symbol, or "x": the victim's first one), the
    victim's input 0 against 1 and 1 against 0: LOWER bounds on the larger δ(ε) of the two orders and on
    its ε(δ), exact up to rounding, the binning of hz and the outcomes outside the windows. The last
    loss is not small where the divergence lives in the far tails (ε near a large ε0): at k = 3, ε0 = 20,
    n = 6 the ε(1e-6) of the background on the victim's first symbol is 18.21 against an exact 20.00
    (a valid LOWER bound, only a loose one)."""

    def __init__(self, epsilon0: float, k: int, users: int, held: str, bins: int = _BINS) -> None:
        self.epsilon0 = check_positive("epsilon0", epsilon0)
        self.k = check_integer("k", k, minimum=3)
        self.users = n = check_integer("users", users, minimum=2)
        if n > USERS_LIMIT:
            raise NotApplicable(f"the one-symbol pairs' windows take ~3 kB per user: n = {n} is above {USERS_LIMIT}")
        held = check_choice("held", held, ("z", "x"))
        self.label = "every other user on " + ("a third symbol" if held == "z" else "the changed user's first symbol")
        with with_precision(128):
            big = arb(self.epsilon0).exp()
            z = big + (k - 1)
            p, q = big / z, 1 / z
            rest = (k - 3) * q
            theta = (p, q, q, rest) if held == "x" else (q, q, p, rest)
            r0, r1 = (p, q, q, rest), (q, p, q, rest)
            ratio = [[float((r[c] / theta[c]).mid()) if c < 3 or k > 3 else 0.0 for c in range(4)] for r in (r0, r1)]
            self._w_p, self._w_q = ratio[0], ratio[1]
            pair = theta[0] + theta[1]
            s_lo, s_pmf, s_rel = outer_window(n, pair, 1 - pair, _TAU)
            a_rho = theta[0] / pair
            sizes = list(range(s_lo, s_lo + len(s_pmf)))
            self._rows = BinomialRows(sizes, a_rho, 1 - a_rho, _TAU)
            third = theta[2] + theta[3]
            z_rho, z_c = theta[2] / third, theta[3] / third
            blocks = bins if (held == "z" and k > 3) else 1
            entries, z_rel = [], 0.0
            for j, s in enumerate(sizes):
                zlo, zpmf, zrel = outer_window(n - s, z_rho, z_c, _TAU)
                z_rel = max(z_rel, zrel + (len(zpmf) + 2) * _U)
                hz = zlo + np.arange(len(zpmf), dtype=np.float64)
                edges = np.unique(np.linspace(0, len(zpmf), min(blocks, len(zpmf)) + 1).astype(np.int64))
                for a, b in zip(edges[:-1], edges[1:]):
                    chunk = zpmf[a:b]
                    entries.append((j, s, s_pmf[j], float(np.sum(chunk)), float(np.sum(chunk * hz[a:b])), float(np.sum(chunk * (n - s - hz[a:b])))))
        cols = np.array(entries)
        self._row = cols[:, 0].astype(np.int64)
        self._s, self._ws, self._m, self._mz, self._mr = (cols[:, i] for i in range(1, 6))
        self._eta = s_rel + z_rel + 48 * _U

    def _linear(self, big: float, forward: bool) -> Linear:
        wp, wq = (self._w_p, self._w_q) if forward else (self._w_q, self._w_p)
        n = self.users
        scale = self._ws / n
        a_p = wp[1] * self._s * self._m + wp[2] * self._mz + wp[3] * self._mr
        a_q = wq[1] * self._s * self._m + wq[2] * self._mz + wq[3] * self._mr
        c0, m0 = scale * (a_p - big * a_q), scale * (a_p + big * a_q)
        c1 = scale * self._m * ((wp[0] - wp[1]) - big * (wq[0] - wq[1]))
        m1 = scale * self._m * (abs(wp[0]) + abs(wp[1]) + big * (abs(wq[0]) + abs(wq[1])))
        return Linear(c0, c1, m0, m1, self._eta, self._row)

    def delta_lower(self, epsilon: float, forward: bool | None = None) -> float:
        """A LOWER bound on δ(ε) of the order 0 -> 1 (``forward``), 1 -> 0, or (None) the larger of the two,
        hence on the shuffle model's."""
        big = exp_bounds(check_nonnegative("epsilon", epsilon))[1]
        orders = (True, False) if forward is None else (forward,)
        return max(positive_sum(self._rows, self._linear(big, order), Side.LOWER) for order in orders)

    def epsilon_lower(self, delta: float) -> float:
        """A LOWER bound on ε(δ): the largest ε of a bisection on [0, ε0] whose δ LOWER bound is > δ (0 if
        none; ε0 passes unevaluated: δ(ε) = 0 from ε0 on)."""
        target = check_open_unit("delta", delta)
        return smallest_passing(lambda e: e >= self.epsilon0 or self.delta_lower(e) <= target, 0.0, self.epsilon0,
                                tolerance=0.0, steps=_HALVINGS)[0]


@functools.lru_cache(maxsize=4)
def one_symbol_lower(epsilon0: float, k: int, users: int) -> list[OneSymbolPair]:
    """The pairs for (ε0, k >= 3, n): every other user on a third symbol, and on the victim's first symbol."""
    return [OneSymbolPair(epsilon0, k, users, held) for held in ("z", "x")]
