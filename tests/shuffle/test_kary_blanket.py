"""Issue 38, Done-when 2 and 5 for shuffled k-ary randomized response at any n: the blanket UPPER bound
(verifier.shuffle.blanket) and the one-symbol LOWER pairs (verifier.shuffle.one_symbol), against the
exact δ of every dataset enumerated by direct convolution of the users' report laws on the full
histogram (no lumping, no blanket), and two mutants that the enumeration refutes."""

import math

import pytest

import verifier.shuffle.blanket as blanket
from verifier.shuffle.blanket import BlanketBound
from verifier.shuffle.one_symbol import OneSymbolPair
from kary_enumeration import hockey as _hockey, histogram_law as _law, pair_delta as _pair_delta, worst as _worst


CASES = [(3, 8, 1.0), (4, 6, 0.5), (10, 3, 2.0), (3, 6, 2.0)]


@pytest.mark.parametrize("k,n,e0", CASES)
def test_blanket_and_one_symbol_bracket_every_dataset(k, n, e0):
    """Done-when 5: for n <= 8 the blanket bound is above the exact δ of every dataset pair and the
    one-symbol pairs below it; each one-symbol pair is its dataset's exact δ (every other user on
    symbol 2, or on symbol 0), and at ε = 0 both ends meet the worst case. Catches a blanket bound that
    drops mass (below an exact pair) and a one-symbol likelihood with a wrong weight (off its dataset)."""
    bound = BlanketBound(e0, k, n)
    pairs = {held: OneSymbolPair(e0, k, n, held) for held in ("z", "x")}
    for eps in (0.0, 0.3 * e0, 0.6 * e0):
        worst = _worst(n, e0, k, eps)
        assert bound.delta_upper(eps) >= worst * (1 - 1e-12)
        for held, pair in pairs.items():
            data = (2,) * (n - 1) if held == "z" else (0,) * (n - 1)
            p, q = _law((0, *data), e0, k), _law((1, *data), e0, k)
            for forward, exact in ((True, _hockey(p, q, eps)), (False, _hockey(q, p, eps))):
                assert pair.delta_lower(eps, forward) == pytest.approx(exact, rel=1e-9, abs=1e-15)
            assert pair.delta_lower(eps) <= worst * (1 + 1e-12)
    assert bound.delta_upper(0.0) == pytest.approx(_worst(n, e0, k, 0.0), rel=1e-9)


def test_mutant_blanket_share_too_large_falls_below_a_dataset(monkeypatch):
    """Mutant: the blanket 10% more likely than k/(e^ε0 + k − 1) (proofs/shuffle_blanket.py's wrong claim):
    the bound then falls below the exact worst case (k = 3, n = 8, ε0 = 1, ε = 0.3: 0.0537 < 0.0597)."""
    k, n, e0, eps = 3, 8, 1.0, 0.3
    share = k / (math.exp(e0) + k - 1)
    original = blanket.outer_window

    def too_likely(size, rho, rho_c, tau):
        if abs(float(rho.mid()) - share) < 1e-12:
            rho = rho * 11 / 10
            rho_c = 1 - rho
        return original(size, rho, rho_c, tau)

    monkeypatch.setattr(blanket, "outer_window", too_likely)
    assert BlanketBound(e0, k, n).delta_upper(eps) < _worst(n, e0, k, eps)


def test_mutant_third_symbol_mass_dropped_overshoots():
    """Mutant: the one-symbol pair's likelihood without the victim's mass on the third symbol and the rest
    (weights of hz and the rest set to 0) claims a LOWER bound above the exact worst case."""
    k, n, e0, eps = 4, 6, 0.5, 0.15
    pair = OneSymbolPair(e0, k, n, "z")
    pair._w_p, pair._w_q = [*pair._w_p[:2], 0.0, 0.0], [*pair._w_q[:2], 0.0, 0.0]
    assert pair.delta_lower(eps) > _worst(n, e0, k, eps)


@pytest.mark.parametrize("k,n", [(3, 100), (4, 1000), (10, 10_000)])
def test_bracket_at_most_five_percent_wide(k, n):
    """Done-when 2 at large n (ε0 = 1, δ = 1e-6): [one-symbol, blanket] is at most 5% wide (measured
    1.3%, 0.4% and 0.06%), and the blanket bound is below the clone bound with randomized response's
    share, which ignores k (0.5161 at n = 100)."""
    from verifier.shuffle.clones import CloneWeight, clone_epsilon_upper

    upper = BlanketBound(1.0, k, n).epsilon_upper(1e-6)
    lower = max(OneSymbolPair(1.0, k, n, held).epsilon_lower(1e-6) for held in ("z", "x"))
    assert lower <= upper <= 1.05 * lower
    assert upper < clone_epsilon_upper(1.0, n, 1e-6, CloneWeight.TAILED)


def test_large_k_and_tiny_eps0_are_answered_not_crashed():
    """Regressions found with the k-ary methods: the enumeration's size check overflowed a float at
    k = 1000, n = 300 (a DEFECT exit), and at ε0 = 1e-6, n = 1000, δ = 1e-6 the single report's ε(δ)
    (negative: its total variation is below δ) was returned as the shuffle's UPPER bound, below the
    count's LOWER 0 (an INTERNAL INCONSISTENCY exit)."""
    from verifier.pairs import RandomizedResponse
    from verifier.shuffle.approx import shuffle_epsilon_upper
    from verifier.shuffle.histogram import histogram_work

    assert histogram_work(1000, 300) == (math.inf, math.inf)
    assert shuffle_epsilon_upper(RandomizedResponse(1e-6, 5), 1000, 1e-6)[0] == 0.0


def test_three_symbol_backgrounds_are_exact_dataset_pairs():
    """ThreeSymbolBackgrounds (every background on at most three symbols, the small-n part of
    shuffle-rr-one-symbol): k = 5, n = 5, its δ(ε) equals the largest exact δ over those datasets by
    direct convolution and is at most the worst case over every dataset; at k = 3 every background is
    one of them, so it meets the full enumeration."""
    from verifier.shuffle.histogram import KaryShuffle, ThreeSymbolBackgrounds

    k, n, e0 = 5, 5, 1.5
    family = ThreeSymbolBackgrounds(e0, k, n)
    for eps in (0.0, 0.4, 0.9):
        exact = max(_pair_delta((0,) * c0 + (1,) * c1 + (2,) * (n - 1 - c0 - c1), e0, k, eps)
                    for c0 in range(n) for c1 in range(n - c0))
        bracket = family.delta(eps)
        assert bracket.lower <= exact * (1 + 1e-12) and exact * (1 - 1e-12) <= bracket.upper
        assert bracket.lower <= _worst(n, e0, k, eps) * (1 + 1e-12)
    full, family = KaryShuffle(1.0, 3, 9), ThreeSymbolBackgrounds(1.0, 3, 9)
    assert family.epsilon(1e-4).lower == full.epsilon(1e-4).lower


def test_three_symbol_backgrounds_raise_the_small_n_lower_end():
    """k = 10, n = 16, ε0 = 2, δ = 1e-6: fourteen users on x and one on z (ε >= 1.7187) is above every
    one-symbol pair (1.6684), narrowing the bracket below the blanket's 1.7935 from 7.5% to 4.4%."""
    from verifier.shuffle.histogram import ThreeSymbolBackgrounds

    family = ThreeSymbolBackgrounds(2.0, 10, 16).epsilon(1e-6).lower
    single = max(OneSymbolPair(2.0, 10, 16, held).epsilon_lower(1e-6) for held in ("z", "x"))
    assert family > single + 0.04 and family <= BlanketBound(2.0, 10, 16).epsilon_upper(1e-6)


def test_no_mass_beyond_eps0_and_no_negative_lower_bound():
    """From ε0 on the shuffle's δ is 0 (every likelihood ratio is at most e^ε0), and the blanket bound says
    so instead of its windows' 1e-19; a LOWER bound that sums to 0 stays 0 (rounding down 0 gave -5e-324,
    printed as ">-1e-300" by ``verifier bounds``)."""
    assert BlanketBound(1.0, 4, 1000).delta_upper(1.0) == 0.0
    assert OneSymbolPair(1.0, 4, 1000, "z").delta_lower(1.0) == 0.0


def test_binary_blanket_is_the_clone_bound_with_randomized_response_share():
    """For k = 2 the blanket (each other user a fair coin with probability 2/(e^ε0 + 1)) is FMT's clone pair
    with randomized response's share, which shuffle-clones sums in ball arithmetic by other code: the two
    ε(δ) agree to 1e-7 (ε0 = 1, n = 1000: 0.14867; ε0 = 4, n = 10^4)."""
    from verifier.shuffle.clones import CloneWeight, clone_epsilon_upper

    for e0, n in ((1.0, 1000), (4.0, 10_000)):
        assert BlanketBound(e0, 2, n).epsilon_upper(1e-6) == pytest.approx(clone_epsilon_upper(e0, n, 1e-6, CloneWeight.TAILED), rel=1e-7)
