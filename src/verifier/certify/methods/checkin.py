"""Rigorous LOWER bounds for shuffled check-in and the shuffle model, as a certification method
("checkin-lower"): they refute (ε, δ) claims; the UPPER bounds of shuffled check-in come from the
"rdp" method (Liew et al. Eq. (5) with Wang–Balle–Kasiviswanathan per-k bounds,
:mod:`verifier.rdp.checkin`).

- CheckIn (either aggregation; Gaussian or two-outcome pairs): the DOMINATED PLD of one specific
  pair of datasets, mixed over the observed number of check-ins and composed over the rounds
  (:mod:`verifier.pld.checkin`).
- Shuffle: the same specific pair as Liew et al. Thm 3, whose release is 1-out-of-n random
  allocation's remove pair; its lower side from the random-allocation PLD engine
  (:class:`verifier.certify.methods.allocation_pld.AllocationPLD`). No rigorous UPPER bound on the
  shuffle model's privacy is known (the paper's §6 open problem), so a shuffle claim is never
  CERTIFIED.

Replace-one neighbours are symmetric: the specific pair in either order is a pair of neighbours, so
each direction's lower bound uses the pair in that orientation.
"""

from __future__ import annotations

from typing import Sequence

from verifier._types import Bound, Direction, Quantity, Side
from verifier.certify.method import Guarantee, Method
from verifier.certify.methods.allocation_pld import AllocationPLD
from verifier.errors import NotApplicable
from verifier.pairs import Gaussian
from verifier.pairs.finite import FinitePair
from verifier.pld.checkin import checkin_delta_lower, checkin_epsilon_lower
from verifier.schemes import Allocation, CheckIn, Scheme, Shuffle

__all__ = ["CheckInLower", "METHODS"]

_CHECKIN_CITATION = (
    "Liew et al. Eq. (3)/(5): one specific pair, mixed over the observed k, DOMINATED PLD (Lemma A.4 of the "
    "random-allocation PLD paper for the subsampled loss), composed over the rounds: LOWER"
)
_SHUFFLE_CITATION = "Liew et al. Thm 3's pair = 1-out-of-n allocation remove pair, DOMINATED side of the allocation PLD: LOWER"
_NO_UPPER = "no rigorous upper bound on the shuffle model's privacy is known (Liew et al. Sec. 6, open problem)"


def _checkin_pair_supported(scheme: CheckIn) -> bool:
    pair = scheme.pair
    return isinstance(pair, Gaussian) or (isinstance(pair, FinitePair) and pair._masses()[0].size == 2)


class CheckInLower(Method):
    name = "checkin-lower"
    citation = "Liew, Hasegawa & Takahashi (shuffled check-in): specific-pair PLD lower bounds"
    returns = frozenset({Guarantee.LOWER})
    cost = 2
    scheme_types = (CheckIn, Shuffle)

    def supports(self, scheme: Scheme) -> bool:
        return isinstance(scheme, Shuffle) or (isinstance(scheme, CheckIn) and _checkin_pair_supported(scheme))

    def _bound(self, value: float, quantity: Quantity, at: float, direction: Direction, citation: str, note: str = "") -> list[Bound]:
        return [Bound(float(value), Side.LOWER, direction, quantity, at, self.name, citation, note=note)]

    def _shuffle(self, scheme: Shuffle, quantity: Quantity, at: float, direction: Direction) -> list[Bound]:
        allocation = Allocation(scheme.pair, scheme.users)
        engine = AllocationPLD()
        found = engine.delta_bounds(allocation, at, Direction.REMOVE) if quantity is Quantity.DELTA else engine.epsilon_bounds(allocation, at, Direction.REMOVE)
        lower = next(b for b in found if b.side is Side.LOWER)
        return self._bound(lower.value, quantity, at, direction, _SHUFFLE_CITATION, note=_NO_UPPER)

    def _collect(self, scheme: Scheme, quantity: Quantity, at: float, direction: Direction) -> list[Bound]:
        if isinstance(scheme, Shuffle):
            return self._shuffle(scheme, quantity, at, direction)
        if not (isinstance(scheme, CheckIn) and _checkin_pair_supported(scheme)):
            raise NotApplicable(f"{self.name} needs a CheckIn with a Gaussian or two-outcome pair, or a Shuffle; got {scheme!r}")
        args = (scheme.pair, scheme.users, scheme.rate, scheme.rounds, at, direction)
        value = checkin_delta_lower(*args) if quantity is Quantity.DELTA else checkin_epsilon_lower(*args)
        return self._bound(value, quantity, at, direction, _CHECKIN_CITATION)

    def delta_bounds(self, scheme: Scheme, epsilon: float, direction: Direction) -> Sequence[Bound]:
        return self._collect(scheme, Quantity.DELTA, epsilon, direction)

    def epsilon_bounds(self, scheme: Scheme, delta: float, direction: Direction) -> Sequence[Bound]:
        return self._collect(scheme, Quantity.EPSILON, delta, direction)


METHODS = [CheckInLower()]
