"""PLD brackets of schemes, dispatched through a registry of builders.

A builder takes (scheme, direction, step, tail_mass) and returns a :class:`PLDBracket`. Single,
Composed, Poisson, WithoutReplacement, PoissonReplaceOne, TruncatedPoisson, WithReplacement and Sequence (heterogeneous composition of the phases' PLDs) are registered here; another module adds a scheme by calling
:func:`register_builder` (e.g. random allocation). :func:`scheme_pld` refines the grid (halving the
step) until a requested accuracy is met or the grid limit is reached.
"""

from __future__ import annotations

import math
from typing import Callable

from verifier._types import Direction, Dominance
from verifier._validation import check_integer, check_open_unit, check_positive, check_real
from verifier.errors import AccuracyNotReachable, InvalidArgument, NotApplicable
from verifier.pairs import Gaussian, Laplace, poisson_replace_one_step
from verifier.pairs.subsampled import PoissonSubsampled
from verifier.pairs.substitution import SubstitutionSubsampled, replace_one_pair
from verifier.pld.bracket import BOTH_SIDES, PLDBracket
from verifier.pld.construction import MAX_GRID, pld_sides_from_pair
from verifier.pld.distribution import DEFAULT_TAIL_MASS, check_step
from verifier.pairs.batch_sampling import truncated_poisson_step, with_replacement_hidden_empty, with_replacement_step
from verifier.schemes import Composed, Poisson, PoissonReplaceOne, Sequence, Single, TruncatedPoisson, WithoutReplacement, WithReplacement

__all__ = ["Builder", "DEFAULT_STEP", "register_builder", "builder_for", "scheme_pld", "pair_bracket"]

#: ``builder(scheme, direction, step, tail_mass, *, target_delta=None, sides=BOTH_SIDES)``;
#: ``target_delta`` is the smallest δ the caller will query (a tightness hint a builder may use to
#: thin out far tails); ``sides`` are the sides the caller will query: a builder may put
#: :func:`~verifier.pld.bracket.trivial_side` in place of the others (a one-sided refinement).
Builder = Callable[..., PLDBracket]

#: Tail coarsening of Poisson PLDs for a known target δ (construction._tail_coarsened): the profile
#: points thin out where a loss tail holds less than τ = COARSEN_SCALE·δ/(steps·step²) (at most
#: COARSEN_MAX_TAIL). With spacing ratio 10 the coarse cells add about 1.7·τ·steps·step² in δ-units
#: of the uniform grid's O(step²) error per step, i.e. a fixed small fraction of the target δ.
#: Calibrated on σ ∈ {0.8, 1, 2}, λ ∈ {0.001, 0.01, 0.05}, 100–10⁴ steps, δ ∈ [1e-10, 1e-5]: the
#: ε bracket stays within a few percent of its full-grid width.
COARSEN_SCALE = 0.1
COARSEN_MAX_TAIL = 1e-2

#: Starting grid step of the accuracy loop (and the step used when no accuracy is asked).
DEFAULT_STEP = 2.0**-12

_BUILDERS: dict[type, Builder] = {}


def register_builder(scheme_type: type, builder: Builder) -> None:
    """Register ``builder(scheme, direction, step, tail_mass) -> PLDBracket`` for ``scheme_type``
    (replacing any earlier one)."""
    if not isinstance(scheme_type, type):
        raise InvalidArgument("scheme_type", scheme_type, "must be a scheme class")
    if not callable(builder):
        raise InvalidArgument("builder", builder, "must be callable")
    _BUILDERS[scheme_type] = builder


def builder_for(scheme: object) -> Builder:
    """The registered builder for the scheme's class; NotApplicable if there is none."""
    try:
        return _BUILDERS[type(scheme)]
    except KeyError:
        raise NotApplicable(f"no PLD builder is registered for {type(scheme).__name__}") from None


def pair_bracket(
    pair,
    direction: Direction,
    step: float,
    tail_mass: float = DEFAULT_TAIL_MASS,
    coarsen_below: float | None = None,
    sides: tuple[Dominance, ...] = BOTH_SIDES,
) -> PLDBracket:
    """The pair's PLD (:func:`verifier.pld.construction.pld_from_pair`) on ``sides``, the others
    trivial (:meth:`PLDBracket.of_sides`)."""
    built = pld_sides_from_pair(pair, direction, step, tail_mass, coarsen_below=coarsen_below, sides=sides)
    return PLDBracket.of_sides(dict(zip(sides, built)), direction, step)


def _single(
    scheme: Single, direction: Direction, step: float, tail_mass: float, *, target_delta: float | None = None,
    sides: tuple[Dominance, ...] = BOTH_SIDES,
) -> PLDBracket:
    """The pair's PLD on the full grid (a single step's far tail is where small δ are decided, so
    ``target_delta`` does not thin it)."""
    return pair_bracket(scheme.pair, direction, step, tail_mass, sides=sides)


def _composed(
    scheme: Composed, direction: Direction, step: float, tail_mass: float, *, target_delta: float | None = None,
    sides: tuple[Dominance, ...] = BOTH_SIDES,
) -> PLDBracket:
    """The inner scheme's PLD self-composed ``times`` times; the inner builder is told target_delta /
    times (tail coarsening scales with target δ / number of steps)."""
    hint = None if target_delta is None else target_delta / scheme.times
    inner = builder_for(scheme.scheme)(scheme.scheme, direction, step, tail_mass, target_delta=hint, sides=sides)
    return inner.self_compose(scheme.times, tail_mass=tail_mass)


def _poisson_replace_one(
    scheme: PoissonReplaceOne, direction: Direction, step: float, tail_mass: float, *, target_delta: float | None = None,
    sides: tuple[Dominance, ...] = BOTH_SIDES,
) -> PLDBracket:
    """Poisson sampling under replace-one, (P, Q) the add/remove pair of one record (shift C).

    Gaussian step: the antipodal pair A = (λN(C) + (1 − λ)N(0), λN(−C) + (1 − λ)N(0))
    (:class:`~verifier.pairs.AntipodalMixture`, the pair dp_accounting's PLD accountant uses for
    REPLACE_ONE) on BOTH sides, composed ``steps`` times. It is attained (every other record at 0,
    the target's record +C on one dataset and −C on the other): LOWER. It dominates every step of
    every run: given the history and the other sampled records' sum, a step is
    ((1 − λ)N(0) + λN(x), (1 − λ)N(0) + λN(x')) up to translation, ‖x‖, ‖x'‖ <= C, whose hockey
    stick is nonincreasing in ⟨x, x'⟩ and largest at x' = −x with ‖x‖ = C
    (proofs/antipodal_dominance.py: Plackett's identity, as in Slepian's lemma — the integrand
    (a(⟨x,y⟩) − κ·a(⟨x',y⟩))_+ is submodular; a contraction for shorter records). Blackwell
    dominance survives adaptive composition (Zhu, Dong & Wang 2022, Def 7 and Thm 10) and A is
    symmetric, so records chosen adaptively gain nothing: UPPER, both directions.

    Laplace step (no such ordering is proven): DOMINATING :class:`SubstitutionSubsampled` of the
    replace-one pair (shift 2C) with ``absent`` = (P, Q), Balle et al. 2018 Thm 2's convex
    combination λ[β·H(A‖A') + (1 − β)·H(A‖R)] for ε >= 0 and its dual for ε < 0, symmetric (an
    adversary may switch orientation between steps): UPPER; DOMINATED the attained antipodal pair
    (:class:`~verifier.pairs.LaplaceAntipodal`, records +C and −C, symmetric): LOWER.
    """
    coarsen = _coarsening(scheme.steps, step, tail_mass, target_delta)
    attained, dominates = poisson_replace_one_step(scheme.pair, scheme.rate)
    if dominates:
        return pair_bracket(attained, direction, step, tail_mass, coarsen, sides).self_compose(scheme.steps, tail_mass=tail_mass)
    doubled = replace_one_pair(scheme.pair)  # NotApplicable for non-additive steps
    of_side = {Dominance.DOMINATING: SubstitutionSubsampled(doubled, scheme.rate, absent=scheme.pair), Dominance.DOMINATED: attained}
    return _per_side(of_side, scheme.steps, direction, step, tail_mass, coarsen, sides)


def _per_side(
    of_side: dict, steps: int, direction: Direction, step: float, tail_mass: float, coarsen: float | None, sides: tuple[Dominance, ...]
) -> PLDBracket:
    """Each of ``sides`` from its own pair (``of_side[dominance]``), the others trivial, composed
    ``steps`` times."""
    built = {d: pld_sides_from_pair(of_side[d], direction, step, tail_mass, sides=(d,), coarsen_below=coarsen)[0] for d in sides}
    return PLDBracket.of_sides(built, direction, step).self_compose(steps, tail_mass=tail_mass)


def _coarsening(steps: int, step: float, tail_mass: float, target_delta: float | None) -> float | None:
    """The tail-coarsening threshold of a ``steps``-fold subsampled composition (COARSEN_SCALE)."""
    if target_delta is None:
        return None
    tail = COARSEN_SCALE * target_delta / (steps * step * step)
    return min(tail, COARSEN_MAX_TAIL) if tail > tail_mass else None


def _poisson(
    scheme: Poisson, direction: Direction, step: float, tail_mass: float, *, target_delta: float | None = None,
    sides: tuple[Dominance, ...] = BOTH_SIDES,
) -> PLDBracket:
    """PLD of the Poisson-subsampled pair (λP + (1 − λ)Q, Q) in ``direction`` (Steinke 2022, §6.2
    mixture representation), self-composed ``steps`` times; with ``target_delta`` the far tails of
    the one-step profile are evaluated sparsely (see COARSEN_SCALE)."""
    coarsen = _coarsening(scheme.steps, step, tail_mass, target_delta)
    one = pair_bracket(PoissonSubsampled(scheme.pair, scheme.rate), direction, step, tail_mass, coarsen, sides)
    return one.self_compose(scheme.steps, tail_mass=tail_mass)


def _sequence(
    scheme: Sequence, direction: Direction, step: float, tail_mass: float, *, target_delta: float | None = None,
    sides: tuple[Dominance, ...] = BOTH_SIDES,
) -> PLDBracket:
    """Heterogeneous composition (Steinke 2022, Thm 9): each phase's bracket from its own registered
    builder on the common grid ``step``, then composed side by side (DOMINATING with DOMINATING,
    DOMINATED with DOMINATED), so the result bounds δ(ε) of the run from above and below.
    Each phase is told target_delta / (number of phases): the thinning error of the phases adds up."""
    hint = None if target_delta is None else target_delta / len(scheme.phases)
    brackets = [builder_for(phase)(phase, direction, step, tail_mass, target_delta=hint, sides=sides) for phase in scheme.phases]
    out = brackets[0]
    for bracket in brackets[1:]:
        out = out.compose(bracket, tail_mass=tail_mass)
    return out


def _without_replacement(
    scheme: WithoutReplacement, direction: Direction, step: float, tail_mass: float, *, target_delta: float | None = None,
    sides: tuple[Dominance, ...] = BOTH_SIDES,
) -> PLDBracket:
    """Fixed-size batches under replace-one neighbours, λ = B/n, (P, Q) the step's replace-one pair.

    DOMINATING side: :class:`SubstitutionSubsampled` (profile max(δ₁, δ₂) of the two orientations
    of the mixture pair; Balle, Barthe & Gaboardi 2018, Thm 2 and Thm 10; Dong, Roth & Su 2022,
    Thm 4.2), the same in both directions, composed ``steps`` times: an UPPER bound whatever
    orientation an adaptive adversary picks at each step.

    DOMINATED side: the mixture pair in one fixed orientation, composed ``steps`` times: REMOVE
    H(M^T‖Q^T) and ADD H(Q^T‖M^T) with M = λP + (1 − λ)Q. These are attained by an actual pair of
    neighbours for an additive-noise step P = N(Δ_r, ·), Q = N(0, ·) (Δ_r = 2C the replace-one
    shift): every other element contributes v and the target v on one dataset and v − Δ_r on the
    other (‖v‖, ‖v − Δ_r‖ <= C with v = Δ_r/2). On the first dataset every batch sums to Bv
    whatever is drawn; on the second the sum moves by −Δ_r exactly when the target is drawn
    (probability λ, independently each step), so the two output laws are exactly Q and M per
    step, hence Q^T and M^T: a LOWER bound, rigorous for Gaussian and Laplace steps.
    """
    if not isinstance(scheme.pair, (Gaussian, Laplace)):
        raise NotApplicable(
            f"fixed-size batches: the LOWER construction is proven for additive-noise steps (Gaussian, Laplace), not {type(scheme.pair).__name__}"
        )
    coarsen = _coarsening(scheme.steps, step, tail_mass, target_delta)
    of_side = {
        Dominance.DOMINATING: SubstitutionSubsampled(scheme.pair, scheme.rate),
        Dominance.DOMINATED: PoissonSubsampled(scheme.pair, scheme.rate),
    }
    return _per_side(of_side, scheme.steps, direction, step, tail_mass, coarsen, sides)


def _truncated_poisson(
    scheme: TruncatedPoisson, direction: Direction, step: float, tail_mass: float, *, target_delta: float | None = None,
    sides: tuple[Dominance, ...] = BOTH_SIDES,
) -> PLDBracket:
    """Truncated Poisson sampling: DOMINATING the two-label mixture that reveals the other records'
    coins below the cap and, above it, only the kept batch and the member the record would replace
    (UPPER), DOMINATED the attained pair with every other record 0 (LOWER), each
    composed ``steps`` times (:func:`verifier.pairs.batch_sampling.truncated_poisson_step`;
    proofs/batch_sampling.py). Blackwell dominance of every step survives adaptive composition (Zhu,
    Dong & Wang 2022, Thm 10); the attained pair is the same instance at every step."""
    pair = scheme.pair
    upper, attained = truncated_poisson_step(pair.sigma, pair.sensitivity, scheme.dataset_size, scheme.rate, scheme.max_batch, scheme.replace_one)
    of_side = {Dominance.DOMINATING: upper, Dominance.DOMINATED: attained}
    return _per_side(of_side, scheme.steps, direction, step, tail_mass, _coarsening(scheme.steps, step, tail_mass, target_delta), sides)


def _with_replacement(
    scheme: WithReplacement, direction: Direction, step: float, tail_mass: float, *, target_delta: float | None = None,
    sides: tuple[Dominance, ...] = BOTH_SIDES,
) -> PLDBracket:
    """Sampling with replacement under replace-one: DOMINATING the pair that hides K = 0 from K >= 1
    and the multiplicity K >= 1 where it is compared with K = 0 (UPPER; symmetric, so it lies above every step an
    adaptive adversary picks, in either orientation: Zhu, Dong & Wang 2022, Thm 10), DOMINATED the
    attained Gaussian mixture (Σ_k P(K = k) N(kΔ), N(0)) (the record +Δ/2 against −Δ/2, every other
    record −Δ/2; LOWER) in the REMOVE orientation for both directions (replace-one is symmetric: the
    swapped datasets are neighbours too), each composed ``steps`` times
    (:func:`verifier.pairs.batch_sampling.with_replacement_hidden_empty` and
    :func:`~verifier.pairs.batch_sampling.with_replacement_step`; proofs/batch_sampling.py)."""
    pair = scheme.pair
    args = (pair.sigma, pair.sensitivity, scheme.dataset_size, scheme.sample_size)
    _, (attained, _) = with_replacement_step(*args)
    # the swapped pair of datasets are neighbours too: the REMOVE orientation bounds both directions
    of_side = {Dominance.DOMINATING: with_replacement_hidden_empty(*args), Dominance.DOMINATED: attained.oriented(direction)}
    return _per_side(of_side, scheme.steps, direction, step, tail_mass, _coarsening(scheme.steps, step, tail_mass, target_delta), sides)


register_builder(Single, _single)
register_builder(Composed, _composed)
register_builder(Poisson, _poisson)
register_builder(Sequence, _sequence)
register_builder(WithoutReplacement, _without_replacement)
register_builder(PoissonReplaceOne, _poisson_replace_one)
register_builder(TruncatedPoisson, _truncated_poisson)
register_builder(WithReplacement, _with_replacement)


def scheme_pld(
    scheme,
    direction: Direction,
    *,
    eps_accuracy: float | None = None,
    delta_accuracy: float | None = None,
    delta: float | None = None,
    epsilon: float | None = None,
    step: float | None = None,
    tail_mass: float = DEFAULT_TAIL_MASS,
    max_grid: int = MAX_GRID,
    target_delta: float | None = None,
    sides: tuple[Dominance, ...] = BOTH_SIDES,
) -> PLDBracket:
    """PLD bracket of ``scheme`` in ``direction`` (``sides``: the sides to build, the others trivial;
    see :data:`Builder`).

    ``target_delta`` (the smallest δ the caller will query; ``delta`` when ``eps_accuracy`` is asked)
    lets a builder spend fewer profile points where they cannot matter at that δ; the bracket is
    rigorous for every query either way. Without an accuracy request the grid step is ``step``
    (default :data:`DEFAULT_STEP`). With
    ``eps_accuracy`` (absolute width of the ε bracket at ``delta``) or ``delta_accuracy`` (absolute
    width of the δ bracket at ``epsilon``), the step is halved from ``step`` until the bracket is that
    narrow; AccuracyNotReachable says why when the grid would exceed ``max_grid`` points.
    """
    if not isinstance(direction, Direction):
        raise InvalidArgument("direction", direction, "must be Direction.ADD or Direction.REMOVE")
    build = builder_for(scheme)
    h = check_step(DEFAULT_STEP if step is None else step)
    limit = check_integer("max_grid", max_grid, minimum=2)
    hint = None if target_delta is None else check_open_unit("target_delta", target_delta)
    if eps_accuracy is None and delta_accuracy is None:
        return build(scheme, direction, h, tail_mass, target_delta=hint, sides=sides)
    if eps_accuracy is not None:
        target, width_of = check_positive("eps_accuracy", eps_accuracy), None
        at = check_open_unit("delta", delta) if delta is not None else None
        if at is None:
            raise InvalidArgument("delta", delta, "eps_accuracy needs the δ at which ε is measured")
        width_of = lambda b: float(b.epsilon(at).width)  # noqa: E731
        hint = at if hint is None else min(hint, at)
    else:
        target = check_positive("delta_accuracy", delta_accuracy)
        if epsilon is None:
            raise InvalidArgument("epsilon", epsilon, "delta_accuracy needs the ε at which δ is measured")
        at = check_real("epsilon", epsilon)
        width_of = lambda b: float(b.delta(at).width)  # noqa: E731
    while True:
        bracket = build(scheme, direction, h, tail_mass, target_delta=hint, sides=sides)
        width = width_of(bracket)
        if width <= target or (math.isnan(width) is False and width == 0.0):
            return bracket
        if 2 * bracket.grid_size() > limit:
            raise AccuracyNotReachable(
                f"bracket width {width:.3g} > requested {target:.3g} at step {h}; halving the step needs "
                f"~{2 * bracket.grid_size()} grid points, above max_grid={limit}"
            )
        h /= 2.0
