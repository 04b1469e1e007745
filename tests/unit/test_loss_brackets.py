"""The pairs' rigorous loss CDF/SF brackets (DominatingPair.loss_cdf_bracket / loss_sf_bracket)
against the mpmath references of verifier.reference.pairs (independent: they integrate the
densities over {y : L(y) <= x} instead of using the loss law's closed form)."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from verifier._types import Direction, Measure
from verifier.pairs import DiscretePair, Gaussian, Laplace, RandomizedResponse
from verifier.pairs.subsampled import PoissonSubsampled
from verifier.reference import pairs as ref

#: The references are computed at 30 digits; a bracket may miss a reference value by this much
#: relative (the reference's own rounding), never more.
_REFERENCE_RTOL = 1e-25

_DIRECTIONS = [(Direction.REMOVE, "remove"), (Direction.ADD, "add")]
_MEASURES = [(Measure.P, "P"), (Measure.Q, "Q")]


#: P(L > x) is checked as 1 − (reference CDF): that difference cancels, so its slack is absolute.
_COMPLEMENT_ATOL = 1e-27


#: The subsampled reference passes the base threshold ln(1 + (e^x − 1)/λ) through the Gaussian
#: reference, which reads its x as a float: the CDF then moves by up to density × ulp(threshold)
#: (density <= 1, threshold < 10: below 1e-15 absolute).
_THRESHOLD_ATOL = 1e-15


def _complement(total, value):
    """total − value at 40 digits (mpmath's default 15 would lose the comparison)."""
    with mpmath.workdps(40):
        return mpmath.mpf(total) - value


def _contains(bracket, value, atol=0.0, rtol=_REFERENCE_RTOL) -> bool:
    slack = rtol * abs(value) + atol
    return mpmath.mpf(bracket.lower) - slack <= value <= mpmath.mpf(bracket.upper) + slack


def _check(pair, xs, reference) -> None:
    for direction, d in _DIRECTIONS:
        for under, m in _MEASURES:
            cdf = pair.loss_cdf_bracket(np.array(xs), direction, under)
            sf = pair.loss_sf_bracket(np.array(xs), direction, under)
            for i, x in enumerate(xs):
                want = reference(x, d, m)
                assert _contains(cdf[i], want), (direction, under, x, cdf[i], want)
                assert _contains(sf[i], _complement(1, want), _COMPLEMENT_ATOL), (direction, under, x, sf[i], want)


@pytest.mark.parametrize("sigma", [0.5, 1.0, 3.0])
def test_gaussian(sigma):
    xs = [-40.0, -3.0, -0.2, 0.0, 0.7, 2.5, 30.0]
    _check(Gaussian(sigma), xs, lambda x, d, m: ref.gaussian_loss_cdf(sigma, x, d, m))


def test_gaussian_brackets_are_tight():
    """Ball arithmetic to 60 bits: a few ulps, also deep in the tail (where 1 − CDF would cancel)."""
    sf = Gaussian(1.0).loss_sf_bracket(30.0, Direction.REMOVE, Measure.Q)
    assert 0 < sf.lower <= sf.upper <= sf.lower * (1 + 1e-15)


@pytest.mark.parametrize("scale", [0.5, 1.0, 2.0])
def test_laplace_with_atoms(scale):
    e0 = 1.0 / scale
    xs = [-e0 - 0.5, -e0, -e0 / 3, 0.0, e0 / 2, e0, e0 + 1.0]
    _check(Laplace(scale), xs, lambda x, d, m: ref.laplace_loss_cdf(scale, x, d, m))


def test_laplace_atoms_are_exact_at_exact_epsilon0():
    """ε0 = 1 exactly: the CDF at the atom includes it, strictly below it excludes it."""
    pair = Laplace(1.0)
    at = pair.loss_cdf_bracket(1.0, Direction.REMOVE, Measure.P)
    assert at.lower == at.upper == 1.0
    above = pair.loss_sf_bracket(-1.0, Direction.REMOVE, Measure.Q)
    assert above.upper - above.lower < 1e-15 and abs(above.lower - 0.5) < 1e-15


@pytest.mark.parametrize("epsilon0,k", [(1.0, 2), (0.5, 3), (2.0, 4)])
def test_randomized_response(epsilon0, k):
    xs = [-epsilon0 - 1.0, -epsilon0, -epsilon0 / 2, 0.0, epsilon0 / 2, epsilon0, epsilon0 + 1.0]
    _check(RandomizedResponse(epsilon0, k), xs, lambda x, d, m: ref.rr_loss_cdf(epsilon0, x, d, m, k))
    # the atoms at ±ε0 and 0 are resolved exactly (no widening)
    at = RandomizedResponse(epsilon0, k).loss_cdf_bracket(np.array(xs), Direction.REMOVE, Measure.P)
    assert np.all(at.upper - at.lower <= 1e-15)


@pytest.mark.parametrize(
    "p,q",
    [
        ((0.5, 0.25, 0.25), (0.25, 0.25, 0.5)),
        ((0.3, 0.0, 0.7), (0.1, 0.4, 0.5)),  # infinite loss in the ADD direction
        ((0.2, 0.3, 0.5, 0.0), (0.5, 0.3, 0.0, 0.2)),  # both
    ],
)
def test_discrete(p, q):
    pair = DiscretePair(p, q)
    xs = [-2.0, -0.7, 0.0, 0.4, 0.69, 1.1, 3.0]

    def reference(x, d, m):
        return ref.discrete_loss_cdf(p, q, x, d, m)

    for direction, d in _DIRECTIONS:
        for under, m in _MEASURES:
            cdf = pair.loss_cdf_bracket(np.array(xs), direction, under)
            sf = pair.loss_sf_bracket(np.array(xs), direction, under)
            with mpmath.workdps(40):
                mass = mpmath.fsum(mpmath.mpf(v) for v in (p if m == "P" else q))
            for i, x in enumerate(xs):
                want = reference(x, d, m)
                # the float masses may sum to a hair above 1; a probability bracket is clipped to 1
                assert _contains(cdf[i], min(want, 1)), (direction, under, x, cdf[i], want)
                assert _contains(sf[i], min(_complement(mass, want), 1), _COMPLEMENT_ATOL), (direction, under, x, sf[i], want)


@pytest.mark.parametrize("rate", [0.01, 0.3])
def test_subsampled_matches_mixture(rate):
    """PoissonSubsampled: the REMOVE loss ℓ' = ln(1 − λ + λe^ℓ) under M = λP + (1 − λ)Q; the
    reference is the Gaussian reference at the base threshold, mixed in mpmath."""
    base = Gaussian(1.0)
    pair = PoissonSubsampled(base, rate)
    xs = [math.log1p(-rate) + 1e-3, -1e-3, 0.0, 0.05, 0.5, 3.0]
    for x in xs:
        with mpmath.workdps(40):
            t = mpmath.log1p(mpmath.expm1(x) / rate)
            q = ref.gaussian_loss_cdf(1.0, t, "remove", "Q")
            p = ref.gaussian_loss_cdf(1.0, t, "remove", "P")
            mixed = rate * p + (1 - rate) * q
        for under, want in ((Measure.Q, q), (Measure.P, mixed)):
            tol = dict(atol=_THRESHOLD_ATOL)
            assert _contains(pair.loss_cdf_bracket(x, Direction.REMOVE, under), want, **tol)
            assert _contains(pair.loss_sf_bracket(x, Direction.REMOVE, under), _complement(1, want), **tol)
            # ADD: L = −ℓ' (``under`` names the same law in both directions): P(L <= −x) = P(ℓ' >= x)
            assert _contains(pair.loss_cdf_bracket(-x, Direction.ADD, under), _complement(1, want), **tol)
    below = pair.loss_cdf_bracket(math.log1p(-rate) - 1e-3, Direction.REMOVE, Measure.P)
    assert below.lower == below.upper == 0.0


def test_brackets_contain_the_float_laws():
    """The float (scipy) loss laws sit inside the brackets up to their float accuracy."""
    pair = Gaussian(2.0)
    xs = np.linspace(-5, 5, 41)
    cdf = pair.loss_cdf_bracket(xs, Direction.REMOVE, Measure.Q)
    approx = pair.loss_cdf(xs, Direction.REMOVE, Measure.Q)
    assert np.all(approx >= cdf.lower * (1 - 1e-13)) and np.all(approx <= cdf.upper * (1 + 1e-13))


@pytest.mark.parametrize(
    "pair,reference",
    [
        (Gaussian(0.7), lambda x, m: ref.gaussian_loss_cdf(0.7, x, "remove", m)),
        (Laplace(1.0), lambda x, m: ref.laplace_loss_cdf(1.0, x, "remove", m)),  # atoms at ±1 on edges
        (RandomizedResponse(0.5, 3), lambda x, m: ref.rr_loss_cdf(0.5, x, "remove", m, 3)),
    ],
    ids=["gaussian", "laplace", "randomized-response"],  # stable ids: xdist workers must collect the same names
)
def test_cell_masses_contain_reference_differences(pair, reference):
    """loss_cell_bracket: P(L <= e_0), P(e_i < L <= e_{i+1}), P(L > e_n), each containing the
    difference of the references (at 40 digits), deep tails included."""
    edges = np.array([-9.0, -1.0, -0.5, 0.0, 0.25, 0.5, 1.0, 9.0])
    for under, m in _MEASURES:
        got = pair.loss_cell_bracket(edges, Direction.REMOVE, under)
        with mpmath.workdps(40):
            cdf = [reference(float(e), m) for e in edges]
            want = [cdf[0], *[b - a for a, b in zip(cdf[:-1], cdf[1:])], 1 - cdf[-1]]
        for i, w in enumerate(want):
            assert _contains(got[i], w, _COMPLEMENT_ATOL), (under, i, got[i], w)


def test_cell_masses_keep_relative_accuracy_in_the_tails():
    """Far in either tail the cells are differences on the small side: relatively tight."""
    edges = np.linspace(-30.0, 30.0, 241)
    got = Gaussian(1.0).loss_cell_bracket(edges, Direction.REMOVE, Measure.Q)
    lo, hi = np.asarray(got.lower), np.asarray(got.upper)
    assert np.all(lo > 0) and np.all(hi - lo <= 4 * np.spacing(hi))


def test_cell_edges_must_increase():
    with pytest.raises(ValueError, match="edges"):
        Gaussian(1.0).loss_cell_bracket([0.0, 0.0], Direction.REMOVE, Measure.P)
