"""Random allocation by privacy-ratio convolution on geometric grids, as a certification method.

"Efficient computation of the privacy loss distribution for random allocation" (S1), Cor 3.3 and
Thm 3.4 / Alg. 3–5, with the corrections of notes/random-allocation.md §3.8, in the convex-order
form of :mod:`verifier.pld.allocation`; k > 1 by Lemma 3.2 of Feldman & Shenfeld (⌊t/k⌋ steps per
round) and epochs by PLD composition. Works for every dominating pair.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Sequence

import numpy as np

from verifier._types import Bound, Bracket, Direction, Dominance, Measure, Quantity, Side
from verifier._validation import check_open_unit, check_real
from verifier.certify.method import Guarantee, Method
from verifier.pld.allocation import ConvexAllocation, allocation_bracket, convex_law
from verifier.pld.bracket import PLDBracket
from verifier.pld.tradeoff import tpr_bracket
from verifier.certify.methods.pld import TPR_NOTE
from verifier.schemes import Allocation, Scheme

__all__ = ["AllocationPLD", "METHODS"]

#: Base lattice exponents of one-round queries: ε passes start at _FIRST_LATTICE for a privacy loss
#: of unit spread (finer in proportion for narrower losses) and stop at the target width or at the
#: last; δ queries use one.
_FIRST_LATTICE = 3
_LAST_LATTICE = 9
_DELTA_LATTICE = 6
#: Loss-grid step of δ(ε) queries with several rounds.
_DELTA_STEP = 2.0**-12
#: Loss-grid step of the first, coarse ε(δ) pass (it locates ε; the second pass resolves it).
_FIRST_STEP = 2.0**-8
#: Relative width of the ε bracket the second pass aims at (its grid step is chosen from the first):
#: 0.4% with several rounds (issue 17 asks <= 0.5% for 20 epochs, add-or-remove; each halving of the
#: loss grid doubles a cost that stays small there), 0.8% for one round, where each finer base
#: lattice costs ~3x in the direct convex-order convolutions (t = 10^5, σ = 0.46, δ = 1e-6: 0.44 s at
#: 2^-3, 0.52% wide, vs 1.3 s at 2^-4, 0.10%).
_EPSILON_TARGET = 4e-3
_ONE_ROUND_TARGET = 8e-3
#: Finest grid step used, and the most grid points one PLD (after composition) may take.
_FINEST_STEP = 2.0**-24
_MAX_REFINEMENTS = 5
#: Most refinements when deciding a claim (:meth:`AllocationPLD.claim_bounds`): one lattice exponent
#: or one halving of the loss grid each, so the passes cost about twice the last one.
_CLAIM_HALVINGS = 8
_MAX_POINTS = 1 << 21

_NOTE = (
    "convex-order bounds (mean-preserving spread / contraction on geometric grids) are exact in real "
    "arithmetic; float64 mass rounding is covered by a tracked relative allowance, and the base masses "
    "come from the pair's ball-arithmetic loss brackets (their half-widths are part of the allowance); "
    "the far upper tails of the partial sums are thinned before each convolution (spread / contraction "
    "onto sparser lattice points, verifier.pld.geometric.thinned)"
)


class AllocationPLD(Method):
    name = "allocation-pld"
    citation = (
        "S1 (random-allocation PLD) Cor 3.3, Thm 3.4, Alg. 3-5 (corrected, convex-order form); "
        "Feldman & Shenfeld 2025, Lemma 3.2 (floor t/k)"
    )
    returns = frozenset({Guarantee.UPPER, Guarantee.LOWER})
    cost = 2
    scheme_types = (Allocation,)

    def supports(self, scheme: Scheme) -> bool:
        return isinstance(scheme, Allocation)

    # ---- one round (k = 1, one epoch): straight from the convex-order laws, no loss grid ----------

    def _laws(self, scheme: Allocation, lattice: int) -> tuple[ConvexAllocation, ConvexAllocation]:
        return tuple(convex_law(scheme.pair, scheme.steps, d, lattice) for d in (Dominance.DOMINATING, Dominance.DOMINATED))

    def _one_round_epsilon(self, scheme: Allocation, delta: float, direction: Direction) -> tuple[Bracket, str, float]:
        found = Bracket(-math.inf, math.inf)
        lattice = _first_lattice(scheme.pair)
        while True:
            upper, lower = self._laws(scheme, lattice)
            found = Bracket(max(found.lower, lower.epsilon(delta, direction)), min(found.upper, upper.epsilon(delta, direction)))
            if not (math.isfinite(found.upper) and found.upper > 0) or found.relative_width <= _ONE_ROUND_TARGET:
                break
            if lattice >= _LAST_LATTICE:
                break
            # the width is second order in the lattice step: jump to the lattice that should meet the target
            jump = math.ceil(0.5 * math.log2(found.relative_width / _ONE_ROUND_TARGET))
            lattice = min(_LAST_LATTICE, lattice + max(jump, 1))
        return found, f"base lattice step 2^-{lattice}", _truncated(upper, direction)

    # ---- several rounds: PLD composition on a loss grid ----------------------------------------

    def _bracket(self, scheme: Allocation, direction: Direction, step: float) -> PLDBracket:
        bracket = allocation_bracket(scheme, direction, step)
        span = bracket.losses_span()
        if (span[1] - span[0]) / step > _MAX_POINTS:  # a coarser grid: wider bracket, never invalid
            bracket = allocation_bracket(scheme, direction, 2.0 ** math.ceil(math.log2((span[1] - span[0]) / _MAX_POINTS)))
        return bracket

    def _rounds_epsilon(self, scheme: Allocation, delta: float, direction: Direction) -> tuple[Bracket, str, float]:
        """A coarse pass locates ε; then the grid (and with it the lattice) is refined, first to the
        step a first-order error model predicts, then by halving, until the bracket is
        _EPSILON_TARGET wide (relative) or the finest step is reached. Each pass is a rigorous
        bracket: they intersect."""
        bracket = self._bracket(scheme, direction, _FIRST_STEP)
        found = bracket.epsilon(delta)
        step = bracket.step
        if math.isfinite(found.upper) and found.upper > 0 and found.relative_width > _EPSILON_TARGET:
            # snapping each round's losses to the grid is first order in the step: jump to the step
            # that should meet the target, then halve if it does not
            step = max(step / 2.0 ** math.ceil(math.log2(found.relative_width / _EPSILON_TARGET)), _FINEST_STEP)
            for _ in range(_MAX_REFINEMENTS):
                if found.relative_width <= _EPSILON_TARGET or step < _FINEST_STEP:
                    break
                bracket = self._bracket(scheme, direction, step)
                again = bracket.epsilon(delta)
                found = Bracket(max(found.lower, again.lower), min(found.upper, again.upper))
                step /= 2.0
        return found, _grid_note(bracket), bracket.dominating.error_budget

    # ---- the Method interface --------------------------------------------------------------------

    def _bounds(
        self, bracket: Bracket, quantity: Quantity, at: float, direction: Direction, grid: str, budget: float
    ) -> list[Bound]:
        """``budget``: the mass the upper side's truncation sent to +∞ (recorded, already included)."""
        note = f"{_NOTE}; {grid}"
        common = dict(rigorous=True, note=note, error_budget=float(budget))
        return [
            Bound(float(bracket.lower), Side.LOWER, direction, quantity, at, self.name, self.citation, **common),
            Bound(float(bracket.upper), Side.UPPER, direction, quantity, at, self.name, self.citation, **common),
        ]

    def delta_bounds(self, scheme: Scheme, epsilon: float, direction: Direction) -> Sequence[Bound]:
        eps = check_real("epsilon", epsilon)
        if scheme.k * scheme.epochs == 1:
            upper, lower = self._laws(scheme, _DELTA_LATTICE)
            got = Bracket(float(lower.delta(np.array([eps]), direction)[0]), float(upper.delta(np.array([eps]), direction)[0]))
            grid = f"base lattice step 2^-{_DELTA_LATTICE}"
            return self._bounds(got, Quantity.DELTA, eps, direction, grid, _truncated(upper, direction))
        bracket = self._bracket(scheme, direction, _DELTA_STEP)
        grid = _grid_note(bracket)
        return self._bounds(bracket.delta(eps), Quantity.DELTA, eps, direction, grid, bracket.dominating.error_budget)

    def tpr_bounds(self, scheme: Scheme, fpr: float, direction: Direction) -> Sequence[Bound]:
        """:meth:`tpr_curve` at one FPR."""
        return self.tpr_curve(scheme, [fpr], direction, fpr)[0]

    def tpr_curve(self, scheme: Scheme, fprs: Sequence[float], direction: Direction, focus: float) -> list[Sequence[Bound]]:
        """TPR at each FPR from one allocation PLD bracket (the multi-round grid, also for one round:
        verifier.pld.tradeoff needs the DOMINATED side as a PLD on a loss grid)."""
        bracket = self._bracket(scheme, direction, _DELTA_STEP)
        got = tpr_bracket(bracket, [float(f) for f in fprs])
        return [
            [replace(b, note=f"{TPR_NOTE}; {b.note}") for b in self._bounds(got[i], Quantity.TPR, float(fpr), direction, _grid_note(bracket), bracket.dominating.error_budget)]
            for i, fpr in enumerate(fprs)
        ]

    def claim_bounds(
        self, scheme: Scheme, epsilon: float, delta: float, direction: Direction
    ) -> tuple[Sequence[Bound], Sequence[Bound]]:
        """Bounds on δ(``epsilon``) and ε(``delta``) from the same laws (one round) or PLD brackets
        (several rounds), refined only until one of the two brackets decides the claim: the base
        lattice one exponent at a time from :func:`_first_lattice` to _LAST_LATTICE, or the loss grid
        halved from _FIRST_STEP, at most _CLAIM_HALVINGS times. Each pass is rigorous, so the passes'
        brackets intersect."""
        eps, target = check_real("epsilon", epsilon), check_open_unit("delta", delta)
        found_delta, found_epsilon = Bracket(0.0, 1.0), Bracket(-math.inf, math.inf)
        one_round = scheme.k * scheme.epochs == 1
        lattice, step = _first_lattice(scheme.pair), _FIRST_STEP
        for _ in range(_CLAIM_HALVINGS + 1):
            if one_round:
                upper, lower = self._laws(scheme, lattice)
                d_lower, d_upper = (float(law.delta(np.array([eps]), direction)[0]) for law in (lower, upper))
                e_lower, e_upper = lower.epsilon(target, direction), upper.epsilon(target, direction)
                grid, budget = f"base lattice step 2^-{lattice}", _truncated(upper, direction)
            else:
                bracket = self._bracket(scheme, direction, step)
                (d_lower, d_upper), (e_lower, e_upper) = _ends(bracket.delta(eps)), _ends(bracket.epsilon(target))
                grid, budget = _grid_note(bracket), bracket.dominating.error_budget
            found_delta = Bracket(max(found_delta.lower, d_lower), min(found_delta.upper, d_upper))
            found_epsilon = Bracket(max(found_epsilon.lower, e_lower), min(found_epsilon.upper, e_upper))
            decided = found_delta.upper <= target or found_delta.lower > target or found_epsilon.upper <= eps or found_epsilon.lower > eps
            if decided or (lattice >= _LAST_LATTICE if one_round else step <= _FINEST_STEP):
                break
            lattice, step = lattice + 1, step / 2.0
        return (
            self._bounds(found_delta, Quantity.DELTA, eps, direction, grid, budget),
            self._bounds(found_epsilon, Quantity.EPSILON, target, direction, grid, budget),
        )

    def epsilon_bounds(self, scheme: Scheme, delta: float, direction: Direction) -> Sequence[Bound]:
        target = check_open_unit("delta", delta)
        if scheme.k * scheme.epochs == 1:
            found, grid, budget = self._one_round_epsilon(scheme, target, direction)
        else:
            found, grid, budget = self._rounds_epsilon(scheme, target, direction)
        return self._bounds(found, Quantity.EPSILON, target, direction, grid, budget)


def _truncated(upper: ConvexAllocation, direction: Direction) -> float:
    """Mass at +∞ of the upper law's PLD: truncation (and any infinite loss of the pair itself)."""
    return upper.pld_arrays(direction)[2]


def _first_lattice(pair) -> int:
    """The first lattice exponent: _FIRST_LATTICE for a loss ln(P/Q) under Q of unit spread (half its
    16%–84% quantile range), one more per halving of the spread (the convex-order error scales with
    the lattice step relative to that spread)."""
    q16, q84 = np.reshape(pair.loss_quantile([0.16, 0.84], Direction.REMOVE, Measure.Q), -1)
    spread = 0.5 * float(q84 - q16)
    if not (math.isfinite(spread) and spread > 0):
        return _FIRST_LATTICE
    return min(_LAST_LATTICE, _FIRST_LATTICE + max(0, math.ceil(math.log2(1.0 / spread))))


def _ends(bracket: Bracket) -> tuple[float, float]:
    return float(bracket.lower), float(bracket.upper)


def _grid_note(bracket: PLDBracket) -> str:
    """The loss grid and how the rounds were composed (the FFT power or the binary fallback)."""
    return f"loss grid step {bracket.step:g}" + "".join(f"; {route}" for route in bracket.routes)


METHODS = [AllocationPLD()]
