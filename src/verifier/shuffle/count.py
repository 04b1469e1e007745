"""The count pair: one victim bit plus a binomial background, evaluated exactly in ball arithmetic.

The pair (P, Q) on k ∈ {0, …, N + 1} is the law of K = V + S with S ~ Bin(N, r) independent of
V ~ Bern(a1) under P and V ~ Bern(a0) under Q. It is the release of two shuffle-model objects:

- **Shuffled binary randomized response** (exact, a LOWER bound on the shuffle model). With n users,
  each reporting its bit truthfully with probability p = e^ε0/(e^ε0 + 1), the shuffled multiset of
  reports is the number of reported ones. On the datasets X1 = (1, 0, …, 0) and X0 = (0, 0, …, 0) the
  count is V + Bin(n − 1, 1 − p) with V ~ Bern(p) under X1 and Bern(1 − p) under X0: the count pair
  with (a1, a0, r, N) = (p, 1 − p, 1 − p, n − 1). k-ary randomized response (truth with probability
  e^ε0/(e^ε0 + k − 1), each other symbol 1/(e^ε0 + k − 1)) seen through the number of reports equal to
  symbol 1 gives (a1, a0, r) = (e^ε0, 1, 1)/(e^ε0 + k − 1) on the same datasets: a post-processing of
  the shuffled multiset, so again a LOWER bound. How the datasets were chosen: for binary RR every
  dataset of the others is m ones and n − 1 − m zeros up to order (which the shuffle hides);
  tests/shuffle enumerate every m (and every k-ary histogram) for n <= 12 in mpmath. At the ε that
  matter for small δ (ε = ε0/2 in the tests) the worst is the all-equal background used here; near
  ε = 0 a mixed background can be worse by up to ~25% (n = 8, ε0 = 2, ε = 0: 0.384 with m = 3
  against 0.313), so the value is a LOWER bound, not the worst case.
- **Feldman–McMillan–Talwar's clone pair given C = c** (:mod:`verifier.shuffle.clones`):
  (a1, a0, r, N) = (e^ε0/(e^ε0 + 1), 1/(e^ε0 + 1), 1/2, c).

δ(ε) in closed form (proofs/shuffle_count.py): for a1 > a0 the likelihood ratio P(k)/Q(k) is
increasing in k, so with E = e^ε >= 1 the optimal event is {K >= t}, t the smallest k with
P(k) > E·Q(k), and

    δ(ε) = (a1 − E·a0)·s(t − 1) − (E − 1)·S(t),   s = pmf of Bin(N, r),  S(j) = Pr[Bin(N, r) >= j],

with t = ⌊x⌋ + 1, x = u*·r·(N + 1)/(1 − r + u*·r), u* = (E(1 − a0) − (1 − a1))/(a1 − E·a0), and
δ(ε) = 0 when a1 <= E·a0. For a1 < a0 the mirror K ↦ N + 1 − K maps the pair to (1 − a1, 1 − a0,
1 − r). S(j) is the regularized incomplete beta function I_r(j, N − j + 1), evaluated by arb
(ball arithmetic), so every value is a rigorous bracket.
"""

from __future__ import annotations

from flint import arb

from verifier._directed import arb_bound, with_precision
from verifier._types import Bracket, Side
from verifier._validation import check_integer, check_nonnegative, check_open_unit, check_positive
from verifier.errors import NumericalFailure

__all__ = ["CountPair", "binomial_sf_arb", "binomial_pmf_arb", "rr_count_pair"]

_PRECISION_BITS = 192


def binomial_pmf_arb(j: int, size: int, r: arb) -> arb:
    """Pr[Bin(size, r) = j] as a ball (0 outside 0 … size)."""
    if j < 0 or j > size:
        return arb(0)
    log_binom = arb(size + 1).lgamma() - arb(j + 1).lgamma() - arb(size - j + 1).lgamma()
    return (log_binom + j * r.log() + (size - j) * (1 - r).log()).exp()


def binomial_sf_arb(j: int, size: int, r: arb) -> arb:
    """Pr[Bin(size, r) >= j] as a ball: the regularized incomplete beta I_r(j, size − j + 1)."""
    if j <= 0:
        return arb(1)
    if j > size:
        return arb(0)
    return r.beta_lower(arb(j), arb(size - j + 1), 1)


class CountPair:
    """The count pair of the module docstring: V + Bin(N, r), V ~ Bern(a1) (P) or Bern(a0) (Q).

    ``a1``, ``a0``, ``r`` are given as exact decimal strings or floats (converted exactly to balls)
    or as arb balls, so callers can pass e^ε0/(e^ε0 + 1) without rounding it first."""

    def __init__(self, a1: arb, a0: arb, r: arb, others: int) -> None:
        self.a1, self.a0, self.r = a1, a0, r
        self.others = check_integer("others", others, minimum=0)

    def _delta_arb(self, epsilon: float) -> arb:
        big = arb(epsilon).exp()
        a1, a0, r, size = self.a1, self.a0, self.r, self.others
        if a1 < a0:  # mirror K -> N + 1 - K
            a1, a0, r = 1 - a1, 1 - a0, 1 - r
        elif not a1 > a0:
            if a1 == a0:
                return arb(0)
            raise NumericalFailure("count pair: cannot order a1 and a0 at this precision")
        slope = a1 - big * a0
        if not slope > 0:
            # δ = slope·s(t−1) − (E − 1)·S(t) <= max(slope, 0) (exactly 0 when slope <= 0): a ball
            # around [0, slope⁺] encloses δ even where the sign is undecided (ε = the largest loss)
            return slope.nonnegative_part()
        u_star = arb(1) if epsilon == 0 else (big * (1 - a0) - (1 - a1)) / slope  # exactly 1 at ε = 0
        x = u_star * r * (size + 1) / (1 - r + u_star * r)
        # t = ⌊x⌋ + 1. Where the ball x straddles an integer, each candidate t gives P(K >= t) − E·Q(K >= t)
        # <= δ with equality at the true one, so the union of the candidates' balls encloses δ.
        low, high = (int(end.floor().unique_fmpz()) + 1 for end in (arb(x.lower()), arb(x.upper())))
        if high - low > 2:
            raise NumericalFailure(f"count pair: threshold {x} is too wide to place")
        values = [
            slope * binomial_pmf_arb(t - 1, size, r) - (big - 1) * binomial_sf_arb(t, size, r)
            for t in range(max(0, low), min(high, size + 1) + 1)
        ]
        out = values[0]
        for value in values[1:]:
            out = out.union(value)
        return out

    def delta(self, epsilon: float) -> Bracket:
        """δ(ε) = H_{e^ε}(P‖Q) for ε >= 0 as a rigorous bracket (clipped to [0, 1])."""
        eps = check_nonnegative("epsilon", epsilon)
        with with_precision(_PRECISION_BITS):
            ball = self._delta_arb(eps)
        return Bracket(max(0.0, arb_bound(ball, Side.LOWER)), min(1.0, arb_bound(ball, Side.UPPER)))

    def epsilon_lower(self, delta: float, ceiling: float) -> float:
        """A LOWER bound on ε(δ) = inf{ε >= 0 : δ(ε) <= δ}: the largest point of a bisection on
        [0, ``ceiling``] where the LOWER end of δ's bracket still exceeds δ (0 if none does)."""
        target = check_open_unit("delta", delta)
        if not self.delta(0.0).lower > target:
            return 0.0
        lo, hi = 0.0, float(ceiling)
        while hi - lo > 1e-12 * max(hi, 1e-300) and hi - lo > 1e-15:
            mid = 0.5 * (lo + hi)
            if self.delta(mid).lower > target:
                lo = mid
            else:
                hi = mid
        return lo



def rr_count_pair(epsilon0: float, k: int, users: int) -> CountPair:
    """The count pair of shuffled k-ary randomized response on X1 = (1, 0, …, 0) vs X0 = (0, …, 0)
    (:mod:`verifier.shuffle.count`): reports equal to symbol 1, V ~ Bern(e^ε0/Z) vs Bern(1/Z) plus
    Bin(n − 1, 1/Z) from the others, Z = e^ε0 + k − 1."""
    with with_precision(_PRECISION_BITS):
        big = arb(check_positive("epsilon0", epsilon0)).exp()
        z = big + (check_integer("k", k, minimum=2) - 1)
        return CountPair(big / z, 1 / z, 1 / z, check_integer("users", users, minimum=1) - 1)
