"""A sharper UPPER profile for one truncated-Poisson Gaussian step, under add/remove with the record
first (REMOVE) and under replace-one: the other records' count M is hidden between M = B − 1 and
M >= B (issue 42).

Setting as in :mod:`verifier.pairs.batch_sampling` (n records, rate q, cap B, records of norm <= C,
b the law of M ~ Bin(n − 1, q), q_c = E[qB/(M + 1) | M >= B]). Order the records uniformly at
random: the truncated batch is the first min(B, drawn) drawn records in that order, and the dataset
without the record uses the same order and coins. Reveal A (the other records drawn) when
M <= B − 2: the step is the Poisson step at rate q with shift C, as in the two-label bound. When
M >= B − 1, reveal only U, the first B − 1 other records drawn: U is uniform among the
(B − 1)-subsets whatever M is, so the label has the same law on both datasets. Given U, with s the
sum over U, π₀ = b(B − 1)/P(M >= B − 1), π₁ = 1 − π₀ and r the B-th other record drawn (uniform
outside U, independent of M):

    Q = π₀N(s) + π₁E_r N(s + v_r),
    P = π₀[(1 − q)N(s) + qN(s + x)] + π₁[(1 − q_c)E_r N(s + v_r) + q_cN(s + x)]

(M = B − 1: nothing is cut, the record joins with probability q; M >= B: it takes r's place with
probability qB/(M + 1), averaged over M given M >= B). So P = (1 − γ)R + γN(s + x) and
Q = (1 − γ)R + γA' with γ = π₀q + π₁q_c, R = [π₀(1 − q)N(s) + π₁(1 − q_c)E_r N(s + v_r)]/(1 − γ)
and A' = [π₀qN(s) + π₁q_cE_r N(s + v_r)]/γ. For κ' = e^ε >= 1, κ = 1 + (κ' − 1)/γ and β = κ'/κ,
advanced joint convexity (Balle, Barthe & Gaboardi 2018, Thm 2) gives
H_κ'(P‖Q) = γ·H_κ(N(x) ‖ c₀N(0) + c₁E_r N(v_r)) with c₀ = (1 − β)π₀(1 − q)/(1 − γ) + βπ₀q/γ,
c₁ = 1 − c₀. Centred at x this is N(0) against a Gaussian mixture with means −x (norm <= C) and
v_r − x (norm <= 2C), which is largest with the means aligned at those norms (Lemma C of
proofs/batch_sampling.py, in the orientation N(0) first): H_κ(N(0) ‖ c₀N(C) + c₁N(2C)), the ADD
profile of a :class:`~verifier.pairs.mixture.GaussianMixture`. It is attained by the record at +C
and every other record at −C, as far as these labels go.

Replace-one (``replace_one``; the record x against x', the same batch laws): P = (1 − γ)R + γN(s + x)
and Q = (1 − γ)R + γN(s + x'), so the second argument is c₀N(0) + c₁E_r N(v_r) + βN(x') with
c₀ = (1 − β)π₀(1 − q)/(1 − γ); centred at x its means have norms <= C, 2C and 2C, and the bound is
γ·H_κ(N(0) ‖ c₀N(C) + (1 − c₀)N(2C)) (the record +C against −C, every other record −C); the
M <= B − 2 labels keep the antipodal pair A(C, q). The relation is symmetric, so below ε = 0 the
dual 1 − e^ε + e^ε·bound(−ε) holds, in both orientations.

Every label's bound summed with its probability bounds the step (the label splits every event). The
profile used is the smaller of this bound and the two-label one (each bounds the step); under
add/remove, below ε = 0 and in the ADD orientation, the two-label bound is kept. The loss law (grid placement
only), Rényi divergences and moments are the two-label mixture's. Measured (n = 1000, q = 0.05,
B = 40, σ = 2, 10 steps, δ = 1e-5): ε <= 1.2604 against 1.3457 for the two-label bound under
add/remove, 1.2960 against 1.4964 under replace-one (the float estimate of this label structure with every other record at −C is 1.2598, benchmarks/truncated_family.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from flint import arb

from verifier._directed import arb_bound, with_precision
from verifier._types import Measure, Side
from verifier.pairs.base import DominatingPair
from verifier.pairs.labelled import LabelledMixture
from verifier.pairs.mixture import GaussianMixture

__all__ = ["TruncatedEdge"]

#: Precision (bits) of the label weights and rates.
_BITS = 256


@dataclass(frozen=True)
class TruncatedEdge(DominatingPair):
    """The profile of one truncated-Poisson step (module docstring): the smaller of ``labelled`` (the
    two-label DOMINATING mixture) and the bound that hides M between B − 1 and B, at ε >= 0 in the
    REMOVE orientation under add/remove (``labelled`` elsewhere and in the ADD orientation,
    ``add_orientation``), at every ε under replace-one (``replace_one``, symmetric). ``below`` =
    P(M <= B − 2), ``edge`` = b(B − 1), ``full`` = P(M >= B) and ``rate_full`` = q_c are balls."""

    labelled: LabelledMixture
    sigma: float
    sensitivity: float
    rate: float
    below: arb = field(compare=False)
    edge: arb = field(compare=False)
    full: arb = field(compare=False)
    rate_full: arb = field(compare=False)
    add_orientation: bool = False
    replace_one: bool = False

    def swapped(self) -> TruncatedEdge:
        if self.replace_one:  # symmetric: both orientations have the same bound
            return self
        return TruncatedEdge(self.labelled, self.sigma, self.sensitivity, self.rate, self.below, self.edge, self.full,
                             self.rate_full, not self.add_orientation)

    @property
    def _oriented(self) -> DominatingPair:
        return self.labelled.swapped() if self.add_orientation else self.labelled

    def _delta_arb(self, epsilon: arb) -> arb:
        two_labels = self._oriented._delta_arb(epsilon)
        if epsilon >= 0 and not self.add_orientation:
            return two_labels.min(self._hidden_edge(epsilon))
        if epsilon < 0 and self.replace_one:  # the dual of the bound at −ε (the relation is symmetric)
            kappa = epsilon.exp()
            return two_labels.min(1 - kappa + kappa * self._hidden_edge(-epsilon))
        return two_labels

    def _hidden_edge(self, epsilon: arb) -> arb:
        """P(M <= B − 2)·δ_label(ε) + P(M >= B − 1)·γ·H_κ(N(0) ‖ c₀N(C) + c₁N(2C)) (module docstring),
        δ_label the first label's pair (Poisson step, or the antipodal pair under replace-one)."""
        with with_precision(_BITS):
            q = arb(self.rate)
            top = self.edge + self.full
            pi0 = self.edge / top
            gamma = pi0 * q + (1 - pi0) * self.rate_full
            kappa_prime = epsilon.exp()
            log_kappa = (epsilon.expm1() / gamma).log1p()
            beta = kappa_prime / log_kappa.exp()
            c0 = (1 - beta) * pi0 * (1 - q) / (1 - gamma)
            c1 = 1 - (c0 if self.replace_one else c0 + beta * pi0 * q / gamma)
            # H is convex in the mixing weight: its largest value over the ball of c₁ is at an end
            ends = {min(1.0, max(math.ulp(0.0), arb_bound(c1, side))) for side in (Side.LOWER, Side.UPPER)}
            mixtures = [GaussianMixture(self.sigma, (self.sensitivity, 2.0 * self.sensitivity), (1.0, c), add_orientation=True) for c in ends]
            hidden = mixtures[0]._delta_arb(log_kappa)
            for mixture in mixtures[1:]:
                hidden = hidden.max(mixture._delta_arb(log_kappa))
            poisson = self.labelled.components[0]._delta_arb(epsilon)
            return self.below * poisson + top * gamma * hidden

    def _renyi_arb(self, alpha: arb) -> arb:
        return self._oriented._renyi_arb(alpha)

    def _moment_arb(self, a: arb) -> arb:
        return self._oriented._moment_arb(a)

    def _infinite_loss_mass_arb(self) -> arb:
        return self._oriented._infinite_loss_mass_arb()

    def _max_loss_arb(self) -> arb | None:
        return self._oriented._max_loss_arb()

    def float_range_issue(self) -> str | None:
        return self.labelled.float_range_issue()

    def _loss_cdf(self, x: npt.NDArray[np.float64], under: Measure, inclusive: bool) -> npt.NDArray[np.float64]:
        return self._oriented._loss_cdf(x, under, inclusive)

    def _loss_sf(self, x: npt.NDArray[np.float64], under: Measure, inclusive: bool) -> npt.NDArray[np.float64]:
        return self._oriented._loss_sf(x, under, inclusive)

    def _loss_quantile(self, q: npt.NDArray[np.float64], under: Measure) -> npt.NDArray[np.float64]:
        return self._oriented._loss_quantile(q, under)

    def _sample_loss(self, size: int, rng: np.random.Generator, under: Measure) -> npt.NDArray[np.float64]:
        return self._oriented._sample_loss(size, rng, under)
