"""LOWER bounds on the worst mechanism of a class from one of its members ("member").

Two schemes describe a class of mechanisms rather than one mechanism: :class:`~verifier.schemes.ZCDP`
(every (ξ, ρ)-zCDP step) and :class:`~verifier.schemes.RepeatAndSelect` (every run mechanism the
run's model covers, under every selection rule). A claim about them must hold for every member, so a
rigorous LOWER bound on δ(ε) or ε(δ) of any one member is a rigorous LOWER bound on the worst case.
The UPPER side is the Rényi bound of the class (the "rdp" method, :mod:`verifier.rdp.classes`).

The member (:func:`member`, by scheme type through :data:`MEMBERS`):

- ZCDP → the Gaussian step with Δ/σ = μ, μ <= √(2ρ) (:attr:`ZCDP.stand_in`): D_α = αμ²/2 <= ξ + ρα at
  every order (Steinke 2022, Lemma 33.4), so it is (ξ, ρ)-zCDP.
- SampledZCDP → the Poisson-sampled Gaussian step with the same Δ/σ = μ <= √(2ρ) (its step is a
  member of the (ξ, ρ)-zCDP class, sampled the same way, so the whole is a member of the sampled class).
- RepeatAndSelect → the run itself. Let the run release y ~ Q(x). The mechanism Q'(x) = (Q(x), U),
  U ~ Uniform(0, 1) drawn independently, has the same privacy as Q in every sense (Q is a function of
  Q', and Q' is Q followed by data-independent randomness: post-processing both ways), so it is a run
  the claim covers. Order its outputs by U (ties have probability 0). The best of K runs of Q' is
  (Q(x)_J, U_max) with J the index of the largest U: J is independent of the runs' Q-outputs, so the
  release is distributed as (Q(x), V) with V independent of the data, and its δ(ε) equals Q's at every
  ε. (Equivalently: a selector that ignores the scores and keeps the first run.) This needs K >= 1
  almost surely, which holds for the truncated negative binomial distributions verifier supports
  (support {1, 2, …}; Papernot & Steinke 2022, Def 1); Poisson-distributed K, which can be 0, is refused.
- Composed, Sequence → the same composition of the members of their parts (each part's mechanism is
  chosen from its class independently, so the composition of members is a member of the composition).

The member's LOWER bounds come from every registered method that supports it (registry.side_bounds),
cheapest first.
"""

from __future__ import annotations

from typing import Callable, Sequence

from verifier._types import Bound, Direction, Quantity, Side
from verifier.certify.method import Guarantee, Method
from verifier.errors import NotApplicable
from verifier.schemes import Composed, Poisson, RepeatAndSelect, SampledZCDP, Scheme, Single, ZCDP
from verifier.schemes import Sequence as SchemeSequence

__all__ = ["Member", "METHODS", "member", "is_class"]


def _sequence(scheme: SchemeSequence) -> SchemeSequence:
    phases: list[Scheme] = []
    for phase in scheme.phases:
        found = member(phase)
        phases.extend(found.phases if isinstance(found, SchemeSequence) else (found,))
    return SchemeSequence(tuple(phases))


#: Scheme type → its member (module docstring); a type not listed is one mechanism, its own member.
MEMBERS: dict[type, Callable[..., Scheme]] = {
    ZCDP: lambda scheme: Single(scheme.stand_in),
    SampledZCDP: lambda scheme: Poisson(scheme.step.stand_in, scheme.rate, scheme.steps),
    RepeatAndSelect: lambda scheme: member(scheme.scheme),
    Composed: lambda scheme: Composed(member(scheme.scheme), scheme.times),
    SchemeSequence: _sequence,
}

#: Scheme types that describe a class of mechanisms (their parts are searched by :func:`is_class`).
CLASSES = (ZCDP, SampledZCDP, RepeatAndSelect)


def member(scheme: Scheme) -> Scheme:
    """A mechanism of the class ``scheme`` describes (module docstring): the scheme itself when it
    describes one mechanism."""
    rule = MEMBERS.get(type(scheme))
    return scheme if rule is None else rule(scheme)


def is_class(scheme: Scheme) -> bool:
    """Whether ``scheme`` holds a class node (ZCDP, SampledZCDP or RepeatAndSelect) anywhere."""
    if isinstance(scheme, CLASSES):
        return True
    if isinstance(scheme, Composed):
        return is_class(scheme.scheme)
    if isinstance(scheme, SchemeSequence):
        return any(is_class(phase) for phase in scheme.phases)
    return False


class Member(Method):
    name = "member"
    citation = "LOWER bounds of a member of the class: the Gaussian with Delta/sigma = sqrt(2 rho) for (xi, rho)-zCDP (Steinke 2022, Lemma 12), Poisson-sampled when the class is; the run itself for repeat-and-select"
    returns = frozenset({Guarantee.LOWER})
    cost = 2
    scheme_types = (ZCDP, SampledZCDP, RepeatAndSelect, Composed, SchemeSequence)
    needs_float_range = False  # the member's own methods decline what they cannot compute
    answers_pure_dp = True

    def supports(self, scheme: Scheme) -> bool:
        return is_class(scheme)

    def _bounds(self, scheme: Scheme, quantity: Quantity, at: float, direction: Direction) -> list[Bound]:
        from verifier.certify.registry import side_bounds

        found = [(method, bound) for method, bounds in side_bounds(member(scheme), quantity, at, direction, Side.LOWER) for bound in bounds]
        if not found:
            raise NotApplicable(f"no registered method gives a lower bound for the member {member(scheme)!r}")
        method, best = max(found, key=lambda pair: pair[1].value)
        note = f"member {type(member(scheme)).__name__}: {method.name}"
        return [Bound(best.value, Side.LOWER, direction, quantity, at, self.name, f"{self.citation}; {best.citation}", note=note)]

    def delta_bounds(self, scheme: Scheme, epsilon: float, direction: Direction) -> Sequence[Bound]:
        return self._bounds(scheme, Quantity.DELTA, epsilon, direction)

    def epsilon_bounds(self, scheme: Scheme, delta: float, direction: Direction) -> Sequence[Bound]:
        return self._bounds(scheme, Quantity.EPSILON, delta, direction)


METHODS = [Member()]
