"""Dominating and dominated PLDs of 1-out-of-t random allocation, by privacy-ratio convolution on
geometric grids.

Paper (S1): "Efficient computation of the privacy loss distribution for random allocation",
Cor 3.3, Thm 3.4, Alg. 3–5, read with the corrections of notes/random-allocation.md §3.8 / §6
item 23 (each confirmed in tests/allocation against the exact t = 2 profile):

- REMOVE: R̄ = (1/t)(X_P + Σ_{t−1} X_Q), where X_P is the ratio P/Q under P and X_Q the ratio P/Q
  under Q (S1 Alg. 4's comments swap these names); the PLD is ln R̄ under P̄_t, i.e. ln of the
  ratio sum **minus ln t** (the printed Alg. 4 omits the shift). A DOMINATING PLD rounds every
  ratio sum UP.
- ADD: the PLD is ln(Q^t/P̄_t) = ln t − ln Σ_t X_Q under Q^t: t copies under Q and no special
  coordinate (the printed Alg. 5's extra convolution is a copy-paste error). The loss decreases
  in the sum, so a DOMINATING PLD rounds the sums DOWN (ratio 0 becomes loss +∞).
- X_Q's CDF at r is P_Q(ℓ <= ln r), not F^R_{Q,P}(1/r) (erratum 23(b)), see
  :func:`verifier.pld.geometric.ratio_law`.

The ∓ln t shift is snapped to the loss grid in the safe direction (DOMINATING: losses only move
up, DOMINATED: only down), exactly (:func:`verifier._directed.log_index`).

Two algorithms, both giving a DOMINATING and a DOMINATED PLD per direction:

- :func:`allocation_loss` — S1 Alg. 4/5 as printed (corrected): ratio sums rounded UP or DOWN onto
  the lattice at every convolution, stochastic domination throughout. Each rounding shifts the
  loss by up to one lattice step, so the bracket is first order in the step.
- :func:`convex_allocation` / :func:`allocation_bracket` — the same sums under Q^t (Cor 3.3: both
  directions are E[φ(S/t)] for a convex φ), kept in convex order: mean-preserving spreads onto the
  lattice for the upper side, contractions to group means for the lower side (see
  :mod:`verifier.pld.geometric`). A spread dominates the allocation pair in Blackwell's sense for
  both directions at once (its PLD is the PLD engine's DOMINATING kind), a contraction is dominated;
  the error is second order in the lattice step, which is refined along the binary exponentiation
  (a sum of m copies is m^{1/2} times narrower). This is the one the ``allocation-pld`` method and
  :func:`verifier.pld.scheme_pld` use.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from verifier._directed import log_index, loss_index
from verifier._types import Bracket, Direction, Dominance, Measure
from verifier._validation import check_integer, check_open_unit
from verifier.errors import InvalidArgument
from verifier.hockey import discrete_pld_delta, validated_delta
from verifier.pairs import DominatingPair
from verifier.pld.bracket import BOTH_SIDES, PLDBracket
from verifier.pld.distribution import DEFAULT_TAIL_MASS, DiscretePLD
from verifier.pld.geometric import (
    MAX_BINS,
    MomentLaw,
    RatioLaw,
    body_width,
    convex_ratio_law,
    convolve,
    infinite_loss_mass,
    ratio_law,
    self_convolve,
    self_convolve_convex,
)
from verifier.pld.schemes import register_builder
from verifier.schemes import Allocation

__all__ = [
    "AllocationLoss",
    "allocation_loss",
    "loss_range",
    "ConvexAllocation",
    "convex_allocation",
    "allocation_bracket",
    "lattice_exponent_for",
    "convex_law",
]

#: :meth:`ConvexAllocation.epsilon`: points of its first round (over the whole loss range), of every
#: later round (each δ evaluation costs the atoms above its ε; 4 intervals per round is the cheapest
#: division per bit once the range is narrow), the most rounds, and the relative width at which it
#: stops (far below any bracket width the laws give).
_FIRST_POINTS = 17
_ROUND_POINTS = 5
_MULTISECTION_ROUNDS = 40
_MULTISECTION_RTOL = 1e-10

#: Shares of the truncation budget β: the base laws' tails, and all the convolutions together.
_BASE_SHARE = 0.25
_CONVOLUTION_SHARE = 0.5

#: Lattice steps across each partial sum's body, relative to the base law's (the schedule in
#: :func:`convex_allocation`). Measured (issue 17, ε ≈ 1 at δ = 1e-5, t = 10³…10⁶, σ = 0.6…0.38): at 2
#: the brackets stay within 1.2× the width of the √m schedule's (ADD; REMOVE unchanged), at 1 the ADD
#: brackets are up to 2× wider for 2.5× less time.
_BODY_STEPS = 2.0
#: Base laws with fewer non-zero atoms than this keep the √m schedule (:func:`convex_allocation`).
_FEW_ATOMS = 16


@dataclass(frozen=True)
class AllocationLoss:
    """A discrete privacy-loss distribution ℓ_i = (offset + i)Δ, Δ = 2^-step_exponent, with mass
    ``infinite_mass`` at +∞ and ``dropped_mass`` at −∞ (mass that never counts in δ(ε)).

    ``relative_error`` / ``absolute_error`` bound the floating-point error of the masses (already
    moved to the safe side by :meth:`safe_masses`); ``truncated_mass`` is the mass the truncation
    sent to the safe end (an upper bound on how much it adds to, or takes from, δ).
    """

    step_exponent: int
    offset: int
    probs: npt.NDArray[np.float64]
    infinite_mass: float
    dropped_mass: float
    dominance: Dominance
    direction: Direction
    relative_error: float
    absolute_error: float
    truncated_mass: float

    @property
    def step(self) -> float:
        return 2.0**-self.step_exponent

    @property
    def losses(self) -> npt.NDArray[np.float64]:
        return (self.offset + np.arange(self.probs.size, dtype=np.float64)) * self.step

    def safe_masses(self) -> tuple[npt.NDArray[np.float64], float]:
        """(finite masses, infinite mass) with the floating-point error bounds applied on the safe
        side: DOMINATING scales every mass up by (1 + r) and adds the absolute error at +∞ (δ(ε) is
        increasing in every mass, and a unit of mass adds at most 1); DOMINATED scales down by
        (1 − r) and removes the absolute error from the largest losses first (the worst case for
        every ε at once, since the weight (1 − e^{ε−ℓ})_+ of a mass increases with its loss)."""
        r = self.relative_error
        if self.dominance is Dominance.DOMINATING:
            return self.probs * (1.0 + r), (self.infinite_mass + self.absolute_error) * (1.0 + r)
        probs = self.probs * (1.0 - r)
        infinite = self.infinite_mass * (1.0 - r)
        remove = self.absolute_error
        take = min(remove, infinite)
        infinite -= take
        remove -= take
        index = probs.size - 1
        while remove > 0.0 and index >= 0:
            take = min(remove, probs[index])
            probs[index] -= take
            remove -= take
            index -= 1
        return probs, infinite


    def pld(self) -> DiscretePLD:
        """This distribution as the PLD engine's :class:`DiscretePLD` (masses on the safe side)."""
        probs, infinite = self.safe_masses()
        dropped = self.dropped_mass if self.dominance is Dominance.DOMINATED else 0.0
        budget = self.truncated_mass + self.absolute_error
        return DiscretePLD(self.step, self.offset, probs, infinite, dropped, self.dominance, self.direction, budget)


@functools.lru_cache(maxsize=64)
def loss_range(pair: DominatingPair, under: Measure, tail: float) -> tuple[float, float]:
    """An interval of REMOVE losses ln(P/Q) holding all but at most ``tail`` of the mass on each side
    (under ``under``), located on the pair's loss CDF and survival function (so that tails far below
    machine epsilon are found accurately): first the octave median ± 2^j (j <= 12) that holds the
    tail, then a 1/512 subdivision of it. A few vectorised calls; tightness only (any interval is
    valid)."""
    median = float(np.reshape(pair.loss_quantile(0.5, Direction.REMOVE, under), -1)[0])
    if not math.isfinite(median):
        median = 0.0
    widths = 2.0 ** np.arange(0, 13)
    ends = []
    for sign, outside in ((-1, pair.loss_cdf), (1, pair.loss_sf)):
        # atoms of infinite loss (either sign) are not tails a grid can resolve: leave them out
        infinite = infinite_loss_mass(pair, under, sign)
        mass = np.asarray(outside(median + sign * widths, Direction.REMOVE, under)) - infinite
        fits = np.nonzero(mass <= tail)[0]
        if fits.size == 0:
            ends.append(median + sign * widths[-1])
            continue
        far = widths[fits[0]]
        near = far / 2.0 if fits[0] > 0 else 0.0
        grid = np.linspace(near, far, 513)
        mass = np.asarray(outside(median + sign * grid, Direction.REMOVE, under)) - infinite
        ends.append(median + sign * grid[np.nonzero(mass <= tail)[0][0]])
    return float(ends[0]), float(ends[1])


def _depth(times: int) -> int:
    """Number of convolutions binary exponentiation uses for ``times`` copies."""
    return max(times.bit_length() - 1, 0) + max(bin(times).count("1") - 1, 0)


def allocation_loss(
    pair: DominatingPair,
    steps: int,
    direction: Direction,
    dominance: Dominance,
    *,
    step_exponent: int,
    tail_budget: float,
    max_bins: int = MAX_BINS,
) -> AllocationLoss:
    """The PLD of 1-out-of-``steps`` random allocation of ``pair`` in ``direction``, DOMINATING
    (its δ(ε) is an upper bound on the allocation's, for every ε) or DOMINATED (a lower bound).

    S1 Cor 3.3 and Alg. 3–5 (corrected, module docstring) on the loss grid Δ = 2^-step_exponent.
    ``tail_budget`` β bounds the mass the truncation may move to the safe end (+∞ for DOMINATING,
    −∞ for DOMINATED): β/4 for the base laws (β/(4t) per copy), β/2 spread over the convolutions in
    proportion to how many base copies each result holds (a tail cut early is replicated by every
    later doubling), so the recorded ``truncated_mass`` stays near or below β.
    """
    t = check_integer("steps", steps, minimum=1)
    if not isinstance(direction, Direction):
        raise InvalidArgument("direction", direction, "must be Direction.ADD or Direction.REMOVE")
    if not isinstance(dominance, Dominance):
        raise InvalidArgument("dominance", dominance, "must be Dominance.DOMINATING or Dominance.DOMINATED")
    beta = check_open_unit("tail_budget", tail_budget)
    k = check_integer("step_exponent", step_exponent, minimum=0, maximum=40)
    remove = direction is Direction.REMOVE
    copies = t - 1 if remove else t
    # REMOVE: the PLD rounds the way the ratio sum does; ADD: the opposite (loss = ln t − ln sum).
    sums = dominance if remove else _opposite(dominance)
    convolutions = _depth(copies) + (1 if remove and copies else 0)
    per_copy = beta * _BASE_SHARE / t

    def tail_for(summands: int) -> float:
        return beta * _CONVOLUTION_SHARE * summands / (2.0 * t * max(convolutions, 1))

    law: RatioLaw | None = None
    if copies:
        null = ratio_law(pair, Measure.Q, k, loss_range(pair, Measure.Q, per_copy), sums, max_bins=max_bins)
        law = self_convolve(null, copies, tail_for, max_bins=max_bins)
    if remove:
        special = ratio_law(pair, Measure.P, k, loss_range(pair, Measure.P, per_copy), sums, max_bins=max_bins)
        law = special if law is None else convolve(special, law, tail_for(t), max_bins=max_bins)
    if remove:
        # ℓ = ln(sum) − ln t; ⌈a − b⌉ = a − ⌊b⌋ for integer a (DOMINATING), ⌊a − b⌋ = a − ⌈b⌉.
        shift = log_index(t, k, _opposite(dominance))
        offset, probs = law.offset - shift, law.probs
        infinite, dropped = law.infinite_mass, law.zero_mass
    else:
        # ℓ = ln t − ln(sum): reverse the grid; sum 0 is loss +∞, sum +∞ is loss −∞.
        shift = log_index(t, k, dominance)
        offset, probs = shift - (law.offset + law.probs.size - 1), law.probs[::-1].copy()
        infinite, dropped = law.zero_mass, law.infinite_mass
    truncated = infinite if dominance is Dominance.DOMINATING else dropped
    return AllocationLoss(
        k, offset, np.ascontiguousarray(probs), infinite, dropped, dominance, direction,
        law.relative_error, law.absolute_error, truncated,
    )  # fmt: skip


def _opposite(dominance: Dominance) -> Dominance:
    return Dominance.DOMINATED if dominance is Dominance.DOMINATING else Dominance.DOMINATING


@dataclass(frozen=True)
class ConvexAllocation:
    """Convex-order bounds on S = Σ_t X_i (X = P/Q under Q) for 1-out-of-t allocation: ``upper``
    (a mean-preserving spread, DOMINATING) and/or ``lower`` (a contraction, DOMINATED). Each yields
    the PLDs of both directions (:meth:`pld_arrays`)."""

    steps: int
    law: MomentLaw

    def pld_arrays(self, direction: Direction) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], float]:
        """(losses ascending, masses, mass at +∞) of the PLD in ``direction``, losses as floats
        rounded toward the safe side of the law's dominance (one ulp steps, not grid steps):
        REMOVE ℓ = ln(s/t) with P̄-mass q·s/t, plus the lost moment / t at +∞;
        ADD ℓ = ln t − ln s with Q-mass q, plus the mass of s = 0 at +∞. Computed once per direction."""
        memo = self.__dict__.setdefault("_arrays", {})
        if direction not in memo:
            memo[direction] = self._pld_arrays(direction)
        return memo[direction]

    def _pld_arrays(self, direction: Direction) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], float]:
        law, t = self.law, self.steps
        positions = (
            np.exp((law.offset + np.arange(law.probs.size)) * law.step)
            if law.dominance is Dominance.DOMINATING
            else law.moments / np.where(law.probs > 0, law.probs, 1.0)
        )
        keep = (law.probs > 0) & (positions > 0)
        s, q = positions[keep], law.probs[keep]
        log_t = math.log(t)
        log_s = np.log(s)
        upward = law.dominance is Dominance.DOMINATING
        # ln s and ln t are each within one ulp (libm); three ulps outward cover them and the subtraction
        if direction is Direction.REMOVE:
            losses = log_s - log_t
            masses = q * s / t
            infinite = law.lost_moment / t
        else:
            losses = (log_t - log_s)[::-1]
            masses = q[::-1]
            infinite = law.zero_mass
        pad = 4.0 * np.spacing(np.maximum(np.abs(log_s), log_t) + 1.0)
        pad = pad if direction is Direction.REMOVE else pad[::-1]
        losses = losses + pad if upward else losses - pad
        return losses, masses, infinite


    def delta(self, epsilons: npt.ArrayLike, direction: Direction) -> npt.NDArray[np.float64]:
        """δ(ε) of this law's PLD in ``direction`` on its own side (UPPER for DOMINATING, LOWER for
        DOMINATED), straight from the atoms (no loss grid), with the masses' relative error applied
        on the safe side; vectorised over ``epsilons``."""
        losses, masses, infinite = self.pld_arrays(direction)
        return self._safe_side(discrete_pld_delta(losses, masses, epsilons, infinite))

    def _safe_side(self, bracket: Bracket) -> npt.NDArray[np.float64]:
        r = self.law.relative_error
        if self.law.dominance is Dominance.DOMINATING:
            return np.minimum(bracket.upper * (1.0 + r), 1.0)
        return np.maximum(bracket.lower * (1.0 - r), 0.0)

    def epsilon(self, delta: float, direction: Direction) -> float:
        """The safe-side root of δ(ε) = δ: UPPER (DOMINATING) a point where this δ is already <= δ,
        LOWER (DOMINATED) a point where it still exceeds δ; ±∞ where none exists. Multisection on
        vectorised δ evaluations (_FIRST_POINTS, then _ROUND_POINTS per round) down to 1e-10
        relative; the post-condition is the selection rule itself (each returned point was evaluated)."""
        target = check_open_unit("delta", delta)
        losses, masses, infinite = self.pld_arrays(direction)
        upper = self.law.dominance is Dominance.DOMINATING
        lo, hi = float(losses[0]) - 1.0, float(losses[-1]) + 1.0
        while not self.delta(np.array([lo]), direction)[0] > target:  # validates the arrays once
            if lo < -1e6:
                return -math.inf
            lo = 2.0 * lo - 1.0

        losses, masses = np.ascontiguousarray(losses), np.ascontiguousarray(masses)

        def evaluate(points: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
            return self._safe_side(validated_delta(losses, masses, points, infinite))

        if not evaluate(np.array([hi]))[0] <= target:
            return math.inf  # only the mass at +∞ remains above the top loss
        for round_ in range(_MULTISECTION_ROUNDS):
            points = np.linspace(lo, hi, _FIRST_POINTS if round_ == 0 else _ROUND_POINTS)
            above = evaluate(points) > target  # True, …, True, False, …
            first_below = int(np.argmin(above))
            lo, hi = float(points[first_below - 1]), float(points[first_below])
            if hi - lo <= max(_MULTISECTION_RTOL * abs(hi), 4.0 * math.ulp(max(abs(lo), abs(hi), 1e-300))):
                break
        return hi if upper else lo


def convex_allocation(
    pair: DominatingPair,
    steps: int,
    dominance: Dominance,
    *,
    step_exponent: int,
    tail_budget: float,
    max_bins: int = MAX_BINS,
) -> ConvexAllocation:
    """Convex-order bound (upper: DOMINATING, lower: DOMINATED) on the sum of ``steps`` privacy
    ratios under Q, which yields both directions' PLDs of 1-out-of-t allocation (S1 Cor 3.3 in its
    Q^t form; module :mod:`verifier.pld.geometric`, comment above ``MomentLaw``)."""
    t = check_integer("steps", steps, minimum=1)
    beta = check_open_unit("tail_budget", tail_budget)
    k = check_integer("step_exponent", step_exponent, minimum=0, maximum=40)
    convolutions = max(_depth(t), 1)

    def tail_for(summands: int) -> float:
        return beta * _CONVOLUTION_SHARE * summands / (2.0 * max(convolutions, 1))

    def step_for(summands: int, body: float) -> int:
        # the coarser of: √summands times the base lattice (a sum of m copies is relatively m^{1/2}
        # narrower), and _BODY_STEPS times as many lattice steps across the partial sum's body as
        # across the base law's. The second is coarser for heavy-tailed ratios (small σ), whose sums
        # concentrate later than √m: their bodies stay resolved alike at every level instead of ever
        # finer (issue 17: t = 10^6, σ = 0.38, δ = 1e-5 went from 8.0 s to 0.9 s, same bracket)
        by_count = k + math.ceil(0.5 * math.log2(summands) - 1e-9)
        if few_atoms:
            return by_count
        by_body = k + math.ceil(math.log2(_BODY_STEPS * base_body / body) - 1e-9)
        return min(by_count, max(by_body, k))

    # lower end by Q-mass; upper end by P-mass too (the mass cut there is P-mass of the top cell,
    # e^ℓ times its Q-mass, and becomes lost first moment)
    low, high_q = loss_range(pair, Measure.Q, beta * _BASE_SHARE / t)
    high = max(high_q, loss_range(pair, Measure.P, beta * _BASE_SHARE / t)[1])
    base = convex_ratio_law(pair, k, (low, high), dominance, max_bins=max_bins)
    base_body = body_width(base)
    # a ratio on a few atoms (randomized response, (ε0, δ0)-DP) sums to separated atoms, where the
    # lattice error is first order in the step (nothing smooths it): those keep the √m schedule
    # (randomized response ε0 = 5, t = 10^5: 0.007% wide with it, 0.24% with the body schedule)
    few_atoms = np.count_nonzero(base.probs) < _FEW_ATOMS
    law = self_convolve_convex(base, t, tail_for, step_for, max_bins=max_bins) if t > 1 else base
    return ConvexAllocation(t, law)


def _grid_pld(
    losses: npt.NDArray[np.float64],
    masses: npt.NDArray[np.float64],
    infinite: float,
    dominance: Dominance,
    direction: Direction,
    step: float,
    relative_error: float,
    error_budget: float,
) -> DiscretePLD:
    """A :class:`DiscretePLD` on the grid of ``step`` from float losses already rounded toward the
    safe side: each loss goes to the grid point on its side (:func:`verifier._directed.loss_index`),
    and the masses' relative floating-point error is applied on the safe side."""
    index = loss_index(losses, step, dominance)
    offset = int(index.min())
    probs = np.bincount(index - offset, weights=masses)
    scale = 1.0 + relative_error if dominance is Dominance.DOMINATING else 1.0 - relative_error
    probs, infinite = probs * scale, infinite * scale
    dropped = 0.0 if dominance is Dominance.DOMINATING else max(0.0, 1.0 - math.fsum(probs) - infinite)
    return DiscretePLD(step, offset, probs, infinite, dropped, dominance, direction, error_budget)


def lattice_exponent_for(step: float, steps: int) -> int:
    """Base lattice exponent k0 for a PLD grid step h = 2^-j and t = ``steps``: the last
    convolution's lattice (k0 + ⌈log2(t)/2⌉, :func:`convex_allocation`) is 16 times coarser than the
    loss grid (and k0 >= 5: for few steps the lattice error of a coarser base dominates). Convex-order
    splitting is second order in the lattice step, so it then contributes less error than snapping
    the final losses to the grid."""
    return max(5, round(-math.log2(step)) - 4 - math.ceil(0.5 * math.log2(max(steps, 1))))


def allocation_bracket(
    scheme: Allocation,
    direction: Direction,
    step: float,
    tail_mass: float = DEFAULT_TAIL_MASS,
    *,
    lattice_exponent: int | None = None,
    target_delta: float | None = None,
    sides: tuple[Dominance, ...] = BOTH_SIDES,
) -> PLDBracket:
    """PLD bracket of k-out-of-t random allocation with ``epochs`` epochs, in ``direction``, on the
    loss grid ``step``. ``target_delta`` (the registry's tightness hint) is not needed: the geometric
    allocation laws already place their points by mass.

    1-out-of-⌊t/k⌋ allocation from convex-order laws (:func:`convex_allocation`, both sides), then
    k·epochs-fold PLD composition (S0 Lemma 3.2: **floor**, never ceiling — a ceiling gives more
    steps per round and so under-reports ε; notes/random-allocation.md §6 item 29). ``tail_mass``
    is the truncation budget β of each one-round law and of each composition. Only ``sides`` are
    built, the others trivial (:meth:`PLDBracket.of_sides`).
    """
    if not isinstance(scheme, Allocation):
        raise InvalidArgument("scheme", scheme, "must be an Allocation")
    rounds = scheme.k * scheme.epochs
    t_round = scheme.steps // scheme.k
    k0 = lattice_exponent_for(step, t_round) if lattice_exponent is None else lattice_exponent
    built = {}
    for dominance in sides:
        law = convex_law(scheme.pair, t_round, dominance, k0, tail_mass)
        losses, masses, infinite = law.pld_arrays(direction)
        budget = infinite if dominance is Dominance.DOMINATING else 0.0
        built[dominance] = _grid_pld(losses, masses, infinite, dominance, direction, step, law.law.relative_error, budget)
    one = PLDBracket.of_sides(built, direction, step)
    return one if rounds == 1 else one.self_compose(rounds, tail_mass=tail_mass)


@functools.lru_cache(maxsize=64)
def convex_law(
    pair: DominatingPair, steps: int, dominance: Dominance, lattice: int, tail: float = DEFAULT_TAIL_MASS
) -> ConvexAllocation:
    """:func:`convex_allocation` with base lattice 2^-``lattice`` and truncation budget ``tail``,
    cached (pairs are frozen; both directions and repeated queries share one law)."""
    return convex_allocation(pair, steps, dominance, step_exponent=lattice, tail_budget=max(tail, 1e-300))


register_builder(Allocation, allocation_bracket)
