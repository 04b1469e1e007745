"""One Monte Carlo run, cut into reproducible chunks: what a chunk computes and how chunks combine.

A :class:`Plan` fixes everything that determines the numbers (scheme, ε grid, directions, seed,
chunk size, whether importance sampling is used). Chunk ``i`` of direction ``d`` draws from
``SeedSequence(seed, spawn_key=(i, d))`` (d = 0 for ADD, 1 for REMOVE), so it gives the same partial
sums in-process, on any dask worker, and whichever other directions are requested; a run is
reproducible for a given seed and chunk size. A chunk's partial sums (count, Σf, Σf² per ε, and the
importance-sampling scale) are all that is kept; totals are exact-rounded sums (math.fsum) over
chunks, so the order in which chunks finish does not matter.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from verifier._directed import down, up
from verifier._fast.mc_allocation import hockey_stick_moments
from verifier._types import Direction, Estimate, Quantity
from verifier.errors import IncompatibleObjects, NumericalFailure
from verifier.montecarlo.importance import sample_importance
from verifier.montecarlo.intervals import mean_interval
from verifier.montecarlo.order_statistics import sample_order_statistics_loss
from verifier.montecarlo.samplers import allocation_rounds, sample_loss
from verifier.pairs import Gaussian
from verifier.schemes import Allocation, Scheme

__all__ = [
    "Plan",
    "uses_importance",
    "supports_order_statistics",
    "run_chunk",
    "chunk_sizes",
    "combine",
    "FORMAT_VERSION",
    "CITATION",
]

#: Bumped whenever a change alters the numbers a chunk produces (invalidates saved chunks).
FORMAT_VERSION = 2

CITATION = (
    "Monte Carlo of the hockey-stick statistic E[(1 − e^{ε−L})_+] (Feldman & Shenfeld, Def 2.1; "
    "Lemma F.1 for allocation), KL–Chernoff / empirical-Bernstein intervals (Hoeffding 1963 Thm 1; "
    "Maurer & Pontil 2009 Thm 4)"
)
_IMPORTANCE_CITATION = "; importance sampling of Chua et al. 2024a (notes/random-allocation.md §3.9)"
_ORDER_CITATION = (
    "; order statistics of Chua et al. 2024a (notes §3.9): an estimate of an UPPER bound on δ, so the "
    "interval's lower end is 0"
)

_DIRECTION_INDEX = {Direction.ADD: 0, Direction.REMOVE: 1}


def uses_importance(scheme: Scheme) -> bool:
    """Whether Chua et al.'s importance sampling applies: one round of Gaussian allocation."""
    return (
        isinstance(scheme, Allocation)
        and isinstance(scheme.pair, Gaussian)
        and scheme.k == 1
        and scheme.epochs == 1
        and scheme.steps >= 1
    )


def supports_order_statistics(scheme: Scheme) -> bool:
    """Whether the order-statistics loss applies: Gaussian allocation (any k, epochs: rounds add up)."""
    return isinstance(scheme, Allocation) and isinstance(scheme.pair, Gaussian)


@dataclass(frozen=True)
class Plan:
    """Everything that determines a run's numbers (see the module docstring)."""

    scheme: Scheme
    epsilons: tuple[float, ...]
    directions: tuple[Direction, ...]
    seed: int
    chunk_size: int
    importance: bool
    order_statistics: bool = False

    def key(self, direction: Direction) -> str:
        """Identifier of the chunks of one direction (saved chunks are reused only under this key)."""
        text = repr(
            (FORMAT_VERSION, repr(self.scheme), [float.hex(e) for e in self.epsilons], direction.value,
             self.seed, self.chunk_size, self.importance, self.order_statistics)
        )
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    @property
    def method(self) -> str:
        if self.order_statistics:
            return "montecarlo:order-statistics"
        return "montecarlo:importance" if self.importance else "montecarlo"


def chunk_sizes(samples: int, chunk_size: int) -> list[int]:
    """Sizes of the chunks of a run of ``samples`` draws (all ``chunk_size`` but the last)."""
    full, rest = divmod(samples, chunk_size)
    return [chunk_size] * full + ([rest] if rest else [])


def run_chunk(plan: Plan, direction: Direction, index: int, size: int) -> dict:
    """Partial sums of chunk ``index`` (``size`` draws) in ``direction``: a JSON-ready record."""
    rng = np.random.default_rng(np.random.SeedSequence(plan.seed, spawn_key=(index, _DIRECTION_INDEX[direction])))
    eps = np.ascontiguousarray(plan.epsilons, dtype=np.float64)
    scheme = plan.scheme
    if plan.importance:
        losses, scale = sample_importance(scheme.pair, scheme.steps, direction, float(eps.min()), size, rng)
    elif plan.order_statistics:
        t, rounds = allocation_rounds(scheme)
        losses, scale = sum(sample_order_statistics_loss(scheme.pair, t, direction, size, rng) for _ in range(rounds)), 1.0
    else:
        losses, scale = sample_loss(plan.scheme, size, direction, rng), 1.0
    total, total_squares = np.empty_like(eps), np.empty_like(eps)
    if hockey_stick_moments(np.ascontiguousarray(losses), eps, total, total_squares) != 0:
        raise NumericalFailure("hockey_stick_moments rejected its buffers")  # pragma: no cover
    return {
        "key": plan.key(direction),
        "direction": direction.value,
        "chunk": index,
        "size": size,
        "scale": scale,
        "sum": total.tolist(),
        "sum_squares": total_squares.tolist(),
    }


def combine(plan: Plan, direction: Direction, records: Sequence[dict], confidence: float, interval: str) -> list[Estimate]:
    """Estimates of δ(ε) at every ε of the plan from the chunk records of one direction.

    δ(ε) = scale·E[f]; the interval on E[f] (joint level ``confidence``) is scaled and rounded
    outward by one ulp each side. With order statistics E[f] >= δ, so the lower end is 0."""
    scales = {r["scale"] for r in records}
    if len(scales) != 1:
        raise IncompatibleObjects("importance-sampling scale of chunks", min(scales), max(scales))
    scale = scales.pop()
    n = sum(r["size"] for r in records)
    total = [math.fsum(r["sum"][j] for r in records) for j in range(len(plan.epsilons))]
    total_squares = [math.fsum(r["sum_squares"][j] for r in records) for j in range(len(plan.epsilons))]
    mean, bracket = mean_interval(n, total, total_squares, confidence, interval)
    citation = CITATION + (_IMPORTANCE_CITATION if plan.importance else "") + (_ORDER_CITATION if plan.order_statistics else "")
    out = []
    for j, eps in enumerate(plan.epsilons):
        value = scale * float(mean[j])
        lower = max(0.0, down(scale * float(bracket.lower[j]))) if bracket.lower[j] > 0 and not plan.order_statistics else 0.0
        upper = min(1.0, up(scale * float(bracket.upper[j])))
        out.append(
            Estimate(
                value=value,
                lower=min(lower, value),
                upper=max(upper, value),
                confidence=confidence,
                samples=n,
                direction=direction,
                quantity=Quantity.DELTA,
                at=float(eps),
                method=plan.method,
                citation=citation,
            )
        )
    return out
