"""Pairs on a finite output space: any user-given (p, q), and randomized response."""

from __future__ import annotations

import abc
import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from flint import arb

from verifier._types import Measure
from verifier._validation import check_integer, check_positive, check_probability_vector, check_unit
from verifier.errors import InvalidArgument
from verifier.pairs.base import DominatingPair, eps0_range_issue

__all__ = ["FinitePair", "DiscretePair", "RandomizedResponse", "UniformResponse", "DiscreteLaplace"]


class FinitePair(DominatingPair):
    """A pair on finitely many outcomes. Subclasses give the masses exactly as balls
    (``_masses_arb``) and as floats (``_masses``); every quantity is an exact finite sum.

    Outcomes with q = 0 < p carry infinite privacy loss: they count in full in δ(ε) for every ε,
    and make D_α = +∞ (Steinke 2022, footnote 10).
    """

    @abc.abstractmethod
    def _masses_arb(self) -> tuple[list[arb], list[arb]]:
        """Exact (P, Q) masses as balls."""

    @abc.abstractmethod
    def _masses(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """(P, Q) masses as float64 arrays (for the float-accuracy loss law)."""

    def _outcome_classes(self) -> list[list[int]]:
        """Groups of outcome indices whose (P, Q) masses are provably equal (here: exact, equal balls;
        a subclass that knows its symmetries says more). The T-fold product is grouped by how often
        each class occurs (verifier.pairs.finite_composition)."""
        p, q = self._masses_arb()
        groups: dict[object, list[int]] = {}
        for i, (pi, qi) in enumerate(zip(p, q)):
            key = (float(pi), float(qi)) if pi.is_exact() and qi.is_exact() else ("alone", i)
            groups.setdefault(key, []).append(i)
        return list(groups.values())

    def _loss_lattice(self) -> tuple[arb, list[int]] | None:
        """(unit u, integer n_c per class of :meth:`_outcome_classes`) when every class's privacy loss
        is exactly n_c·u, else None; a product then groups its types by total loss."""
        return None

    def _delta_arb(self, epsilon: arb) -> arb:
        """δ(ε) = Σ_y (P(y) − e^ε Q(y))_+ (Steinke 2022, §11.1 H1 for finite spaces)."""
        kappa = epsilon.exp()
        p, q = self._masses_arb()
        return sum(((pi - kappa * qi).nonnegative_part() for pi, qi in zip(p, q)), arb(0))

    def _infinite_loss_mass_arb(self) -> arb:
        p, q = self._masses_arb()
        return sum((pi for pi, qi in zip(p, q) if qi == 0), arb(0))

    def _max_loss_arb(self) -> arb | None:
        """max over the outcomes with P(y) > 0 of ln(P(y)/Q(y)); None (+∞) if one has Q(y) = 0."""
        p, q = self._masses_arb()
        return _largest([None if qi == 0 else (pi / qi).log() for pi, qi in zip(p, q) if not pi == 0])

    def _renyi_arb(self, alpha: arb) -> arb:
        """D_α = (1/(α−1)) ln Σ_y P(y)^α Q(y)^{1−α}; +∞ if P(y) > 0 = Q(y) for some y."""
        p, q = self._masses_arb()
        if any(pi > 0 and qi == 0 for pi, qi in zip(p, q)):
            return arb.pos_inf()
        total = sum((pi**alpha * qi ** (1 - alpha) for pi, qi in zip(p, q) if pi > 0), arb(0))
        return total.log() / (alpha - 1)

    def _moment_arb(self, a: arb) -> arb:
        """E_Q[(P/Q)^a] = Σ_{Q(y)>0} Q(y) (P(y)/Q(y))^a."""
        p, q = self._masses_arb()
        return sum(
            (qi * (pi / qi) ** a if pi > 0 else (qi if a == 0 else arb(0)) for pi, qi in zip(p, q) if qi > 0),
            arb(0),
        )

    def _loss_order(self, x: arb) -> list[int | None]:
        """For each outcome, the sign of ℓ_y − x (−1, 0, +1), or None where the balls cannot decide:
        ℓ = ±∞ where one mass is 0, ℓ = 0 where the masses are equal, else P(y) against e^x Q(y)."""
        p, q = self._masses_arb()
        kappa = x.exp()
        signs: list[int | None] = []
        for pi, qi in zip(p, q):
            if qi == 0 or pi == 0:
                signs.append(1 if qi == 0 and pi != 0 else -1)
            elif pi == qi:
                signs.append(-1 if x > 0 else 1 if x < 0 else 0 if x == 0 else None)
            else:
                signs.append(1 if pi > kappa * qi else -1 if pi < kappa * qi else 0 if pi == kappa * qi else None)
        return signs

    def _loss_law_arb(self, x: arb, under: Measure, below: bool, inclusive: bool) -> arb:
        """Exact sum of the masses (under ``under``) of the outcomes with ℓ below x (``below``) or
        above it, the outcomes at x counted when ``inclusive``; undecided outcomes widen the ball by
        their mass."""
        p, q = self._masses_arb()
        w = p if under is Measure.P else q
        total, unsure = arb(0), arb(0)
        for wi, sign in zip(w, self._loss_order(x)):
            if sign is None:
                unsure += wi
            elif sign == 0 and inclusive or sign == (-1 if below else 1):
                total += wi
        return total if unsure == 0 else total.union(total + unsure)

    def _loss_cdf_arb(self, x: arb, under: Measure, inclusive: bool) -> arb:
        return self._loss_law_arb(x, under, True, inclusive)

    def _loss_sf_arb(self, x: arb, under: Measure, inclusive: bool) -> arb:
        return self._loss_law_arb(x, under, False, inclusive)

    def _losses(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """Float losses ln(P/Q) (±inf allowed) with their P and Q masses."""
        p, q = self._masses()
        with np.errstate(divide="ignore"):
            losses = np.log(p) - np.log(q)
        return losses, p, q

    def _loss_cdf(self, x: npt.NDArray[np.float64], under: Measure, inclusive: bool) -> npt.NDArray[np.float64]:
        losses, p, q = self._losses()
        w = p if under is Measure.P else q
        hit = losses[None, :] <= x[:, None] if inclusive else losses[None, :] < x[:, None]
        return np.minimum(1.0, (hit * w[None, :]).sum(axis=1))

    def _loss_sf(self, x: npt.NDArray[np.float64], under: Measure, inclusive: bool) -> npt.NDArray[np.float64]:
        losses, p, q = self._losses()
        w = p if under is Measure.P else q
        hit = losses[None, :] >= x[:, None] if inclusive else losses[None, :] > x[:, None]
        return np.minimum(1.0, (hit * w[None, :]).sum(axis=1))

    def _loss_quantile(self, qs: npt.NDArray[np.float64], under: Measure) -> npt.NDArray[np.float64]:
        losses, p, q = self._losses()
        w = p if under is Measure.P else q
        order = np.argsort(losses, kind="stable")
        support = losses[order][w[order] > 0]
        cumulative = np.cumsum(w[order][w[order] > 0])
        index = np.searchsorted(cumulative, qs * cumulative[-1], side="left")
        return support[np.minimum(index, support.size - 1)]

    def _sample_loss(self, size: int, rng: np.random.Generator, under: Measure) -> npt.NDArray[np.float64]:
        losses, p, q = self._losses()
        w = p if under is Measure.P else q
        return losses[rng.choice(losses.size, size=size, p=w / w.sum())]


def _largest(balls: list[arb | None]) -> arb | None:
    """A ball holding the largest of ``balls`` (None is +∞): a ball certainly below another is
    dropped, balls that overlap are joined."""
    if any(b is None for b in balls):
        return None
    top = balls[0]
    for ball in balls[1:]:
        if ball > top:  # type: ignore[operator]
            top = ball
        elif not ball < top:  # type: ignore[operator]
            top = top.union(ball)  # type: ignore[union-attr]
    return top


@dataclass(frozen=True)
class DiscretePair(FinitePair):
    """Any finite pair: ``p`` and ``q`` are probability vectors over the same outcomes.

    ``q`` may be 0 where ``p`` is not (infinite privacy loss) and vice versa. The float inputs are
    taken as exact (the pair *is* the one with those binary64 masses).
    """

    p: tuple[float, ...]
    q: tuple[float, ...]

    def __post_init__(self) -> None:
        p = check_probability_vector("p", self.p)
        q = check_probability_vector("q", self.q)
        if p.shape != q.shape:
            raise InvalidArgument("q", f"{q.size} outcomes", f"must have as many outcomes as p ({p.size})")
        object.__setattr__(self, "p", tuple(float(v) for v in p))
        object.__setattr__(self, "q", tuple(float(v) for v in q))

    def swapped(self) -> "DiscretePair":
        return DiscretePair(self.q, self.p)

    def _masses_arb(self) -> tuple[list[arb], list[arb]]:
        return [arb(v) for v in self.p], [arb(v) for v in self.q]

    def _masses(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        return np.array(self.p), np.array(self.q)


@dataclass(frozen=True)
class RandomizedResponse(FinitePair):
    """k-ary randomized response with parameter ε0 (binary by default): outcomes 0..k−1,
    Z = e^{ε0} + k − 1, P(1) = Q(0) = e^{ε0}/Z and every other mass 1/Z.

    Symmetric (relabelling 0 ↔ 1 swaps P and Q), so both directions are equal. For k = 2,
    δ(ε) = (e^{ε0} − e^ε)/(1 + e^{ε0}) on [0, ε0] (Steinke 2022, §13 D4; proofs/randomized_response.py).
    """

    epsilon0: float
    k: int = 2

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon0", check_positive("epsilon0", self.epsilon0))
        object.__setattr__(self, "k", check_integer("k", self.k, minimum=2))

    def float_range_issue(self) -> str | None:
        """Float methods need e^ε0 finite (:func:`eps0_range_issue`)."""
        return eps0_range_issue("ε0", self.epsilon0)

    def swapped(self) -> "RandomizedResponse":
        return self

    def _max_loss_arb(self) -> arb:
        """The losses are exactly ε0, −ε0 and 0."""
        return arb(self.epsilon0)

    def _masses_arb(self) -> tuple[list[arb], list[arb]]:
        big = arb(self.epsilon0).exp()
        z = big + (self.k - 1)
        rest = [1 / z] * (self.k - 2)
        return [1 / z, big / z, *rest], [big / z, 1 / z, *rest]

    def _outcome_classes(self) -> list[list[int]]:
        """Outcome 0 (loss −ε0), outcome 1 (loss +ε0), and the k − 2 others (loss 0, equal masses)."""
        return [[0], [1]] + ([list(range(2, self.k))] if self.k > 2 else [])

    def _loss_lattice(self) -> tuple[arb, list[int]]:
        """The losses −ε0, +ε0, 0 of the classes are integer multiples of ε0."""
        return arb(self.epsilon0), [-1, 1] + ([0] if self.k > 2 else [])

    def _loss_order(self, x: arb) -> list[int | None]:
        """The losses are exactly ε0, −ε0 and 0 (the float ε0 is exact): compared exactly."""
        e0 = arb(self.epsilon0)
        losses = [-e0, e0, *[arb(0)] * (self.k - 2)]
        return [1 if v > x else -1 if v < x else 0 if v == x else None for v in losses]

    def _masses(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        z = math.exp(self.epsilon0) + self.k - 1
        rest = [1.0 / z] * (self.k - 2)
        return np.array([1.0 / z, math.exp(self.epsilon0) / z, *rest]), np.array(
            [math.exp(self.epsilon0) / z, 1.0 / z, *rest]
        )


@dataclass(frozen=True)
class UniformResponse(FinitePair):
    """Randomized response by noise level (dp_accounting's RandomizedResponseDpEvent): with
    probability 1 − ``noise`` = 1 − p the true bucket, otherwise one of the ``k`` buckets uniformly.
    Outcomes as :class:`RandomizedResponse` (record 1 against record 0): P(1) = Q(0) = 1 − p + p/k,
    every other mass p/k, exact as balls from the float p; ε0 = ln(1 + k(1 − p)/p). p = 1 releases
    nothing (P = Q); p = 0 releases the record (the loss is infinite)."""

    noise: float
    k: int = 2

    def __post_init__(self) -> None:
        object.__setattr__(self, "noise", check_unit("noise", self.noise))
        object.__setattr__(self, "k", check_integer("k", self.k, minimum=2))

    def swapped(self) -> "UniformResponse":
        return self

    def _masses_arb(self) -> tuple[list[arb], list[arb]]:
        other = arb(self.noise) / self.k
        kept = 1 - arb(self.noise) + other
        rest = [other] * (self.k - 2)
        return [other, kept, *rest], [kept, other, *rest]

    def _masses(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        other = self.noise / self.k
        kept = 1.0 - self.noise + other
        rest = [other] * (self.k - 2)
        return np.array([other, kept, *rest]), np.array([kept, other, *rest])


@dataclass(frozen=True)
class DiscreteLaplace(FinitePair):
    """The discrete Laplace mechanism on integers (dp_accounting's DiscreteLaplaceDpEvent): P =
    DLap(a) shifted by the integer sensitivity C, Q = DLap(a), with mass tanh(a/2)·e^{−a|x|} at x.
    The loss a(|x| − |x − C|) is constant on x <= 0 (−aC) and on x >= C (+aC), so those outcomes are
    merged (a sufficient statistic: every divergence is unchanged), leaving C + 1 outcomes with
    exact masses: x <= 0: P = e^{−aC}/(1 + e^{−a}), Q = 1/(1 + e^{−a}); 0 < x < C: P = t·e^{−a(C−x)},
    Q = t·e^{−ax} (t = tanh(a/2)); x >= C: the first pair swapped. Symmetric (x ↦ C − x swaps P and
    Q), so both directions are equal; ε0 = aC."""

    parameter: float
    sensitivity: int = 1

    #: Most merged outcomes (C + 1) the pair is built with: the sums are O(C) balls per evaluation.
    MAX_SENSITIVITY = 10_000

    def __post_init__(self) -> None:
        object.__setattr__(self, "parameter", check_positive("parameter", self.parameter))
        object.__setattr__(self, "sensitivity", check_integer("sensitivity", self.sensitivity, minimum=1, maximum=self.MAX_SENSITIVITY))

    def float_range_issue(self) -> str | None:
        """Float methods need e^{aC} finite (:func:`eps0_range_issue`)."""
        return eps0_range_issue("ε0 = aC", self.parameter * self.sensitivity)

    def swapped(self) -> "DiscreteLaplace":
        return self

    def _max_loss_arb(self) -> arb:
        """ε0 = aC exactly (attained on x >= C)."""
        return arb(self.parameter) * self.sensitivity

    def _masses_arb(self) -> tuple[list[arb], list[arb]]:
        a, c = arb(self.parameter), self.sensitivity
        decay = (-a).exp()
        t = (a / 2).tanh()
        tail_far, tail_near = (-a * c).exp() / (1 + decay), 1 / (1 + decay)
        middle_p = [t * (-a * (c - x)).exp() for x in range(1, c)]
        middle_q = [t * (-a * x).exp() for x in range(1, c)]
        return [tail_far, *middle_p, tail_near], [tail_near, *middle_q, tail_far]

    def _masses(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        p, q = self._masses_arb()
        return np.array([float(v.mid()) for v in p]), np.array([float(v.mid()) for v in q])
