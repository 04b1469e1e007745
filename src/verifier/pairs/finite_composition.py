"""Exact compositions of finite pairs: T-fold products by exact convolution, and the Poisson-subsampled
finite pair whose products they also are.

The T-fold product (P^T, Q^T) of a finite pair lives on n^T outcomes, but an outcome's masses depend
only on how often each outcome (or each class of outcomes with equal masses) occurs: its *type*.
Grouping the outcomes of one type into a single outcome whose masses are the type's total P- and
Q-mass is a sufficient statistic (every outcome of a type has the same likelihood ratio), so the
grouped pair has the same hockey-stick curve, Rényi divergences and privacy-loss law as the product
(Steinke 2022, §11.1 H1: δ(ε) = Σ_y (P(y) − e^ε Q(y))_+ splits over the types, and
N·(p − κq)_+ = (Np − κNq)_+). Where the classes' privacy losses are integer multiples of one unit
(randomized response: −ε0, +ε0, 0) the types are grouped further by their total loss, which is the
binomial/multinomial sum of the composed randomized response; the masses are then the coefficients
of the T-th power of the one-step polynomial, computed in ball arithmetic (:class:`flint.arb_poly`).

Every mass is a ball, so the composed pair's δ(ε) is EXACT up to the ball's width (outward rounded),
in both directions. The support grows like C(T + m − 1, m − 1) for m classes (2T + 1 on a lattice);
:func:`composed_support` says how large it will be, and callers decline above :data:`MAX_SUPPORT`.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from flint import arb, arb_poly, ctx

from verifier._validation import check_integer, check_rate
from verifier.errors import InvalidArgument, NotApplicable
from verifier.pairs.finite import FinitePair

__all__ = ["FiniteComposition", "SubsampledFinite", "composed_support", "MAX_SUPPORT"]

#: Most outcomes of a composed pair (types, or loss values on a lattice) built by exact convolution:
#: each δ(ε) is one pass over them (~1 µs a ball operation), and ε(δ) bisects on ~100 of those.
MAX_SUPPORT = 6000


def _classes(pair: FinitePair) -> tuple[list[list[int]], tuple[arb, list[int]] | None]:
    """Outcome classes with provably equal masses, and the loss lattice of the classes if any."""
    return pair._outcome_classes(), pair._loss_lattice()


def composed_support(pair: FinitePair, times: int) -> int:
    """Number of outcomes of the grouped T-fold product of ``pair`` (see the module docstring)."""
    classes, lattice = _classes(pair)
    if lattice is not None:
        _, index = lattice
        return (max(index) - min(index)) * times + 1
    m = len(classes)
    return math.comb(times + m - 1, m - 1)


@dataclass(frozen=True)
class SubsampledFinite(FinitePair):
    """The Poisson-subsampled step of a finite pair at rate λ: (λP + (1 − λ)Q, Q) in the REMOVE
    orientation, (Q, λP + (1 − λ)Q) with ``add_orientation`` (Steinke 2022, §6.2; the same pair as
    :class:`verifier.pairs.PoissonSubsampled`, kept finite so that its products are exact sums)."""

    pair: FinitePair
    rate: float
    add_orientation: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.pair, FinitePair):
            raise InvalidArgument("pair", self.pair, "must be a finite pair (RandomizedResponse, DiscretePair)")
        object.__setattr__(self, "rate", check_rate("rate", self.rate))

    def float_range_issue(self) -> str | None:
        return self.pair.float_range_issue()

    def swapped(self) -> "SubsampledFinite":
        return SubsampledFinite(self.pair, self.rate, not self.add_orientation)

    def _masses_arb(self) -> tuple[list[arb], list[arb]]:
        p, q = self.pair._masses_arb()
        lam = arb(self.rate)
        mixed = [lam * pi + (1 - lam) * qi for pi, qi in zip(p, q)]
        return (q, mixed) if self.add_orientation else (mixed, q)

    def _masses(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        p, q = self.pair._masses()
        mixed = self.rate * p + (1.0 - self.rate) * q
        return (q, mixed) if self.add_orientation else (mixed, q)

    def _outcome_classes(self) -> list[list[int]]:
        """Outcomes with equal base masses keep equal mixed masses."""
        return self.pair._outcome_classes()


@functools.lru_cache(maxsize=32)
def _grouped_masses(pair: FinitePair, times: int, bits: int) -> tuple[tuple[arb, ...], tuple[arb, ...]]:
    """(P, Q) masses of the grouped ``times``-fold product at ``bits`` of precision (module docstring)."""
    p, q = pair._masses_arb()
    classes, lattice = _classes(pair)
    p_cls = [sum((p[i] for i in members), arb(0)) for members in classes]
    q_cls = [sum((q[i] for i in members), arb(0)) for members in classes]
    if lattice is not None:
        _, index = lattice
        low = min(index)
        width = max(index) - low + 1
        p_step, q_step = [arb(0)] * width, [arb(0)] * width
        for c, k in enumerate(index):
            p_step[k - low] += p_cls[c]
            q_step[k - low] += q_cls[c]
        p_out, q_out = arb_poly(p_step) ** times, arb_poly(q_step) ** times
        size = (width - 1) * times + 1
        return tuple(p_out[i] for i in range(size)), tuple(q_out[i] for i in range(size))
    # Types: count vectors of the m classes, built one step at a time (exact multinomial weights).
    current: dict[tuple[int, ...], tuple[arb, arb]] = {(0,) * len(classes): (arb(1), arb(1))}
    for _ in range(times):
        following: dict[tuple[int, ...], tuple[arb, arb]] = {}
        for key, (pm, qm) in current.items():
            for c in range(len(classes)):
                new = key[:c] + (key[c] + 1,) + key[c + 1 :]
                add_p, add_q = pm * p_cls[c], qm * q_cls[c]
                if new in following:
                    old_p, old_q = following[new]
                    following[new] = (old_p + add_p, old_q + add_q)
                else:
                    following[new] = (add_p, add_q)
        current = following
    return tuple(v[0] for v in current.values()), tuple(v[1] for v in current.values())


@dataclass(frozen=True)
class FiniteComposition(FinitePair):
    """The ``times``-fold product of a finite pair, grouped by type (module docstring): an exact
    finite pair, so δ(ε), ε(δ), Rényi divergences and loss laws are exact sums in ball arithmetic.
    For randomized response (binary or k-ary) this is the binomial / multinomial sum of the
    composed mechanism; for a :class:`SubsampledFinite` step, Poisson sampling of T steps."""

    pair: FinitePair
    times: int

    def __post_init__(self) -> None:
        if not isinstance(self.pair, FinitePair):
            raise InvalidArgument("pair", self.pair, "must be a finite pair (RandomizedResponse, DiscretePair)")
        times = check_integer("times", self.times, minimum=1)
        object.__setattr__(self, "times", times)
        size = composed_support(self.pair, times)
        if size > MAX_SUPPORT:
            raise NotApplicable(f"the {times}-fold product has {size} outcomes (> {MAX_SUPPORT}): too many for an exact sum")

    def float_range_issue(self) -> str | None:
        return self.pair.float_range_issue()

    def swapped(self) -> "FiniteComposition":
        return FiniteComposition(self.pair.swapped(), self.times)

    def _masses_arb(self) -> tuple[list[arb], list[arb]]:
        p, q = _grouped_masses(self.pair, self.times, ctx.prec)
        return list(p), list(q)

    def _masses(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        p, q = _grouped_masses(self.pair, self.times, ctx.prec)
        return np.array([float(v.mid()) for v in p]), np.array([float(v.mid()) for v in q])

    def _loss_lattice(self) -> tuple[arb, list[int]] | None:
        lattice = self.pair._loss_lattice()
        if lattice is None:
            return None
        unit, index = lattice
        low = min(index)
        return unit, [low * self.times + i for i in range(composed_support(self.pair, self.times))]
