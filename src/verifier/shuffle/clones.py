"""Rigorous UPPER bounds for the shuffle model from Feldman, McMillan & Talwar, "Hiding among the
clones: a simple and nearly optimal analysis of privacy amplification by shuffling" (FOCS 2021,
arXiv:2012.12803).

Setting: n users, each applying an ε0-DP local randomizer (possibly chosen adaptively), the outputs
released in uniformly random order; neighbours are replace-one. The local randomizer's ε0 is read
off the scheme's pair as its largest privacy loss (:func:`local_epsilon0`): a pair that dominates
every pair of the randomizer's output laws has δ(ε0) = 0 for each of them.

- **The clone reduction** (FMT Thm 3.2; their Appendix E computes it numerically): for every pair
  of neighbouring datasets the shuffled outputs are a post-processing of the pair
  P = (A + Δ, C − A + 1 − Δ), Q = (A + 1 − Δ, C − A + Δ), with C ~ Bin(n − 1, e^{−ε0}),
  A ~ Bin(C, 1/2) and Δ ~ Bern(e^{ε0}/(e^{ε0} + 1)). Given C = c the pair is the count pair of
  :mod:`verifier.shuffle.count` with (a1, a0, r, N) = (e^{ε0}/(e^{ε0} + 1), 1/(e^{ε0} + 1), 1/2, c), and
  C is observed with the same law under P and Q, so δ(ε) = Σ_c Pr[C = c]·δ_c(ε) (proofs/shuffle_clones.py).
  verifier evaluates that sum in ball arithmetic: the terms with c in a bulk window are marched
  exactly (recurrences of Bin(c, 1/2)'s pmf and tail in c, starting from arb's incomplete beta),
  and the mass of C outside the window (an incomplete beta too) is added whole (δ_c <= 1). The pair
  is symmetric (swapping the coordinates exchanges P and Q), so both directions get the same bound,
  and δ(ε) = 0 for ε >= ε0 (every likelihood ratio lies in [e^{−ε0}, e^{ε0}]).
- **The closed form** (FMT Thm 3.1): for δ ∈ (0, 1) with ε0 <= ln(n/(16 ln(2/δ))), the shuffle is
  (ε, δ)-DP with ε = ln(1 + (e^{ε0} − 1)/(e^{ε0} + 1)·(8√(e^{ε0} ln(4/δ))/√n + 8e^{ε0}/n)) as the theorem
  is quoted (Liew et al. Eq. (10); OpenDP). FMT's own reference implementation
  (apple/ml-shuffling-amplification, ``closedformanalysis``) checks ε0 <= ln(n/(16 ln(4/δ))) (the
  maintainers' issue #1: the paper's ln(2/δ) is a typo) and evaluates the larger factor
  (1 − e^{−ε0})/(1 + e^{−ε0 − ε1}), ε1 = ln(1 + 8√(e^{ε0} ln(4/δ))/√n + 8e^{ε0}/n). verifier takes the
  stricter condition and the larger value, so its closed form holds under either reading
  (:func:`fmt_closed_form`); :func:`fmt_closed_form_printed` is the quoted statement alone, labelled
  a published formula.
"""

from __future__ import annotations

import enum
import functools
import math
from collections.abc import Callable

import numpy as np
from flint import arb

from verifier._directed import arb_bound, with_precision
from verifier._types import Side
from verifier._validation import check_integer, check_nonnegative, check_open_unit, check_positive
from verifier.analytic._search import smallest_passing
from verifier.errors import NotApplicable, NumericalFailure
from verifier.shuffle.count import binomial_pmf_arb, binomial_sf_arb

__all__ = [
    "CLONES_CITATION",
    "CloneWeight",
    "clone_weight",
    "distance_pieces",
    "CLOSED_FORM_CITATION",
    "local_epsilon0",
    "clone_delta_upper",
    "clone_delta_ball",
    "clone_delta_piece_float",
    "clone_delta_float",
    "clone_epsilon_float",
    "clone_epsilon_upper",
    "accepted_proposal",
    "clone_epsilon_by_size",
    "fmt_closed_form",
    "fmt_closed_form_printed",
    "closed_form_condition",
]

CLONES_CITATION = "Feldman, McMillan & Talwar 2021, Thm 3.2 (clone reduction), its pair's hockey-stick divergence in ball arithmetic: UPPER"
CLOSED_FORM_CITATION = (
    "Feldman, McMillan & Talwar 2021, Thm 3.1 (closed form; the larger of the quoted statement and the reference "
    "implementation's expression, under the stricter condition eps0 <= ln(n/(16 ln(4/delta)))): UPPER"
)

_PRECISION_BITS = 256
#: Half-width of the window of C marched exactly, in standard deviations (the rest is added whole).
_WINDOW_SD = 13.0


def local_epsilon0(pair: object) -> float | None:
    """ε0 of the local randomizer a pair dominates (its largest privacy loss, both directions), or
    None when it is not pure DP (Gaussian, δ0 > 0) or not known in closed form."""
    from verifier.pairs import ApproxDP, Laplace, RandomizedResponse
    from verifier.pairs.finite import DiscretePair

    if isinstance(pair, RandomizedResponse):
        return pair.epsilon0
    if isinstance(pair, ApproxDP):
        return pair.epsilon0 if pair.delta0 == 0 else None
    if isinstance(pair, Laplace):
        return pair.sensitivity / pair.scale
    if isinstance(pair, DiscretePair):
        p, q = pair._masses()
        if np.any((p > 0) != (q > 0)):
            return None
        keep = p > 0
        return float(np.max(np.abs(np.log(p[keep]) - np.log(q[keep])))) if keep.any() else None
    return None


class CloneWeight(enum.Enum):
    """The share w of every other user's report law that is a clone of the changed user's: the clone
    reduction needs only that the changed user's two laws are ε-indistinguishable (ε the loss used in
    the count pair) and R(x_i) >= w·(R(x) + R(x'))/2 pointwise for every other input x_i
    (proofs/shuffle_coupling.py, step 2); then C ~ Bin(n − 1, w). ANY: w = e^{−ε0}, every ε0-DP
    randomizer (FMT Thm 3.2). TAILED: w = 2/(e^{ε0} + 1), the infimum of that ratio for k-ary
    randomized response, any k. DISTANCE: the Laplace mechanism, whose changed user's inputs at
    distance d have loss l = d/b and share 2e^{−ε0}/(1 + e^{−l}) (tending to e^{−ε0} as d → 0): the
    bound is the largest over the ranges [l_i, l_{i+1}] of (0, ε0] (steps of ε0/8 up to 7ε0/8, then
    l_i = ε0(1 − 2^{−i}) up to i = 7, and ε0) of the clone bound at loss l_{i+1} with the share at l_i, since the clone bound grows with the
    loss and falls with the share (proofs/shuffle_binary.py derives both shares and the monotonicity)."""

    ANY = "e^-eps0"
    TAILED = "2/(e^eps0 + 1)"
    DISTANCE = "2e^-eps0/(1 + e^-l) at the changed inputs' loss l"

    def pieces(self, epsilon0: float) -> list[tuple[float, arb, float]]:
        """[(loss of the changed user's pair, share w as a ball, w in float64 for the guides)]."""
        if self is CloneWeight.ANY:
            return [(epsilon0, (-arb(epsilon0)).exp(), math.exp(-epsilon0))]
        if self is CloneWeight.TAILED:
            return [(epsilon0, 2 / (arb(epsilon0).exp() + 1), 2 / (math.exp(epsilon0) + 1))]
        return distance_pieces(epsilon0, [j / 8 for j in range(8)] + [1 - 2.0**-i for i in range(4, 8)] + [1.0])


def distance_pieces(epsilon0: float, fractions: list[float]) -> list[tuple[float, arb, float]]:
    """[(loss l_{i+1}, share at l_i as a ball, as a float)] for the ranges [l_i, l_{i+1}] of the
    Laplace changed inputs' loss, l_i = ε0·``fractions[i]`` (increasing, from 0 to 1), the top range
    first (it is usually the largest, and checks stop at the first excess): :class:`CloneWeight`
    DISTANCE."""
    ends = [epsilon0 * f for f in fractions]
    pieces = [(hi, 2 * (-arb(epsilon0)).exp() / (1 + (-arb(lo)).exp()), 2 * math.exp(-epsilon0) / (1 + math.exp(-lo)))
              for lo, hi in zip(ends, ends[1:])]
    return pieces[::-1]


def clone_weight(pair: object) -> CloneWeight:
    """TAILED for randomized response (any k), DISTANCE for the Laplace mechanism, whose clone shares
    are proven larger; ANY for every other pair (an ``approx_dp`` pair stands for every ε0-DP
    randomizer)."""
    from verifier.pairs import Laplace, RandomizedResponse

    if isinstance(pair, RandomizedResponse):
        return CloneWeight.TAILED
    return CloneWeight.DISTANCE if isinstance(pair, Laplace) else CloneWeight.ANY


def _window(others: int, q: float) -> tuple[int, int]:
    mean = others * q
    sd = math.sqrt(others * q * (1 - q))
    return max(0, int(math.floor(mean - _WINDOW_SD * sd)) - 1), min(others, int(math.ceil(mean + _WINDOW_SD * sd)) + 1)


def clone_delta_ball(epsilon0: float, users: int, epsilon: float, share: arb, share_float: float) -> arb:
    """Σ_c Pr[C = c] δ_c(ε) + Pr[C outside the window], as a ball (module docstring), with
    C ~ Bin(n − 1, ``share``) and the changed user's pair of loss ε0 (:class:`CloneWeight`)."""
    others = users - 1
    big0, big = arb(epsilon0).exp(), arb(epsilon).exp()
    if not big < big0:  # every δ_c <= (e^ε0 − e^ε)⁺/(e^ε0 + 1): an enclosure of 0 when ε >= ε0
        return ((big0 - big) / (big0 + 1)).nonnegative_part()
    q = share
    lo, hi = _window(others, share_float)
    outside = binomial_sf_arb(hi + 1, others, q) + binomial_sf_arb(others - lo + 1, others, 1 - q)
    slope = (big0 - big) / (big0 + 1)  # a1 − E·a0 with a1 = e^ε0/(e^ε0+1), a0 = 1 − a1
    # t_c = ⌊κ(c + 1)⌋ + 1, κ ∈ [1/2, 1); exactly 1/2 at ε = 0, where κ(c + 1) is an integer for odd c
    kappa = arb(1) / 2 if epsilon == 0 else (big * big0 - 1) / ((big0 - 1) * (big + 1))
    half = arb(1) / 2

    def threshold(c: int) -> int:
        floor = (kappa * (c + 1)).floor()
        if not floor.is_exact():
            raise NumericalFailure(f"clone pair: threshold at c = {c} straddles an integer")
        return int(floor.unique_fmpz()) + 1

    c, t = lo, threshold(lo)
    pm = binomial_pmf_arb(t - 1, c, half)  # b_c(t − 1), pmf of Bin(c, 1/2)
    tail = binomial_sf_arb(t, c, half)  # B_c(t) = Pr[Bin(c, 1/2) >= t]
    weight = binomial_pmf_arb(c, others, q)
    odds = q / (1 - q)
    total = arb(0)
    while True:
        total += weight * (slope * pm - (big - 1) * tail)
        if c == hi:
            break
        # Bin(c + 1, 1/2) = Bin(c, 1/2) + Bern(1/2): B_{c+1}(t) = B_c(t) + b_c(t−1)/2,
        # b_{c+1}(t−1) = (b_c(t−1) + b_c(t−2))/2, b_c(t−2) = b_c(t−1)(t−1)/(c−t+2).
        before = pm * (t - 1) / (c - t + 2) if t >= 2 else arb(0)
        tail = tail + half * pm
        pm = half * (pm + before)
        weight = weight * (others - c) / (c + 1) * odds
        c += 1
        x = kappa * (c + 1)
        if x >= t:  # the threshold moves up by one: b_c(t) = b_c(t−1)(c−t+1)/t, B_c(t+1) = B_c(t) − b_c(t)
            pm = pm * (c - t + 1) / t
            tail = tail - pm
            t += 1
        elif not x < t:
            raise NumericalFailure(f"clone pair: threshold at c = {c} straddles an integer")
    return total + outside


@functools.lru_cache(maxsize=256)
def clone_delta_upper(epsilon0: float, users: int, epsilon: float, weight: CloneWeight = CloneWeight.ANY) -> float:
    """A rigorous UPPER bound on δ(ε) of n shuffled ε0-DP reports (either direction), from the
    clone reduction (module docstring) with clone share ``weight``; ε >= 0."""
    e0 = check_positive("epsilon0", epsilon0)
    n = check_integer("users", users, minimum=1)
    eps = check_nonnegative("epsilon", epsilon)
    with with_precision(_PRECISION_BITS):
        value = max(arb_bound(clone_delta_ball(loss, n, eps, ball, share), Side.UPPER) for loss, ball, share in weight.pieces(e0))
    return min(1.0, max(0.0, value))


def _fits_upper(epsilon0: float, users: int, epsilon: float, weight: CloneWeight, target: float) -> bool:
    """Whether every piece's UPPER bound on δ(ε) is <= ``target`` (:func:`clone_delta_upper` <= target,
    stopping at the first piece above it)."""
    with with_precision(_PRECISION_BITS):
        return all(arb_bound(clone_delta_ball(loss, users, epsilon, ball, share), Side.UPPER) <= target
                   for loss, ball, share in weight.pieces(epsilon0))


def clone_delta_float(epsilon0: float, users: int, epsilon: float, weight: CloneWeight = CloneWeight.ANY) -> float:
    """The same sum in float64 with scipy's binomial functions (no guarantee): used only to steer
    the search of :func:`clone_epsilon_upper`, whose answer is then checked in ball arithmetic."""
    return max(clone_delta_piece_float(loss, users, epsilon, share) for loss, _, share in weight.pieces(epsilon0))


def clone_delta_piece_float(epsilon0: float, users: int, epsilon: float, q: float) -> float:
    """:func:`clone_delta_ball` in float64 with scipy's binomial functions (no guarantee)."""
    from scipy.stats import binom

    others = users - 1
    big0, big = math.exp(epsilon0), math.exp(epsilon)
    if big >= big0:
        return 0.0
    lo, hi = _window(others, q)
    c = np.arange(lo, hi + 1)
    kappa = (big * big0 - 1) / ((big0 - 1) * (big + 1))
    t = np.floor(kappa * (c + 1)) + 1
    per_c = (big0 - big) / (big0 + 1) * binom.pmf(t - 1, c, 0.5) - (big - 1) * binom.sf(t - 1, c, 0.5)
    return float(np.sum(binom.pmf(c, others, q) * np.maximum(per_c, 0.0)))


def clone_epsilon_float(epsilon0: float, users: int, delta: float, steps: int = 60, weight: CloneWeight = CloneWeight.ANY) -> float:
    """ε(δ) of the clone pair by ``steps`` bisection steps on :func:`clone_delta_float` (no
    guarantee; a proposal). ε0 passes (every piece's sum is 0 from ε0 on)."""
    pieces = weight.pieces(epsilon0)

    def fits(eps: float) -> bool:  # every piece at or below δ (stops at the first that is not)
        return all(clone_delta_piece_float(loss, users, eps, share) <= delta for loss, _, share in pieces)

    return smallest_passing(fits, 0.0, epsilon0, tolerance=0.0, steps=steps)[1]


@functools.lru_cache(maxsize=256)
def clone_epsilon_upper(epsilon0: float, users: int, delta: float, weight: CloneWeight = CloneWeight.ANY) -> float:
    """A rigorous UPPER bound on ε(δ) from the clone reduction: a float bisection proposes ε, which
    is accepted only once :func:`clone_delta_upper` (ball arithmetic) is <= δ there; ε0 always
    qualifies (δ(ε0) = 0)."""
    e0 = check_positive("epsilon0", epsilon0)
    n = check_integer("users", users, minimum=1)
    target = check_open_unit("delta", delta)
    candidate = clone_epsilon_float(e0, n, target * (1 - 1e-6), weight=weight)
    return accepted_proposal(lambda eps: _fits_upper(e0, n, eps, weight, target), candidate, e0, attempts=40, step=1e-6)


def accepted_proposal(fits: Callable[[float], bool], candidate: float, ceiling: float, attempts: int, step: float) -> float:
    """The first ε of ``candidate``, raised each time by max(1e-9, ``step``·ε)·2^attempt (never above
    ``ceiling``), where the rigorous check ``fits`` (δ(ε) <= δ in ball arithmetic) holds, within
    ``attempts`` tries; else ``ceiling``, which qualifies without a check (δ(ε0) = 0): a float proposal
    widened until the ball check accepts it."""
    for attempt in range(attempts):
        if candidate >= ceiling:
            return ceiling
        if fits(candidate):
            return candidate
        candidate = min(ceiling, candidate + max(1e-9, step * candidate) * 2.0**attempt)
    return ceiling


def clone_epsilon_by_size(epsilon0: float, sizes: list[int], delta: float, anchors: int = 16) -> dict[int, float]:
    """UPPER bounds on ε(δ) of the shuffle of k ε0-DP reports for every k in ``sizes``, from
    :func:`clone_epsilon_upper` at up to ``anchors`` sizes: each k gets the value of the largest
    anchor <= k. Valid because the clone bound's δ(ε) is non-increasing in k: C ~ Bin(k − 1, e^{−ε0})
    grows stochastically with k, and δ_c is non-increasing in c (the pair for c + 1 is the pair for
    c post-processed by adding a fair coin to one coordinate, the same map under P and Q)."""
    ordered = sorted(set(sizes))
    picks = sorted({ordered[round(i * (len(ordered) - 1) / max(anchors - 1, 1))] for i in range(min(anchors, len(ordered)))})
    values = {a: clone_epsilon_upper(epsilon0, a, delta) for a in picks}
    out = {}
    for k in ordered:
        out[k] = values[max(a for a in picks if a <= k)]
    return out


def closed_form_condition(epsilon0: float, users: int, delta: float) -> str | None:
    """None when FMT Thm 3.1 applies (ε0 <= ln(n/(16 ln(4/δ))), the stricter reading), else the
    condition named with its values."""
    e0 = check_positive("epsilon0", epsilon0)
    n = check_integer("users", users, minimum=1)
    d = check_open_unit("delta", delta)
    with with_precision(_PRECISION_BITS):
        bound = (arb(n) / (16 * (arb(4) / arb(d)).log())).log()
        holds = bool(arb(e0) <= bound)
    if holds:
        return None
    return (
        f"FMT Thm 3.1 needs eps0 <= ln(n/(16 ln(4/delta))) = {arb_bound(bound, Side.UPPER):.6g} "
        f"(n = {n}, delta = {d:g}); eps0 = {e0:g}"
    )


def _closed_form_arb(e0: arb, n: int, d: float, printed: bool) -> arb:
    big0 = e0.exp()
    inner = 8 * (big0 * (arb(4) / arb(d)).log()).sqrt() / arb(n).sqrt() + 8 * big0 / n
    if printed:
        factor = (big0 - 1) / (big0 + 1)
    else:
        factor = (1 - (-e0).exp()) / (1 + (-e0 - (1 + inner).log()).exp())
    return (1 + factor * inner).log()


def fmt_closed_form(epsilon0: float, users: int, delta: float) -> float:
    """UPPER bound on ε(δ) from FMT Thm 3.1 (module docstring: the larger of the two readings,
    rounded up); NotApplicable, naming the condition, outside it."""
    issue = closed_form_condition(epsilon0, users, delta)
    if issue:
        raise NotApplicable(issue)
    with with_precision(_PRECISION_BITS):
        values = [_closed_form_arb(arb(epsilon0), users, delta, printed) for printed in (True, False)]
    return max(arb_bound(v, Side.UPPER) for v in values)


def fmt_closed_form_printed(epsilon0: float, users: int, delta: float) -> float:
    """FMT Thm 3.1 as quoted (factor (e^ε0 − 1)/(e^ε0 + 1)), to nearest; a published formula,
    evaluated whatever the condition (callers report :func:`closed_form_condition` beside it)."""
    e0 = check_positive("epsilon0", epsilon0)
    with with_precision(_PRECISION_BITS):
        return float(_closed_form_arb(arb(e0), check_integer("users", users, minimum=1), check_open_unit("delta", delta), True).mid())
