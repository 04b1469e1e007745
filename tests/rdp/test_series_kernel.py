"""The log-domain series kernel against its mpmath twin (verifier.reference.rdp): the returned
error bound must enclose the exact log coefficient, and the value must be accurate."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from verifier.errors import InvalidArgument
from verifier.rdp.series import log_power, log_product
from verifier.reference.rdp import series_power, series_product

#: Enclosure is checked exactly (|L − log c| <= E); on top, the bound itself must be small: the
#: kernel's error is a few ulps times the magnitude of the logs times the recursion depth.
MAX_ERROR_BOUND = 1e-10


def _exact_logs(coeffs: list) -> list:
    return [mpmath.log(c) if c > 0 else -mpmath.inf for c in coeffs]


def _check(values, errors, exact_logs) -> None:
    for got, err, want in zip(values, errors, exact_logs):
        if want == -mpmath.inf:
            assert got == -math.inf
            continue
        assert abs(mpmath.mpf(got) - want) <= mpmath.mpf(err), (got, err, want)
        assert err <= MAX_ERROR_BOUND * max(1.0, abs(got))


log_coefficient = st.floats(min_value=-40.0, max_value=40.0, allow_nan=False)


@given(
    st.lists(log_coefficient, min_size=1, max_size=12),
    st.sampled_from([1, 2, 3, 5, 8, 13, 40, 1000, 10**6]),
    st.integers(min_value=1, max_value=14),
)
def test_power_encloses_the_exact_coefficients(tail, t, n):
    """The kernel's input is ln(t·a_j) for j >= 1 (taken as exact)."""
    log_ta = np.array([0.0] + tail)
    values, errors = log_power(log_ta, t, n)
    with mpmath.workdps(60):
        a = [mpmath.mpf(1)] + [mpmath.exp(mpmath.mpf(x)) / t for x in tail]
        exact = series_power(a, t, n, dps=60)
        _check(values, errors, _exact_logs(exact))


@given(
    st.lists(st.one_of(log_coefficient, st.just(-math.inf)), min_size=1, max_size=10),
    st.lists(st.one_of(log_coefficient, st.just(-math.inf)), min_size=1, max_size=10),
    st.integers(min_value=1, max_value=12),
)
def test_product_encloses_the_exact_coefficients(la, lb, n):
    values, errors = log_product(np.array(la), np.array(lb), n)
    with mpmath.workdps(60):
        a = [mpmath.exp(mpmath.mpf(x)) if x > -math.inf else mpmath.mpf(0) for x in la]
        b = [mpmath.exp(mpmath.mpf(x)) if x > -math.inf else mpmath.mpf(0) for x in lb]
        _check(values, errors, _exact_logs(series_product(a, b, n, dps=60)))


def test_miller_and_binary_exponentiation_agree_at_the_switch():
    """t = n − 1 uses Miller's recurrence, t = n − 2 binary exponentiation; A^{t} vs A^{t-1}·A."""
    rng = np.random.default_rng(1)
    log_a = np.concatenate([[0.0], rng.uniform(-5, 30, 20)])  # ln a_j
    n = 21
    miller, e1 = log_power(log_a + np.log(n - 1) * (np.arange(n) > 0), n - 1, n)
    lower, e2 = log_power(log_a + np.log(n - 2) * (np.arange(n) > 0), n - 2, n)
    product, e3 = log_product(lower, log_a, n)
    # the shifted inputs are rounded: allow a few ulps of the largest input log on top of the bounds
    assert np.all(np.abs(miller - product) <= e1 + e3 + 2 * e2 + 1e-12)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(log_ta=[1.0, 2.0], t=2, length=3), "log_ta[0]"),
        (dict(log_ta=[0.0, math.inf], t=2, length=3), "log_ta"),
        (dict(log_ta=[0.0, 1.0], t=0, length=3), "t"),
        (dict(log_ta=[0.0, 1.0], t=2, length=0), "length"),
        (dict(log_ta=[0.0, 1.0], t=10**15, length=100), "t"),
    ],
)
def test_power_rejects_invalid_input(kwargs, name):
    with pytest.raises(InvalidArgument) as info:
        log_power(**kwargs)
    assert info.value.name == name
