"""The pair that dominates one subsampled step under replace-one (substitution) neighbours.

Setting (fixed-size batches, or any subsampling whose output laws share the component without the
element): with (P, Q) a replace-one dominating pair of the step on its batch and λ the probability
that the element is in the batch, the step's output laws on neighbours x, x' are
M = λA + (1 − λ)R and M' = λA' + (1 − λ)R, where R (element absent) is common and each of the pairs
(A, A'), (A, R), (R, A') differs by one substitution. Write δ₁(ε) = H_{e^ε}(λP + (1 − λ)Q ‖ Q) and
δ₂(ε) = H_{e^ε}(Q ‖ λP + (1 − λ)Q) (the REMOVE and ADD profiles of :class:`PoissonSubsampled`).

- For ε >= 0, H_{e^ε}(M‖M') <= δ₁(ε): advanced joint convexity (Balle, Barthe & Gaboardi 2018,
  Thm 2 with their Thm 10 for sampling without replacement under substitution) gives
  H_{e^ε'}(M‖M') <= λ·H_{e^ε}(P‖Q) for ε' = ln(1 + λ(e^ε − 1)), and that is δ₁(ε') (the REMOVE
  formula of :class:`PoissonSubsampled`). The second orientation is the case A = R, so for a
  symmetric base pair (every replace-one pair can be taken symmetric) δ₂ <= δ₁ on ε >= 0.
- For ε < 0 the relation is symmetric, so H_{e^ε}(M‖M') = 1 − e^ε + e^ε·H_{e^{−ε}}(M'‖M)
  <= 1 − e^ε + e^ε·δ₁(−ε) = δ₂(ε) (the duality of Zhu, Dong & Wang 2022, Lemma 6 / notes §11.1).

So the step's profile is at most δ(ε) = δ₁(ε) for ε >= 0 and δ₂(ε) for ε < 0, which is
max(δ₁, δ₂) everywhere (the form evaluated here, valid for any base pair: a max of convex profiles): the profile of Dong, Roth & Su's C_λ(f) = min{f_λ, f_λ^{-1}}** (GDP paper,
JRSS-B 2022, Thm 4.2, sampling without replacement), whose convex conjugate is the max of the two
profiles. A profile bound at every ε is Blackwell dominance (Zhu, Dong & Wang 2022, Def 7 and Thm
10), which survives adaptive composition. This pair is therefore DOMINATING for every step the
adversary can choose (either orientation, adaptively), and it is the least such pair: a dominating
pair must lie above both orientations. Its T-fold composition can exceed the T-fold composition of
either fixed orientation (the adversary may switch orientation between steps; Lebeda, Regehr,
Kamath & Steinke 2024 show that a single-step worst case need not govern self-composition), so
verifier uses this pair only for UPPER bounds and a fixed orientation for LOWER bounds.

Poisson sampling under replace-one has the same structure with R the output without the element
and A, A' with it: (A, A') differ by a substitution but (A, R) only by a removal. With ``absent``
a pair whose REMOVE profile bounds H_κ(A‖R) (for Poisson sampling the add/remove pair of that
removal; for sampling with replacement the hidden-multiplicity mixture of
:mod:`verifier.pairs.batch_sampling`), the ε >= 0 branch is the smaller of two bounds instead of
bounding both terms by the substitution pair. With κ' = e^ε = 1 + λ(κ − 1) and β = κ'/κ:

- H_κ'(M‖M') = λ·H_κ(A ‖ βA' + (1 − β)R) <= λ[β·H_κ(A‖A') + (1 − β)·H_κ(A‖R)] (Thm 2 and
  joint convexity; β ∈ [0, 1] for ε >= 0), H(A‖A') the larger orientation of ``pair``;
- H_κ'(M‖M') <= λ·H_{κ−κ'}(A‖R): M − κ'M' = λA − (κ' − 1)(1 − λ)R − κ'λA' <= λA − (κ' − 1)(1 − λ)R
  on every event, and (κ' − 1)(1 − λ)/λ = κ − κ' (A' dropped; the better bound at large ε when the
  substitution pair is much looser than the removal pair; proofs/batch_sampling.py).

ε < 0 by the duality as above. This bound need not be the profile of a pair, but it is >= the
convex profile of every step, which is all the connect-the-dots construction uses.

The pair is symmetric (:meth:`swapped` is itself). Its privacy loss has the law of the REMOVE
mixture loss above 0, of the ADD mixture loss below 0, and an atom at 0 (the glued profile's slope
jump at κ = 1; proofs/substitution_mixture.py derives that it is >= 0 for the Gaussian).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from flint import arb

from verifier._types import Measure
from verifier.errors import InvalidArgument, NotApplicable
from verifier.pairs.base import DominatingPair
from verifier.pairs.subsampled import PoissonSubsampled

__all__ = ["SubstitutionSubsampled", "replace_one_pair"]


def replace_one_pair(pair: DominatingPair) -> DominatingPair:
    """The replace-one pair of an additive-noise step whose records each move the query by at most
    Δ = ``pair.sensitivity``: the same noise with sensitivity 2Δ (records x and −x attain it;
    Steinke 2022, §6.2). NotApplicable for other pairs."""
    from verifier.pairs.gaussian import Gaussian
    from verifier.pairs.laplace import Laplace

    if isinstance(pair, Gaussian):
        return Gaussian(pair.sigma, 2.0 * pair.sensitivity)
    if isinstance(pair, Laplace):
        return Laplace(pair.scale, 2.0 * pair.sensitivity)
    raise NotApplicable(f"replace-one subsampling is modelled for additive-noise steps (Gaussian, Laplace), not {type(pair).__name__}")


@dataclass(frozen=True)
class SubstitutionSubsampled(DominatingPair):
    """Dominating pair of one step that includes the element with probability ``rate`` = λ under
    replace-one neighbours, ``pair`` being the step's replace-one dominating pair; profile
    δ₁(ε) for ε >= 0 and δ₂(ε) for ε < 0 (see the module docstring). With ``absent`` (a pair whose
    REMOVE profile bounds the element-present component against the element-absent one; Poisson
    sampling: the add/remove pair of the element's removal) the ε >= 0 branch is the smaller of
    Balle et al.'s convex combination and the bound with the substituted component dropped, an
    UPPER bound on the profile (DOMINATING side only)."""

    pair: DominatingPair
    rate: float
    absent: DominatingPair | None = None

    def __post_init__(self) -> None:
        mixture = PoissonSubsampled(self.pair, self.rate)  # validates pair and rate
        object.__setattr__(self, "rate", mixture.rate)
        if self.absent is not None and not isinstance(self.absent, DominatingPair):
            raise InvalidArgument("absent", self.absent, "must be a DominatingPair (the add/remove pair of the element) or None")

    @property
    def _remove(self) -> PoissonSubsampled:
        return PoissonSubsampled(self.pair, self.rate)

    @property
    def _add(self) -> PoissonSubsampled:
        return PoissonSubsampled(self.pair, self.rate, add_orientation=True)

    def swapped(self) -> "SubstitutionSubsampled":
        return self

    def _delta_arb(self, epsilon: arb) -> arb:
        """max(δ₁(ε), δ₂(ε)): δ₁ for ε >= 0 and δ₂ for ε < 0 when the base pair is symmetric, and a
        valid (convex) profile dominating both orientations for any base pair. With ``absent``: the
        convex-combination bound for ε >= 0 and its dual for ε < 0 (module docstring)."""
        if self.absent is None:
            return self._remove._delta_arb(epsilon).max(self._add._delta_arb(epsilon))
        if epsilon >= 0:
            return self._convex_bound(epsilon)
        if epsilon < 0:
            kappa = epsilon.exp()
            return 1 - kappa + kappa * self._convex_bound(-epsilon)
        kappa = epsilon.exp()
        return self._convex_bound(abs(epsilon)).union(1 - kappa + kappa * self._convex_bound(abs(epsilon)))

    def _convex_bound(self, epsilon: arb) -> arb:
        """For ε >= 0 the smaller of λ[β·H_κ(A‖A') + (1 − β)·H_κ(A‖R)] and λ·H_{κ−κ'}(A‖R)
        (module docstring): κ' = e^ε, κ = 1 + (κ' − 1)/λ, β = κ'/κ; H(A‖A') the larger of
        ``pair``'s two orientations, H(A‖R) the REMOVE profile of ``absent``."""
        lam = arb(self.rate)
        kappa_prime = epsilon.exp()
        inner = (epsilon.expm1() / lam).log1p()  # ln κ
        beta = kappa_prime / inner.exp()
        far = self.pair._delta_arb(inner).max(self.pair.swapped()._delta_arb(inner))
        bound = lam * (beta * far + (1 - beta) * self.absent._delta_arb(inner))  # type: ignore[union-attr]
        gap = epsilon.expm1() * (1 / lam - 1)  # κ − κ'
        if gap > 0:
            bound = bound.min(lam * self.absent._delta_arb(gap.log()))  # type: ignore[union-attr]
        return bound

    def _infinite_loss_mass_arb(self) -> arb:
        """The limit of the profile as ε → ∞: the larger of the two orientations' limits (with
        ``absent``: λ times the larger of the limits of ``pair``'s orientations and ``absent``'s,
        which the convex bound's first form tends to)."""
        if self.absent is not None:
            lam = arb(self.rate)
            masses = [p._infinite_loss_mass_arb() for p in (self.pair, self.pair.swapped(), self.absent)]
            top = masses[0]
            for m in masses[1:]:
                top = top.max(m)
            return lam * top
        return self._remove._infinite_loss_mass_arb().max(self._add._infinite_loss_mass_arb())

    def _renyi_arb(self, alpha: arb) -> arb:
        raise NotApplicable("Renyi divergence of the substitution pair is not implemented (the RDP module bounds fixed-size batches directly)")

    def _moment_arb(self, a: arb) -> arb:
        raise NotApplicable("moments of the substitution pair are not implemented")

    # ---- loss law (float accuracy; places grid points only) ------------------------------------

    def _loss_cdf(self, x: npt.NDArray[np.float64], under: Measure, inclusive: bool) -> npt.NDArray[np.float64]:
        """P(ℓ <= x): the ADD mixture's law below 0; above 0 one minus the REMOVE mixture's tail."""
        x = np.asarray(x, dtype=float)
        below = self._add._loss_cdf(np.minimum(x, 0.0), under, inclusive)
        above = 1.0 - self._remove._loss_sf(np.maximum(x, 0.0), under, not inclusive)
        out = np.where(x < 0, below, above)
        if not inclusive:
            out = np.where(x == 0, self._add._loss_cdf(np.zeros_like(x), under, False), out)
        return np.clip(out, 0.0, 1.0)

    def _loss_sf(self, x: npt.NDArray[np.float64], under: Measure, inclusive: bool) -> npt.NDArray[np.float64]:
        return 1.0 - self._loss_cdf(x, under, not inclusive)

    def _loss_quantile(self, q: npt.NDArray[np.float64], under: Measure) -> npt.NDArray[np.float64]:
        """Below the ADD law's mass at negative losses, its quantile; above one minus the REMOVE
        law's mass at positive losses, the REMOVE quantile; 0 in between (the atom)."""
        qs = np.asarray(q, dtype=float)
        zero = np.zeros(1)
        negative = float(self._add._loss_cdf(zero, under, False)[0])
        positive = float(self._remove._loss_sf(zero, under, False)[0])
        low = self._add._loss_quantile(qs, under)
        high = self._remove._loss_quantile(qs, under)
        return np.where(qs <= negative, np.minimum(low, 0.0), np.where(qs > 1.0 - positive, np.maximum(high, 0.0), 0.0))

    def _sample_loss(self, size: int, rng: np.random.Generator, under: Measure) -> npt.NDArray[np.float64]:
        raise NotApplicable("sampling the substitution pair's loss is not implemented")

