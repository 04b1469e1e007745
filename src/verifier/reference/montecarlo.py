"""Plain-NumPy twins of the Monte Carlo kernels in ``src/fast/mc_allocation.pyx`` (slow, obvious).

- :func:`allocation_losses_from_normals`: the random-allocation privacy loss of the Gaussian pair from
  given standard normals, by scipy's ``logsumexp`` (Feldman & Shenfeld, Lemma F.1; the add direction
  is the notes' [DERIVED] analogue, notes/random-allocation.md §1.6);
- :func:`mean_ratio_losses`: ln((1/t) Σ_i e^{ℓ_i}) per row;
- :func:`hockey_stick_moments`: Σ f and Σ f² with f = (1 − e^{ε−L})_+, summed exactly (math.fsum);
- :func:`gaussian_allocation_losses`: the whole plain-NumPy sampler (numpy's own normals), the
  baseline of benchmarks/mc_allocation.py.

Directions are the strings "add" / "remove".
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

__all__ = ["allocation_losses_from_normals", "mean_ratio_losses", "hockey_stick_moments", "gaussian_allocation_losses"]


def _sign(direction: str) -> float:
    if direction not in ("add", "remove"):
        raise ValueError(f"direction={direction!r}: must be 'add' or 'remove'")
    return 1.0 if direction == "remove" else -1.0


def allocation_losses_from_normals(z: npt.NDArray[np.float64], a: float, direction: str) -> npt.NDArray[np.float64]:
    """Rows of ``z`` (samples × t standard normals) → allocation losses for the Gaussian pair with
    a = Δ/σ: coordinate losses a·z − a²/2, plus a² on the first coordinate for "remove" (its output
    is drawn from P); REMOVE L = ln mean e^{ℓ}, ADD L = −ln mean e^{ℓ}."""
    sign = _sign(direction)
    ell = a * np.asarray(z, dtype=float) - 0.5 * a * a
    if direction == "remove":
        ell[:, 0] += a * a
    from scipy.special import logsumexp  # here, not at import: start-up time (issue 17)

    return sign * (logsumexp(ell, axis=1) - math.log(ell.shape[1]))


def mean_ratio_losses(coordinate_losses: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """ln((1/t) Σ_i e^{ℓ_ji}) per row (±∞ entries allowed)."""
    from scipy.special import logsumexp  # here, not at import: start-up time (issue 17)

    ell = np.asarray(coordinate_losses, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = logsumexp(ell, axis=1) - math.log(ell.shape[1])
    return np.where(np.isposinf(ell).any(axis=1), np.inf, out)


def hockey_stick_moments(losses: npt.ArrayLike, epsilons: npt.ArrayLike) -> tuple[list[float], list[float]]:
    """(Σ_j f_j, Σ_j f_j²) per ε with f_j = max(0, −expm1(ε − L_j)), exactly rounded sums."""
    ls = [float(x) for x in np.asarray(losses, dtype=float)]
    sums, squares = [], []
    for eps in np.asarray(epsilons, dtype=float):
        f = [(-math.expm1(eps - x) if x != math.inf else 1.0) for x in ls if x > eps]
        sums.append(math.fsum(f))
        squares.append(math.fsum(v * v for v in f))
    return sums, squares


def gaussian_allocation_losses(size: int, t: int, a: float, direction: str, rng: np.random.Generator) -> npt.NDArray[np.float64]:
    """Plain-NumPy sampler of the Gaussian allocation loss (numpy's normals, scipy's logsumexp)."""
    return allocation_losses_from_normals(rng.standard_normal((size, t)), a, direction)
