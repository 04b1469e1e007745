"""Shuffled check-in RDP (Liew et al. Thm 2 / Eq. (5), Thm 4): the k = 0-restored Thm 4 against an
mpmath evaluation of the formula and against notes §7's worked example; the exact specific-pair
lower bound against Eq. (8) (γ = 1), the notes' per-k moments and a direct mpmath sum; and the
one-sided relations between them."""

import math

import mpmath
import numpy as np
import pytest

from verifier._types import Direction, Side
from verifier.errors import InvalidArgument, NotApplicable
from verifier.pairs import Gaussian, Laplace
from verifier.rdp import curve_for, epsilon_upper_for
from verifier.rdp.checkin import checkin_lower, checkin_upper, theorem4_upper
from verifier.rdp.checkin_published import lemma1_printed, theorem4_printed, theorem5_optimistic, fmt_shuffle_printed
from verifier.rdp.shuffle import shuffle_lower
from verifier.schemes import CheckIn

#: float64 log-space evaluation against 40-digit mpmath.
RTOL_MPMATH = 1e-9
#: Done-when 2 of issue 14: notes §7's ε within 0.1%.
RTOL_EXAMPLE = 1e-3


def thm4_mpmath(n: int, gamma: float, sigma: float, lam: int, with_k0: bool = True) -> float:
    """Thm 4 (Δ = 2 constants as printed), term by term in mpmath with every k."""
    with mpmath.workdps(40):
        g = mpmath.mpf(gamma)
        total = (1 - g) ** n if with_k0 else mpmath.mpf(0)
        for k in range(1, n + 1):
            w = mpmath.binomial(n, k) * g**k * (1 - g) ** (n - k)
            q = mpmath.mpf(k) / n
            e2 = mpmath.mpf(4) / (k * sigma**2)
            inner = 1 + q**2 * mpmath.binomial(lam, 2) * min(4 * (mpmath.exp(e2) - 1), 2 * mpmath.exp(e2))
            inner += sum(2 * q**j * mpmath.binomial(lam, j) * mpmath.exp(2 * j * (j - 1) / (k * mpmath.mpf(sigma) ** 2)) for j in range(3, lam + 1))
            total += w * inner
        return float(mpmath.log(total) / (lam - 1))


@pytest.mark.parametrize("n,gamma,sigma", [(40, 0.1, 1.0), (25, 0.5, 2.0), (60, 0.02, 0.7)])
def test_theorem4_with_k0_matches_mpmath(n, gamma, sigma):
    orders = [2, 3, 5, 9]
    got = theorem4_upper(Gaussian(sigma, 2.0), n, gamma, orders)
    for value, lam in zip(got, orders):
        want = thm4_mpmath(n, gamma, sigma, lam)
        assert value >= want * (1 - 1e-15)
        assert value == pytest.approx(want, rel=RTOL_MPMATH)


def test_theorem4_notes_worked_example():
    """Notes §7: n = 1000, γ = 0.1, σ = 1, δ = 1/n, integer λ 2…128, conversion
    ε = T·R(λ) + ln((λ−1)/λ) − (ln δ + ln λ)/(λ−1): R(2), R(8), R(32) (corrected) and ε at T = 1, 10, 100, 1000."""
    orders = np.arange(2, 129)
    r = theorem4_upper(Gaussian(1.0, 2.0), 1000, 0.1, orders)
    assert r[0] == pytest.approx(0.001631104, rel=1e-6)
    assert r[6] == pytest.approx(0.025534916, rel=1e-6)
    assert r[30] == pytest.approx(53.645, rel=1e-4)
    assert r[30] == pytest.approx(thm4_mpmath(1000, 0.1, 1.0, 32), rel=RTOL_MPMATH)
    delta = 1e-3

    def eps(t: int) -> float:
        return float(np.min(t * r + np.log((orders - 1) / orders) - (math.log(delta) + np.log(orders)) / (orders - 1)))

    for t, printed in [(1, 0.5030), (10, 0.7902), (100, 2.1012), (1000, 6.0905)]:
        assert eps(t) == pytest.approx(printed, rel=RTOL_EXAMPLE)
    # verifier's own best: per-k min with the unsubsampled RDP, orders 2…256 refined fractionally
    ours = epsilon_upper_for(CheckIn(Gaussian(1.0, 2.0), 1000, 0.1, 100, "sum"), delta, Direction.REMOVE)
    assert ours.value <= eps(100) * (1 + 1e-9)


def test_printed_theorem4_drops_k0_and_goes_negative():
    """Errata 10: without the k = 0 term the value is below the restored one, and below 0 (hence
    below every Rényi divergence) when (1 − γ)^n is large."""
    printed = theorem4_printed(1.0, 5, 0.01, [2, 8])
    restored = theorem4_upper(Gaussian(1.0, 2.0), 5, 0.01, [2, 8])
    assert all(p.label == "published_formula" for p in printed)
    assert printed[0].value < 0 and all(p.value <= r for p, r in zip(printed, restored))
    assert printed[0].value == pytest.approx(thm4_mpmath(5, 0.01, 1.0, 2, with_k0=False), rel=RTOL_MPMATH)
    assert np.all(restored > 0)


def lower_mpmath_sum(n: int, gamma: float, sigma: float, delta_sens: float, lam: int) -> float:
    """Exact specific-pair RDP of the Gaussian sum aggregation: mixture over k of the subsampled
    Gaussian (1−q)N(0,kσ²) + qN(Δ,kσ²) vs N(0,kσ²), by its binomial moment expansion."""
    with mpmath.workdps(40):
        g = mpmath.mpf(gamma)
        total = mpmath.mpf(0)
        for k in range(0, n + 1):
            w = mpmath.binomial(n, k) * g**k * (1 - g) ** (n - k)
            if k == 0:
                total += w
                continue
            q = mpmath.mpf(k) / n
            total += w * sum(
                mpmath.binomial(lam, j) * (1 - q) ** (lam - j) * q**j * mpmath.exp(j * (j - 1) * mpmath.mpf(delta_sens) ** 2 / (2 * k * sigma**2))
                for j in range(lam + 1)
            )
        return float(mpmath.log(total) / (lam - 1))


def test_exact_lower_bounds_match_independent_evaluations():
    got = checkin_lower(Gaussian(1.5, 2.0), 30, 0.2, [2, 4, 7], "sum")
    for value, lam in zip(got, [2, 4, 7]):
        want = lower_mpmath_sum(30, 0.2, 1.5, 2.0, lam)
        assert value <= want * (1 + 1e-15) and value == pytest.approx(want, rel=1e-8)
    # γ = 1: every user checks in, the shuffle lower bound is Eq. (8) itself (notes §7 item 26)
    assert checkin_lower(Gaussian(1.2), 8, 1.0, [3], "shuffle")[0] == pytest.approx(0.18191837472493866, rel=1e-12)
    assert checkin_lower(Gaussian(1.2), 8, 1.0, [3], "shuffle")[0] == pytest.approx(float(shuffle_lower(Gaussian(1.2), 8, [3])[0]), rel=1e-12)


@pytest.mark.parametrize("n,k,lam,sigma,moment", [(10, 4, 4, 1.5, 1.155504), (5, 3, 3, 1.0, 1.952918)])
def test_per_k_shuffle_moments_match_the_notes(n, k, lam, sigma, moment):
    """Notes §7 item 26 (exact values, confirmed there by Monte Carlo): E_{q_k}[(p_k/q_k)^λ] given k.
    Isolated by the identity R(λ) for Bin(n, γ) with γ → the point mass at k is not available, so the
    moment is rebuilt from Eq. (8) at n → k by the binomial expansion in mpmath."""
    with mpmath.workdps(30):
        q = mpmath.mpf(k) / n
        s = [mpmath.mpf(1), mpmath.mpf(1)] + [mpmath.exp((j - 1) * float(shuffle_lower(Gaussian(sigma), k, [j])[0])) for j in range(2, lam + 1)]
        e = sum(mpmath.binomial(lam, j) * (1 - q) ** (lam - j) * q**j * s[j] for j in range(lam + 1))
    assert float(e) == pytest.approx(moment, abs=2e-6)


@pytest.mark.parametrize("n", [3, 12, 80])
@pytest.mark.parametrize("gamma", [0.01, 0.3, 0.95])
@pytest.mark.parametrize("sigma", [0.6, 1.0, 4.0])
def test_property_theorem4_is_above_the_exact_lower_bound(n, gamma, sigma):
    """Done-when 2: per-round Thm 4 (k = 0 restored) >= the exact specific-pair RDP of the same release
    (Gaussian sum), at every order; and verifier's best upper bound lies between them. A WBK term
    with a wrong constant, a dropped k, or a missing k = 0 term breaks one of the inequalities."""
    orders = [2, 3, 4, 6, 10, 17, 32]
    pair = Gaussian(sigma, 2.0)
    t4 = theorem4_upper(pair, n, gamma, orders)
    best = checkin_upper(pair, n, gamma, orders, "sum")
    low = checkin_lower(pair, n, gamma, orders, "sum")
    assert np.all(low >= 0) and np.all(low <= best) and np.all(best <= t4 * (1 + 1e-12))


def test_shuffled_release_is_less_private_than_the_sum_theorem4_is_not_for_shuffling():
    """Finding (README): the exact shuffle-aggregation lower bound exceeds Thm 4 (sum aggregation)
    e.g. at n = 1000, γ = 0.1, σ = 0.5, λ = 4 even with the notes' sensitivity-1 pair — not a flaw of Thm 4,
    which bounds the sum only, but Thm 4 must not be used for shuffled check-in."""
    lam = [4]  # 0.440 vs 0.0180
    shuffled_lower = checkin_lower(Gaussian(0.5, 1.0), 1000, 0.1, lam, "shuffle")[0]
    sum_upper = theorem4_upper(Gaussian(0.5, 2.0), 1000, 0.1, lam)[0]
    assert shuffled_lower > sum_upper + 0.4


def test_curve_sides_rounds_and_applicability():
    scheme = CheckIn(Gaussian(1.0, 2.0), 50, 0.1, rounds=3, aggregation="sum")
    upper = curve_for(scheme, [2, 2.5, 4], Direction.ADD)
    assert upper.side is Side.UPPER and not upper.exact.any()
    assert upper.values[1] == upper.values[2] * 1.0 or upper.values[1] <= upper.values[2]
    np.testing.assert_allclose(upper.values[0], 3 * checkin_upper(Gaussian(1.0, 2.0), 50, 0.1, [2], "sum")[0], rtol=1e-14)
    with pytest.raises(NotApplicable):
        curve_for(CheckIn(Laplace(1.0), 50, 0.1, aggregation="sum"), [2], Direction.ADD)
    with pytest.raises(InvalidArgument):
        checkin_upper(Gaussian(1.0), 50, 0.1, [2.5], "sum")
    # shuffle aggregation of any pair: upper from the pair's own RDP through WBK
    lap = checkin_upper(Laplace(1.0), 50, 0.1, [2, 8], "shuffle")
    assert np.all(lap > checkin_lower(Laplace(1.0), 50, 0.1, [2, 8], "shuffle"))


def test_lemma1_as_printed_is_not_a_dp_to_rdp_bound():
    """Issue 14 / notes §2: randomized response with ε0 = 1 is (1, 0)-DP with D_2 = 0.7353 (closed
    form), but Lemma 1 gives 0; with δ = 1e-3 it gives 0.0069 at λ = 2 and 0.450 at λ = 8 (notes)."""
    p = math.e / (1 + math.e)
    d2 = math.log(p * p / (1 - p) + (1 - p) ** 2 / p)
    assert d2 == pytest.approx(0.7353, abs=5e-4)
    printed = lemma1_printed(2, 1.0, 0.0)
    assert printed.label == "published_formula" and printed.value < 1e-12 < d2
    assert lemma1_printed(2, 1.0, 1e-3).value == pytest.approx(0.0069, abs=1e-4)
    assert lemma1_printed(8, 1.0, 1e-3).value == pytest.approx(0.450, abs=1e-3)


def test_theorem5_is_labelled_optimistic_and_fmt_regime_is_reported():
    t5 = theorem5_optimistic(1.0, 1000, 100, [2, 8])
    assert all(v.label == "optimistic" for v in t5) and t5[0].value < t5[1].value
    eps, delta = fmt_shuffle_printed(2.0, 1e-8, 100, 1e-4)
    assert eps.in_regime is False and "outside" in eps.note
    eps_ok, _ = fmt_shuffle_printed(2.0, 0.0, 20000, 1e-4)
    assert eps_ok.in_regime is True and eps_ok.value < 2.0


def test_infinite_base_divergence_gives_an_infinite_upper_bound_not_a_small_one():
    """An (ε0, δ0)-DP step with δ0 > 0 has infinite Rényi divergence: the WBK mixture must be +∞
    (a log-sum-exp that turned the infinite terms into −∞ would return ln w_0/(λ−1) < 0, or a
    small value: an unsound upper bound)."""
    from verifier.pairs import ApproxDP

    assert np.all(np.isinf(checkin_upper(ApproxDP(1.0, 0.01), 10, 0.5, [2, 3], "shuffle")))


def test_rdp_cli_rejects_an_uncovered_combination_with_exit_2(capsys):
    from verifier.cli import main

    code = main(["rdp", "--mechanism", "laplace", "--scale", "1", "--scheme", "checkin", "--users", "10", "--rate", "0.1", "--aggregation", "sum"])
    err = capsys.readouterr().err
    assert code == 2 and "Gaussian pair only" in err and err.count("\n") == 1
