"""The worst case over a finite list of candidate pairs of output laws, each known in float64 within a
proven relative error: δ(ε), ε(δ) and TPR at FPR, as rigorous brackets whose ends meet.

A shuffle-model mechanism on finitely many kinds of datasets (:mod:`verifier.shuffle.binary`,
:mod:`verifier.shuffle.histogram`) has one pair (P, Q) of laws of the released statistic per
neighbouring pair of datasets and order; the mechanism's δ(ε) is the largest of their hockey-stick
divergences and its TPR at FPR α the largest Neyman–Pearson power. A :class:`Candidate` holds one
pair as float64 arrays ``first`` (P) and ``second`` (Q) over the same outcomes, sorted by decreasing
float likelihood ratio, with ``widen``: every exact mass lies within a relative ``widen`` of its float,
except for at most ``outside`` of each law's mass on outcomes not listed.

- δ(ε): Σ (P_hi − e^ε_lo·Q_lo)_+ plus its rounding error is an UPPER bound, Σ (P_lo − e^ε_hi·Q_hi)_+
  minus it a LOWER bound (:func:`hockey`); the maximum over candidates of each.
- ε(δ): a float64 guide E* = max over candidates and prefixes t of (A_t − δ)/B_t (A, B the masses of
  the first t outcomes; δ(E) >= A_t − E·B_t for every event, with equality for the likelihood-ratio
  prefix), then E_hi = E*(1 + η) checked against every candidate's UPPER δ and E_lo = E*(1 − η)
  against the worst candidate's LOWER δ (η = 1e-10, times 100 until both checks pass, at most 5
  times; the upper end is otherwise the mechanism's largest loss, the lower 0); ε(δ) lies in
  [ln E_lo, ln E_hi] rounded outward.
- TPR(α): LOWER from the Neyman–Pearson test of each candidate (reject its first outcomes, randomise
  at the next) sized with UPPER bounds on Q, so its size is <= α, and powered with LOWER bounds on P;
  UPPER from TPR(α) <= δ(ln E) + E·α for every E > 0 (proofs/tradeoff_conversion.py) at E = the float
  likelihood ratio where the test randomises.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import numpy.typing as npt
from flint import arb

from verifier._directed import arb_bound, down, up, with_precision
from verifier._types import Bracket, Side
from verifier._validation import check_nonnegative, check_open_unit, check_unit
from verifier.errors import NumericalFailure

__all__ = ["Candidate", "WorstCase", "hockey", "UNIT_ROUNDOFF"]

UNIT_ROUNDOFF = 2.0**-53
_ETA = 1e-10  # first relative margin of the ε(δ) checks


@dataclass(frozen=True)
class Candidate:
    """One pair of laws (P, Q) = (``first``, ``second``) of the released statistic, in float64 sorted
    by decreasing P/Q, exact within a relative ``widen`` but for ``outside`` of mass not listed;
    ``label`` names the datasets and the order (e.g. "m = 0, 0->1")."""

    first: npt.NDArray[np.float64]
    second: npt.NDArray[np.float64]
    widen: float
    outside: float
    label: str

    @classmethod
    def sorted(cls, first: npt.NDArray[np.float64], second: npt.NDArray[np.float64], widen: float, outside: float, label: str) -> "Candidate":
        """The candidate with its outcomes put in order of decreasing float likelihood ratio."""
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(second > 0, first / np.where(second > 0, second, 1.0), np.inf)
        order = np.argsort(-ratio, kind="stable")
        return cls(first[order], second[order], widen, outside, label)


def hockey(c: Candidate, big: float, side: Side) -> float:
    """A bound on Σ (P − E·Q)_+ on ``side``: ``big`` bounds E from below (UPPER) or above (LOWER).
    Rounding: the float term a − b, a = P·(1 ± widen), b = E·Q·(1 ∓ widen), is within 4u·(a + b) of the
    exact one (one rounding in a, two in b, one in the difference), so each term is moved by that
    allowance toward the side bounded before its positive part is taken; the float sum of K
    nonnegative terms is within (K + 1)·u of the exact one; Q's mass outside the listed outcomes costs
    E·outside, P's outside."""
    sign = 1.0 if side is Side.UPPER else -1.0
    a = c.first * (1 + sign * c.widen)
    b = big * c.second * (1 - sign * c.widen)
    terms = np.maximum(a - b + sign * 4 * UNIT_ROUNDOFF * (a + b), 0.0)
    total = float(np.sum(terms))
    if side is Side.UPPER:
        return float(up(total * (1 + (len(terms) + 2) * UNIT_ROUNDOFF) + c.outside))
    return float(down(total * (1 - (len(terms) + 2) * UNIT_ROUNDOFF) - up(big * c.outside)))


def _e_star(c: Candidate, delta: float) -> float:
    """max over prefixes t of (A_t − δ)/B_t, float64 (a guide)."""
    tail_a, tail_b = np.cumsum(c.first), np.cumsum(c.second)
    keep = tail_b > 0
    return float(np.max((tail_a[keep] - delta) / tail_b[keep])) if keep.any() else 0.0


def _exp_bounds(epsilon: float) -> tuple[float, float]:
    with with_precision(128):
        ball = arb(epsilon).exp()
    return arb_bound(ball, Side.LOWER), arb_bound(ball, Side.UPPER)


class WorstCase:
    """The worst case over ``candidates`` (module docstring); ``what`` names the mechanism in errors,
    ``ceiling`` is a proven upper bound on ε(δ) for every δ (the largest privacy loss), the upper end
    returned where the float64 check cannot place one below it (e.g. δ below the rounding allowance)."""

    def __init__(self, candidates: Sequence[Candidate], what: str, ceiling: float) -> None:
        if not candidates:
            raise NumericalFailure(f"{what}: no candidate pairs")
        self.candidates = list(candidates)
        self.what = what
        self.ceiling = ceiling

    def _upper(self, big_lo: float) -> float:
        return max(hockey(c, big_lo, Side.UPPER) for c in self.candidates)

    def _lower(self, big_hi: float) -> tuple[float, int]:
        return max((hockey(c, big_hi, Side.LOWER), i) for i, c in enumerate(self.candidates))

    def delta(self, epsilon: float) -> Bracket:
        """δ(ε), the worst case over the candidates, as a rigorous bracket (clipped to [0, 1])."""
        big_lo, big_hi = _exp_bounds(check_nonnegative("epsilon", epsilon))
        return Bracket(max(0.0, self._lower(big_hi)[0]), min(1.0, self._upper(big_lo)))

    def worst(self, epsilon: float) -> str:
        """The label of a candidate with the largest LOWER δ(ε)."""
        return self.candidates[self._lower(_exp_bounds(check_nonnegative("epsilon", epsilon))[1])[1]].label

    def epsilon(self, delta: float) -> Bracket:
        """ε(δ) = inf{ε >= 0 : δ(ε) <= δ}, the worst case over the candidates, as a rigorous bracket."""
        target = check_open_unit("delta", delta)
        e_star, best = max((_e_star(c, target), i) for i, c in enumerate(self.candidates))
        eta, big_hi = _ETA, math.inf
        for _ in range(6):
            trial = max(1.0, e_star * (1 + eta))
            if self._upper(trial) <= target:
                big_hi = trial
                break
            eta *= 100
        eta, big_lo = _ETA, 1.0
        for _ in range(6):
            candidate = e_star * (1 - eta)
            if candidate <= 1.0:
                break
            if hockey(self.candidates[best], candidate, Side.LOWER) > target:
                big_lo = candidate
                break
            eta *= 100
        with with_precision(128):
            eps_hi = self.ceiling if big_hi == math.inf else 0.0 if big_hi == 1.0 else arb_bound(arb(big_hi).log(), Side.UPPER)
            eps_lo = 0.0 if big_lo == 1.0 else max(0.0, arb_bound(arb(big_lo).log(), Side.LOWER))
        return Bracket(min(eps_lo, self.ceiling), min(eps_hi, self.ceiling))

    def _test(self, c: Candidate, alpha: float) -> tuple[float, float]:
        """(LOWER bound on the power of candidate c's Neyman–Pearson test of size <= α, the float likelihood
        ratio where it randomises: inf if at an outcome Q misses, 0 if every outcome is rejected)."""
        u = UNIT_ROUNDOFF
        a, b = c.first, c.second
        size_hi = np.cumsum(b) * (1 + c.widen) * (1 + (len(b) + 2) * u) + c.outside  # Q(first j + 1 outcomes)
        power_lo = np.cumsum(a) * (1 - c.widen) * (1 - (len(a) + 2) * u)
        j = int(np.searchsorted(size_hi, alpha, side="right"))  # outcomes 0 … j − 1 fit whole
        taken_b = float(size_hi[j - 1]) if j > 0 else 0.0
        power = float(power_lo[j - 1]) if j > 0 else 0.0
        big = 0.0
        if j < len(b):
            b_hi = float(up(b[j] * (1 + c.widen) * (1 + 4 * u)))
            gamma = min(1.0, max(0.0, float(down((alpha - taken_b) / b_hi * (1 - 4 * u))))) if b_hi > 0 else 0.0
            power += gamma * float(a[j]) * (1 - c.widen) * (1 - 8 * u)
            big = float(a[j] / b[j]) if b[j] > 0 else math.inf
        return float(down(power)), big

    def randomising_ratio(self, fpr: float) -> float:
        """The likelihood ratio where the test of the candidate with the largest LOWER TPR at FPR α randomises."""
        alpha = check_unit("fpr", fpr)
        return max(self._test(c, alpha) for c in self.candidates)[1]

    def tpr(self, fpr: float) -> Bracket:
        """The largest true-positive rate at false-positive rate α over the candidates (the attacker's
        best pair of datasets), as a rigorous bracket (module docstring)."""
        alpha = check_unit("fpr", fpr)
        u = UNIT_ROUNDOFF
        lower, upper = 0.0, 0.0
        for c in self.candidates:
            power, big = self._test(c, alpha)
            lower = max(lower, power)
            if not math.isfinite(big):
                upper = 1.0
            elif big > 0:
                upper = max(upper, min(1.0, hockey(c, big, Side.UPPER) + float(up(big * alpha * (1 + 4 * u)))))
            else:  # every outcome rejected: TPR <= 1
                upper = 1.0
        return Bracket(min(lower, upper), min(1.0, upper))
