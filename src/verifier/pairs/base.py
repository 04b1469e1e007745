"""The dominating-pair interface: everything verifier knows about one step of a mechanism.

A pair (P, Q) = (R(*), R(⊥)) is the output law of a step with and without the element
(Feldman & Shenfeld, Def 2.9; Zhu et al. 2022, Def 2.8). Directions (Steinke 2022, §6.2):

- REMOVE: the hockey-stick divergence H_{e^ε}(P‖Q) and the privacy loss ℓ = ln(P/Q);
- ADD: H_{e^ε}(Q‖P), i.e. the REMOVE quantities of the swapped pair (Q, P), loss ln(Q/P) = −ℓ.

A subclass implements the REMOVE-oriented primitives only (``_delta_arb``, ``_renyi_arb``,
``_moment_arb``, the loss law under P and under Q) and :meth:`swapped`; the public methods add
validation, directions, outward rounding and root finding. The closed forms are evaluated in ball
arithmetic (arb, :mod:`flint`), so every bracket returned here is rigorous and its width reflects
only floating-point error.
"""

from __future__ import annotations

import abc
import math
import sys
from typing import Callable, Iterable

import numpy as np
import numpy.typing as npt
from flint import arb

from verifier._directed import ARB_PRECISION_BITS, arb_bound, arb_bracket, with_precision
from verifier._types import Bracket, Direction, Measure, Side
from verifier._validation import (
    check_integer,
    check_nonnegative,
    check_open_unit,
    check_order,
    check_real_array,
)
from verifier.errors import InvalidArgument, NotApplicable, NumericalFailure

__all__ = ["DominatingPair", "evaluate_adaptively", "evaluate_many", "eps0_range_issue", "EPS0_FLOAT_MAX"]

#: Relative accuracy (bits) a ball result must reach before it is rounded to float64; below it the
#: evaluation is repeated at higher precision (cancellation in closed forms such as Φ(a) − e^ε Φ(b)).
_TARGET_ACCURACY_BITS = 60
_MAX_PRECISION_BITS = 4096

#: Bisection stops when the ε bracket is this many ulps wide (or cannot shrink further).
_EPSILON_ULPS = 4


#: Radius below which a ball counts as known whatever its relative accuracy.
_NEGLIGIBLE_RADIUS = arb("1e-300")


def _settled(value: arb, bits: int, accuracy_bits: int = _TARGET_ACCURACY_BITS) -> bool:
    return (
        not value.is_finite()
        or value.rel_accuracy_bits() >= accuracy_bits
        or value.rad() < _NEGLIGIBLE_RADIUS
        or bits >= _MAX_PRECISION_BITS
    )


def evaluate_adaptively(fn: Callable[[], arb]) -> arb:
    """Evaluate ``fn`` in ball arithmetic, doubling the precision until the ball is narrow enough
    (60 relative bits) or the value is known to within 1e-300 absolute."""
    bits = ARB_PRECISION_BITS
    while True:
        with with_precision(bits):
            value = fn()
        if _settled(value, bits):
            return value
        bits *= 2


def evaluate_many(
    fn: Callable[[arb], arb], points: Iterable[float], *, bits: int = ARB_PRECISION_BITS, accuracy_bits: int = _TARGET_ACCURACY_BITS
) -> list[arb]:
    """``[fn(arb(x)) for x in points]``: one pass at ``bits`` of working precision, then the points whose
    ball is not ``accuracy_bits`` accurate (relative) again by :func:`evaluate_adaptively` (from
    ARB_PRECISION_BITS up; by default, each to its accuracy). Every ball is rigorous whatever the
    precision; a caller that needs fewer accurate bits may pass a cheaper ``bits``."""
    xs = [float(x) for x in points]
    with with_precision(bits):
        values = [fn(arb(x)) for x in xs]
    for i, value in enumerate(values):
        if not _settled(value, bits, accuracy_bits):
            values[i] = evaluate_adaptively(lambda x=xs[i]: fn(arb(x)))
    return values


class DominatingPair(abc.ABC):
    """A pair of distributions (P, Q) dominating one step of a mechanism; see the module docstring."""

    # ---- what a subclass implements (REMOVE orientation: H(P‖Q), ℓ = ln(P/Q)) --------------------

    @abc.abstractmethod
    def _delta_arb(self, epsilon: arb) -> arb:
        """H_{e^ε}(P‖Q) as a ball, for any real ε."""

    @abc.abstractmethod
    def _renyi_arb(self, alpha: arb) -> arb:
        """D_α(P‖Q) as a ball for real α > 1; ``arb.pos_inf()`` where infinite."""

    @abc.abstractmethod
    def _moment_arb(self, a: arb) -> arb:
        """E_Q[(P/Q)^a] over the support of Q, for real a >= 0."""

    @abc.abstractmethod
    def _loss_cdf(self, x: npt.NDArray[np.float64], under: Measure, inclusive: bool) -> npt.NDArray[np.float64]:
        """P(ℓ <= x) (``inclusive``) or P(ℓ < x) with the output drawn from ``under``."""

    @abc.abstractmethod
    def _loss_sf(self, x: npt.NDArray[np.float64], under: Measure, inclusive: bool) -> npt.NDArray[np.float64]:
        """P(ℓ >= x) (``inclusive``) or P(ℓ > x) with the output drawn from ``under`` (ℓ = +∞ counts)."""

    @abc.abstractmethod
    def _loss_quantile(self, q: npt.NDArray[np.float64], under: Measure) -> npt.NDArray[np.float64]:
        """Smallest x with P(ℓ <= x) >= q (may be ±inf)."""

    @abc.abstractmethod
    def _sample_loss(self, size: int, rng: np.random.Generator, under: Measure) -> npt.NDArray[np.float64]:
        """``size`` independent draws of ℓ with the output drawn from ``under``."""

    @abc.abstractmethod
    def swapped(self) -> "DominatingPair":
        """The pair (Q, P): its REMOVE quantities are this pair's ADD quantities."""

    def float_range_issue(self) -> str | None:
        """Why methods that compute in binary64 (PLD grids, RDP, Monte Carlo) cannot handle this
        pair, e.g. a privacy-loss scale that overflows or underflows; None when they can. The
        ball-arithmetic closed forms need no such range (their exponent range is unbounded)."""
        return None

    def _infinite_loss_mass_arb(self) -> arb:
        """P(ℓ = +∞) under P, i.e. P-mass where Q = 0 (the limit of δ(ε) as ε → ∞)."""
        return arb(0)

    def _max_loss_arb(self) -> arb | None:
        """The largest privacy loss ess sup_P ℓ (REMOVE) as a ball, None where ℓ is unbounded above
        (P-mass where Q = 0, or a Gaussian tail). NotApplicable for a pair that does not know it."""
        raise NotApplicable(f"{type(self).__name__} does not know its largest privacy loss")

    def _loss_cdf_arb(self, x: arb, under: Measure, inclusive: bool) -> arb:
        """P(ℓ <= x) (``inclusive``) or P(ℓ < x) under ``under`` as a ball, for a finite ball ``x``
        (where the ball straddles an atom, the result covers both cases)."""
        raise NotApplicable(f"{type(self).__name__} has no rigorous loss law (loss_cdf_bracket)")

    def _loss_sf_arb(self, x: arb, under: Measure, inclusive: bool) -> arb:
        """P(ℓ >= x) (``inclusive``) or P(ℓ > x) under ``under`` as a ball (ℓ = +∞ counts)."""
        raise NotApplicable(f"{type(self).__name__} has no rigorous loss law (loss_sf_bracket)")

    # ---- public API -----------------------------------------------------------------------------

    def oriented(self, direction: Direction) -> "DominatingPair":
        """The pair whose REMOVE quantities are this pair's quantities in ``direction``."""
        if not isinstance(direction, Direction):
            raise InvalidArgument("direction", direction, "must be Direction.ADD or Direction.REMOVE")
        return self if direction is Direction.REMOVE else self.swapped()

    def delta(self, epsilon: float | npt.ArrayLike, direction: Direction) -> Bracket:
        """Exact hockey-stick divergence δ(ε) = H_{e^ε}(P‖Q) (REMOVE) or H_{e^ε}(Q‖P) (ADD), for every
        real ε, as a rigorous bracket (scalar for a scalar ε, arrays for an array).

        Steinke 2022, Prop 7; the pair's closed form is cited by the subclass.
        """
        pair = self.oriented(direction)
        scalar = np.ndim(epsilon) == 0
        eps = check_real_array("epsilon", epsilon)
        balls = evaluate_many(pair._delta_arb, eps)
        bracket = arb_bracket(balls, clip=(0.0, 1.0))
        return bracket[0] if scalar else bracket

    def epsilon(self, delta: float, direction: Direction) -> Bracket:
        """ε(δ) = inf{ε ∈ ℝ : δ(ε) <= δ} for δ in (0, 1), as a rigorous bracket.

        Two bisections on the exact δ brackets: the upper end is a point where the *upper* bound on
        δ is already <= δ (so the true ε(δ) is below it), the lower end a point where the *lower*
        bound on δ still exceeds δ. Both post-conditions are checked, never assumed. ε(δ) may be
        negative when the total variation is below δ, and is +∞ when δ is below the mass of
        infinite privacy loss.
        """
        target = check_open_unit("delta", delta)
        pair = self.oriented(direction)

        def bounds(eps: float) -> Bracket:
            # δ(ε) >= 1 − e^ε for every pair (S = the whole space): a floor that holds even where the
            # ball of the closed form is uninformative (ε0 = 1e308), so the search below always ends.
            bracket = arb_bracket(evaluate_adaptively(lambda: pair._delta_arb(arb(eps))), clip=(0.0, 1.0))
            with with_precision(ARB_PRECISION_BITS):
                floor = arb_bound(1 - arb(eps).exp(), Side.LOWER) if eps < 0 else 0.0
            return Bracket(max(bracket.lower, floor), max(bracket.upper, floor))

        with with_precision(ARB_PRECISION_BITS):
            infinite_mass = pair._infinite_loss_mass_arb()
        lo = min(-1.0, 2.0 * math.log1p(-target))  # below ln(1 − δ): 1 − e^lo > δ
        while not bounds(lo).lower > target:
            lo = 2.0 * lo - 1.0  # δ(ε) >= 1 − e^ε, so this terminates for any δ < 1
        if arb_bound(infinite_mass, Side.LOWER) > target:
            return Bracket(math.inf, math.inf)
        if arb_bound(infinite_mass, Side.UPPER) >= target:
            # δ(ε) decreases to the infinite-loss mass, which may equal δ: no finite upper end is certain.
            return Bracket(_bisect(lambda e: not bounds(e).lower > target, lo, 1e12, keep="low"), math.inf)
        hi = 1.0
        while not bounds(hi).upper <= target:
            if hi == _FLOAT_MAX:  # ε(δ) is beyond every float (σ → 0: ρ = 1e600): the upper end is +∞
                if bounds(hi).lower > target:
                    return Bracket(_FLOAT_MAX, math.inf)
                return Bracket(_bisect(lambda e: not bounds(e).lower > target, lo, hi, keep="low"), math.inf)
            hi = min(2.0 * hi + 1.0, _FLOAT_MAX)  # δ(ε) decreases to the infinite-loss mass < δ

        upper = _bisect(lambda e: bounds(e).upper <= target, lo, hi)
        lower = _bisect(lambda e: not bounds(e).lower > target, lo, upper, keep="low")
        if not (bounds(upper).upper <= target and bounds(lower).lower > target):
            raise NumericalFailure("ε(δ) root-finding post-condition failed")  # pragma: no cover
        return Bracket(lower, upper)

    def max_loss(self, direction: Direction) -> Bracket:
        """ε(0), the largest privacy loss: ε* = ess sup of ln(P/Q) under P (REMOVE) or of ln(Q/P)
        under Q (ADD), as a rigorous bracket; [+∞, +∞] where the loss is unbounded (any Gaussian
        step). Since δ(ε) = E_P[(1 − e^{ε−ℓ})_+] (Steinke 2022, Prop 7), δ(ε) = 0 exactly for ε >= ε*
        and δ(ε) > 0 for ε < ε*: the pair is ε-DP (pure DP) exactly for ε >= ε*. NotApplicable for a
        pair that does not know it."""
        pair = self.oriented(direction)
        if pair._max_loss_arb() is None:
            return Bracket(math.inf, math.inf)
        return arb_bracket(evaluate_adaptively(lambda: pair._max_loss_arb()))  # type: ignore[arg-type,return-value]

    def renyi(self, alpha: float, direction: Direction) -> Bracket:
        """Rényi divergence D_α(P‖Q) (REMOVE) or D_α(Q‖P) (ADD) for real α > 1, in nats; +∞ where the
        first distribution is not absolutely continuous w.r.t. the second (Steinke 2022, Def 32)."""
        a = check_order("alpha", alpha)
        pair = self.oriented(direction)
        ball = evaluate_adaptively(lambda: pair._renyi_arb(arb(a)))
        if not ball.is_finite():
            return Bracket(math.inf, math.inf)
        return arb_bracket(ball, clip=(0.0, math.inf))

    def moment(self, a: float, direction: Direction) -> Bracket:
        """Privacy-ratio moment E_Q[(P/Q)^a] (REMOVE) or E_P[(Q/P)^a] (ADD) for real a >= 0, over the
        support of the second distribution (Feldman & Shenfeld, Thm 4.8: m_a = e^{(a−1) R_a})."""
        order = check_nonnegative("a", a)
        pair = self.oriented(direction)
        return arb_bracket(evaluate_adaptively(lambda: pair._moment_arb(arb(order))), clip=(0.0, math.inf))

    def loss_cdf(self, x: float | npt.ArrayLike, direction: Direction, under: Measure) -> npt.NDArray[np.float64]:
        """P(L <= x) for the direction's privacy loss L (REMOVE: ln(P/Q); ADD: ln(Q/P)) with the output
        drawn from ``under``. The PLD of the direction is the law under its first distribution
        (P for REMOVE, Q for ADD). Float accuracy (scipy special functions), not a bracket."""
        xs = check_real_array("x", x, allow_inf=True)
        _check_measure(under)
        pair, measure = self._orient_measure(direction, under)
        return pair._loss_cdf(xs, measure, True)

    def loss_sf(self, x: float | npt.ArrayLike, direction: Direction, under: Measure) -> npt.NDArray[np.float64]:
        """P(L > x), the survival function matching :meth:`loss_cdf` (infinite loss counts)."""
        xs = check_real_array("x", x, allow_inf=True)
        _check_measure(under)
        pair, measure = self._orient_measure(direction, under)
        return pair._loss_sf(xs, measure, False)

    def loss_cdf_bracket(self, x: float | npt.ArrayLike, direction: Direction, under: Measure) -> Bracket:
        """P(L <= x) as a rigorous bracket (ball arithmetic; atoms counted exactly, inclusively), for
        finite x: the certified twin of :meth:`loss_cdf` (scalar bracket for a scalar x, arrays for an
        array; about 10–30 µs per point). NotApplicable for a pair without a ball-arithmetic loss law."""
        return self._loss_bracket(x, direction, under, "_loss_cdf_arb", True)

    def loss_sf_bracket(self, x: float | npt.ArrayLike, direction: Direction, under: Measure) -> Bracket:
        """P(L > x) as a rigorous bracket (infinite loss counts): the certified twin of :meth:`loss_sf`."""
        return self._loss_bracket(x, direction, under, "_loss_sf_arb", False)

    def loss_cell_bracket(self, edges: npt.ArrayLike, direction: Direction, under: Measure) -> Bracket:
        """Masses of the cells cut by increasing finite ``edges`` e_0 < … < e_n, as one rigorous array
        bracket of n + 2 entries: P(L <= e_0), P(e_i < L <= e_{i+1}) for i < n, P(L > e_n) (infinite
        loss included). Each cell mass is a difference of ball values taken on the side of the
        median it lies on (CDF differences below it, SF differences above), so masses far in either
        tail keep their relative accuracy; the float :meth:`loss_cdf` only picks the side."""
        xs = check_real_array("edges", edges)
        if np.any(np.diff(xs) <= 0):
            raise InvalidArgument("edges", edges, "must be strictly increasing")
        _check_measure(under)
        pair, measure = self._orient_measure(direction, under)
        use_cdf = pair._loss_cdf(xs, measure, True) <= 0.5
        memo: dict[tuple[bool, int], arb] = {}

        def ball(cdf: bool, i: int) -> arb:
            if (cdf, i) not in memo:
                hook = pair._loss_cdf_arb if cdf else pair._loss_sf_arb
                memo[cdf, i] = hook(arb(float(xs[i])), measure, cdf)  # P(L <= x) or P(L > x)
            return memo[cdf, i]

        with with_precision(ARB_PRECISION_BITS):
            balls = [ball(True, 0)]
            for i in range(xs.size - 1):
                if use_cdf[i + 1]:
                    balls.append(ball(True, i + 1) - ball(True, i))
                else:
                    balls.append(ball(False, i) - ball(False, i + 1))
            balls.append(ball(False, xs.size - 1))
        return arb_bracket(balls, clip=(0.0, 1.0))

    def _loss_bracket(self, x, direction: Direction, under: Measure, hook: str, inclusive: bool) -> Bracket:
        scalar = np.ndim(x) == 0
        xs = check_real_array("x", x)
        _check_measure(under)
        pair, measure = self._orient_measure(direction, under)
        fn = getattr(pair, hook)
        balls = evaluate_many(lambda v: fn(v, measure, inclusive), xs)
        bracket = arb_bracket(balls, clip=(0.0, 1.0))
        return bracket[0] if scalar else bracket

    def loss_quantile(self, q: float | npt.ArrayLike, direction: Direction, under: Measure) -> npt.NDArray[np.float64]:
        """Smallest x with P(L <= x) >= q, for q in [0, 1] (the inverse of :meth:`loss_cdf`)."""
        qs = check_real_array("q", q)
        if ((qs < 0) | (qs > 1)).any():
            raise InvalidArgument("q", q, "quantile levels must lie in [0, 1]")
        _check_measure(under)
        pair, measure = self._orient_measure(direction, under)
        return pair._loss_quantile(qs, measure)

    def sample_loss(
        self, size: int, direction: Direction, under: Measure, rng: np.random.Generator | int | None = None
    ) -> npt.NDArray[np.float64]:
        """``size`` i.i.d. draws of the direction's privacy loss with the output drawn from ``under``."""
        n = check_integer("size", size, minimum=0)
        _check_measure(under)
        pair, measure = self._orient_measure(direction, under)
        return pair._sample_loss(n, np.random.default_rng(rng), measure)

    def total_variation(self) -> Bracket:
        """TV(P, Q) = δ(0), equal in both directions (Steinke 2022, §3)."""
        return self.delta(0.0, Direction.REMOVE)

    def _orient_measure(self, direction: Direction, under: Measure) -> tuple["DominatingPair", Measure]:
        """For ADD, the swapped pair's (P, Q) are this pair's (Q, P)."""
        if direction is Direction.REMOVE:
            return self, under
        return self.oriented(direction), (Measure.Q if under is Measure.P else Measure.P)


def _check_measure(under: Measure) -> None:
    if not isinstance(under, Measure):
        raise InvalidArgument("under", under, "must be Measure.P or Measure.Q")


_FLOAT_MAX = sys.float_info.max

#: Largest ε0 (a pure-DP parameter, a log-ratio of masses) for which binary64 methods are used:
#: e^ε0 must stay finite with room to spare (e^700 ≈ 1e304).
EPS0_FLOAT_MAX = 700.0


def eps0_range_issue(name: str, epsilon0: float) -> str | None:
    """The reason binary64 methods decline a pair whose log-ratio ``epsilon0`` exceeds
    EPS0_FLOAT_MAX (e^ε0 overflows), or None."""
    if epsilon0 <= EPS0_FLOAT_MAX:
        return None
    return (
        f"{name} = {epsilon0:g} is outside the binary64 range this method computes in (<= {EPS0_FLOAT_MAX:g}: "
        "e^ε0 must not overflow); only the ball-arithmetic closed forms answer here"
    )


def _bisect(holds: Callable[[float], bool], lo: float, hi: float, keep: str = "high") -> float:
    """Bisection on a predicate that is False at ``lo`` and True at ``hi`` (monotone up to rounding).

    Returns the True end (``keep="high"``) or the False end (``keep="low"``) once the interval is a
    few ulps wide; the returned point's predicate value is the one the caller relies on.
    """
    while hi - lo > _EPSILON_ULPS * math.ulp(max(abs(lo), abs(hi), 1e-300)):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if holds(mid):
            hi = mid
        else:
            lo = mid
    return hi if keep == "high" else lo
