"""Two members sharing one transform: the error bound of the adaptive recursion's packed FFT
convolutions (verifier.pld.fft.Operand with ``imag``, convolve_bracket with ``cyclic``; used by
verifier.pld.adaptive, the ``adaptive`` fixed-batch method).

The recursion correlates one real vector a (the grid values, extended) with each member's masses.
Two members x, y >= 0 are packed into one complex operand b = x + i·y: one forward transform of b,
one pointwise product with A = FFT(a), one inverse transform give both a*x (real part) and a*y
(imaginary part). verifier bounds every entry of both parts by the one bound E of the module
docstring of verifier.pld.fft (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed.,
Thm 24.2 for the transforms, Lemma 3.5 for the complex products), evaluated with the packed
operand's norms ‖b‖₁ <= ‖x‖₁ + ‖y‖₁ and ‖b‖₂ = (‖x‖₂² + ‖y‖₂²)^½. What that rests on:

1. Linearity (sympy, symbolic vectors): for real a, a*(x + i·y) = a*x + i·(a*y) entrywise, so the
   exact packed product's real and imaginary parts are the two members' convolutions.
2. Parts (sympy): |Re w|, |Im w| <= |w| for every complex w (Re² <= Re² + Im²), so the computed
   complex entry's error bound E bounds each part's error.
3. Norms (sympy): Σ|x_j + i·y_j|² = Σx_j² + Σy_j² (``packed_l2_sq``: the ℓ2 norm is exact), and
   (x_j + y_j)² − |x_j + i·y_j|² = 2x_j·y_j >= 0 for x, y >= 0 (``l1_gap``: |x_j + i·y_j| <= x_j + y_j,
   so ‖x‖₁ + ‖y‖₁ bounds ‖b‖₁ from above; the bound E increases with every norm).
4. The transform facts Thm 24.2's use needs for a complex operand (sympy, the DFT matrix of size
   N = 2, 4, 8 on symbolic complex vectors): Parseval Σ|B_k|² = N·Σ|b_j|² (``parseval``), i.e.
   ‖B‖₂ = √N‖b‖₂, and ‖B‖∞ <= ‖b‖₁ (each B_k is a sum of the b_j times unit-modulus roots).
5. Cyclic reading (exact rationals): the recursion transforms at N = 2^L > length of the extended
   grid, and reads a member of offset o and m masses at start = low + o + m − 1 … + size − 1
   (low >= −o). The cyclic convolution of the zero-padded extended grid with the reversed masses
   equals the linear correlation Σ_j ext[i + low + o + j]·p_j there: a wrapped term would need an
   entry at index >= N + i + low + o >= N > length. Checked exactly on random instances.
6. The bound holds and is not vacuous (exact rationals): on random non-negative inputs
   (binary64 values, exact as rationals), convolve_bracket of a real operand with a packed
   operand, against the exact rational cyclic convolutions of a with x and with y: every entry of
   both parts lies within E of its exact value, and E is below 1e-11 of the largest exact entry
   (measured: 3e-13 to 9e-13 of it at N = 256 and 512, the largest observed error 5e-4 to 8e-4
   of E: the bound is a worst case over every rounding, not loose by orders of magnitude more).

Exports of :func:`derive`:

=============  ==========================  ==============
name           expression                  free symbols
=============  ==========================  ==============
packed_l2_sq   X2**2 + Y2**2               X2, Y2
l1_gap         2*x*y                       x, y
parseval       N*S                         N, S
=============  ==========================  ==============
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

if __package__ in (None, ""):  # run as `python proofs/packed_fft.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import random
from fractions import Fraction

import numpy as np
import sympy as sp

from proofs._common import DerivationFailed, merge_claims, record_check, require_equal

__all__ = ["EXPORT_SYMBOLS", "claims", "derive"]

EXPORT_SYMBOLS = {
    "packed_l2_sq": ("X2", "Y2"),
    "l1_gap": ("x", "y"),
    "parseval": ("N", "S"),
}

_X2, _Y2 = sp.symbols("X2 Y2", nonnegative=True)
_XS, _YS = sp.symbols("x y", nonnegative=True)
_N, _S = sp.symbols("N S", positive=True)

#: Random instances of the exact checks (fixed seed: repeatable).
_INSTANCES = 12


def claims() -> dict[str, sp.Expr]:
    return {"packed_l2_sq": _X2**2 + _Y2**2, "l1_gap": 2 * _XS * _YS, "parseval": _N * _S}


def _linearity() -> None:
    """Step 1: a*(x + i·y) = a*x + i·(a*y) for real symbolic a (length 3) and x, y (length 2)."""
    a = sp.symbols("a0:3", real=True)
    x = sp.symbols("x0:2", real=True)
    y = sp.symbols("y0:2", real=True)
    for n in range(len(a) + len(x) - 1):
        pairs = [(i, n - i) for i in range(len(a)) if 0 <= n - i < len(x)]
        packed = sp.expand(sum(a[i] * (x[j] + sp.I * y[j]) for i, j in pairs))
        require_equal(sp.re(packed), sum(a[i] * x[j] for i, j in pairs), f"Re of the packed convolution, entry {n}")
        require_equal(sp.im(packed), sum(a[i] * y[j] for i, j in pairs), f"Im of the packed convolution, entry {n}")


def _parts() -> None:
    """Step 2: |w|² − (Re w)² = (Im w)² >= 0 and |w|² − (Im w)² = (Re w)² >= 0."""
    u, v = sp.symbols("u v", real=True)
    w = u + sp.I * v
    require_equal(sp.expand(sp.Abs(w) ** 2 - sp.re(w) ** 2), v**2, "|w|² − Re² = Im²")
    require_equal(sp.expand(sp.Abs(w) ** 2 - sp.im(w) ** 2), u**2, "|w|² − Im² = Re²")


def _norms(claim: Mapping[str, sp.Expr]) -> None:
    """Step 3: the packed operand's ℓ2 norm from the parts', and the ℓ1 gap."""
    x = sp.symbols("p0:4", nonnegative=True)
    y = sp.symbols("r0:4", nonnegative=True)
    squares = sum(sp.expand(sp.Abs(xi + sp.I * yi) ** 2) for xi, yi in zip(x, y))
    parts = {_X2: sp.sqrt(sum(xi**2 for xi in x)), _Y2: sp.sqrt(sum(yi**2 for yi in y))}
    require_equal(squares, claim["packed_l2_sq"].subs(parts), "‖x + i·y‖₂² from the parts' norms")
    require_equal(sp.expand((_XS + _YS) ** 2 - sp.Abs(_XS + sp.I * _YS) ** 2), claim["l1_gap"], "(x + y)² − |x + i·y|²")


def _parseval(claim: Mapping[str, sp.Expr]) -> None:
    """Step 4: Σ|B_k|² = N·Σ|b_j|² for the DFT B_k = Σ_j b_j ω^{jk}, ω = e^{−2πi/N}, N = 2, 4, 8."""
    for size in (2, 4, 8):
        re = sp.symbols(f"u0:{size}", real=True)
        im = sp.symbols(f"v0:{size}", real=True)
        b = [re[j] + sp.I * im[j] for j in range(size)]
        omega = sp.exp(-2 * sp.pi * sp.I / size)
        spectrum = [sp.expand(sum(b[j] * omega ** (j * k) for j in range(size)), complex=True) for k in range(size)]
        total = sp.expand(sum(sp.re(s) ** 2 + sp.im(s) ** 2 for s in spectrum))
        energy = sum(re[j] ** 2 + im[j] ** 2 for j in range(size))
        require_equal(total, claim["parseval"].subs({_N: size, _S: energy}), f"Parseval at N = {size}")
        if any(sp.simplify(sp.Abs(omega ** (j * k)) - 1) != 0 for j in range(size) for k in range(size)):
            raise DerivationFailed(f"a DFT coefficient at N = {size} is not of unit modulus (‖B‖∞ <= ‖b‖₁ would fail)")
        record_check("symbolic")


def _cyclic(values: list[Fraction], kernel: list[Fraction], size: int) -> list[Fraction]:
    """The exact cyclic convolution of ``values`` and ``kernel``, both zero-padded to ``size``."""
    out = [Fraction(0)] * size
    for i, v in enumerate(values):
        for j, k in enumerate(kernel):
            out[(i + j) % size] += v * k
    return out


def _cyclic_reading(rng: random.Random) -> None:
    """Step 5: the recursion's reading of a cyclic convolution is the linear correlation."""
    for _ in range(_INSTANCES):
        size = rng.randint(3, 12)
        members = [(rng.randint(-6, 4), [Fraction(rng.randint(0, 9), 9) for _ in range(rng.randint(1, 7))]) for _ in range(2)]
        low = max(0, -min(o for o, _ in members))
        high = max(0, max(o + len(p) - 1 for o, p in members))
        length = low + size + high
        transform = 1 << length.bit_length()
        extended = [Fraction(rng.randint(0, 20), 20) for _ in range(length)]
        for offset, probs in members:
            start = low + offset + len(probs) - 1
            wrapped = _cyclic(extended, probs[::-1], transform)[start : start + size]
            linear = [sum(extended[i + low + offset + j] * p for j, p in enumerate(probs)) for i in range(size)]
            if wrapped != linear:
                raise DerivationFailed(f"the cyclic reading differs from the correlation (offset {offset}, {len(probs)} masses, N = {transform})")
            record_check("points")


def _bound_holds(rng: random.Random) -> None:
    """Step 6: verifier's packed convolution within its bound E of the exact rational values, E not vacuous."""
    from verifier.pld.fft import Operand, convolve_bracket

    for _ in range(_INSTANCES):
        n_a, n_x, n_y = rng.randint(40, 300), rng.randint(40, 300), rng.randint(1, 300)
        transform = 1 << (max(n_a, n_x, n_y) + 1).bit_length()
        a = np.array([rng.random() ** 3 for _ in range(n_a)])
        x = np.array([rng.random() for _ in range(n_x)]) / n_x
        y = np.array([rng.random() ** 2 for _ in range(n_y)]) / n_y
        real, imag, bound = convolve_bracket(Operand(a, transform), Operand(x, transform, y), cyclic=True)
        exact_a = [Fraction(v) for v in a]
        largest = Fraction(0)
        for part, member in ((real, x), (imag, y)):
            exact = _cyclic(exact_a, [Fraction(v) for v in member], transform)
            for got, want in zip(part, exact):
                if abs(Fraction(float(got)) - want) > Fraction(bound):
                    raise DerivationFailed(f"packed FFT entry {float(got)!r} is more than E = {bound:.3g} from the exact {float(want)!r}")
            largest = max(largest, max(exact))
        if not 0 < bound <= 1e-11 * float(largest):
            raise DerivationFailed(f"the bound E = {bound:.3g} is vacuous against the largest entry {float(largest):.3g}")
        record_check("points")


def derive(*, claimed: Mapping[str, sp.Expr] | None = None) -> dict[str, sp.Expr]:
    """Check steps 1-6 against the claims; returns the verified expressions. Raises DerivationFailed."""
    claim = merge_claims(claims(), claimed)
    _linearity()
    _parts()
    _norms(claim)
    _parseval(claim)
    rng = random.Random(42)
    _cyclic_reading(rng)
    _bound_holds(rng)
    return {name: claim[name] for name in EXPORT_SYMBOLS}


if __name__ == "__main__":
    for key, value in derive().items():
        print(f"{key} = {value}")
