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
  each is widened by rel + 16u and the mass outside the windows (4τ) is carried along. δ(ε), ε(δ)
  and TPR at FPR then come from :class:`verifier.shuffle.worst.WorstCase` over the 2·(⌊(n − 1)/2⌋ + 1)
  candidates (the likelihood ratio is monotone in K, the background's pmf being log-concave, so
  each candidate's outcomes are listed from the top of K down, or from the bottom up).

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

from verifier._directed import with_precision
from verifier._validation import check_integer, check_positive
from verifier.errors import NotApplicable
from verifier.shuffle.worst import UNIT_ROUNDOFF, Candidate, WorstCase

__all__ = ["BINARY_CITATION", "SCAN_LIMIT", "BinaryShuffle", "binary_shuffle", "binomial_window", "convolve_windows", "count_candidates"]

BINARY_CITATION = (
    "shuffled binary randomized response: the exact worst case over every background (number of ones among "
    "the other n - 1 users) and both orders of the changed user's bit, in float64 with proven error bounds: EXACT"
)

#: The largest n scanned (the cost grows as n^2: about 5 s of CPU at this size).
SCAN_LIMIT = 15_000

_U = UNIT_ROUNDOFF
_TAU = 1e-30  # Chernoff mass allowed outside each side of a binomial window


def _chernoff_tail(size: int, rho: arb, rho_c: arb, k: int) -> arb:
    """exp(−N·KL(k/N‖ρ)) as a ball: Chernoff's bound on Pr[Bin(N, ρ) >= k] for k/N > ρ (and, with ρ and
    k/N mirrored, on the lower tail); ``rho_c`` = 1 − ρ, passed separately so that ρ near 1 keeps its
    relative precision."""
    a = arb(k) / size
    kl = a * (a / rho).log() + ((1 - a) * ((1 - a) / rho_c).log() if k < size else arb(0))
    return (-size * kl).exp()


def binomial_window(size: int, rho: arb, rho_c: arb, tau: float = _TAU, spread: float = 1.2,
                    growth: float = 1.5) -> tuple[int, npt.NDArray[np.float64], float]:
    """(offset, pmf of Bin(size, ρ) on offset … offset + len − 1 in float64, relative error bound);
    Chernoff's bound puts at most ``tau`` of the mass outside each side of the window; ``rho_c`` = 1 − ρ.
    The first window tried is ``spread`` times the Gaussian estimate, then ``growth``, ``growth``², … times
    wider (tight values give shorter windows for more Chernoff checks)."""
    if size == 0:
        return 0, np.ones(1), 0.0
    mean, sd = size * float(rho.mid()), math.sqrt(size * float(rho.mid()) * (1 - float(rho.mid())))
    half = max(1.0, spread * sd * math.sqrt(2 * math.log(1 / tau)))  # widened below until Chernoff's bound holds
    while True:
        lo, hi = max(0, math.floor(mean - half)), min(size, math.ceil(mean + half))
        fits_hi = hi == size or _chernoff_tail(size, rho, rho_c, hi + 1) < tau
        fits_lo = lo == 0 or _chernoff_tail(size, rho_c, rho, size - lo + 1) < tau
        if fits_hi and fits_lo:
            break
        half *= growth
    log_first = arb(size + 1).lgamma() - arb(lo + 1).lgamma() - arb(size - lo + 1).lgamma() + lo * rho.log() + (size - lo) * rho_c.log()
    first = float(log_first.exp().mid())
    odds = float((rho / rho_c).mid())
    j = np.arange(lo, hi, dtype=np.float64)
    ratios = (size - j) / (j + 1) * odds
    pmf = first * np.concatenate(([1.0], np.cumprod(ratios)))
    steps = hi - lo
    rel = math.expm1((4 * steps + 8) * math.log1p(_U)) * (1 + 1e-6)
    if not (np.all(np.isfinite(pmf)) and pmf.min() >= 1e-300):
        raise NotApplicable(f"the binomial window of Bin({size}, {float(rho.mid()):.3g}) leaves the binary64 range the exact scan "
                            "computes in (eps0 too large); the clone bound and the count pair answer here")
    return lo, pmf, rel


def _candidates(users: int, ones: int, p: arb, r: arb) -> list[Candidate]:
    """The two orders of P_m, Q_m (module docstring) on a window of K in float64, each mass within a
    relative ``widen`` of the exact convolution of the binomial windows, which lacks at most 4τ of the
    true mass."""
    _, a, rel_a = binomial_window(ones, p, r)
    _, b, rel_b = binomial_window(users - 1 - ones, r, p)
    s, rel = convolve_windows(a, rel_a, b, rel_b)
    return count_candidates(s, rel, 4 * _TAU, p, r, f"m = {ones}")


def convolve_windows(a: npt.NDArray[np.float64], rel_a: float, b: npt.NDArray[np.float64], rel_b: float) -> tuple[npt.NDArray[np.float64], float]:
    """The convolution of two nonnegative float64 arrays, each within a relative ``rel_a``, ``rel_b`` of
    exact ones, and its relative error bound: the float sum of L nonnegative products is within
    γ_L = L·u/(1 − L·u) of the exact one, whatever the order (L = the shorter length)."""
    terms = min(len(a), len(b))
    return np.convolve(a, b), rel_a + rel_b + rel_a * rel_b + terms * _U / (1 - terms * _U)


def count_candidates(s: npt.NDArray[np.float64], rel: float, outside: float, p: arb, r: arb, label: str) -> list[Candidate]:
    """The two orders of (Bern(p) + S, Bern(1 − p) + S) as candidates, S's pmf ``s`` (float64, within a
    relative ``rel`` of an exact array that lacks at most ``outside`` of S's mass): P(k) = p·s(k − 1) +
    (1 − p)·s(k), each mass within rel + 16u; the outcomes in order of decreasing P/Q (S log-concave)."""
    p_mid, r_mid = float(p.mid()), float(r.mid())
    prev = np.concatenate(([0.0], s))  # s(k − 1)
    here = np.concatenate((s, [0.0]))  # s(k)
    big_p, big_q = p_mid * prev + r_mid * here, r_mid * prev + p_mid * here
    widen = rel + 16 * _U
    # P/Q increases with K (log-concave background): the first order's outcomes from the top down
    return [Candidate(big_p[::-1], big_q[::-1], widen, outside, f"{label}, 1->0"),
            Candidate(big_q, big_p, widen, outside, f"{label}, 0->1")]


class BinaryShuffle(WorstCase):
    """The exact δ(ε), ε(δ) and TPR at FPR of n shuffled ε0-randomized-response bits, worst case over
    every dataset pair (:class:`verifier.shuffle.worst.WorstCase` over the half scan's candidates)."""

    def __init__(self, epsilon0: float, users: int) -> None:
        self.epsilon0 = check_positive("epsilon0", epsilon0)
        self.users = check_integer("users", users, minimum=2)
        if self.users > SCAN_LIMIT:
            raise NotApplicable(f"the exact scan of shuffled binary randomized response covers n <= {SCAN_LIMIT} users, got n = {self.users}")
        with with_precision(192):
            big0 = arb(self.epsilon0).exp()
            p, r = big0 / (big0 + 1), 1 / (big0 + 1)
            pairs = [c for m in range((self.users - 1) // 2 + 1) for c in _candidates(self.users, m, p, r)]
        super().__init__(pairs, "shuffled binary randomized response", self.epsilon0)


@functools.lru_cache(maxsize=1)  # one scan holds ~200 MB at n = 15000
def binary_shuffle(epsilon0: float, users: int) -> BinaryShuffle:
    """The scan for (ε0, n), cached: certify asks both directions and both quantities of one scheme."""
    return BinaryShuffle(epsilon0, users)
