"""Slow, trusted mpmath references for the privacy of simple dominating pairs.

Every function here recomputes a privacy quantity *from its definition* (numerical integration
of densities, or exact summation over a finite outcome space) at a chosen precision, so that the
fast closed-form code elsewhere in the package can be tested against an independent oracle.
Nothing here uses a closed form for δ(ε) or for a Rényi divergence (the one closed form used is
the lognormal call price inside the t = 2 allocation profile, an inner expectation, not δ), and
nothing imports another ``verifier`` module: only :mod:`mpmath` and the standard library.

Conventions (fixed for the whole project)
------------------------------------------
* A *pair* is (P, Q) = (R(*), R(⊥)).  The privacy loss is ℓ = ln(P/Q).
* Direction ``"remove"``: δ(ε) = H_{e^ε}(P‖Q) = sup_S P(S) − e^ε Q(S) = ∫ (p − e^ε q)_+, the loss
  is L = ln(P/Q), and the PLD is the law of L under P.
* Direction ``"add"``: δ(ε) = H_{e^ε}(Q‖P); the loss is L = ln(Q/P) = −ℓ, and the PLD is its law
  under Q.
* In both directions we write (A, B) for the oriented pair: (A, B) = (P, Q) for remove and
  (Q, P) for add.  Then δ(ε) = ∫ (a − e^ε b)_+, D_α = (1/(α−1)) ln ∫ a^α b^{1−α}, L = ln(A/B).
* Gaussian(σ, Δ): P = N(Δ, σ²), Q = N(0, σ²).  Laplace(b, Δ): P = Lap(Δ, b), Q = Lap(0, b).
  Randomized response RR(ε0, k): Z = e^{ε0}+k−1, P(1) = e^{ε0}/Z, Q(0) = e^{ε0}/Z, all other
  masses 1/Z.  DiscretePair(p, q): finite probability vectors.

Precision: each function takes ``dps`` (decimal digits, default 50), computes at ``dps`` plus a
few guard digits under :func:`mpmath.workdps`, and returns an :class:`mpmath.mpf` rounded to
``dps`` digits (``mpmath.inf`` where the quantity is infinite).  Float inputs are converted
exactly (``mpmath.mpf(float)`` is exact).  Integrands are divided by their largest sampled
value and integrated piecewise between breakpoints placed on the integrand's own scale
(Gauss–Legendre on finite pieces, tanh-sinh on infinite ones); a pass whose result is still small
is redone on the integrand divided by it, so that mpmath's absolute error target becomes a
relative one.  A quadrature whose own error estimate is not small relative to its result, or a
root that fails its post-condition, raises :class:`ReferenceAccuracyError` (never a silent value).

Sources: Steinke 2022 ("Composition of DP & privacy amplification by subsampling",
arXiv 2210.00597) Def 2, Prop 3, Prop 7, Def 32; Feldman & Shenfeld (random allocation),
Lemma F.1; Kairouz, Oh & Viswanath 2015 (optimal composition of randomized response).
"""

from __future__ import annotations

import abc

from collections.abc import Iterable, Sequence
from typing import Any, Callable

import mpmath

__all__ = [
    "DEFAULT_DPS",
    "ReferenceAccuracyError",
    "discrete_delta",
    "discrete_epsilon",
    "discrete_loss_cdf",
    "discrete_moment",
    "discrete_pld_delta",
    "discrete_renyi",
    "gaussian_allocation_t2_delta",
    "gaussian_delta",
    "gaussian_epsilon",
    "gaussian_loss_cdf",
    "gaussian_moment",
    "gaussian_renyi",
    "laplace_delta",
    "laplace_epsilon",
    "laplace_loss_cdf",
    "laplace_moment",
    "laplace_renyi",
    "rr_composed_delta",
    "rr_delta",
    "rr_epsilon",
    "rr_loss_cdf",
    "rr_moment",
    "rr_renyi",
]

#: Default working precision in decimal digits.
DEFAULT_DPS = 50
#: Extra digits carried internally, so that the returned value is good to about ``dps`` digits.
_GUARD_DPS = 10
#: Below this many digits the references are no better than float64 and are refused.
_MIN_DPS = 15
#: The integrand is divided by its largest sampled value; a first-pass quadrature below this is
#: redone after dividing by the first pass (mpmath's error target is absolute, and the guard
#: digits absorb a loss of up to 6 digits).
_RESCALE_BELOW = mpmath.mpf("1e-6")
#: Breakpoints are placed at anchor ± scale·2^k for k in this range; those where the integrand is
#: negligible are pruned.  2^12 scale units cover a decay of e^{-4096}, past 10^{-(dps+guard)}
#: for any dps up to ~1700.
_BREAK_POWERS = range(-2, 13, 2)
#: The ε(δ) root finders bisect until the bracket is this narrow, then switch to Anderson–Björck.
_BRACKET_WIDTH = mpmath.mpf(1) / 4
#: Largest number of bracket doublings in the ε(δ) root finders.
_MAX_BRACKET_STEPS = 2000
#: Post-condition of the ε(δ) root finders: δ must cross the target within
#: ±10^{-(dps-_ROOT_SLACK_DIGITS)}·(1 + |ε*|) of the returned ε*.
_ROOT_SLACK_DIGITS = 8
#: Tolerance on "a probability vector sums to one" for float input vectors.
_MASS_TOL = 1e-9

_REMOVE = "remove"
_ADD = "add"


class ReferenceAccuracyError(ArithmeticError):
    """A reference computation could not reach the requested accuracy (quadrature or root)."""


# ---------------------------------------------------------------------------------------------
# Argument handling
# ---------------------------------------------------------------------------------------------


def _check_dps(dps: Any) -> int:
    if isinstance(dps, bool) or not isinstance(dps, int):
        raise TypeError(f"dps={dps!r}: the working precision must be an int number of decimal digits")
    if dps < _MIN_DPS:
        raise ValueError(f"dps={dps}: a reference needs at least {_MIN_DPS} digits; pass dps>={_MIN_DPS}")
    return dps


def _as_name(value: Any) -> Any:
    """Accept a plain string or an enum-like object whose ``.value`` is the string."""
    inner = getattr(value, "value", value)
    return inner


def _direction(direction: Any) -> str:
    name = _as_name(direction)
    if isinstance(name, str) and name.lower() in (_ADD, _REMOVE):
        return name.lower()
    raise ValueError(f"direction={direction!r}: expected 'add' or 'remove' (or a Direction enum member)")


def _measure(under: Any) -> str:
    name = _as_name(under)
    if isinstance(name, str) and name.upper() in ("P", "Q"):
        return name.upper()
    raise ValueError(f"under={under!r}: expected 'P' (output drawn from R(*)) or 'Q' (from R(⊥))")


def _real(name: str, value: Any, *, positive: bool = False, allow_inf: bool = False) -> mpmath.mpf:
    """Convert ``value`` exactly to an mpf, rejecting NaN, and infinities unless allowed."""
    if isinstance(value, bool):
        raise TypeError(f"{name}={value!r}: expected a real number, not a bool")
    try:
        x = mpmath.mpf(value)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name}={value!r}: expected a real number") from exc
    if mpmath.isnan(x):
        raise ValueError(f"{name}={value!r}: NaN is not a valid {name}")
    if mpmath.isinf(x) and not allow_inf:
        raise ValueError(f"{name}={value!r}: must be finite")
    if positive and not x > 0:
        raise ValueError(f"{name}={value!r}: must be > 0")
    return x


def _order(name: str, value: Any) -> mpmath.mpf:
    x = _real(name, value)
    if not x > 0:
        raise ValueError(f"{name}={value!r}: the Rényi order must be > 0 (alpha = 1 gives KL)")
    return x


def _prob_vector(name: str, values: Any) -> list:
    try:
        seq = list(values)
    except TypeError as exc:
        raise TypeError(f"{name}={values!r}: expected a sequence of probabilities") from exc
    if not seq:
        raise ValueError(f"{name}: the probability vector is empty")
    out = []
    for i, v in enumerate(seq):
        x = _real(f"{name}[{i}]", v)
        if x < 0:
            raise ValueError(f"{name}[{i}]={v!r}: probabilities must be >= 0")
        out.append(x)
    return out


def _pair_vectors(p: Any, q: Any) -> tuple[list, list]:
    pv = _prob_vector("p", p)
    qv = _prob_vector("q", q)
    if len(pv) != len(qv):
        raise ValueError(f"len(p)={len(pv)} != len(q)={len(qv)}: p and q must index the same outcomes")
    for name, vec in (("p", pv), ("q", qv)):
        total = mpmath.fsum(vec)
        if abs(total - 1) > _MASS_TOL:
            raise ValueError(
                f"sum({name})={mpmath.nstr(total, 17)}: a probability vector must sum to 1 "
                f"(within {_MASS_TOL}); normalise it first"
            )
    return pv, qv


def _finish(value: Any, dps: int) -> mpmath.mpf:
    """Round an internal (guard-digit) result to ``dps`` digits."""
    with mpmath.workdps(dps):
        return +mpmath.mpf(value)


def _orient(direction: str, p: Any, q: Any) -> tuple[Any, Any]:
    """(A, B) = (P, Q) for remove and (Q, P) for add."""
    return (p, q) if direction == _REMOVE else (q, p)


# ---------------------------------------------------------------------------------------------
# Quadrature with relative accuracy
# ---------------------------------------------------------------------------------------------


def _breakpoints(lo: Any, hi: Any, center: Any, extras: Iterable[Any], scales: Iterable[Any]) -> list:
    """Sorted breakpoints in [lo, hi]: the ends, ``extras`` inside, and center ± s·2^k."""
    pts = {lo, hi, center}
    pts.update(c for c in extras if mpmath.isfinite(c) and lo < c < hi)
    for s in scales:
        if not (s > 0 and mpmath.isfinite(s)):
            continue
        for k in _BREAK_POWERS:
            step = s * mpmath.ldexp(1, k)
            for x in (center - step, center + step):
                if lo < x < hi:
                    pts.add(x)
    return sorted(pts)


def _prune(vals: list, pts: list) -> list:
    """Drop breakpoints where the integrand is negligible, keeping one on each side of the rest.

    Outside the kept range the sampled integrand is below 10^{-(dps+5)} of its peak; the
    outermost kept subintervals still run on to the original ends.
    """
    peak = max(vals)
    cut = peak * mpmath.mpf(10) ** (-(mpmath.mp.dps + 5))
    keep = [i for i, v in enumerate(vals) if v >= cut]
    first, last = max(keep[0] - 1, 0), min(keep[-1] + 1, len(pts) - 1)
    return [pts[0]] * (first > 0) + pts[first:last + 1] + [pts[-1]] * (last < len(pts) - 1)


def _quad_pieces(f: Callable, pts: list, analytic: bool = True) -> tuple:
    """Σ over consecutive breakpoints of ∫ f.  Returns (value, error estimate).

    Gauss–Legendre on finite pieces when the integrand is analytic between breakpoints (fast),
    tanh-sinh on pieces that reach ±inf, and everywhere when ``analytic`` is False (tanh-sinh
    tolerates endpoint behaviour that is smooth but not analytic).
    """
    total, error = mpmath.mpf(0), mpmath.mpf(0)
    for a, b in zip(pts[:-1], pts[1:]):
        if a == b:
            continue
        finite = mpmath.isfinite(a) and mpmath.isfinite(b)
        method = "gauss-legendre" if analytic and finite else "tanh-sinh"
        v, e = mpmath.quad(f, [a, b], method=method, error=True)
        total += v
        error += e
    return total, error


def _quad_exp(log_f: Callable, weight: Callable | None, lo: Any, hi: Any, anchors: Sequence,
              scales: Sequence, *, analytic: bool = True) -> mpmath.mpf:
    """∫_lo^hi exp(log_f(y))·weight(y) dy with relative accuracy (weight ≥ 0, default 1).

    ``anchors`` must contain the point where log_f is largest on [lo, hi] (a mode clipped to
    the interval, or a kink) and every kink; ``scales`` are the widths on which the integrand
    varies.  Breakpoints go at the kinks and at m ± scale·2^k around the maximiser m of log_f
    among the anchors; the integrand is divided by its largest sampled value, breakpoints where
    it is negligible are pruned, and the quadrature is redone on the integrand divided
    by the first pass when that is small, so that mpmath's absolute error target is a relative one.
    """
    if not lo < hi:
        return mpmath.mpf(0)
    finite = [c for c in list(anchors) + [lo, hi] if mpmath.isfinite(c) and lo <= c <= hi]
    if not finite:
        raise ValueError("internal: no finite anchor inside the integration range")
    logs = [log_f(c) for c in finite]
    log_ref = max(logs)
    center = finite[logs.index(log_ref)]
    pts = _breakpoints(lo, hi, center, anchors, scales)

    def g0(y):
        v = mpmath.exp(log_f(y) - log_ref)
        return v if weight is None else v * weight(y)

    vals = [abs(g0(x)) if mpmath.isfinite(x) else mpmath.mpf(0) for x in pts]
    peak = max(vals)
    if peak == 0:
        peak = mpmath.mpf(1)
    else:
        pts = _prune(vals, pts)

    def g(y):
        return g0(y) / peak

    first, err = _quad_pieces(g, pts, analytic)
    if first == 0:
        return mpmath.mpf(0)
    if abs(first) < _RESCALE_BELOW:
        def g2(y):
            return g(y) / first

        second, err2 = _quad_pieces(g2, pts, analytic)
        value, rel_err = first * second, err2 / abs(second)
    else:
        value, rel_err = first, err / abs(first)
    if rel_err > mpmath.mpf(10) ** (-(mpmath.mp.dps - _GUARD_DPS - 2)):
        raise ReferenceAccuracyError(
            f"quadrature error estimate {mpmath.nstr(rel_err, 3)} (relative) exceeds the target "
            f"for dps={mpmath.mp.dps - _GUARD_DPS}; lower dps or report the parameters"
        )
    return mpmath.exp(log_ref) * peak * value


# ---------------------------------------------------------------------------------------------
# Continuous pairs on the real line (Gaussian, Laplace)
# ---------------------------------------------------------------------------------------------


class _ContinuousPair(abc.ABC):
    """Densities p, q on ℝ whose REMOVE loss ℓ(y) = ln(p(y)/q(y)) is non-decreasing in y.

    Subclasses give log p, log q, ℓ (computed from its formula for accuracy), the level-set
    boundaries of ℓ, kinks of the log densities, the modes, and the natural width.
    """

    kinks: tuple = ()
    width: Any = None

    @abc.abstractmethod
    def log_p(self, y):
        """log p(y)."""

    @abc.abstractmethod
    def log_q(self, y):
        """log q(y)."""

    @abc.abstractmethod
    def loss(self, y):
        """ℓ(y) = log p(y) − log q(y), from its closed form."""

    @abc.abstractmethod
    def sup_le(self, c):
        """sup{y : ℓ(y) ≤ c}  (−inf if the set is empty): {ℓ ≤ c} = (−inf, sup_le(c)]."""

    @abc.abstractmethod
    def inf_ge(self, c):
        """inf{y : ℓ(y) ≥ c}  (+inf if the set is empty): {ℓ ≥ c} = [inf_ge(c), inf)."""

    def modes(self):
        """Points where log p, log q or their tilts can be largest."""
        return ()

    def tilt_scales(self, t):
        """Widths on which a^t b^{1−t} varies."""
        return (self.width,)

    def log_density(self, which: str) -> Callable:
        return self.log_p if which == "P" else self.log_q

    # -- quantities from the definitions ----------------------------------------------------

    def delta(self, eps, direction: str):
        """∫ (a − e^ε b)_+ over the set where it is positive, written a·(1 − e^{ε − L})."""
        if eps == mpmath.inf:
            return mpmath.mpf(0)  # no infinite loss for these pairs
        if eps == mpmath.ninf:
            return mpmath.mpf(1)
        if direction == _REMOVE:
            # {ℓ > ε} = (sup_le(ε), inf); integrand p·(1 − e^{ε − ℓ}).
            lo, hi = self.sup_le(eps), mpmath.inf
            log_a = self.log_p

            def weight(y):
                return -mpmath.expm1(eps - self.loss(y))
        else:
            # {−ℓ > ε} = {ℓ < −ε} = (−inf, inf_ge(−ε)); integrand q·(1 − e^{ε + ℓ}).
            lo, hi = mpmath.ninf, self.inf_ge(-eps)
            log_a = self.log_q

            def weight(y):
                return -mpmath.expm1(eps + self.loss(y))
        if not lo < hi:
            return mpmath.mpf(0)
        anchors = list(self.kinks) + list(self.modes())
        scales = self.tilt_scales(1) + self._local_scales(log_a, lo, hi)
        return _quad_exp(log_a, weight, lo, hi, anchors, scales)

    def moment(self, t, direction: str):
        """∫ a(y)^t b(y)^{1−t} dy = E_B[(A/B)^t]  (A, B oriented by direction)."""
        log_a, log_b = _orient(direction, self.log_p, self.log_q)

        def log_f(y):
            return t * log_a(y) + (1 - t) * log_b(y)

        anchors = list(self.kinks) + list(self.tilt_modes(t, direction))
        return _quad_exp(log_f, None, mpmath.ninf, mpmath.inf, anchors, self.tilt_scales(t))

    def kl(self, direction: str):
        """∫ a·ln(a/b) = E_A[L], split where L changes sign so each piece has one sign."""
        log_a = self.log_density("P" if direction == _REMOVE else "Q")
        sign = 1 if direction == _REMOVE else -1  # L = sign·ℓ

        def abs_loss(y):
            return abs(self.loss(y))

        y0 = self.sup_le(mpmath.mpf(0))  # ℓ ≤ 0 on (−inf, y0], ℓ > 0 beyond
        anchors = list(self.kinks) + list(self.modes())
        neg = _quad_exp(log_a, abs_loss, mpmath.ninf, y0, anchors, (self.width,))
        pos = _quad_exp(log_a, abs_loss, y0, mpmath.inf, anchors, (self.width,))
        return sign * (pos - neg)

    def loss_cdf(self, x, direction: str, under: str):
        """P_under(L ≤ x) by integrating the density of ``under`` over {y : L(y) ≤ x}."""
        if direction == _REMOVE:
            lo, hi = mpmath.ninf, self.sup_le(x)  # {ℓ ≤ x}
        else:
            lo, hi = self.inf_ge(-x), mpmath.inf  # {−ℓ ≤ x} = {ℓ ≥ −x}
        log_d = self.log_density(under)
        if not lo < hi:
            return mpmath.mpf(0)
        if lo == mpmath.ninf and hi == mpmath.inf:
            return mpmath.mpf(1)
        anchors = list(self.kinks) + list(self.modes())
        scales = (self.width,) + self._local_scales(log_d, lo, hi)
        return _quad_exp(log_d, None, lo, hi, anchors, scales)

    # -- helpers ----------------------------------------------------------------------------

    def tilt_modes(self, t, direction):
        """Points where a^t b^{1−t} can be largest."""
        return self.modes()

    def _local_scales(self, log_f, lo, hi):
        """Decay length of exp(log_f) at a finite end of [lo, hi] (for a far-tail region)."""
        out = []
        for end in (lo, hi):
            if mpmath.isfinite(end):
                h = self.width * mpmath.mpf(2) ** -20
                slope = abs(log_f(end + h) - log_f(end - h)) / (2 * h)
                if slope > 0:
                    out.append(min(self.width, 1 / slope))
        return tuple(out)


class _Gaussian(_ContinuousPair):
    """P = N(Δ, σ²), Q = N(0, σ²); ℓ(y) = Δ(2y − Δ)/(2σ²)  (Steinke 2022, Prop 3)."""

    def __init__(self, sigma, sensitivity):
        self.sigma = sigma
        self.sens = sensitivity
        self.width = sigma
        self._log_norm = -mpmath.log(sigma * mpmath.sqrt(2 * mpmath.pi))

    def log_p(self, y):
        return self._log_norm - (y - self.sens) ** 2 / (2 * self.sigma**2)

    def log_q(self, y):
        return self._log_norm - y**2 / (2 * self.sigma**2)

    def loss(self, y):
        return self.sens * (2 * y - self.sens) / (2 * self.sigma**2)

    def _inverse(self, c):
        # ℓ is strictly increasing and affine: ℓ(y) = c  <=>  y = σ²c/Δ + Δ/2.
        if mpmath.isinf(c):
            return c
        return self.sigma**2 * c / self.sens + self.sens / 2

    def sup_le(self, c):
        return self._inverse(c)

    def inf_ge(self, c):
        return self._inverse(c)

    def modes(self):
        return (mpmath.mpf(0), self.sens)

    def tilt_modes(self, t, direction):
        # a^t b^{1−t} is a Gaussian density (times a constant) centred at t·μ_A + (1 − t)·μ_B.
        mu_a, mu_b = _orient(direction, self.sens, mpmath.mpf(0))
        return (t * mu_a + (1 - t) * mu_b,)


class _Laplace(_ContinuousPair):
    """P = Lap(Δ, b), Q = Lap(0, b); ℓ(y) = (|y| − |y − Δ|)/b ∈ [−ε0, ε0], ε0 = Δ/b."""

    def __init__(self, scale, sensitivity):
        self.b = scale
        self.sens = sensitivity
        self.eps0 = sensitivity / scale
        self.width = scale
        self.kinks = (mpmath.mpf(0), sensitivity)
        self._log_norm = -mpmath.log(2 * scale)

    def log_p(self, y):
        return self._log_norm - abs(y - self.sens) / self.b

    def log_q(self, y):
        return self._log_norm - abs(y) / self.b

    def loss(self, y):
        if y <= 0:
            return -self.eps0
        if y >= self.sens:
            return self.eps0
        return (2 * y - self.sens) / self.b

    def _inverse(self, c):
        # On the middle piece ℓ(y) = (2y − Δ)/b = c  <=>  y = (cb + Δ)/2.
        return (c * self.b + self.sens) / 2

    def sup_le(self, c):
        if c < -self.eps0:
            return mpmath.ninf
        if c >= self.eps0:
            return mpmath.inf
        return self._inverse(c)

    def inf_ge(self, c):
        if c <= -self.eps0:
            return mpmath.ninf
        if c > self.eps0:
            return mpmath.inf
        return self._inverse(c)

    def modes(self):
        return self.kinks

    def tilt_scales(self, t):
        # On (0, Δ) the tilted log density has slope ±(2t − 1)/b.
        steep = max(mpmath.mpf(1), abs(2 * t - 1))
        return (self.b, self.b / steep)


def _gaussian(sigma, sensitivity) -> _Gaussian:
    return _Gaussian(_real("sigma", sigma, positive=True), _real("sensitivity", sensitivity, positive=True))


def _laplace(scale, sensitivity) -> _Laplace:
    return _Laplace(_real("scale", scale, positive=True), _real("sensitivity", sensitivity, positive=True))


def _renyi_from_moment(moment, alpha):
    """D_α = ln(moment)/(α − 1)  (Steinke 2022, Def 32, third form)."""
    if moment == mpmath.inf:
        return mpmath.inf
    return mpmath.log(moment) / (alpha - 1)


def _epsilon_root(delta_fn: Callable, target, *, hi, start, log_scale: bool):
    """ε(δ) = inf{ε : δ_fn(ε) ≤ target} for a continuous non-increasing δ_fn, 0 < target < 1.

    δ_fn must be strictly decreasing wherever it exceeds ``target``.  ``hi`` is a point with
    δ_fn(hi) ≤ target, or None to search upward from ``start``.  Since δ(ε) ≥ 1 − e^ε (take S = the
    whole space), ε = ln(1 − target) − 1 always has δ > target.  The bracket is bisected down to
    ``_BRACKET_WIDTH``; then the root of logit δ_fn − logit target (``log_scale``: Gaussian tails
    and δ near 1) or of δ_fn/target − 1 is found by mpmath's Anderson–Björck bracketing solver and
    checked against its post-condition (δ crosses the target within a few ulps of the root).
    """
    lo = None
    if hi is None:
        hi, step = start, mpmath.mpf(1)
        for _ in range(_MAX_BRACKET_STEPS):
            if delta_fn(hi) <= target:
                break
            lo, hi, step = hi, hi + step, 2 * step
        else:
            raise ReferenceAccuracyError(f"could not bracket ε(δ={mpmath.nstr(target, 5)}) from above")
    if lo is None:
        floor = mpmath.log1p(-target) - 1  # δ(floor) ≥ 1 − e^floor > target
        lo, step = hi - 1, mpmath.mpf(1)
        while lo > floor and not delta_fn(lo) > target:
            lo, step = lo - step, 2 * step
        lo = max(lo, floor)

    def g(e):
        d = delta_fn(e)
        if log_scale:  # logit: well scaled both for δ → 0 (Gaussian tails) and for δ → 1
            return mpmath.log(d) - mpmath.log1p(-d) - logit_target
        return d / target - 1

    logit_target = mpmath.log(target) - mpmath.log1p(-target)
    # A few bisection steps first: regula-falsi variants are slow on a wide, lopsided bracket.
    while hi - lo > _BRACKET_WIDTH:
        mid = (lo + hi) / 2
        if delta_fn(mid) > target:
            lo = mid
        else:
            hi = mid
    if delta_fn(hi) == target:
        root = hi
    else:
        root = mpmath.findroot(g, (lo, hi), solver="anderson", maxsteps=500, verify=False)
    if not lo <= root <= hi:
        raise ReferenceAccuracyError(
            f"ε(δ={mpmath.nstr(target, 8)}): root finder left its bracket [{mpmath.nstr(lo, 8)}, "
            f"{mpmath.nstr(hi, 8)}] (got {mpmath.nstr(root, 8)})"
        )
    # Post-condition on ε itself: δ crosses the target within η(1 + |ε*|) of the root.
    eta = mpmath.mpf(10) ** (-(mpmath.mp.dps - _GUARD_DPS - _ROOT_SLACK_DIGITS)) * (1 + abs(root))
    if not (delta_fn(root - eta) > target >= delta_fn(root + eta)):
        raise ReferenceAccuracyError(
            f"ε(δ={mpmath.nstr(target, 8)}): δ does not cross the target within ±{mpmath.nstr(eta, 3)} "
            f"of the root {mpmath.nstr(root, 12)}"
        )
    return root


# ---------------------------------------------------------------------------------------------
# Gaussian
# ---------------------------------------------------------------------------------------------


def gaussian_delta(sigma, epsilon, direction, sensitivity=1, *, dps: int = DEFAULT_DPS) -> mpmath.mpf:
    """Privacy profile δ(ε) of the Gaussian pair by numerical integration of the hockey stick.

    Computes H_{e^ε}(A‖B) = ∫ (a(y) − e^ε b(y))_+ dy for P = N(Δ, σ²), Q = N(0, σ²), with
    (A, B) = (P, Q) for ``"remove"`` and (Q, P) for ``"add"``, for every real ε (±inf allowed).
    The integral runs over the half-line where the likelihood ratio exceeds e^ε (its end is the
    solution of the affine equation ℓ(y) = ±ε), with integrand a·(1 − e^{ε − L}).
    Definition: Steinke 2022, Prop 7 (hockey-stick divergence; maximizing set S_*).  This is the
    slow twin of the closed form of Cor 8 (Balle & Wang 2018), which it does not use.
    """
    dps = _check_dps(dps)
    with mpmath.workdps(dps + _GUARD_DPS):
        pair = _gaussian(sigma, sensitivity)
        eps = _real("epsilon", epsilon, allow_inf=True)
        return _finish(pair.delta(eps, _direction(direction)), dps)


def _renyi_of(pair, alpha, direction, dps: int) -> mpmath.mpf:
    """D_α(A‖B) of a reference pair: KL at α = 1, else (1/(α−1)) ln E_B[(A/B)^α] (Steinke 2022, Def 32)."""
    a = _order("alpha", alpha)
    d = _direction(direction)
    return _finish(pair.kl(d) if a == 1 else _renyi_from_moment(pair.moment(a, d), a), dps)


def gaussian_renyi(sigma, alpha, direction, sensitivity=1, *, dps: int = DEFAULT_DPS) -> mpmath.mpf:
    """Rényi divergence D_α(A‖B) of the Gaussian pair by numerical integration.

    D_α = (1/(α−1)) ln ∫ a^α b^{1−α} dy (Steinke 2022, Def 32); α = 1 gives KL = ∫ a ln(a/b).
    Any real α > 0.  (A, B) = (P, Q) for ``"remove"``, (Q, P) for ``"add"``.
    """
    dps = _check_dps(dps)
    with mpmath.workdps(dps + _GUARD_DPS):
        pair = _gaussian(sigma, sensitivity)
        return _renyi_of(pair, alpha, direction, dps)


def gaussian_moment(sigma, a, direction, sensitivity=1, *, dps: int = DEFAULT_DPS) -> mpmath.mpf:
    """Likelihood-ratio moment E_B[(A/B)^a] = ∫ a(y)^a b(y)^{1−a} dy of the Gaussian pair.

    For any real a, by numerical integration (Steinke 2022, Lemma 6: E_Q[(P/Q)^{t+1}]).
    """
    dps = _check_dps(dps)
    with mpmath.workdps(dps + _GUARD_DPS):
        pair = _gaussian(sigma, sensitivity)
        return _finish(pair.moment(_real("a", a), _direction(direction)), dps)


def gaussian_loss_cdf(sigma, x, direction, under, sensitivity=1, *, dps: int = DEFAULT_DPS) -> mpmath.mpf:
    """P_{Y~under}(L(Y) ≤ x) for the Gaussian pair, L = ln(A/B) the direction's privacy loss.

    Integrates the density of ``under`` ("P" or "Q") over {y : L(y) ≤ x}, a half-line bounded by
    the solution of L(y) = x.  Under the direction's own measure (P for remove, Q for add) this is
    the CDF of the PLD (Steinke 2022, Def 2; Prop 3 gives its law N(ρ, 2ρ), which is not used).
    """
    dps = _check_dps(dps)
    with mpmath.workdps(dps + _GUARD_DPS):
        pair = _gaussian(sigma, sensitivity)
        xv = _real("x", x, allow_inf=True)
        return _finish(pair.loss_cdf(xv, _direction(direction), _measure(under)), dps)


def gaussian_epsilon(sigma, delta, direction, sensitivity=1, *, dps: int = DEFAULT_DPS) -> mpmath.mpf:
    """ε(δ) = inf{ε ∈ ℝ : δ(ε) ≤ δ} for the Gaussian pair, by root finding on :func:`gaussian_delta`.

    Anderson–Björck bracketing (mpmath.findroot) on ln δ_ref(ε) − ln δ.  Returns +inf for δ ≤ 0 and
    −inf for δ ≥ 1.
    """
    dps = _check_dps(dps)
    with mpmath.workdps(dps + _GUARD_DPS):
        pair = _gaussian(sigma, sensitivity)
        target = _real("delta", delta)
        d = _direction(direction)
        if target <= 0:
            return _finish(mpmath.inf, dps)
        if target >= 1:
            return _finish(mpmath.ninf, dps)
        rho = pair.sens**2 / (2 * pair.sigma**2)
        root = _epsilon_root(lambda e: pair.delta(e, d), target, hi=None, start=rho, log_scale=True)
        return _finish(root, dps)


# ---------------------------------------------------------------------------------------------
# Laplace
# ---------------------------------------------------------------------------------------------


def laplace_delta(scale, epsilon, direction, sensitivity=1, *, dps: int = DEFAULT_DPS) -> mpmath.mpf:
    """Privacy profile δ(ε) of the Laplace pair by piecewise numerical integration.

    H_{e^ε}(A‖B) = ∫ (a − e^ε b)_+ for P = Lap(Δ, b), Q = Lap(0, b), split at the kinks 0, Δ and
    at the point where the likelihood ratio crosses e^ε (Steinke 2022, Prop 7).  Any real ε.
    Not derived from the closed form 1 − e^{(ε−ε0)/2} (notes §13 D5), which it is tested against.
    """
    dps = _check_dps(dps)
    with mpmath.workdps(dps + _GUARD_DPS):
        pair = _laplace(scale, sensitivity)
        eps = _real("epsilon", epsilon, allow_inf=True)
        return _finish(pair.delta(eps, _direction(direction)), dps)


def laplace_renyi(scale, alpha, direction, sensitivity=1, *, dps: int = DEFAULT_DPS) -> mpmath.mpf:
    """Rényi divergence D_α(A‖B) of the Laplace pair by piecewise numerical integration.

    D_α = (1/(α−1)) ln ∫ a^α b^{1−α} (Steinke 2022, Def 32); α = 1 gives KL.  Any real α > 0.
    (Mironov 2017's closed form is the test oracle, not used here.)
    """
    dps = _check_dps(dps)
    with mpmath.workdps(dps + _GUARD_DPS):
        pair = _laplace(scale, sensitivity)
        return _renyi_of(pair, alpha, direction, dps)


def laplace_moment(scale, a, direction, sensitivity=1, *, dps: int = DEFAULT_DPS) -> mpmath.mpf:
    """E_B[(A/B)^a] = ∫ a^a b^{1−a} for the Laplace pair, by piecewise integration (any real a)."""
    dps = _check_dps(dps)
    with mpmath.workdps(dps + _GUARD_DPS):
        pair = _laplace(scale, sensitivity)
        return _finish(pair.moment(_real("a", a), _direction(direction)), dps)


def laplace_loss_cdf(scale, x, direction, under, sensitivity=1, *, dps: int = DEFAULT_DPS) -> mpmath.mpf:
    """P_{Y~under}(L(Y) ≤ x) for the Laplace pair by integrating over {y : L(y) ≤ x}.

    L = ln(A/B) is piecewise: constant ±ε0 outside [0, Δ] (atoms of the PLD), affine inside.
    At an atom x = ±ε0 the comparison is made at the working precision.
    """
    dps = _check_dps(dps)
    with mpmath.workdps(dps + _GUARD_DPS):
        pair = _laplace(scale, sensitivity)
        xv = _real("x", x, allow_inf=True)
        return _finish(pair.loss_cdf(xv, _direction(direction), _measure(under)), dps)


def laplace_epsilon(scale, delta, direction, sensitivity=1, *, dps: int = DEFAULT_DPS) -> mpmath.mpf:
    """ε(δ) = inf{ε ∈ ℝ : δ(ε) ≤ δ} for the Laplace pair by root finding on :func:`laplace_delta`.

    δ(ε) = 0 for ε ≥ ε0 = Δ/b, so δ ≤ 0 returns ε0; δ ≥ 1 returns −inf.
    """
    dps = _check_dps(dps)
    with mpmath.workdps(dps + _GUARD_DPS):
        pair = _laplace(scale, sensitivity)
        target = _real("delta", delta)
        d = _direction(direction)
        if target <= 0:
            return _finish(pair.eps0, dps)
        if target >= 1:
            return _finish(mpmath.ninf, dps)
        # δ(ε0) = 0 ≤ target, and δ is strictly decreasing on (−inf, ε0).
        root = _epsilon_root(lambda e: pair.delta(e, d), target, hi=pair.eps0, start=pair.eps0,
                             log_scale=False)
        return _finish(root, dps)


# ---------------------------------------------------------------------------------------------
# Finite outcome spaces
# ---------------------------------------------------------------------------------------------


class _Discrete:
    """A finite pair with exact (mpf) masses and, optionally, exact REMOVE losses ln(p_i/q_i)."""

    def __init__(self, p: list, q: list, losses: list | None = None):
        self.p = p
        self.q = q
        if losses is None:
            losses = [self._loss(pi, qi) for pi, qi in zip(p, q)]
        self.losses = losses  # REMOVE loss ℓ_i; ±inf where one mass is 0; None where both are 0

    @staticmethod
    def _loss(pi, qi):
        if pi == 0 and qi == 0:
            return None
        if qi == 0:
            return mpmath.inf
        if pi == 0:
            return mpmath.ninf
        return mpmath.log(pi) - mpmath.log(qi)

    def oriented(self, direction: str):
        """(A, B, L) with L_i = ln(A_i/B_i)."""
        if direction == _REMOVE:
            return self.p, self.q, self.losses
        return self.q, self.p, [None if l is None else -l for l in self.losses]

    def delta(self, eps, direction: str):
        """Σ_i (A_i − e^ε B_i)_+ (exact up to rounding at the working precision)."""
        A, B, _ = self.oriented(direction)
        if eps == mpmath.inf:
            return mpmath.fsum(a for a, b in zip(A, B) if b == 0)
        e = mpmath.exp(eps)
        return mpmath.fsum(max(mpmath.mpf(0), a - e * b) for a, b in zip(A, B))

    def moment(self, t, direction: str):
        """Σ_{B_i>0} B_i (A_i/B_i)^t, and +inf if t > 1 and A has mass where B = 0."""
        A, B, _ = self.oriented(direction)
        terms = []
        for a, b in zip(A, B):
            if b == 0:
                if a > 0 and t > 1:
                    return mpmath.inf
                continue
            if a == 0:
                if t > 0:
                    continue
                if t == 0:
                    terms.append(b)
                    continue
                return mpmath.inf
            terms.append(b * mpmath.exp(t * (mpmath.log(a) - mpmath.log(b))))
        return mpmath.fsum(terms)

    def kl(self, direction: str):
        """Σ A_i ln(A_i/B_i); +inf if A has mass where B = 0."""
        A, _, L = self.oriented(direction)
        terms = []
        for a, l in zip(A, L):
            if a == 0:
                continue
            if l == mpmath.inf:
                return mpmath.inf
            terms.append(a * l)
        return mpmath.fsum(terms)

    def loss_cdf(self, x, direction: str, under: str):
        _, _, L = self.oriented(direction)
        mass = self.p if under == "P" else self.q
        return mpmath.fsum(m for m, l in zip(mass, L) if m > 0 and l <= x)

    def top(self, direction: str):
        """(largest finite loss among outcomes with A > 0 and B > 0, mass of infinite loss)."""
        A, B, L = self.oriented(direction)
        finite = [l for a, b, l in zip(A, B, L) if a > 0 and b > 0]
        m_inf = mpmath.fsum(a for a, b in zip(A, B) if b == 0)
        return (max(finite) if finite else None), m_inf

    def epsilon(self, target, direction: str):
        """inf{ε : δ(ε) ≤ target}.  δ is strictly decreasing up to the largest finite loss l_max
        (its slope is −e^ε·B(L > ε) < 0 there) and equals the infinite-loss mass beyond it."""
        if target >= 1:
            return mpmath.ninf
        l_max, m_inf = self.top(direction)
        if target < m_inf:
            return mpmath.inf
        if l_max is None:
            return mpmath.ninf  # no finite loss: δ ≡ m_inf ≤ target for every ε
        if target == m_inf:
            return l_max  # the constant part δ ≡ m_inf starts exactly at l_max
        # δ(l_max) = m_inf up to rounding of e^{l_max}·B at the working precision; step past it.
        hi = l_max + abs(l_max) * mpmath.mpf(10) ** (-(mpmath.mp.dps - 2)) + mpmath.mpf(10) ** (-(mpmath.mp.dps - 2))
        if self.delta(l_max, direction) <= target:
            hi = l_max
        return _epsilon_root(lambda e: self.delta(e, direction), target, hi=hi, start=l_max,
                             log_scale=False)


def _discrete(p, q) -> _Discrete:
    pv, qv = _pair_vectors(p, q)
    return _Discrete(pv, qv)


def _rr(epsilon0, k) -> _Discrete:
    """RR(ε0, k) with masses built in mpmath and exact REMOVE losses (−ε0, +ε0, 0, …, 0)."""
    e0 = _real("epsilon0", epsilon0)
    if e0 < 0:
        raise ValueError(f"epsilon0={epsilon0!r}: must be >= 0")
    if isinstance(k, bool) or not isinstance(k, int) or k < 2:
        raise ValueError(f"k={k!r}: randomized response needs an integer number of outputs k >= 2")
    z = mpmath.exp(e0) + (k - 1)
    hi, lo = mpmath.exp(e0) / z, 1 / z
    p = [lo] * k
    q = [lo] * k
    p[1] = hi
    q[0] = hi
    losses = [mpmath.mpf(0)] * k
    losses[0] = -e0
    losses[1] = e0
    return _Discrete(p, q, losses)


def discrete_delta(p, q, epsilon, direction, *, dps: int = DEFAULT_DPS) -> mpmath.mpf:
    """Hockey-stick divergence of a finite pair by exact summation.

    Σ_i (A_i − e^ε B_i)_+ with (A, B) = (p, q) for ``"remove"`` and (q, p) for ``"add"``
    (Steinke 2022, Prop 7 / notes §11.1 H1, discrete form).  Inputs are converted exactly; q may
    be 0 where p > 0 (infinite loss: that mass always counts in δ).  Any real ε (±inf allowed).
    """
    dps = _check_dps(dps)
    with mpmath.workdps(dps + _GUARD_DPS):
        pair = _discrete(p, q)
        eps = _real("epsilon", epsilon, allow_inf=True)
        return _finish(pair.delta(eps, _direction(direction)), dps)


def discrete_renyi(p, q, alpha, direction, *, dps: int = DEFAULT_DPS) -> mpmath.mpf:
    """D_α(A‖B) = (1/(α−1)) ln Σ_i B_i (A_i/B_i)^α of a finite pair, exact sum (Steinke 2022, Def 32).

    +inf for α > 1 if A has mass where B = 0; α = 1 gives KL = Σ A_i ln(A_i/B_i).  Real α > 0.
    """
    dps = _check_dps(dps)
    with mpmath.workdps(dps + _GUARD_DPS):
        pair = _discrete(p, q)
        return _renyi_of(pair, alpha, direction, dps)


def discrete_moment(p, q, a, direction, *, dps: int = DEFAULT_DPS) -> mpmath.mpf:
    """E_B[(A/B)^a] = Σ_{B_i > 0} B_i (A_i/B_i)^a of a finite pair (exact sum, any real a).

    Returns +inf when a > 1 and A has mass where B = 0 (the convention that makes D_α = +inf), and
    when a < 0 and A = 0 at some outcome with B > 0.
    """
    dps = _check_dps(dps)
    with mpmath.workdps(dps + _GUARD_DPS):
        pair = _discrete(p, q)
        return _finish(pair.moment(_real("a", a), _direction(direction)), dps)


def discrete_loss_cdf(p, q, x, direction, under, *, dps: int = DEFAULT_DPS) -> mpmath.mpf:
    """P_{Y~under}(L(Y) ≤ x) for a finite pair, L = ln(A/B) (±inf where a mass is 0); exact sum.

    Under the direction's own measure (p for remove, q for add) this is the CDF of the PLD
    (Steinke 2022, Def 2), with infinite loss counted only at x = +inf.
    """
    dps = _check_dps(dps)
    with mpmath.workdps(dps + _GUARD_DPS):
        pair = _discrete(p, q)
        xv = _real("x", x, allow_inf=True)
        return _finish(pair.loss_cdf(xv, _direction(direction), _measure(under)), dps)


def discrete_epsilon(p, q, delta, direction, *, dps: int = DEFAULT_DPS) -> mpmath.mpf:
    """ε(δ) = inf{ε ∈ ℝ : δ(ε) ≤ δ} for a finite pair, by root finding on :func:`discrete_delta`.

    +inf when δ is below the mass of infinite loss; the largest finite loss when δ equals it; −inf
    for δ ≥ 1.
    """
    dps = _check_dps(dps)
    with mpmath.workdps(dps + _GUARD_DPS):
        pair = _discrete(p, q)
        target = _real("delta", delta)
        return _finish(pair.epsilon(target, _direction(direction)), dps)


def rr_delta(epsilon0, epsilon, direction, k: int = 2, *, dps: int = DEFAULT_DPS) -> mpmath.mpf:
    """δ(ε) of k-ary randomized response RR(ε0, k) by the exact sum Σ_y (A_y − e^ε B_y)_+.

    Masses built in mpmath: Z = e^{ε0}+k−1, P(1) = e^{ε0}/Z, Q(0) = e^{ε0}/Z, other masses 1/Z.
    (For k = 2 the closed form (e^{ε0} − e^ε)/(1 + e^{ε0}) of notes §13 D4 is the test oracle.)
    """
    dps = _check_dps(dps)
    with mpmath.workdps(dps + _GUARD_DPS):
        pair = _rr(epsilon0, k)
        eps = _real("epsilon", epsilon, allow_inf=True)
        return _finish(pair.delta(eps, _direction(direction)), dps)


def rr_renyi(epsilon0, alpha, direction, k: int = 2, *, dps: int = DEFAULT_DPS) -> mpmath.mpf:
    """D_α(A‖B) of RR(ε0, k) by the exact sum (Steinke 2022, Def 32); α = 1 gives KL."""
    dps = _check_dps(dps)
    with mpmath.workdps(dps + _GUARD_DPS):
        pair = _rr(epsilon0, k)
        return _renyi_of(pair, alpha, direction, dps)


def rr_moment(epsilon0, a, direction, k: int = 2, *, dps: int = DEFAULT_DPS) -> mpmath.mpf:
    """E_B[(A/B)^a] of RR(ε0, k) by the exact sum (any real a)."""
    dps = _check_dps(dps)
    with mpmath.workdps(dps + _GUARD_DPS):
        pair = _rr(epsilon0, k)
        return _finish(pair.moment(_real("a", a), _direction(direction)), dps)


def rr_loss_cdf(epsilon0, x, direction, under, k: int = 2, *, dps: int = DEFAULT_DPS) -> mpmath.mpf:
    """P_{Y~under}(L(Y) ≤ x) of RR(ε0, k); the losses ±ε0, 0 are exact, so atoms compare exactly."""
    dps = _check_dps(dps)
    with mpmath.workdps(dps + _GUARD_DPS):
        pair = _rr(epsilon0, k)
        xv = _real("x", x, allow_inf=True)
        return _finish(pair.loss_cdf(xv, _direction(direction), _measure(under)), dps)


def rr_epsilon(epsilon0, delta, direction, k: int = 2, *, dps: int = DEFAULT_DPS) -> mpmath.mpf:
    """ε(δ) = inf{ε : δ(ε) ≤ δ} of RR(ε0, k) by root finding on :func:`rr_delta` (ε0 for δ ≤ 0)."""
    dps = _check_dps(dps)
    with mpmath.workdps(dps + _GUARD_DPS):
        pair = _rr(epsilon0, k)
        target = _real("delta", delta)
        return _finish(pair.epsilon(target, _direction(direction)), dps)


# ---------------------------------------------------------------------------------------------
# Discrete PLDs and compositions
# ---------------------------------------------------------------------------------------------


def discrete_pld_delta(losses, probs, p_inf, epsilon, *, dps: int = DEFAULT_DPS):
    """δ(ε) of a discrete PLD by the exact sum Σ_i p_i (1 − e^{ε − ℓ_i})_+ + p_inf.

    Steinke 2022, Prop 7 (7.2), with the mass ``p_inf`` at ℓ = +inf counted in full.  Losses may be
    ±inf; floats are converted exactly.  The masses need not sum to 1 (a dominated PLD drops
    truncated mass) but must not exceed it.  ``epsilon`` is a real number (returns an mpf) or an
    iterable of them (returns a list of mpf, one per ε).  Slow twin of the compiled hockey kernel.
    """
    dps = _check_dps(dps)
    with mpmath.workdps(dps + _GUARD_DPS):
        try:
            ls = list(losses)
        except TypeError as exc:
            raise TypeError(f"losses={losses!r}: expected a sequence of losses") from exc
        try:
            raw_probs = list(probs)
        except TypeError as exc:
            raise TypeError(f"probs={probs!r}: expected a sequence of probabilities") from exc
        ps = _prob_vector("probs", raw_probs) if raw_probs else []
        if len(ls) != len(ps):
            raise ValueError(f"len(losses)={len(ls)} != len(probs)={len(ps)}")
        lv = [_real(f"losses[{i}]", v, allow_inf=True) for i, v in enumerate(ls)]
        pinf = _real("p_inf", p_inf)
        if pinf < 0:
            raise ValueError(f"p_inf={p_inf!r}: must be >= 0")
        total = mpmath.fsum(ps) + pinf
        if total > 1 + _MASS_TOL:
            raise ValueError(f"sum(probs)+p_inf={mpmath.nstr(total, 17)} > 1: not a (sub-)probability")
        scalar = not isinstance(epsilon, Iterable) or isinstance(epsilon, (str, bytes))
        eps_list = [epsilon] if scalar else list(epsilon)
        out = []
        for j, e in enumerate(eps_list):
            ev = _real("epsilon" if scalar else f"epsilon[{j}]", e, allow_inf=True)
            terms = [pinf]
            for li, pi in zip(lv, ps):
                if li > ev:
                    terms.append(pi if li == mpmath.inf else -pi * mpmath.expm1(ev - li))
            out.append(_finish(mpmath.fsum(terms), dps))
        return out[0] if scalar else out


def rr_composed_delta(epsilon0, m, epsilon, direction, *, dps: int = DEFAULT_DPS) -> mpmath.mpf:
    """Exact δ(ε) of the m-fold composition of binary randomized response RR(ε0).

    The one-step PLD is read off the pair in the given direction (for both directions it is
    +ε0 w.p. a = e^{ε0}/(1+e^{ε0}) and −ε0 w.p. b = 1/(1+e^{ε0}); notes §13 D4), composition adds
    losses (Steinke 2022, Thm 9), and Prop 7 (7.2) gives

        δ(ε) = Σ_{l=0}^{m} C(m,l) a^l b^{m−l} (1 − e^{ε − (2l−m)ε0})_+.

    This is the δ0 = 0 case of Kairouz–Oh–Viswanath's optimal composition theorem.
    """
    dps = _check_dps(dps)
    if isinstance(m, bool) or not isinstance(m, int) or m < 0:
        raise ValueError(f"m={m!r}: the number of compositions must be an int >= 0")
    with mpmath.workdps(dps + _GUARD_DPS):
        pair = _rr(epsilon0, 2)
        d = _direction(direction)
        eps = _real("epsilon", epsilon, allow_inf=True)
        A, _, L = pair.oriented(d)
        # One-step PLD: the atoms (L_y, A_y) of the direction's loss under its own measure.
        (l0, a0), (l1, a1) = sorted(zip(L, A))  # l0 = −ε0 < l1 = +ε0 (or equal if ε0 = 0)
        terms = []
        for j in range(m + 1):  # j steps at loss l1, m − j at l0
            loss = j * l1 + (m - j) * l0
            if loss > eps:
                w = mpmath.binomial(m, j) * a1**j * a0 ** (m - j)
                terms.append(-w * mpmath.expm1(eps - loss) if eps != mpmath.ninf else w)
        return _finish(mpmath.fsum(terms), dps)


# ---------------------------------------------------------------------------------------------
# Random allocation, t = 2, Gaussian
# ---------------------------------------------------------------------------------------------


def gaussian_allocation_t2_delta(sigma, epsilon, direction, *, dps: int = 30) -> mpmath.mpf:
    """Exact privacy profile of 1-out-of-2 random allocation with the Gaussian mechanism.

    With X_i = e^{(2Z_i − 1)/(2σ²)} the likelihood ratios of the two steps (Z ~ N(0, σ²I_2)):

      remove  δ(ε) = E[((X_1 + X_2)/2 − e^ε)_+]       (Feldman & Shenfeld, Lemma F.1),
      add     δ(ε) = E[(1 − e^ε (X_1 + X_2)/2)_+]     (its add analogue: H_{e^ε}(Q^{⊗2}‖P̄_2)).

    ln X_i ~ N(−s²/2, s²) with s = 1/σ.  The inner expectation over Z_2 is the lognormal
    call/put value E[(X − K)_+] = Φ(d1) − KΦ(d2), E[(K − X)_+] = KΦ(−d2) − Φ(−d1),
    d1 = (ln(1/K) + s²/2)/s, d2 = d1 − s (exact); the outer expectation over Z_1 is a 1-D mpmath
    quadrature split where the strike K crosses 0.  Default 30 digits.
    """
    dps = _check_dps(dps)
    with mpmath.workdps(dps + _GUARD_DPS):
        sig = _real("sigma", sigma, positive=True)
        eps = _real("epsilon", epsilon, allow_inf=True)
        d = _direction(direction)
        if eps == mpmath.inf:
            return _finish(0, dps)
        if eps == mpmath.ninf:
            return _finish(1, dps)
        s = 1 / sig
        log_norm = -mpmath.log(sig * mpmath.sqrt(2 * mpmath.pi))
        two = mpmath.mpf(2)

        def x_of(z):
            return mpmath.exp((2 * z - 1) / (2 * sig**2))

        def d12(strike):
            d1 = (-mpmath.log(strike) + s**2 / 2) / s
            return d1, d1 - s

        def log_phi(z):
            return log_norm - z**2 / (2 * sig**2)

        if d == _REMOVE:
            # Inner: (1/2) E[(X_2 − K)_+], K = 2e^ε − X_1; K ≤ 0 once X_1 ≥ 2e^ε, i.e. z ≥ z_k.
            z_k = sig**2 * (mpmath.log(two) + eps) + mpmath.mpf(1) / 2

            def inner(z):
                strike = 2 * mpmath.exp(eps) - x_of(z)
                if strike <= 0:
                    return (1 - strike) / 2
                d1, d2 = d12(strike)
                return (mpmath.ncdf(d1) - strike * mpmath.ncdf(d2)) / 2

            lo, hi = mpmath.ninf, mpmath.inf
        else:
            # Inner: (e^ε/2) E[(K − X_2)_+], K = 2e^{−ε} − X_1 > 0 only for z < z_k.
            z_k = sig**2 * (mpmath.log(two) - eps) + mpmath.mpf(1) / 2

            def inner(z):
                strike = 2 * mpmath.exp(-eps) - x_of(z)
                if strike <= 0:
                    return mpmath.mpf(0)
                d1, d2 = d12(strike)
                return mpmath.exp(eps) / 2 * (strike * mpmath.ncdf(-d2) - mpmath.ncdf(-d1))

            lo, hi = mpmath.ninf, z_k

        # φ(z)·X_1 ∝ N(1, σ²): the integrand's mass sits near 0 and near 1.
        anchors = [mpmath.mpf(0), mpmath.mpf(1), z_k]
        # The inner value is C^∞ but not analytic where the strike K crosses 0 (z = z_k): tanh-sinh.
        value = _quad_exp(log_phi, inner, lo, hi, anchors, (sig,), analytic=False)
        return _finish(value, dps)
