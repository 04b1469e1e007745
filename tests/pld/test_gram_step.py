"""The DOMINATING PLD of the two-dimensional fixed-batch step E(A, B, C) (verifier.pld.gram_step)
against independent mpmath hockey-stick references: δ(ε) from the PLD must lie above the exact
H_{e^ε}(P‖Q) and close to it (the two-atom split makes the gap second order in the cell size)."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from verifier._types import Direction, Dominance
from verifier.errors import InvalidArgument
from verifier.pld import gram_step
from verifier.pld.gram_step import gram_step_pld

SIGMA = 1.1
Q_DPSGD = 256 / 60000
EPSILONS = (0.05, 0.5, 1.0)
#: Cells per axis and grid step of the tests: ~65k cells, 0.1 s a member.
CELLS = 256
STEP = 2.0**-10
#: Measured gaps at CELLS, STEP are <= 4e-3 relative where δ >= 1e-6 and <= 5e-10 absolute below
#: (the far tail, where the mass at +∞ and the grid step dominate); twice that leaves room.
RTOL, ATOL = 8e-3, 1e-9
#: mpmath working precision (decimal digits) of the references: far beyond the float PLD.
DPS = 20


def _gram_hockey(q: float, gram: tuple[float, float, float], eps: float) -> mp.mpf:
    """H_κ of E(A, B, C) in units s = 1, a = (a₁, 0), b = (b₁, b₂): P's y₂ is N(0, 1) under both
    components, so for fixed y₁ the set {p > κq} is y₂ < t and
    H_κ = ∫ dy₁ [c₀ Φ(t) − c₁ Φ(t − b₂)]₊ over {c₀ > 0}, c₀ = p₁(y₁) − κ(1 − q)φ(y₁),
    c₁ = κqφ(y₁ − b₁), t = (b₂²/2 + ln(c₀/c₁))/b₂ (tanh-sinh quadrature, split at c₀ = 0)."""
    with mp.workdps(DPS):
        s, qq, kappa = mp.mpf(SIGMA), mp.mpf(q), mp.e ** mp.mpf(eps)
        big_a, big_b, c = (mp.mpf(x) for x in gram)
        a1 = mp.sqrt(big_a) / s
        b1 = c / mp.sqrt(big_a) / s
        b2 = mp.sqrt(big_b - c * c / big_a) / s

        def integrand(y):
            c0 = (1 - qq) * (1 - kappa) * mp.npdf(y) + qq * mp.npdf(y - a1)
            if c0 <= 0:
                return mp.mpf(0)
            c1 = kappa * qq * mp.npdf(y - b1)
            t = (b2 * b2 / 2 + mp.log(c0 / c1)) / b2
            return c0 * mp.ncdf(t) - c1 * mp.ncdf(t - b2)

        root = (mp.log((1 - qq) * (kappa - 1) / qq) + a1 * a1 / 2) / a1
        return mp.quad(integrand, sorted({mp.mpf(-40), mp.mpf(0), a1, b1, root, mp.mpf(40)}))


def _rank_one_hockey(q: float, a: float, b: float, eps: float) -> mp.mpf:
    """H_κ of the one-dimensional pair ((1 − q)N(0) + qN(a), (1 − q)N(0) + qN(b)), a > b, s = σ:
    quadrature of (p − κq)₊ on both sides of the single crossing (the ratio increases in y)."""
    with mp.workdps(DPS):
        s, qq, kappa = mp.mpf(SIGMA), mp.mpf(q), mp.e ** mp.mpf(eps)

        def gap(y):
            return (1 - qq) * mp.npdf(y, 0, s) + qq * mp.npdf(y, a, s) - kappa * ((1 - qq) * mp.npdf(y, 0, s) + qq * mp.npdf(y, b, s))

        lo, hi = mp.mpf(-60), mp.mpf(60)
        for _ in range(120):  # gap < 0 left of the crossing, > 0 right of it
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if gap(mid) < 0 else (lo, mid)
        return mp.quad(gap, [hi, hi + 5, hi + 15, mp.mpf(80)])


def _product_hockey(q: float, a_sq: float, b_sq: float, eps: float) -> mp.mpf:
    """C = 0: (P, Q) is the product of remove-1D(√A) on y₁ and add-1D(√B) on y₂, so
    H_κ = ∫ p₂(y₂) H₁(κ q₂(y₂)/p₂(y₂)) dy₂ with H₁ the one-dimensional remove profile in closed form
    (its ratio (1 − q) + q e^{a y − a²/2} increases: the set is a half-line)."""
    with mp.workdps(DPS):
        s, qq, kappa = mp.mpf(SIGMA), mp.mpf(q), mp.e ** mp.mpf(eps)
        a, b = mp.sqrt(a_sq) / s, mp.sqrt(b_sq) / s

        def h1(k):
            if k <= 1 - qq:
                return 1 - k
            y0 = (mp.log((k - (1 - qq)) / qq) + a * a / 2) / a
            return (1 - qq) * mp.ncdf(-y0) + qq * mp.ncdf(a - y0) - k * mp.ncdf(-y0)

        def outer(y):
            return mp.npdf(y) * h1(kappa * ((1 - qq) + qq * mp.exp(b * y - b * b / 2)))

        return mp.quad(outer, [-40, 0, b, 40])


def _assert_above_and_close(pld, reference, label):
    for eps, ref in zip(EPSILONS, reference):
        got = pld.delta(eps)
        assert got >= ref, f"{label} ε={eps}: {got} below the exact {ref}"
        assert got <= ref * (1 + RTOL) + ATOL, f"{label} ε={eps}: {got} far above the exact {ref}"


@pytest.mark.parametrize(("gram", "means"), [((4.0, 0.0, 0.0), (2.0, 0.0)), ((1.0, 1.0, -1.0), (1.0, -1.0))])
@pytest.mark.parametrize("q", [0.05, Q_DPSGD])
def test_rank_one_matches_one_dimensional_quadrature(gram, means, q):
    """C = −√(AB): b is a negative multiple of a, the step is one-dimensional (remove (4, 0, 0), antipodal (1, 1, −1))."""
    pld = gram_step_pld(SIGMA, q, *gram, STEP, cells=CELLS)
    assert pld.dominance is Dominance.DOMINATING and pld.direction is Direction.REMOVE
    _assert_above_and_close(pld, [_rank_one_hockey(q, *means, e) for e in EPSILONS], f"{gram}")


def test_orthogonal_step_is_the_product_pair():
    """C = 0 against nested quadrature of the product pair, and the general reference agrees with it."""
    q, gram = 0.05, (3.0, 2.0, 0.0)
    reference = [_product_hockey(q, 3.0, 2.0, e) for e in EPSILONS]
    for eps, ref in zip(EPSILONS, reference):
        general = _gram_hockey(q, gram, eps)
        assert abs(general - ref) <= mp.mpf("1e-15") * ref, (eps, general, ref)
    _assert_above_and_close(gram_step_pld(SIGMA, q, *gram, STEP, cells=CELLS), reference, f"{gram}")


@pytest.mark.parametrize("gram", [(4.0, 1.0, 0.6), (3.0, 1.0, -0.3), (2.0, 2.0, 0.5)])
@pytest.mark.parametrize("q", [0.05, Q_DPSGD])
def test_general_gram_above_and_close(gram, q):
    _assert_above_and_close(gram_step_pld(SIGMA, q, *gram, STEP, cells=CELLS), [_gram_hockey(q, gram, e) for e in EPSILONS], f"{gram}")


def test_gap_is_second_order_in_the_cell_size():
    """Doubling the cells per axis cuts the gap by about four (the split's error is the variance of
    a two-point law across a cell); a first-order construction would only halve it."""
    q, gram, eps = 0.05, (4.0, 1.0, 0.6), 0.5
    ref = float(_gram_hockey(q, gram, eps))
    gaps = [gram_step_pld(SIGMA, q, *gram, 2.0**-14, cells=n).delta(eps) - ref for n in (64, 128)]
    assert gaps[1] > 0 and gaps[0] / gaps[1] > 2.8, gaps


def _all_at_lmin(p_lo, p_hi, q_lo, q_hi, g0, g1, h):
    return p_lo, np.zeros_like(p_lo)


def _masses_under_q(p_lo, p_hi, q_lo, q_hi, g0, g1, h):
    low, high = _split(p_lo, p_hi, q_lo, q_hi, g0, g1, h)
    return low * np.exp(-g0 * h), high * np.exp(-g1 * h)


_split = gram_step._split


@pytest.mark.parametrize("mutant", [_all_at_lmin, _masses_under_q], ids=["all-at-Lmin", "masses-under-Q"])
def test_mutant_splits_fall_below_the_exact_profile(monkeypatch, mutant):
    """A cell's whole mass at its lowest loss, or the two atoms weighted by Q instead of P, must drop
    δ(ε) below the exact value somewhere (so the ≥ checks above can catch them)."""
    monkeypatch.setattr(gram_step, "_split", mutant)
    q, gram = 0.05, (4.0, 1.0, 0.6)
    pld = gram_step_pld(SIGMA, q, *gram, STEP, cells=64)
    assert any(pld.delta(e) < _gram_hockey(q, gram, e) for e in EPSILONS)


def test_mass_and_mirror():
    pld = gram_step_pld(SIGMA, Q_DPSGD, 4.0, 1.0, 0.6, STEP, cells=64)
    mirror = gram_step_pld(SIGMA, Q_DPSGD, 1.0, 4.0, 0.6, STEP, cells=64)
    for member in (pld, mirror):
        assert member.total_mass >= 1.0 and member.infinite_mass < 1e-14
    identical = gram_step_pld(SIGMA, Q_DPSGD, 0.0, 0.0, 0.0, STEP, cells=8)
    assert identical.delta(STEP) <= 1e-14  # L = 0: the split puts the mass at ±h


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"rate": 0.6}, "rate"),
        ({"c": 2.5}, "c"),
        ({"c": -2.0 * (1 + 1e-9)}, "c"),
        ({"sigma": 0.0}, "sigma"),
        ({"step": 0.3}, "step"),
        ({"a_sq": math.inf}, "a_sq"),
    ],
)
def test_bad_input_names_the_parameter(kwargs, name):
    args = {"sigma": SIGMA, "rate": 0.05, "a_sq": 4.0, "b_sq": 1.0, "c": 0.6, "step": STEP} | kwargs
    with pytest.raises(InvalidArgument, match=name):
        gram_step_pld(**args, cells=8)


def test_rounded_antipodal_gram_is_accepted():
    """C = −√(AB) a rounding below the exact value (as cell_dominator may produce) is accepted."""
    c = -math.sqrt(2.0) * math.sqrt(1.5)
    pld = gram_step_pld(SIGMA, 0.05, 2.0, 1.5, math.nextafter(c, -math.inf), STEP, cells=32)
    assert pld.total_mass >= 1.0
