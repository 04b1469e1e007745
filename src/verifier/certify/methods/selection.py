"""The exponential mechanism and permute-and-flip (:class:`~verifier.schemes.Selection`), alone, composed
or as phases of a sequence, as a certification method ("selection"): both sides through the pairs
the class names (proofs/selection_mechanisms.py, proofs/permute_and_flip.py).

- UPPER: every Selection node replaced by one run of its :attr:`~verifier.schemes.Selection.dominating`
  pair. That pair dominates every score instance at every ε' in both directions, so by adaptive
  composition of dominating pairs (Zhu, Dong & Wang 2022, Thm 10) the substituted scheme's UPPER
  bounds hold for the class; they come from every registered method that supports it (up to the
  first exact one), tightest kept.
- LOWER, one run (the scheme is the node itself): the :attr:`~verifier.schemes.Selection.supremum`
  pair, whose δ(ε') equals the largest δ(ε') over the instances at every ε' (each attained by a
  two-candidate instance), so its LOWER bounds on δ(ε'), ε(δ) (ε(δ) of the supremum of curves is the
  supremum of the ε(δ)) and TPR(α) (likewise a supremum over instances) are LOWER bounds on the class's.
- LOWER, compositions and sequences: every node replaced by its :attr:`~verifier.schemes.Selection.member`,
  one fixed instance (run the same way each time), so the substituted scheme is one mechanism of the
  class and its LOWER bounds hold.
"""

from __future__ import annotations

from typing import Callable, Sequence

from verifier._types import Bound, Direction, Quantity, Side
from verifier.certify.method import Guarantee, Method
from verifier.errors import NotApplicable
from verifier.schemes import Composed, Scheme, Selection, Single, holds_node
from verifier.schemes import Sequence as SchemeSequence

__all__ = ["SelectionMethod", "METHODS", "substitute", "holds_selection"]


def holds_selection(scheme: Scheme) -> bool:
    """Whether ``scheme`` holds a Selection node (alone, composed, or in a phase of a sequence)."""
    return holds_node(scheme, Selection)


def substitute(scheme: Scheme, pair_of: Callable[[Selection], object]) -> Scheme:
    """``scheme`` with every Selection node replaced by one run of ``pair_of(node)``."""
    if isinstance(scheme, Selection):
        return Single(pair_of(scheme))  # type: ignore[arg-type]
    if isinstance(scheme, Composed):
        return Composed(substitute(scheme.scheme, pair_of), scheme.times)
    if isinstance(scheme, SchemeSequence):
        return SchemeSequence(tuple(substitute(phase, pair_of) for phase in scheme.phases))
    return scheme


class SelectionMethod(Method):
    name = "selection"
    citation = (
        "exponential mechanism: the eps-BR class's tight pair above (Durfee & Rogers 2019; Dong, Durfee & Rogers 2020), "
        "the two-candidate instances below; permute-and-flip: Laplace with Delta/b = eps above (it dominates every instance: "
        "report-noisy-max with exponential noise, Ding et al. 2021; proofs/permute_and_flip.py) and below (the supremum of "
        "its two-candidate instances; proofs/selection_mechanisms.py)"
    )
    returns = frozenset({Guarantee.UPPER, Guarantee.LOWER})
    cost = 1
    scheme_types = (Selection, Composed, SchemeSequence)
    needs_float_range = False  # the substituted scheme's own methods decline what they cannot compute
    answers_pure_dp = True

    def supports(self, scheme: Scheme) -> bool:
        return holds_selection(scheme)

    def _bounds(self, scheme: Scheme, quantity: Quantity, at: float, direction: Direction) -> list[Bound]:
        from verifier.certify.registry import query_bounds

        lower_pair = (lambda node: node.supremum) if isinstance(scheme, Selection) else (lambda node: node.member)
        out: list[Bound] = []
        for side, pair_of, pick in ((Side.UPPER, lambda node: node.dominating, min), (Side.LOWER, lower_pair, max)):
            model = substitute(scheme, pair_of)
            found: list[tuple[Method, Bound]] = []
            for method, bounds in query_bounds(model, quantity, at, direction, side):
                found += [(method, b) for b in bounds if b.side is side]
                if Guarantee.EXACT in method.returns and {b.side for b in bounds} >= {Side.LOWER, Side.UPPER}:
                    # the exact value rounded outward: no later (costlier) method is tighter. An EXACT
                    # method may give one side only away from where it is exact (max_loss: ε(δ) <= ε(0)
                    # for δ > 0), and a later method can be tighter there.
                    break
            if not found:
                continue
            method, best = pick(found, key=lambda pair: pair[1].value)
            kind = {Side.UPPER: "dominating", Side.LOWER: "supremum" if isinstance(scheme, Selection) else "member"}[side]
            out.append(Bound(best.value, side, direction, quantity, at, self.name, f"{self.citation}; {best.citation}",
                             note=f"{kind} pair through {method.name}"))
        if not out:
            raise NotApplicable("no registered method bounds the substituted pairs")
        return out

    def delta_bounds(self, scheme: Scheme, epsilon: float, direction: Direction) -> Sequence[Bound]:
        return self._bounds(scheme, Quantity.DELTA, epsilon, direction)

    def epsilon_bounds(self, scheme: Scheme, delta: float, direction: Direction) -> Sequence[Bound]:
        return self._bounds(scheme, Quantity.EPSILON, delta, direction)

    def tpr_bounds(self, scheme: Scheme, fpr: float, direction: Direction) -> Sequence[Bound]:
        return self._bounds(scheme, Quantity.TPR, fpr, direction)


METHODS = [SelectionMethod()]
