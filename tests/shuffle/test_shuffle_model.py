"""Issue 27: the shuffle model, certified. References are independent of the code under test:
exact enumeration of every dataset in mpmath (n <= 12), Monte Carlo with a Hoeffding interval, the
numbers FMT's README and the issue state, and scipy's binomial functions."""

import itertools
import math

import mpmath
import numpy as np
import pytest

from kary_enumeration import convolve
from neyman_pearson import most_powerful_tpr

from verifier.certify.claim import parse_claim
from verifier.certify.verdict import Verdict, certify
from verifier.errors import NotApplicable
from verifier.shuffle.clones import (
    clone_delta_float,
    clone_delta_upper,
    clone_epsilon_upper,
    closed_form_condition,
    fmt_closed_form,
    fmt_closed_form_printed,
)
from verifier.shuffle.count import CountPair, rr_count_pair

MPMATH_DPS = 40  # working precision of this module's tests (tests/conftest.py)


def _report_law(truth: int, e0: float, k: int) -> list:
    """k-ary randomized response's output law on input ``truth`` (mpmath)."""
    z = mpmath.e**e0 + k - 1
    return [mpmath.e**e0 / z if y == truth else 1 / z for y in range(k)]


def _shuffled_law(data: tuple[int, ...], e0: float, k: int) -> dict:
    """Law of the histogram of k-ary randomized response's reports (the shuffled multiset)."""
    return _histogram_law(data, lambda x: _report_law(x, e0, k))


def _histogram_law(data: tuple[int, ...], report) -> dict:
    """Law of the histogram of reports by convolving the users' laws (``report(x)``: the masses of the
    outputs 0, 1, … on input x), in mpmath."""
    return convolve(data, report, len(report(data[0])), mpmath.mpf(1))


def _hockey(p: dict, q: dict, eps: float):
    big = mpmath.e**eps
    return sum(max(mpmath.mpf(0), p[h] - big * q.get(h, 0)) for h in p)


def _worst_exact(n: int, e0: float, k: int, eps: float):
    """max over every dataset pair differing in user 1 (others: every multiset of values; the
    shuffle makes datasets equal up to order equivalent) of the exact δ, both orders."""
    worst, where = mpmath.mpf(0), None
    for others in itertools.combinations_with_replacement(range(k), n - 1):
        for a, b in itertools.permutations(range(k), 2):
            d = _hockey(_shuffled_law((a, *others), e0, k), _shuffled_law((b, *others), e0, k), eps)
            if d > worst:
                worst, where = d, (a, b, others)
    return worst, where


@pytest.mark.parametrize("n,e0", [(2, 1.0), (5, 0.5), (8, 2.0), (12, 1.0)])
def test_binary_rr_brute_force_inside_bracket_and_worst_dataset_is_all_equal(n, e0):
    """Done-when 2: clone UPPER >= exact δ of every dataset (n <= 12); the count pair's δ (every other
    user equal) is at most the worst, and equals it at ε = ε0/2 (near ε = 0 a mixed background can be
    worse: n = 8, ε0 = 2, ε = 0 gives 0.384 with three ones against 0.313). Catches: a clone sum that
    drops mass (upper below exact), a count pair with swapped a1/a0 or the wrong background rate."""
    forward = rr_count_pair(e0, 2, n)
    backward = CountPair(forward.a0, forward.a1, forward.r, forward.others)  # the other orientation
    for eps in (0.0, 0.05, 0.2, 0.5 * e0):
        worst, (a, b, others) = _worst_exact(n, e0, 2, eps)
        assert clone_delta_upper(e0, n, eps) >= float(worst)
        lower = max(forward.delta(eps).lower, backward.delta(eps).lower)
        upper = max(forward.delta(eps).upper, backward.delta(eps).upper)
        assert lower <= float(worst)
        if eps == 0.5 * e0:
            assert len(set(others)) == 1 and float(worst) <= upper


@pytest.mark.parametrize("n,e0", [(4, 1.0), (6, 2.0)])
def test_ternary_rr_brute_force_inside_bracket(n, e0):
    """k = 3: the count statistic gives a LOWER bound (a post-processing of the histogram) below the
    worst exact δ over every histogram of the others, and the clone UPPER bound is above it."""
    pair = rr_count_pair(e0, 3, n)
    for eps in (0.05, 0.3):
        worst, _ = _worst_exact(n, e0, 3, eps)
        assert pair.delta(eps).lower <= float(worst) * (1 + 1e-12)
        assert clone_delta_upper(e0, n, eps) >= float(worst)


def test_clone_sum_matches_direct_mpmath_sum():
    """The marched ball sum against a direct mpmath double sum over (c, a) of the clone pair (n = 30):
    catches an off-by-one in the recurrences of Bin(c, 1/2)'s pmf and tail."""
    n, e0 = 30, 1.3
    for eps in (0.0, 0.1, 0.6):
        big, big0 = mpmath.e**eps, mpmath.e**e0
        p1 = big0 / (big0 + 1)
        q = mpmath.e ** (-e0)
        total = mpmath.mpf(0)
        for c in range(n):
            w = mpmath.binomial(n - 1, c) * q**c * (1 - q) ** (n - 1 - c)
            for a in range(c + 2):
                b = lambda j: mpmath.binomial(c, j) / 2**c if 0 <= j <= c else 0  # noqa: E731
                pa = p1 * b(a - 1) + (1 - p1) * b(a)
                qa = (1 - p1) * b(a - 1) + p1 * b(a)
                total += w * max(0, pa - big * qa)
        upper = clone_delta_upper(e0, n, eps)
        assert float(total) <= upper <= float(total) * (1 + 1e-12) + 1e-300


def test_upper_bound_above_monte_carlo_lower_confidence_bound():
    """Done-when 2 (Monte Carlo): δ of the all-equal dataset at n = 200, ε0 = 1, ε = 0.1, estimated as
    E_P[(1 − e^ε Q/P)_+] from 50 000 draws of the count; its 1e-6-level Hoeffding lower bound must
    not exceed the clone UPPER bound (and the exact count δ lies inside the interval)."""
    n, e0, eps, draws = 200, 1.0, 0.1, 50_000
    from scipy.stats import binom

    rng = np.random.default_rng(27)
    p = math.exp(e0) / (1 + math.exp(e0))
    counts = rng.binomial(1, p, draws) + rng.binomial(n - 1, 1 - p, draws)
    s = lambda k: binom.pmf(k, n - 1, 1 - p)  # noqa: E731
    law_p = p * s(counts - 1) + (1 - p) * s(counts)
    law_q = (1 - p) * s(counts - 1) + p * s(counts)
    values = np.maximum(0.0, 1 - math.exp(eps) * law_q / law_p)
    half = math.sqrt(math.log(2 / 1e-6) / (2 * draws))
    lower_cb, upper_cb = values.mean() - half, values.mean() + half
    assert lower_cb <= clone_delta_upper(e0, n, eps)
    exact = rr_count_pair(e0, 2, n).delta(eps)
    assert lower_cb <= exact.lower and exact.upper <= upper_cb


def test_closed_form_values_and_condition():
    """FMT Thm 3.1: the issue's 0.21403 (quoted statement, ε0 = 1, n = 1e4, δ = 1e-6), and FMT's
    README value 0.5378040242374512 (their implementation, ε0 = 4, n = 1e5, δ = 1e-6), which is the
    larger reading verifier uses. Outside ε0 <= ln(n/(16 ln(4/δ))) the bound declines, naming it."""
    assert fmt_closed_form_printed(1.0, 10**4, 1e-6) == pytest.approx(0.21403, abs=5e-6)
    assert fmt_closed_form(4.0, 10**5, 1e-6) == pytest.approx(0.5378040242374512, rel=1e-12)
    assert fmt_closed_form(4.0, 10**5, 1e-6) >= 0.5378040242374512
    assert fmt_closed_form(1.0, 10**4, 1e-6) >= fmt_closed_form_printed(1.0, 10**4, 1e-6)
    assert closed_form_condition(3.7, 10**4, 1e-6) is None  # ln(1e4/(16 ln 4e6)) = 3.71
    with pytest.raises(NotApplicable, match=r"eps0 <= ln\(n/\(16 ln\(4/delta\)\)\) = 3.71"):
        fmt_closed_form(3.72, 10**4, 1e-6)


def test_clone_numerics_against_fmt_readme_and_scipy():
    """FMT's README: shuffling 1e5 reports of 4-DP randomizers is (ε, 1e-6)-DP for ε in
    [0.1675, 0.1728] (their upper/lower numerical bounds of the same pair). Our rigorous value lies in
    it; the ball sum agrees with a float64 scipy evaluation where both are far above the window tail."""
    eps = clone_epsilon_upper(4.0, 10**5, 1e-6)
    assert 0.1675385583317841 <= eps <= 0.172790550755978
    for n, e0, e in ((1000, 1.0, 0.1), (10**4, 0.5, 0.01)):
        assert clone_delta_upper(e0, n, e) == pytest.approx(clone_delta_float(e0, n, e), rel=1e-9)


def _claim(epsilon: float, **mechanism) -> object:
    return parse_claim(
        {
            "mechanism": {"name": "rr", "epsilon0": 1.0, **mechanism},
            "scheme": {"name": "shuffle", "users": 10_000},
            "neighboring": "replace_one",
            "epsilon": epsilon,
            "delta": 1e-6,
        }
    )


def test_done_when_1_bracket_binary_rr():
    """Binary RR, ε0 = 1, n = 1e4, δ = 1e-6: the exact count-statistic ε(δ) (0.0348 remove) lies
    above 0.034 and below the clone UPPER bound (0.0530), itself below FMT's closed form 0.21403."""
    lower = rr_count_pair(1.0, 2, 10**4).epsilon_lower(1e-6, 1.0)
    assert 0.034 < lower < clone_epsilon_upper(1.0, 10**4, 1e-6) < 0.21403


@pytest.mark.slow
def test_done_when_1_binary_rr_certified_at_closed_form_and_violated_below_exact_lower():
    """The same through certify (~8 s): CERTIFIED at 0.21403, VIOLATED at 0.034."""
    assert certify(_claim(0.21403)).verdict is Verdict.CERTIFIED
    assert certify(_claim(0.034)).verdict is Verdict.VIOLATED


def _law_hist(data: tuple[int, ...], laws: dict) -> dict:
    """Histogram law of the shuffled reports when user i's report has law ``laws[data[i]]``."""
    return _histogram_law(data, laws.__getitem__)


@pytest.mark.parametrize("n,e0,d0", [(4, 1.0, 0.01), (7, 0.5, 0.001)])
def test_approx_dp_randomizer_brute_force_below_thm38_bound(n, e0, d0):
    """(ε0, δ0)-randomized response (4 outcomes, Steinke Cor 24) shuffled, every dataset of the others
    enumerated: the exact δ never exceeds the Thm 3.8 + clones UPPER bound. Catches a coupling term
    with the wrong sign or without the factor n."""
    from verifier.pairs import ApproxDP
    from verifier.shuffle.approx import shuffle_delta_upper

    big = mpmath.e**e0
    w = (1 - mpmath.mpf(d0)) / (1 + big)
    laws = {1: [mpmath.mpf(d0), w * big, w, 0], 0: [0, w, w * big, mpmath.mpf(d0)]}
    for eps in (0.05, 0.3):
        worst = max(
            _hockey(_law_hist((a, *others), laws), _law_hist((1 - a, *others), laws), eps)
            for others in itertools.combinations_with_replacement((0, 1), n - 1)
            for a in (0, 1)
        )
        assert shuffle_delta_upper(ApproxDP(e0, d0), n, eps)[0] >= float(worst)


def test_coupling_slack_is_at_least_the_coupling_proved_for_the_clone_bound():
    """proofs/shuffle_coupling.py proves, for the clone bound itself, δ(ε) <= clone + (1 + e^ε)·δ0·
    [1/(1 + e^ε0) + (n − 1)·e^−ε0·(1 + 1/(1 + e^ε0))]; the term verifier adds (FMT Thm 3.8's
    (e^ε + 1)(1 + e^−ε0/2)·n·δ0, rounded up) is never below it. Evaluated here in mpmath from the
    formula, not from the proof module."""
    from verifier.shuffle.approx import coupling_slack

    for e0 in (1e-3, 0.3, 1.0, 4.0, 20.0):
        big, u = mpmath.e**e0, mpmath.e ** (-e0)
        for d0 in (1e-12, 1e-6, 0.01):
            for n in (1, 2, 1000, 10**6):
                for eps in (0.0, 0.5, 3.0):
                    proved = (1 + mpmath.e**eps) * d0 * (1 / (1 + big) + (n - 1) * u * (1 + 1 / (1 + big)))
                    assert coupling_slack(e0, d0, n, eps) >= proved


@pytest.mark.parametrize("e0,d0", [(0.5, 0.01), (2.0, 0.05)])
def test_clone_plus_coupling_above_exact_delta_and_a_smaller_term_is_refuted(e0, d0):
    """The clone UPPER bound plus the coupling term alone (without shuffle_delta_upper's fallback to the
    changed report's own δ, which can hide the coupling) stays above the exact δ of shuffled
    (ε0, δ0)-RR, every dataset of n <= 5 enumerated. At n = 1 the proved coupling is tight (clone +
    (1 + e^ε)·δ0/(1 + e^ε0) is the pair's own δ), so a victim term 10% smaller is refuted: the check
    can see a wrong constant."""
    from verifier.shuffle.approx import coupling_slack

    big = mpmath.e**e0
    w = (1 - mpmath.mpf(d0)) / (1 + big)
    laws = {1: [mpmath.mpf(d0), w * big, w, 0], 0: [0, w, w * big, mpmath.mpf(d0)]}
    for n in (1, 3, 5):
        for eps in (0.0, 0.3):
            worst = max(
                _hockey(_law_hist((a, *others), laws), _law_hist((1 - a, *others), laws), eps)
                for others in itertools.combinations_with_replacement((0, 1), n - 1)
                for a in (0, 1)
            )
            assert clone_delta_upper(e0, n, eps) + coupling_slack(e0, d0, n, eps) >= worst
            if n == 1:
                smaller = clone_delta_upper(e0, 1, eps) + 0.9 * (1 + math.exp(eps)) * d0 / (1 + math.exp(e0))
                assert smaller < worst


def test_both_closed_form_readings_lie_above_the_clone_bound():
    """Thm 3.1's printed factor (e^ε0 − 1)/(e^ε0 + 1), the smaller of the two readings, is above the
    rigorous clone UPPER bound at these points inside its condition (2–12 times it), so there either
    reading is implied by the clone bound (ε(δ) bounds are monotone). Evidence about the reading, not
    a proof of Thm 3.1: its proof was not checked against the primary source."""
    for n in (10**3, 10**4, 10**5):
        for d in (1e-3, 1e-6):
            limit = math.log(n / (16 * math.log(4 / d)))
            for e0 in (0.25 * limit, limit):
                assert fmt_closed_form_printed(e0, n, d) >= clone_epsilon_upper(e0, n, d)


def test_gaussian_shuffle_upper_amplifies():
    """Done-when 3 (shuffle model): Gaussian σ = 8, pair sensitivity 2, n = 1000, δ = 1e-6: the Thm 3.8
    + clones UPPER bound (0.426) is below the unshuffled Gaussian's exact ε (1.061), from a ε0 with
    δ0 > 0. Catches a coupling that never selects a finite ε0 (no amplification for Gaussians)."""
    from verifier._types import Direction
    from verifier.pairs import Gaussian
    from verifier.shuffle.approx import shuffle_epsilon_upper

    pair = Gaussian(8.0, 2.0)
    upper, e0, d0 = shuffle_epsilon_upper(pair, 1000, 1e-6)
    assert upper < 0.5 * pair.epsilon(1e-6, Direction.REMOVE).lower
    assert d0 > 0 and math.isfinite(e0)


@pytest.mark.slow
def test_gaussian_shuffle_certified_and_above_the_specific_pair_lower_bound():
    """The same claim through certify: CERTIFIED at ε = 0.45, and Liew et al.'s specific-pair LOWER
    bound (allocation PLD, dominated side) lies below the UPPER bound."""
    claim = parse_claim({"mechanism": {"name": "gaussian", "sigma": 8.0, "sensitivity": 1.0},
                         "scheme": {"name": "shuffle", "users": 1000}, "neighboring": "replace_one",
                         "epsilon": 0.45, "delta": 1e-6})
    outcome = certify(claim)
    assert outcome.verdict is Verdict.CERTIFIED
    for bracket in outcome.epsilon.brackets.values():
        assert bracket.lower <= bracket.upper <= 0.45


def test_closed_form_method_declines_with_the_condition_and_gives_no_verdict():
    """Done-when 4: ε0 = 4, n = 1e4 is outside Thm 3.1 at δ = 1e-6 (ln(1e4/(16 ln 4e6)) = 3.71): with
    only the closed-form method the claim is INCONCLUSIVE and the ε(δ) query's skipped list names the
    condition (its δ(ε) answer comes from a δ large enough for the condition, here far above 1e-6)."""
    claim = parse_claim({"mechanism": {"name": "rr", "epsilon0": 4.0}, "scheme": {"name": "shuffle", "users": 10_000},
                         "neighboring": "replace_one", "epsilon": 1.0, "delta": 1e-6})
    outcome = certify(claim, only=["shuffle-fmt-closed"])
    assert outcome.verdict is Verdict.INCONCLUSIVE
    reasons = " ".join(outcome.epsilon.skipped)
    assert "eps0 <= ln(n/(16 ln(4/delta)))" in reasons and "eps0 = 4" in reasons


def test_clone_bound_is_monotone_in_the_number_of_clones_and_of_users():
    """clone_epsilon_by_size relies on δ_c(ε) non-increasing in c and the clone δ(ε) non-increasing in
    n (proof in verifier.shuffle.clones): checked here with mpmath sums of the per-c pair for c <= 40
    and with the ball sum for n = 2 … 38. A reduction whose δ_c grew with c would be caught."""
    from verifier.shuffle.clones import clone_epsilon_by_size

    e0 = 1.5
    for eps in (0.05, 0.4):
        big, big0 = mpmath.e**eps, mpmath.e**e0
        p1 = big0 / (big0 + 1)
        per_c = []
        for c in range(26):
            b = lambda j: mpmath.binomial(c, j) / 2**c if 0 <= j <= c else 0  # noqa: E731
            per_c.append(sum(max(0, p1 * b(a - 1) + (1 - p1) * b(a) - big * ((1 - p1) * b(a - 1) + p1 * b(a))) for a in range(c + 2)))
        assert all(x >= y for x, y in zip(per_c, per_c[1:]))
        by_n = [clone_delta_upper(e0, n, eps) for n in range(2, 39, 6)]
        assert all(x >= y * (1 - 1e-12) for x, y in zip(by_n, by_n[1:]))
    sizes = list(range(50, 80))
    anchored = clone_epsilon_by_size(e0, sizes, 1e-4, anchors=4)
    assert all(anchored[k] >= clone_epsilon_upper(e0, k, 1e-4) * (1 - 1e-9) for k in (63, 79))


def test_count_pair_threshold_at_the_edge_of_precision_is_enclosed():
    """ε0 = 50 at ε = 0 in the add orientation puts the threshold r(N + 1) = 1000(1 − e^-50) within the
    working precision of an integer: the bracket still encloses δ = TV (≈ 1) instead of failing."""
    forward = rr_count_pair(50.0, 2, 1000)
    backward = CountPair(forward.a0, forward.a1, forward.r, forward.others)
    bracket = backward.delta(0.0)
    assert bracket.lower > 0.999 and bracket.upper == 1.0


@pytest.mark.parametrize("k,n,e0", [(2, 2, 1.0), (2, 5, 2.0), (2, 8, 1.0), (3, 3, 2.0), (3, 4, 1.0)])
def test_randomized_response_clone_share_above_brute_force(k, n, e0):
    """Issue 38: the clone bound with share 2/(e^ε0 + 1) (randomized response, any k; proofs/
    shuffle_binary.py) is above the exact δ of every dataset pair, enumerated in mpmath (Done-when 5),
    and below FMT's share e^−ε0 bound."""
    from verifier.shuffle.clones import CloneWeight

    for eps in (0.0, 0.3):
        worst, _ = _worst_exact(n, e0, k, eps)
        tailed = clone_delta_upper(e0, n, eps, CloneWeight.TAILED)
        assert float(worst) <= tailed <= clone_delta_upper(e0, n, eps)


def test_clone_share_ten_percent_larger_is_refuted(monkeypatch):
    """Done-when 5, a wrong constant: at n = 2 the share-2/(e^ε0 + 1) clone bound equals the exact worst
    case of binary RR (tight), so a share 10% larger falls below the brute force."""
    from verifier.shuffle.clones import CloneWeight

    worst, _ = _worst_exact(2, 1.0, 2, 0.3)
    assert clone_delta_upper(1.0, 2, 0.3, CloneWeight.TAILED) == pytest.approx(float(worst), rel=1e-12)
    honest = CloneWeight.pieces
    monkeypatch.setattr(CloneWeight, "pieces", lambda self, e0: [(loss, 1.1 * w, 1.1 * f) for loss, w, f in honest(self, e0)])
    clone_delta_upper.cache_clear()  # the honest value above is cached (bounds are pure functions of their arguments)
    assert clone_delta_upper(1.0, 2, 0.3, CloneWeight.TAILED) < float(worst)
    clone_delta_upper.cache_clear()


def test_randomized_response_clone_bound_matches_wang_et_al():
    """The share-2/(e^ε0 + 1) clone bound on ε(δ) of binary RR reproduces Wang et al.'s variation-ratio
    numbers (benchmarks/shuffle.md, their code: 0.1487 at ε0 = 1, n = 10^3; 0.1182 at ε0 = 4, n = 10^5;
    δ = 1e-6), to their 4 printed digits, as the same weight predicts."""
    from verifier.shuffle.clones import CloneWeight

    assert clone_epsilon_upper(1.0, 1000, 1e-6, CloneWeight.TAILED) == pytest.approx(0.1487, abs=5e-5)
    assert clone_epsilon_upper(4.0, 10**5, 1e-6, CloneWeight.TAILED) == pytest.approx(0.1182, abs=5e-5)


@pytest.mark.parametrize("k,n,e0", [(3, 4, 1.0), (3, 6, 2.0), (4, 4, 0.5)])
def test_kary_histogram_exact_against_every_dataset(k, n, e0):
    """Issue 38, Done-when 2 and 5: the k-ary histogram enumeration's δ(ε) bracket holds the brute-force
    worst case over every dataset (mpmath, every multiset of the others' inputs and every ordered pair
    of the changed user's inputs) and is at most 1e-12 wide."""
    from verifier.shuffle.histogram import KaryShuffle

    scan = KaryShuffle(e0, k, n)
    for eps in (0.0, 0.3, 0.6):
        worst, _ = _worst_exact(n, e0, k, eps)
        bracket = scan.delta(eps)
        assert bracket.lower <= float(worst) * (1 + 1e-13) and float(worst) * (1 - 1e-13) <= bracket.upper
        assert bracket.upper - bracket.lower <= 1e-12


def test_kary_histogram_ten_symbols_against_every_background():
    """k = 10, n = 3: every multiset of the others' inputs with the changed user's inputs 0 and 1 in both
    orders (relabelling the ten symbols is a symmetry of k-RR, so this pair of inputs loses nothing;
    every ordered pair as in _worst_exact would take minutes in mpmath)."""
    from verifier.shuffle.histogram import KaryShuffle

    scan = KaryShuffle(1.0, 10, 3)
    for eps in (0.0, 0.4):
        worst = max(_hockey(_shuffled_law((a, *others), 1.0, 10), _shuffled_law((b, *others), 1.0, 10), eps)
                    for others in itertools.combinations_with_replacement(range(10), 2) for a, b in ((0, 1), (1, 0)))
        bracket = scan.delta(eps)
        assert bracket.lower <= float(worst) * (1 + 1e-13) and float(worst) * (1 - 1e-13) <= bracket.upper


def test_kary_mutants_victim_symbol_background_and_one_order_are_refuted():
    """Done-when 5, mutants of the histogram enumeration: only the background where every other user holds
    the changed user's first input (the pair shuffle-rr-count uses), and only the order 1 -> 0, each fall
    below the brute-force worst case (k = 3, n = 4, ε0 = 1: at ε = 0.3 all others on the third symbol are
    worst, at ε = 0.6 one on symbol 0 and two on symbol 2 in the order 0 -> 1)."""
    from verifier.shuffle.histogram import KaryShuffle

    def mutant(keep):
        scan = KaryShuffle(1.0, 3, 4)
        scan.candidates = [c for c in scan.candidates if keep(c.label)]
        return scan

    worst, _ = _worst_exact(4, 1.0, 3, 0.3)
    assert mutant(lambda label: "(3, 0, 0)" in label).delta(0.3).upper < float(worst)
    worst, _ = _worst_exact(4, 1.0, 3, 0.6)
    assert mutant(lambda label: label.endswith("1->0")).delta(0.6).upper < float(worst)


def test_kary_histogram_agrees_with_binary_scan_and_issue_value():
    """Two independent computations of binary RR's exact worst case (the k = 2 histogram on dense arrays,
    the binomial-window scan) agree to 1e-9, and the issue's k = 3, n = 5, ε0 = 2, δ = 1e-3 value 1.99668
    lies in the bracket (the count of one symbol gives only 1.5240 there)."""
    from verifier.shuffle.binary import BinaryShuffle
    from verifier.shuffle.histogram import KaryShuffle

    for eps in (0.05, 0.4):
        a, b = KaryShuffle(1.5, 2, 30).delta(eps), BinaryShuffle(1.5, 30).delta(eps)
        assert a.upper == pytest.approx(b.upper, rel=1e-9) and a.lower == pytest.approx(b.lower, rel=1e-9)
    found = KaryShuffle(2.0, 3, 5).epsilon(1e-3)
    assert found.lower <= 1.996685 and 1.996675 <= found.upper and found.upper - found.lower <= 1e-6 * found.upper
    assert rr_count_pair(2.0, 3, 5).epsilon_lower(1e-3, 2.0) < 1.53


def _laplace_pair_delta(x: float, x_other: float, z: float, eps: float, step: float = 0.02, half: float = 12.0) -> float:
    """δ of two shuffled Laplace(1) reports, the changed user at x against x_other and the other at z:
    midpoint quadrature of the unordered pair's densities on [−12, 12]² (error far below the margins
    asserted; the mass outside is e^−11 or less)."""
    y = np.arange(-half, half, step) + step / 2
    f = lambda c: np.exp(-np.abs(y - c)) / 2  # noqa: E731
    p = np.outer(f(x), f(z)) + np.outer(f(z), f(x))
    q = np.outer(f(x_other), f(z)) + np.outer(f(z), f(x_other))
    return 0.5 * float(np.maximum(p - math.exp(eps) * q, 0).sum()) * step * step


def test_laplace_distance_share_bound_above_quadrature_and_near_the_far_share():
    """The Laplace clone bound (share 2e^−ε0/(1 + e^−l) over ranges of the changed inputs' loss l; inputs
    in [−1, 1], scale 1, ε0 = 2) is above the δ of two shuffled reports for changed inputs far apart and
    close together (quadrature), below FMT's share e^−ε0 bound, and within 0.2% of the far-distance share's
    value at n = 10^5 (0.11%: the range bound costs little)."""
    from verifier.shuffle.clones import CloneWeight

    for x, x_other, z in ((-1.0, 1.0, -1.0), (0.5, 1.0, -1.0), (0.0, 1.0, 1.0)):
        for eps in (0.0, 0.3):
            assert _laplace_pair_delta(x, x_other, z, eps) <= clone_delta_upper(2.0, 2, eps, CloneWeight.DISTANCE)
    distance = clone_epsilon_upper(2.0, 10**5, 1e-6, CloneWeight.DISTANCE)
    assert distance < 0.8 * clone_epsilon_upper(2.0, 10**5, 1e-6)
    assert distance <= 1.002 * clone_epsilon_upper(2.0, 10**5, 1e-6, CloneWeight.TAILED)


def test_kary_enumeration_declines_at_once_past_its_limits():
    """k = 10 at n = 100 (and any k at n = 10^6) is refused from the array size alone, without
    enumerating the backgrounds (which would take minutes): supports() stays cheap for certify."""
    from verifier.shuffle.histogram import KaryShuffle, histogram_work

    assert histogram_work(10, 100) == (math.inf, math.inf) and histogram_work(2, 10**6) == (math.inf, math.inf)
    with pytest.raises(NotApplicable, match="more than"):
        KaryShuffle(1.0, 10, 100)


def _kary_worst_tpr(n: int, e0: float, k: int, alpha) -> tuple:
    """The largest Neyman–Pearson TPR at FPR α over every pair of datasets differing in one user (every
    multiset of the others' inputs, every ordered pair of the changed user's inputs), with its argmax."""
    best = (mpmath.mpf(-1), None)
    for others in itertools.combinations_with_replacement(range(k), n - 1):
        for a, b in itertools.permutations(range(k), 2):
            p, q = _shuffled_law((b, *others), e0, k), _shuffled_law((a, *others), e0, k)
            found = most_powerful_tpr([p[h] for h in p], [q[h] for h in p], alpha)
            if found > best[0]:
                best = (found, (a, b, others))
    return best


def test_kary_tradeoff_bracket_holds_the_worst_pair_by_brute_force(capsys):
    """Issue 40, Done-when 4 for k-ary randomized response (k = 3, n = 4, ε0 = 1): ``verifier tradeoff``'s
    bracket (shuffle-rr-exact's histogram enumeration with checkin-lower and profile-tpr beside it)
    holds the largest Neyman–Pearson TPR over every pair of datasets, in mpmath, and is at most 1e-9
    wide. Mutants of the enumeration fall below the brute force: keeping only the order 1 -> 0 of the
    changed input (at FPR 0.05 the worst is the background (3, 0, 0) in the order 0 -> 1: 0.12818
    against 0.11881), or only the background where every other user holds the changed user's first
    input, the count's pair (at FPR 0.3 the worst is (0, 0, 3): 0.51344 against 0.48264)."""
    import json

    from verifier.cli import main
    from verifier.shuffle.histogram import KaryShuffle

    fprs = ("0.001", "0.05", "0.3")
    assert main(["tradeoff", "--mechanism", "rr", "--epsilon0", "1", "--k", "3", "--scheme", "shuffle", "--users", "4",
                 "--neighboring", "replace_one", "--fpr", ",".join(fprs), "--json"]) == 0
    points = json.loads(capsys.readouterr().out)["points"]
    def mutant(keep):
        scan = KaryShuffle(1.0, 3, 4)
        scan.candidates = [c for c in scan.candidates if keep(c.label)]
        return scan

    mutants = {"0.05": mutant(lambda label: label.endswith("1->0")), "0.3": mutant(lambda label: "(3, 0, 0)" in label)}
    for alpha, point in zip(fprs, points):
        worst, _ = _kary_worst_tpr(4, 1.0, 3, mpmath.mpf(alpha))
        for bracket in point["directions"].values():
            assert bracket["lower"] <= float(worst) * (1 + 1e-13) and float(worst) * (1 - 1e-13) <= bracket["upper"]
            assert bracket["upper"] - bracket["lower"] <= 1e-9
        if alpha in mutants:
            assert mutants[alpha].tpr(float(alpha)).upper < float(worst) * (1 - 0.05)


def _canonical_report(x: int, e0: float, d0: float) -> list:
    """The canonical (ε0, δ0)-DP randomizer on a bit (Kairouz, Oh & Viswanath): outputs (x-flag, 0, 1,
    (1−x)-flag) with masses δ0 on the own flag and (1 − δ0)(e^ε0, 1)/(1 + e^ε0) on the bit."""
    big, rest = mpmath.e**e0, 1 - mpmath.mpf(d0)
    bit = [rest * big / (1 + big), rest / (1 + big)][:: 1 if x == 0 else -1]
    return [mpmath.mpf(d0) if x == 0 else mpmath.mpf(0), *bit, mpmath.mpf(d0) if x == 1 else mpmath.mpf(0)]


def test_approx_dp_tradeoff_bracket_holds_the_canonical_randomizer(capsys):
    """``approx_dp`` (any (ε0, δ0)-DP randomizer; ε0 = 1, δ0 = 0.01, n = 3): the canonical randomizer is
    one such randomizer, so the UPPER end is above its largest Neyman–Pearson TPR over every dataset
    (mpmath); the LOWER end (checkin-lower: Liew et al.'s pair, every other user at the changed user's
    first input, in both orders) is below that pair's and within 1e-3 of it."""
    import json

    from verifier.cli import main

    fprs = ("0.001", "0.05", "0.3")
    assert main(["tradeoff", "--mechanism", "approx_dp", "--epsilon0", "1", "--delta0", "0.01", "--scheme", "shuffle", "--users", "3",
                 "--neighboring", "replace_one", "--fpr", ",".join(fprs), "--json"]) == 0
    points = json.loads(capsys.readouterr().out)["points"]

    def tpr(first: int, others: tuple[int, ...], alpha):
        p = _histogram_law((1 - first, *others), lambda x: _canonical_report(x, 1.0, 0.01))
        q = _histogram_law((first, *others), lambda x: _canonical_report(x, 1.0, 0.01))
        outcomes = sorted(set(p) | set(q))  # the convolution leaves out histograms of mass 0
        return most_powerful_tpr([p.get(h, 0) for h in outcomes], [q.get(h, 0) for h in outcomes], alpha)

    for alpha, point in zip(fprs, points):
        alpha = mpmath.mpf(alpha)
        worst = max(tpr(first, others, alpha) for first in (0, 1) for others in itertools.combinations_with_replacement((0, 1), 2))
        allocation = max(tpr(first, (background,) * 2, alpha) for first in (0, 1) for background in (first, 1 - first))
        for bracket in point["directions"].values():
            assert float(worst) * (1 - 1e-13) <= bracket["upper"]
            assert float(allocation) * (1 - 1e-3) <= bracket["lower"] <= float(allocation) * (1 + 1e-13)
