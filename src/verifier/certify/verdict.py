"""Deciding an (ε, δ) claim from rigorous bounds: CERTIFIED, VIOLATED or INCONCLUSIVE.

The verdict is on δ(claimed ε) in each direction the neighbouring relation requires:

- CERTIFIED when, in every required direction, some rigorous upper bound on δ(ε) is <= claimed δ
  or some rigorous upper bound on ε(claimed δ) is <= claimed ε;
- VIOLATED when, in some required direction, some rigorous lower bound on δ(ε) is > claimed δ or
  some rigorous lower bound on ε(claimed δ) is > claimed ε;
- INCONCLUSIVE otherwise (including when no registered method applies).

A pure-DP claim (δ = 0) is decided on bounds on ε(0), the largest privacy loss, by the same rule
with ε in place of δ (δ(ε) = 0 ⟺ ε >= ε(0)); see :func:`certify`.

Both sides of the same engine decide: δ(·) is non-increasing and continuous and ε(δ) = inf{ε :
δ(ε) <= δ}, so ε(δ) <= ε ⟺ δ(ε) <= δ (Steinke 2022, Prop 7 and §3), and an engine's ε(δ) bracket
can decide where its δ(ε) bracket does not (issue 33: a δ bracket [0, …] near the largest loss).

Only bounds with ``rigorous=True`` decide; bounds resting on an unchecked assumption and Monte
Carlo estimates are reported beside the verdict, never used for it. The bounds on ε(claimed δ) are
cross-checked against those on δ(claimed ε): since δ(·) is non-increasing,
ε(δ) <= ε ⟺ δ(ε) <= δ, so an ε upper bound <= claimed ε beside a δ lower bound > claimed δ (or an
ε lower bound > claimed ε beside a δ upper bound <= claimed δ) is a defect in verifier and raises
:class:`~verifier.errors.InconsistentBounds` naming both bounds (Steinke 2022, Prop 7 and §3).
"""

from __future__ import annotations

import enum
import time
from dataclasses import dataclass
from typing import Sequence

from verifier._types import Bound, Bracket, Direction, Quantity, Side
from verifier.certify.claim import Claim
from verifier.certify.coverage import unsupported_reason
from verifier.certify.portfolio import Collected, best_bounds, best_bracket, collect_bounds, select_methods
from verifier.errors import InconsistentBounds

__all__ = ["Verdict", "Decision", "Outcome", "decide", "settled_for", "cross_check", "certify", "tradeoff_curve"]


class Verdict(enum.Enum):
    """The answer to a claim; ``exit_status`` is what ``verifier certify`` returns for it."""

    CERTIFIED = "CERTIFIED"
    VIOLATED = "VIOLATED"
    INCONCLUSIVE = "INCONCLUSIVE"

    @property
    def exit_status(self) -> int:
        return {"CERTIFIED": 0, "VIOLATED": 1, "INCONCLUSIVE": 3}[self.value]


@dataclass(frozen=True)
class Decision:
    """A verdict and one line per direction saying which bound decided it (or that none did)."""

    verdict: Verdict
    reasons: tuple[str, ...]


def _rigorous(bounds: Sequence[Bound], quantity: Quantity) -> list[Bound]:
    return [b for b in bounds if b.rigorous and b.quantity is quantity]


#: How a decided quantity and its claimed value read in the reasons.
_WORDS = {
    Quantity.DELTA: ("δ(ε)", "δ"),
    Quantity.RHO: ("ρ", "ρ"),
    Quantity.TPR: ("TPR(FPR)", "TPR"),
    Quantity.EPSILON: ("ε(0), the largest privacy loss,", "ε"),
}
#: ... and a bound on ε at the claimed δ deciding an (ε, δ) claim beside the bounds on δ(ε).
_EPSILON_AT_DELTA = ("ε(δ)", "ε")


def _width_note(bound: Bound, bounds: Sequence[Bound]) -> str:
    """Where the deciding bound's method also gave the other side of the same quantity, its bracket
    and width (how close the claim was to what that method resolved), e.g.
    ``; pld bracket [0.9187, 0.919], width 0.000285``; else the empty string."""
    other = Side.LOWER if bound.side is Side.UPPER else Side.UPPER
    partner = next(
        (
            b
            for b in bounds
            if b.rigorous and b.method == bound.method and b.direction is bound.direction and b.quantity is bound.quantity and b.side is other
        ),
        None,
    )
    if partner is None:
        return ""
    lower, upper = sorted((partner.value, bound.value))
    return f"; {bound.method} bracket [{lower!r}, {upper!r}], width {upper - lower:.3g}"


def _undecided(words: tuple[str, str], claim: float, lower: Bound | None, upper: Bound | None) -> str:
    """``claimed δ = … lies in the best bracket […, …] of δ(ε)`` (ε(δ) has no floor: "-inf")."""
    what, claimed = words
    low = f"{lower.value!r}" if lower else ("-inf" if words is _EPSILON_AT_DELTA else "0")
    high = f"{upper.value!r}" if upper else "inf"
    return f"claimed {claimed} = {claim!r} lies in the best bracket [{low}, {high}] of {what}"


def decide(
    delta: float,
    bounds: Sequence[Bound],
    directions: Sequence[Direction],
    quantity: Quantity = Quantity.DELTA,
    *,
    epsilon: float | None = None,
) -> Decision:
    """The verdict on "δ(ε) <= ``delta``" from rigorous bounds on δ at the claimed ε (module doc);
    with ``epsilon`` (the claimed ε), rigorous bounds on ε at the claimed δ among ``bounds`` decide
    too (an upper bound <= ``epsilon`` certifies, a lower bound above it refutes). With
    ``quantity=Quantity.RHO``, on "ρ* <= ``delta``" for a zCDP claim ρ from bounds on the scheme's
    zCDP parameter ρ* (same rule: an upper bound <= the claim certifies, a lower bound above it
    refutes; Steinke 2022, Def 11); with ``quantity=Quantity.TPR``, on "TPR(α) <= ``delta``" for a
    trade-off claim from bounds on the attacker's best TPR at the claimed FPR α (same rule).

    Raises :class:`InconsistentBounds` if a rigorous lower bound exceeds a rigorous upper bound.
    """
    sources = [(quantity, delta, _WORDS[quantity])]
    if epsilon is not None and quantity is Quantity.DELTA:
        sources.append((Quantity.EPSILON, epsilon, _EPSILON_AT_DELTA))
    certified, violated, reasons = [], [], []
    for direction in directions:
        ends = [(words, claim, *best_bounds(_rigorous(bounds, q), direction)) for q, claim, words in sources]
        refuting = next(((words, claim, lo) for words, claim, lo, _ in ends if lo is not None and lo.value > claim), None)
        proving = next(((words, claim, up) for words, claim, _, up in ends if up is not None and up.value <= claim), None)
        if refuting is not None:
            (what, claimed), claim, lower = refuting
            violated.append(direction)
            reasons.append(f"{direction.value}: {what} >= {lower.value!r} > claimed {claimed} = {claim!r} ({lower.method}, lower bound){_width_note(lower, bounds)}")
        elif proving is not None:
            (what, claimed), claim, upper = proving
            certified.append(direction)
            reasons.append(f"{direction.value}: {what} <= {upper.value!r} <= claimed {claimed} = {claim!r} ({upper.method}, upper bound){_width_note(upper, bounds)}")
        else:
            reasons.append(f"{direction.value}: " + "; ".join(_undecided(words, claim, lower, upper) for words, claim, lower, upper in ends))
    if violated:
        verdict = Verdict.VIOLATED
    elif len(certified) == len(directions):
        verdict = Verdict.CERTIFIED
    else:
        verdict = Verdict.INCONCLUSIVE
    return Decision(verdict, tuple(reasons))


def settled_for(delta: float, directions: Sequence[Direction], quantity: Quantity = Quantity.DELTA, *, epsilon: float | None = None):
    """The portfolio's stopping rule for a claim: True once :func:`decide` (with ``epsilon``, on the
    bounds on δ and on ε together) is no longer INCONCLUSIVE."""

    def settled(bounds: Sequence[Bound]) -> bool:
        return decide(delta, bounds, directions, quantity, epsilon=epsilon).verdict is not Verdict.INCONCLUSIVE

    return settled


def cross_check(
    epsilon: float, delta: float, delta_bounds: Sequence[Bound], epsilon_bounds: Sequence[Bound], directions: Sequence[Direction]
) -> None:
    """Raise :class:`InconsistentBounds` when the bounds on ε(claimed δ) contradict those on
    δ(claimed ε) (see the module docstring); both bounds are named."""
    deltas = _rigorous(delta_bounds, Quantity.DELTA)
    epsilons = _rigorous(epsilon_bounds, Quantity.EPSILON)
    for direction in directions:
        d_lower, d_upper = best_bounds(deltas, direction)
        e_lower, e_upper = best_bounds(epsilons, direction)
        if e_upper is not None and e_upper.value <= epsilon and d_lower is not None and d_lower.value > delta:
            raise InconsistentBounds(
                f"{direction.value}: ε(δ={delta!r}) <= {e_upper.value!r} <= ε={epsilon!r} from {e_upper.method} "
                f"contradicts δ(ε={epsilon!r}) >= {d_lower.value!r} > δ from {d_lower.method}"
            )
        if e_lower is not None and e_lower.value > epsilon and d_upper is not None and d_upper.value <= delta:
            raise InconsistentBounds(
                f"{direction.value}: ε(δ={delta!r}) >= {e_lower.value!r} > ε={epsilon!r} from {e_lower.method} "
                f"contradicts δ(ε={epsilon!r}) <= {d_upper.value!r} <= δ from {d_upper.method}"
            )


@dataclass(frozen=True)
class Outcome:
    """Everything the certifier found for one claim: the decision, the bounds on δ at the claimed ε
    and on ε at the claimed δ (None when no method applied), the total time, and for a zCDP claim
    the bounds on ρ, for a trade-off claim those on TPR at the claimed FPR (``delta`` and
    ``epsilon`` are then None)."""

    claim: Claim
    decision: Decision
    delta: Collected | None
    epsilon: Collected | None
    seconds: float
    rho: Collected | None = None
    tpr: Collected | None = None
    tpr_curve: dict | None = None  # a trade-off claim: {"fpr": [...], direction: Bracket of arrays} (:func:`tradeoff_curve`)

    @property
    def verdict(self) -> Verdict:
        return self.decision.verdict


def tradeoff_curve(scheme, directions: Sequence[Direction], fprs: Sequence[float], focus: float, ran: Sequence[str]) -> dict:
    """The best rigorous TPR bracket per direction at each FPR of ``fprs`` over the methods in ``ran``
    (each answering the whole grid at once, tightest at ``focus``: :meth:`Method.tpr_curve`), for a
    trade-off claim's certificate: {"fpr": fprs, direction: Bracket of arrays} ([α, 1] where no
    method bounds a side: TPR >= α by a coin flip, <= 1)."""
    import numpy as np

    from verifier.errors import NotApplicable, NumericalFailure

    alphas = np.asarray(fprs, dtype=float)
    out: dict = {"fpr": [float(a) for a in alphas]}
    best = {d: [alphas.copy(), np.ones_like(alphas)] for d in directions}
    for method in select_methods(scheme, list(ran)) if ran else []:
        for direction in directions:
            try:
                columns = method.tpr_curve(scheme, list(alphas), direction, focus)
            except (NotApplicable, NumericalFailure):
                continue
            for index, bounds in enumerate(columns):
                for bound in bounds:
                    if not bound.rigorous:
                        continue
                    if bound.side.value == "lower":
                        best[direction][0][index] = max(best[direction][0][index], bound.value)
                    else:
                        best[direction][1][index] = min(best[direction][1][index], bound.value)
    out.update({d: Bracket(lower, upper) for d, (lower, upper) in best.items()})
    return out


def certify(claim: Claim, *, only: Sequence[str] | None = None, time_budget: float | None = None) -> Outcome:
    """Decide ``claim``: run the applicable methods cheapest first (each through
    :meth:`Method.claim_bounds`, so a refining method stops once its brackets decide) until the
    verdict is decided by the bounds on δ(claimed ε) or on ε(claimed δ), or ``time_budget`` seconds
    are spent; then bound ε(claimed δ) with the methods that ran and did not already, cross-check the
    two, decide on both, and return the :class:`Outcome`. A zCDP claim (``claim.rho``) is decided the
    same way on bounds on the scheme's ρ (:meth:`Method.rho_bounds`), a trade-off claim
    (``claim.tpr``) on bounds on TPR at ``claim.fpr`` (:meth:`Method.tpr_bounds`).

    Raises :class:`InconsistentBounds` on contradictory rigorous bounds (a defect in verifier).
    """
    started = time.perf_counter()
    scheme, directions = claim.model, claim.directions
    if not select_methods(scheme, only):
        reason = f"no registered method supports {type(scheme).__name__} with {scheme!r}: {unsupported_reason(scheme)}"
        return Outcome(claim, Decision(Verdict.INCONCLUSIVE, (reason,)), None, None, time.perf_counter() - started)
    if claim.rho is not None:  # a zCDP claim: decided on bounds on ρ, no (ε, δ) to cross-check
        settled = settled_for(claim.rho, directions, Quantity.RHO)
        rhos = collect_bounds(scheme, Quantity.RHO, claim.rho, directions, only=only, settled=settled, time_budget=time_budget)
        decision = decide(claim.rho, rhos.bounds, directions, Quantity.RHO)
        return Outcome(claim, decision, None, None, time.perf_counter() - started, rho=rhos)
    if claim.tpr is not None:  # a trade-off claim: decided on bounds on TPR at the claimed FPR
        settled = settled_for(claim.tpr, directions, Quantity.TPR)
        tprs = collect_bounds(scheme, Quantity.TPR, claim.fpr, directions, only=only, settled=settled, time_budget=time_budget)
        decision = decide(claim.tpr, tprs.bounds, directions, Quantity.TPR)
        from verifier.pld.tradeoff import DEFAULT_FPRS  # only trade-off claims need the PLD package here

        curve = tradeoff_curve(scheme, directions, sorted({*DEFAULT_FPRS, claim.fpr}), claim.fpr, tprs.ran)
        return Outcome(claim, decision, None, None, time.perf_counter() - started, tpr=tprs, tpr_curve=curve)
    if claim.delta == 0.0:
        return _certify_pure(claim, only, time_budget, started)
    deltas = collect_bounds(
        scheme,
        Quantity.DELTA,
        claim.epsilon,
        directions,
        only=only,
        settled=settled_for(claim.delta, directions, epsilon=claim.epsilon),
        time_budget=time_budget,
        claimed_delta=claim.delta,
    )
    epsilons = None
    if deltas.ran:
        remaining = None if time_budget is None else max(0.0, time_budget - (time.perf_counter() - started))
        epsilons = _epsilon_side(claim, deltas, remaining)
        cross_check(claim.epsilon, claim.delta, deltas.bounds, epsilons.bounds, directions)
    everything = deltas.bounds + (epsilons.bounds if epsilons is not None else ())
    decision = decide(claim.delta, everything, directions, epsilon=claim.epsilon)
    return Outcome(claim, decision, deltas, epsilons, time.perf_counter() - started)


def _certify_pure(claim: Claim, only: Sequence[str] | None, time_budget: float | None, started: float) -> Outcome:
    """A pure-DP claim (δ = 0). δ(ε) = 0 exactly when ε >= ε(0), the largest privacy loss (Steinke
    2022, Prop 7), so the claim is decided on rigorous bounds on ε(0) by :func:`decide`'s rule with ε
    in place of δ: a lower bound above the claimed ε refutes it (δ(ε) > 0 there, e.g. ε(0) = +∞ for
    any Gaussian step), an upper bound at or below it certifies it. Where no method bounds ε(0) the
    claim is decided on δ(claimed ε) as any other (a rigorous lower bound > 0 refutes it). The
    bounds on δ(claimed ε) are reported and cross-checked as for every claim."""
    scheme, directions, epsilon = claim.model, claim.directions, claim.epsilon
    assert epsilon is not None and claim.delta is not None
    settled = settled_for(epsilon, directions, Quantity.EPSILON)
    epsilons = collect_bounds(scheme, Quantity.EPSILON, 0.0, directions, only=only, settled=settled, time_budget=time_budget)
    decision = decide(epsilon, epsilons.bounds, directions, Quantity.EPSILON)
    remaining = None if time_budget is None else max(0.0, time_budget - (time.perf_counter() - started))
    if decision.verdict is Verdict.INCONCLUSIVE:
        deltas = collect_bounds(
            scheme, Quantity.DELTA, epsilon, directions, only=only, settled=settled_for(claim.delta, directions), time_budget=remaining
        )
        on_delta = decide(claim.delta, deltas.bounds, directions)
        if on_delta.verdict is not Verdict.INCONCLUSIVE:
            decision = on_delta
    else:  # the methods that decided also bound δ(claimed ε), for the report and the cross-check
        gave = tuple(dict.fromkeys(b.method.split(":")[0] for b in epsilons.bounds))
        deltas = collect_bounds(scheme, Quantity.DELTA, epsilon, directions, only=gave, time_budget=remaining)
    cross_check(epsilon, claim.delta, deltas.bounds, epsilons.bounds, directions)
    return Outcome(claim, decision, deltas, epsilons, time.perf_counter() - started)


def _epsilon_side(claim: Claim, deltas: Collected, time_budget: float | None) -> Collected:
    """Bounds on ε(claimed δ) from the methods that ran for δ: those they gave beside their δ bounds
    (one computation answered both), and for the others their own :meth:`Method.epsilon_bounds`."""
    answered = tuple(dict.fromkeys(b.method for b in deltas.beside))
    rest = [name for name in deltas.ran if name not in answered]
    bounds, skipped, ran, seconds = list(deltas.beside), (), answered, 0.0
    if rest:
        more = collect_bounds(claim.model, Quantity.EPSILON, claim.delta, claim.directions, only=rest, time_budget=time_budget)
        bounds += more.bounds
        skipped, ran, seconds = more.skipped, answered + more.ran, more.seconds
    brackets = {d: best_bracket(bounds, d) for d in claim.directions}
    return Collected(Quantity.EPSILON, claim.delta, tuple(bounds), brackets, skipped, ran, (), seconds)
