"""Shuffled binary randomized response, exactly: the worst case over every pair of neighbouring
datasets, both orders, as a rigorous bracket whose ends meet (relative width ~1e-9).

Setting: n users, each reporting its bit truthfully with probability p = e^ε0/(e^ε0 + 1) (else the
flipped bit), the reports shuffled; replace-one neighbours change the victim's bit. The shuffled
multiset is the count K of reported ones, and the others' bits enter only through their number m of
ones (the shuffle hides the order), so for the pair victim = 1 / victim = 0

    P_m = Bern(p) + S_m,   Q_m = Bern(1 − p) + S_m,   S_m = Bin(m, p) + Bin(n − 1 − m, 1 − p),

and the shuffle model's δ(ε) is max over m ∈ {0, …, n − 1} of H_{e^ε}(P_m‖Q_m) and H_{e^ε}(Q_m‖P_m)
(the victim changing 1 → 0 or 0 → 1). Mirroring K ↦ n − K maps (Q_m, P_m) to (P_{n−1−m}, Q_{n−1−m})
(proofs/shuffle_binary.py), so the scan needs m <= (n − 1)/2 with both orders: half the backgrounds.
Neither end of the range decides alone: the all-zero background m = 0 is the worst at small δ in
every case tried, but not at n = 50, ε0 = 1, ε = 0 (m = 32 is worse) — the scan is exhaustive.

Evaluation (rigorous, float64 with proven relative error bounds, no ball arithmetic in the loop):

- Bin(N, ρ)'s pmf on a window around its mean wide enough that Chernoff's bound
  exp(−N·KL(k/N‖ρ)) (checked in arb) puts at most τ = 1e-30 of its mass outside each side (about
  ±14 standard deviations): the first value in arb, the
  rest by the ratio b(j + 1)/b(j) = (N − j)/(j + 1)·ρ/(1 − ρ) in float64 (cumulative product), each
  step at most 4 roundings, so the relative error after J steps is at most (1 + u)^(4J + 4) − 1.
- S_m's pmf: np.convolve of the two windows. Every term is nonnegative, so whatever the order of
  summation, the float result is within γ_L = L·u/(1 − L·u) (L terms) of the exact convolution of
  the windows, relatively; the true pmf adds the mass outside the windows (at most 2τ per side).
- P, Q from the pmf with p, 1 − p rounded to nearest: relative error at most rel + 3u (+ u² terms);
  each is widened by rel + 16u and the missing mass 4τ enters every hockey stick as an additive term
  (a lower bound subtracts e^ε·4τ, an upper bound adds 4τ).
- δ(ε): Σ_k (P_hi(k) − e^ε_lo·Q_lo(k))_+ plus its rounding error (bounded in :func:`_hockey`) is an
  UPPER bound, Σ_k (P_lo(k) − e^ε_hi·Q_hi(k))_+ minus it a LOWER bound, maximised over m and both orders.
- ε(δ): for each background and order, E*(δ) = max_t (A_t − δ)/B_t with A_t = P(K >= t),
  B_t = Q(K >= t), or the lower tails (δ(E) >= A_t − E·B_t for every event, with equality at the
  optimal threshold: the likelihood ratio of a Bernoulli plus a sum of independent Bernoullis is
  monotone in k, the pmf being log-concave), in float64 as a guide. Then E_hi = E*·(1 + η) is checked against the UPPER
  δ of every background and order, and E_lo = E*·(1 − η) against the LOWER δ of the worst one
  (η = 1e-10, multiplied by 100 until both checks pass); ε(δ) ∈ [ln E_lo, ln E_hi] rounded outward.

Cost: one convolution of two windows of ±14 standard deviations per background, n/2 backgrounds:
about 2 s of CPU at n = 10^4, 14 s at 3·10^4; beyond :data:`SCAN_LIMIT` users the method declines (NotApplicable)
and the bracket comes from the other shuffle methods.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import numpy.typing as npt
from flint import arb

from verifier._directed import arb_bound, down, up, with_precision
from verifier._types import Bracket, Side
from verifier._validation import check_integer, check_nonnegative, check_open_unit, check_positive
from verifier.errors import NotApplicable, NumericalFailure

__all__ = ["BINARY_CITATION", "SCAN_LIMIT", "BinaryShuffle", "binary_shuffle"]

BINARY_CITATION = (
    "shuffled binary randomized response: the exact worst case over every background (number of ones among "
    "the other n - 1 users) and both orders of the changed user's bit, in float64 with proven error bounds: EXACT"
)

#: The largest n scanned (the cost grows as n^2: about 5 s of CPU at this size).
SCAN_LIMIT = 15_000

_U = 2.0**-53  # unit roundoff of binary64
_TAU = 1e-30  # Chernoff mass allowed outside each side of a binomial window
_ETA = 1e-10  # first relative margin of the ε(δ) checks


def _chernoff_tail(size: int, rho: arb, k: int) -> arb:
    """exp(−N·KL(k/N‖ρ)) as a ball: Chernoff's bound on Pr[Bin(N, ρ) >= k] for k/N > ρ (and, with ρ and
    k/N mirrored, on the lower tail)."""
    a = arb(k) / size
    kl = a * (a / rho).log() + ((1 - a) * ((1 - a) / (1 - rho)).log() if k < size else arb(0))
    return (-size * kl).exp()


def _binomial_window(size: int, rho: arb) -> tuple[int, npt.NDArray[np.float64], float]:
    """(offset, pmf of Bin(size, ρ) on offset … offset + len − 1 in float64, relative error bound);
    Chernoff's bound puts at most τ of the mass outside each side of the window."""
    if size == 0:
        return 0, np.ones(1), 0.0
    mean, sd = size * float(rho.mid()), math.sqrt(size * float(rho.mid()) * (1 - float(rho.mid())))
    half = 1.2 * sd * math.sqrt(2 * math.log(1 / _TAU)) + 2
    while True:
        lo, hi = max(0, math.floor(mean - half)), min(size, math.ceil(mean + half))
        fits_hi = hi == size or _chernoff_tail(size, rho, hi + 1) < _TAU
        fits_lo = lo == 0 or _chernoff_tail(size, 1 - rho, size - lo + 1) < _TAU
        if fits_hi and fits_lo:
            break
        half *= 1.5
    log_first = arb(size + 1).lgamma() - arb(lo + 1).lgamma() - arb(size - lo + 1).lgamma() + lo * rho.log() + (size - lo) * (1 - rho).log()
    first = float(log_first.exp().mid())
    odds = float((rho / (1 - rho)).mid())
    j = np.arange(lo, hi, dtype=np.float64)
    ratios = (size - j) / (j + 1) * odds
    pmf = first * np.concatenate(([1.0], np.cumprod(ratios)))
    steps = hi - lo
    rel = math.expm1((4 * steps + 8) * math.log1p(_U)) * (1 + 1e-6)
    if not (np.all(np.isfinite(pmf)) and pmf.min() > 0):
        raise NumericalFailure(f"binomial window of Bin({size}, {float(rho.mid()):.6g}) left the float range")
    return lo, pmf, rel


class _Background:
    """P_m and Q_m (module docstring) on a window of k in float64: ``mid`` = (P, Q), each within a
    relative ``widen`` of the exact convolution of the binomial windows, which lacks at most
    ``outside`` of the true mass."""

    def __init__(self, users: int, ones: int, p: arb) -> None:
        off_a, a, rel_a = _binomial_window(ones, p)
        off_b, b, rel_b = _binomial_window(users - 1 - ones, 1 - p)
        s = np.convolve(a, b)
        terms = min(len(a), len(b))
        p_mid, r_mid = float(p.mid()), float((1 - p).mid())
        prev = np.concatenate(([0.0], s))  # s(k − 1)
        here = np.concatenate((s, [0.0]))  # s(k)
        self.offset = off_a + off_b  # index 0 of the arrays is K = offset
        self.mid = (p_mid * prev + r_mid * here, r_mid * prev + p_mid * here)
        self.widen = rel_a + rel_b + rel_a * rel_b + terms * _U / (1 - terms * _U) + 16 * _U
        self.outside = 4 * _TAU


def _hockey(first: npt.NDArray[np.float64], second: npt.NDArray[np.float64], big: float, widen: float, outside: float, side: Side) -> float:
    """A bound on Σ_k (first(k) − E·second(k))_+ on ``side``, where the exact arrays lie within a
    relative ``widen`` of the float ones and lack at most ``outside`` of their mass; ``big`` bounds E
    from below (UPPER) or above (LOWER). Rounding: each float term is off by at most
    u·|term| + 2u·E·second(k) (a product and a difference), in total at most u·(1 + 2E)·(1 + widen)
    since both arrays hold at most mass 1; the sum of K nonnegative terms by at most (K + 1)·u of it."""
    sign = 1.0 if side is Side.UPPER else -1.0
    terms = np.maximum(first * (1 + sign * widen) - big * (second * (1 - sign * widen)), 0.0)
    total = float(np.sum(terms))
    slack = 2 * _U * (1 + 2 * big) * (1 + widen)
    if side is Side.UPPER:
        return float(up(total * (1 + (len(terms) + 2) * _U) + slack + outside))
    return float(down(total * (1 - (len(terms) + 2) * _U) - slack - up(big * outside)))


def _e_star(first: npt.NDArray[np.float64], second: npt.NDArray[np.float64], delta: float) -> float:
    """max over thresholds t of (A_t − δ)/B_t, A and B the tails of ``first`` and ``second`` above t and
    below t (the likelihood ratio increases in k for H(P‖Q), decreases for H(Q‖P)): a float64 guide."""
    best = 0.0
    for a, b in ((first[::-1], second[::-1]), (first, second)):
        tail_a, tail_b = np.cumsum(a), np.cumsum(b)
        keep = tail_b > 0
        if keep.any():
            best = max(best, float(np.max((tail_a[keep] - delta) / tail_b[keep])))
    return best


class BinaryShuffle:
    """The exact δ(ε) and ε(δ) of n shuffled ε0-randomized-response bits, worst case over datasets."""

    def __init__(self, epsilon0: float, users: int) -> None:
        self.epsilon0 = check_positive("epsilon0", epsilon0)
        self.users = check_integer("users", users, minimum=2)
        if self.users > SCAN_LIMIT:
            raise NotApplicable(f"the exact scan of shuffled binary randomized response covers n <= {SCAN_LIMIT} users, got n = {self.users}")
        with with_precision(192):
            big0 = arb(self.epsilon0).exp()
            p = big0 / (big0 + 1)
            self.backgrounds = [_Background(self.users, m, p) for m in range((self.users - 1) // 2 + 1)]

    def _exp_bounds(self, epsilon: float) -> tuple[float, float]:
        with with_precision(128):
            ball = arb(epsilon).exp()
        return arb_bound(ball, Side.LOWER), arb_bound(ball, Side.UPPER)

    def _upper(self, big_lo: float) -> float:
        return max(_hockey(*pq, big_lo, bg.widen, bg.outside, Side.UPPER) for bg in self.backgrounds for pq in (bg.mid, bg.mid[::-1]))

    def _lower_at(self, index: int, order: int, big_hi: float) -> float:
        bg = self.backgrounds[index]
        return _hockey(*(bg.mid if order == 0 else bg.mid[::-1]), big_hi, bg.widen, bg.outside, Side.LOWER)

    def _lower(self, big_hi: float) -> tuple[float, int, int]:
        """(LOWER δ, background index, order) of the background and order with the largest LOWER δ."""
        return max((self._lower_at(i, o, big_hi), i, o) for i in range(len(self.backgrounds)) for o in (0, 1))

    def delta(self, epsilon: float) -> Bracket:
        """δ(ε), the worst case over every dataset pair, as a rigorous bracket (clipped to [0, 1])."""
        big_lo, big_hi = self._exp_bounds(check_nonnegative("epsilon", epsilon))
        return Bracket(max(0.0, self._lower(big_hi)[0]), min(1.0, self._upper(big_lo)))

    def worst_background(self, epsilon: float) -> tuple[int, str]:
        """(m, order) of a worst pair at ε: m ones among the others, order "1->0" for H(P_m‖Q_m) (the
        victim's bit 1 against 0) or "0->1"."""
        _, i, o = self._lower(self._exp_bounds(check_nonnegative("epsilon", epsilon))[1])
        return i, ("1->0", "0->1")[o]

    def epsilon(self, delta: float) -> Bracket:
        """ε(δ) = inf{ε >= 0 : δ(ε) <= δ}, worst case over every dataset pair, as a rigorous bracket."""
        target = check_open_unit("delta", delta)
        guides = [(_e_star(first, second, target), i, o) for i, bg in enumerate(self.backgrounds)
                  for o, (first, second) in enumerate((bg.mid, bg.mid[::-1]))]
        e_star, i, o = max(guides)
        eta = _ETA
        for _ in range(6):
            big_hi = max(1.0, e_star * (1 + eta))
            if self._upper(big_hi) <= target:
                break
            eta *= 100
        else:
            raise NumericalFailure(f"shuffled binary RR: no upper end of eps({target:g}) verified near {math.log(max(e_star, 1)):.6g}")
        eta = _ETA
        big_lo = 1.0
        for _ in range(6):
            candidate = e_star * (1 - eta)
            if candidate <= 1.0:
                break
            if self._lower_at(i, o, candidate) > target:
                big_lo = candidate
                break
            eta *= 100
        with with_precision(128):
            eps_hi = 0.0 if big_hi == 1.0 else arb_bound(arb(big_hi).log(), Side.UPPER)
            eps_lo = 0.0 if big_lo == 1.0 else max(0.0, arb_bound(arb(big_lo).log(), Side.LOWER))
        return Bracket(eps_lo, eps_hi)


    def tpr(self, fpr: float) -> Bracket:
        """The largest true-positive rate at false-positive rate α of a test between the two datasets of
        any neighbouring pair (the worst pair for the attacker), as a rigorous bracket.

        For each background and order the Neyman–Pearson test rejects on the tail where the likelihood
        ratio is largest (the upper tail of K for H(P‖Q), the lower for H(Q‖P); monotone, module
        docstring) and randomises at one point. LOWER: that test with its threshold t and weight γ
        chosen from UPPER bounds on the second law's tail and mass (plus the mass outside the window),
        so its size is <= α, and its power from LOWER bounds. UPPER: TPR(α) <= δ(ln E) + E·α for every
        E > 0 (proofs/tradeoff_conversion.py), at E = the float likelihood ratio where the test
        randomises, with δ's UPPER bound; the maximum over backgrounds and orders of each."""
        from verifier._validation import check_unit

        alpha = check_unit("fpr", fpr)
        lower, upper = 0.0, 0.0
        for bg in self.backgrounds:
            for first, second in (bg.mid, bg.mid[::-1]):
                ascending = first[0] * second[-1] <= first[-1] * second[0]  # the rejection tail is on the right
                a, b = (first[::-1], second[::-1]) if ascending else (first, second)
                widen = bg.widen
                tail_b_hi = np.cumsum(b) * (1 + widen) * (1 + (len(b) + 2) * _U) + bg.outside  # Q(reject first j + 1 points)
                tail_a_lo = np.cumsum(a) * (1 - widen) * (1 - (len(a) + 2) * _U)
                j = int(np.searchsorted(tail_b_hi, alpha, side="right"))  # points 0 … j − 1 fit whole
                taken_b = float(tail_b_hi[j - 1]) if j > 0 else 0.0
                taken_a = float(tail_a_lo[j - 1]) if j > 0 else 0.0
                if j < len(b):
                    b_hi = float(up(b[j] * (1 + widen) * (1 + 4 * _U)))
                    gamma = min(1.0, max(0.0, float(down((alpha - taken_b) / b_hi * (1 - 4 * _U))))) if b_hi > 0 else 0.0
                    power = taken_a + gamma * float(a[j]) * (1 - widen) * (1 - 8 * _U)
                    big = float(a[j] / b[j]) if b[j] > 0 else math.inf
                else:
                    power, big = taken_a, 0.0
                lower = max(lower, float(down(power)))
                if math.isfinite(big) and big > 0:
                    upper = max(upper, min(1.0, _hockey(first, second, big, widen, bg.outside, Side.UPPER) + float(up(big * alpha * (1 + 4 * _U)))))
                else:
                    upper = 1.0
        return Bracket(min(lower, upper), min(1.0, upper))


@functools.lru_cache(maxsize=2)
def binary_shuffle(epsilon0: float, users: int) -> BinaryShuffle:
    """The scan for (ε0, n), cached: certify asks both directions and both quantities of one scheme."""
    return BinaryShuffle(epsilon0, users)
