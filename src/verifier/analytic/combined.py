""""Combined": the best analytic upper bound per direction, then the maximum over directions.

Feldman & Shenfeld 2025, §5 ("the minimum over all our methods"), done per direction as notes §3.6
and §6 item 33 require: each direction's minimum is an upper bound for that direction, so their
maximum is an upper bound for the add-or-remove relation (Def 2.2). A remove-only or add-only
bound never stands in for the other direction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from verifier._types import Bound, Direction, Quantity, Side
from verifier.analytic.decomposition import decomposition_epsilon
from verifier.analytic.poisson_profile import ProfileSource
from verifier.analytic.recursive import recursive_epsilon
from verifier.analytic.truncated_poisson import truncated_poisson_epsilon
from verifier.errors import NotApplicable
from verifier.pairs import Gaussian
from verifier.rdp.allocation import CITATION_ADD_DELTA, allocation_add_gaussian_epsilon
from verifier.schemes import Allocation

__all__ = ["UPPER_BOUNDS", "Combined", "combined_epsilon"]

CITATION = "Feldman & Shenfeld 2025, §5 combined bound: per-direction minimum, then maximum over directions"

#: The analytic ε(δ) upper bounds taking part (name -> function(scheme, δ, direction, profiles)).
UPPER_BOUNDS: dict[str, Callable[..., Bound]] = {
    "decomposition": decomposition_epsilon,
    "truncated-poisson": truncated_poisson_epsilon,
    "recursive": recursive_epsilon,
    "direct-add": lambda scheme, delta, direction, profiles: _direct_add(scheme, delta, direction),
}


def _direct_add(scheme: Allocation, delta: float, direction: Direction) -> Bound:
    """Cor 4.10 (add) for the Gaussian, from :mod:`verifier.rdp.allocation`."""
    if direction is not Direction.ADD or not isinstance(scheme.pair, Gaussian):
        raise NotApplicable("Cor 4.10's Jensen bound is for the add direction of the Gaussian")
    value = allocation_add_gaussian_epsilon(scheme.pair, scheme.steps, delta, scheme.k, scheme.epochs)
    return Bound(value, Side.UPPER, direction, Quantity.EPSILON, delta, "direct-add", CITATION_ADD_DELTA)


@dataclass(frozen=True)
class Combined:
    """The best bound per direction, their maximum, and why the other methods were skipped."""

    per_direction: dict  # Direction -> Bound (the best one)
    bound: Bound  # the maximum over directions (direction of the larger one)
    skipped: tuple[str, ...]


def combined_epsilon(scheme: Allocation, delta: float,
                     directions: Sequence[Direction] = (Direction.ADD, Direction.REMOVE),
                     profiles: ProfileSource | None = None) -> Combined:
    """UPPER bound on ε(δ) for the requested directions: min over :data:`UPPER_BOUNDS` per direction,
    then max over directions (``profiles``: None for the PLD engine's, hinted for δ). Raises
    NotApplicable if some direction has no applicable bound."""
    best: dict = {}
    skipped: list[str] = []
    for direction in directions:
        for name, fn in UPPER_BOUNDS.items():
            try:
                bound = fn(scheme, delta, direction, profiles)
            except NotApplicable as exc:
                skipped.append(f"{name} ({direction.value}): {exc}")
                continue
            if direction not in best or bound.value < best[direction].value:
                best[direction] = bound
        if direction not in best:
            raise NotApplicable(f"no analytic bound applies in the {direction.value} direction: {'; '.join(skipped)}")
    worst = max(best.values(), key=lambda b: b.value)
    bound = Bound(worst.value, Side.UPPER, worst.direction, Quantity.EPSILON, worst.at,
                  f"combined[{worst.method}]", CITATION)
    return Combined(best, bound, tuple(skipped))
