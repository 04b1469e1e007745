"""Tests of the slow mpmath references (``verifier.reference``) against independent oracles.

The references compute from definitions (quadrature, exact sums).  The oracles here are the
closed forms and the tabulated values of the notes, which the references never use:
  * composition notes (Steinke 2022 extract) §10.5 Gaussian δ and ε(δ), §10.7 KOV / RR / Laplace
    anchors, §11.1 H1/H3/H6 identities, §13 D1 (duality), D4 (RR), D5 (Laplace);
  * random-allocation notes §7.1 (Gaussian profile) and §7.5 (exact t = 2 allocation profiles).
Each tolerance is a named constant with its reason.
"""

from __future__ import annotations

import enum
import itertools
import random
import time

import mpmath
import pytest

from verifier import reference
from verifier.reference import pairs as ref

mpf = mpmath.mpf

# --- tolerances -------------------------------------------------------------------------------
#: References run at dps=50; an identity or closed form evaluated at 50+ digits must agree to
#: within a few units of the 50th digit.  1e-40 leaves ten digits for quadrature error estimates.
MP_RTOL = mpf("1e-40")
#: Anchors printed with 15 significant digits (notes §10.5, §10.7, §7.1): half a unit in the last
#: printed digit is ≤ 5e-15 relative; 1e-13 also covers values printed with 14 digits.
ANCHOR15_RTOL = mpf("1e-13")
#: Anchors printed with 12 significant digits (notes §10.5 ε(δ) table, §10.7 RR/Laplace values).
ANCHOR12_RTOL = mpf("1e-11")
#: notes §7.5 table: 9 significant digits, stated reliability "~8 significant digits".
ALLOC_RTOL = mpf("2e-8")
#: Float inputs that do not sum exactly to 1, or losses rounded to float64 (~1.1e-16 relative).
FLOAT_INPUT_ATOL = mpf("1e-14")
#: A nested all-numerical Gauss-Legendre quadrature at dps=15 (independent cross-check of the
#: allocation reference); it agrees to ~1e-14, so 1e-11 leaves room for its own error.
NESTED_QUAD_RTOL = mpf("1e-11")
#: Wall time budget for one reference call in the fast tests (they run at dps=50).
FAST_CALL_SECONDS = 5.0


#: Oracles (closed forms, sums) are evaluated at this many digits, above the references' 50.
ORACLE_DPS = 60


@pytest.fixture(autouse=True)
def oracle_precision():
    """Evaluate every oracle in these tests at ORACLE_DPS digits (mpmath's default is 15)."""
    with mpmath.workdps(ORACLE_DPS):
        yield


def rel_err(value, exact):
    value, exact = mpf(value), mpf(exact)
    if exact == 0:
        return abs(value)
    return abs(value - exact) / abs(exact)


def phibar(z):
    return mpmath.erfc(z / mpmath.sqrt(2)) / 2


def gaussian_delta_cor8(rho, eps):
    """Steinke 2022, Cor 8 (valid for every real ε as a formula for the hockey stick)."""
    s = mpmath.sqrt(2 * rho)
    return phibar((eps - rho) / s) - mpmath.exp(eps) * phibar((eps + rho) / s)


def sigma_of_rho(rho):
    """σ with Δ = 1 and ρ = Δ²/(2σ²)."""
    return 1 / mpmath.sqrt(2 * mpf(rho))


DIRECTIONS = ("remove", "add")


# =============================================================================================
# Gaussian
# =============================================================================================


@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize(
    "rho, eps",
    [(0.01, 0.5), (0.01, 1), (0.5, 0), (0.5, 0.5), (0.5, 1), (0.5, 3), (2, 0), (2, 1), (2, 3),
     (0.5, -2), (0.5, -10), (0.5, 30), (1e-4, 0.1), (50, 3)],
)
def test_gaussian_delta_matches_cor8_closed_form(rho, eps, direction):
    with mpmath.workdps(60):
        exact = gaussian_delta_cor8(mpf(rho), mpf(eps))
        sigma = sigma_of_rho(rho)
    value = ref.gaussian_delta(sigma, eps, direction)
    assert isinstance(value, mpmath.mpf)
    assert rel_err(value, exact) < MP_RTOL


@pytest.mark.parametrize(
    "rho, eps, expected",
    [  # composition notes §10.5 (ρ = Δ²/2σ², Δ = 1)
        (0.01, 0.5, "9.19389868941551e-6"),
        (0.01, 1, "2.43643839737096e-14"),
        (0.5, 0, "0.382924922548026"),
        (0.5, 0.5, "0.238421708134877"),
        (0.5, 1, "0.126936737506644"),
        (0.5, 3, "0.00153718536940095"),
        (2, 0, "0.682689492137086"),
        (2, 1, "0.50986166005467"),
        (2, 3, "0.183813076544472"),
        # the notes' own quadrature was only ~1e-2 relative here; the closed form gives this value
        ("0.01", 3, "1.07014286553542e-101"),
    ],
)
def test_gaussian_delta_composition_notes_anchors(rho, eps, expected):
    with mpmath.workdps(60):
        sigma = sigma_of_rho(mpf(rho))
    for direction in DIRECTIONS:
        assert rel_err(ref.gaussian_delta(sigma, eps, direction), mpf(expected)) < ANCHOR15_RTOL


@pytest.mark.parametrize(
    "sigma, eps, expected",
    [  # random-allocation notes §7.1
        (1, 0, "0.3829249225480263"),
        (1, 0.5, "0.23842170813487656"),
        (1, 1, "0.12693673750664392"),
        (2, 0.1, "0.15926050741399173"),
        (0.5, 2, "0.33189799877682935"),
    ],
)
def test_gaussian_delta_allocation_notes_anchors(sigma, eps, expected):
    assert rel_err(ref.gaussian_delta(sigma, eps, "remove"), mpf(expected)) < ANCHOR15_RTOL


def test_gaussian_delta_sensitivity_scales_like_rho():
    # Only ρ = Δ²/(2σ²) matters (Cor 8): (σ, Δ) = (2, 2) is the same pair as (1, 1) up to scaling.
    a = ref.gaussian_delta(2, 0.7, "remove", sensitivity=2)
    b = ref.gaussian_delta(1, 0.7, "remove")
    assert rel_err(a, b) < MP_RTOL


def test_gaussian_delta_infinite_epsilon():
    assert ref.gaussian_delta(1, mpmath.inf, "remove") == 0
    assert ref.gaussian_delta(1, mpmath.ninf, "add") == 1


@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("sigma", [1, 0.3, 5])
@pytest.mark.parametrize("alpha", [1, 0.5, 1.5, 2, 30])
def test_gaussian_renyi_is_alpha_rho(sigma, alpha, direction):
    # Steinke 2022, Lemma 33.4 / notes §11.2 G5 (exact for every real α > 0; α = 1 is KL = ρ).
    rho = 1 / (2 * mpf(sigma) ** 2)
    assert rel_err(ref.gaussian_renyi(sigma, alpha, direction), mpf(alpha) * rho) < MP_RTOL


@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("a", [-1, 0, 0.5, 1, 3])
def test_gaussian_moment(a, direction):
    # E_B[(A/B)^a] = e^{a(a−1)ρ} (G5: E[e^{tZ}] = e^{t(t+1)ρ} with t = a − 1 under A).
    sigma, rho = 0.8, 1 / (2 * mpf(0.8) ** 2)
    assert rel_err(ref.gaussian_moment(sigma, a, direction), mpmath.exp(a * (a - 1) * rho)) < MP_RTOL


@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("under", ["P", "Q"])
@pytest.mark.parametrize("sigma, x", [(1, -3), (1, 0), (1, 0.5), (0.2, 2), (0.2, 40), (10, 0.001)])
def test_gaussian_loss_cdf_is_normal(sigma, x, direction, under):
    # Prop 3: the PLD is N(ρ, 2ρ) in both directions; Remark 5: the loss under the other measure
    # is N(−ρ, 2ρ).
    rho = 1 / (2 * mpf(sigma) ** 2)
    own = (direction == "remove") == (under == "P")
    mean = rho if own else -rho
    exact = mpmath.ncdf((mpf(x) - mean) / mpmath.sqrt(2 * rho))
    assert rel_err(ref.gaussian_loss_cdf(sigma, x, direction, under), exact) < MP_RTOL


@pytest.mark.parametrize(
    "rho, delta, expected",
    [  # composition notes §10.5 ("eps(delta) for the Gaussian, exact"), 12 digits
        (0.01, 1e-5, "0.496975363915"),
        (0.1, 1e-6, "1.9945269007"),
        (0.5, 1e-5, "4.37717809568"),
        (2.5, 1e-6, "12.5952467355"),
    ],
)
def test_gaussian_epsilon_anchors(rho, delta, expected):
    sigma = sigma_of_rho(rho)
    eps = ref.gaussian_epsilon(sigma, delta, "remove", dps=30)
    assert rel_err(eps, mpf(expected)) < ANCHOR12_RTOL
    # round trip at full precision
    assert rel_err(ref.gaussian_delta(sigma, eps, "remove", dps=30), delta) < mpf("1e-25")


def test_gaussian_epsilon_edges_and_negative_epsilon():
    assert ref.gaussian_epsilon(1, 0, "add") == mpmath.inf
    assert ref.gaussian_epsilon(1, 1, "add") == mpmath.ninf
    eps = ref.gaussian_epsilon(1, 0.9, "add", dps=30)  # δ > TV: ε < 0
    assert eps < 0
    assert rel_err(ref.gaussian_delta(1, eps, "add", dps=30), 0.9) < mpf("1e-25")


# =============================================================================================
# Laplace (notes §13 D5: derived formulas, used here as oracles)
# =============================================================================================


def laplace_delta_d5(eps0, eps):
    """1 − e^{(ε−ε0)/2} on [0, ε0], 0 beyond; ε < 0 through the duality D1 (Laplace is symmetric)."""
    if eps >= eps0:
        return mpf(0)
    if eps >= 0:
        return 1 - mpmath.exp((eps - eps0) / 2)
    return 1 - mpmath.exp(eps) + mpmath.exp(eps) * laplace_delta_d5(eps0, -eps)


@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize(
    "eps0, eps", [(1, 0), (1, 0.5), (1, 0.999), (1, 1), (1, 2), (2, -1), (1, -3), (0.1, 0.05), (5, 4.9)]
)
def test_laplace_delta_matches_d5(eps0, eps, direction):
    scale = 1 / mpf(eps0)
    with mpmath.workdps(60):
        exact = laplace_delta_d5(1 / scale, mpf(eps))
    assert rel_err(ref.laplace_delta(scale, eps, direction), exact) < MP_RTOL


def test_laplace_delta_anchor():
    # composition notes §10.7: ε0 = 1, ε' = 1/3 -> 0.283468689426211.
    for direction in DIRECTIONS:
        value = ref.laplace_delta(1, mpf(1) / 3, direction)
        assert rel_err(value, mpf("0.283468689426211")) < ANCHOR15_RTOL


def test_laplace_delta_sensitivity():
    # Only ε0 = Δ/b matters.
    assert rel_err(ref.laplace_delta(2, 0.3, "add", sensitivity=3), ref.laplace_delta(mpf(2) / 3, 0.3, "add")) < MP_RTOL


def mironov_laplace_renyi(eps0, alpha):
    if alpha == 1:
        return eps0 + mpmath.exp(-eps0) - 1
    a = alpha
    return mpmath.log(a / (2 * a - 1) * mpmath.exp((a - 1) * eps0)
                      + (a - 1) / (2 * a - 1) * mpmath.exp(-a * eps0)) / (a - 1)


@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("eps0", [1, 0.3, 4])
@pytest.mark.parametrize("alpha", [1, 0.7, 1.5, 2, 10])
def test_laplace_renyi_matches_mironov(eps0, alpha, direction):
    # notes §13 D5 (Mironov 2017 closed form; KL = ε0 + e^{−ε0} − 1).
    exact = mironov_laplace_renyi(mpf(eps0), mpf(alpha))
    assert rel_err(ref.laplace_renyi(1 / mpf(eps0), alpha, direction), exact) < MP_RTOL


def test_laplace_kl_and_d2_anchors():
    # composition notes §10.7: KL(ε=1) = 0.367879441171, D_2(ε=1) = 0.619123629999.
    assert rel_err(ref.laplace_renyi(1, 1, "remove"), mpf("0.367879441171")) < ANCHOR12_RTOL
    assert rel_err(ref.laplace_renyi(1, 2, "remove"), mpf("0.619123629999")) < ANCHOR12_RTOL
    assert rel_err(ref.laplace_moment(1, 2, "add"), mpmath.exp(mpf("0.619123629999"))) < ANCHOR12_RTOL


def laplace_remove_cdf_d5(eps0, x, under):
    """CDF of L = ln(P/Q) under P (D5 PLD) or under Q (Lemma 6: dQ-law = e^{−z}·dP-law)."""
    if x < -eps0:
        return mpf(0)
    if x >= eps0:
        return mpf(1)
    if under == "P":  # atom e^{−ε0}/2 at −ε0, density (1/4)e^{(z−ε0)/2} on (−ε0, ε0)
        return mpmath.exp((x - eps0) / 2) / 2
    # under Q: atom 1/2 at −ε0, density (1/4)e^{−(z+ε0)/2} on (−ε0, ε0), atom e^{−ε0}/2 at +ε0
    return (1 + (1 - mpmath.exp(-(x + eps0) / 2))) / 2


@pytest.mark.parametrize("under", ["P", "Q"])
@pytest.mark.parametrize("x", [-2, -1, -0.5, 0, 0.5, 0.999, 1, 3])
def test_laplace_loss_cdf_matches_d5_pld(x, under):
    eps0 = mpf(1)
    exact = laplace_remove_cdf_d5(eps0, mpf(x), under)
    assert rel_err(ref.laplace_loss_cdf(1, x, "remove", under), exact) < MP_RTOL
    # ADD loss ln(Q/P) under Q has the same law as the REMOVE loss under P (symmetric pair).
    other = "Q" if under == "P" else "P"
    assert rel_err(ref.laplace_loss_cdf(1, x, "add", other), exact) < MP_RTOL


@pytest.mark.parametrize("delta", [0.1, 1e-3, 1e-30])
def test_laplace_epsilon_inverts_d5(delta):
    # ε(δ) = ε0 + 2 ln(1 − δ) for δ ≤ TV = 1 − e^{−ε0/2}.
    exact = 3 + 2 * mpmath.log1p(-mpf(delta))
    assert rel_err(ref.laplace_epsilon(mpf(1) / 3, delta, "remove", dps=30), exact) < mpf("1e-25")


def test_laplace_epsilon_edges():
    assert ref.laplace_epsilon(0.5, 0, "add") == 2
    assert ref.laplace_epsilon(0.5, 1, "add") == mpmath.ninf
    eps = ref.laplace_epsilon(1, 0.9, "remove", dps=30)
    assert eps < 0 and rel_err(ref.laplace_delta(1, eps, "remove", dps=30), 0.9) < mpf("1e-25")


# =============================================================================================
# Randomized response (notes §13 D4)
# =============================================================================================


@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("eps0", [1, 0.3, 3])
def test_rr_matches_d4(eps0, direction):
    e0 = mpf(eps0)
    for eps in (0, e0 / 3, e0):
        exact = (mpmath.exp(e0) - mpmath.exp(eps)) / (1 + mpmath.exp(e0))
        assert rel_err(ref.rr_delta(eps0, eps, direction), exact) < MP_RTOL  # absolute when exact = 0
    assert ref.rr_delta(eps0, e0 + 1, direction) == 0
    # TV = tanh(ε0/2), KL = ε0 tanh(ε0/2), D_α closed form.
    assert rel_err(ref.rr_delta(eps0, 0, direction), mpmath.tanh(e0 / 2)) < MP_RTOL
    assert rel_err(ref.rr_renyi(eps0, 1, direction), e0 * mpmath.tanh(e0 / 2)) < MP_RTOL
    for alpha in (mpf("1.5"), mpf(2), mpf(7)):
        exact = mpmath.log((mpmath.exp(alpha * e0) + mpmath.exp((1 - alpha) * e0)) / (1 + mpmath.exp(e0))) / (alpha - 1)
        assert rel_err(ref.rr_renyi(eps0, alpha, direction), exact) < MP_RTOL


def test_rr_d2_anchor():
    # composition notes §10.7: D_2 at ε0 = 1 is 0.735325664056.
    assert rel_err(ref.rr_renyi(1, 2, "remove"), mpf("0.735325664056")) < ANCHOR12_RTOL


def test_rr_loss_cdf_atoms_are_exact():
    e0 = mpf(1)
    low = 1 / (1 + mpmath.exp(e0))  # P(L = −ε0) under P
    assert rel_err(ref.rr_loss_cdf(1, -1, "remove", "P"), low) < MP_RTOL
    assert rel_err(ref.rr_loss_cdf(1, 0.999, "remove", "P"), low) < MP_RTOL
    assert ref.rr_loss_cdf(1, 1, "remove", "P") == 1  # the atom at exactly +ε0 is included
    assert ref.rr_loss_cdf(1, -1.001, "add", "Q") == 0
    # k = 3: the middle output has loss 0 exactly.
    assert rel_err(ref.rr_loss_cdf(1, 0, "remove", "P", k=3), 2 / (mpmath.e + 2)) < MP_RTOL


@pytest.mark.parametrize("delta", [0.1, 0.01])
def test_rr_epsilon_inverts_d4(delta):
    e0 = mpf(1)
    exact = mpmath.log(mpmath.exp(e0) - mpf(delta) * (1 + mpmath.exp(e0)))
    assert rel_err(ref.rr_epsilon(1, delta, "add"), exact) < MP_RTOL
    assert ref.rr_epsilon(1, 0, "add") == 1


def test_rr_k3_equals_discrete_pair():
    with mpmath.workdps(60):
        z = mpmath.exp(mpf(0.5)) + 2
        hi, lo = mpmath.exp(mpf(0.5)) / z, 1 / z
    p, q = [lo, hi, lo], [hi, lo, lo]
    for direction in DIRECTIONS:
        assert rel_err(ref.rr_delta(0.5, 0.2, direction, k=3), ref.discrete_delta(p, q, 0.2, direction)) < MP_RTOL
        assert rel_err(ref.rr_renyi(0.5, 3, direction, k=3), ref.discrete_renyi(p, q, 3, direction)) < MP_RTOL


# =============================================================================================
# Discrete pairs: identities (notes §11.1) and infinite losses
# =============================================================================================


def random_dyadic_pair(rng, n, zeros=True):
    """Masses that are exact floats and sum exactly to 1 (integers / 2^20)."""
    def vec():
        cuts = sorted(rng.sample(range(1, 2**20), n - 1))
        counts = [b - a for a, b in zip([0] + cuts, cuts + [2**20])]
        return [c / 2**20 for c in counts]
    p, q = vec(), vec()
    if zeros:  # q = 0 where p > 0 (infinite loss) and p = 0 where q > 0
        q[0], q[1] = 0.0, q[1] + q[0]
        p[-1], p[-2] = 0.0, p[-2] + p[-1]
    return p, q


@pytest.mark.parametrize("seed", range(5))
def test_discrete_duality_h6(seed):
    # notes §13 D1 / §11.1 H6: H_{e^ε}(P‖Q) = 1 − e^ε + e^ε H_{e^{−ε}}(Q‖P), for every real ε.
    rng = random.Random(seed)
    p, q = random_dyadic_pair(rng, 7, zeros=seed % 2 == 0)
    for eps in (-2.5, -0.3, 0.0, 0.4, 1.7):
        lhs = ref.discrete_delta(p, q, eps, "remove")
        e = mpmath.exp(mpf(eps))
        rhs = 1 - e + e * ref.discrete_delta(p, q, -eps, "add")
        assert abs(lhs - rhs) < MP_RTOL


@pytest.mark.parametrize("seed", range(3))
def test_discrete_tv_h3(seed):
    rng = random.Random(100 + seed)
    p, q = random_dyadic_pair(rng, 6)
    tv = mpmath.fsum(abs(mpf(a) - mpf(b)) for a, b in zip(p, q)) / 2
    for direction in DIRECTIONS:
        assert abs(ref.discrete_delta(p, q, 0, direction) - tv) < MP_RTOL


@pytest.mark.parametrize("direction", DIRECTIONS)
def test_continuous_duality(direction):
    # The same identity through the quadratures (Gaussian and Laplace).
    other = "add" if direction == "remove" else "remove"
    for eps in (-1.2, 0.3, 2.0):
        e = mpmath.exp(mpf(eps))
        g = ref.gaussian_delta(0.7, eps, direction)
        assert abs(g - (1 - e + e * ref.gaussian_delta(0.7, -eps, other))) < MP_RTOL
        lap = ref.laplace_delta(0.5, eps, direction)
        assert abs(lap - (1 - e + e * ref.laplace_delta(0.5, -eps, other))) < MP_RTOL


def test_infinite_loss_is_handled():
    # q = 0 where p > 0 (mass 0.5 of infinite REMOVE loss); p = 0 where q > 0 (mass 0.25 of
    # infinite ADD loss).  notes §11.1 H7: δ(ε) ≥ P[Z = +inf] and δ(ε) → P[Z = +inf].
    p = [0.5, 0.3, 0.2, 0.0]
    q = [0.0, 0.5, 0.25, 0.25]
    for eps in (0, 1, 5, 100):
        assert ref.discrete_delta(p, q, eps, "remove") >= 0.5
        assert ref.discrete_delta(p, q, eps, "add") >= 0.25
    assert ref.discrete_delta(p, q, 100, "remove") == 0.5
    assert ref.discrete_delta(p, q, mpmath.inf, "remove") == 0.5
    assert ref.discrete_delta(p, q, mpmath.inf, "add") == 0.25
    for alpha in (1, 1.5, 2):
        assert ref.discrete_renyi(p, q, alpha, "remove") == mpmath.inf
        assert ref.discrete_renyi(p, q, alpha, "add") == mpmath.inf
    assert ref.discrete_moment(p, q, 2, "remove") == mpmath.inf
    # Orders below 1 stay finite: Σ A^α B^{1−α} over the common support.
    half = mpmath.fsum(mpmath.sqrt(mpf(a) * mpf(b)) for a, b in zip(p, q))
    assert rel_err(ref.discrete_renyi(p, q, 0.5, "remove"), -2 * mpmath.log(half)) < MP_RTOL
    # PLD CDF: the infinite loss is counted only at +inf.
    assert rel_err(ref.discrete_loss_cdf(p, q, 1e6, "remove", "P"), 0.5) < MP_RTOL
    assert ref.discrete_loss_cdf(p, q, mpmath.inf, "remove", "P") == 1
    # ε(δ): +inf below the infinite mass, the largest finite loss at it.
    assert ref.discrete_epsilon(p, q, 0.4, "remove") == mpmath.inf
    l_max = mpmath.log(mpf(0.2)) - mpmath.log(mpf(0.25))
    assert rel_err(ref.discrete_epsilon(p, q, 0.5, "remove"), l_max) < MP_RTOL
    eps = ref.discrete_epsilon(p, q, 0.55, "remove")
    assert eps < l_max and rel_err(ref.discrete_delta(p, q, eps, "remove"), 0.55) < MP_RTOL


def test_finite_pair_with_only_infinite_losses():
    p, q = [1.0, 0.0], [0.0, 1.0]
    assert ref.discrete_delta(p, q, 3, "remove") == 1
    assert ref.discrete_epsilon(p, q, 0.5, "add") == mpmath.inf
    assert ref.discrete_loss_cdf(p, q, 0, "remove", "Q") == 1  # L = −inf under Q


def test_discrete_renyi_three_forms():
    # Def 32: E_B[(A/B)^α] = E_A[(A/B)^{α−1}]; also the moment at a = 0 and a = 1 is 1.
    rng = random.Random(7)
    p, q = random_dyadic_pair(rng, 5, zeros=False)
    alpha = mpf(2.5)
    e_a = mpmath.fsum(mpf(a) * (mpf(a) / mpf(b)) ** (alpha - 1) for a, b in zip(p, q))
    assert rel_err(ref.discrete_moment(p, q, alpha, "remove"), e_a) < MP_RTOL
    assert rel_err(ref.discrete_moment(p, q, 0, "add"), 1) < MP_RTOL
    assert rel_err(ref.discrete_moment(p, q, 1, "add"), 1) < MP_RTOL
    # Non-decreasing in α (Lemma 33.3).
    values = [ref.discrete_renyi(p, q, a, "add") for a in (0.5, 1, 1.5, 2, 4)]
    assert values == sorted(values)


def test_discrete_loss_cdf_brute_force():
    rng = random.Random(11)
    p, q = random_dyadic_pair(rng, 6)
    with mpmath.workdps(60):
        losses = [mpmath.log(mpf(b)) - mpmath.log(mpf(a)) if a > 0 and b > 0 else None for a, b in zip(p, q)]
    for x in (-1, 0, 0.5, 2):
        # ADD loss ln(q/p) under Q: q_i where ln(q_i/p_i) ≤ x; outcomes with p_i = 0 < q_i have
        # loss +inf and never count at finite x.
        exact = mpmath.fsum(mpf(b) for b, l in zip(q, losses) if l is not None and l <= x)
        assert rel_err(ref.discrete_loss_cdf(p, q, x, "add", "Q"), exact) < MP_RTOL


# =============================================================================================
# Discrete PLD sum (slow twin of the hockey kernel) and RR composition (KOV)
# =============================================================================================


def test_discrete_pld_delta_equals_hockey_stick():
    # Prop 7 (7.2) on the PLD of a pair equals the direct hockey-stick sum (H1).
    rng = random.Random(3)
    p, q = random_dyadic_pair(rng, 8)
    with mpmath.workdps(60):
        losses = [mpmath.log(mpf(a)) - mpmath.log(mpf(b)) for a, b in zip(p, q) if a > 0 and b > 0]
        probs = [a for a, b in zip(p, q) if a > 0 and b > 0]
        p_inf = sum(a for a, b in zip(p, q) if b == 0)
    eps_grid = [-1.0, 0.0, 0.25, 1.5]
    vector = ref.discrete_pld_delta(losses, probs, p_inf, eps_grid)
    assert isinstance(vector, list) and len(vector) == len(eps_grid)
    for eps, value in zip(eps_grid, vector):
        assert abs(value - ref.discrete_delta(p, q, eps, "remove")) < MP_RTOL
        assert value == ref.discrete_pld_delta(losses, probs, p_inf, eps)
    # Float losses: agreement to float rounding.
    float_losses = [float(l) for l in losses]
    assert abs(ref.discrete_pld_delta(float_losses, probs, p_inf, 0.25) - vector[2]) < FLOAT_INPUT_ATOL


def test_discrete_pld_delta_infinite_losses_and_subprobability():
    value = ref.discrete_pld_delta([1.0, -1.0, float("inf"), float("-inf")], [0.3, 0.2, 0.1, 0.1], 0.25, 0.5)
    exact = mpf(0.3) * -mpmath.expm1(mpf(0.5) - 1) + mpf(0.1) + mpf(0.25)
    assert abs(value - exact) < MP_RTOL
    assert ref.discrete_pld_delta([], [], 0.0, [0.0, 1.0]) == [0, 0]


@pytest.mark.parametrize("eps0, m", [(0.5, 1), (1.0, 3), (0.3, 6), (2.0, 10)])
def test_rr_composed_both_directions_equal_and_match_brute_force(eps0, m):
    # Brute force: the m-fold product pair of binary RR, hockey stick summed over 2^m outcomes.
    with mpmath.workdps(60):
        e = mpmath.exp(mpf(eps0))
        p1, q1 = [1 / (1 + e), e / (1 + e)], [e / (1 + e), 1 / (1 + e)]
        P = [mpmath.fprod(p1[i] for i in idx) for idx in itertools.product((0, 1), repeat=m)] if m <= 6 else None
        Q = [mpmath.fprod(q1[i] for i in idx) for idx in itertools.product((0, 1), repeat=m)] if m <= 6 else None
    for eps in (-0.5, 0.0, 0.7, eps0 * m / 2):
        remove = ref.rr_composed_delta(eps0, m, eps, "remove")
        add = ref.rr_composed_delta(eps0, m, eps, "add")
        assert abs(remove - add) < MP_RTOL
        if P is not None:
            assert abs(remove - ref.discrete_delta(P, Q, eps, "remove")) < MP_RTOL
    if m == 1:
        assert abs(ref.rr_composed_delta(eps0, 1, 0.2, "add") - ref.rr_delta(eps0, 0.2, "add")) < MP_RTOL


def kov_pair(eps, delta):
    """(ε, δ)-randomized response (the KOV worst case): 4 outputs, infinite loss ±∞ w.p. δ."""
    e = mpmath.exp(mpf(eps))
    d = mpf(delta)
    p = [d, (1 - d) * e / (1 + e), (1 - d) / (1 + e), mpf(0)]
    q = [mpf(0), (1 - d) / (1 + e), (1 - d) * e / (1 + e), d]
    return p, q


@pytest.mark.parametrize(
    "eps, k, delta, eps_prime, expected",
    [  # composition notes §10.7 (KOV vs brute force)
        (0.5, 3, 0.01, 0.4, "0.226338185880954"),
        (1, 4, 0.001, 1.5, "0.429854122008713"),
        (0.2, 5, 0, 0.3, "0.0786158229115876"),
        (0.3, 2, 0.05, 0, "0.231868742845044"),
    ],
)
def test_kov_anchors(eps, k, delta, eps_prime, expected):
    with mpmath.workdps(60):
        p1, q1 = kov_pair(eps, delta)
        P = [mpmath.fprod(p1[i] for i in idx) for idx in itertools.product(range(4), repeat=k)]
        Q = [mpmath.fprod(q1[i] for i in idx) for idx in itertools.product(range(4), repeat=k)]
    brute = ref.discrete_delta(P, Q, eps_prime, "remove")
    assert rel_err(brute, mpf(expected)) < ANCHOR15_RTOL
    # notes §13 D9: δ'_opt = 1 − (1−δ)^k + (1−δ)^k · (k-fold RR δ), with the RR part from the
    # binomial-sum reference.
    with mpmath.workdps(60):
        keep = (1 - mpf(delta)) ** k
        d9 = 1 - keep + keep * ref.rr_composed_delta(eps, k, eps_prime, "add", dps=60)
    assert abs(d9 - brute) < MP_RTOL
    if delta == 0:
        assert rel_err(ref.rr_composed_delta(eps, k, eps_prime, "remove"), mpf(expected)) < ANCHOR15_RTOL


# =============================================================================================
# Random allocation, t = 2 (random-allocation notes §7.5)
# =============================================================================================

ALLOCATION_TABLE = [  # ε, A remove, A add  (σ = 1, t = 2, k = 1)
    (0.00, "2.97762225e-01", "2.97762225e-01"),
    (0.25, "2.16845146e-01", "2.13502048e-01"),
    (0.50, "1.49177523e-01", "1.42686966e-01"),
    (0.75, "9.67846539e-02", "8.82532235e-02"),
    (1.00, "5.92065011e-02", "5.01976624e-02"),
    (1.50, "1.86648880e-02", "1.23616056e-02"),
    (2.00, "4.74577763e-03", "2.05592453e-03"),
    (3.00, "1.67702771e-04", "1.59026508e-05"),
]


@pytest.mark.parametrize("eps, remove, add", ALLOCATION_TABLE)
def test_allocation_t2_table(eps, remove, add):
    assert rel_err(ref.gaussian_allocation_t2_delta(1, eps, "remove"), mpf(remove)) < ALLOC_RTOL
    assert rel_err(ref.gaussian_allocation_t2_delta(1, eps, "add"), mpf(add)) < ALLOC_RTOL


@pytest.mark.parametrize("sigma", [0.5, 1, 2])
def test_allocation_t2_duality_and_tv(sigma):
    # H6 for the pair (P̄_2, Q^{⊗2}) links the two directions; at ε = 0 both are the TV distance.
    d = 30
    tol = mpf(10) ** (-(d - 6))
    a = ref.gaussian_allocation_t2_delta(sigma, 0, "remove", dps=d)
    b = ref.gaussian_allocation_t2_delta(sigma, 0, "add", dps=d)
    assert abs(a - b) < tol
    for eps in (0.4, 1.3):
        e = mpmath.exp(mpf(eps))
        lhs = ref.gaussian_allocation_t2_delta(sigma, eps, "remove", dps=d)
        rhs = 1 - e + e * ref.gaussian_allocation_t2_delta(sigma, -eps, "add", dps=d)
        assert abs(lhs - rhs) < tol * e


def test_allocation_t2_sits_between_known_bounds():
    # notes §7.5 bound checks: Cor 4.10 add bound δ_{N_{√2}}(ε − 1/4) ≥ exact add; and the t = 2
    # profile lies below the un-amplified Gaussian profile (allocation only helps).
    for eps in (0.0, 1.0, 3.0):
        exact_add = ref.gaussian_allocation_t2_delta(1, eps, "add")
        assert exact_add <= ref.gaussian_delta(mpmath.sqrt(2), eps - 0.25, "add", dps=30)
        assert ref.gaussian_allocation_t2_delta(1, eps, "remove") <= ref.gaussian_delta(1, eps, "remove", dps=30)


@pytest.mark.parametrize("direction, eps", [("remove", 1.0), ("add", 0.5)])
def test_allocation_t2_against_nested_numeric_quadrature(direction, eps):
    # Independent check of the closed-form (lognormal call/put) inner expectation: both
    # integrals numerically, Gauss-Legendre at 15 digits on [−9, 10] (outside it the Gaussian
    # weight is < e^{−40} relative), split where the integrand's kink (the (·)_+) sits.
    sigma = mpf(1)
    with mpmath.workdps(15):
        e = mpmath.exp(mpf(eps))
        lo_z, hi_z = mpf(-9), mpf(10)

        def phi(z):
            return mpmath.exp(-z**2 / (2 * sigma**2)) / (sigma * mpmath.sqrt(2 * mpmath.pi))

        def x_of(z):
            return mpmath.exp((2 * z - 1) / (2 * sigma**2))

        def z_of(x):  # inverse of x_of
            return sigma**2 * mpmath.log(x) + mpf(1) / 2

        def gl(f, a, b):
            if not a < b:
                return mpf(0)
            pts = [a + (b - a) * i / 4 for i in range(5)]
            return mpmath.quad(f, pts, method="gauss-legendre")

        def inner(z1):
            x1 = x_of(z1)
            if direction == "remove":
                k = 2 * e - x1
                cut = lo_z if k <= 0 else max(lo_z, z_of(k))
                return gl(lambda z2: phi(z2) * ((x1 + x_of(z2)) / 2 - e), cut, hi_z)
            k = 2 / e - x1
            if k <= 0:
                return mpf(0)
            return gl(lambda z2: phi(z2) * (1 - e * (x1 + x_of(z2)) / 2), lo_z, min(hi_z, z_of(k)))

        z_k = sigma**2 * (mpmath.log(2) + (eps if direction == "remove" else -eps)) + mpf(1) / 2
        nested = gl(lambda z: phi(z) * inner(z), lo_z, z_k) + gl(lambda z: phi(z) * inner(z), z_k, hi_z)
    value = ref.gaussian_allocation_t2_delta(1, eps, direction)
    assert rel_err(value, nested) < NESTED_QUAD_RTOL


# =============================================================================================
# API: precision, types, validation, enum directions, __all__
# =============================================================================================


def test_precision_is_configurable():
    v20 = ref.gaussian_delta(1, 1, "remove", dps=20)
    v50 = ref.gaussian_delta(1, 1, "remove")
    assert isinstance(v20, mpmath.mpf) and rel_err(v20, v50) < mpf("1e-18")
    with mpmath.workdps(80):
        v70 = ref.gaussian_delta(1, 1, "remove", dps=70)
        assert rel_err(v70, gaussian_delta_cor8(mpf(0.5), mpf(1))) < mpf("1e-60")


def test_enum_like_direction_and_measure_are_accepted():
    class Direction(enum.Enum):
        ADD = "add"
        REMOVE = "remove"

    class Measure(enum.Enum):
        P = "P"
        Q = "Q"

    assert ref.rr_delta(1, 0.5, Direction.ADD) == ref.rr_delta(1, 0.5, "add")
    assert ref.rr_loss_cdf(1, 0, Direction.REMOVE, Measure.Q) == ref.rr_loss_cdf(1, 0, "remove", "Q")


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda: ref.gaussian_delta(1, 1, "sideways"), ValueError, "direction"),
        (lambda: ref.gaussian_delta(-1, 1, "add"), ValueError, "sigma"),
        (lambda: ref.gaussian_delta(1, float("nan"), "add"), ValueError, "NaN"),
        (lambda: ref.laplace_delta(0, 1, "add"), ValueError, "scale"),
        (lambda: ref.gaussian_renyi(1, 0, "add"), ValueError, "alpha"),
        (lambda: ref.gaussian_delta(1, 1, "add", dps=5), ValueError, "dps"),
        (lambda: ref.gaussian_loss_cdf(1, 0, "add", "R"), ValueError, "under"),
        (lambda: ref.discrete_delta([0.5, 0.6], [0.5, 0.5], 0, "add"), ValueError, "sum"),
        (lambda: ref.discrete_delta([0.5, 0.5], [1.0], 0, "add"), ValueError, "len"),
        (lambda: ref.discrete_delta([1.5, -0.5], [0.5, 0.5], 0, "add"), ValueError, ">= 0"),
        (lambda: ref.rr_delta(1, 0, "add", k=1), ValueError, "k="),
        (lambda: ref.rr_composed_delta(1, -1, 0, "add"), ValueError, "m="),
        (lambda: ref.discrete_pld_delta([0.0], [0.5], 0.6, 0), ValueError, "> 1"),
        (lambda: ref.discrete_pld_delta([], [0.5], 0.0, 0), ValueError, "len"),
    ],
)
def test_invalid_arguments_are_refused(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_all_matches_public_names():
    public = {
        name for name, obj in vars(ref).items()
        if not name.startswith("_") and getattr(obj, "__module__", None) == ref.__name__
    }
    assert public <= set(ref.__all__)
    assert all(hasattr(ref, name) for name in ref.__all__)
    assert sorted(reference.__all__) == sorted(ref.__all__)
    assert all(getattr(reference, name) is getattr(ref, name) for name in reference.__all__)


def test_fast_calls_are_fast():
    start = time.perf_counter()
    ref.gaussian_delta(1, 1, "remove")
    ref.laplace_renyi(1, 2, "add")
    assert time.perf_counter() - start < FAST_CALL_SECONDS
