"""Fixed-size batches with Gaussian steps against an adaptive adversary ("adaptive" method).

The run (:class:`~verifier.schemes.WithoutReplacement`: T steps, each on a batch of B of the n records
drawn without replacement, λ = B/n, replace-one neighbours, the step's pair N(Δ_r, σ²) vs N(0, σ²)
with Δ_r = 2C for gradients clipped at C) is bounded by the Bellman recursion of
:mod:`verifier.pld.adaptive` over a finite family of step pairs, read at one ε or δ.

LOWER: the family {remove, add}, M = λN(Δ_r) + (1 − λ)N(0) against N(0) in either order. Both are
attained at every step by the same two datasets, whatever was released before: every other record's
clipped gradient z = −C·e, the target's x and its replacement's x′ each C·e or −C·e as the step's
gradient map decides (a training run's gradients are functions of the parameters, which are functions
of the past outputs, so the map may depend on the history; the records themselves are fixed). With
x = C·e, x′ = z the step's outputs are M and N(0) up to a common translation (remove); with x = z,
x′ = C·e they are N(0) and M (add). So every strategy of the recursion over this family is realised by
one adaptive training run on one pair of neighbours, and the recursion on the members' DOMINATED PLDs
is a rigorous LOWER bound on δ(ε) (and ε(δ)) of the run, in both directions (the family is closed
under swapping the datasets). It is larger than the fixed orientation (the ``pld`` method's lower
side): at σ = 1.1, B = 256, n = 60000, T = 2344, δ = 1e-5 it gives ε >= 6.7573 where one orientation
gives 6.7211 (benchmarks/fixed_batches.md).

UPPER: the family of a finite cover of every realisable step (:func:`verifier.pld.gram_cover.gram_cover`,
in units of the clipping norm C = Δ_r/2, so s = σ/C): given the history, every step of every adaptive
run is a common-weight mixture of translates of E(a, b) = ((1 − λ)N(0) + λN(a), (1 − λ)N(0) + λN(b)),
a = x − z, b = x′ − z for clipped gradients x, x′, z; E depends only on the Gram matrix (A, B, C), is
dominated by every member above it in the order of proofs/fixed_batch_domination.py (step 4), and
every realisable Gram matrix lies in a cell of the cover whose member dominates it (steps 5-6,
:func:`verifier.pld.gram_cover.check_cover`, run here before the cover is used). The recursion over
the members' DOMINATING PLDs (:func:`verifier.pld.gram_step.gram_step_pld`, rank-one Gram matrices
included; remove (4, 0, 0) itself is dominated by the cover's corner member) is then an UPPER bound on
δ(ε) for every adaptive adversary, in both directions (the theorem at the end of
proofs/fixed_batch_domination.py; README, "Fixed-size batches").
"""

from __future__ import annotations

import functools
import math
from typing import Sequence

from verifier._budget import ACTIVITY, Cost
from verifier._types import Bound, Direction, Dominance, Quantity, Side
from verifier.certify.method import Guarantee, QuantityMethod
from verifier.errors import NotApplicable, NumericalFailure
from verifier.pairs import Gaussian, PoissonSubsampled
from verifier.pld.adaptive import AdaptiveValue, adaptive_value
from verifier.pld.construction import pld_sides_from_pair
from verifier.pld.distribution import DiscretePLD
from verifier.schemes import Scheme, WithoutReplacement

__all__ = ["AdaptiveBatches", "AdaptiveCover", "METHODS", "STEP", "UPPER_STEP", "recursion_value", "upper_family"]

_CITATION = (
    "Bellman recursion over the step pairs an adaptive adversary picks from the history (verifier.pld.adaptive; "
    "Steinke 2022, Prop 7): LOWER over the remove/add orientations, attained by one pair of neighbours; UPPER over "
    "a finite cover of every realisable step (proofs/fixed_batch_domination.py)"
)

#: Grid step of the members' PLDs and of the recursion (2^-11: at the DP-SGD row the lower end is
#: within 0.002 of its limit).
STEP = 2.0**-11
#: The grid's top: above it the LOWER value is (1 − e^{−u})_+, far enough up that this costs nothing.
_U_HIGH = 6.0
#: Mass dropped from the members' far tails (a DOMINATED PLD may be a sub-probability).
_TAIL = 1e-15
#: Grid step of the UPPER recursion: its cost is T·|F| transforms, and at 2^-10 the DP-SGD row's
#: remove/add value is within 0.001 of its value at 2^-11.
UPPER_STEP = 2.0**-10
#: The UPPER grid's top (above it the value is taken as 1).
_U_HIGH_UPPER = 4.0
#: Planning target of the cover (gram_cover's ``excess``): members' χ²-proxy at most 1% above remove's.
_EXCESS = 0.01
#: Cells per axis of each two-dimensional member's PLD (gram_step_pld; the error is second order in
#: a cell's loss range, and the build takes about 0.35 s a member at this size).
_CELLS = 1024
#: Measured cost of one member's convolution per point of the transform (radix-2 FFT, one core).
_SECONDS_PER_POINT = 7e-8


def _range(epsilon: float) -> tuple[float, float]:
    """The recursion's grid [−(ε + 2), U_HIGH] and the tilt about ln(1e5)/ε, at most 2 (module
    verifier.pld.adaptive; the tilt only sizes the FFT error bound)."""
    return -(epsilon + 2.0), min(2.0, 11.5 / max(epsilon, 1.0))


@functools.lru_cache(maxsize=8)
def _lower_family(pair: Gaussian, rate: float) -> tuple[DiscretePLD, ...]:
    """The remove and add orientations' DOMINATED REMOVE-direction PLDs on STEP (module docstring)."""
    subsampled = PoissonSubsampled(pair, rate)
    return tuple(
        pld_sides_from_pair(subsampled, direction, STEP, _TAIL, sides=(Dominance.DOMINATED,))[0]
        for direction in (Direction.REMOVE, Direction.ADD)
    )


@functools.lru_cache(maxsize=8)
def _cover(s: float):
    """The checked cover at noise ``s`` (clipping-norm units), or why there is none (a plan that finds
    no cover is a planning failure, not a defect: the method then declines, with the reason)."""
    from verifier.pld.gram_cover import check_cover, gram_cover

    try:
        cover = gram_cover(s, excess=_EXCESS)
        check_cover(cover)
    except NumericalFailure as failure:
        return f"no finite cover of the realisable steps was found at sigma/C = {s:g}: {failure}"
    return cover


@functools.lru_cache(maxsize=4)
def upper_family(pair: Gaussian, rate: float) -> tuple[DiscretePLD, ...]:
    """The cover's members' DOMINATING REMOVE-direction PLDs on UPPER_STEP (module docstring); the
    cover is checked (tiling and cell domination) before use."""
    from verifier.pld.gram_step import gram_step_pld

    s = 2.0 * pair.sigma / pair.sensitivity  # σ in units of the clipping norm C = Δ_r/2
    cover = _cover(s)
    if isinstance(cover, str):
        raise NotApplicable(cover)
    out = []
    for done, m in enumerate(cover.members):
        ACTIVITY.set(f"adaptive (upper): member {done + 1}/{len(cover.members)}")
        out.append(gram_step_pld(s, rate, m.a_sq, m.b_sq, m.c, UPPER_STEP, cells=_CELLS))
    return tuple(out)


#: Per side: the family and the grid's top.
_SIDES = {Side.LOWER: (_lower_family, _U_HIGH), Side.UPPER: (upper_family, _U_HIGH_UPPER)}


@functools.lru_cache(maxsize=16)
def _recursion(side: Side, pair: Gaussian, rate: float, steps: int, u_low: float, tilt: float) -> AdaptiveValue:
    family, u_high = _SIDES[side]
    members = family(pair, rate)

    def progress(done: int) -> None:
        if done % 16 == 0 or done == steps:
            ACTIVITY.set(f"adaptive ({side.value}, {len(members)} members): step {done}/{steps}")

    return adaptive_value(members, steps, side, u_low, u_high, tilt=tilt, progress=progress)


def recursion_value(scheme: WithoutReplacement, epsilon: float, side: Side) -> AdaptiveValue:
    """The recursion on ``side`` (module docstring: LOWER over remove/add, UPPER over the cover) on a
    grid that holds u = −ε."""
    u_low, tilt = _range(epsilon)
    # Coarse positions share one run: the grid's bottom is rounded down to a whole number.
    return _recursion(side, scheme.pair, scheme.rate, scheme.steps, float(math.floor(u_low)), tilt)


def _epsilon_guess(scheme: WithoutReplacement, delta: float) -> float:
    """Where ε(δ) lies, for the grid only (any value keeps the bound rigorous): the PLD method's
    upper end (the symmetrised profile, at or above the adaptive value), or 1 where that says nothing."""
    from verifier.certify.methods.pld import PLDMethod

    bounds = PLDMethod().epsilon_bounds(scheme, delta, Direction.REMOVE)
    found = [b.value for b in bounds if b.side is Side.UPPER and math.isfinite(b.value)]
    return max(1.0, min(found)) if found else 1.0


class AdaptiveBatches(QuantityMethod):
    """LOWER: the recursion over the attained remove/add orientations (module docstring)."""

    name = "adaptive"
    citation = _CITATION
    returns = frozenset({Guarantee.LOWER})
    cost = 3
    scheme_types = (WithoutReplacement,)
    #: Members of the family (for the cost estimate) and the grid step.
    members = 2
    step = STEP

    def supports(self, scheme: Scheme) -> bool:
        return isinstance(scheme, WithoutReplacement) and isinstance(scheme.pair, Gaussian)

    def estimate_cost(self, scheme: Scheme) -> Cost | None:
        if not isinstance(scheme, WithoutReplacement):
            return None
        points = 1 << math.ceil(math.log2(64.0 / self.step))
        seconds = self.members * scheme.steps * points * _SECONDS_PER_POINT
        return Cost(seconds=seconds, bytes=8.0 * points * (self.members + 4), what=f"t = {scheme.steps}")

    def quantity_bounds(self, scheme: Scheme, quantity: Quantity, at: float, direction: Direction) -> Sequence[Bound]:
        if not self.supports(scheme):
            raise NotApplicable("the adaptive recursion is built for fixed-size batches with Gaussian steps")
        assert isinstance(scheme, WithoutReplacement)
        (side,) = self.sides()
        if quantity is Quantity.DELTA:
            found = recursion_value(scheme, at, side).delta(at)
        else:
            found = recursion_value(scheme, _epsilon_guess(scheme, at), side).epsilon(at)
        return [Bound(found, side, direction, quantity, at, self.name, _CITATION, self.step)]


class AdaptiveCover(AdaptiveBatches):
    """UPPER: the recursion over a finite cover of every realisable step (module docstring)."""

    name = "adaptive-cover"
    returns = frozenset({Guarantee.UPPER})
    members = 36
    step = UPPER_STEP

    def supports(self, scheme: Scheme) -> bool:
        # gram_step_pld's loss bounds assume λ <= 1/2; at larger λ the symmetrised profile is close.
        return super().supports(scheme) and scheme.rate <= 0.5


METHODS = [AdaptiveBatches(), AdaptiveCover()]
