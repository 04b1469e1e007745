"""Issue 38, Done-when 1 at n = 10^5 and 10^6: shuffled binary randomized response beyond the exact scan
(verifier.shuffle.ranges). References are independent of the code under test: count laws convolved in
mpmath (every background, both orders), the exhaustive scan of verifier.shuffle.binary, and scipy's
binomial pmf with a root finder."""

import math

import mpmath
import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import binom

from neyman_pearson import most_powerful_tpr

from verifier.certify.claim import parse_claim
from verifier.certify.verdict import Verdict, certify
from verifier.errors import NotApplicable
from verifier.shuffle import ranges
from verifier.shuffle.binary import BinaryShuffle
from verifier.shuffle.ranges import PRE_SCAN, RANGE_LIMIT, BinaryRanges, binary_ranges
from verifier.shuffle.worst import Candidate

MPMATH_DPS = 40  # working precision of this module's tests (tests/conftest.py)


def _background_deltas(n: int, e0: float, eps: float) -> dict[tuple[int, int], mpmath.mpf]:
    """H_{e^ε}(P_m‖Q_m) (order 0) and H_{e^ε}(Q_m‖P_m) (order 1) for every background m, in mpmath:
    the count law of m ones and n − 1 − m zeros by direct convolution of the users' Bernoulli laws."""
    p = mpmath.e**e0 / (mpmath.e**e0 + 1)
    big = mpmath.e**eps
    out = {}
    for m in range(n):
        law = [mpmath.mpf(1)]
        for bit in [1] * m + [0] * (n - 1 - m):
            one = p if bit else 1 - p
            law = [(law[j] if j < len(law) else 0) * (1 - one) + (law[j - 1] if j else 0) * one for j in range(len(law) + 1)]
        first = [p * (law[j - 1] if j else 0) + (1 - p) * (law[j] if j < len(law) else 0) for j in range(n + 1)]
        second = [(1 - p) * (law[j - 1] if j else 0) + p * (law[j] if j < len(law) else 0) for j in range(n + 1)]
        out[m, 0] = sum(max(mpmath.mpf(0), a - big * b) for a, b in zip(first, second))
        out[m, 1] = sum(max(mpmath.mpf(0), b - big * a) for a, b in zip(first, second))
    return out


def _violations(n: int, e0: float, eps: float, bucket: int) -> list[tuple[int, int, int]]:
    """The (first, last, m) where some order's exact δ exceeds the range's UPPER bound."""
    exact = _background_deltas(n, e0, eps)
    scan = BinaryRanges(e0, n)
    bad = []
    for first in range(n):
        for last in range(first, n):
            bound = scan.range_upper(first, last, eps, bucket)
            bad += [(first, last, m) for m in range(first, last + 1) for order in (0, 1) if exact[m, order] > bound]
    return bad


@pytest.mark.parametrize("n,e0,eps,bucket", [(9, 1.0, 0.0, 1), (12, 2.0, 0.3, 2), (12, 0.5, 0.05, 3)])
def test_range_bound_is_above_every_background_of_the_range(n, e0, eps, bucket):
    """The range bound (proofs/shuffle_ranges.py) holds for every range [a, b] of backgrounds, every m in
    it and both orders against the mpmath values. Catches a share above 2/(e^ε0 + 1), a shared part with
    more than a ones or n − 1 − b zeros, buckets priced at their right end, the mutants below."""
    assert _violations(n, e0, eps, bucket) == []


def test_mutant_one_order_only_is_refuted(monkeypatch):
    """Mutant: a range bound over one order of the hockey stick only (the victim's 1 -> 0) misses the
    other order's backgrounds."""
    honest = ranges.count_candidates

    def one_order(*args, **kwargs) -> list[Candidate]:
        return honest(*args, **kwargs)[:1]

    monkeypatch.setattr(ranges, "count_candidates", one_order)
    assert _violations(9, 1.0, 0.2, 1)


def test_mutant_coins_of_one_background_only_is_refuted(monkeypatch):
    """Mutant: the number of coins K taken from the decomposition of one background of the range (the
    middle one, its free ones paired with free zeros: a (one, zero) pair reports two coins with
    probability 4p(1 − p), else exactly one 1), not the law every background shares (each free user a
    coin with probability 2(1 − p)): more coins, a bound below the range's first background."""

    def paired(self, width):
        p = math.exp(self.epsilon0) / (1 + math.exp(self.epsilon0))
        pairs = width // 2
        law = np.zeros(width + 1)
        pair_law = binom.pmf(np.arange(pairs + 1), pairs, 4 * p * (1 - p))
        single_law = binom.pmf(np.arange(width - 2 * pairs + 1), width - 2 * pairs, 2 * (1 - p))
        for j, mass in enumerate(pair_law):
            law[2 * j:2 * j + len(single_law)] += mass * single_law
        return 0, law, 1e-12

    monkeypatch.setattr(BinaryRanges, "_coin_counts", paired)
    assert _violations(12, 1.0, 0.2, 1)


def test_mutant_all_zero_background_only_is_refuted(monkeypatch):
    """Mutant: the exactly computed backgrounds alone (no ranges) with only the all-zero one computed.
    At n = 50, ε0 = 1, ε = 0 the worst background has m = 32 (or its mirror) ones; the mpmath maximum
    over backgrounds lies in the honest bracket and above the mutant's."""
    exact = _background_deltas(50, 1.0, 0.0)
    worst = max(exact.values())
    found = BinaryRanges(1.0, 50, pre_scan=1).delta(0.0)
    assert found.lower <= float(worst) <= found.upper and found.upper - found.lower <= 1e-12
    monkeypatch.setattr(BinaryRanges, "_cover", lambda self, big, threshold: (0.0, []))
    assert BinaryRanges(1.0, 50, pre_scan=1).delta(0.0).upper < float(worst)


@pytest.mark.parametrize("e0,n", [(1.0, 3000), (4.0, 2500)])
def test_agrees_with_the_exhaustive_scan(e0, n):
    """Against verifier.shuffle.binary's scan of every background (n <= 15000): δ(ε), ε(δ) and TPR at
    FPR brackets overlap it and are at most 1e-6 wide relative; the ranges did the work (backgrounds
    PRE_SCAN … n/2 were not all computed exactly)."""
    scan, found = BinaryShuffle(e0, n), BinaryRanges(e0, n)
    for delta in (1e-6, 1e-3):
        a, b = scan.epsilon(delta), found.epsilon(delta)
        assert a.lower <= b.upper and b.lower <= a.upper
        assert b.upper - b.lower <= 1e-6 * b.upper
    eps = 0.5 * scan.epsilon(1e-6).upper
    a, b = scan.delta(eps), found.delta(eps)
    assert a.lower <= b.upper and b.lower <= a.upper and b.upper - b.lower <= 1e-6 * b.upper
    a, b = scan.tpr(1e-3), found.tpr(1e-3)
    assert a.lower <= b.upper and b.lower <= a.upper and b.upper - b.lower <= 1e-6
    assert len(found._exact) < n // 4


def _scipy_epsilon(n: int, e0: float, delta: float, backgrounds) -> float:
    """Independent float64 reference: the largest ε_m(δ) over the given backgrounds and both orders
    (scipy's binomial pmf on ±12 standard deviations, brentq on Σ(P − e^ε Q)_+)."""
    p = math.exp(e0) / (1 + math.exp(e0))

    def window(size, rho):
        sd = math.sqrt(size * rho * (1 - rho))
        k = np.arange(max(0, math.floor(size * rho - 12 * sd - 2)), min(size, math.ceil(size * rho + 12 * sd + 2)) + 1)
        return binom.pmf(k, size, rho)

    best = 0.0
    for m in backgrounds:
        s = np.convolve(window(m, p), window(n - 1 - m, 1 - p))
        big_p = p * np.concatenate(([0], s)) + (1 - p) * np.concatenate((s, [0]))
        big_q = (1 - p) * np.concatenate(([0], s)) + p * np.concatenate((s, [0]))
        for a, b in ((big_p, big_q), (big_q, big_p)):
            best = max(best, brentq(lambda e: np.maximum(a - math.exp(e) * b, 0).sum() - delta, 0.0, e0, xtol=1e-15, rtol=1e-14))
    return best


@pytest.mark.parametrize("e0", [0.5, 1.0, 2.0, 4.0])
def test_done_when_1_at_n_1e5(e0):
    """Done-when 1 at n = 10^5, δ = 1e-6: the bracket is <= 1e-6 wide relative and holds the scipy
    maximum over the first 64 backgrounds (a LOWER reference: the worst case is at least that) within
    1e-9."""
    n = 100_000
    found = binary_ranges(e0, n).epsilon(1e-6)
    reference = _scipy_epsilon(n, e0, 1e-6, range(64))
    assert found.upper - found.lower <= 1e-6 * found.upper
    assert reference * (1 - 1e-9) <= found.upper and found.lower <= reference * (1 + 1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("n", [100_000, 1_000_000])
@pytest.mark.parametrize("e0", [0.5, 1.0, 2.0, 4.0])
def test_claims_a_tenth_of_a_percent_away_are_decided(e0, n):
    """Done-when 1: certify decides the claims 0.1% either side of the scipy reference at n = 10^5 and
    10^6 (CERTIFIED above, VIOLATED below; 7–23 s each, mostly the clone methods run first)."""
    reference = _scipy_epsilon(n, e0, 1e-6, range(64))
    assert _verdict(e0, n, reference * 1.001) is Verdict.CERTIFIED
    assert _verdict(e0, n, reference * 0.999) is Verdict.VIOLATED


def _verdict(e0: float, n: int, eps: float) -> Verdict:
    return certify(parse_claim({"mechanism": {"name": "rr", "epsilon0": e0}, "scheme": {"name": "shuffle", "users": n},
                                "neighboring": "replace_one", "epsilon": eps, "delta": 1e-6})).verdict


@pytest.mark.slow
@pytest.mark.parametrize("e0", [0.5, 1.0, 2.0, 4.0])
def test_done_when_1_at_n_1e6(e0):
    """Done-when 1 at n = 10^6 (0.5–9 s of CPU each): as at 10^5."""
    n = 1_000_000
    found = binary_ranges(e0, n).epsilon(1e-6)
    reference = _scipy_epsilon(n, e0, 1e-6, range(64))
    assert found.upper - found.lower <= 1e-6 * found.upper
    assert reference * (1 - 1e-9) <= found.upper and found.lower <= reference * (1 + 1e-9)


def test_delta_near_zero_settles_and_a_flat_profile_declines():
    """δ(ε) far beyond ε(1e-6) (n = 20000, ε0 = 1, ε = 0.1; scipy gives 6.1e-43 for the all-zero
    background): the bracket is [0, <= 1e-15] at once, from the exact backgrounds alone, instead of
    splitting the ranges down to single backgrounds. At ε = 0 the profile over backgrounds is nearly flat
    (δ(0) is 2p − 1 times the largest probability of the others' count, whose variance is the same for
    every m), so the ranges decline rather than compute every background."""
    scan = BinaryRanges(1.0, 20_000)
    found = scan.delta(0.1)
    assert found.lower == 0.0 and found.upper <= 1e-15
    assert len(scan._exact) == PRE_SCAN + 1
    with pytest.raises(NotApplicable, match="too flat"):
        scan.delta(0.0)


def _background_laws(n: int, e0: float) -> list[tuple[list, list]]:
    """(P_m, Q_m) of every background m in mpmath, from the binomial pmfs of the m ones and n − 1 − m zeros."""
    p = mpmath.e**e0 / (mpmath.e**e0 + 1)
    out = []
    for m in range(n):
        ones = [mpmath.binomial(m, j) * p**j * (1 - p) ** (m - j) for j in range(m + 1)]
        zeros = [mpmath.binomial(n - 1 - m, j) * (1 - p) ** j * p ** (n - 1 - m - j) for j in range(n - m)]
        law = [mpmath.fsum(ones[i] * zeros[j - i] for i in range(len(ones)) if 0 <= j - i < len(zeros)) for j in range(n)]
        shifted, kept = [mpmath.mpf(0)] + law, law + [mpmath.mpf(0)]
        out.append(([p * a + (1 - p) * b for a, b in zip(shifted, kept)], [(1 - p) * a + p * b for a, b in zip(shifted, kept)]))
    return out


@pytest.mark.parametrize("n,e0", [(21, 2.5), (21, 1.0)])
def test_tpr_through_ranges_brackets_the_neyman_pearson_worst_case(n, e0):
    """With every background but m = 0 and m = ⌊(n − 1)/2⌋ left to the ranges (pre_scan = 1), TPR at FPR α
    brackets the largest most-powerful-test TPR over every background and both orders (mpmath). At
    n = 21, ε0 = 2.5, α = 1e-3 the plan once priced a range with K's buckets ~1.4e9 wide (the profile
    falls faster than its chord, so the predicted excess hit its floor) and allocated 10 GiB for the
    bucket's coin law: a bucket wider than K's window now bounds as the window (the same value).
    Catches a range check that omits the cost E·α of TPR <= δ(ln E) + E·α."""
    laws = _background_laws(n, e0)
    scan = BinaryRanges(e0, n, pre_scan=1)
    for alpha in (1e-3, 0.05):
        truth = max(max(most_powerful_tpr(p, q, alpha), most_powerful_tpr(q, p, alpha)) for p, q in laws)
        found = scan.tpr(alpha)
        assert found.lower <= truth * (1 + 1e-12) and truth <= found.upper * (1 + 1e-12)
        assert found.upper - found.lower <= 1e-6 * truth


def test_declines_beyond_its_limit_and_bad_input():
    """Beyond RANGE_LIMIT users the ranges decline (NotApplicable, naming the limit); n within the exact
    scan goes to the scan; ε0 <= 0, n < 2 and a range outside 0 … n − 1 are refused."""
    with pytest.raises(NotApplicable, match=str(RANGE_LIMIT)):
        BinaryRanges(1.0, RANGE_LIMIT + 1)
    with pytest.raises(NotApplicable, match="exact scan"):
        binary_ranges(1.0, 1000)
    with pytest.raises(ValueError, match="epsilon0"):
        BinaryRanges(-1.0, 100)
    with pytest.raises(ValueError, match="users"):
        BinaryRanges(1.0, 1)
    with pytest.raises(ValueError, match="range"):
        BinaryRanges(1.0, 10).range_upper(3, 10, 0.1)
