"""Binary exponentiation of an associative combination: the one loop behind every m-fold
self-composition in the PLD engine (FFT spectra, rigorous convolutions, geometric laws)."""

from __future__ import annotations

from typing import Callable, TypeVar

__all__ = ["binary_power"]

T = TypeVar("T")


def binary_power(base: T, times: int, combine: Callable[[T, T | None], T]) -> T:
    """base ∘ … ∘ base (``times`` >= 1 copies) by binary exponentiation: ``combine(x, y)`` combines
    two values, ``combine(x, None)`` squares one (passed as itself, so a kernel may use the symmetry).

    ⌊log2 times⌋ squarings and popcount(times) − 1 products; the last, unused squaring is skipped.
    """
    acc = None
    power = base
    while True:
        if times & 1:
            acc = power if acc is None else combine(acc, power)
        times >>= 1
        if not times:
            return acc
        power = combine(power, None)
