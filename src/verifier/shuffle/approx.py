"""The shuffle model of (ε0, δ0)-DP local randomizers (Gaussian, ``approx_dp``, any pair), from
Feldman, McMillan & Talwar 2021, Thm 3.8, applied to the clone bound of :mod:`verifier.shuffle.clones`.

Thm 3.8's argument: each (ε0, δ0)-DP randomizer R has an ε0-DP randomizer R' with
TV(R(x), R'(x)) <= (1 + e^{−ε0}/2)·δ0 for every input (their Lemma 3.7), so the n shuffled reports of R
and of R' are within n·(1 + e^{−ε0}/2)·δ0 in total variation, and for every event S

    Pr[A(X0) ∈ S] <= Pr[A'(X0) ∈ S] + nτ <= e^ε Pr[A'(X1) ∈ S] + δ' + nτ <= e^ε Pr[A(X1) ∈ S] + δ' + (e^ε + 1)nτ,

i.e. δ(ε) <= δ'(ε) + (e^ε + 1)(1 + e^{−ε0}/2)·n·δ0 where δ' is any bound for ε0-DP randomizers: here
the clone bound (FMT state it with the closed form; the coupling step does not depend on which
ε0-DP bound follows it). The pair of a ``Shuffle`` scheme dominates the randomizer on every pair of
records, so R is (ε0, δ_pair(ε0))-DP for every ε0 (the larger of the two directions); verifier
screens a grid of ε0 in float64, then computes the chosen ε0's bound rigorously (ball arithmetic for
the clone sum and the coupling term). A pure ε0-DP pair uses its largest loss with δ0 = 0, an
``approx_dp`` pair its own (ε0, δ0) besides the grid.

The shuffled reports are also a post-processing of the changed user's report (the others' reports
do not depend on it), so the pair's own δ(ε) bounds the shuffle too; :func:`shuffle_delta_upper` and
:func:`shuffle_epsilon_upper` return the smaller of the two (where the coupling leaves no room, e.g.
a very noisy Gaussian, only the pair's bound remains).
"""

from __future__ import annotations

import math

import numpy as np
from flint import arb

from verifier._directed import arb_bound, with_precision
from verifier._types import Direction, Side
from verifier._validation import check_integer, check_nonnegative, check_open_unit
from verifier.errors import NotApplicable
from verifier.shuffle.clones import clone_delta_float, clone_delta_upper, clone_epsilon_float, clone_epsilon_upper, local_epsilon0

__all__ = ["COUPLING_CITATION", "coupling_slack", "local_profile", "shuffle_delta_upper", "shuffle_epsilon_upper"]

COUPLING_CITATION = "Feldman, McMillan & Talwar 2021, Thm 3.8 (Lemma 3.7 coupling to an eps0-DP randomizer) on the clone bound: UPPER"

#: Candidate ε0 for randomizers that are not pure DP (screened in float64, one checked rigorously).
EPS0_GRID = tuple(0.02 * 1.3**j for j in range(34))  # 0.02 … ≈ 113


def coupling_slack(epsilon0: float, delta0: float, users: int, epsilon: float) -> float:
    """UPPER bound on (e^ε + 1)(1 + e^{−ε0}/2)·n·δ0, the price of Thm 3.8's coupling."""
    if delta0 == 0:
        return 0.0
    with with_precision(128):
        ball = ((arb(epsilon).exp() + 1) * (1 + (-arb(epsilon0)).exp() / 2) * users) * arb(delta0)
    return arb_bound(ball, Side.UPPER)


def local_profile(pair: object) -> list[tuple[float, float]]:
    """[(ε0, δ0)] the randomizer satisfies: its largest loss with δ0 = 0 for a pure pair, else δ0 =
    the pair's δ(ε0) (upper end, larger direction) on :data:`EPS0_GRID`."""
    from verifier.pairs import ApproxDP

    pure = local_epsilon0(pair)
    if pure is not None:
        return [(pure, 0.0)] if pure > 0 else []
    out = [(pair.epsilon0, pair.delta0)] if isinstance(pair, ApproxDP) and pair.epsilon0 > 0 else []
    for e0 in EPS0_GRID:
        d0 = max(float(pair.delta(e0, d).upper) for d in (Direction.REMOVE, Direction.ADD))  # type: ignore[attr-defined]
        if d0 < 1:
            out.append((e0, d0))
    return out


def shuffle_delta_upper(pair: object, users: int, epsilon: float) -> tuple[float, float, float]:
    """(UPPER bound on δ(ε), ε0, δ0 used) for n shuffled reports of the randomizer ``pair`` dominates;
    ε0 = inf when the pair's own δ(ε) (post-processing of one report) is the smaller."""
    n = check_integer("users", users, minimum=1)
    eps = check_nonnegative("epsilon", epsilon)
    profile = local_profile(pair)
    if not profile:
        raise NotApplicable(f"the randomizer {pair!r} is (eps0, delta0)-DP with delta0 < 1 for no eps0 tried")
    scores = [clone_delta_float(e0, n, eps) + (math.exp(eps) + 1) * (1 + math.exp(-e0) / 2) * n * d0 for e0, d0 in profile]
    e0, d0 = profile[int(np.argmin(scores))]
    value = clone_delta_upper(e0, n, eps) + coupling_slack(e0, d0, n, eps)
    alone = max(float(pair.delta(eps, d).upper) for d in (Direction.REMOVE, Direction.ADD))  # type: ignore[attr-defined]
    if alone < value:
        return alone, math.inf, 0.0
    return min(1.0, math.nextafter(value, 2.0)), e0, d0


def shuffle_epsilon_upper(pair: object, users: int, delta: float) -> tuple[float, float, float]:
    """(UPPER bound on ε(δ), ε0, δ0 used): the clone ε at the budget δ − the coupling term with
    e^{ε0} in place of e^ε (the result is <= ε0). NotApplicable, naming Thm 3.8's requirement, when
    no ε0 leaves a positive budget."""
    n = check_integer("users", users, minimum=1)
    target = check_open_unit("delta", delta)
    best: tuple[float, float, float, float] | None = None
    for e0, d0 in local_profile(pair):
        budget = target - coupling_slack(e0, d0, n, e0)
        if budget <= 0:
            continue
        guess = clone_epsilon_float(e0, n, budget, steps=20)  # screening: ε0·2^-20 is enough
        if best is None or guess < best[0]:
            best = (guess, e0, d0, budget)
    if best is None:
        raise NotApplicable(
            f"FMT Thm 3.8 needs (e^eps0 + 1)(1 + e^-eps0/2) n delta0 < delta = {target:g} for some eps0; "
            f"no eps0 in 0.02 ... 113 leaves room for n = {n}"
        )
    _, e0, d0, budget = best
    value = clone_epsilon_upper(e0, n, budget)
    alone = max(float(pair.epsilon(target, d).upper) for d in (Direction.REMOVE, Direction.ADD))  # type: ignore[attr-defined]
    return (alone, math.inf, 0.0) if alone < value else (value, e0, d0)
