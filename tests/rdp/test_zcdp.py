"""zCDP: ρ of schemes and the zCDP → (ε, δ) conversions, against independent references.

References: ρ = Δ²/(2σ²) (Steinke 2022, Lemma 12) and the exact Gaussian ε(δ) (Cor 8) in mpmath at
40 digits; the standard conversion ε = ρ + 2√(ρ ln(1/δ)) (Remark 15) in mpmath; the notes' §10.6
table of Prop 14 values; exact Rényi divergences of pure-DP pairs (ρ-zCDP means D_α <= αρ).
"""

import math

import mpmath as mp
import pytest

from verifier import Direction, InvalidArgument, NotApplicable
from verifier.pairs import ApproxDP, Gaussian, Laplace, RandomizedResponse
from verifier.rdp import zcdp
from verifier.rdp.conversion import Conversion
from verifier.schemes import Composed, Poisson, Single

DPS = 40


def gaussian_delta(rho, eps) -> mp.mpf:
    """Cor 8: δ(ε) = Φ̄((ε − ρ)/√(2ρ)) − e^ε Φ̄((ε + ρ)/√(2ρ)) for the Gaussian with ρ = Δ²/(2σ²)."""
    with mp.workdps(DPS):
        rho, eps = mp.mpf(rho), mp.mpf(eps)
        s = mp.sqrt(2 * rho)
        return mp.ncdf(-(eps - rho) / s) - mp.exp(eps) * mp.ncdf(-(eps + rho) / s)


def gaussian_epsilon(rho, delta) -> mp.mpf:
    with mp.workdps(DPS):
        return mp.findroot(lambda e: gaussian_delta(rho, e) - delta, (mp.mpf(0), mp.mpf(100)), solver="bisect", tol=1e-30)


@pytest.mark.parametrize("sigma, steps", [(0.5, 1), (1.0, 1), (1.1, 1), (2.0, 10), (3.7, 250)])
def test_gaussian_rho_and_conversions(sigma, steps):
    """ρ = T/(2σ²) (rounded up, within 2 ulps); both converted ε >= the exact Gaussian ε (a
    conversion that is not a bound falls below); Prop 14 <= standard; standard = Remark 15."""
    scheme = Composed(Single(Gaussian(sigma)), steps) if steps > 1 else Single(Gaussian(sigma))
    with mp.workdps(DPS):
        exact_rho = mp.mpf(steps) / (2 * mp.mpf(sigma) ** 2)
    rho = zcdp.rho_upper(scheme)
    assert exact_rho <= rho <= exact_rho * (1 + 4e-16)
    for delta in (1e-3, 1e-5, 1e-10):
        exact_eps = gaussian_epsilon(exact_rho, delta)
        tight = zcdp.epsilon_from_rho(rho, delta, Conversion.IMPROVED).value
        standard = zcdp.epsilon_from_rho(rho, delta, Conversion.CLASSICAL).value
        remark15 = exact_rho + 2 * mp.sqrt(exact_rho * mp.log(1 / mp.mpf(delta)))
        assert exact_eps <= tight <= standard
        assert remark15 <= standard <= remark15 * (1 + 1e-12)


@pytest.mark.parametrize(
    "rho, eps, tight, simple",
    [(0.005, 0.11, "0.014930204", "0.57622907"), (0.05, 1, "0.00038570916", "0.010970998"),
     (0.5, 1, "0.24684633", "0.8824969"), (0.5, 5, "2.8961228e-6", "4.0065297e-5"), (5, 10.1, "0.098391861", "0.27239556")],
)
def test_delta_conversions_match_the_notes_table(rho, eps, tight, simple):
    """Notes §10.6 (8 printed digits); the Gaussian's exact δ lies below both."""
    got_tight = zcdp.delta_from_rho(rho, eps, Conversion.IMPROVED).value
    got_simple = zcdp.delta_from_rho(rho, eps, Conversion.CLASSICAL).value
    assert got_tight == pytest.approx(float(tight), rel=1e-7)
    assert got_simple == pytest.approx(float(simple), rel=1e-7)
    assert gaussian_delta(rho, eps) <= got_tight <= got_simple


def test_rho_zero_is_the_identical_pair():
    """ApproxDP(0, 0) has P = Q: ρ = 0, ε(δ) = 0 and δ(ε) = 0 for ε >= 0, in both conversions."""
    assert zcdp.rho_upper(Composed(Single(ApproxDP(0.0, 0.0)), 5)) == 0.0
    for conversion in Conversion:
        assert zcdp.epsilon_from_rho(0.0, 1e-5, conversion).value == 0.0
        assert zcdp.delta_from_rho(0.0, 0.0, conversion).value == 0.0
        assert zcdp.delta_from_rho(0.0, -0.1, conversion).value == 1.0


def test_standard_delta_is_trivial_at_or_below_rho():
    assert zcdp.delta_from_rho(0.5, 0.5, Conversion.CLASSICAL).value == 1.0
    assert zcdp.delta_from_rho(50.0, 10.0, Conversion.IMPROVED).value == 1.0  # best t ~ e^-40: order stays > 1
    assert zcdp.delta_from_rho(50.0, 50.0 + 1e-14, Conversion.CLASSICAL).value == 1.0
    assert zcdp.delta_from_rho(0.5, -1.0, Conversion.IMPROVED).value == 1.0


@pytest.mark.parametrize("pair, eps0", [(Laplace(2.0, 1.0), 0.5), (Laplace(0.25, 1.0), 4.0), (RandomizedResponse(1.5, 3), 1.5), (ApproxDP(0.3, 0.0), 0.3)])
def test_pure_dp_pairs_have_rho_at_most_eps0_squared_over_two(pair, eps0):
    """Prop 16: ρ <= ε₀²/2; the sup over orders (issue 33) may be smaller, but D_α <= αρ must hold at
    every order (exact Rényi; catches a ρ too small)."""
    scheme = Composed(Single(pair), 4)
    rho = zcdp.rho_upper(scheme)
    assert rho <= 4 * mp.mpf(eps0) ** 2 / 2 * (1 + mp.mpf(2) ** -50)
    for alpha in (1.0001, 1.001, 1.01, 1.5, 2.0, 8.0, 64.0, 1e4):
        for direction in Direction:
            assert 4 * pair.renyi(alpha, direction).lower <= alpha * rho


def test_rho_lower_bounds():
    """D_α/α <= ρ*; equal for the Gaussian at every order; +∞ for ApproxDP with δ₀ > 0."""
    scheme = Composed(Single(Gaussian(2.0)), 10)
    for alpha in (1.5, 2.0, 100.0):
        assert zcdp.rho_lower_at(scheme, alpha, Direction.ADD) == pytest.approx(1.25, rel=1e-15)
        assert zcdp.rho_lower_at(scheme, alpha, Direction.ADD) <= 1.25
    assert zcdp.rho_lower_at(Single(ApproxDP(1.0, 1e-9)), 2.0, Direction.REMOVE) == math.inf
    with pytest.raises(NotApplicable):
        zcdp.rho_upper(Single(ApproxDP(1.0, 1e-9)))
    with pytest.raises(NotApplicable):
        zcdp.rho_upper(Poisson(Gaussian(1.0), 0.1, 3))
    with pytest.raises(NotApplicable):
        zcdp.renyi_lower(Poisson(Gaussian(1.0), 0.1, 3), 2.0, Direction.ADD)


def test_register_rho_extends_the_dispatch(monkeypatch):
    """A new scheme type (e.g. a sequence of phases) registers its ρ as the sum of its parts."""

    class Pair2:
        def __init__(self, first, second):
            self.first, self.second = first, second

    monkeypatch.setattr(zcdp, "RHO", dict(zcdp.RHO))
    zcdp.register_rho(Pair2, lambda s: zcdp.rho_upper(s.first) + zcdp.rho_upper(s.second))
    assert zcdp.rho_upper(Pair2(Single(Gaussian(1.0)), Single(Gaussian(0.5)))) == 2.5
    with pytest.raises(InvalidArgument, match="^scheme_type="):
        zcdp.register_rho("Pair2", len)


@pytest.mark.parametrize("call, name", [(lambda: zcdp.epsilon_from_rho(-1e-300, 1e-5), "rho"), (lambda: zcdp.epsilon_from_rho(-1.0, 1e-5), "rho"),
                                        (lambda: zcdp.epsilon_from_rho(1.0, 1.0), "delta"), (lambda: zcdp.delta_from_rho(1.0, math.nan), "epsilon")])
def test_bad_inputs_name_the_parameter(call, name):
    with pytest.raises(InvalidArgument, match=rf"^{name}="):
        call()
