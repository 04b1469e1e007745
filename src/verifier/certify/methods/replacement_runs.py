"""T >= 2 steps of sampling with replacement in seconds: each side's step pair on one coarse PLD
grid sized to its loss range, composed T times.

The ``pld`` method refines from a fine grid (2^-7 and finer) over the step's loss range, which with
replacement reaches K²Δ²/2σ² for a record drawn K times: tens of thousands of profile points for
n = m = 5, σ = 1, so under a time budget a two-step run could end with ε(δ) in [−∞, ∞]. A PLD is
rigorous on any grid (connect-the-dots DOMINATING and gap-corrected DOMINATED sides; Doroshenko
et al. 2022, Steinke 2022 Thm 9), so this method builds the same two pairs as ``pld``
(:func:`verifier.pld.schemes.scheme_pld` of the scheme, one side at a time) on a grid whose step
is sized to the pair's loss range, once, and composes them T times:

- UPPER: the DOMINATING side of the pair that hides K = 0 from K >= 1
  (:func:`verifier.pairs.batch_sampling.with_replacement_hidden_empty`; symmetric, so it lies
  above every step an adaptive adversary picks, in either orientation: Zhu, Dong & Wang 2022,
  Thm 10), at a step of about :data:`UPPER_POINTS` points over its loss range;
- LOWER: the larger of the DOMINATED side of the attained mixture (Σ_k P(K = k) N(kΔ), N(0))
  composed T times, in both orientations (the swapped pair of datasets are neighbours too, so
  either bounds both directions), on the ``pld`` method's first grid unless that takes more than
  :data:`LOWER_POINTS` points (the attained pair's profile is cheap), and the one-step LOWER
  end of ``batch-step``: the T-step run on that pair of datasets releases the first step's output
  among others, and dropping the others is post-processing, so ε_T(δ) >= ε_1(δ) and
  δ_T(ε) >= δ_1(ε). The coarse dominated side can be trivial where the attained loss is small
  against the grid step; the one-step end keeps the LOWER end finite there.

The ``pld`` method then refines the same pairs if the claim is still open and time is left.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Sequence

from verifier._types import Bound, Direction, Dominance, Quantity
from verifier.certify.methods.batch_step import BatchStepMethod, step_delta_ends, step_epsilon_ends
from verifier.certify.methods.pld import MAX_COMPOSITIONS, _start_step
from verifier.pairs.batch_sampling import with_replacement_hidden_empty, with_replacement_step
from verifier.pld.bracket import PLDBracket
from verifier.pld.construction import _grid_span
from verifier.pld.distribution import DEFAULT_TAIL_MASS
from verifier.pld.schemes import scheme_pld
from verifier.schemes import Scheme, WithReplacement

__all__ = ["ReplacementRunsMethod", "METHODS", "UPPER_POINTS", "LOWER_POINTS", "FINEST_STEP"]

#: Grid points over the DOMINATING pair's loss range (tightness only: n = m = 5, σ = 1, Δ = 2, two
#: steps, ε(1e-5) <= 74.4873 at step 2^-2 against 74.4795 at 2^-7; n = 1000, m = 50, σ = 2, ten
#: steps, 2.4799 at 2^-4 against 2.4720 at 2^-6, where profile points are cheap).
UPPER_POINTS = 1024
#: Most grid points over the attained pair's loss range (its dominated side is trivial on a grid
#: much coarser than a step's losses: n = 60000, m = 256, σ = 1.1, 2344 steps, ε(1e-5) >= 8.2246 at
#: the pld method's first step 2^-9, 0.3 s, and no LOWER end at 2^-7).
LOWER_POINTS = 16384
#: No DOMINATING grid finer than this (the ``pld`` method refines from there).
FINEST_STEP = 2.0**-7


def _step(pair, direction: Direction, points: int, finest: float) -> float:
    """The power-of-two grid step that puts about ``points`` points on the pair's loss range (its
    [tail, 1 − tail] quantiles under P), or ``finest`` if that is coarser."""
    j_lo, j_hi = _grid_span(pair.oriented(direction), 1.0, DEFAULT_TAIL_MASS)
    return max(finest, 2.0 ** math.ceil(math.log2(max(j_hi - j_lo, 1) / points)))


@functools.lru_cache(maxsize=16)
def _brackets(scheme: WithReplacement, delta: float | None) -> tuple[PLDBracket, ...]:
    """The DOMINATING bracket (REMOVE; the pair is symmetric) and the DOMINATED ones of both
    orientations, each composed ``scheme.steps`` times (``delta``: the δ the builder may thin far
    tails for; None for δ(ε) queries)."""
    pair = scheme.pair
    args = (pair.sigma, pair.sensitivity, scheme.dataset_size, scheme.sample_size)
    upper = with_replacement_hidden_empty(*args)
    _, (attained, _) = with_replacement_step(*args)
    built = [scheme_pld(scheme, Direction.REMOVE, step=_step(upper, Direction.REMOVE, UPPER_POINTS, FINEST_STEP), target_delta=delta,
                        sides=(Dominance.DOMINATING,))]
    for d in Direction:
        built.append(scheme_pld(scheme, d, step=_step(attained, d, LOWER_POINTS, _start_step(scheme)), target_delta=delta, sides=(Dominance.DOMINATED,)))
    return tuple(built)


def _one_step(scheme: WithReplacement) -> WithReplacement:
    """The run's first step alone (its LOWER ends bound the run's from below)."""
    return dataclasses.replace(scheme, steps=1)


class ReplacementRunsMethod(BatchStepMethod):
    """batch-step's bounds for runs of T >= 2 steps with replacement (module docstring)."""

    name = "replacement-runs"
    citation = (
        "T steps of sampling with replacement: the pld method's two pairs (the pair that hides K = 0 from K >= 1, UPPER; "
        "the attained mixture, LOWER, also one step of it alone) on coarse grids sized to their loss ranges, composed T times "
        "(Steinke 2022, Thm 9; Zhu, Dong & Wang 2022, Thm 10; proofs/batch_sampling.py)"
    )
    cost = 1
    scheme_types = (WithReplacement,)

    def supports(self, scheme: Scheme) -> bool:
        return isinstance(scheme, WithReplacement) and scheme.steps >= 2

    def declines(self, scheme: Scheme, seconds_left: float | None) -> str | None:
        """Declines runs of 2**32 steps or more, as the ``pld`` method does (the PLD power's round-off bound)."""
        if scheme.steps >= MAX_COMPOSITIONS:
            return f"skipped: composes at most {MAX_COMPOSITIONS - 1} steps (2**32 - 1; the power's round-off bound), the scheme has {scheme.steps}"
        return super().declines(scheme, seconds_left)

    def delta_bounds(self, scheme: Scheme, epsilon: float, direction: Direction) -> Sequence[Bound]:
        upper, *attained = _brackets(scheme, None)
        lower = max([float(b.delta(epsilon).lower) for b in attained] + [step_delta_ends(_one_step(scheme), epsilon, Direction.REMOVE)[0]])
        return self._bounds(lower, float(upper.delta(epsilon).upper), Quantity.DELTA, epsilon, direction)

    def epsilon_bounds(self, scheme: Scheme, delta: float, direction: Direction) -> Sequence[Bound]:
        upper, *attained = _brackets(scheme, delta)
        lower = max([float(b.epsilon(delta).lower) for b in attained] + [step_epsilon_ends(_one_step(scheme), delta, Direction.REMOVE)[0]])
        return self._bounds(lower, float(upper.epsilon(delta).upper), Quantity.EPSILON, delta, direction)


METHODS = [ReplacementRunsMethod()]
