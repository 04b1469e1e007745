"""Privacy-loss samplers for every scheme, in both directions.

``sample_loss(scheme, size, direction, rng)`` returns draws of the scheme's privacy loss L in
``direction`` under the direction's first distribution, so that

    δ(ε) = E[(1 − e^{ε − L})_+]        (Feldman & Shenfeld, Def 2.1, third form).

With (P, Q) the step's REMOVE-oriented pair and ℓ = ln(P/Q):

- Single: L is the pair's loss (ln(P/Q) under P for REMOVE, ln(Q/P) under Q for ADD);
- Composed(S, m): the sum of m independent losses of S (Zhu et al. 2022, Thm 10: the product pair);
- Poisson(λ, t): per step the pair (λP + (1−λ)Q, Q) (REMOVE) or (Q, λP + (1−λ)Q) (ADD)
  (Zhu et al. 2022, Thm 11): REMOVE loss ln(λe^ℓ + 1 − λ) with ℓ drawn under P w.p. λ and under Q
  otherwise; ADD loss −ln(λe^ℓ + 1 − λ) with ℓ drawn under Q; summed over the t steps;
- Allocation(t, k, epochs): k·epochs independent rounds of 1-out-of-⌊t/k⌋ allocation (Feldman &
  Shenfeld, Lemma 3.2: an UPPER bound on the k-out-of-t profile when k > 1, exact for k = 1; epochs
  compose). One round's loss is a log-sum-exp over t' = ⌊t/k⌋ coordinates (Lemma F.1 and its add
  analogue, notes/random-allocation.md §1.6): REMOVE ln((1/t') Σ e^{ℓ(Y_i)}) with Y_1 ~ P and the
  rest ~ Q; ADD −ln((1/t') Σ e^{ℓ(Y_i)}) with all Y_i ~ Q. For the Gaussian pair the compiled kernel
  draws the normals itself (:func:`verifier._fast.mc_allocation.gaussian_allocation_losses`);
- Sequence(phases): the sum of one independent loss of each phase (the product pair again);
- ShuffledBatches(n, B, E): the pair the ``shuffled`` method's LOWER side is attained by
  (:mod:`verifier.certify.methods.shuffled`): per epoch (M, Q^f) with M = λA + (1 − λ)Q^f, A the
  1-out-of-f allocation law, f = ⌊n/B⌋, λ = fB/n: REMOVE loss ln(λe^{a} + 1 − λ) with a the
  allocation's REMOVE loss ln(A/Q^f), drawn under A w.p. λ and under Q^f otherwise (a = minus the
  ADD round's loss there); ADD loss −ln(λe^{a} + 1 − λ) with a drawn under Q^f; summed over epochs.

Dispatch is by scheme type through :data:`SAMPLERS`. Results depend only on the rng state and
``size``.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
import numpy.typing as npt

from verifier._fast.mc_allocation import gaussian_allocation_losses, mean_ratio_losses
from verifier._types import Direction, Measure
from verifier._validation import check_integer
from verifier.errors import InvalidArgument, NumericalFailure
from verifier.pairs import DominatingPair, Gaussian
from verifier.schemes import Allocation, Composed, Poisson, Scheme, Sequence, ShuffledBatches, Single

__all__ = [
    "sample_loss",
    "allocation_rounds",
    "coordinate_losses_to_allocation",
    "kernel_state",
    "SAMPLERS",
    "BATCH_COORDINATES",
]

#: Coordinates held in memory at once by the matrix-based samplers (8 MiB of float64).
BATCH_COORDINATES = 1 << 20

Sampler = Callable[[Scheme, int, Direction, np.random.Generator], npt.NDArray[np.float64]]


def kernel_state(rng: np.random.Generator) -> npt.NDArray[np.uint64]:
    """Four xoshiro256** state words for the compiled kernel, drawn from ``rng`` (never all zero)."""
    while True:
        state = rng.integers(0, np.iinfo(np.uint64).max, size=4, dtype=np.uint64, endpoint=True)
        if state.any():
            return state


def _step_losses(pair: DominatingPair, size: int, under: Measure, rng: np.random.Generator) -> npt.NDArray[np.float64]:
    """REMOVE-oriented step losses ℓ = ln(P/Q) drawn under ``under``."""
    return pair.sample_loss(size, Direction.REMOVE, under, rng)


def _single(scheme: Single, size: int, direction: Direction, rng: np.random.Generator) -> npt.NDArray[np.float64]:
    under = Measure.P if direction is Direction.REMOVE else Measure.Q
    return scheme.pair.sample_loss(size, direction, under, rng)


def _composed(scheme: Composed, size: int, direction: Direction, rng: np.random.Generator) -> npt.NDArray[np.float64]:
    total = np.zeros(size)
    for _ in range(scheme.times):
        total += sample_loss(scheme.scheme, size, direction, rng)
    return total


def _poisson(scheme: Poisson, size: int, direction: Direction, rng: np.random.Generator) -> npt.NDArray[np.float64]:
    # rate 1: every step sampled, the miss branch has probability 0 (log 0 = -inf; logaddexp keeps ℓ)
    log_rate, log_miss = math.log(scheme.rate), (math.log1p(-scheme.rate) if scheme.rate < 1.0 else -math.inf)
    total = np.zeros(size)
    for _ in range(scheme.steps):
        if direction is Direction.REMOVE:
            sampled = rng.random(size) < scheme.rate
            ell = np.empty(size)
            hits = int(sampled.sum())
            ell[sampled] = _step_losses(scheme.pair, hits, Measure.P, rng)
            ell[~sampled] = _step_losses(scheme.pair, size - hits, Measure.Q, rng)
            total += np.logaddexp(log_rate + ell, log_miss)
        else:
            total -= np.logaddexp(log_rate + _step_losses(scheme.pair, size, Measure.Q, rng), log_miss)
    return total


def allocation_rounds(scheme: Allocation) -> tuple[int, int]:
    """(t', rounds): the k-out-of-t allocation over E epochs is bounded by ``rounds`` = k·E
    compositions of 1-out-of-t' allocation with t' = ⌊t/k⌋ (Feldman & Shenfeld, Lemma 3.2; the
    floor, never the ceiling: notes §6)."""
    return scheme.steps // scheme.k, scheme.k * scheme.epochs


def _gaussian_round(pair: Gaussian, t: int, size: int, direction: Direction, rng: np.random.Generator) -> npt.NDArray[np.float64]:
    a = pair.sensitivity / pair.sigma
    out = np.empty(size)
    remove = direction is Direction.REMOVE
    status = gaussian_allocation_losses(
        out, t, a, a * a if remove else 0.0, -0.5 * a * a - math.log(t), 1.0 if remove else -1.0, kernel_state(rng)
    )
    if status != 0:
        raise NumericalFailure(f"gaussian_allocation_losses failed with status {status}")  # pragma: no cover
    return out


def coordinate_losses_to_allocation(coordinates: npt.NDArray[np.float64], direction: Direction) -> npt.NDArray[np.float64]:
    """Allocation losses from a (samples × t) matrix of coordinate losses ℓ(Y_i): ± ln mean e^{ℓ}."""
    out = np.empty(coordinates.shape[0])
    if mean_ratio_losses(np.ascontiguousarray(coordinates, dtype=np.float64), out) != 0:
        raise NumericalFailure("mean_ratio_losses rejected its buffers")  # pragma: no cover
    return out if direction is Direction.REMOVE else -out


def _generic_round(pair: DominatingPair, t: int, size: int, direction: Direction, rng: np.random.Generator) -> npt.NDArray[np.float64]:
    rows = max(1, BATCH_COORDINATES // t)
    parts = []
    for start in range(0, size, rows):
        n = min(rows, size - start)
        coordinates = _step_losses(pair, n * t, Measure.Q, rng).reshape(n, t)
        if direction is Direction.REMOVE:
            coordinates[:, 0] = _step_losses(pair, n, Measure.P, rng)
        parts.append(coordinate_losses_to_allocation(coordinates, direction))
    return np.concatenate(parts) if parts else np.empty(0)


def _allocation(scheme: Allocation, size: int, direction: Direction, rng: np.random.Generator) -> npt.NDArray[np.float64]:
    t, rounds = allocation_rounds(scheme)
    one_round = _gaussian_round if isinstance(scheme.pair, Gaussian) else _generic_round
    total = np.zeros(size)
    for _ in range(rounds):
        total += one_round(scheme.pair, t, size, direction, rng)
    return total


def _shuffled(scheme: ShuffledBatches, size: int, direction: Direction, rng: np.random.Generator) -> npt.NDArray[np.float64]:
    t, lam = scheme.full_batches, scheme.rate
    one_round = _gaussian_round if isinstance(scheme.pair, Gaussian) else _generic_round
    log_rate, log_miss = math.log(lam), (math.log1p(-lam) if lam < 1.0 else -math.inf)
    total = np.zeros(size)
    for _ in range(scheme.epochs):
        if direction is Direction.REMOVE:
            used = rng.random(size) < lam
            hits = int(used.sum())
            ratio = np.empty(size)
            ratio[used] = one_round(scheme.pair, t, hits, Direction.REMOVE, rng)
            ratio[~used] = -one_round(scheme.pair, t, size - hits, Direction.ADD, rng)
            total += np.logaddexp(log_rate + ratio, log_miss)
        else:
            total -= np.logaddexp(log_rate - one_round(scheme.pair, t, size, Direction.ADD, rng), log_miss)
    return total


def _sequence(scheme: Sequence, size: int, direction: Direction, rng: np.random.Generator) -> npt.NDArray[np.float64]:
    total = np.zeros(size)
    for phase in scheme.phases:
        total += sample_loss(phase, size, direction, rng)
    return total


#: The sampler for each scheme type.
SAMPLERS: dict[type, Sampler] = {
    Single: _single, Composed: _composed, Poisson: _poisson, Allocation: _allocation, Sequence: _sequence, ShuffledBatches: _shuffled,
}


def sample_loss(scheme: Scheme, size: int, direction: Direction, rng: np.random.Generator) -> npt.NDArray[np.float64]:
    """``size`` i.i.d. draws of the privacy loss of ``scheme`` in ``direction`` under the direction's
    first distribution (see the module docstring for each scheme's law and citation); +∞ where the
    pair has infinite-loss outcomes."""
    n = check_integer("size", size, minimum=0)
    if not isinstance(direction, Direction):
        raise InvalidArgument("direction", direction, "must be Direction.ADD or Direction.REMOVE")
    sampler = SAMPLERS.get(type(scheme))
    if sampler is None:
        raise InvalidArgument("scheme", scheme, f"must be one of {', '.join(t.__name__ for t in SAMPLERS)}")
    return sampler(scheme, n, direction, rng)
