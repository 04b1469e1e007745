"""Fixed-size batches with Gaussian steps against an adaptive adversary ("adaptive" method).

The run (:class:`~verifier.schemes.WithoutReplacement`: T steps, each on a batch of B of the n records
drawn without replacement, λ = B/n, replace-one neighbours, the step's pair N(Δ_r, σ²) vs N(0, σ²)
with Δ_r = 2C for gradients clipped at C) is bounded by the Bellman recursion of
:mod:`verifier.pld.adaptive` over a finite family of step pairs, read at one ε or δ.

LOWER: the family {remove, add}, M = λN(Δ_r) + (1 − λ)N(0) against N(0) in either order. Both are
attained at every step by the same two datasets, whatever was released before: every other record's
clipped gradient z = −C·e, the target's x and its replacement's x′ each C·e or −C·e as the step's
gradient map decides (a training run's gradients are functions of the parameters, which are functions
of the past outputs, so the map may depend on the history; the records themselves are fixed). With
x = C·e, x′ = z the step's outputs are M and N(0) up to a common translation (remove); with x = z,
x′ = C·e they are N(0) and M (add). So every strategy of the recursion over this family is realised by
one adaptive training run on one pair of neighbours, and the recursion on the members' DOMINATED PLDs
is a rigorous LOWER bound on δ(ε) (and ε(δ)) of the run, in both directions (the family is closed
under swapping the datasets). It is larger than the fixed orientation (the ``pld`` method's lower
side): at σ = 1.1, B = 256, n = 60000, T = 2344, δ = 1e-5 it gives ε >= 6.7573 where one orientation
gives 6.7211 (benchmarks/fixed_batches.md).

UPPER: the family of a finite cover of every realisable step (:func:`verifier.pld.gram_cover.gram_cover`,
in units of the clipping norm C = Δ_r/2, so s = σ/C): given the history, every step of every adaptive
run is a common-weight mixture of translates of E(a, b) = ((1 − λ)N(0) + λN(a), (1 − λ)N(0) + λN(b)),
a = x − z, b = x′ − z for clipped gradients x, x′, z; E depends only on the Gram matrix (A, B, C), is
dominated by every member above it in the order of proofs/fixed_batch_domination.py (step 4), and
every realisable Gram matrix lies in a cell of the cover whose member dominates it (steps 5-6,
:func:`verifier.pld.gram_cover.check_cover`, run here before the cover is used). The recursion over
the members' DOMINATING PLDs (:func:`verifier.pld.gram_step.gram_step_pld`, rank-one Gram matrices
included; remove (4, 0, 0) itself is dominated by the cover's corner member) is then an UPPER bound on
δ(ε) for every adaptive adversary, in both directions (the theorem at the end of
proofs/fixed_batch_domination.py; README, "Fixed-size batches").

Resolution (planning, never proof: every grid and every cell count gives a rigorous bound on its
side). Both classes are closed under swapping the datasets, so the recursion's grid stops at u = 0
and takes the values above it from the mirror identity (verifier.pld.adaptive). The grid step starts
at the largest power of two at most a quarter of a step's loss spread q·sqrt(e^{μ²} − 1) (the
χ² proxy of the cover module; at most 2^-8), so that small-ε rows get a grid that scales with their
losses, and each refinement level halves it (the LOWER side one level finer: it has two members,
the UPPER side 36 or more); the grid's bottom lies below −ε by six standard deviations of the
T-step loss sum (between 1/4 and 2). A claim is decided on the coarsest level that decides it
(:meth:`AdaptiveBatches.claim_bounds`): a side refines only while its extrapolated limit could still
cross the claim. A query without a claim refines the LOWER side until it settles and the UPPER side
until the bracket is TARGET_WIDTH narrow (:func:`refined_value`), each side at most LEVELS − 1 times
(the UPPER side then once more with a second cover, COVERS, where the bracket is still wide).
"""

from __future__ import annotations

import functools
import math
from typing import Sequence

from verifier._budget import ACTIVITY, Cost
from verifier._types import Bound, Direction, Dominance, Quantity, Side
from verifier.certify.method import Guarantee, QuantityMethod
from verifier.errors import NotApplicable, NumericalFailure
from verifier.pairs import Gaussian, PoissonSubsampled
from verifier.pld.adaptive import AdaptiveValue, adaptive_value
from verifier.pld.construction import pld_sides_from_pair
from verifier.pld.distribution import DiscretePLD
from verifier.schemes import Scheme, WithoutReplacement

__all__ = [
    "AdaptiveBatches",
    "AdaptiveCover",
    "COVERS",
    "LEVELS",
    "METHODS",
    "TARGET_WIDTH",
    "coarsest_step",
    "recursion_value",
    "refined_value",
    "upper_family",
]

_CITATION = (
    "Bellman recursion over the step pairs an adaptive adversary picks from the history (verifier.pld.adaptive; "
    "Steinke 2022, Prop 7): LOWER over the remove/add orientations, attained by one pair of neighbours; UPPER over "
    "a finite cover of every realisable step (proofs/fixed_batch_domination.py)"
)

#: Coarsest grid step of the recursion (module docstring: smaller where a step's losses are small).
_STEP_CAP = 2.0**-8
#: Refinement levels per side (level k: the coarsest step halved k times, LOWER once more).
LEVELS = 3
#: Planning targets of the UPPER side's covers (gram_cover's ``excess``: members' χ²-proxy at most
#: this far above remove's): the first at every level; each further one once, on the second level,
#: where the first cover's end stays wider than twice TARGET_WIDTH (or a claim is still within
#: reach). The proxy is a rough guide at large λ (σ = 1.1, λ = 0.1, T = 100: ε <= 25.533 at 1%,
#: 25.463 at 0.5%, 25.658 at 0.3%), so the UPPER end is the smallest over the covers run, each
#: checked before use.
COVERS = (0.01, 0.005)
#: Relative width (upper − lower)/lower of ε(δ) (of ln δ(ε) for δ) a query without a claim refines
#: the UPPER side to, against the LOWER side refined until a level moves it by a quarter of that
#: (planning: at the DP-SGD row the ε bracket costs three LOWER levels and two UPPER levels).
TARGET_WIDTH = 0.005
#: A side with one level refines for a claim within this relative distance of its end (planning:
#: the DP-SGD row's ends move 0.7% (LOWER) and 0.2% (UPPER) from the coarsest level to the limit).
_REACH = 0.01
#: Mass dropped from the members' far tails (a DOMINATED PLD may be a sub-probability).
_TAIL = 1e-15
#: Cells per axis of each two-dimensional member's PLD at the coarsest level, doubled per level up to
#: _CELLS (gram_step_pld; the error is second order in a cell's loss range, so cells follow the step).
_LEVEL0_CELLS = 256
_CELLS = 1024
#: Measured cost of one member's step per point of the cyclic transform (radix-2 FFT, one core,
#: two members a transform, proofs/packed_fft.py: 1.3e-4 s a member-step at 8192 points, load 6), with a margin.
_SECONDS_PER_POINT = 2e-8


def _spread(scheme: WithoutReplacement) -> float:
    """A step's loss spread, q·sqrt(e^{μ²} − 1) with μ = Δ/σ (the χ² proxy; planning only)."""
    mu = scheme.pair.sensitivity / scheme.pair.sigma
    return scheme.rate * math.sqrt(math.expm1(min(mu * mu, 700.0)))


def coarsest_step(scheme: WithoutReplacement) -> float:
    """The UPPER side's first grid step: the largest power of two at most a quarter of the loss
    spread, and at most 2^-8 (module docstring)."""
    spread = _spread(scheme)
    if not spread > 0:
        return _STEP_CAP
    return min(_STEP_CAP, 2.0 ** math.floor(math.log2(spread / 4)))


def _step(scheme: WithoutReplacement, side: Side, level: int) -> float:
    return coarsest_step(scheme) * 2.0 ** -(level + (1 if side is Side.LOWER else 0))


def _cells(level: int) -> int:
    return min(_CELLS, _LEVEL0_CELLS << level)


def _levels(side: Side) -> list[tuple[int, float]]:
    """(halvings of the coarsest step, the cover's excess; 0 for LOWER) of each level of ``side``."""
    if side is Side.LOWER:
        return [(k, 0.0) for k in range(LEVELS)]
    return [(k, COVERS[0]) for k in range(LEVELS)] + [(min(1, LEVELS - 1), excess) for excess in COVERS[1:]]


def _range(scheme: WithoutReplacement, epsilon: float) -> tuple[float, float]:
    """The grid's bottom, −ε less six standard deviations of the T-step loss sum (within [1/4, 2]),
    rounded down to a quarter so that nearby ε share one run; the tilt about ln(1e5)/ε, at most 2
    (module verifier.pld.adaptive; the tilt only sizes the FFT error bound)."""
    margin = min(2.0, max(0.25, 6.0 * math.sqrt(scheme.steps) * _spread(scheme)))
    return math.floor(-(max(epsilon, 0.0) + margin) * 4) / 4, min(2.0, 11.5 / max(epsilon, 1.0))


@functools.lru_cache(maxsize=8)
def _lower_family(pair: Gaussian, rate: float, step: float) -> tuple[DiscretePLD, ...]:
    """The remove and add orientations' DOMINATED REMOVE-direction PLDs on ``step`` (module docstring)."""
    subsampled = PoissonSubsampled(pair, rate)
    return tuple(
        pld_sides_from_pair(subsampled, direction, step, _TAIL, sides=(Dominance.DOMINATED,))[0]
        for direction in (Direction.REMOVE, Direction.ADD)
    )


@functools.lru_cache(maxsize=8)
def _cover(s: float, excess: float):
    """The checked cover at noise ``s`` (clipping-norm units), or why there is none (a plan that finds
    no cover is a planning failure, not a defect: the method then declines, with the reason)."""
    from verifier.pld.gram_cover import check_cover, gram_cover

    try:
        cover = gram_cover(s, excess=excess)
        check_cover(cover)
    except NumericalFailure as failure:
        return f"no finite cover of the realisable steps was found at sigma/C = {s:g}: {failure}"
    return cover


@functools.lru_cache(maxsize=4)
def upper_family(pair: Gaussian, rate: float, step: float, cells: int = _CELLS, excess: float = COVERS[0]) -> tuple[DiscretePLD, ...]:
    """The members' DOMINATING REMOVE-direction PLDs on ``step`` with ``cells`` per axis of the cover
    planned at ``excess`` (module docstring); the cover is checked (tiling and cell domination)
    before use, at every level."""
    from verifier.pld.gram_step import gram_step_pld

    s = 2.0 * pair.sigma / pair.sensitivity  # σ in units of the clipping norm C = Δ_r/2
    cover = _cover(s, excess)
    if isinstance(cover, str):
        raise NotApplicable(cover)
    out = []
    for done, m in enumerate(cover.members):
        ACTIVITY.set(f"adaptive (upper): member {done + 1}/{len(cover.members)}")
        out.append(gram_step_pld(s, rate, m.a_sq, m.b_sq, m.c, step, cells=cells))
    return tuple(out)


@functools.lru_cache(maxsize=16)
def _recursion(side: Side, pair: Gaussian, rate: float, steps: int, u_low: float, tilt: float, step: float, cells: int, excess: float) -> AdaptiveValue:
    members = upper_family(pair, rate, step, cells, excess) if side is Side.UPPER else _lower_family(pair, rate, step)

    def progress(done: int) -> None:
        if done % 16 == 0 or done == steps:
            ACTIVITY.set(f"adaptive ({side.value}, {len(members)} members, step 2^{math.log2(step):g}): step {done}/{steps}")

    return adaptive_value(members, steps, side, u_low, 0.0, tilt=tilt, symmetric=True, progress=progress)


def recursion_value(scheme: WithoutReplacement, epsilon: float, side: Side, level: int = 0) -> AdaptiveValue:
    """The recursion on ``side`` (module docstring: LOWER over remove/add, UPPER over the cover) at
    refinement ``level``, on a grid that holds u = −ε."""
    u_low, tilt = _range(scheme, epsilon)
    halvings, excess = _levels(side)[level]
    cells = _cells(halvings) if side is Side.UPPER else 0
    return _recursion(side, scheme.pair, scheme.rate, scheme.steps, u_low, tilt, _step(scheme, side, halvings), cells, excess)


def _epsilon_guess(scheme: WithoutReplacement, delta: float) -> float:
    """Where ε(δ) lies, for the grid only (any value keeps the bound rigorous): the PLD method's
    upper end (the symmetrised profile, at or above the adaptive value), or 1 where that says nothing."""
    from verifier.certify.methods.pld import PLDMethod

    bounds = PLDMethod().epsilon_bounds(scheme, delta, Direction.REMOVE)
    found = [b.value for b in bounds if b.side is Side.UPPER and math.isfinite(b.value)]
    return max(1.0, min(found)) if found else 1.0


def _read(run: AdaptiveValue, quantity: Quantity, at: float) -> float:
    return run.delta(at) if quantity is Quantity.DELTA else run.epsilon(at)


def _width(lower: float, upper: float, quantity: Quantity) -> float:
    """The bracket's relative width: (upper − lower)/lower for ε, ln(upper/lower) for δ."""
    if not (math.isfinite(lower) and math.isfinite(upper) and lower > 0):
        return math.inf
    return (upper - lower) / lower if quantity is Quantity.EPSILON else math.log(upper / lower)


def _better(side: Side, a: float, b: float) -> bool:
    """Whether end ``a`` is tighter than ``b`` on ``side`` (smaller UPPER, larger LOWER)."""
    return a < b if side is Side.UPPER else a > b


def refined_value(scheme: WithoutReplacement, quantity: Quantity, at: float, side: Side) -> AdaptiveValue:
    """The ``side`` recursion for a query without a claim (module docstring): the LOWER side refines
    until a level moves its end by less than TARGET_WIDTH/4 (relative); the UPPER side until its end
    lies within TARGET_WIDTH of the refined LOWER side's (the same runs, cached, when the LOWER method
    ran first), a further cover (COVERS) only while it is more than twice that wide. Each at most
    through its levels (:func:`_levels`); the tightest run is returned."""
    epsilon = at if quantity is Quantity.DELTA else _epsilon_guess(scheme, at)
    reference = None if side is Side.LOWER else _read(refined_value(scheme, quantity, at, Side.LOWER), quantity, at)
    best = last = recursion_value(scheme, epsilon, side)
    for level in range(1, len(_levels(side))):
        end = _read(best, quantity, at)
        width = math.inf if reference is None else _width(reference, end, quantity)
        if width <= (TARGET_WIDTH if level < LEVELS else 2 * TARGET_WIDTH):
            break
        finer = recursion_value(scheme, epsilon, side, level)
        moved = _width(*sorted((_read(last, quantity, at), _read(finer, quantity, at))), quantity)
        last = finer
        if _better(side, _read(finer, quantity, at), end):
            best = finer
        if reference is None and moved <= TARGET_WIDTH / 4:
            break
    return best


def _decides(side: Side, delta_end: float, epsilon_end: float, epsilon: float, delta: float) -> bool:
    """Whether a side's ends decide the claim (ε, δ): UPPER δ(ε) <= δ or ε(δ) <= ε (CERTIFIED), LOWER
    δ(ε) > δ or ε(δ) > ε (VIOLATED; Steinke 2022, Prop 7: δ(ε) <= δ ⟺ ε(δ) <= ε)."""
    if side is Side.UPPER:
        return delta_end <= delta or epsilon_end <= epsilon
    return delta_end > delta or epsilon_end > epsilon


def _within_reach(side: Side, ends: list[float], epsilon: float) -> bool:
    """Whether the side's ε(δ) end could still cross ``epsilon`` by refining (planning): within _REACH
    of its one end, else within twice its last change of its latest end (the ends converge about
    geometrically, ratio at most 1/2, as the step halves)."""
    last = ends[-1]
    if not math.isfinite(last):
        return True
    reach = _REACH * abs(last) if len(ends) == 1 else 2.0 * abs(last - ends[-2])
    return epsilon <= last + reach if side is Side.LOWER else epsilon >= last - reach


class AdaptiveBatches(QuantityMethod):
    """LOWER: the recursion over the attained remove/add orientations (module docstring)."""

    name = "adaptive"
    citation = _CITATION
    returns = frozenset({Guarantee.LOWER})
    cost = 3
    scheme_types = (WithoutReplacement,)
    #: Members of the family (for the cost estimate).
    members = 2

    def supports(self, scheme: Scheme) -> bool:
        return isinstance(scheme, WithoutReplacement) and isinstance(scheme.pair, Gaussian)

    @property
    def side(self) -> Side:
        (side,) = self.sides()
        return side

    def estimate_cost(self, scheme: Scheme) -> Cost | None:
        """The first level's recursion: members × T transforms of the grid plus two members' spans
        (the largest loss at 8 standard deviations, log1p(q·expm1(μ(8 + μ/2))))."""
        if not isinstance(scheme, WithoutReplacement) or not isinstance(scheme.pair, Gaussian):
            return None
        step = _step(scheme, self.side, 0)
        mu = scheme.pair.sensitivity / scheme.pair.sigma
        largest = math.log1p(scheme.rate * math.expm1(min(700.0, mu * (8.0 + mu / 2))))
        margin = -_range(scheme, 0.0)[0]
        points = 1 << math.ceil(math.log2((margin + 2.5 * largest + 1.0) / step))
        seconds = self.members * scheme.steps * points * _SECONDS_PER_POINT
        return Cost(seconds=seconds, bytes=8.0 * points * (self.members + 4), what=f"t = {scheme.steps}")

    def _check(self, scheme: Scheme) -> WithoutReplacement:
        if not self.supports(scheme):
            raise NotApplicable("the adaptive recursion is built for fixed-size batches with Gaussian steps (the cover for lambda <= 1/2)")
        assert isinstance(scheme, WithoutReplacement)
        return scheme

    def _bound(self, run: AdaptiveValue, quantity: Quantity, at: float, direction: Direction, note: str = "") -> Bound:
        return Bound(_read(run, quantity, at), self.side, direction, quantity, at, self.name, _CITATION, run.step, note=note)

    def quantity_bounds(self, scheme: Scheme, quantity: Quantity, at: float, direction: Direction) -> Sequence[Bound]:
        """The side's end after :func:`refined_value`."""
        found = self._check(scheme)
        run = refined_value(found, quantity, at, self.side)
        return [self._bound(run, quantity, at, direction, f"grid step 2^{math.log2(run.step):g}")]

    def claim_bounds(self, scheme: Scheme, epsilon: float, delta: float, direction: Direction) -> tuple[Sequence[Bound], Sequence[Bound]]:
        """Bounds on δ(``epsilon``) and ε(``delta``) from this side's recursion at the coarsest level
        that decides the claim; a level is refined only while the side's extrapolated end could
        still cross it (:func:`_within_reach`), through the side's levels (:func:`_levels`); each end
        the tightest over the levels run (every level is rigorous)."""
        found = self._check(scheme)
        ends: list[float] = []
        best: dict[Quantity, AdaptiveValue] = {}
        for level in range(len(_levels(self.side))):
            run = recursion_value(found, epsilon, self.side, level)
            for quantity, at in ((Quantity.DELTA, epsilon), (Quantity.EPSILON, delta)):
                if quantity not in best or _better(self.side, _read(run, quantity, at), _read(best[quantity], quantity, at)):
                    best[quantity] = run
            at_epsilon, at_delta = best[Quantity.DELTA].delta(epsilon), best[Quantity.EPSILON].epsilon(delta)
            ends.append(run.epsilon(delta))
            if _decides(self.side, at_epsilon, at_delta, epsilon, delta) or not _within_reach(self.side, ends, epsilon):
                break
        def bound(quantity: Quantity, at: float) -> list[Bound]:
            run = best[quantity]
            return [self._bound(run, quantity, at, direction, f"grid step 2^{math.log2(run.step):g}, refined for the claim")]

        return bound(Quantity.DELTA, epsilon), bound(Quantity.EPSILON, delta)


class AdaptiveCover(AdaptiveBatches):
    """UPPER: the recursion over a finite cover of every realisable step (module docstring)."""

    name = "adaptive-cover"
    returns = frozenset({Guarantee.UPPER})
    members = 36

    def supports(self, scheme: Scheme) -> bool:
        # gram_step_pld's loss bounds assume λ <= 1/2; at larger λ the symmetrised profile is close.
        return super().supports(scheme) and scheme.rate <= 0.5


METHODS = [AdaptiveBatches(), AdaptiveCover()]
