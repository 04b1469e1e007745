"""Discrete privacy-loss distributions on a dyadic loss grid, one-sided by construction.

A :class:`DiscretePLD` holds the law of the privacy loss L = ln(P/Q) under P (REMOVE) or of
ln(Q/P) under Q (ADD) on the grid ℓ_i = (offset + i)·h, h = 2^-k, plus a mass at +∞ and (for a
DOMINATED PLD) a record of the mass it dropped. Because h is a power of two every grid loss, and
every sum of grid losses, is an exact double.

What "DOMINATING" and "DOMINATED" promise (the invariant every operation here keeps):

- DOMINATING: the PLD is stochastically larger (its survival function is pointwise >=, masses may
  sum to more than one) than the PLD of a pair that dominates the mechanism in Blackwell's sense;
- DOMINATED: the PLD is a sub-probability stochastically smaller than the PLD of a pair that the
  mechanism dominates.

δ(ε) = Σ_i p_i (1 − e^{ε−ℓ_i})_+ + p_∞ (Steinke 2022, Prop 7, form 7.2) is non-decreasing in every
loss and in every mass, so the first yields UPPER and the second LOWER bounds on δ(ε). Composition
is convolution of PLDs (Steinke 2022, Thm 9); a sum of independent variables keeps stochastic
order (Claim A.1 of the random-allocation PLD paper) and composing pairs keeps Blackwell order
(Zhu, Dong & Wang 2022, Thm 10), so both promises survive :func:`compose` and :func:`verifier.pld.power.self_compose`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from verifier._directed import down, up
from verifier._types import Direction, Dominance
from verifier._validation import check_integer, check_nonnegative, check_open_unit, check_positive, check_real_array
from verifier.errors import IncompatibleObjects, InvalidArgument, NumericalFailure
from verifier.hockey import validated_delta, validated_delta_many
from verifier.pairs.base import _bisect  # the pairs' ε(δ) bisection: a predicate False at lo, True at hi
from verifier.pld.fft import convolve_one_sided

__all__ = ["DEFAULT_TAIL_MASS", "DiscretePLD", "compose", "check_step", "sum_up", "sum_down"]

#: Mass a composition may push off each end of the grid (to +∞ for DOMINATING, dropped or moved
#: down for DOMINATED). Far below any δ a user asks about; recorded in ``error_budget``.
DEFAULT_TAIL_MASS = 1e-15


def sum_up(x: npt.NDArray[np.float64]) -> float:
    """An upper bound on Σx for x >= 0: numpy's sum is within γ_n of the exact sum (Higham Lemma 3.1
    holds for any summation order), widened by (n + 2)u and rounded up."""
    return up(float(np.sum(x)) * (1.0 + (x.size + 2) * 2.0**-53))


def sum_down(x: npt.NDArray[np.float64]) -> float:
    """A lower bound on Σx for x >= 0 (see :func:`sum_up`)."""
    return max(0.0, down(float(np.sum(x)) * (1.0 - (x.size + 2) * 2.0**-53)))


def check_step(step: float) -> float:
    """A loss-grid step must be a positive power of two (so that grid losses are exact doubles)."""
    h = check_positive("step", step)
    if math.frexp(h)[0] != 0.5 or h > 1.0:
        raise InvalidArgument("step", step, "must be a power of two 2**-k with k >= 0", "e.g. step=2**-12")
    return h


#: :meth:`DiscretePLD.epsilon` returns an ε within this distance (relative to max(1, |ε|)) of the
#: root, not the last ulp: it stops halving its checked bracket at a quarter of it.
ROOT_RTOL = 1e-12


@dataclass(frozen=True)
class DiscretePLD:
    """Losses ℓ_i = (offset + i)·step, step = 2**-k, masses ``probs[i] >= 0``, a mass at +∞, and (DOMINATED
    only) ``dropped_mass``; see the module docstring for what ``dominance`` promises.

    ``error_budget`` is informational: the mass moved by truncation and floating-point safety steps.
    """

    step: float
    offset: int
    probs: np.ndarray
    infinite_mass: float
    dropped_mass: float
    dominance: Dominance
    direction: Direction
    error_budget: float = 0.0
    _losses: np.ndarray | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_step(self.step)
        if not isinstance(self.dominance, Dominance):
            raise InvalidArgument("dominance", self.dominance, "must be Dominance.DOMINATING or Dominance.DOMINATED")
        if not isinstance(self.direction, Direction):
            raise InvalidArgument("direction", self.direction, "must be Direction.ADD or Direction.REMOVE")
        object.__setattr__(self, "offset", check_integer("offset", self.offset))
        probs = np.ascontiguousarray(check_real_array("probs", self.probs), dtype=np.float64)
        if probs.ndim != 1 or probs.size == 0:
            raise InvalidArgument("probs", f"shape {probs.shape}", "must be a non-empty 1-D array")
        if (probs < 0).any():
            raise InvalidArgument("probs", "a negative mass", "masses must be >= 0")
        probs.setflags(write=False)
        object.__setattr__(self, "probs", probs)
        object.__setattr__(self, "infinite_mass", check_nonnegative("infinite_mass", self.infinite_mass))
        object.__setattr__(self, "dropped_mass", check_nonnegative("dropped_mass", self.dropped_mass))
        object.__setattr__(self, "error_budget", check_nonnegative("error_budget", self.error_budget))
        if self.dominance is Dominance.DOMINATING and self.dropped_mass != 0.0:
            raise InvalidArgument("dropped_mass", self.dropped_mass, "a DOMINATING PLD may not drop mass (send it to +∞)")
        if abs(self.offset) + probs.size >= 2**53:
            raise InvalidArgument("offset", self.offset, "grid indices must stay below 2**53")

    # ---- queries --------------------------------------------------------------------------------

    def losses(self) -> npt.NDArray[np.float64]:
        """The grid losses (offset + i)·step (exact doubles)."""
        if self._losses is None:
            values = (self.offset + np.arange(self.probs.size, dtype=np.float64)) * self.step
            values.setflags(write=False)
            object.__setattr__(self, "_losses", values)
        return self._losses

    @property
    def side(self):
        """UPPER for a DOMINATING PLD, LOWER for a DOMINATED one."""
        return self.dominance.side

    def delta(self, epsilons: float | npt.ArrayLike, *, many: bool = False) -> npt.NDArray[np.float64] | float:
        """One-sided bound on δ(ε) (Steinke 2022, Prop 7): UPPER for DOMINATING, LOWER for DOMINATED.

        The compiled kernel returns a rigorous bracket of this PLD's own δ(ε); the end on this PLD's
        side is returned (clipped to [0, 1], which contains every true δ). With ``many`` (for
        thousands of ε at once) the bracket comes from :func:`verifier.hockey.validated_delta_many`
        instead: O(n + m·log n) rather than O(n·m), at most 2^-20 wider relative.
        """
        scalar = np.ndim(epsilons) == 0
        eps = check_real_array("epsilons", epsilons)
        bracketed = validated_delta_many if many else validated_delta
        bracket = bracketed(self.losses(), self.probs, eps, self.infinite_mass)  # checked in __post_init__
        if self.dominance is Dominance.DOMINATING:
            out = np.minimum(np.asarray(bracket.upper, dtype=float), 1.0)
        else:
            out = np.maximum(np.asarray(bracket.lower, dtype=float), 0.0)
        return float(out[0]) if scalar else out

    def epsilon(self, delta: float) -> float:
        """Safe-side root of δ(ε) = δ: an UPPER bound on ε(δ) for DOMINATING (a point where this PLD's
        δ is already <= δ), a LOWER bound for DOMINATED (a point where its δ still exceeds δ).

        When the rigorous δ confirms that a float estimate of the root is bracketed closely
        (:meth:`_root_interval`), the bracket is halved on the rigorous δ only until it is a quarter
        of ROOT_RTOL·max(1, |ε|) wide and its safe end returned: every end's δ was checked
        (δ(hi) <= δ, δ(lo) > δ), so it lies within ROOT_RTOL·max(1, |ε|) of where this PLD's exact
        δ crosses δ, far inside any PLD bracket (issue 30: bisecting to the last ulp took 12 of every 14 δ evaluations).
        Otherwise bisection on the one-sided δ of :meth:`delta`, its post-condition checked, never
        assumed. Returns +∞ (DOMINATING) when the mass at +∞ is >= δ.
        """
        target = check_open_unit("delta", delta)
        near = None if (self.dominance is Dominance.DOMINATING and self.infinite_mass >= target) else self._root_interval(target)
        if near is not None:
            lo, hi = near
            if hi - lo <= 64.0 * ROOT_RTOL * max(1.0, abs(hi)):
                while hi - lo > 0.25 * ROOT_RTOL * max(1.0, abs(hi)):  # a few halvings, each δ(mid) checked
                    mid = 0.5 * (lo + hi)
                    lo, hi = (lo, mid) if self.delta(mid) <= target else (mid, hi)
                return hi if self.dominance is Dominance.DOMINATING else lo
            keep = "high" if self.dominance is Dominance.DOMINATING else "low"
            return self._checked_root(_bisect(lambda e: self.delta(e) <= target, lo, hi, keep=keep), target)
        losses = self.losses()
        hi = float(losses[-1])  # above the top loss only p_∞ remains
        lo = float(losses[0]) - 1.0
        while not self.delta(lo) > target:  # δ(ε) >= total·(1 − e^{ε − ℓ_0}): finite for mass > δ
            if lo < -1e6:
                if self.dominance is Dominance.DOMINATED:
                    return -math.inf  # the dominated PLD holds mass <= δ: no finite lower end is certain
                raise NumericalFailure(f"DOMINATING PLD holds too little mass to exceed δ={target}")
            lo = 2.0 * lo - 1.0
        if self.dominance is Dominance.DOMINATING:
            if self.infinite_mass >= target:
                return math.inf
            if not self.delta(hi) <= target:  # pragma: no cover - δ(top loss) = p_∞ up to rounding
                hi = up(hi + 1.0)
                if not self.delta(hi) <= target:
                    raise NumericalFailure("δ above the top grid loss exceeds the mass at +∞")
            return self._checked_root(_bisect(lambda e: self.delta(e) <= target, lo, hi, keep="high"), target)
        if not self.delta(hi) <= target:
            hi = math.inf if self.infinite_mass > target else up(hi + 1.0)
            if math.isinf(hi):
                return math.inf
        return self._checked_root(_bisect(lambda e: self.delta(e) <= target, lo, hi, keep="low"), target)

    def _checked_root(self, root: float, target: float) -> float:
        """``root`` if it is on this PLD's safe side of δ(ε) = target (DOMINATING: δ(root) <= target,
        DOMINATED: δ(root) > target), else NumericalFailure."""
        value = self.delta(root)
        if self.dominance is Dominance.DOMINATING and not value <= target:
            raise NumericalFailure("ε(δ) upper bound failed its post-condition")  # pragma: no cover
        if self.dominance is Dominance.DOMINATED and not value > target:
            raise NumericalFailure("ε(δ) lower bound failed its post-condition")  # pragma: no cover
        return root

    def _root_interval(self, target: float) -> tuple[float, float] | None:
        """[lo, hi] with δ(lo) > target >= δ(hi) for the rigorous one-sided δ, a few 1e-12 wide around a
        float estimate of the root (so bisection takes ~12 steps instead of ~60), or None when the
        estimate is not confirmed.

        The estimate: on [ℓ_{J−1}, ℓ_J] only the masses at ℓ_i >= ℓ_J count, so
        δ(ε) = A_J + p_∞ − e^{ε − ℓ_J}·C_J with A_J = Σ_{i>=J} p_i and C_J = Σ_{i>=J} p_i e^{ℓ_J − ℓ_i}
        (Steinke 2022, Prop 7), and the root in the first cell whose right end has δ <= target is
        ℓ_J + ln((A_J + p_∞ − target)/C_J). C follows the recursion C_J = p_J + e^{−h}·C_{J+1}
        (a first-order filter). Float arithmetic only: it places the interval, the rigorous δ checks it.
        """
        p = self.probs[::-1]
        tail_mass = np.cumsum(p)[::-1]
        weighted = _discounted_cumsum(p, self.step)[::-1]
        at_grid = tail_mass - weighted + self.infinite_mass  # δ(ℓ_J)
        below = np.flatnonzero(at_grid <= target)
        if below.size == 0:
            return None
        j = int(below[0])
        ratio = (tail_mass[j] + self.infinite_mass - target) / weighted[j] if weighted[j] > 0 else math.nan
        if not ratio > 0:
            return None
        guess = float(self.losses()[j]) + math.log(ratio)
        width = 1e-12 * max(1.0, abs(guess))
        for _ in range(6):
            values = self.delta(np.array([guess - width, guess + width]))
            if values[0] > target and values[1] <= target:
                return guess - width, guess + width
            width *= 64.0
        return None

    @property
    def total_mass(self) -> float:
        """Σ p_i + p_∞ (float sum; informational)."""
        return math.fsum(self.probs) + self.infinite_mass


def _discounted_cumsum(x: npt.NDArray[np.float64], h: float) -> npt.NDArray[np.float64]:
    """y_n = Σ_{k<=n} x_k e^{−h(n−k)} (the first-order filter y_n = x_n + e^{−h}·y_{n−1}; scipy's
    ``lfilter([1], [1, −e^{−h}], x)`` without importing scipy.signal, ~1 s of start-up). Blocks of
    B = ⌈600/h⌉ points: inside a block y_n = e^{−h(n−s)}·(e^{−h}·y_{s−1} + Σ_{s<=k<=n} x_k e^{h(k−s)}),
    whose weights stay below e^600 (no overflow), all terms positive for x >= 0. Float only."""
    n = x.size
    block = max(1, min(n, math.ceil(600.0 / h)))
    grow = np.exp(h * np.arange(block))
    out = np.empty(n)
    carry = 0.0
    for start in range(0, n, block):
        part = x[start : start + block]
        size = part.size
        local = np.cumsum(part * grow[:size])
        if carry:
            local += carry * math.exp(-h)
        out[start : start + size] = local / grow[:size]
        carry = float(out[start + size - 1])
    return out


def _check_composable(a: DiscretePLD, b: DiscretePLD) -> None:
    if not isinstance(a, DiscretePLD) or not isinstance(b, DiscretePLD):
        raise InvalidArgument("pld", (type(a).__name__, type(b).__name__), "both operands must be DiscretePLD")
    if a.dominance is not b.dominance:
        raise IncompatibleObjects("dominance", a.dominance.value, b.dominance.value)
    if a.direction is not b.direction:
        raise IncompatibleObjects("direction", a.direction.value, b.direction.value)
    if a.step != b.step:
        raise IncompatibleObjects("grid step", a.step, b.step)


def compose(a: DiscretePLD, b: DiscretePLD, *, tail_mass: float = DEFAULT_TAIL_MASS) -> DiscretePLD:
    """PLD of the composition of two mechanisms: the convolution of their PLDs (Steinke 2022, Thm 9),
    on the same side as the inputs.

    The finite parts are convolved by FFT with a rigorous entrywise round-off bound and moved to the
    safe side (:func:`verifier.pld.fft.convolve_one_sided`); the mass at +∞ of the result is
    a_∞·(total b) + b_∞·(finite a). Then at most ``tail_mass`` is cut off each end of the grid: for a
    DOMINATING PLD the lower tail is moved up to the first kept loss and the upper tail to +∞, for a
    DOMINATED PLD the lower tail is dropped and the upper tail moved down to the last kept loss (each
    move keeps the stochastic order of the module docstring). Refuses operands of different
    dominance, direction or grid step (:class:`IncompatibleObjects`, both values named).
    """
    _check_composable(a, b)
    tail = check_nonnegative("tail_mass", tail_mass)
    dominating = a.dominance is Dominance.DOMINATING
    probs, deficit = convolve_one_sided(a.probs, b.probs)
    if dominating:
        # Upper bounds: every sum and product rounded up.
        inf_mass = up(up(a.infinite_mass * up(sum_up(b.probs) + b.infinite_mass)) + up(b.infinite_mass * sum_up(a.probs)))
        inf_mass = up(inf_mass + deficit)
        dropped = 0.0
    else:
        inf_mass = down(down(a.infinite_mass * down(sum_down(b.probs) + b.infinite_mass)) + down(b.infinite_mass * sum_down(a.probs)))
        inf_mass = max(0.0, inf_mass)
        dropped = up(up(a.dropped_mass + b.dropped_mass) + deficit)
    offset = a.offset + b.offset
    probs, offset, moved_up, moved_off = _truncate(probs, offset, tail, dominating)
    if dominating:
        inf_mass = up(inf_mass + moved_off)
    else:
        dropped = up(dropped + moved_off)
    budget = up(up(a.error_budget + b.error_budget) + up(deficit + up(moved_up + moved_off)))
    return DiscretePLD(a.step, offset, probs, inf_mass, dropped, a.dominance, a.direction, budget)


def _truncate(
    probs: npt.NDArray[np.float64], offset: int, tail: float, dominating: bool
) -> tuple[npt.NDArray[np.float64], int, float, float]:
    """Cut the ends of the grid holding at most ``tail`` mass each (and any zero ends).

    Returns (probs, offset, mass moved within the grid, mass sent off the grid). DOMINATING: the lower
    tail joins the first kept point (moved up), the upper tail goes off the grid (caller sends it to
    +∞). DOMINATED: the lower tail goes off the grid (dropped), the upper tail joins the last kept point
    (moved down).
    """
    nonzero = np.flatnonzero(probs)
    if nonzero.size == 0:
        return np.zeros(1), offset, 0.0, 0.0
    first, last = int(nonzero[0]), int(nonzero[-1])
    cum = np.cumsum(probs)
    rcum = np.cumsum(probs[::-1])[::-1]
    # Partial sums are within n·u relative of the truth; compare against a shrunk budget so that the
    # mass actually cut is <= tail.
    budget = tail * (1.0 - 4.0 * probs.size * 2.0**-53)
    lo = max(first, int(np.searchsorted(cum, budget, side="right")))  # cum[lo-1] <= budget
    hi = min(last, int(np.searchsorted(-rcum, -budget, side="left")) - 1)  # rcum[hi+1] <= budget
    if lo > hi:  # the whole mass is within two tails: keep one point, move nothing
        lo = hi = last if dominating else first
    kept = probs[lo : hi + 1].copy()
    if dominating:
        kept[0] = down(kept[0] + sum_down(probs[:lo]))  # what is not placed here goes to +∞ below
        lost = up(up(sum_up(probs[:lo]) + probs[lo]) - kept[0])
        return kept, offset + lo, sum_up(probs[:lo]), up(sum_up(probs[hi + 1 :]) + lost)
    kept[-1] = down(kept[-1] + sum_down(probs[hi + 1 :]))
    return kept, offset + lo, sum_up(probs[hi + 1 :]), sum_up(probs[:lo])
