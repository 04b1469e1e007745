"""Lower bounds and Monte Carlo evidence for matrix mechanisms (:mod:`verifier.matrix.evidence`) as
certification methods: "matrix-projection" gives rigorous LOWER bounds on δ(ε) and ε(δ) (non-negative
C only: the Lemma 2.8 pair is attained there), "matrix-mc" gives ESTIMATEs of δ(ε) for small N·b."""

from __future__ import annotations

from typing import Sequence

from verifier._types import Bound, Direction, Estimate, Quantity, Side
from verifier.certify.method import EstimateMethod, Guarantee, Method
from verifier.matrix.evidence import CITATION_PROJECTION, mc_delta, projection_delta_lower, projection_epsilon_lower
from verifier.rdp.matrix import scaled_gram, scaled_means
from verifier.schemes import MatrixMechanism, Scheme

__all__ = ["MatrixProjection", "MatrixMonteCarlo", "METHODS"]

#: Largest b·N for the Monte Carlo evidence (each sample costs b·N multiply-adds).
MC_MAX_SIZE = 1 << 18
#: Samples per estimate, fixed seed (reproducible certificates) and confidence.
MC_SAMPLES = 1 << 14
MC_SEED = 0
MC_CONFIDENCE = 0.99


class MatrixProjection(Method):
    name = "matrix-projection"
    citation = CITATION_PROJECTION
    returns = frozenset({Guarantee.LOWER})
    cost = 1
    scheme_types = (MatrixMechanism,)

    def supports(self, scheme: Scheme) -> bool:
        return isinstance(scheme, MatrixMechanism) and not scheme.strategy.signed

    def delta_bounds(self, scheme: Scheme, epsilon: float, direction: Direction) -> Sequence[Bound]:
        value = projection_delta_lower(scaled_gram(scheme), epsilon, direction)
        return [Bound(value, Side.LOWER, direction, Quantity.DELTA, epsilon, self.name, self.citation)]

    def epsilon_bounds(self, scheme: Scheme, delta: float, direction: Direction) -> Sequence[Bound]:
        value = projection_epsilon_lower(scaled_gram(scheme), delta, direction)
        return [Bound(value, Side.LOWER, direction, Quantity.EPSILON, delta, self.name, self.citation)]


class MatrixMonteCarlo(EstimateMethod):
    name = "matrix-mc"
    citation = "Monte Carlo of the Lemma 2.8 pair's privacy loss (estimate with a KL-Chernoff interval)"
    cost = 3
    scheme_types = (MatrixMechanism,)

    def supports(self, scheme: Scheme) -> bool:
        return isinstance(scheme, MatrixMechanism) and scheme.batches * scheme.strategy.size <= MC_MAX_SIZE

    def delta_estimates(
        self, scheme: Scheme, epsilon: float, direction: Direction, *, seconds: float | None = None
    ) -> Sequence[Estimate]:
        assert isinstance(scheme, MatrixMechanism)
        return [mc_delta(scaled_means(scheme), epsilon, direction, MC_SAMPLES, MC_SEED, MC_CONFIDENCE)]


METHODS = [MatrixProjection(), MatrixMonteCarlo()]
