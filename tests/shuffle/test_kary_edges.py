"""Adversarial audit of shuffled k-ary randomized response's blanket UPPER bound and one-symbol LOWER
pairs (verifier.shuffle.blanket, verifier.shuffle.one_symbol) at the edges the brute force of
test_kary_blanket.py leaves out: k far above n (the unused symbols lumped into one coordinate, which
is sufficient: every user puts the same mass 1/Z on each of them), ε0 tiny and large, ε at ε0, δ from
1e-12 to 0.7, and n = 3000, where the blanket's buckets of N are wider than one. The references are
independent code: mpmath at 30 digits on the histogram law, and the one-symbol dataset's law as a
multinomial mixture in log-gamma form (proofs/shuffle_blanket.py, item 3)."""

import itertools
import math

import mpmath as mp
import numpy as np
import pytest
from kary_enumeration import convolve
from scipy.special import gammaln

from verifier.shuffle.blanket import BlanketBound
from verifier.shuffle.one_symbol import OneSymbolPair

_DPS = 30
#: The references' rounding at 30 digits (δ(ε0) = 0 evaluates to ~1e-33).
_NOISE = 1e-27


def _law(data: tuple[int, ...], e0: float, k: int, kept: int, exact: bool = True) -> dict[tuple[int, ...], mp.mpf]:
    """The law of the reports' counts on the symbols 0..kept−1 and on the rest lumped (kept <= k), in
    mpmath (``exact``) or float64."""
    big = mp.e ** mp.mpf(e0) if exact else math.exp(e0)
    z = big + k - 1
    return convolve(data, lambda x: [big / z if y == x else 1 / z for y in range(kept)] + [(k - kept) / z], kept + 1, mp.mpf(1) if exact else 1.0)


def _hockey(p: dict, q: dict, eps: float) -> mp.mpf:
    big = mp.e ** mp.mpf(eps)
    return mp.fsum(max(mp.mpf(0), p[h] - big * q[h]) for h in p)


def _epsilon(p: dict, q: dict, delta: float, top: float) -> float:
    """ε(δ) of the pair by bisection on [0, top] (its δ(ε) decreases; 0 where δ(0) <= δ)."""
    if _hockey(p, q, 0) <= delta:
        return 0.0
    lo, hi = mp.mpf(0), mp.mpf(top)
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _hockey(p, q, mid) > delta else (lo, mid)
    return float(hi)


def _pairs(n: int, e0: float, k: int) -> list[tuple[tuple[int, ...], dict, dict]]:
    """(background, P, Q) of the victim's inputs 0 and 1 over every background of the other n − 1 users
    (symbols beyond n + 1 are interchangeable with n, so n + 2 coordinates cover every dataset)."""
    kept = min(k, n + 1)
    out = []
    for others in itertools.combinations_with_replacement(range(kept), n - 1):
        out.append((others, _law((0, *others), e0, k, kept), _law((1, *others), e0, k, kept)))
    return out


# (k, n, ε0): k >> n, ε0 tiny, ε0 large; measured at most 3 s each
EDGES = [(1000, 3, 2.0), (3, 4, 1e-4), (4, 3, 12.0)]


@pytest.mark.parametrize("k,n,e0", EDGES)
def test_blanket_and_one_symbol_at_the_edges(k, n, e0):
    """δ(ε) at ε in {0, 0.5ε0, 0.999ε0, ε0} and ε(δ) at δ in {1e-12, 1e-3, 0.7}: the blanket bound is at or
    above the worst dataset and each one-symbol pair at or below its own dataset's exact value.
    Catches an UPPER end that loses the lumped symbols' mass (k >> n), a bisection that returns its
    lower end, and a LOWER pair above its dataset at large ε0 (where it is sound but loose: 5% low in δ
    at ε = 0.999ε0, ε0 = 12, every other user on the victim's first symbol)."""
    with mp.workdps(_DPS):
        pairs = _pairs(n, e0, k)
        bound = BlanketBound(e0, k, n)
        ones = {held: OneSymbolPair(e0, k, n, held) for held in ("z", "x")}
        named = {"z": (2,) * (n - 1), "x": (0,) * (n - 1)}
        for eps in (0.0, 0.5 * e0, 0.999 * e0, e0):
            worst = max(max(_hockey(p, q, eps), _hockey(q, p, eps)) for _, p, q in pairs)
            assert bound.delta_upper(eps) >= worst - _NOISE  # at ε = ε0 the exact δ is 0
            for held, pair in ones.items():
                p, q = next((p, q) for bg, p, q in pairs if bg == named[held])
                assert pair.delta_lower(eps) <= max(_hockey(p, q, eps), _hockey(q, p, eps))
        for delta in (1e-12, 1e-3, 0.7):
            worst = max(max(_epsilon(p, q, delta, e0), _epsilon(q, p, delta, e0)) for _, p, q in pairs)
            assert bound.epsilon_upper(delta) >= worst * (1 - 1e-15)
            for held, pair in ones.items():
                p, q = next((p, q) for bg, p, q in pairs if bg == named[held])
                assert pair.epsilon_lower(delta) <= max(_epsilon(p, q, delta, e0), _epsilon(q, p, delta, e0)) * (1 + 1e-15)


def _third_symbol_delta(n: int, e0: float, eps: float) -> float:
    """Exact δ(ε) of k = 3, victim 0 against 1, every other user on symbol 2: P(h) = Mult(n, θ)(h)·
    Σ_c (r0(c)/θ(c))·h_c/n (proofs/shuffle_blanket.py, item 3), in log-gamma form over every (h0, h1)."""
    big = math.exp(e0)
    p, q = big / (big + 2), 1 / (big + 2)
    a, b = np.arange(n + 1)[:, None], np.arange(n + 1)[None, :]
    c = np.maximum(n - a - b, 0)
    log_mult = gammaln(n + 1) - gammaln(a + 1) - gammaln(b + 1) - gammaln(c + 1) + (a + b) * math.log(q) + c * math.log(p)
    mult = np.where(a + b <= n, np.exp(log_mult), 0.0)
    first = mult * (a * (p / q) + b + c * (q / p)) / n
    second = mult * (a + b * (p / q) + c * (q / p)) / n
    return float(np.sum(np.maximum(first - math.exp(eps) * second, 0.0)))


def test_blanket_above_the_third_symbol_dataset_with_wide_buckets():
    """n = 3000, ε0 = 0.3: the blanket's buckets of N are 5 wide (evaluated at their left ends), and on
    the dataset with every other user on a third symbol the bound is nearly exact (revealing the
    non-uniform reports, all on that symbol, tells little): measured 0.00196967 against the exact
    0.00196894 at ε = 0, 2.8210e-8 against 2.7895e-8 at ε = 0.02. Catches any loss of mass in the bound
    above 4e-4 of δ at ε = 0 (a bucket weighed without its window's rounding, a dropped tail)."""
    bound = BlanketBound(0.3, 3, 3000)
    for eps in (0.0, 0.005, 0.02):
        exact = _third_symbol_delta(3000, 0.3, eps)
        assert exact * (1 + 1e-9) <= bound.delta_upper(eps) <= exact * 1.02


def _partitions(total: int, largest: int, parts: int):
    """The partitions of ``total`` into at most ``parts`` parts of size at most ``largest``, decreasing."""
    if total == 0:
        yield ()
        return
    for first in range(min(total, largest), 0, -1):
        if parts:
            for rest in _partitions(total - first, first, parts - 1):
                yield (first, *rest)


def test_exact_method_past_the_dense_enumeration_meets_every_background():
    """shuffle-rr-exact at k = 10, n = 8, ε0 = 1 (past the dense histogram enumeration: the background
    search of verifier.shuffle.kary_search) against the worst case over every background up to
    relabelling the symbols other than the victim's two (120 of them, float64 laws on the used symbols
    and the rest lumped): both ends of δ(ε) at ε in {0, 0.5} and of ε(δ) at δ = 1e-6 within 1e-9 of it
    (measured 0.0912178966128 at ε = 0, ε(1e-6) = 0.8729882104). Catches a search that prunes a
    family whose bound was not above the incumbent, or misweighs an orbit of exchangeable symbols."""
    from verifier._types import Direction, Side
    from verifier.certify.methods.shuffle import ShuffleExact
    from verifier.pairs import RandomizedResponse
    from verifier.schemes import Shuffle

    k, n, e0 = 10, 8, 1.0
    laws = []
    for c0 in range(n):
        for c1 in range(n - c0):
            for part in _partitions(n - 1 - c0 - c1, n, k - 2):
                others = (0,) * c0 + (1,) * c1 + tuple(2 + i for i, c in enumerate(part) for _ in range(c))
                kept = min(k, 2 + len(part))
                p, q = _law((0, *others), e0, k, kept, exact=False), _law((1, *others), e0, k, kept, exact=False)
                laws.append((np.array(list(p.values())), np.array([q[h] for h in p])))
    assert len(laws) == 120

    def delta(eps: float) -> float:
        return max(float(np.sum(np.maximum(a - math.exp(eps) * b, 0.0))) for p, q in laws for a, b in ((p, q), (q, p)))

    def ends(bounds) -> tuple[float, float]:
        return (max(b.value for b in bounds if b.side is not Side.UPPER), min(b.value for b in bounds if b.side is not Side.LOWER))

    method, scheme = ShuffleExact(), Shuffle(RandomizedResponse(e0, k), n)
    for eps in (0.0, 0.5):
        lower, upper = ends(method.delta_bounds(scheme, eps, Direction.REMOVE))
        assert lower <= delta(eps) * (1 + 1e-9) and upper >= delta(eps) * (1 - 1e-9)
    lo, hi = 0.0, e0
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if delta(mid) > 1e-6 else (lo, mid)
    lower, upper = ends(method.epsilon_bounds(scheme, 1e-6, Direction.REMOVE))
    assert lower <= hi * (1 + 1e-9) and upper >= lo * (1 - 1e-9)
