"""Trade-off curves β(α) and TPR at FPR α from PLD brackets (verifier.pld.tradeoff), against
independent references: the Gaussian-DP closed form TPR = Φ(Φ⁻¹(α) + μ) evaluated in mpmath, and the
exact Neyman–Pearson optimum of randomized response and its 3-fold composition computed by brute
force over the product space in exact rationals (no δ(ε) curve involved).

Each reference check is also run on deliberately broken conversions (an inequality the wrong way
round) to show it catches them:

- ``swapped``: the DOMINATED PLD used for the upper end and the DOMINATING one for the lower end;
- ``finite_grid_lower``: the lower end as a minimum of the dominated δ(ε) + e^ε α over a finite ε
  grid (a minimum over fewer points is too large: the finite-grid error on the unsafe side);
- ``nonnegative_eps_lower``: the lower end as the infimum over ε >= 0 only, as if δ(ε) mattered only
  where (ε, δ)-DP statements live (for α near 1/2 the optimal ε is negative).
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest

from verifier import Direction, Gaussian
from verifier._types import Bracket
from verifier.errors import InvalidArgument
from verifier.pairs import RandomizedResponse
from verifier.pld import scheme_pld
from verifier.pld.tradeoff import beta_bracket, pld_tpr, staircase_tpr, tpr_bracket
from verifier.schemes import Composed, Single

ALPHAS = np.array([1e-4, 1e-3, 1e-2, 0.05, 0.2, 0.5, 0.9])


def _gaussian_tpr(alpha: float, mu: float) -> float:
    """Φ(Φ⁻¹(α) + μ) at 40 digits (Dong, Roth & Su 2022, Eq. (2.3))."""
    with mp.workdps(40):
        z = -mp.sqrt(2) * mp.erfinv(1 - 2 * mp.mpf(alpha))  # Φ⁻¹(α)
        return float(mp.ncdf(z + mu))


def _np_tpr(w: list[Fraction], o: list[Fraction], alpha: Fraction) -> Fraction:
    """Neyman–Pearson optimum by brute force: atoms by decreasing W/O, the last one split."""
    order = sorted(range(len(w)), key=lambda i: -(w[i] / o[i]))
    tpr, budget = Fraction(0), alpha
    for i in order:
        if o[i] <= budget:
            tpr, budget = tpr + w[i], budget - o[i]
        else:
            return tpr + w[i] * budget / o[i]
    return tpr


def _rr_product(kappa: Fraction, times: int) -> tuple[list[Fraction], list[Fraction]]:
    """Binary RR with e^ε0 = kappa composed ``times`` times: the product laws W^T and O^T."""
    w1, o1 = [kappa / (1 + kappa), 1 / (1 + kappa)], [1 / (1 + kappa), kappa / (1 + kappa)]
    w, o = [], []
    for outcome in itertools.product((0, 1), repeat=times):
        w.append(np.prod([w1[b] for b in outcome], dtype=object))
        o.append(np.prod([o1[b] for b in outcome], dtype=object))
    return w, o


def _swapped(bracket, alphas):
    return Bracket(pld_tpr(bracket.dominating, alphas), pld_tpr(bracket.dominated, alphas))


def _finite_grid_lower(bracket, alphas):
    grid = np.linspace(-3.0, 6.0, 19)
    low = np.asarray(bracket.dominated.delta(grid))
    lower = np.array([min(1.0, float(np.min(low + np.exp(grid) * a))) for a in np.atleast_1d(alphas)])
    return Bracket(np.minimum(lower, 1.0), np.maximum(pld_tpr(bracket.dominating, alphas), lower))


def _nonnegative_eps_lower(bracket, alphas):
    grid = np.linspace(0.0, 6.0, 6001)
    low = np.asarray(bracket.dominated.delta(grid))
    lower = np.array([min(1.0, float(np.min(low + np.exp(grid) * a))) for a in np.atleast_1d(alphas)])
    return Bracket(lower, np.maximum(pld_tpr(bracket.dominating, alphas), lower))


CONVERSIONS = {"swapped": _swapped, "finite_grid_lower": _finite_grid_lower, "nonnegative_eps_lower": _nonnegative_eps_lower}


def _contains_all(conversion, bracket, alphas, reference) -> bool:
    try:
        got = conversion(bracket, alphas)
    except Exception:  # an inconsistent bracket is also a caught defect
        return False
    return bool(np.all((np.asarray(got.lower) <= reference) & (reference <= np.asarray(got.upper))))


@pytest.fixture(scope="module")
def gaussian_brackets():
    return {d: scheme_pld(Single(Gaussian(sigma=1.0)), d, step=2.0**-10) for d in Direction}


@pytest.mark.parametrize("direction", list(Direction))
def test_gaussian_beta_contains_closed_form_and_is_narrow(gaussian_brackets, direction):
    """Done-when 1: σ = 1 (μ = 1): the β bracket contains Φ(Φ⁻¹(1 − α) − μ) at α ∈ {1e-4, 1e-2, 0.5}
    and is at most 0.1% wide (relative) at α = 1e-2."""
    alphas = np.array([1e-4, 1e-2, 0.5])
    beta = beta_bracket(gaussian_brackets[direction], alphas)
    reference = np.array([1.0 - _gaussian_tpr(a, 1.0) for a in alphas])
    assert np.all(beta.lower <= reference) and np.all(reference <= beta.upper), (beta, reference)
    assert beta.relative_width[1] <= 1e-3


@pytest.mark.parametrize("direction", list(Direction))
def test_gaussian_tpr_bracket_at_many_alphas(gaussian_brackets, direction):
    reference = np.array([_gaussian_tpr(a, 1.0) for a in ALPHAS])
    assert _contains_all(lambda b, a: tpr_bracket(b, a), gaussian_brackets[direction], ALPHAS, reference)


@pytest.mark.parametrize("name", sorted(CONVERSIONS))
def test_broken_conversions_fail_the_gaussian_check(gaussian_brackets, name):
    reference = np.array([_gaussian_tpr(a, 1.0) for a in ALPHAS])
    assert not _contains_all(CONVERSIONS[name], gaussian_brackets[Direction.REMOVE], ALPHAS, reference)


RR_CASES = [(Fraction(5, 2), 1), (Fraction(3, 2), 3)]


@pytest.fixture(scope="module")
def rr_brackets():
    out = {}
    for kappa, times in RR_CASES:
        scheme = Single(RandomizedResponse(epsilon0=float(mp.log(mp.mpf(kappa.numerator) / kappa.denominator))))
        if times > 1:
            scheme = Composed(scheme, times)
        out[(kappa, times)] = scheme_pld(scheme, Direction.REMOVE, step=2.0**-10)
    return out


def _rr_reference(kappa: Fraction, times: int, alphas) -> np.ndarray:
    w, o = _rr_product(kappa, times)
    return np.array([float(_np_tpr(w, o, Fraction(float(a)))) for a in alphas])


@pytest.mark.parametrize(("kappa", "times"), RR_CASES)
def test_randomized_response_matches_exact_piecewise_linear_tradeoff(rr_brackets, kappa, times):
    """The exact trade-off of RR (T = 1: min(e^ε0 α, 1 − e^−ε0 (1 − α)); T = 3: Neyman–Pearson on 8
    outcomes), brute force in rationals; the bracket contains it and is narrow."""
    alphas = np.concatenate([ALPHAS, np.linspace(0.02, 0.98, 25)])
    reference = _rr_reference(kappa, times, alphas)
    bracket = tpr_bracket(rr_brackets[(kappa, times)], alphas)
    assert np.all(bracket.lower <= reference) and np.all(reference <= bracket.upper)
    assert np.max(bracket.width) < 2e-3


@pytest.mark.parametrize("name", sorted(CONVERSIONS))
def test_broken_conversions_fail_the_rr_check(rr_brackets, name):
    kappa, times = RR_CASES[1]
    alphas = np.concatenate([ALPHAS, np.linspace(0.02, 0.98, 25)])
    reference = _rr_reference(kappa, times, alphas)
    assert not _contains_all(CONVERSIONS[name], rr_brackets[(kappa, times)], alphas, reference)


def test_monotone_fallback_outside_an_uncertified_window_stays_below_the_truth(gaussian_brackets, monkeypatch):
    """With a one-point window the convexity certificate cannot hold: the lower end then rests on
    the monotone bounds outside the window (a conversion without them would overshoot)."""
    import verifier.pld.tradeoff as tradeoff

    monkeypatch.setattr(tradeoff, "_FIRST_WINDOW", 1)
    monkeypatch.setattr(tradeoff, "_LAST_WINDOW", 1)
    reference = np.array([_gaussian_tpr(a, 1.0) for a in ALPHAS])
    lower = pld_tpr(gaussian_brackets[Direction.REMOVE].dominated, ALPHAS)
    assert np.all(lower <= reference)


def test_lower_end_is_at_least_the_coin_flip_and_ends_are_in_unit_interval(gaussian_brackets):
    bracket = tpr_bracket(gaussian_brackets[Direction.ADD], np.array([0.0, 1e-9, 0.3, 1.0]))
    assert np.all(bracket.lower >= np.array([0.0, 1e-9, 0.3, 1.0]))
    assert np.all(bracket.upper <= 1.0) and bracket.upper[-1] == 1.0


def test_scalar_in_scalar_out(gaussian_brackets):
    got = beta_bracket(gaussian_brackets[Direction.REMOVE], 0.01)
    assert isinstance(got.lower, float) and isinstance(got.upper, float)


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan")])
def test_fpr_outside_unit_interval_is_refused(gaussian_brackets, bad):
    with pytest.raises(InvalidArgument, match="fpr"):
        tpr_bracket(gaussian_brackets[Direction.REMOVE], bad)


def _gaussian_delta_grid(grid: np.ndarray, mu: float) -> tuple[np.ndarray, np.ndarray]:
    """δ(ε) of N(μ, 1) vs N(0, 1) at each ε in mpmath (Steinke 2022, Cor 8), rounded outward."""
    with mp.workdps(40):
        values = [mp.ncdf(mu / 2 - mp.mpf(e) / mu) - mp.exp(e) * mp.ncdf(-mu / 2 - mp.mpf(e) / mu) for e in grid]
    middle = np.array([float(v) for v in values])
    return np.nextafter(middle, -np.inf), np.nextafter(middle, np.inf)


@pytest.mark.parametrize("alpha", [1e-4, 1e-2, 0.5])
def test_staircase_from_finitely_many_points_contains_the_closed_form(alpha):
    """Lemma 4: lower bounds on δ at finitely many ε give a lower bound on TPR by monotonicity; the
    naive minimum of δ_L(ε_i) + e^{ε_i} α over the same grid (the finite-grid error on the unsafe
    side) overshoots the closed form and is caught."""
    grid = np.linspace(-4.0013, 8.0, 2401)  # no grid point at any minimiser ε* = −(Φ⁻¹(α) + 1/2)
    low, high = _gaussian_delta_grid(grid, 1.0)
    reference = _gaussian_tpr(alpha, 1.0)
    got = staircase_tpr(grid, low, high, alpha)
    assert got.lower <= reference <= got.upper and got.relative_width < 0.02
    naive = float(np.min(low + np.exp(grid) * alpha))
    assert naive > reference


def test_staircase_refuses_an_unsorted_grid():
    with pytest.raises(InvalidArgument, match="epsilons"):
        staircase_tpr([1.0, 0.0], [0.1, 0.2], [0.1, 0.2], 0.01)
