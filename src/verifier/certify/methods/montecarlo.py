"""Monte Carlo estimates of δ(ε) as a certification method (ESTIMATE only: never a bound).

The certifier reports these beside the verdict, as the independent check that catches a wrong
formula in another method (README, "What a number means"). Sample count is chosen so that one call
draws about 2^23 step outputs (between 2^12 and 2^17 samples), with a fixed seed so a certificate is
reproducible; confidence 0.99 per (direction, ε).
"""

from __future__ import annotations

from typing import Sequence

from verifier._types import Bound, Direction, Estimate
from verifier.certify.method import Guarantee, Method
from verifier.montecarlo import estimate_delta
from verifier.montecarlo.plan import CITATION
from verifier.montecarlo.samplers import allocation_rounds
from verifier.schemes import Allocation, Composed, Poisson, Scheme, Single
from verifier.schemes import Sequence as SchemeSequence

__all__ = ["MonteCarlo", "METHODS", "draws_per_sample"]

#: Step outputs drawn per call (a fraction of a second on one core: the portfolio may call this at many ε).
DRAW_BUDGET = 1 << 23
MIN_SAMPLES, MAX_SAMPLES = 1 << 12, 1 << 17
SEED = 0
CONFIDENCE = 0.99


def draws_per_sample(scheme: Scheme) -> int:
    """Step outputs drawn for one privacy-loss sample of ``scheme`` (the sampler's cost)."""
    if isinstance(scheme, Composed):
        return scheme.times * draws_per_sample(scheme.scheme)
    if isinstance(scheme, Poisson):
        return scheme.steps
    if isinstance(scheme, Allocation):
        t, rounds = allocation_rounds(scheme)
        return t * rounds
    if isinstance(scheme, SchemeSequence):
        return sum(draws_per_sample(phase) for phase in scheme.phases)
    return 1


class MonteCarlo(Method):
    name = "montecarlo"
    citation = CITATION
    returns = frozenset({Guarantee.ESTIMATE})
    cost = 3
    scheme_types = (Single, Composed, Poisson, Allocation, SchemeSequence)

    def supports(self, scheme: Scheme) -> bool:
        return isinstance(scheme, self.scheme_types)

    def delta_bounds(self, scheme: Scheme, epsilon: float, direction: Direction) -> Sequence[Bound]:
        return []

    def epsilon_bounds(self, scheme: Scheme, delta: float, direction: Direction) -> Sequence[Bound]:
        return []

    def delta_estimates(self, scheme: Scheme, epsilon: float, direction: Direction) -> Sequence[Estimate]:
        """One Estimate of δ(ε) in ``direction`` (:func:`verifier.montecarlo.estimate_delta`)."""
        samples = max(MIN_SAMPLES, min(MAX_SAMPLES, DRAW_BUDGET // draws_per_sample(scheme)))
        result = estimate_delta(scheme, [epsilon], [direction], samples, seed=SEED, confidence=CONFIDENCE)
        return list(result.estimates[direction])


METHODS = [MonteCarlo()]
