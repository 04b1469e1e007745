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
  ε. (Equivalently: a selector that ignores the scores and keeps the first run.) That is the member
  when K >= 1 almost surely (the truncated negative binomial distributions, support {1, 2, …};
  Papernot & Steinke 2022, Def 1).
- RepeatAndSelect with K ~ Poisson(μ) (shape = ∞) → the same selector, but K = 0 (probability
  e^{−μ}) releases ⊥ under both datasets: the release is e^{−μ}·⊥ + (1 − e^{−μ})·(Q(x), V), the run
  mixed with a common atom, so for ε >= 0 its δ(ε) = ∫(P' − e^ε Q')₊ = (1 − e^{−μ})·δ_run(ε) exactly
  (the atom contributes e^{−μ}(1 − e^ε)₊ = 0), and ε(δ) = ε_run(δ/(1 − e^{−μ})) (0 where that is
  >= 1). This is bounded where the repeat-and-select is the whole scheme (:meth:`Member._poisson_runs`:
  the run's LOWER bounds scaled, 1 − e^{−μ} rounded down, δ/(1 − e^{−μ}) rounded up, ε_run being
  non-increasing in δ); inside a composition or a sequence the member would need the common-atom
  mixture of the run's pair, which no registered method composes, so the lower side declines there.
- Composed, Sequence → the same composition of the members of their parts (each part's mechanism is
  chosen from its class independently, so the composition of members is a member of the composition).

The member's LOWER bounds come from every registered method that supports it (registry.side_bounds),
cheapest first.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

from flint import arb

from verifier._directed import arb_bound, with_precision
from verifier._types import Bound, Direction, Quantity, Side
from verifier.certify.method import Guarantee, QuantityMethod
from verifier.errors import NotApplicable
from verifier.schemes import Composed, Poisson, RepeatAndSelect, SampledZCDP, Scheme, Single, ZCDP, holds_node
from verifier.schemes import Sequence as SchemeSequence

__all__ = ["Member", "METHODS", "member", "is_class"]


def _sequence(scheme: SchemeSequence) -> SchemeSequence:
    phases: list[Scheme] = []
    for phase in scheme.phases:
        found = member(phase)
        phases.extend(found.phases if isinstance(found, SchemeSequence) else (found,))
    return SchemeSequence(tuple(phases))


def _run_of(scheme: RepeatAndSelect) -> Scheme:
    if scheme.poisson:
        raise NotApplicable("a repeat-and-select with Poisson runs (shape = inf) has a lower bound only as the whole scheme, not inside a composition")
    return member(scheme.scheme)


#: Scheme type → its member (module docstring); a type not listed is one mechanism, its own member.
MEMBERS: dict[type, Callable[..., Scheme]] = {
    ZCDP: lambda scheme: Single(scheme.stand_in),
    SampledZCDP: lambda scheme: Poisson(scheme.step.stand_in, scheme.rate, scheme.steps),
    RepeatAndSelect: lambda scheme: _run_of(scheme),
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
    return holds_node(scheme, CLASSES)


class Member(QuantityMethod):
    name = "member"
    citation = "LOWER bounds of a member of the class: the Gaussian with Delta/sigma = sqrt(2 rho) for (xi, rho)-zCDP (Steinke 2022, Lemma 12), Poisson-sampled when the class is; the run itself for repeat-and-select (mixed with nothing released at e^-mean for Poisson runs)"
    returns = frozenset({Guarantee.LOWER})
    cost = 2
    scheme_types = (ZCDP, SampledZCDP, RepeatAndSelect, Composed, SchemeSequence)
    needs_float_range = False  # the member's own methods decline what they cannot compute
    answers_pure_dp = True

    def supports(self, scheme: Scheme) -> bool:
        return is_class(scheme)

    def quantity_bounds(self, scheme: Scheme, quantity: Quantity, at: float, direction: Direction) -> list[Bound]:
        if isinstance(scheme, RepeatAndSelect) and scheme.poisson:
            return self._poisson_runs(scheme, quantity, at, direction)
        return self._member_bounds(scheme, quantity, at, direction)

    def _poisson_runs(self, scheme: RepeatAndSelect, quantity: Quantity, at: float, direction: Direction) -> list[Bound]:
        """The run mixed with ⊥ at e^{−μ} (module docstring): δ scaled by 1 − e^{−μ}, or ε at δ/(1 − e^{−μ})."""
        with with_precision():
            released = 1 - (-arb(scheme.mean)).exp()
            if quantity is Quantity.DELTA:
                weight = arb_bound(released, Side.LOWER)
                found = self._member_bounds(scheme.scheme, quantity, at, direction)
                return [replace(b, value=arb_bound(arb(b.value) * arb(weight), Side.LOWER), note=f"{b.note}; times 1 - e^-mean") for b in found]
            run_delta = arb_bound(arb(at) / released, Side.UPPER)
        if run_delta >= 1.0:
            return [Bound(0.0, Side.LOWER, direction, quantity, at, self.name, self.citation, note="delta/(1 - e^-mean) >= 1: trivial")]
        return [replace(b, at=at, note=f"{b.note}; the run's at delta/(1 - e^-mean)") for b in self._member_bounds(scheme.scheme, quantity, run_delta, direction)]

    def _member_bounds(self, scheme: Scheme, quantity: Quantity, at: float, direction: Direction) -> list[Bound]:
        from verifier.certify.registry import side_bounds

        found = [(method, bound) for method, bounds in side_bounds(member(scheme), quantity, at, direction, Side.LOWER) for bound in bounds]
        if not found:
            raise NotApplicable(f"no registered method gives a lower bound for the member {member(scheme)!r}")
        method, best = max(found, key=lambda pair: pair[1].value)
        note = f"member {type(member(scheme)).__name__}: {method.name}"
        return [Bound(best.value, Side.LOWER, direction, quantity, at, self.name, f"{self.citation}; {best.citation}", note=note)]


METHODS = [Member()]
