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
side): at σ = 1.1, B = 256, n = 60000, T = 2344, δ = 1e-5 it gives ε >= 6.7568 where one orientation
gives 6.7211 (benchmarks/fixed_batches.md).
"""

from __future__ import annotations

import functools
import math
from typing import Sequence

from verifier._budget import ACTIVITY, Cost
from verifier._types import Bound, Direction, Dominance, Quantity, Side
from verifier.certify.method import Guarantee, QuantityMethod
from verifier.errors import NotApplicable
from verifier.pairs import Gaussian, PoissonSubsampled
from verifier.pld.adaptive import AdaptiveValue, adaptive_value
from verifier.pld.construction import pld_sides_from_pair
from verifier.schemes import Scheme, WithoutReplacement

__all__ = ["AdaptiveBatches", "METHODS", "STEP", "lower_value"]

_CITATION = (
    "Bellman recursion over the step orientations an adaptive adversary picks (remove or add, per step, "
    "from the history); both attained by one pair of neighbours (verifier.pld.adaptive; Steinke 2022, Prop 7)"
)

#: Grid step of the members' PLDs and of the recursion (2^-11: at the DP-SGD row the lower end is
#: within 0.002 of its limit).
STEP = 2.0**-11
#: The grid's top: above it the LOWER value is (1 − e^{−u})_+, far enough up that this costs nothing.
_U_HIGH = 6.0
#: Mass dropped from the members' far tails (a DOMINATED PLD may be a sub-probability).
_TAIL = 1e-15
#: Measured cost of one member's convolution per point of the transform (radix-2 FFT, one core).
_SECONDS_PER_POINT = 7e-8


def _range(scheme: WithoutReplacement, epsilon: float) -> tuple[float, float]:
    """The recursion's grid [−(ε + 2), U_HIGH] and the tilt about ln(1e5)/ε, at most 2 (module
    verifier.pld.adaptive; the tilt only sizes the FFT error bound)."""
    return -(epsilon + 2.0), min(2.0, 11.5 / max(epsilon, 1.0))


@functools.lru_cache(maxsize=8)
def _members(pair: Gaussian, rate: float) -> tuple:
    subsampled = PoissonSubsampled(pair, rate)
    return tuple(
        pld_sides_from_pair(subsampled, direction, STEP, _TAIL, sides=(Dominance.DOMINATED,))[0]
        for direction in (Direction.REMOVE, Direction.ADD)
    )


@functools.lru_cache(maxsize=8)
def _value(pair: Gaussian, rate: float, steps: int, u_low: float, tilt: float) -> AdaptiveValue:
    def progress(done: int) -> None:
        if done % 64 == 0 or done == steps:
            ACTIVITY.set(f"adaptive (lower): step {done}/{steps}")

    return adaptive_value(_members(pair, rate), steps, Side.LOWER, u_low, _U_HIGH, tilt=tilt, progress=progress)


def lower_value(scheme: WithoutReplacement, epsilon: float) -> AdaptiveValue:
    """The LOWER recursion over {remove, add} (module docstring) on a grid that holds u = −ε."""
    u_low, tilt = _range(scheme, epsilon)
    # Coarse positions share one run: the grid's bottom is rounded down to a whole number.
    return _value(scheme.pair, scheme.rate, scheme.steps, float(math.floor(u_low)), tilt)


def _epsilon_guess(scheme: WithoutReplacement, delta: float) -> float:
    """Where ε(δ) lies, for the grid only (any value keeps the bound rigorous): the fixed
    orientation's ε from the PLD method's lower side, or 1 where that says nothing."""
    from verifier.certify.methods.pld import PLDMethod

    bounds = PLDMethod().epsilon_bounds(scheme, delta, Direction.REMOVE)
    found = [b.value for b in bounds if b.side is Side.UPPER and math.isfinite(b.value)]
    return max(1.0, min(found)) if found else 1.0


class AdaptiveBatches(QuantityMethod):
    name = "adaptive"
    citation = _CITATION
    returns = frozenset({Guarantee.LOWER})
    cost = 3
    scheme_types = (WithoutReplacement,)

    def supports(self, scheme: Scheme) -> bool:
        return isinstance(scheme, WithoutReplacement) and isinstance(scheme.pair, Gaussian)

    def estimate_cost(self, scheme: Scheme) -> Cost | None:
        if not isinstance(scheme, WithoutReplacement):
            return None
        points = 1 << math.ceil(math.log2(64.0 / STEP))
        return Cost(seconds=2 * scheme.steps * points * _SECONDS_PER_POINT, bytes=40.0 * points, what=f"t = {scheme.steps}")

    def quantity_bounds(self, scheme: Scheme, quantity: Quantity, at: float, direction: Direction) -> Sequence[Bound]:
        if not self.supports(scheme):
            raise NotApplicable("the adaptive recursion is built for fixed-size batches with Gaussian steps")
        assert isinstance(scheme, WithoutReplacement)
        if quantity is Quantity.DELTA:
            value = lower_value(scheme, at).delta(at)
        else:
            value = lower_value(scheme, _epsilon_guess(scheme, at)).epsilon(at)
        return [Bound(value, Side.LOWER, direction, quantity, at, self.name, _CITATION, STEP)]


METHODS = [AdaptiveBatches()]
