"""The shuffle model of (ε0, δ0)-DP local randomizers (Gaussian, ``approx_dp``, any pair): the clone
bound of :mod:`verifier.shuffle.clones` plus the coupling term of Feldman, McMillan & Talwar,
"Hiding among the clones" (FOCS 2021, arXiv:2012.12803), Thm 3.8,

    δ(ε) <= δ_clone(ε0, n, ε) + (e^ε + 1)(1 + e^{−ε0}/2)·n·δ0.

Where the term comes from, and why it holds for the CLONE bound: FMT state Thm 3.8 for their closed
form (Thm 3.1), proved by coupling each (ε0, δ0)-DP report to an ε0-DP one (their Lemma 3.7) and
paying for the total variation on both sides of the hockey stick. The constant (1 + e^{−ε0}/2) is
taken from the transcription in Liew et al. (Eq. (11)); the text of Lemma 3.7 itself was not
available to check. verifier does not rely on it: proofs/shuffle_coupling.py derives the coupling
for the clone reduction directly (the changed user's two laws moved by δ0/(1 + e^{ε0}) in TV to an
ε0-indistinguishable pair, every other user's law by e^{−ε0}(δ0 + δ0/(1 + e^{ε0})) to one that
contains e^{−ε0}/2 of each, which is all the clone reduction uses; then P(S) − e^ε Q(S) moves by at
most TV(P, P') + e^ε TV(Q, Q')):

    δ(ε) <= δ_clone(ε0, n, ε) + (1 + e^ε)·δ0·[1/(1 + e^{ε0}) + (n − 1)·e^{−ε0}(1 + 1/(1 + e^{ε0}))]

for every ε >= 0 and any ε0 > 0, with no condition on ε0 (Thm 3.1's is needed only by the closed
form). Per user this is at most (1 + e^{−ε0}/2)δ0 (equal in the limit ε0 → 0, far below for large
ε0), so the term added here is a valid, looser coupling (tests/shuffle: it dominates the proved one;
the sum stays above the brute-force δ of shuffled (ε0, δ0)-RR; at n = 1 the proved term is tight).

The pair of a ``Shuffle`` scheme dominates the randomizer on every pair of records, so R is
(ε0, δ_pair(ε0))-DP for every ε0 (the larger of the two directions); verifier screens a grid of ε0
in float64, then computes the chosen ε0's bound rigorously (ball arithmetic for the clone sum and
the coupling term). A pure ε0-DP pair uses its largest loss with δ0 = 0, an ``approx_dp`` pair its own
(ε0, δ0) besides the grid.

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
from verifier.shuffle.clones import (
    CloneWeight,
    clone_delta_float,
    clone_delta_upper,
    clone_epsilon_float,
    clone_epsilon_upper,
    clone_weight,
    local_epsilon0,
)

__all__ = ["COUPLING_CITATION", "coupling_slack", "local_profile", "shuffle_delta_upper", "shuffle_epsilon_upper"]

COUPLING_CITATION = (
    "Feldman, McMillan & Talwar 2021 (arXiv:2012.12803), Thm 3.8's coupling term (e^eps+1)(1+e^-eps0/2) n delta0 "
    "on the clone bound, where it dominates the coupling proved in proofs/shuffle_coupling.py: UPPER"
)

#: Candidate ε0 for randomizers that are not pure DP (screened in float64, one checked rigorously).
EPS0_GRID = tuple(0.02 * 1.3**j for j in range(34))  # 0.02 … ≈ 113


def coupling_slack(epsilon0: float, delta0: float, users: int, epsilon: float) -> float:
    """UPPER bound on (e^ε + 1)(1 + e^{−ε0}/2)·n·δ0, the price of Thm 3.8's coupling (at least the
    coupling proved for the clone bound in proofs/shuffle_coupling.py; module docstring)."""
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


def _weight(pair: object) -> CloneWeight:
    """The clone share of a pure pair (:func:`verifier.shuffle.clones.clone_weight`); FMT's e^{−ε0}
    for the (ε0, δ0) profile of a pair that is not pure DP (the coupling is proved for it)."""
    return clone_weight(pair) if local_epsilon0(pair) is not None else CloneWeight.ANY


def shuffle_delta_upper(pair: object, users: int, epsilon: float) -> tuple[float, float, float]:
    """(UPPER bound on δ(ε), ε0, δ0 used) for n shuffled reports of the randomizer ``pair`` dominates;
    ε0 = inf when the pair's own δ(ε) (post-processing of one report) is the smaller."""
    n = check_integer("users", users, minimum=1)
    eps = check_nonnegative("epsilon", epsilon)
    profile = local_profile(pair)
    if not profile:
        raise NotApplicable(f"the randomizer {pair!r} is (eps0, delta0)-DP with delta0 < 1 for no eps0 tried")
    weight = _weight(pair)
    scores = [clone_delta_float(e0, n, eps, weight) + (math.exp(eps) + 1) * (1 + math.exp(-e0) / 2) * n * d0 for e0, d0 in profile]
    e0, d0 = profile[int(np.argmin(scores))]
    value = clone_delta_upper(e0, n, eps, weight) + coupling_slack(e0, d0, n, eps)
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
        guess = clone_epsilon_float(e0, n, budget, steps=20, weight=_weight(pair))  # screening: ε0·2^-20 is enough
        if best is None or guess < best[0]:
            best = (guess, e0, d0, budget)
    if best is None:
        raise NotApplicable(
            f"FMT Thm 3.8 needs (e^eps0 + 1)(1 + e^-eps0/2) n delta0 < delta = {target:g} for some eps0; "
            f"no eps0 in 0.02 ... 113 leaves room for n = {n}"
        )
    _, e0, d0, budget = best
    value = clone_epsilon_upper(e0, n, budget, _weight(pair))
    # the pair's ε(δ) is negative where its total variation is below δ; the shuffle's ε(δ) is >= 0
    alone = max(0.0, *(float(pair.epsilon(target, d).upper) for d in (Direction.REMOVE, Direction.ADD)))  # type: ignore[attr-defined]
    return (alone, math.inf, 0.0) if alone < value else (value, e0, d0)
