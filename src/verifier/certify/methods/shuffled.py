"""Shuffled batches (:class:`~verifier.schemes.ShuffledBatches`) under replace-one neighbours, as a
certification method ("shuffled"): a LOWER bound from an attained pair of datasets through the
random-allocation PLD engine, and an UPPER bound without amplification.

Setting: n elements, batches of B, f = ⌊n/B⌋ full batches, E epochs; (P, Q) the replace-one pair of
one batch step, P = N(Δ, σ²), Q = N(0, σ²) with Δ = 2C for gradients clipped at C (or Laplace).

LOWER (the attained datasets; Chua et al., "How private are DP-SGD implementations?", ICML 2024, and
"Scalable DP-SGD: shuffling vs. Poisson subsampling", NeurIPS 2024, use the same construction).
D = (v, v, …, v) and D' = (v, …, v, v − Δ) with v = (Δ/2)·e₁, so every record has norm Δ/2 = C
and a loss whose clipped gradient is the record itself, whatever the parameters. Each full batch of
D sums to B·v; on D' the batch holding the target sums to B·v − Δ. Subtracting the known B·v, an
epoch releases f independent noise draws, one of them shifted by −Δ when the target sits in a full
batch (probability B/n for each, independently of everything else), none when it sits in the
partial batch or is dropped (probability 1 − λ, λ = f·B/n). With ``drop_last`` this is the whole
epoch; without it the partial batch's release is one more coordinate, and forgetting it is
post-processing, which can only lower the hockey stick. So, with A = 1-out-of-f random allocation
of (P, Q) (its REMOVE pair (A, Q^f)) and M = λA + (1 − λ)Q^f, each epoch of (D', D) is (M, Q^f) and
of (D, D') is (Q^f, M), epochs independent:

- B divides n (λ = 1): the epochs are exactly 1-out-of-t allocation, REMOVE and ADD; the bounds are
  the allocation PLD engine's LOWER ends for Allocation(pair, t, epochs=E) (method allocation-pld).
- otherwise, in both orientations the one-epoch pair is the Poisson subsampling at rate λ of the
  allocation pair: (M, Q^f) of (A, Q^f) ("remove"), (Q^f, M) of (Q^f, A) ("add"). Its PLD comes
  from the allocation engine's one-epoch bracket in that direction through
  :func:`verifier.pld.subsample.subsample_direction` (Lemma A.4 of the random-allocation PLD paper,
  as profile bounds), on the grid :data:`SUBSAMPLED_STEP`, composed over the
  epochs; its DOMINATED side is a lower bound. In the remove orientation there is a second one:
  M^E >= λ^E·A^E pointwise, so H_κ(M^E‖Q^E) >= λ^E·H_{κ/λ^E}(A^E‖Q^E), i.e.
  δ(ε) >= λ^E·δ_A(ε + E·ln(1/λ)) and ε(δ) >= ε_A(δ/λ^E) − E·ln(1/λ) (ε_A, δ_A the allocation
  engine's LOWER ends; constants rounded toward the safe side in ball arithmetic), and the larger
  of the two is returned (the PLD one at the DP-SGD setting: 6.2975 against 6.2807; the mixture
  bound where E·ln(1/λ) is small against the grid's loss).

UPPER ("shuffled-clones", :class:`ShuffledClones`): one epoch is a post-processing of an adaptive
sequential shuffle of ⌊n/B⌋ records (proofs/shuffled_reduction.py), so FMT's clone pair composed
over the epochs bounds it (:mod:`verifier.shuffle.batches`); it declines where that is not below
the unamplified bound below (small t, small σ).

UPPER ("shuffled", unamplified): given the permutation (independent of the data), D and D' differ in one element, which sits
in one batch of each epoch (or in none), so an epoch is the composition of f or f + 1 adaptive
steps of which only one has sensitivity Δ: dominated by (P, Q) itself (Zhu, Dong & Wang 2022,
Thm 10 for the adaptive composition; the hockey stick is jointly convex, so mixing over the
permutation keeps the bound). E epochs: the E-fold composition of (P, Q), from the registered
methods for Composed(Single(P, Q), E) (for a Gaussian step the exact closed form).
"""

from __future__ import annotations

import functools
import math
from typing import Sequence

from flint import arb

from verifier._budget import Cost
from verifier._directed import ARB_PRECISION_BITS, arb_bound, with_precision
from verifier._types import Bound, Direction, Quantity, Side
from verifier.certify.method import Guarantee, Method
from verifier.certify.methods.allocation_pld import AllocationPLD
from verifier.errors import NotApplicable
from verifier.pairs import Gaussian, Laplace
from verifier.pld.allocation import allocation_bracket
from verifier.pld.bracket import PLDBracket
from verifier.pld.subsample import subsample_direction
from verifier.schemes import Allocation, Composed, Scheme, ShuffledBatches, Single
from verifier.shuffle.batches import EPOCH_CITATION, shuffled_delta_upper, shuffled_epsilon_upper

__all__ = ["ShuffledMethod", "ShuffledClones", "unamplified_upper", "METHODS", "ATTAINED_DATASETS", "SUBSAMPLED_STEP", "SUBSAMPLED_POINTS", "subsampled_epochs", "mixture_lower", "allocation_of"]

#: The attained datasets of the LOWER side, named in every bound and in the claim's modelling.
ATTAINED_DATASETS = (
    "attained datasets D = (v, ..., v) and D' = (v, ..., v, v - 2C) with v = C e_1 (every other record v, "
    "the target v or -v): each epoch is 1-out-of-floor(n/B) random allocation at sensitivity 2C, mixed with "
    "'target not in a full batch' at weight 1 - floor(n/B)B/n (a kept partial batch's release left out: post-processing)"
)
_LOWER_CITATION = (
    "Chua et al. 2024 (ICML; NeurIPS) attained pair of datasets = 1-out-of-t random allocation per epoch, "
    "DOMINATED side of the allocation PLD (S1 Cor 3.3, Thm 3.4): LOWER"
)
_UPPER_CITATION = (
    "one batch per epoch moves by at most 2C given the permutation: the step pair composed once per epoch "
    "(Zhu, Dong & Wang 2022, Thm 10; joint convexity over the permutation): UPPER, no amplification"
)


def allocation_of(scheme: ShuffledBatches) -> Allocation:
    """1-out-of-⌊n/B⌋ random allocation of the step pair over the scheme's epochs: the attained
    pair's epochs restricted to the full batches (see the module doc)."""
    return Allocation(scheme.pair, scheme.full_batches, 1, scheme.epochs)


def _mixture_constants(scheme: ShuffledBatches) -> tuple[float, float]:
    """(λ^E rounded down, E·ln(1/λ) rounded up) for λ = ⌊n/B⌋·B/n, in ball arithmetic."""
    with with_precision(ARB_PRECISION_BITS):
        lam = arb(scheme.full_batches * scheme.batch_size) / arb(scheme.dataset_size)
        weight = lam ** scheme.epochs
        shift = -arb(scheme.epochs) * lam.log()
        return arb_bound(weight, Side.LOWER), arb_bound(shift, Side.UPPER)


#: Loss-grid step of the subsampled one-epoch PLD when B does not divide n, coarsened until the
#: one-epoch PLD has at most SUBSAMPLED_POINTS grid points. The DOMINATED side of the E-epoch PLD
#: loses about E·step against the truth (t = 234, σ/Δ = 0.55, 10 epochs, remove orientation: 6.2792
#: at 2^-9, below the λ^E mixture bound 6.2807; 6.2924 at 2^-10, 6.2975 at 2^-11, 6.3004 at 2^-12);
#: the cost is one ball-arithmetic profile argument per grid point (~0.7 s per orientation there at
#: 2^-11, ~29000 points).
SUBSAMPLED_STEP = 2.0**-11
SUBSAMPLED_POINTS = 2**15


@functools.lru_cache(maxsize=16)
def subsampled_epochs(scheme: ShuffledBatches, direction: Direction) -> PLDBracket:
    """PLD bracket of the attained pair's E epochs in ``direction`` (REMOVE: (M^E, Q^E), ADD:
    (Q^E, M^E)), M = λA + (1 − λ)Q^f: the one-epoch allocation bracket in that direction,
    Poisson-subsampled at λ rounded down (mixing in more of Q is post-processing, so a smaller λ
    gives a smaller δ), composed over the epochs. Its DOMINATED side is a LOWER bound."""
    with with_precision(ARB_PRECISION_BITS):
        lam = arb_bound(arb(scheme.full_batches * scheme.batch_size) / arb(scheme.dataset_size), Side.LOWER)
    allocation = Allocation(scheme.pair, scheme.full_batches)
    one_epoch = allocation_bracket(allocation, direction, SUBSAMPLED_STEP)
    low, high = one_epoch.losses_span()
    if (high - low) / SUBSAMPLED_STEP > SUBSAMPLED_POINTS:  # a coarser grid: a looser lower bound, never an invalid one
        one_epoch = allocation_bracket(allocation, direction, 2.0 ** math.ceil(math.log2((high - low) / SUBSAMPLED_POINTS)))
    return subsample_direction(one_epoch, lam).self_compose(scheme.epochs)


def mixture_lower(scheme: ShuffledBatches, quantity: Quantity, at: float) -> tuple[float, str] | None:
    """(The λ^E mixture bound of the remove orientation (module doc), its note), or None where δ/λ^E >= 1."""
    engine = AllocationPLD()
    allocation = allocation_of(scheme)
    weight, shift = _mixture_constants(scheme)
    with with_precision(ARB_PRECISION_BITS):
        if quantity is Quantity.DELTA:
            found = engine.delta_bounds(allocation, arb_bound(arb(at) + arb(shift), Side.UPPER), Direction.REMOVE)
            value = arb_bound(arb(next(b.value for b in found if b.side is Side.LOWER)) * arb(weight), Side.LOWER)
        else:
            target = arb_bound(arb(at) / arb(weight), Side.UPPER)
            if target >= 1.0:
                return None
            found = engine.epsilon_bounds(allocation, target, Direction.REMOVE)
            value = arb_bound(arb(next(b.value for b in found if b.side is Side.LOWER)) - arb(shift), Side.LOWER)
    return float(value), f"{ATTAINED_DATASETS}; mixed at weight lambda^E >= {weight:.9g}, epsilon shifted by E ln(1/lambda) <= {shift:.9g}"


def unamplified_upper(scheme: ShuffledBatches, quantity: Quantity, at: float, direction: Direction) -> tuple[str, Bound] | None:
    """(method name, smallest rigorous UPPER bound) of the first registered method that bounds the
    step pair composed once per epoch (no amplification), or None."""
    from verifier.certify.registry import side_bounds

    unamplified = Composed(Single(scheme.pair), scheme.epochs)
    for method, uppers in side_bounds(unamplified, quantity, at, direction, Side.UPPER):
        if uppers:
            return method.name, min(uppers, key=lambda b: b.value)
    return None


class ShuffledMethod(Method):
    name = "shuffled"
    citation = (
        "shuffled batches, replace-one: LOWER from the attained datasets of Chua et al. 2024 (1-out-of-floor(n/B) "
        "random allocation at sensitivity 2C per epoch, S1 Cor 3.3 / Thm 3.4); UPPER the step pair once per epoch "
        "(Zhu, Dong & Wang 2022, Thm 10)"
    )
    returns = frozenset({Guarantee.UPPER, Guarantee.LOWER})
    cost = 2
    scheme_types = (ShuffledBatches,)

    def supports(self, scheme: Scheme) -> bool:
        return isinstance(scheme, ShuffledBatches) and isinstance(scheme.pair, (Gaussian, Laplace))

    def _check(self, scheme: Scheme) -> ShuffledBatches:
        if not self.supports(scheme):
            raise NotApplicable(f"{self.name} needs shuffled batches of an additive-noise step (Gaussian, Laplace), got {scheme!r}")
        return scheme  # type: ignore[return-value]

    def _upper(self, scheme: ShuffledBatches, quantity: Quantity, at: float, direction: Direction) -> list[Bound]:
        found = unamplified_upper(scheme, quantity, at, direction)
        if found is None:
            return []
        method, best = found
        note = f"{method} on the step pair composed {scheme.epochs} times"
        return [Bound(best.value, Side.UPPER, direction, quantity, at, self.name, _UPPER_CITATION, best.error_budget, note=note)]

    def _lower(self, scheme: ShuffledBatches, quantity: Quantity, at: float, direction: Direction) -> list[Bound]:
        engine = AllocationPLD()
        allocation = allocation_of(scheme)
        if scheme.dataset_size % scheme.batch_size == 0:  # exactly the allocation pair, both orientations
            found = engine.quantity_bounds(allocation, quantity, at, direction)
            value, note = next(b.value for b in found if b.side is Side.LOWER), ATTAINED_DATASETS
        else:
            bracket = subsampled_epochs(scheme, direction)
            value = bracket.dominated.delta(at) if quantity is Quantity.DELTA else bracket.dominated.epsilon(at)
            note = f"{ATTAINED_DATASETS}; PLD subsampling of one epoch at grid step {bracket.step:g}, composed"
            mixture = mixture_lower(scheme, quantity, at) if direction is Direction.REMOVE else None
            if mixture is not None and mixture[0] > value:
                value, note = mixture
        return [Bound(float(value), Side.LOWER, direction, quantity, at, self.name, _LOWER_CITATION, note=note)]

    def _collect(self, scheme: Scheme, quantity: Quantity, at: float, direction: Direction) -> list[Bound]:
        shuffled = self._check(scheme)
        return self._lower(shuffled, quantity, at, direction) + self._upper(shuffled, quantity, at, direction)

    def delta_bounds(self, scheme: Scheme, epsilon: float, direction: Direction) -> Sequence[Bound]:
        return self._collect(scheme, Quantity.DELTA, epsilon, direction)

    def epsilon_bounds(self, scheme: Scheme, delta: float, direction: Direction) -> Sequence[Bound]:
        return self._collect(scheme, Quantity.EPSILON, delta, direction)


class ShuffledClones(Method):
    """UPPER bound for shuffled batches through the shuffle model (:mod:`verifier.shuffle.batches`,
    proofs/shuffled_reduction.py): FMT's clone pair for ⌊n/B⌋ users per epoch, composed over the
    epochs, plus E·λ coupling terms for Gaussian steps. Declines, with the numbers, where it does
    not get below the unamplified bound of :class:`ShuffledMethod`."""

    name = "shuffled-clones"
    citation = EPOCH_CITATION
    returns = frozenset({Guarantee.UPPER})
    cost = 3
    scheme_types = (ShuffledBatches,)

    def supports(self, scheme: Scheme) -> bool:
        return isinstance(scheme, ShuffledBatches) and isinstance(scheme.pair, (Gaussian, Laplace))

    def estimate_cost(self, scheme: Scheme) -> Cost | None:
        """Up to two epoch PLDs of ~260 profile points, each a clone sum in ball arithmetic: ~1 ms a
        point at t <= 2000, ~80 ms from t ~ 3000 on (measured; flat in t up to 10^5)."""
        if not isinstance(scheme, ShuffledBatches):
            return None
        users = scheme.full_batches
        return Cost(seconds=3.0 if users <= 2000 else 45.0, what=f"t = {users}")

    def _bound(self, scheme: Scheme, quantity: Quantity, at: float, direction: Direction) -> list[Bound]:
        if not self.supports(scheme):
            raise NotApplicable(f"{self.name} needs shuffled batches of an additive-noise step (Gaussian, Laplace), got {scheme!r}")
        found = unamplified_upper(scheme, quantity, at, direction)  # type: ignore[arg-type]
        if found is None:
            raise NotApplicable(f"{self.name}: no unamplified bound to improve on at {quantity.value} {at:g}")
        if quantity is Quantity.DELTA:
            value, used = shuffled_delta_upper(scheme, at, found[1].value)  # type: ignore[arg-type]
        else:
            value, used = shuffled_epsilon_upper(scheme, at, found[1].value)  # type: ignore[arg-type]
        note = (f"t = {scheme.full_batches} users per epoch, eps0 = {used.epsilon0:.6g}, delta0 = {used.delta0:.3g}, "  # type: ignore[attr-defined]
                f"grid step {used.pld.step:g}; unamplified {found[1].value:.6g}")
        return [Bound(value, Side.UPPER, direction, quantity, at, self.name, self.citation, note=note)]

    def delta_bounds(self, scheme: Scheme, epsilon: float, direction: Direction) -> Sequence[Bound]:
        return self._bound(scheme, Quantity.DELTA, epsilon, direction)

    def epsilon_bounds(self, scheme: Scheme, delta: float, direction: Direction) -> Sequence[Bound]:
        return self._bound(scheme, Quantity.EPSILON, delta, direction)


METHODS = [ShuffledMethod(), ShuffledClones()]
