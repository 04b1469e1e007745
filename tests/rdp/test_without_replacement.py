"""RDP of fixed-size batches under replace-one: WBK 2019 Thm 9 and Steinke §6.7's group-privacy
bound against their formulas in mpmath, the curve above the exact divergence of an attained pair
of neighbours, and beside dp_accounting's implementation of the same theorem."""

import math

import mpmath
import numpy as np
import pytest

from verifier import Direction, Gaussian
from verifier.rdp import curve_for
from verifier.rdp.without_replacement import group_privacy_upper, wbk_upper
from verifier.schemes import WithoutReplacement

MPMATH_DPS = 40  # working precision of this module's tests (tests/conftest.py)
SIGMA, SHIFT = 1.1, 2.0  # records clipped at 1: the replace-one pair is N(2, 1.1²) vs N(0, 1.1²)
Q = 256 / 60000
ORDERS = np.arange(2, 13)
#: The float64 log-sum is moved up by 1e-12 of the log-magnitudes involved (checkin.FLOAT_MARGIN):
#: about 1e-8 relative on a divergence of 1e-3.
MARGIN_RTOL = 1e-7


def gaussian_eps(j):
    return mpmath.mpf(j) * SHIFT**2 / (2 * SIGMA**2)


def wbk_reference(alpha, q):
    """WBK 2019 Thm 9 with ε(∞) = ∞ (min{2, ·} = 2), straight from its statement."""
    q = mpmath.mpf(q)
    e2 = gaussian_eps(2)
    total = 1 + q**2 * mpmath.binomial(alpha, 2) * min(4 * mpmath.expm1(e2), 2 * mpmath.exp(e2))
    for j in range(3, alpha + 1):
        total += 2 * q**j * mpmath.binomial(alpha, j) * mpmath.exp((j - 1) * gaussian_eps(j))
    return mpmath.log(total) / (alpha - 1)


def thm34(alpha, q):
    """Steinke 2022, Thm 34's sum for the Gaussian pair (exact D_α(qP + (1−q)Q ‖ Q)), mpmath."""
    q = mpmath.mpf(q)
    total = sum(
        mpmath.binomial(alpha, k) * (1 - q) ** (alpha - k) * q**k * mpmath.exp((k - 1) * gaussian_eps(k)) for k in range(alpha + 1)
    )
    return mpmath.log(total) / (alpha - 1)


def test_wbk_matches_its_statement():
    got = wbk_upper(Gaussian(SIGMA, SHIFT), Q, ORDERS)
    for alpha, value in zip(ORDERS, got):
        ref = float(wbk_reference(int(alpha), Q))
        assert ref <= value <= ref * (1 + MARGIN_RTOL)


def test_group_privacy_matches_its_statement():
    """α'/(α'−1)·D_{⌈α(α'−1)/(α'−α)⌉}(M‖R) + D_{α'}(R‖M'), minimised over α' in α+1 … 2α, each term
    Thm 34's exact sum (the Gaussian pair is symmetric, so Thm 35's max is the same sum)."""
    got = group_privacy_upper(Gaussian(SIGMA, SHIFT), 0.05, np.array([2, 3, 5]))
    for alpha, value in zip((2, 3, 5), got):
        ref = min(
            mpmath.mpf(outer) / (outer - 1) * thm34(math.ceil(alpha * (outer - 1) / (outer - alpha)), 0.05) + thm34(outer, 0.05)
            for outer in range(alpha + 1, 2 * alpha + 1)
        )
        assert float(ref) <= value <= float(ref) * (1 + MARGIN_RTOL)


@pytest.mark.parametrize("q", [Q, 0.05, 0.5])
def test_curve_lies_above_an_attained_pair(q):
    """The fixed orientation (others at v, the target switching v → v − 2) is an attained pair of
    neighbours whose per-step divergence is Thm 34's exact sum: every upper bound must cover it."""
    n = 1000
    batch = max(1, round(q * n))
    scheme = WithoutReplacement(Gaussian(SIGMA, SHIFT), n, batch, 3)
    curve = curve_for(scheme, ORDERS.astype(float), Direction.REMOVE)
    for alpha, value in zip(ORDERS, curve.values):
        assert value >= 3 * float(thm34(int(alpha), batch / n)) * (1 - 1e-12)


def test_dp_accounting_computes_the_same_theorem_at_half_the_sigma():
    """dp_accounting's SampledWithoutReplacement RDP (Thm 9, tightened by WBK's Thm 27 for the
    Gaussian) with the noise multiplier σ/2 = 0.55 (sensitivity 1 ⇔ shift 2 at σ = 1.1) lies at or
    below ours and agrees at these orders; with σ = 1.1 (google/differential-privacy #378) it is
    far below: the bug."""
    rdp = pytest.importorskip("dp_accounting.rdp.rdp_privacy_accountant")
    ours = wbk_upper(Gaussian(SIGMA, SHIFT), Q, ORDERS)
    right = rdp._compute_rdp_sample_wor_gaussian(Q, SIGMA / 2, ORDERS)
    wrong = rdp._compute_rdp_sample_wor_gaussian(Q, SIGMA, ORDERS)
    assert np.all(right <= ours * (1 + 1e-12))
    np.testing.assert_allclose(right, ours, rtol=MARGIN_RTOL)
    assert np.all(wrong < 0.5 * ours)


def test_zcdp_of_replace_one_subsampling_is_the_unamplified_replace_one_rho():
    """ρ <= T·(2C)²/(2σ²) for fixed batches and for Poisson under replace-one (Lemma 33.6: the
    mixtures share R); at q = 1 that is exact (the full-batch Gaussian with shift 2: D_α = αT·2/σ²)."""
    from verifier.rdp.zcdp import rho_upper
    from verifier.schemes import PoissonReplaceOne

    assert rho_upper(WithoutReplacement(Gaussian(4.0, 2.0), 1000, 1000, 100)) == pytest.approx(12.5, rel=1e-15)
    assert rho_upper(WithoutReplacement(Gaussian(4.0, 2.0), 1000, 10, 100)) == pytest.approx(12.5, rel=1e-15)
    assert rho_upper(PoissonReplaceOne(Gaussian(4.0, 1.0), 0.01, 100)) == pytest.approx(12.5, rel=1e-15)
