"""The slow twin of the compiled orbit step (:mod:`verifier._fast.orbit_step`), in NumPy."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["orbit_step"]


def orbit_step(values: npt.NDArray[np.float64], src: npt.NDArray[np.int32], dst: npt.NDArray[np.int32], slot: npt.NDArray[np.int8],
               mult: npt.NDArray[np.int8], masses: npt.NDArray[np.float64], size: int) -> npt.NDArray[np.float64]:
    """The masses of the ``size`` states of list t + 1: for each slot j in turn, every move of that slot
    adds (mult·masses[j])·values[src] at dst (no destination twice within a slot), as the kernel does."""
    out = np.zeros(size)
    for j in range(len(masses)):
        pick = slot == j
        out[dst[pick]] += (mult[pick] * masses[j]) * values[src[pick]]
    return out
