"""Checking a candidate bound against verifier's rigorous brackets (research prototyping).

Two forms of candidate:

- an ε bound ``f(scheme, delta) -> epsilon`` claimed as an UPPER bound (refuted where it lies below
  verifier's rigorous lower bound on the true ε(δ)) or a LOWER bound (refuted where it lies above
  verifier's rigorous upper bound);
- a DP → RDP conversion ``f(order, epsilon, delta) -> rdp``, claimed to bound the order-λ Rényi
  divergence of every (ε, δ)-DP mechanism. It is refuted by a witness: ε-randomized response is
  ε-DP, hence (ε, δ)-DP for every δ >= 0, and its D_λ is known in ball arithmetic; a candidate
  below the rigorous lower bound on that D_λ (either direction) is false there.

The search is a grid, then (``examples`` > 0, needs Hypothesis) Hypothesis steered (``target``) toward the largest violation; the result
is the worst violation found, with its parameters, or none.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from verifier._types import Bracket, Direction
from verifier.pairs import Gaussian, RandomizedResponse
from verifier.properties.accountant import Case, rigorous_epsilon
from verifier.schemes import Composed, Poisson, Scheme, Single

__all__ = ["BoundCheck", "check_epsilon_bound", "check_dp_to_rdp", "BUILTINS"]


@dataclass(frozen=True)
class BoundCheck:
    """The worst violation found (``violation`` > 0 means refuted), where, and how many points were
    tried. ``margin``: how far the candidate lies on the wrong side of verifier's bracket."""

    form: str
    side: str
    points: int
    violation: float
    where: str
    candidate: float
    bracket: Bracket | None

    @property
    def refuted(self) -> bool:
        return self.violation > 0

    def to_dict(self) -> dict:
        out = {"form": self.form, "side": self.side, "points": self.points, "refuted": self.refuted, "violation": self.violation}
        if self.refuted:
            out.update(where=self.where, candidate=self.candidate, verifier_bracket=[self.bracket.lower, self.bracket.upper])
        return out


class _Worst:
    def __init__(self, form: str, side: str) -> None:
        self.form, self.side, self.points = form, side, 0
        self.best = (-math.inf, "", math.nan, None)

    def see(self, violation: float, where: str, candidate: float, bracket: Bracket) -> None:
        self.points += 1
        if violation > self.best[0]:
            self.best = (violation, where, candidate, bracket)

    def result(self) -> BoundCheck:
        violation, where, candidate, bracket = self.best
        return BoundCheck(self.form, self.side, self.points, violation, where, candidate, bracket)


def _steer(value: float) -> None:
    from hypothesis import target

    target(value if math.isfinite(value) else 1e6, label="violation")


def _epsilon_violation(f: Callable[[Scheme, float], float], side: str, case: Case) -> tuple[float, float, Bracket]:
    bracket = rigorous_epsilon(case.scheme, case.delta)
    value = float(f(case.scheme, case.delta))
    if side == "upper":
        violation = bracket.lower - value if not math.isnan(value) else math.inf
    else:
        violation = value - bracket.upper if not math.isnan(value) else math.inf
    return violation, value, bracket


#: The ε grid: Gaussian steps, compositions and DP-SGD-like Poisson runs.
_GRID = [Single(Gaussian(s)) for s in (0.25, 0.5, 1.0, 2.0, 4.0)]
_GRID += [Composed(Single(Gaussian(s)), t) for s in (0.5, 2.0) for t in (10, 100)]
_GRID += [Poisson(Gaussian(s), q, t) for s, q, t in ((1.0, 0.01, 100), (2.0, 0.1, 100))]


def check_epsilon_bound(f: Callable[[Scheme, float], float], side: str = "upper", *, examples: int = 20, kinds=(Single, Composed, Poisson)) -> BoundCheck:
    """Search Gaussian schemes (add/remove) and δ for the worst violation of the candidate
    ``f(scheme, delta)`` claimed as an ``side`` ("upper" or "lower") bound on ε(δ)."""
    if side not in ("upper", "lower"):
        raise ValueError(f"side={side!r} must be 'upper' or 'lower'")
    worst = _Worst("epsilon", side)
    for scheme in [s for s in _GRID if type(s) in kinds]:
        for delta in (1e-3, 1e-6, 1e-9):
            case = Case(scheme, delta)
            violation, value, bracket = _epsilon_violation(f, side, case)
            worst.see(violation, str(case), value, bracket)
    if examples:
        from hypothesis import HealthCheck, given, settings
        from hypothesis import strategies as st

        from verifier.strategies import deltas, schemes

        @settings(max_examples=examples, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
        @given(st.builds(Case, schemes(kinds), deltas()))
        def search(case: Case) -> None:
            violation, value, bracket = _epsilon_violation(f, side, case)
            worst.see(violation, str(case), value, bracket)
            _steer(violation)

        search()
    return worst.result()


def _renyi_lower(epsilon: float, order: float) -> Bracket:
    """The rigorous bracket on D_λ of ε-randomized response, maximised over the two directions."""
    pair = RandomizedResponse(epsilon)
    a, b = pair.renyi(order, Direction.REMOVE), pair.renyi(order, Direction.ADD)
    return Bracket(max(a.lower, b.lower), max(a.upper, b.upper))


def _rdp_violation(f: Callable[[float, float, float], float], order: float, epsilon: float, delta: float) -> tuple[float, float, Bracket]:
    bracket = _renyi_lower(epsilon, order)
    value = float(f(order, epsilon, delta))
    return (bracket.lower - value if not math.isnan(value) else math.inf), value, bracket


def check_dp_to_rdp(f: Callable[[float, float, float], float], *, examples: int = 20) -> BoundCheck:
    """Search orders λ, ε and δ for the worst violation of the candidate DP → RDP conversion
    ``f(order, epsilon, delta)`` (claimed: every (ε, δ)-DP mechanism has D_λ <= f), with
    ε-randomized response as the witness (module docstring)."""
    worst = _Worst("dp-to-rdp", "upper")

    def see(order: float, epsilon: float, delta: float) -> float:
        violation, value, bracket = _rdp_violation(f, order, epsilon, delta)
        worst.see(violation, f"order λ={order!r}, ε={epsilon!r}, δ={delta!r} (witness: ε-randomized response)", value, bracket)
        return violation

    for order in (1.5, 2.0, 4.0, 16.0):
        for epsilon in (0.1, 1.0, 5.0):
            for delta in (0.0, 1e-6, 1e-3):
                see(order, epsilon, delta)
    if examples:
        from hypothesis import HealthCheck, given, settings
        from hypothesis import strategies as st

        @settings(max_examples=examples, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
        @given(st.integers(3, 64).map(lambda i: i / 2), st.integers(1, 50).map(lambda i: i / 10), st.sampled_from([0.0, 1e-9, 1e-6, 1e-3]))
        def search(order: float, epsilon: float, delta: float) -> None:
            _steer(see(order, epsilon, delta))

        search()
    return worst.result()


def _liew_lemma1(order: float, epsilon: float, delta: float) -> float:
    from verifier.rdp.checkin_published import lemma1_printed

    return lemma1_printed(order, epsilon, delta).value


def _classical_gaussian(scheme: Scheme, delta: float) -> float:
    """ε = Δ√(2 ln(1.25/δ))/σ of one Gaussian step (Dwork & Roth, Thm A.1: proven for ε < 1 only),
    applied to every σ: T-fold compositions by √T (the "Gaussian adds in quadrature" shortcut)."""
    inner = scheme.scheme if isinstance(scheme, Composed) else scheme
    times = scheme.times if isinstance(scheme, Composed) else 1
    return inner.pair.sensitivity * math.sqrt(times * 2 * math.log(1.25 / delta)) / inner.pair.sigma


#: Candidates the CLI knows by name: (form, side, function, kinds).
BUILTINS: dict[str, tuple[str, str, Callable, tuple]] = {
    "liew-lemma1": ("dp-to-rdp", "upper", _liew_lemma1, ()),
    "classical-gaussian": ("epsilon", "upper", _classical_gaussian, (Single, Composed)),
}
