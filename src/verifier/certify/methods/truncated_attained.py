"""A LOWER bound for truncated Poisson sampling from the instance with every other record at −C (the
record at +C against absent under add/remove, against −C under replace-one): where truncation binds, the record's place in a full batch is taken
from a record at −C, so the sum moves by 2C, not C as with the others at 0
(:func:`verifier.pairs.batch_sampling.truncated_poisson_step`'s attained pair).

The instance (n records with the record, n − 1 without; M ~ Bin(n − 1, q) others drawn, the same on
both datasets). Without the record the batch holds min(M, B) others: the sum is −min(M, B)·C. With
it: for M <= B − 1 the sum is −MC, plus C when the record is drawn (probability q); for M >= B it is
−(B − 2)C when the record is drawn and kept (probability q·B/(M + 1)), else −BC. Under replace-one
the second dataset holds the record at −C: for M <= B − 1 its sum is −MC, minus C when the record is
drawn; for M >= B it is −BC whatever is kept. So both outputs are
Gaussian mixtures on the lattice C·ℤ, P = Σ a_k N(kC, σ²) and Q = Σ b_k N(kC, σ²), and the run is
their T-fold product (the same pair of datasets at every step). Its likelihood ratio is not monotone
(the m <= B − 1 terms of Q sit beside the 2C shift), so no closed form gives its profile; any event S
gives P^T(S) − e^ε Q^T(S) <= δ(ε) (a LOWER bound, Steinke 2022, Prop 7). The event used is
{Σ_t s(y_t) >= τ}: s is the float log-likelihood ratio of one step rounded to a lattice of width
:data:`LOSS_STEP` and held constant on cells of y (any s gives a valid event; this one is nearly the
Neyman-Pearson test), the laws of s under P and Q are cell masses in ball arithmetic, their T-fold
laws exact polynomial powers (flint.arb_poly), and τ is the best threshold. Mass of the lattice
points left out (b(m) below :data:`DROPPED`) is subtracted as κ times its Q-part.
"""

from __future__ import annotations

import functools
import math
from typing import Sequence

import numpy as np
from flint import arb, arb_poly

from verifier._directed import arb_bound, with_precision
from verifier._types import Bound, Direction, Quantity, Side
from verifier.certify.method import Guarantee, Method
from verifier.pairs.batch_sampling import binomial_pmf
from verifier.pairs.gaussian import Gaussian, _phi
from verifier.schemes import Scheme, TruncatedPoisson

__all__ = ["TruncatedAttained", "METHODS", "delta_lower", "epsilon_lower", "LOSS_STEP", "CELLS_PER_SIGMA", "DROPPED", "MAX_STEPS"]

#: Width of the lattice the step's log-likelihood ratio is rounded to.
LOSS_STEP = 0.01
#: Cells of y per σ on which the statistic is constant.
CELLS_PER_SIGMA = 25
#: Probability b(m) below which the count m of other records drawn is left out.
DROPPED = 1e-30
#: Most steps composed (the T-fold polynomial has about T·(loss range)/LOSS_STEP coefficients).
MAX_STEPS = 1000
#: Bits of the ball arithmetic.
_BITS = 128


def _weights(n: int, q: float, batch: int, replace_one: bool) -> tuple[dict[int, arb], dict[int, arb], arb]:
    """({k: a_k}, {k: b_k}, left-out mass) of the instance's one-step laws on the lattice C·k
    (module docstring; ``replace_one``: the second dataset holds the record at −C)."""
    rate = arb(q)
    pmf = binomial_pmf(n - 1, rate)
    p: dict[int, arb] = {}
    qq: dict[int, arb] = {}
    dropped = arb(0)
    for m, w in enumerate(pmf):
        if w < DROPPED:
            dropped += w
            continue
        if m <= batch - 1:
            p[-m] = p.get(-m, arb(0)) + w * (1 - rate)
            p[1 - m] = p.get(1 - m, arb(0)) + w * rate
            if replace_one:  # the record at −C, drawn with probability q
                qq[-m] = qq.get(-m, arb(0)) + w * (1 - rate)
                qq[-m - 1] = qq.get(-m - 1, arb(0)) + w * rate
            else:
                qq[-m] = qq.get(-m, arb(0)) + w
        else:
            kept = rate * batch / (m + 1)
            p[2 - batch] = p.get(2 - batch, arb(0)) + w * kept
            p[-batch] = p.get(-batch, arb(0)) + w * (1 - kept)
            qq[-batch] = qq.get(-batch, arb(0)) + w
    return p, qq, dropped


@functools.lru_cache(maxsize=16)
def _laws(scheme: TruncatedPoisson, direction: Direction) -> tuple[arb_poly, arb_poly, int, arb]:
    """(T-fold law of the statistic under the first law, under the second, its lowest lattice index,
    left-out mass) for the instance in ``direction`` (REMOVE: with the record first)."""
    sigma, c = scheme.pair.sigma, scheme.pair.sensitivity
    with with_precision(_BITS):
        a, b, dropped = _weights(scheme.dataset_size, scheme.rate, scheme.max_batch, scheme.replace_one)
        if direction is Direction.ADD:
            a, b = b, a
        keys = sorted(set(a) | set(b))
        lo, hi = keys[0] * c - 12.0 * sigma, keys[-1] * c + 12.0 * sigma
        edges = np.linspace(lo, hi, int((hi - lo) / sigma * CELLS_PER_SIGMA) + 1)
        mids = np.concatenate([[edges[0]], 0.5 * (edges[:-1] + edges[1:]), [edges[-1]]])
        fa = np.array([float(a.get(k, arb(0)).mid()) for k in keys])
        fb = np.array([float(b.get(k, arb(0)).mid()) for k in keys])
        z = -((mids[:, None] - np.array(keys) * c) ** 2) / (2.0 * sigma**2)
        top = z.max(axis=1, keepdims=True)
        with np.errstate(divide="ignore"):
            llr = np.log((fa * np.exp(z - top)).sum(axis=1)) - np.log((fb * np.exp(z - top)).sum(axis=1))
        llr = np.clip(np.nan_to_num(llr, nan=0.0, posinf=50.0, neginf=-50.0), -50.0, 50.0)
        stat = np.round(llr / LOSS_STEP).astype(int)
        base = int(stat.min())
        s = arb(sigma)
        cuts = [None] + [arb(float(e)) for e in edges] + [None]

        def above(x: arb | None, mean: arb) -> arb:  # P(N(mean, σ²) > x)
            return arb(1) if x is None else _phi((mean - x) / s)

        polys = []
        for weights in (a, b):
            coeffs = [arb(0)] * (int(stat.max()) - base + 1)
            for k, w in weights.items():
                mean = arb(k) * arb(c)
                tails = [above(x, mean) for x in cuts[:-1]] + [arb(0)]
                for cell in range(len(cuts) - 1):
                    coeffs[stat[cell] - base] += w * (tails[cell] - tails[cell + 1])
            polys.append(arb_poly(coeffs) ** scheme.steps)
        return polys[0], polys[1], base * scheme.steps, dropped


def delta_lower(scheme: TruncatedPoisson, epsilon: float, direction: Direction) -> float:
    """The LOWER bound max_τ P^T(Σs >= τ) − e^ε Q^T(Σs >= τ) − e^ε·(left-out mass) (module docstring)."""
    first, second, _, dropped = _laws(scheme, direction)
    with with_precision(_BITS):
        kappa = arb(epsilon).exp()
        n = max(first.degree(), second.degree()) + 1
        best, run = 0.0, arb(0)
        for i in range(n - 1, -1, -1):  # τ from the top: run = P^T(Σs >= τ) − κQ^T(Σs >= τ)
            run += first[i] - kappa * second[i]
            best = max(best, arb_bound(run, Side.LOWER))
        return max(0.0, arb_bound(arb(best) - kappa * dropped * scheme.steps, Side.LOWER))


def epsilon_lower(scheme: TruncatedPoisson, delta: float, direction: Direction) -> float:
    """A LOWER end of ε(δ): the largest ε of a bisection at which :func:`delta_lower` still exceeds δ
    (it decreases in ε), or −∞ if it does not at ε = 0 (below that the bound is left to others)."""
    if not delta_lower(scheme, 0.0, direction) > delta:
        return -math.inf
    lo, hi = 0.0, 1.0
    while delta_lower(scheme, hi, direction) > delta:
        lo, hi = hi, 2.0 * hi
        if hi > 1e4:
            return lo
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if delta_lower(scheme, mid, direction) > delta else (lo, mid)
    return lo


class TruncatedAttained(Method):
    name = "truncated-attained"
    citation = (
        "truncated Poisson: the instance with every other record at -C, its T-fold run tested by the "
        "rounded sum of one-step log-likelihood ratios (any event is a LOWER bound: Steinke 2022, Prop 7), laws in ball arithmetic"
    )
    returns = frozenset({Guarantee.LOWER})
    cost = 1
    scheme_types = (TruncatedPoisson,)
    needs_float_range = False

    def supports(self, scheme: Scheme) -> bool:
        return (isinstance(scheme, TruncatedPoisson) and isinstance(scheme.pair, Gaussian)
                and scheme.steps <= MAX_STEPS and scheme.dataset_size - 1 >= scheme.max_batch)

    def delta_bounds(self, scheme: Scheme, epsilon: float, direction: Direction) -> Sequence[Bound]:
        return [Bound(delta_lower(scheme, epsilon, direction), Side.LOWER, direction, Quantity.DELTA, epsilon, self.name, self.citation)]

    def epsilon_bounds(self, scheme: Scheme, delta: float, direction: Direction) -> Sequence[Bound]:
        value = epsilon_lower(scheme, delta, direction)
        if not math.isfinite(value):
            return []
        return [Bound(value, Side.LOWER, direction, Quantity.EPSILON, delta, self.name, self.citation)]


METHODS = [TruncatedAttained()]
