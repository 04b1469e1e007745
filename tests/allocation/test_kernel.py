"""The geometric-grid convolution kernel against its brute-force mpmath twin, in all four modes
(directed UP / DOWN, convex-order SPREAD / CONTRACT), symmetric and not; the lattice helpers in
_directed against their definitions."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier._directed import log_index, ratio_sum_breakpoints
from verifier._fast.geometric import convolve_ratio_moments, convolve_ratios
from verifier._types import Dominance
from verifier.reference.geometric import convolve_ratio_moments as twin_moments
from verifier.reference.geometric import convolve_ratios as twin_ratios

#: The kernel sums at most ~40 products in float64 with double-double window sums; the twin sums
#: exactly (60 digits). 1e-12 relative leaves a wide margin over ~40 u.
RTOL = 1e-12
#: The spread's split of a group has a cancellation ~u/(e^Δ − 1) <= 2^4 u relative to the mass.
RTOL_SPREAD = 1e-11
ATOL = 1e-15


@st.composite
def kernel_inputs(draw, size: int = 6, sparse: bool = False):
    """Inputs of the kernels; ``sparse``: up to ``size`` labels of which most are empty (long runs
    of empty groups, which the convex-order kernel skips)."""
    k = draw(st.integers(0, 4))
    symmetric = draw(st.booleans())
    masses = st.floats(0.0, 1.0, allow_nan=False)

    def law(n):
        p = np.array(draw(st.lists(masses, min_size=n, max_size=n)))
        if sparse:  # about one label in six keeps its mass
            keep = np.array(draw(st.lists(st.integers(0, 5), min_size=n, max_size=n))) == 0
            p = np.where(keep, p, 0.0)
        return p

    na = draw(st.integers(1, size))
    oa = draw(st.integers(-20, 20))
    a = law(na)
    a_zero, a_inf = draw(masses), draw(masses)
    if symmetric:
        b, ob, b_zero, b_inf = a, oa, a_zero, a_inf
    else:
        nb = draw(st.integers(1, size))
        ob = draw(st.integers(-20, 20))
        b = law(nb)
        b_zero, b_inf = draw(masses), draw(masses)
    oc = draw(st.integers(-25, 25))
    nc = draw(st.integers(1, 14))
    # positions inside each lattice cell, for the CONTRACT mode's atoms
    fa = np.array(draw(st.lists(st.floats(0.0, 0.999), min_size=a.size, max_size=a.size)))
    fb = fa if symmetric else np.array(draw(st.lists(st.floats(0.0, 0.999), min_size=b.size, max_size=b.size)))
    return dict(k=k, symmetric=symmetric, a=a, oa=oa, a_zero=a_zero, a_inf=a_inf, b=b, ob=ob,
                b_zero=b_zero, b_inf=b_inf, oc=oc, nc=nc, fa=fa, fb=fb)  # fmt: skip


def _scratch(*sizes: int, copies: int) -> list[np.ndarray]:
    return [np.empty(n + 1) for n in sizes for _ in range(copies)]


@pytest.mark.parametrize("dominance", list(Dominance))
@given(case=kernel_inputs())
def test_directed_kernel_matches_twin(dominance, case):
    round_up = dominance is Dominance.DOMINATING
    out, atoms = np.zeros(case["nc"]), np.zeros(2)
    scratch = [np.empty(case["a"].size + 1)] * 2 + [np.empty(case["b"].size + 1)] * 2
    scratch = [s.copy() for s in scratch]
    code = convolve_ratios(
        case["a"], case["oa"], case["a_zero"], case["a_inf"], case["b"], case["ob"], case["b_zero"], case["b_inf"],
        ratio_sum_breakpoints(case["k"]), round_up, case["symmetric"], case["oc"], out, atoms, *scratch,
    )  # fmt: skip
    assert code == 0
    masses, zero, inf = twin_ratios(
        case["a"], case["oa"], case["a_zero"], case["a_inf"], case["b"], case["ob"], case["b_zero"], case["b_inf"],
        case["k"], round_up, case["oc"], case["nc"],
    )  # fmt: skip
    np.testing.assert_allclose(out, [float(m) for m in masses], rtol=RTOL, atol=ATOL)
    assert atoms[0] == pytest.approx(float(zero), rel=RTOL, abs=ATOL)
    assert atoms[1] == pytest.approx(float(inf), rel=RTOL, abs=ATOL)


@pytest.mark.parametrize("dominance", list(Dominance))
@given(case=kernel_inputs())
def test_convex_kernel_matches_twin(dominance, case):
    _check_convex_kernel(dominance, case)


@pytest.mark.parametrize("dominance", list(Dominance))
@settings(max_examples=40, deadline=None)
@given(case=kernel_inputs(size=40, sparse=True))
def test_convex_kernel_matches_twin_on_sparse_inputs(dominance, case):
    """Mostly empty labels (the thinned tails of the allocation laws): the kernel jumps over the
    groups whose windows hold only zeros. Catches a jump that lands past a non-empty group (its pairs
    go missing)."""
    _check_convex_kernel(dominance, case)


def _check_convex_kernel(dominance, case):
    spread = dominance is Dominance.DOMINATING
    k = case["k"]
    step = 2.0**-k
    breaks = ratio_sum_breakpoints(k)
    growth = np.exp(np.arange(breaks.size + 1) * step)

    def moments(p, offset, frac):
        lattice = np.exp((offset + np.arange(p.size)) * step)
        return p * lattice if spread else p * lattice * np.exp(frac * step)

    am = moments(case["a"], case["oa"], case["fa"])
    bm = am if case["symmetric"] else moments(case["b"], case["ob"], case["fb"])
    out, out_m, atoms = np.zeros(case["nc"]), np.zeros(case["nc"]), np.zeros(2)
    code = convolve_ratio_moments(
        case["a"], am, case["oa"], case["a_zero"], case["b"], bm, case["ob"], case["b_zero"], breaks, growth,
        spread, case["symmetric"], step, case["oc"], out, out_m, atoms,
        *_scratch(case["a"].size, copies=4), *_scratch(case["b"].size, copies=4),
    )  # fmt: skip
    assert code == 0
    masses, moms, zero, lost = twin_moments(
        case["a"], am, case["oa"], case["a_zero"], case["b"], bm, case["ob"], case["b_zero"], k, spread,
        case["oc"], case["nc"],
    )  # fmt: skip
    rtol = RTOL_SPREAD if spread else RTOL
    np.testing.assert_allclose(out, [float(m) for m in masses], rtol=rtol, atol=ATOL)
    assert atoms[0] == pytest.approx(float(zero), rel=rtol, abs=ATOL)
    if spread:
        scale = max(1.0, float(np.sum(am)) * float(np.sum(bm)))
        assert atoms[1] == pytest.approx(float(lost), rel=rtol, abs=ATOL * scale)
    else:
        np.testing.assert_allclose(out_m, [float(m) for m in moms], rtol=rtol, atol=ATOL)


@pytest.mark.parametrize("dominance", list(Dominance))
@given(case=kernel_inputs())
def test_convex_modes_keep_mass_and_the_spread_keeps_the_mean(dominance, case):
    """Mass is conserved exactly (no mass lost), the spread conserves the first moment (what is moved
    off the top is returned), the contraction conserves it inside the grid."""
    spread = dominance is Dominance.DOMINATING
    k = case["k"]
    step = 2.0**-k
    breaks = ratio_sum_breakpoints(k)
    growth = np.exp(np.arange(breaks.size + 1) * step)
    am = case["a"] * np.exp((case["oa"] + np.arange(case["a"].size)) * step)
    bm = am if case["symmetric"] else case["b"] * np.exp((case["ob"] + np.arange(case["b"].size)) * step)
    out, out_m, atoms = np.zeros(case["nc"]), np.zeros(case["nc"]), np.zeros(2)
    convolve_ratio_moments(
        case["a"], am, case["oa"], case["a_zero"], case["b"], bm, case["ob"], case["b_zero"], breaks, growth,
        spread, case["symmetric"], step, case["oc"], out, out_m, atoms,
        *_scratch(case["a"].size, copies=4), *_scratch(case["b"].size, copies=4),
    )  # fmt: skip
    total_a, total_b = case["a"].sum() + case["a_zero"], case["b"].sum() + case["b_zero"]
    assert out.sum() + atoms[0] == pytest.approx(total_a * total_b, rel=1e-12, abs=1e-14)
    mean_in = am.sum() * total_b + bm.sum() * total_a
    if spread:
        mean_out = float(np.sum(out * np.exp((case["oc"] + np.arange(case["nc"])) * step))) + atoms[1]
    else:
        mean_out = out_m.sum()
    assert mean_out == pytest.approx(mean_in, rel=1e-11, abs=1e-13)


@pytest.mark.parametrize("k", [0, 1, 3, 6])
def test_breakpoints_match_their_definition(k):
    """h(m) = ⌈ln(1 + e^{mΔ})/Δ⌉ evaluated with mpmath at every m in a window: the table's steps."""
    breaks = ratio_sum_breakpoints(k)
    step = mpmath.mpf(2) ** -k
    with mpmath.workdps(50):
        for m in range(int(breaks[0]) - 5, 1):
            h = int(mpmath.ceil(mpmath.log(1 + mpmath.exp(m * step)) / step))
            expected = int(np.searchsorted(breaks, m, side="left")) + 1  # group index of m
            assert h == expected, m
        assert breaks[-1] == 0 and breaks.size == int(mpmath.ceil(mpmath.log(2) / step))


@pytest.mark.parametrize("t", [1, 2, 3, 10, 1000, 10**6])
@pytest.mark.parametrize("k", [0, 5, 12])
def test_log_index_is_the_directed_rounding_of_ln_t(t, k):
    with mpmath.workdps(50):
        exact = mpmath.log(t) * 2**k
        assert log_index(t, k, Dominance.DOMINATING) == int(mpmath.ceil(exact))
        assert log_index(t, k, Dominance.DOMINATED) == int(mpmath.floor(exact))
    assert math.isfinite(exact)
