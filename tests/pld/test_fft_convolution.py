"""The one-sided FFT convolution against the exact rational convolution (reference twin)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from verifier.pld.fft import DIRECT_LIMIT, _inverse_real, _product, _spectrum, convolve_one_sided, fft_error_bound
from verifier.reference.convolution import exact_convolution

#: Relative loss the fast route may cost on entries that are not tiny (2γ_16 ≈ 3.6e-15 from the
#: fixed-point reconstruction, plus the 2^-64·max truncation): generous but far below any δ use.
TIGHT_RTOL = 1e-13


def _vectors(seed: int, na: int, nb: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.random(na) ** 6
    b = rng.random(nb) ** 2
    a[: na // 4] *= 1e-12  # a long tail of tiny masses, as in a PLD
    return a / a.sum(), b / b.sum()


@pytest.mark.parametrize("seed,na,nb", [(0, 5, 7), (1, DIRECT_LIMIT + 3, 70), (2, 150, 90), (3, 200, 200)])
def test_one_sided_and_tight(seed: int, na: int, nb: int) -> None:
    a, b = _vectors(seed, na, nb)
    probs, deficit = convolve_one_sided(a, b)
    exact = exact_convolution(a, b)
    assert probs.size == len(exact)
    assert (probs >= 0).all()
    assert all(Fraction(float(p)) <= e for p, e in zip(probs, exact))
    assert Fraction(deficit) >= sum(exact) - sum(Fraction(float(p)) for p in probs)
    top = max(exact)
    for p, e in zip(probs, exact):
        if e > top * 1e-6:
            assert float(e) - p <= TIGHT_RTOL * float(e)
    assert deficit <= 1e-13


def test_self_convolution_uses_the_same_operand() -> None:
    a, _ = _vectors(4, 120, 1)
    probs, deficit = convolve_one_sided(a, a)
    exact = exact_convolution(a, a)
    assert all(Fraction(float(p)) <= e for p, e in zip(probs, exact))
    assert Fraction(deficit) >= sum(exact) - sum(Fraction(float(p)) for p in probs)


@pytest.mark.parametrize("seed", range(4))
def test_plain_fft_error_within_bound(seed: int) -> None:
    """The plain route's convolution (verifier's radix-2 FFTs, pointwise product, inverse) errs by
    less than the Higham Thm 24.2 bound the module uses (no safety factor), against exact rationals."""
    a, b = _vectors(seed, 300, 257)
    n = a.size + b.size - 1
    size = 1 << (n - 1).bit_length()
    approx = _inverse_real(_product(_spectrum(a, size), _spectrum(b, size)), size, n)
    exact = exact_convolution(a, b)
    worst = max(abs(Fraction(float(x)) - e) for x, e in zip(approx, exact))
    bound = fft_error_bound(a, b, size)
    assert float(worst) <= bound
    assert bound < 1e-13  # and the bound is not vacuous


def test_plain_route_is_one_sided_when_the_exact_route_declines(monkeypatch) -> None:
    """Force the plain radix-2 fallback (the exact route returns None): still one-sided."""
    import verifier.pld.fft as fft_module

    monkeypatch.setattr(fft_module, "_exact_fixed_point", lambda a, b, n: None)
    a, b = _vectors(5, 150, 90)
    probs, deficit = convolve_one_sided(a, b)
    exact = exact_convolution(a, b)
    assert all(Fraction(float(p)) <= e for p, e in zip(probs, exact))
    assert Fraction(deficit) >= sum(exact) - sum(Fraction(float(p)) for p in probs)


def test_cyclic_bracket_holds_the_exact_wrapped_convolutions() -> None:
    """``convolve_bracket(..., cyclic=True)`` on operands that only fit the transform (lengths 200 and
    100, N = 256 < 299), the second complex (two kernels in one transform): every entry of both parts
    is within the bound of the exact cyclic convolution (the exact linear one folded modulo N). A
    result read as if no term wrapped (the linear convolution's first N entries) misses it at the
    wrapped entries, which this checks too; a transform that mixed the parts misses it everywhere."""
    from verifier.pld.fft import Operand, convolve_bracket

    a, x = _vectors(4, 200, 100)
    _, y = _vectors(5, 200, 90)
    size = 256
    real, imag, bound = convolve_bracket(Operand(a, size), Operand(x, size, imag=y), cyclic=True)
    assert real.size == imag.size == size
    for part, kernel in ((real, x), (imag, y)):
        linear = exact_convolution(a, kernel)
        folded = [sum(linear[i::size], Fraction(0)) for i in range(size)]
        assert all(abs(Fraction(float(v)) - e) <= Fraction(bound) for v, e in zip(part, folded))
        assert max(abs(float(folded[i] - linear[i])) for i in range(len(linear) - size)) > 1e3 * bound
    with pytest.raises(ValueError):
        convolve_bracket(Operand(a, size), Operand(x, size))  # linear: 299 entries do not fit 256
