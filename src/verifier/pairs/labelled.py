"""A labelled mixture of pairs: a label j drawn with probability w_j (the same law under both
datasets) and released, then the output of the pair (P_j, Q_j):

    P = Σ_j w_j [j] ⊗ P_j,   Q = Σ_j w_j [j] ⊗ Q_j.

The label splits every event, so the hockey-stick divergence is exactly the weighted sum
H_κ(P‖Q) = Σ_j w_j H_κ(P_j‖Q_j) (Steinke 2022, Prop 7 applied per label), the privacy-loss law is
the w-mixture of the components' laws, and e^{(α−1)D_α(P‖Q)} = Σ_j w_j e^{(α−1)D_α(P_j‖Q_j)}.

Revealing a label that the mechanism draws independently of the data only adds information, so a
labelled mixture whose components dominate the step given the label DOMINATES the step (data
processing: the step's output is the labelled output with the label forgotten); this is how the
truncated-Poisson and with-replacement schemes are bounded above (:mod:`verifier.pairs.batch_sampling`).

The true weights are given as balls: each lies within ``radius`` of its binary64 value in
``weights``, so δ(ε) is rigorous for the exact probabilities of a sampling law; the float weights
only place grid points (loss laws, quantiles, sampling).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from flint import arb

from verifier._types import Measure
from verifier._validation import check_nonnegative, check_real_array
from verifier.errors import InvalidArgument
from verifier.pairs.base import DominatingPair

__all__ = ["LabelledMixture"]

#: Bisection steps of the mixture's loss quantile (float accuracy; places grid points only).
_BISECT_STEPS = 100


@dataclass(frozen=True)
class LabelledMixture(DominatingPair):
    """Σ_j w_j [j] ⊗ (P_j, Q_j) with ``components`` the pairs (P_j, Q_j) in REMOVE orientation and
    true weights in [``weights``[j] − ``radius``, ``weights``[j] + ``radius``] summing to one (see
    the module docstring)."""

    weights: tuple
    components: tuple
    radius: float = 0.0

    def __post_init__(self) -> None:
        w = check_real_array("weights", self.weights)
        if w.ndim != 1 or w.size == 0 or w.size != len(self.components):
            raise InvalidArgument("weights", list(np.ravel(w)), f"must be a non-empty list, one weight per component ({len(self.components)})")
        if np.any(w < 0) or abs(math.fsum(w.tolist()) - 1.0) > 1e-9 + w.size * self.radius:
            raise InvalidArgument("weights", list(w), "must be >= 0 and sum to 1 (a probability law of the labels)")
        for j, pair in enumerate(self.components):
            if not isinstance(pair, DominatingPair):
                raise InvalidArgument(f"components[{j}]", pair, "must be a DominatingPair")
        object.__setattr__(self, "weights", tuple(float(x) for x in w))
        object.__setattr__(self, "components", tuple(self.components))
        object.__setattr__(self, "radius", check_nonnegative("radius", self.radius))

    def swapped(self) -> "LabelledMixture":
        return LabelledMixture(self.weights, tuple(c.swapped() for c in self.components), self.radius)

    def float_range_issue(self) -> str | None:
        return next((issue for c in self.components if (issue := c.float_range_issue()) is not None), None)

    def _weight_balls(self) -> list[arb]:
        return [arb(w, self.radius) for w in self.weights]

    def _weighted(self, values: list[arb]) -> arb:
        return sum((w * v for w, v in zip(self._weight_balls(), values)), arb(0))

    # ---- profile and divergences (exact sums over the labels) ------------------------------------

    def _delta_arb(self, epsilon: arb) -> arb:
        return self._weighted([c._delta_arb(epsilon) for c in self.components])

    def _renyi_arb(self, alpha: arb) -> arb:
        terms = self._weighted([((alpha - 1) * c._renyi_arb(alpha)).exp() for c in self.components])
        return terms.log() / (alpha - 1)

    def _moment_arb(self, a: arb) -> arb:
        return self._weighted([c._moment_arb(a) for c in self.components])

    def _infinite_loss_mass_arb(self) -> arb:
        return self._weighted([c._infinite_loss_mass_arb() for c in self.components])

    def _max_loss_arb(self) -> arb | None:
        tops = [c._max_loss_arb() for w, c in zip(self.weights, self.components) if w > 0 or self.radius > 0]
        if any(top is None for top in tops):
            return None
        return max(tops, key=lambda top: float(top.upper()))

    # ---- loss law (float weights; places grid points only) ----------------------------------------

    def _loss_cdf(self, x: npt.NDArray[np.float64], under: Measure, inclusive: bool) -> npt.NDArray[np.float64]:
        return sum(w * c._loss_cdf(x, under, inclusive) for w, c in zip(self.weights, self.components))

    def _loss_sf(self, x: npt.NDArray[np.float64], under: Measure, inclusive: bool) -> npt.NDArray[np.float64]:
        return sum(w * c._loss_sf(x, under, inclusive) for w, c in zip(self.weights, self.components))

    def _loss_quantile(self, q: npt.NDArray[np.float64], under: Measure) -> npt.NDArray[np.float64]:
        """The mixture's quantile lies between the smallest and the largest component quantile at q;
        bisection between the finite ones (+∞ where the mixture's law has not reached q there)."""
        qs = np.atleast_1d(np.asarray(q, dtype=float))
        each = np.array([c._loss_quantile(qs, under) for c in self.components])
        finite = np.where(np.isfinite(each), each, np.nan)
        with np.errstate(all="ignore"):
            lo = np.nan_to_num(np.nanmin(finite, axis=0), nan=0.0)
            hi = np.nan_to_num(np.nanmax(finite, axis=0), nan=0.0)
        reached = self._loss_cdf(hi, under, True) >= qs
        lo = np.where(self._loss_cdf(lo, under, True) >= qs, lo - 1.0, lo)
        for _ in range(_BISECT_STEPS):
            mid = 0.5 * (lo + hi)
            ok = self._loss_cdf(mid, under, True) >= qs
            hi = np.where(ok, mid, hi)
            lo = np.where(ok, lo, mid)
        out = np.where(reached, hi, np.inf)
        out = np.where(qs <= 0.0, -np.inf, np.where(qs >= 1.0, np.inf, out))
        return out.reshape(np.shape(q))

    def _sample_loss(self, size: int, rng: np.random.Generator, under: Measure) -> npt.NDArray[np.float64]:
        w = np.array(self.weights)
        counts = rng.multinomial(size, w / w.sum())
        draws = np.concatenate([c._sample_loss(int(k), rng, under) for k, c in zip(counts, self.components) if k > 0])
        return rng.permutation(draws)
