"""RDP curves of whole schemes, and the best (ε, δ) they certify.

Dispatch over scheme types goes through :data:`CURVES` (a registry keyed by the scheme's type, UPPER
curves) and :data:`LOWER_CURVES` (schemes for which only LOWER-bound curves are known, e.g. the
shuffle model of Liew et al. Thm 3), never an if/elif chain: Single → the pair's own Rényi divergence (exact for every real α; Steinke
2022, Def 32 and the pair's closed form), Composed → m-fold addition (Lemma 31), Poisson → Thm 34/35
composed over the steps, Allocation → Thm 4.8 (remove) / the Jensen bound (add), composed over k·E
rounds, Sequence → the sum of its phases' curves at the same orders (Lemma 31: heterogeneous
composition adds Rényi divergences order by order), MatrixMechanism → Schuchardt & Kalinin's
Algorithms 1–2 (:mod:`verifier.rdp.matrix`), CheckIn → Liew et al. Eq. (5) with per-k
Wang–Balle–Kasiviswanathan bounds (:mod:`verifier.rdp.checkin`) composed over the rounds,
WithoutReplacement → min(WBK Thm 9, Steinke §6.7 group privacy) (:mod:`verifier.rdp.without_replacement`)
composed over the steps, PoissonReplaceOne → Steinke §6.7's group-privacy bound over the steps,
ZCDP → ξ + ρα, SampledZCDP → the same per step (no amplification) and RepeatAndSelect → Papernot & Steinke 2022, Thm 2 (:mod:`verifier.rdp.classes`).

:func:`epsilon_upper_for` / :func:`delta_upper_for` convert with the default integer orders 2…256,
then refine around the best order by a golden-section search over fractional orders (exact by
certified integration for the subsampled Gaussian, a log-convex chord otherwise); every order tried
is a rigorous bound, so the minimum is one too.
"""

from __future__ import annotations

import functools
from typing import Callable

import numpy as np
import numpy.typing as npt

from verifier._types import Direction, Side
from verifier.errors import InvalidArgument
from verifier.rdp.allocation import allocation_curve
from verifier.rdp.conversion import Conversion, Converted, delta_upper, epsilon_upper
from verifier.rdp.curve import DEFAULT_ORDERS, RdpCurve, check_orders
from verifier.rdp.matrix import matrix_curve
from verifier.rdp.moments import renyi_upper
from verifier.rdp.poisson import poisson_curve
from verifier.rdp.checkin import checkin_curve
from verifier.rdp.classes import repeat_and_select_curve, sampled_zcdp_curve, zcdp_curve
from verifier.rdp.shuffle import shuffle_curve
from verifier.schemes import Allocation, CheckIn, Composed, MatrixMechanism, Poisson, Scheme, Sequence, Shuffle, Single
from verifier.schemes import PoissonReplaceOne, RepeatAndSelect, SampledZCDP, WithoutReplacement, ZCDP
from verifier.rdp.without_replacement import poisson_replace_one_curve, without_replacement_curve

__all__ = ["CURVES", "LOWER_CURVES", "curve_for", "pair_curve", "epsilon_upper_for", "delta_upper_for", "fractional_floor"]

PAIR_CITATION = "closed-form Renyi divergence of the pair (Steinke 2022, Def 32), ball arithmetic"


def pair_curve(pair, orders: npt.ArrayLike, direction: Direction) -> RdpCurve:
    """The pair's own Rényi divergences (UPPER ends of rigorous brackets; exact at every order)."""
    grid = check_orders(orders)
    values = np.array([renyi_upper(pair, float(a), direction) for a in grid])
    return RdpCurve(grid, values, np.ones(len(grid), dtype=bool), direction, PAIR_CITATION)


def _single(scheme: Single, orders, direction: Direction) -> RdpCurve:
    return pair_curve(scheme.pair, orders, direction)


def _composed(scheme: Composed, orders, direction: Direction) -> RdpCurve:
    return curve_for(scheme.scheme, orders, direction).times(scheme.times)


def _poisson(scheme: Poisson, orders, direction: Direction) -> RdpCurve:
    return poisson_curve(scheme.pair, scheme.rate, orders, direction).times(scheme.steps)


def _allocation(scheme: Allocation, orders, direction: Direction) -> RdpCurve:
    return allocation_curve(scheme.pair, scheme.steps, orders, direction, scheme.k, scheme.epochs)


def _sequence(scheme: Sequence, orders, direction: Direction) -> RdpCurve:
    curves = [curve_for(phase, orders, direction) for phase in scheme.phases]
    total = curves[0]
    for curve in curves[1:]:
        total = total.compose(curve)
    return total


def _matrix(scheme: MatrixMechanism, orders, direction: Direction) -> RdpCurve:
    return matrix_curve(scheme, orders, direction)


def _checkin(scheme: CheckIn, orders, direction: Direction) -> RdpCurve:
    return checkin_curve(scheme.pair, scheme.users, scheme.rate, scheme.rounds, scheme.aggregation, orders, direction, Side.UPPER)


def _without_replacement(scheme: WithoutReplacement, orders, direction: Direction) -> RdpCurve:
    return without_replacement_curve(scheme.pair, scheme.rate, orders, direction).times(scheme.steps)


def _poisson_replace_one(scheme: PoissonReplaceOne, orders, direction: Direction) -> RdpCurve:
    return poisson_replace_one_curve(scheme.pair, scheme.rate, orders, direction).times(scheme.steps)


def _repeat_and_select(scheme: RepeatAndSelect, orders, direction: Direction) -> RdpCurve:
    return repeat_and_select_curve(scheme, orders, direction, curve_for, delta_upper_for)


#: Scheme type → curve builder (orders, direction) → RdpCurve.
CURVES: dict[type, Callable[..., RdpCurve]] = {
    CheckIn: _checkin,
    Single: _single,
    Composed: _composed,
    Poisson: _poisson,
    Allocation: _allocation,
    Sequence: _sequence,
    MatrixMechanism: _matrix,
    WithoutReplacement: _without_replacement,
    PoissonReplaceOne: _poisson_replace_one,
    ZCDP: zcdp_curve,
    SampledZCDP: sampled_zcdp_curve,
    RepeatAndSelect: _repeat_and_select,
}


def _shuffle(scheme: Shuffle, orders, direction: Direction) -> RdpCurve:
    return shuffle_curve(scheme.pair, scheme.users, orders, direction)


#: Scheme type → LOWER-bound curve builder, for schemes whose RDP has no known upper bound here.
#: These curves never convert to (ε, δ) upper bounds (:func:`verifier.rdp.conversion.epsilon_upper`
#: refuses them) and the "rdp" certification method does not take these schemes.
LOWER_CURVES: dict[type, Callable[..., RdpCurve]] = {
    Shuffle: _shuffle,
}


def curve_for(scheme: Scheme, orders: npt.ArrayLike = DEFAULT_ORDERS, direction: Direction = None) -> RdpCurve:  # type: ignore[assignment]
    """The RDP curve of ``scheme`` in ``direction``: UPPER bounds (exact where flagged) from
    :data:`CURVES`, or, for a scheme only in :data:`LOWER_CURVES`, LOWER bounds (``curve.side``)."""
    if not isinstance(direction, Direction):
        raise InvalidArgument("direction", direction, "must be Direction.ADD or Direction.REMOVE")
    builder = CURVES.get(type(scheme)) or LOWER_CURVES.get(type(scheme))
    if builder is None:
        known = ", ".join(t.__name__ for t in (*CURVES, *LOWER_CURVES))
        raise InvalidArgument("scheme", scheme, f"RDP supports {known}")
    return builder(scheme, orders, direction)


#: Golden-section steps of the fractional refinement (the bracket [α*−1, α*+1] shrinks to ~0.01).
_GOLDEN_STEPS = 10
_INVERSE_PHI = (5**0.5 - 1) / 2


def _default_curve(scheme: Scheme, direction: Direction) -> RdpCurve:
    """``curve_for(scheme, DEFAULT_ORDERS, direction)``, cached for hashable schemes: a certify run asks
    for it four times (δ and ε bounds, two directions) and it is a third of the RDP method's time
    (issue 17: certify under a second)."""
    try:
        return _cached_default_curve(scheme, direction)
    except TypeError:  # an unhashable scheme
        return curve_for(scheme, DEFAULT_ORDERS, direction)


@functools.lru_cache(maxsize=8)
def _cached_default_curve(scheme: Scheme, direction: Direction) -> RdpCurve:
    return curve_for(scheme, DEFAULT_ORDERS, direction)


def _refine(scheme: Scheme, direction: Direction, convert: Callable[[RdpCurve], Converted], fractional: bool = True) -> Converted:
    """Best integer order α*, then (``fractional``) a golden-section search over fractional orders in
    [α*−1, α*+1]; every order evaluated is a rigorous bound, so the minimum over all of them is one
    too (the search needs no unimodality to be valid, only to be effective)."""
    best = convert(_default_curve(scheme, direction))
    if not fractional:
        return best

    def at(order: float) -> Converted:
        nonlocal best
        found = convert(curve_for(scheme, [order], direction))
        if found.value < best.value:
            best = found
        return found

    lo, hi = max(best.order - 1.0, 1.0 + 1e-3), best.order + 1.0
    x1, x2 = hi - _INVERSE_PHI * (hi - lo), lo + _INVERSE_PHI * (hi - lo)
    f1, f2 = at(x1).value, at(x2).value
    for _ in range(_GOLDEN_STEPS):
        if f1 <= f2:
            hi, x2, f2 = x2, x1, f1
            x1 = hi - _INVERSE_PHI * (hi - lo)
            f1 = at(x1).value
        else:
            lo, x1, f1 = x1, x2, f2
            x2 = lo + _INVERSE_PHI * (hi - lo)
            f2 = at(x2).value
    return best


def epsilon_upper_for(
    scheme: Scheme, delta: float, direction: Direction, conversion: Conversion = Conversion.IMPROVED, *, fractional: bool = True
) -> Converted:
    """UPPER bound on ε(δ) of ``scheme`` in ``direction`` from its RDP curve (see the module docstring);
    ``fractional=False``: the integer orders alone."""
    return _refine(scheme, direction, lambda curve: epsilon_upper(curve, delta, conversion), fractional)


def delta_upper_for(
    scheme: Scheme, epsilon: float, direction: Direction, conversion: Conversion = Conversion.IMPROVED, *, fractional: bool = True
) -> Converted:
    """UPPER bound on δ(ε) of ``scheme`` in ``direction`` from its RDP curve; ``fractional=False``:
    the integer orders alone."""
    return _refine(scheme, direction, lambda curve: delta_upper(curve, epsilon, conversion), fractional)


#: Points on which :func:`fractional_floor` minimises the conversion term over one unit of order.
_FLOOR_POINTS = 257


def fractional_floor(scheme: Scheme, delta: float, direction: Direction) -> float:
    """About the least ε(δ) (improved conversion) the fractional search of :func:`epsilon_upper_for`
    can reach, from the integer orders alone: the search stays in [α*−1, α*+1] around the best integer
    order α*, and on [a, a + 1] the Rényi divergence is at least D_a (it is non-decreasing in the
    order: van Erven & Harremoës 2014, Thm 3) while the conversion term ln(1 − 1/α) − (ln δ + ln α)/(α − 1)
    is at least its minimum over the interval (here on _FLOOR_POINTS points). Where the curve's value
    at a is only an upper bound on D_a (not exact), the floor assumes the search's bounds at
    fractional orders are no smaller than that value (non-decreasing like D_α itself). A steering
    value, not a bound: a caller skips the search when even this floor misses its target, and a wrong
    floor only skips a search that could have tightened an RDP bound; −∞ where the search would
    leave the curve's orders."""
    curve = _default_curve(scheme, direction)
    found = epsilon_upper(curve, delta, Conversion.IMPROVED)
    orders = [float(a) for a in curve.orders]
    low, high = found.order - 1.0, found.order + 1.0
    if low < orders[0] or high > orders[-1]:
        return -np.inf  # the search leaves the curve's orders
    floor = found.value
    for left in range(len(orders) - 1):
        if orders[left + 1] <= low or orders[left] >= high:
            continue
        alpha = np.linspace(orders[left], orders[left + 1], _FLOOR_POINTS)
        conversion = np.log1p(-1.0 / alpha) - (np.log(delta) + np.log(alpha)) / (alpha - 1.0)
        floor = min(floor, float(curve.values[left]) + float(conversion.min()))
    return max(0.0, floor)
