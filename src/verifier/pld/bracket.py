"""A DOMINATING and a DOMINATED PLD for the same question, queried together as brackets."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from verifier._types import Bracket, Direction, Dominance
from verifier.errors import IncompatibleObjects, InconsistentBounds, InvalidArgument
from verifier.pld.distribution import DEFAULT_TAIL_MASS, DiscretePLD, compose
from verifier.pld.power import self_compose_pair_routed

__all__ = ["PLDBracket", "BOTH_SIDES", "trivial_side"]

#: The sides a builder builds unless told otherwise (``sides`` of the scheme builders).
BOTH_SIDES: tuple[Dominance, ...] = (Dominance.DOMINATING, Dominance.DOMINATED)


def trivial_side(dominance: Dominance, direction: Direction, step: float) -> DiscretePLD:
    """The PLD that bounds every mechanism on its side, for a side nobody will query (a one-sided
    refinement builds only the side that is wide): DOMINATING, all mass at +∞ (δ(ε) = 1 >= any δ);
    DOMINATED, all mass at loss 0 (δ(ε) = max(0, 1 − e^ε), below any δ(ε), since the whole space
    gives P(Ω) − e^ε·Q(Ω) = 1 − e^ε). Both stay on their side under composition (Steinke 2022, Thm 9)
    and, one point each, cost nothing to compose."""
    if dominance is Dominance.DOMINATING:
        return DiscretePLD(step, 0, np.zeros(1), 1.0, 0.0, dominance, direction)
    return DiscretePLD(step, 0, np.ones(1), 0.0, 0.0, dominance, direction)


@dataclass(frozen=True)
class PLDBracket:
    """``dominating`` yields UPPER and ``dominated`` LOWER bounds on δ(ε) of one mechanism, one direction.
    ``routes`` records how each self-composition behind it was computed (the FFT power or the binary
    fallback, per side), for the note of the bounds it yields."""

    dominating: DiscretePLD
    dominated: DiscretePLD
    routes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not (isinstance(self.dominating, DiscretePLD) and isinstance(self.dominated, DiscretePLD)):
            raise InvalidArgument("pld", (self.dominating, self.dominated), "both sides must be DiscretePLD")
        if self.dominating.dominance is not Dominance.DOMINATING:
            raise InvalidArgument("dominating", self.dominating.dominance, "must be a DOMINATING PLD")
        if self.dominated.dominance is not Dominance.DOMINATED:
            raise InvalidArgument("dominated", self.dominated.dominance, "must be a DOMINATED PLD")
        if self.dominating.direction is not self.dominated.direction:
            raise IncompatibleObjects("direction", self.dominating.direction.value, self.dominated.direction.value)

    @property
    def direction(self):
        return self.dominating.direction

    @property
    def step(self) -> float:
        return self.dominating.step

    def delta(self, epsilons: float | npt.ArrayLike) -> Bracket:
        """[DOMINATED δ(ε), DOMINATING δ(ε)] (Steinke 2022, Prop 7): rigorous for every ε; raises
        InconsistentBounds if the sides cross (a defect, never a result)."""
        return Bracket(self.dominated.delta(epsilons), self.dominating.delta(epsilons))

    def epsilon(self, delta: float) -> Bracket:
        """[DOMINATED safe root, DOMINATING safe root] of δ(ε) = δ: a rigorous bracket of ε(δ)."""
        lower = self.dominated.epsilon(delta)
        upper = self.dominating.epsilon(delta)
        if lower > upper:
            raise InconsistentBounds(f"PLD ε({delta}) lower end {lower!r} exceeds upper end {upper!r}")
        return Bracket(lower, upper)

    def compose(self, other: "PLDBracket", *, tail_mass: float = DEFAULT_TAIL_MASS) -> "PLDBracket":
        """Both sides composed with the other bracket's (Steinke 2022, Thm 9)."""
        return PLDBracket(
            compose(self.dominating, other.dominating, tail_mass=tail_mass),
            compose(self.dominated, other.dominated, tail_mass=tail_mass),
            self.routes + other.routes,
        )

    def self_compose(self, times: int, *, tail_mass: float = DEFAULT_TAIL_MASS) -> "PLDBracket":
        """Both sides composed ``times`` times with themselves; the route each side took is appended to
        :attr:`routes`."""
        sides, (upper, lower) = self_compose_pair_routed(self.dominating, self.dominated, times, tail_mass=tail_mass)
        return PLDBracket(*sides, self.routes + (f"dominating {upper}; dominated {lower}",))

    @classmethod
    def of_sides(cls, built: dict[Dominance, DiscretePLD], direction: Direction, step: float) -> "PLDBracket":
        """The bracket of the sides ``built`` (DOMINATING and/or DOMINATED), the missing one
        :func:`trivial_side`."""
        return cls(*(built.get(d) or trivial_side(d, direction, step) for d in BOTH_SIDES))

    def grid_size(self) -> int:
        """The larger number of grid points of the two sides."""
        return int(max(self.dominating.probs.size, self.dominated.probs.size))

    def losses_span(self) -> npt.NDArray[np.float64]:
        """[smallest, largest] grid loss over both sides."""
        a, b = self.dominating.losses(), self.dominated.losses()
        return np.array([min(a[0], b[0]), max(a[-1], b[-1])])
