"""The PLD engine as a certification method: rigorous UPPER (DOMINATING PLD) and LOWER (DOMINATED
PLD) bounds on δ(ε) and ε(δ) for Single, Composed, Poisson and fixed-size-batch schemes, and Sequences of phases with
registered PLD builders (any scheme another module registers one for, e.g. random allocation, can
be a phase)."""

from __future__ import annotations

import functools
import math
from dataclasses import replace
from typing import Callable, Sequence

from verifier._types import Bound, Bracket, Direction, Dominance, Quantity, Side
from verifier.certify.method import Guarantee, Method
from verifier.errors import AccuracyNotReachable, NotApplicable, NumericalFailure
from verifier.pairs import Gaussian, Laplace
from verifier.pld import PLDBracket, builder_for
from verifier.pld.bracket import BOTH_SIDES
from verifier.pld.schemes import scheme_pld
from verifier.pld.tradeoff import tpr_bracket
from verifier.schemes import Sequence as SchemeSequence
from verifier.schemes import Composed, Poisson, PoissonReplaceOne, Scheme, Single, TruncatedPoisson, WithoutReplacement, WithReplacement

__all__ = [
    "PLDMethod",
    "MAX_COMPOSITIONS",
    "METHODS",
    "REL_ACCURACY",
    "START_STEP",
    "MAX_GRID_POINTS",
    "DELTA_ABS_ACCURACY",
    "EPSILON_ABS_ACCURACY",
    "STALL_RATIO",
    "MAX_JUMP",
    "NARROW_SHARE",
    "TPR_NOTE",
    "MAX_CLAIM_REFINEMENTS",
    "CLAIM_MAX_JUMP",
    "CLAIM_REL_ACCURACY",
    "STALL_SHARE",
]

#: Relative width of the ε (δ) bracket the adapter refines the grid toward; the returned bounds
#: are rigorous whatever the width (a wider bracket is only less informative).
REL_ACCURACY = 1e-3

#: First grid step of the refinement (halved until REL_ACCURACY or the grid limit is reached).
START_STEP = 2.0**-7

#: Grid limit of the refinement (points on the widest PLD).
MAX_GRID_POINTS = 1 << 21

#: Absolute widths below which a bracket counts as converged whatever its relative width: a δ known
#: to 1e-15 (e.g. a true δ of 0, where the relative width never shrinks) or an ε known to 1e-9.
DELTA_ABS_ACCURACY = 1e-15
EPSILON_ABS_ACCURACY = 1e-9

#: Most halvings of the grid step taken at once when the coarse bracket predicts the step that meets
#: REL_ACCURACY (:func:`_halvings`).
MAX_JUMP = 4

#: A side whose estimated distance to the true value (:func:`_side_gaps`) is at most this share of
#: the target width counts as narrow: only the other side is refined from then on.
NARROW_SHARE = 0.25

#: Most refinements after the first grid when deciding a claim (:meth:`PLDMethod._decisive`), and
#: most halvings of one refinement there: the crossing estimate rests on two grids and often falls
#: short of the distance still to go, and a build costs twice the one a halving coarser, so going
#: too far costs more than one refinement too many.
MAX_CLAIM_REFINEMENTS = 12
CLAIM_MAX_JUMP = 2

#: Relative width below which the bracket steering a claim's refinement is not refined further: a
#: claim within 0.001% of the truth is left INCONCLUSIVE by this method rather than refined toward
#: the grid limit (each factor 10 narrower costs about 3× the points: the width is second order).
CLAIM_REL_ACCURACY = 1e-5

#: Deciding a claim where the sides' extrapolations do not single one out, a side that moved more
#: than this share of its distance to the claim in its last refinement is halved once more; where
#: none did, refinement stops (:func:`_claim_refinement`).
STALL_SHARE = 0.25

#: Refinement stops when halving the step shrinks the bracket by less than this factor: the width
#: is then set by something the grid step does not control (truncated tails), and finer grids only
#: cost time (quadratically more points for a stalled bound).
STALL_RATIO = 0.75

_NOTE = (
    "self-composition by one long-double FFT power (Chernoff window, round-off by Higham Thm 24.2 / "
    "Lemma 3.5, per bin by a componentwise radix-2 bound), other compositions exact on a 64-bit fixed-point split; the FFTs are verifier's own "
    "radix-2 kernels with proven twiddle error, bounded by Higham Thm 24.2"
)


#: How a TPR bound is obtained from the PLD bracket (quoted in every TPR bound's note).
TPR_NOTE = (
    "TPR(α) = inf over real ε of δ(ε) + e^ε·α (Dong, Roth & Su 2022, Prop 2.12; proofs/tradeoff_conversion.py): "
    "upper from the dominating PLD at any ε, lower as the dominated PLD's exact infimum over its grid losses"
)


#: The PLD power's round-off bound holds below this many compositions (:func:`verifier.pld.power._pow_up`).
MAX_COMPOSITIONS = 2**32


def _compositions(scheme: Scheme) -> int:
    """The largest count one PLD power composes for ``scheme``: its ``steps``; for a composition the
    larger of its ``times`` and what it composes (each is powered on its own), for a sequence its
    largest phase's."""
    if isinstance(scheme, SchemeSequence):
        return max((_compositions(phase) for phase in scheme.phases), default=1)
    if isinstance(scheme, Composed):
        return max(scheme.times, _compositions(scheme.scheme))
    return int(getattr(scheme, "steps", 1))


class PLDMethod(Method):
    name = "pld"
    citation = (
        "PLD composition (Steinke 2022, Thm 9; Prop 7) with connect-the-dots dominating PLDs "
        "(Doroshenko et al. 2022) and gap-corrected dominated PLDs; Poisson subsampling by Balle et al. "
        "2018, Thm 2 (Feldman & Shenfeld, Claim D.3); fixed-size batches under replace-one by Balle et al. 2018, "
        "Thm 10 and Dong, Roth & Su 2022, Thm 4.2 (upper), one attained orientation (lower); Poisson sampling under "
        "replace-one with Gaussian noise by the antipodal pair, attained and dominating (Plackett's identity, "
        "proofs/antipodal_dominance.py); truncated Poisson and with-replacement batches by a labelled mixture that reveals the "
        "sampler's data-independent label (upper) and an attained pair of neighbours (lower), proofs/batch_sampling.py"
    )
    returns = frozenset({Guarantee.UPPER, Guarantee.LOWER})
    cost = 2
    scheme_types = (Single, Composed, Poisson, SchemeSequence, WithoutReplacement, PoissonReplaceOne, TruncatedPoisson, WithReplacement)

    def supports(self, scheme: Scheme) -> bool:
        """One of :attr:`scheme_types` with a registered PLD builder (for Composed, also what it
        composes), except one step of truncated-Poisson or with-replacement batches, which batch-step
        answers from the same pairs' closed forms. Schemes whose builders other modules register (random allocation) are answered by
        those modules' own methods, which declare them; as phases of a Sequence they are composed
        here (every phase needs a registered builder)."""
        if type(scheme) not in self.scheme_types:
            return False
        if isinstance(scheme, (TruncatedPoisson, WithReplacement)) and scheme.steps == 1:
            return False  # batch-step evaluates the same two pairs' closed forms; their grid can only be coarser
        if isinstance(scheme, SchemeSequence):
            return all(_buildable(phase) for phase in scheme.phases)
        return _buildable(scheme) and (self.supports(scheme.scheme) if isinstance(scheme, Composed) else True)

    def declines(self, scheme: Scheme, seconds_left: float | None) -> str | None:
        """Declines at once, in the scheme's own terms, a run of 2**32 steps or more: the round-off
        bound of the composed PLD's power (:func:`verifier.pld.power._pow_up`) holds below that, and
        finding out after building the grids cost minutes at 10**12 steps (issue 41)."""
        count = _compositions(scheme)
        if count >= MAX_COMPOSITIONS:
            return f"skipped: composes at most {MAX_COMPOSITIONS - 1} steps (2**32 - 1; the power's round-off bound), the scheme has {count}"
        return super().declines(scheme, seconds_left)

    def delta_bounds(self, scheme: Scheme, epsilon: float, direction: Direction) -> Sequence[Bound]:
        """δ(ε) bounds; after the first grid, finer ones thin far tails for the certified lower end of
        δ(ε) (a δ the answer is known to exceed, so the hint never asks for too little resolution)."""
        bracket = self._delta_bracket(scheme, epsilon, direction)
        return self._bounds(bracket.delta(epsilon), Quantity.DELTA, epsilon, direction, bracket)

    def delta_curve(self, scheme: Scheme, epsilons: Sequence[float], direction: Direction, focus: float) -> list[Sequence[Bound]]:
        """δ(ε) bounds at every ε of a grid from the one PLD bracket that :meth:`delta_bounds` refines
        for ``focus`` (cached, so free after a ``verifier bounds`` run at that ε; a certification refines
        only as far as its claim needed, :meth:`claim_bounds`, so a report after it builds this bracket
        anew). Rigorous at every ε; where δ(ε) is far below δ(focus) the thinned tails make the upper
        end a plateau."""
        bracket = self._delta_bracket(scheme, focus, direction)
        return [self._bounds(bracket.delta(float(e)), Quantity.DELTA, float(e), direction, bracket) for e in epsilons]

    def _delta_bracket(self, scheme: Scheme, epsilon: float, direction: Direction) -> PLDBracket:
        """The refined PLD bracket for δ at ``epsilon`` (see :meth:`delta_bounds`)."""

        def hint(bracket: PLDBracket) -> float | None:
            lower = float(bracket.delta(epsilon).lower)
            return lower if 0.0 < lower < 1.0 else None

        return self._refined(scheme, direction, lambda b: b.delta(epsilon), DELTA_ABS_ACCURACY, hint=hint)

    def claim_bounds(
        self, scheme: Scheme, epsilon: float, delta: float, direction: Direction
    ) -> tuple[Sequence[Bound], Sequence[Bound]]:
        """Bounds on δ(``epsilon``) and ε(``delta``) from one bracket refined only until either
        decides the claim (:meth:`_decisive`): a claim far from the truth costs one coarse grid, one
        close to it the grid its margin needs."""
        bracket = self._decisive(scheme, direction, epsilon, delta)
        return (
            self._bounds(bracket.delta(epsilon), Quantity.DELTA, epsilon, direction, bracket),
            self._bounds(bracket.epsilon(delta), Quantity.EPSILON, delta, direction, bracket),
        )

    def _decisive(self, scheme: Scheme, direction: Direction, epsilon: float, delta: float) -> PLDBracket:
        """A bracket whose δ(``epsilon``) or ε(``delta``) bracket decides the claim (``epsilon``,
        ``delta``), or the finest one refinement reached. It starts at :func:`_start_step` (tails
        thinned for ``delta``) and refines toward the claim (:func:`_claim_refinement`): both sides
        until each has been built on two grids, then the side whose own extrapolation can still
        cross the claim — the DOMINATING side's upper end coming down past it (CERTIFIED) or the
        DOMINATED side's lower end coming up past it (VIOLATED) — by the halvings that crossing
        needs. It stops at MAX_GRID_POINTS, after MAX_CLAIM_REFINEMENTS, once the steering bracket is
        CLAIM_REL_ACCURACY narrow, or when neither side can cross (the claim sits within what the grid
        resolves, or a truncated tail holds a side).
        Every grid's bounds are rigorous: stopping early only leaves the claim INCONCLUSIVE."""

        def query(b: PLDBracket) -> tuple[Bracket, float]:
            # ε(δ) steers where both its ends are finite (well scaled near the largest loss, where
            # δ(ε) is tiny and its dominated end can sit at 0); δ(ε) otherwise
            e = b.epsilon(delta)
            return (e, epsilon) if math.isfinite(float(e.lower)) and math.isfinite(float(e.upper)) else (b.delta(epsilon), delta)

        def decided(b: PLDBracket) -> bool:
            d, e = b.delta(epsilon), b.epsilon(delta)
            return bool(d.upper <= delta or d.lower > delta or e.upper <= epsilon or e.lower > epsilon)

        step = _start_step(scheme)
        best = _cached(scheme, direction, step, delta, BOTH_SIDES)
        steps = {d: step for d in BOTH_SIDES}
        history: dict[Dominance, list[tuple[float, float]]] = {d: [] for d in BOTH_SIDES}
        got, claim = query(best)
        _record(history, steps, got)
        for _ in range(MAX_CLAIM_REFINEMENTS):
            if decided(best) or 2 * best.grid_size() > MAX_GRID_POINTS or _resolved(got):
                break
            sides, jump = _claim_refinement(got, claim, history)
            if not sides:
                break
            finer = _refine_sides(scheme, direction, best, steps, sides, jump, delta)
            if finer is None:
                break
            best = finer
            got, now = query(best)
            if now != claim:  # the steering quantity changed (the ε ends became finite): start its history again
                history, claim = {d: [] for d in BOTH_SIDES}, now
                _record(history, steps, got)
            else:
                _record(history, steps, got, sides)
        return best

    def epsilon_bounds(self, scheme: Scheme, delta: float, direction: Direction) -> Sequence[Bound]:
        """ε(δ) bounds; δ is known here, so the builders may thin far tails for it (target_delta)."""
        return self.epsilon_bounds_beside(scheme, delta, direction, ())

    def epsilon_bounds_beside(
        self, scheme: Scheme, delta: float, direction: Direction, beside: tuple[Direction, ...]
    ) -> Sequence[Bound]:
        """:meth:`epsilon_bounds`, refined only while ``direction`` can decide the maximum over it and
        ``beside``: refinement stops once the upper end of ε(δ) is at or below the largest lower end
        of a direction beside it on that direction's first grid (:func:`_first_lower`; built anyway
        when that direction is asked, and cached). Both ends stay rigorous; the maximum's bracket is
        the other direction's, as narrow as that direction is refined. E.g. Poisson σ = 0.6,
        λ = 1e-3, T = 10⁵, δ = 1e-6: ADD's upper end 5.4 on its first grid lies below REMOVE's lower
        end 6.9 on its first grid, so ADD is not refined (it took half the run's CPU)."""
        floor = max((_first_lower(scheme, d, delta) for d in beside), default=-math.inf)
        query = _memoized(lambda b: b.epsilon(delta))
        bracket = self._refined(scheme, direction, query, EPSILON_ABS_ACCURACY, delta, floor=floor)
        got = query(bracket)
        bounds = self._bounds(got, Quantity.EPSILON, delta, direction, bracket)
        if float(got.upper) <= floor and not _converged(got, EPSILON_ABS_ACCURACY):
            why = f"; not refined further: the upper end lies below {floor:.6g}, a lower end of ε(δ) in a direction beside this one, which decides the maximum"
            bounds = [replace(b, note=b.note + why) for b in bounds]
        return bounds

    def tpr_bounds(self, scheme: Scheme, fpr: float, direction: Direction) -> Sequence[Bound]:
        """TPR at FPR ``fpr`` from the PLD bracket refined for it: the DOMINATING PLD's conjugate
        gives the UPPER end, the DOMINATED PLD's exact infimum over its grid losses the LOWER end
        (verifier.pld.tradeoff; proofs/tradeoff_conversion.py, Lemmas 1–3)."""
        return self.tpr_curve(scheme, [fpr], direction, fpr)[0]

    def tpr_curve(self, scheme: Scheme, fprs: Sequence[float], direction: Direction, focus: float) -> list[Sequence[Bound]]:
        """TPR bounds at every FPR of a grid from the one PLD bracket refined for TPR at ``focus``
        (rigorous at every FPR; tightest at ``focus``)."""
        bracket = self._refined(scheme, direction, lambda b: tpr_bracket(b, focus), DELTA_ABS_ACCURACY)
        got = tpr_bracket(bracket, [float(f) for f in fprs])
        return [
            [replace(b, note=f"{TPR_NOTE}; {b.note}") for b in self._bounds(got[i], Quantity.TPR, float(fpr), direction, bracket)]
            for i, fpr in enumerate(fprs)
        ]

    def _refined(
        self,
        scheme: Scheme,
        direction: Direction,
        query,
        abs_accuracy: float,
        target_delta: float | None = None,
        hint: Callable[[PLDBracket], float | None] | None = None,
        floor: float = -math.inf,
    ) -> PLDBracket:
        """A grid (from START_STEP, refined) whose bracket of ``query`` is narrower than REL_ACCURACY
        (relative) or ``abs_accuracy`` (absolute). Each refinement jumps to the step the current
        bracket predicts (:func:`_halvings`: the width is second order in the step) instead of
        halving through every intermediate grid; refinement also stops at MAX_GRID_POINTS and when
        a refinement of j halvings shrinks the width by less than STALL_RATIO^j. Every grid's
        bounds are rigorous, so stopping early only costs tightness. ``target_delta`` (or, when it is
        None, ``hint`` of the previous grid's bracket) is passed to the builders (scheme_pld). Refinement
        also stops once the upper end of ``query`` is at or below ``floor`` (see :meth:`epsilon_bounds_beside`)."""
        query = _memoized(query)
        step = _start_step(scheme)
        best = _cached(scheme, direction, step, target_delta, BOTH_SIDES)
        steps = {d: step for d in BOTH_SIDES}
        history: dict[Dominance, list[tuple[float, float]]] = {d: [] for d in BOTH_SIDES}

        def done(b: PLDBracket) -> bool:
            got = query(b)
            return _converged(got, abs_accuracy) or float(got.upper) <= floor

        if done(best):
            return best
        if step >= START_STEP:
            # a probe on the twice coarser grid (half the points) gives each side's convergence before
            # the first, most costly, jump (:func:`_next_refinement`). Not where the start step was
            # lowered to the subsampling scale (:func:`_start_step`): a coarser grid gives only the
            # trivial dominated PLD there, so the probe would only say that side is wide (measured on
            # the issue-17 Poisson rows: 5–8% more CPU, the same grids after it)
            probe = _cached(scheme, direction, 2.0 * step, target_delta, BOTH_SIDES)
            _record(history, {d: 2.0 * step for d in BOTH_SIDES}, query(probe))
        _record(history, steps, query(best))
        width = _width(query(best))
        while not done(best) and 2 * best.grid_size() <= MAX_GRID_POINTS:
            if hint is not None and target_delta is None:
                target_delta = hint(best)
            sides, jump = _next_refinement(query(best), history, abs_accuracy)
            jump = min(jump, _room(best))
            finer = _refine_sides(scheme, direction, best, steps, sides, jump, target_delta)
            if finer is None:
                break
            best = finer
            _record(history, steps, query(best), sides)
            finer_width = _width(query(best))
            stalled, width = finer_width > STALL_RATIO**jump * width, finer_width
            if stalled:
                break
        return best

    def _bounds(self, got: Bracket, quantity: Quantity, at: float, direction: Direction, bracket: PLDBracket) -> list[Bound]:
        budget = max(bracket.dominating.error_budget, bracket.dominated.error_budget)
        routes = "".join(f"; {route}" for route in bracket.routes)
        upper, lower = bracket.dominating, bracket.dominated
        grid = (
            f"grid step {bracket.step:g}, {bracket.grid_size()} points"
            if upper.step == lower.step
            else f"dominating side at grid step {upper.step:g} ({upper.probs.size} points), dominated side at grid step "
            f"{lower.step:g} ({lower.probs.size} points): only the wide side refined"
        )
        note = f"{_NOTE}; {grid}{routes}"
        return [
            Bound(float(got.lower), Side.LOWER, direction, quantity, at, self.name, self.citation, budget, True, note),
            Bound(float(got.upper), Side.UPPER, direction, quantity, at, self.name, self.citation, budget, True, note),
        ]


def _buildable(scheme: Scheme) -> bool:
    """Whether the scheme (and what a Composed composes) has a registered PLD builder."""
    try:
        builder_for(scheme)
    except NotApplicable:
        return False
    return _buildable(scheme.scheme) if isinstance(scheme, Composed) else True


def _start_step(scheme: Scheme) -> float:
    """START_STEP, or for subsampling at rate λ (Poisson, fixed-size batches) the largest power of
    two <= λ/2 if smaller:
    the subsampled profile bends on the scale λ next to κ = 1 − λ, and coarser grids give only the
    trivial dominated PLD there (so halving would look stalled while the lower end sits at 0). A
    Sequence starts at the finest of its phases' steps (they share one grid)."""
    if isinstance(scheme, Composed):
        return _start_step(scheme.scheme)
    if isinstance(scheme, SchemeSequence):
        return min(_start_step(phase) for phase in scheme.phases)
    if isinstance(scheme, Poisson):
        return min(START_STEP, 2.0 ** math.floor(math.log2(scheme.rate / 2.0)))
    if isinstance(scheme, (WithoutReplacement, PoissonReplaceOne, TruncatedPoisson, WithReplacement)):
        # replace-one subsampling of additive noise: the losses also shrink with Δ/σ (σ = 16·Δ puts
        # a step's losses ~16 times below λ), and coarser grids leave the dominated side trivial
        scale = min(1.0, _shift(scheme.pair))
        return min(START_STEP, 2.0 ** math.floor(math.log2(scheme.rate * scale / 2.0)))
    return START_STEP


def _shift(pair) -> float:
    """Δ/σ (Gaussian) or Δ/b (Laplace): the scale of one step's privacy loss; 1 for other pairs."""
    if isinstance(pair, Gaussian):
        return pair.sensitivity / pair.sigma
    if isinstance(pair, Laplace):
        return pair.sensitivity / pair.scale
    return 1.0


def _width(b: Bracket) -> float:
    return float(b.upper) - float(b.lower)


def _halvings(b: Bracket) -> int:
    """Halvings of the grid step expected to bring ``b`` to REL_ACCURACY: the width is second order in
    the step (measured 3.5–6× narrower per halving on Poisson PLDs, issue 17), so ⌈log4(w/target)⌉
    for the relative width w, at most MAX_JUMP; 1 when the bracket says nothing yet (w >= 1/2, or not
    finite). Jumping straight to the predicted grid skips the intermediate ones (about as costly, in
    all, as the final grid); an under-prediction only costs one more halving."""
    upper, width = float(b.upper), _width(b)
    if not (math.isfinite(upper) and math.isfinite(width)) or upper == 0.0 or width >= 0.5 * abs(upper):
        return 1
    ratio = width / (REL_ACCURACY * abs(upper))
    return max(1, min(MAX_JUMP, math.ceil(math.log(ratio, 4.0)))) if ratio > 1.0 else 1


def _record(history: dict, steps: dict, got: Bracket, sides: tuple[Dominance, ...] = BOTH_SIDES) -> None:
    """Append (grid step, value) of each refined side's end of ``got`` to its history."""
    for d in sides:
        history[d].append((steps[d], _end(got, d)))


def _side_gaps(history: dict) -> tuple[float, float] | None:
    """Estimated distances (upper end − true value, true value − lower end) once both sides have been
    built on two grids: each side's own last two values extrapolated to step 0 by the second-order
    model the refinement uses (Richardson: v ≈ x_f + (x_f − x_c)/(r² − 1), r = h_c/h_f), so the gap
    is |x_c − x_f|/(r² − 1) — a side's estimate does not depend on the other side (a dominated side
    that was trivial on the coarser grid moves a lot, which says only that it is wide). Only steers
    which side is refined; the bounds are each side's own rigorous end whatever the estimate."""
    upper, lower = (_side_gap(history, d) for d in BOTH_SIDES)
    return None if upper is None or lower is None else (upper, lower)


def _next_refinement(got: Bracket, history: dict, abs_accuracy: float) -> tuple[tuple[Dominance, ...], int]:
    """Which sides to refine and by how many halvings: both by :func:`_halvings` until the side
    gaps (:func:`_side_gaps`) are known; then only the wide side when the other's gap is at most
    NARROW_SHARE of the target width, by ⌈log4(gap / (target − other gap))⌉ halvings (at most
    MAX_JUMP) — the width is second order in the step."""
    gaps = _side_gaps(history)
    if gaps is None:
        return BOTH_SIDES, _halvings(got)
    target = max(abs_accuracy, REL_ACCURACY * abs(float(got.upper)))
    for narrow, wide, side in ((gaps[0], gaps[1], Dominance.DOMINATED), (gaps[1], gaps[0], Dominance.DOMINATING)):
        if narrow <= NARROW_SHARE * target:
            ratio = wide / (target - narrow)
            return (side,), max(1, min(MAX_JUMP, math.ceil(math.log(ratio, 4.0)))) if ratio > 1.0 else 1
    return BOTH_SIDES, _halvings(got)


def _resolved(got: Bracket) -> bool:
    """Whether a bracket that has not decided a claim is as narrow as deciding one is worth:
    CLAIM_REL_ACCURACY relative (a claim closer to the truth than that is left INCONCLUSIVE here), or
    DELTA_ABS_ACCURACY absolute."""
    width = _width(got)
    return width <= DELTA_ABS_ACCURACY or width <= CLAIM_REL_ACCURACY * abs(float(got.upper))


def _room(best: PLDBracket) -> int:
    """Halvings left before the grid reaches MAX_GRID_POINTS (at least 1)."""
    return max(1, int(math.log2(MAX_GRID_POINTS / best.grid_size())))


def _refine_sides(
    scheme: Scheme, direction: Direction, best: PLDBracket, steps: dict, sides: tuple[Dominance, ...], jump: int, target_delta: float | None
) -> PLDBracket | None:
    """``best`` with ``sides`` rebuilt ``jump`` halvings (at most :func:`_room`) finer than the finest
    of their current steps (``steps`` is updated), or None when the builder cannot reach that grid."""
    finer_step = min(steps[d] for d in sides) / 2.0 ** min(jump, _room(best))
    try:
        finer = _cached(scheme, direction, finer_step, target_delta, sides)
    except AccuracyNotReachable:
        return None
    steps.update({d: finer_step for d in sides})
    return _merged(best, finer, sides)


class _PerBracket:
    """A bracket query answered once per bracket object (a refinement asks it of the same grid several
    times; ε(δ) of a 200 000-point PLD is ~10 ms). The brackets are kept alive, so ids are not reused."""

    def __init__(self, query: Callable[[PLDBracket], Bracket]) -> None:
        self._query = query
        self._seen: dict[int, tuple[PLDBracket, Bracket]] = {}

    def __call__(self, bracket: PLDBracket) -> Bracket:
        hit = self._seen.get(id(bracket))
        if hit is None:
            hit = self._seen[id(bracket)] = (bracket, self._query(bracket))
        return hit[1]


def _memoized(query: Callable[[PLDBracket], Bracket]) -> _PerBracket:
    """``query`` as a :class:`_PerBracket` (unchanged if it is one already)."""
    return query if isinstance(query, _PerBracket) else _PerBracket(query)


def _first_lower(scheme: Scheme, direction: Direction, delta: float) -> float:
    """The lower end of ε(δ) in ``direction`` on the first grid of :meth:`PLDMethod._refined` (the
    cached build its refinement starts from), or −∞ where that grid cannot be built or says nothing."""
    try:
        lower = float(_cached(scheme, direction, _start_step(scheme), delta, BOTH_SIDES).epsilon(delta).lower)
    except (AccuracyNotReachable, NotApplicable, NumericalFailure):  # that direction's own call reports it
        return -math.inf
    return lower if math.isfinite(lower) else -math.inf


def _end(got: Bracket, side: Dominance) -> float:
    """The end of ``got`` that ``side`` gives: DOMINATING the upper, DOMINATED the lower."""
    return float(got.upper) if side is Dominance.DOMINATING else float(got.lower)


def _side_gap(history: dict, side: Dominance) -> float | None:
    """The estimated distance of ``side``'s end to the true value from its own last two grids
    (see :func:`_side_gaps`), or None before it has two finite ends."""
    if len(history[side]) < 2:
        return None
    (h_c, x_c), (h_f, x_f) = history[side][-2:]
    if not (math.isfinite(x_c) and math.isfinite(x_f)):
        return None
    return abs(x_c - x_f) / ((h_c / h_f) ** 2 - 1.0)


def _claim_refinement(got: Bracket, claim: float, history: dict) -> tuple[tuple[Dominance, ...], int]:
    """(the sides to refine, the halvings) for deciding ``claim`` inside the bracket ``got``.

    Until both sides have been built on two grids: both, by ⌈log4(width / (d/2))⌉ halvings, d the
    distance from the claim to the nearer end. Then each side's gap g to the
    truth is estimated from its own last two grids (:func:`_side_gap`, second order in the step) and
    the side must travel d (its end to the claim). Where exactly one side can cross (2g >= d), only
    that side is refined, by the halvings that move it (g + d)/2 of its way, g·(1 − 4^−j) >= (g + d)/2. Otherwise the estimates are not to be trusted yet (coarse grids, where
    the loss law's shape is not resolved, converge slower than second order): every side that moved
    more than STALL_SHARE of its distance in its last refinement is halved once; none: the grid
    cannot decide the claim (empty). At most CLAIM_MAX_JUMP halvings."""
    ends = {Dominance.DOMINATING: float(got.upper), Dominance.DOMINATED: float(got.lower)}
    distance = {d: abs(ends[d] - claim) for d in BOTH_SIDES}
    gaps = {d: _side_gap(history, d) for d in BOTH_SIDES}
    if any(g is None for g in gaps.values()):
        nearest = min(distance.values())
        return BOTH_SIDES, min(CLAIM_MAX_JUMP, _jump(_width(got) / (0.5 * nearest) if nearest > 0.0 else math.inf))
    crossing = [d for d in BOTH_SIDES if 2.0 * gaps[d] >= distance[d]]
    if len(crossing) == 1:
        (side,) = crossing
        g, d = gaps[side], distance[side]
        return (side,), min(CLAIM_MAX_JUMP, _jump(2.0 * g / (g - d)) if g > d else MAX_JUMP)
    moving = tuple(d for d in BOTH_SIDES if _last_move(history, d) > STALL_SHARE * distance[d])
    return moving, 1


def _jump(ratio: float) -> int:
    """⌈log4(ratio)⌉ halvings between 1 and MAX_JUMP (the width is second order in the step)."""
    if not ratio > 1.0:
        return 1
    return max(1, min(MAX_JUMP, math.ceil(math.log(ratio, 4.0)))) if math.isfinite(ratio) else MAX_JUMP


def _last_move(history: dict, side: Dominance) -> float:
    """How far ``side``'s end moved in its last refinement (0 before it has two)."""
    if len(history[side]) < 2:
        return 0.0
    return abs(history[side][-1][1] - history[side][-2][1])


def _merged(best: PLDBracket, finer: PLDBracket, sides: tuple[Dominance, ...]) -> PLDBracket:
    """``finer``'s PLDs on ``sides``, ``best``'s on the others (each side is rigorous on its own,
    Steinke 2022, Prop 7); routes of both, the kept side's marked."""
    if sides == BOTH_SIDES:
        return finer
    (side,) = sides
    refined = finer.dominating if side is Dominance.DOMINATING else finer.dominated
    kept_step = (best.dominated if side is Dominance.DOMINATING else best.dominating).step
    kept = f"{'dominated' if side is Dominance.DOMINATING else 'dominating'} side kept from grid step {kept_step:g}"
    routes = tuple(f"{side.name.lower()} side refined (the other trivial): {r}" for r in finer.routes)
    routes += tuple(f"{kept}: {r}" for r in best.routes) if best.routes else (kept,)
    if side is Dominance.DOMINATING:
        return PLDBracket(refined, best.dominated, routes)
    return PLDBracket(best.dominating, refined, routes)


def _converged(b: Bracket, abs_accuracy: float) -> bool:
    upper, width = float(b.upper), _width(b)
    if math.isinf(upper) or math.isnan(width):
        return False
    return width <= abs_accuracy or width <= REL_ACCURACY * abs(upper)


def _cached(scheme: Scheme, direction: Direction, step: float, target_delta: float | None, sides: tuple[Dominance, ...]) -> PLDBracket:
    try:
        hash(scheme)
    except TypeError:
        return scheme_pld(scheme, direction, step=step, target_delta=target_delta, sides=sides)
    return _cached_build(scheme, direction, step, target_delta, sides)


@functools.lru_cache(maxsize=16)
def _cached_build(scheme: Scheme, direction: Direction, step: float, target_delta: float | None, sides: tuple[Dominance, ...]) -> PLDBracket:
    return scheme_pld(scheme, direction, step=step, target_delta=target_delta, sides=sides)


METHODS = [PLDMethod()]
