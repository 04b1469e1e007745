"""The reduction of k-out-of-t allocation over E epochs to rounds of 1-out-of-t′ allocation.

Feldman & Shenfeld, Lemma 3.2: δ_{A_{t,k}}(ε) ≤ δ^{⊗k}_{A_{⌊t/k⌋,1}}(ε), and E epochs compose E
times, so a scheme is m = k·E rounds of A_{t′} with t′ = ⌊t/k⌋. The floor is essential: a
ceiling gives each round more steps and hence optimistic, invalid numbers (notes §6, item 29).
"""

from __future__ import annotations

from dataclasses import dataclass

from verifier.errors import InvalidArgument
from verifier.pairs import DominatingPair
from verifier.schemes import Allocation

__all__ = ["Rounds", "rounds_of"]


@dataclass(frozen=True)
class Rounds:
    """``rounds`` independent (adaptively composed) runs of 1-out-of-``steps`` allocation of ``pair``."""

    pair: DominatingPair
    steps: int  # t′ = ⌊t/k⌋
    rounds: int  # m = k·E

    @property
    def single(self) -> bool:
        """True when the scheme is one round (k = 1, E = 1), where profile bounds need no composition."""
        return self.rounds == 1


def rounds_of(scheme: Allocation) -> Rounds:
    """Lemma 3.2 (floor t/k) applied to an :class:`~verifier.schemes.Allocation`."""
    if not isinstance(scheme, Allocation):
        raise InvalidArgument("scheme", scheme, "must be an Allocation (k-out-of-t random allocation)")
    return Rounds(scheme.pair, scheme.steps // scheme.k, scheme.k * scheme.epochs)
