"""One step of a batch-sampled Gaussian sum (truncated Poisson sampling, sampling with replacement)
from the closed forms of its step pairs, in ball arithmetic: UPPER the smallest DOMINATING pair (the
labelled mixture that reveals the sampler's label, a weighted sum of closed forms; with replacement
also the pair that hides K = 0 from K >= 1, and the multiplicity against K = 0), LOWER the largest ATTAINED pair of neighbours
(:func:`verifier.pairs.batch_sampling.truncated_poisson_step`,
:func:`~verifier.pairs.batch_sampling.with_replacement_step` and
:func:`~verifier.pairs.batch_sampling.with_replacement_hidden_empty`; proofs/batch_sampling.py). It
costs about a second where the PLD engine's grid over the step's loss range can take the whole time
budget (with replacement, the loss of the K-th multiple of the shift reaches K²Δ²/2σ²), so a
one-step claim is never left with δ in [0, ∞]."""

from __future__ import annotations

import functools
import math
from typing import Sequence

from verifier._types import Bound, Direction, Quantity, Side
from verifier.certify.method import Guarantee, Method
from verifier.pairs.batch_sampling import truncated_poisson_step, with_replacement_hidden_empty, with_replacement_step
from verifier.schemes import Scheme, TruncatedPoisson, WithReplacement

__all__ = ["BatchStepMethod", "METHODS", "EPSILON_RTOL", "step_delta_ends", "step_epsilon_ends"]

#: Relative width at which the UPPER end of ε(δ) is returned (the generic bisection runs to the last
#: bit, about sixty ball evaluations of the labelled mixture: seconds at a hundred labels).
EPSILON_RTOL = 1e-9
#: Past this ε the upper end is reported as +∞ (δ_U(ε) still above δ there).
_EPSILON_CAP = 1e6


def _upper_epsilon(pair, delta: float, direction: Direction, start: float) -> float:
    """A rigorous UPPER end of ε(δ): a point b with the ball's upper end δ_U(b) <= δ (so ε(δ) <= b),
    found by the Illinois variant of regula falsi on ln δ_U from ``start`` (a LOWER end of ε(δ)),
    then bisection steps wherever the secant stalls; every returned point was evaluated, never
    extrapolated."""
    def gap(e: float) -> float:
        value = pair.delta(e, direction).upper
        return math.log(value / delta) if value > 0.0 else -math.inf

    a, ga = start, gap(start)
    step = max(1.0, abs(start))
    b, gb = a + step, gap(a + step)
    while ga <= 0.0:  # the start already passes: step down until it does not
        b, gb = a, ga
        a -= step
        ga, step = gap(a), 2.0 * step
    while gb > 0.0:
        if b > _EPSILON_CAP:  # δ_U stays above δ (an atom of infinite loss holds at least δ)
            return math.inf
        a, ga = b, gb
        step *= 2.0
        b, gb = b + step, gap(b + step)
    side = 0
    while b - a > EPSILON_RTOL * max(1.0, abs(b)):
        c = (a + b) / 2.0 if not math.isfinite(gb) else b - gb * (b - a) / (gb - ga)
        if not a < c < b:
            c = (a + b) / 2.0
        gc = gap(c)
        if gc > 0.0:
            a, ga = c, gc
            if side == -1 and math.isfinite(gb):
                gb /= 2.0
            side = -1
        else:
            b, gb = c, gc
            if side == 1:
                ga /= 2.0
            side = 1
    return b


def _step_pairs(scheme: TruncatedPoisson | WithReplacement):
    """(DOMINATING pairs, ATTAINED pairs) of the scheme's step."""
    pair = scheme.pair
    if isinstance(scheme, WithReplacement):
        args = (pair.sigma, pair.sensitivity, scheme.dataset_size, scheme.sample_size)
        upper, attained = with_replacement_step(*args)
        return (upper, with_replacement_hidden_empty(*args)), attained
    upper, attained = truncated_poisson_step(pair.sigma, pair.sensitivity, scheme.dataset_size, scheme.rate, scheme.max_batch, scheme.replace_one)
    return (upper,), (attained,)


def _raises(pair, direction: Direction, delta: float, lower: float) -> bool:
    """Whether ``pair``'s ε(δ) is certainly above ``lower`` (the LOWER end so far), i.e. its ball
    δ_L(lower) > δ; only then is its bisection run (it can raise the LOWER end only there, and
    where the ball is uninformative it is slow: the antipodal lattice at n = 2, m = 6, σ = 1, Δ = 2
    gives δ in [0, 1] at ε = 52.8, where the mixture's ε(1e-5) is 105.6, and its bisection took
    about 40 s to return 36.9). The first pair (``lower`` = −∞) is always run."""
    return not math.isfinite(lower) or pair.delta(lower, direction).lower > delta


class BatchStepMethod(Method):
    name = "batch-step"
    citation = (
        "one batch-sampled Gaussian step: UPPER the labelled mixture that reveals the sampler's data-independent label, "
        "LOWER the largest attained pair of neighbours, each by its closed form in ball arithmetic (Steinke 2022, Prop 7; "
        "proofs/batch_sampling.py)"
    )
    returns = frozenset({Guarantee.UPPER, Guarantee.LOWER})
    cost = 0
    scheme_types = (TruncatedPoisson, WithReplacement)
    needs_float_range = False

    def supports(self, scheme: Scheme) -> bool:
        return isinstance(scheme, self.scheme_types) and scheme.steps == 1

    def _bounds(self, lower: float, upper: float, quantity: Quantity, at: float, direction: Direction) -> list[Bound]:
        return [
            Bound(lower, Side.LOWER, direction, quantity, at, self.name, self.citation),
            Bound(upper, Side.UPPER, direction, quantity, at, self.name, self.citation),
        ]

    def delta_bounds(self, scheme: Scheme, epsilon: float, direction: Direction) -> Sequence[Bound]:
        return self._bounds(*step_delta_ends(scheme, epsilon, _key(scheme, direction)), Quantity.DELTA, epsilon, direction)

    def epsilon_bounds(self, scheme: Scheme, delta: float, direction: Direction) -> Sequence[Bound]:
        return self._bounds(*step_epsilon_ends(scheme, delta, _key(scheme, direction)), Quantity.EPSILON, delta, direction)


def _key(scheme: Scheme, direction: Direction) -> Direction:
    """The direction whose ends answer ``direction``: under sampling with replacement (replace-one
    only) both directions have the same ends (the swapped pair of datasets are neighbours too, so the
    attained pairs count in both orientations, and the dominating pairs are symmetric), so REMOVE's
    are computed once; otherwise the direction itself."""
    return Direction.REMOVE if isinstance(scheme, WithReplacement) else direction


def _orientations(scheme: Scheme, direction: Direction) -> tuple[Direction, ...]:
    """The attained pairs' orientations that bound ``direction`` from below (see :func:`_key`)."""
    return tuple(Direction) if isinstance(scheme, WithReplacement) else (direction,)


@functools.lru_cache(maxsize=64)
def step_delta_ends(scheme: Scheme, epsilon: float, direction: Direction) -> tuple[float, float]:
    """(LOWER, UPPER) ends of δ(ε): the largest attained pair's lower end, the smallest dominating one's upper end."""
    uppers, attained = _step_pairs(scheme)
    lower = max(pair.delta(epsilon, d).lower for pair in attained for d in _orientations(scheme, direction))
    return lower, min(pair.delta(epsilon, direction).upper for pair in uppers)


@functools.lru_cache(maxsize=64)
def step_epsilon_ends(scheme: Scheme, delta: float, direction: Direction) -> tuple[float, float]:
    """(LOWER, UPPER) ends of ε(δ), the upper end by :func:`_upper_epsilon` from the lower one."""
    uppers, attained = _step_pairs(scheme)
    lower = -math.inf
    for pair in attained:
        for d in _orientations(scheme, direction):
            if _raises(pair, d, delta, lower):
                lower = max(lower, pair.epsilon(delta, d).lower)
    start = lower if math.isfinite(lower) else 0.0
    return lower, min(_upper_epsilon(pair, delta, direction, start) for pair in uppers)


METHODS = [BatchStepMethod()]
