"""verifier's radix-2 FFT (verifier.pld.radix2 + verifier._fast.radix2) against independent oracles:
an mpmath DFT at 40 digits (Higham Thm 24.2 checked as stated), arb balls for every twiddle factor,
numpy.fft as a sanity peer, a Python twin of the bit reversal, and the validation errors."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from flint import arb

from verifier._directed import with_precision
from verifier._fast import radix2 as kernel
from verifier.errors import InvalidArgument, NumericalFailure
from verifier.pld.radix2 import (
    fft_complex,
    higham_constant,
    irfft_power2,
    rfft_power2,
    twiddles,
    underflow_term,
    unit_roundoff,
)

DTYPES = [np.float64, np.longdouble]

#: Digits of the mpmath reference DFT: 40 digits (~133 bits) hold every double and long double input
#: exactly and put the reference's own error ~1e-38 relative, far below the 1e-19 being checked.
DFT_DPS = 40

#: numpy.fft (pocketfft) is a peer, not the oracle: both FFTs err ~L·u relative in ℓ2 at N = 2^16, so
#: 1e-13 relative leaves a wide margin and still catches any wrong index or sign.
PEER_RTOL = 1e-13

#: μ <= about 4.9u (module docstring: δ1 + δ2 <= 2u for correctly rounded tables, √2γ₂ ≈ 2.83u).
MU_OVER_U_MAX = 5.0


def _mp(x) -> mpmath.mpf:
    num, den = x.as_integer_ratio()
    return mpmath.mpf(num) / den  # den is a power of two: exact at DFT_DPS digits


def _mpmath_dft(re, im, inverse: bool) -> list[mpmath.mpc]:
    n = len(re)
    sign = 1 if inverse else -1
    with mpmath.workdps(DFT_DPS):
        x = [mpmath.mpc(_mp(a), _mp(b)) for a, b in zip(re, im)]
        roots = [mpmath.expjpi(mpmath.mpf(2 * sign * k) / n) for k in range(n)]
        return [mpmath.fsum(x[j] * roots[(j * k) % n] for j in range(n)) for k in range(n)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("inverse", [False, True])
@pytest.mark.parametrize("size", [2, 4, 8, 16, 32, 64, 256])
def test_higham_theorem_holds_against_mpmath_dft(dtype, inverse, size) -> None:
    """‖fl(Fx) − Fx‖₂ <= c·‖Fx‖₂ + f (Higham Thm 24.2 with our μ, plus the underflow term)."""
    rng = np.random.default_rng(size + 7 * inverse)
    re = rng.standard_normal(size) * 10.0 ** rng.integers(-3, 3, size)
    im = rng.standard_normal(size)
    got_re, got_im = fft_complex(re, im, inverse=inverse, dtype=dtype)
    assert got_re.dtype == np.dtype(dtype) and got_im.dtype == np.dtype(dtype)
    exact = _mpmath_dft(re.astype(dtype), im.astype(dtype), inverse)
    c = higham_constant(size, unit_roundoff(dtype), twiddles(size, dtype).mu)
    with mpmath.workdps(DFT_DPS):
        err = mpmath.sqrt(mpmath.fsum(abs(mpmath.mpc(_mp(a), _mp(b)) - e) ** 2 for a, b, e in zip(got_re, got_im, exact)))
        norm = mpmath.sqrt(mpmath.fsum(abs(e) ** 2 for e in exact))
        assert err <= mpmath.mpf(c) * norm + mpmath.mpf(underflow_term(size, dtype))
        # and the kernel really works in ``dtype``: a long-double result is far inside the double bound
        assert err <= 64 * unit_roundoff(dtype) * norm


def _textbook_twin(re, im, tw_re, tw_im, inverse: bool):
    """Radix-2 DIT, stage by stage in numpy: bit reversal, then every butterfly of a stage as
    (ac − bd) + i(ad + bc) and x_a ± t, each a separate numpy call (one rounding per operation)."""
    n = re.size
    bits = n.bit_length() - 1
    perm = [int(format(i, f"0{bits}b")[::-1], 2) if bits else 0 for i in range(n)]
    re, im = re[perm].copy(), im[perm].copy()
    half = 1
    while half < n:
        j = np.arange(half)
        a = (np.arange(0, n, 2 * half)[:, None] + j[None, :]).ravel()
        b = a + half
        wr = np.tile(tw_re[j * (n // (2 * half))], n // (2 * half))
        wi = np.tile(tw_im[j * (n // (2 * half))], n // (2 * half))
        if inverse:
            wi = -wi
        tr = np.subtract(np.multiply(wr, re[b]), np.multiply(wi, im[b]))
        ti = np.add(np.multiply(wr, im[b]), np.multiply(wi, re[b]))
        ar, ai = re[a].copy(), im[a].copy()
        re[b], im[b] = np.subtract(ar, tr), np.subtract(ai, ti)
        re[a], im[a] = np.add(ar, tr), np.add(ai, ti)
        half *= 2
    return re, im


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("inverse", [False, True])
@pytest.mark.parametrize("size", [1, 2, 4, 8, 32, 512, 4096])
def test_kernel_computes_exactly_the_textbook_radix2_values(dtype, inverse, size) -> None:
    """Kernel == numpy twin value for value (−0 == 0): the kernel's loop order and its skipping of
    zero operands change no computed number, so Thm 24.2's model describes it exactly. Sparse and
    zero-padded inputs exercise the skip."""
    rng = np.random.default_rng(size)
    re = rng.standard_normal(size).astype(dtype)
    im = rng.standard_normal(size).astype(dtype)
    re[rng.random(size) < 0.7] = 0
    im[rng.random(size) < 0.7] = 0
    re[size // 2 :] = 0  # zero padding
    table = twiddles(size, dtype)
    got_re, got_im = fft_complex(re, im, inverse=inverse, dtype=dtype)
    twin_re, twin_im = _textbook_twin(re, im, table.re, table.im, inverse)
    np.testing.assert_array_equal(got_re, twin_re)
    np.testing.assert_array_equal(got_im, twin_im)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("size", [1, 2, 4, 8, 64, 1024, 4096, 1 << 15])
def test_every_twiddle_is_within_mu_of_its_arb_ball(dtype, size) -> None:
    table = twiddles(size, dtype)
    half = size // 2
    assert table.re.shape == (half,) and table.im.shape == (half,)
    assert not table.re.flags.writeable
    assert 0.0 <= table.mu <= MU_OVER_U_MAX * unit_roundoff(dtype)
    ks = range(half) if half <= 4096 else sorted(set(range(0, half, 37)) | set(range(half - 64, half)))
    with with_precision():
        mu = arb(table.mu)
        for k in ks:
            s, c = (arb(-2 * k) / size).sin_cos_pi()  # w_k = e^{−2πik/N}, computed directly
            num_r, den_r = table.re[k].as_integer_ratio()
            num_i, den_i = table.im[k].as_integer_ratio()
            dist = ((arb(num_r) / den_r - c) ** 2 + (arb(num_i) / den_i - s) ** 2).sqrt()
            assert dist <= mu, f"k={k}: |ŵ − w| up to {dist.upper()} > μ={table.mu}"


def test_twiddle_tables_are_cached() -> None:
    assert twiddles(1024, np.float64) is twiddles(1024, np.float64)
    assert twiddles(1024, np.float64) is not twiddles(1024, np.longdouble)


@pytest.mark.parametrize("dtype", DTYPES)
def test_agrees_with_numpy_fft_at_65536_points(dtype) -> None:
    size = 1 << 16
    rng = np.random.default_rng(3)
    re, im = rng.random(size), rng.standard_normal(size)
    ref = np.fft.fft(re + 1j * im)
    got_re, got_im = fft_complex(re, im, inverse=False, dtype=dtype)
    got = got_re.astype(np.float64) + 1j * got_im.astype(np.float64)
    assert np.linalg.norm(got - ref) <= PEER_RTOL * np.linalg.norm(ref)
    back_re, back_im = fft_complex(ref.real, ref.imag, inverse=True, dtype=dtype)
    back = (back_re.astype(np.float64) + 1j * back_im.astype(np.float64)) / size
    assert np.linalg.norm(back - (re + 1j * im)) <= PEER_RTOL * np.linalg.norm(re + 1j * im)
    half = rfft_power2(re[:50000], size, dtype)
    assert half.dtype == np.result_type(dtype, np.complex64) and half.size == size // 2 + 1
    ref_half = np.fft.rfft(re[:50000], size)
    assert np.linalg.norm(half.astype(np.complex128) - ref_half) <= PEER_RTOL * np.linalg.norm(ref_half)


@pytest.mark.parametrize("size", [1, 2, 8, 1 << 16])
def test_irfft_power2_inverts_rfft_power2(size) -> None:
    x = np.random.default_rng(size).random(size)
    back = irfft_power2(rfft_power2(x, size, np.float64), size)
    assert back.dtype == np.float64 and back.size == size
    np.testing.assert_allclose(back, x, rtol=0, atol=PEER_RTOL * max(1.0, np.sqrt(size)))
    np.testing.assert_allclose(back, np.fft.irfft(np.fft.rfft(x), size), rtol=0, atol=PEER_RTOL * max(1.0, np.sqrt(size)))


def test_irfft_power2_of_exact_hermitian_spectrum_is_exact_for_small_integers() -> None:
    """Bins of the integer vector (1, 2, 3, 4): inverse by hand, every operation exact."""
    spectrum = np.array([10.0 + 0j, -2.0 + 2.0j, -2.0 + 0j])
    np.testing.assert_array_equal(irfft_power2(spectrum, 4), [1.0, 2.0, 3.0, 4.0])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("size", [1, 2, 8, 64])
def test_bit_reversal_matches_python_twin(dtype, size) -> None:
    re = np.arange(size, dtype=dtype)
    im = -np.arange(size, dtype=dtype)
    assert kernel.bit_reverse(re, im) == 0
    bits = size.bit_length() - 1
    twin = [int(format(i, f"0{bits}b")[::-1], 2) if bits else 0 for i in range(size)]
    np.testing.assert_array_equal(re, np.array(twin, dtype=dtype))
    np.testing.assert_array_equal(im, -np.array(twin, dtype=dtype))


def test_higham_constant_matches_closed_form_rounded_up() -> None:
    u, mu = 2.0**-53, 5 * 2.0**-53
    for size in (2, 1024, 1 << 20):
        got = higham_constant(size, u, mu)
        with mpmath.workdps(50):
            gamma4 = 4 * mpmath.mpf(u) / (1 - 4 * mpmath.mpf(u))
            eta = mu + gamma4 * (mpmath.sqrt(2) + mu)
            levels = size.bit_length() - 1
            exact = levels * eta / (1 - levels * eta)
            assert exact <= got <= exact * (1 + mpmath.mpf(2) ** -50)
    assert higham_constant(1, u, mu) == 0.0
    with pytest.raises(NumericalFailure):
        higham_constant(4, u, 1.0)  # L·η >= 1: the theorem gives nothing


def test_kernel_return_codes_on_bad_shapes() -> None:
    tw = twiddles(8, np.float64)
    assert kernel.fft_inplace(np.zeros(8), np.zeros(4), tw.re, tw.im, False) == 1
    assert kernel.fft_inplace(np.zeros(6), np.zeros(6), tw.re[:3], tw.im[:3], False) == 2
    assert kernel.fft_inplace(np.zeros(8), np.zeros(8), tw.re[:2], tw.im[:2], False) == 3


@pytest.mark.parametrize(
    "call",
    [
        lambda: fft_complex(np.zeros(6), np.zeros(6), inverse=False, dtype=np.float64),
        lambda: fft_complex(np.zeros(8), np.zeros(4), inverse=False, dtype=np.float64),
        lambda: fft_complex(np.zeros(8), np.zeros(8), inverse=False, dtype=np.float32),
        lambda: fft_complex(np.zeros(8), np.zeros(8), inverse=None, dtype=np.float64),
        lambda: fft_complex(np.zeros((2, 4)), np.zeros((2, 4)), inverse=False, dtype=np.float64),
        lambda: fft_complex(np.array([np.nan, 0.0]), np.zeros(2), inverse=False, dtype=np.float64),
        lambda: rfft_power2(np.ones(5), 12, np.float64),
        lambda: rfft_power2(np.ones(9), 8, np.longdouble),
        lambda: rfft_power2(np.ones(4) + 0j, 8, np.float64),
        lambda: irfft_power2(np.ones(4, dtype=complex), 8),
        lambda: irfft_power2(np.ones(5, dtype=complex), 12),
        lambda: twiddles(0, np.float64),
        lambda: twiddles(8.0, np.float64),
        lambda: higham_constant(3, 2.0**-53, 2.0**-53),
    ],
)
def test_bad_input_is_invalid_argument(call) -> None:
    with pytest.raises(InvalidArgument):
        call()


def test_error_message_says_how_to_fix_the_length() -> None:
    with pytest.raises(InvalidArgument, match=r"size=12 is invalid: must be a power of two .*use 16"):
        rfft_power2(np.ones(5), 12, np.float64)


def test_packed_inverse_pair_within_its_bound_against_mpmath() -> None:
    """irfft_pair_power2 (two Hermitian inverses in one complex transform) against the exact inverse
    DFTs (mpmath, 40 digits): each result within (c(1 + u) + u)(‖X‖₂ + ‖Y‖₂)/√N in ℓ2, the bound
    verifier.pld.power charges. Catches a packing that mixes the two results (x from Im, y from Re)
    or forgets the conjugate half of either spectrum."""
    import mpmath

    from verifier.pld.radix2 import higham_constant, irfft_pair_power2, twiddles

    n = 32
    rng = np.random.default_rng(3)
    half_x = rng.standard_normal(n // 2 + 1) + 1j * rng.standard_normal(n // 2 + 1)
    half_y = rng.standard_normal(n // 2 + 1) + 1j * rng.standard_normal(n // 2 + 1)
    got_x, got_y = irfft_pair_power2(half_x, half_y, n)
    u = 2.0**-53
    c = higham_constant(n, u, twiddles(n, np.float64).mu)
    with mpmath.workdps(40):

        def exact(half):
            full = [mpmath.mpc(complex(v)) for v in half]
            full[0], full[n // 2] = mpmath.mpf(full[0].real), mpmath.mpf(full[n // 2].real)
            full += [mpmath.conj(full[n - k]) for k in range(n // 2 + 1, n)]
            return [mpmath.re(mpmath.fsum(full[k] * mpmath.expjpi(mpmath.mpf(2 * j * k) / n) for k in range(n))) / n for j in range(n)]

        def norm(half):
            full = np.concatenate([half, np.conj(half[1 : n // 2][::-1])])
            return float(np.sqrt(np.sum(np.abs(full) ** 2)))

        bound = (c * (1 + u) + u) * (norm(half_x) + norm(half_y)) / math.sqrt(n) * 1.01
        for got, half in ((got_x, half_x), (got_y, half_y)):
            ref = exact(half)
            error = math.sqrt(sum(float(g - r) ** 2 for g, r in zip(got, ref)))
            assert error <= bound, (error, bound)
