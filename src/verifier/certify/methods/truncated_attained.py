"""A LOWER bound for truncated Poisson sampling from instances where every other record takes one
value o of norm C (the record x against absent under add/remove, against −x under replace-one):
where truncation binds, the record's place in a full batch is taken from a record at o, so the sum
moves by x − o, not x as with the others at 0 (:func:`verifier.pairs.batch_sampling.truncated_poisson_step`'s
attained pair).

The instances (n records with the record, n − 1 without; M ~ Bin(n − 1, q) others drawn, the same on
both datasets). Without the record the batch holds min(M, B) others: the sum is min(M, B)·o. With
it: for M <= B − 1 the sum is M·o, plus x when the record is drawn (probability q); for M >= B it is
x + (B − 1)·o when the record is drawn and kept (probability q·B/(M + 1)), else B·o. Under
replace-one the second dataset holds the record at −x, with the same batch laws (−x in place of x).
So both outputs are Gaussian mixtures whose means k·o + r·x (r ∈ {−1, 0, 1}) lie on three parallel
lines (two under add/remove): P = Σ a_{k,r} N(k·o + r·x, σ²I) and Q = Σ b_{k,r} N(k·o + r·x, σ²I),
and the run is their T-fold product (the same pair of datasets at every step). The noise is
isotropic, so only the plane of o and x matters: with o = −C·e_u and x = C(cos θ·e_u + sin θ·e_w),
θ ∈ :data:`ANGLES` (θ = 0: the collinear instance, x = +C, o = −x = −C). The float search of
benchmarks/truncated_family.md found θ ≈ π/4 the largest under add/remove where truncation binds
(n = 1000, q = 0.05, B = 40, σ = 2, 10 steps, remove: 0.5893 against 0.5621 at θ = 0), and θ = 0.3π
under replace-one (0.6607 against 0.5868); every instance is a real pair of neighbouring datasets,
so the largest value over the instances is a LOWER bound.

Their likelihood ratio is not monotone in any coordinate, so no closed form gives the profile; any
event S gives P^T(S) − e^ε Q^T(S) <= δ(ε) (a LOWER bound, Steinke 2022, Prop 7). The event used is
{Σ_t s(y_t) >= τ}: s is the float log-likelihood ratio of one step rounded to a lattice of width
:data:`LOSS_STEP` and held constant on the cells of a product grid in (u, w) (any s gives a valid
event; this one is nearly the Neyman-Pearson test). A cell's mass is a sum over the lines of
(mass of the line's u-mixture on the u-interval) × (mass of N(w_r, σ²) on the w-interval), both
factors in ball arithmetic, their products and the sums over the cells of each value of s in
outward-rounded binary64 (a sum of k non-negative terms scaled by 1 ± (k + 2)u, Higham 2002,
Lemma 3.1); the T-fold laws of s are exact polynomial powers (flint.arb_poly), and τ is the best
threshold. Mass of the counts left out (b(m) below :data:`DROPPED`) is subtracted as κ times its
Q-part.
"""

from __future__ import annotations

import functools
import math
from typing import Callable, Sequence

import numpy as np
import numpy.typing as npt
from flint import arb, arb_poly

from verifier._directed import Intervals, arb_bound, arb_bounds_many, binned_sum, with_precision
from verifier._types import Bound, Direction, Quantity, Side
from verifier.analytic._search import EPSILON_CEILING, smallest_passing
from verifier.certify.method import Guarantee, Method
from verifier.errors import NotApplicable
from verifier.pairs.batch_sampling import binomial_pmf
from verifier.pairs.gaussian import Gaussian, _phi
from verifier.schemes import Scheme, TruncatedPoisson

__all__ = ["TruncatedAttained", "METHODS", "ANGLES", "MAX_CELLS", "delta_lower", "epsilon_lower", "step_laws", "cells", "best_threshold", "lower_end", "LOSS_STEP", "CELLS_PER_SIGMA", "DROPPED", "MAX_STEPS", "SEARCH_TOLERANCE"]

#: Width of the lattice the step's log-likelihood ratio is rounded to.
LOSS_STEP = 0.01
#: Cells of u and of w per σ on which the statistic is constant.
CELLS_PER_SIGMA = 25
#: Probability b(m) below which the count m of other records drawn is left out.
DROPPED = 1e-30
#: Most steps composed (the T-fold polynomial has about T·(loss range)/LOSS_STEP coefficients).
MAX_STEPS = 1000
#: Angles θ between the record x and −o, o the other records' value (module docstring), under
#: add/remove (False) and replace-one (True).
ANGLES = {False: (0.0, math.pi / 4), True: (0.0, 0.3 * math.pi)}
#: Most cells of the grid in the plane (u-cells × w-cells); an instance at an angle that needs more
#: (σ small against B·C) is left out (the collinear one, one w-cell, is always computed).
MAX_CELLS = 4_000_000
#: Absolute width in ε at which the search for the LOWER end of ε(δ) stops (tightness only: the
#: returned end was evaluated failing): 2^-40, the width the hand-written bisection reached on [0, 1].
SEARCH_TOLERANCE = 2.0**-40
#: Bits of the ball arithmetic.
_BITS = 128
#: Half-width, in σ, of the grid of cells around the means (the two outer cells of each axis run to ±∞).
_REACH = 12.0


Laws = dict[tuple[int, int], arb]


def _weights(n: int, q: float, batch: int, replace_one: bool) -> tuple[Laws, Laws, arb]:
    """({(k, r): a_{k,r}}, {(k, r): b_{k,r}}, left-out mass): the one-step laws of the number k of
    other records in the batch and of whether the record x is in it (r = 1), with the record and
    without it (``replace_one``: with it at −x, r = −1) (module docstring)."""
    rate = arb(q)
    pmf = binomial_pmf(n - 1, rate)
    p: Laws = {}
    qq: Laws = {}
    dropped = arb(0)

    def add(law: Laws, key: tuple[int, int], w: arb) -> None:
        law[key] = law.get(key, arb(0)) + w

    for m, w in enumerate(pmf):
        if w < DROPPED:
            dropped += w
            continue
        if m <= batch - 1:
            add(p, (m, 0), w * (1 - rate))
            add(p, (m, 1), w * rate)
            if replace_one:  # the record at −x, drawn with probability q
                add(qq, (m, 0), w * (1 - rate))
                add(qq, (m, -1), w * rate)
            else:
                add(qq, (m, 0), w)
        else:
            kept = rate * batch / (m + 1)
            add(p, (batch - 1, 1), w * kept)
            add(p, (batch, 0), w * (1 - kept))
            if replace_one:
                add(qq, (batch - 1, -1), w * kept)
                add(qq, (batch, 0), w * (1 - kept))
            else:
                add(qq, (batch, 0), w)
    return p, qq, dropped


def _record(c: float, theta: float) -> tuple[float, float]:
    """The record's coordinates (x_u, x_w) = C(cos θ, sin θ) as floats of norm <= C (checked in ball
    arithmetic, shrunk by one part in 2^50 until it holds)."""
    xu, xw = c * math.cos(theta), c * math.sin(theta)
    while not arb(xu) ** 2 + arb(xw) ** 2 <= arb(c) ** 2:
        xu, xw = xu * (1 - 2.0**-50), xw * (1 - 2.0**-50)
    return xu, xw


def _edges(lo: float, hi: float, sigma: float) -> npt.NDArray[np.float64]:
    """Cell edges over [lo − _REACH·σ, hi + _REACH·σ], :data:`CELLS_PER_SIGMA` a σ."""
    lo, hi = lo - _REACH * sigma, hi + _REACH * sigma
    return np.linspace(lo, hi, int((hi - lo) / sigma * CELLS_PER_SIGMA) + 1)


def _cell_masses(means: Sequence[arb], edges: npt.NDArray[np.float64], sigma: float) -> list[list[arb]]:
    """[[N(mean, σ²) mass of each cell]] for the cells (−∞, e_0], (e_0, e_1], …, (e_last, ∞)."""
    s = arb(sigma)
    cuts = [arb(float(e)) for e in edges]
    out = []
    for mean in means:
        tails = [arb(1)] + [_phi((mean - x) / s) for x in cuts] + [arb(0)]  # P(N(mean, σ²) > cut)
        out.append([tails[i] - tails[i + 1] for i in range(len(tails) - 1)])
    return out


def _log_density(weights: npt.NDArray[np.float64], means: npt.NDArray[np.float64], points: npt.NDArray[np.float64], sigma: float) -> npt.NDArray[np.float64]:
    """log Σ_k weights_k φ((points − means_k)/σ) up to a constant shared by every law (float; for the statistic only)."""
    z = -((points[:, None] - means[None, :]) ** 2) / (2.0 * sigma**2)
    top = z.max(axis=1, keepdims=True)
    with np.errstate(divide="ignore"):
        return np.log((weights[None, :] * np.exp(z - top)).sum(axis=1)) + top[:, 0]


@functools.lru_cache(maxsize=16)
def step_laws(scheme: TruncatedPoisson, theta: float) -> tuple[list[arb], list[arb], int]:
    """(law of the statistic under P, under Q, its lowest lattice index) of one step of the instance
    at angle ``theta``, P the dataset with the record (REMOVE); in the ADD orientation the statistic
    is its negative (:func:`_laws`). The statistic is a function of the output, so this pair of laws
    is the instance post-processed: every pair that dominates the instance dominates it too
    (the floor in benchmarks/truncated_family.py uses that). The counts left out (:data:`DROPPED`) are missing
    from both laws."""
    sigma, c = scheme.pair.sigma, scheme.pair.sensitivity
    xu, xw = _record(c, theta)
    with with_precision(_BITS):
        a, b, _ = _weights(scheme.dataset_size, scheme.rate, scheme.max_batch, scheme.replace_one)
        keys = sorted(set(a) | set(b))
        u_float = np.array([-k * c + r * xu for k, r in keys])
        u_edges = _edges(float(u_float.min()), float(u_float.max()), sigma)
        u_mass = _cell_masses([arb(-k) * arb(c) + r * arb(xu) for k, r in keys], u_edges, sigma)
        lines = sorted({r for _, r in keys}) if xw != 0.0 else [0]  # with w constant the w-axis is one cell of mass 1
        w_edges = _edges(min(lines) * xw, max(lines) * xw, sigma) if xw != 0.0 else np.array([])
        w_mass = dict(zip(lines, _cell_masses([l * arb(xw) for l in lines], w_edges, sigma)))
        u_mid = np.concatenate([[u_edges[0]], 0.5 * (u_edges[:-1] + u_edges[1:]), [u_edges[-1]]])
        w_mid = np.concatenate([[w_edges[0]], 0.5 * (w_edges[:-1] + w_edges[1:]), [w_edges[-1]]]) if xw != 0.0 else np.zeros(1)
        line_of = [r if xw != 0.0 else 0 for _, r in keys]
        # the statistic: the float log-likelihood ratio at each cell's centre, rounded
        log_dens = []
        for law in (a, b):
            fw = np.array([float(law.get(key, arb(0)).mid()) for key in keys])
            per_line = [_log_density(np.where(np.array(line_of) == l, fw, 0.0), u_float, u_mid, sigma)[:, None]
                        - (w_mid[None, :] - l * xw) ** 2 / (2.0 * sigma**2) for l in lines]
            log_dens.append(np.logaddexp.reduce(per_line, axis=0))
        with np.errstate(invalid="ignore"):
            llr = log_dens[0] - log_dens[1]
        llr = np.clip(np.nan_to_num(llr, nan=0.0, posinf=50.0, neginf=-50.0), -50.0, 50.0)
        stat = np.round(llr / LOSS_STEP).astype(np.int64).ravel()
        base = int(stat.min())
        w_iv = {l: Intervals(np.maximum(lo, 0.0), hi) for l, (lo, hi) in ((l, arb_bounds_many(w_mass[l])) for l in lines)}
        laws = []
        for law in (a, b):
            total = Intervals.point(np.zeros(stat.size))
            for l in lines:
                on_line = [(law[key], u_mass[i]) for i, key in enumerate(keys) if key in law and line_of[i] == l]
                lo, hi = arb_bounds_many([sum((w * mass[cell] for w, mass in on_line), arb(0)) for cell in range(len(u_edges) + 1)])
                cell = Intervals(np.maximum(lo, 0.0)[:, None], hi[:, None]) * Intervals(w_iv[l].lo[None, :], w_iv[l].hi[None, :])
                total = total + Intervals(cell.lo.ravel(), cell.hi.ravel())
            sums = binned_sum(stat - base, total)
            laws.append([arb(float(lo)).union(arb(float(hi))) for lo, hi in zip(sums.lo, sums.hi)])
        return laws[0], laws[1], base


@functools.lru_cache(maxsize=16)
def _laws(scheme: TruncatedPoisson, direction: Direction, theta: float) -> tuple[arb_poly, arb_poly, int, arb]:
    """(T-fold law of the statistic under the first law, under the second, its lowest lattice index,
    left-out mass) for the instance at angle ``theta`` in ``direction`` (REMOVE: with the record first)."""
    with_record, without, base = step_laws(scheme, theta)
    with with_precision(_BITS):
        _, _, dropped = _weights(scheme.dataset_size, scheme.rate, scheme.max_batch, scheme.replace_one)
        if direction is Direction.ADD:  # the statistic −s, Q first
            with_record, without, base = without[::-1], with_record[::-1], -(base + len(with_record) - 1)
        return arb_poly(with_record) ** scheme.steps, arb_poly(without) ** scheme.steps, base * scheme.steps, dropped


def delta_lower(scheme: TruncatedPoisson, epsilon: float, direction: Direction) -> float:
    """The LOWER bound max over θ in :data:`ANGLES` (those at an angle only within :data:`MAX_CELLS`)
    and τ of P^T(Σs >= τ) − e^ε Q^T(Σs >= τ) − e^ε·(left-out mass) (module docstring)."""
    return max(_delta_at(scheme, epsilon, direction, theta) for theta in ANGLES[scheme.replace_one]
               if theta == 0.0 or cells(scheme, theta) <= MAX_CELLS)


def cells(scheme: TruncatedPoisson, theta: float) -> int:
    """The number of cells of the instance at angle ``theta`` (:func:`_edges` on both axes)."""
    sigma, c = scheme.pair.sigma, scheme.pair.sensitivity
    xu, xw = _record(c, theta)
    u_cells = len(_edges(-scheme.max_batch * c - abs(xu), abs(xu), sigma)) + 1
    w_reach = abs(xw) if scheme.replace_one else 0.0
    return u_cells * (len(_edges(min(0.0, xw) - w_reach, max(0.0, xw), sigma)) + 1 if xw != 0.0 else 1)


def _delta_at(scheme: TruncatedPoisson, epsilon: float, direction: Direction, theta: float) -> float:
    first, second, _, dropped = _laws(scheme, direction, theta)
    with with_precision(_BITS):
        kappa = arb(epsilon).exp()
        return max(0.0, arb_bound(arb(best_threshold(first, second, kappa)) - kappa * dropped * scheme.steps, Side.LOWER))


def best_threshold(first: arb_poly, second: arb_poly, kappa: arb) -> float:
    """max(0, max over τ of a LOWER end of P(Σs >= τ) − κ·Q(Σs >= τ)) for the laws of a lattice
    statistic (coefficient i: the mass at the lattice's i-th point) under the two datasets."""
    with with_precision(_BITS):
        best, run = 0.0, arb(0)
        for i in range(max(first.degree(), second.degree()), -1, -1):  # τ from the top
            run += first[i] - kappa * second[i]
            best = max(best, arb_bound(run, Side.LOWER))
        return best


def epsilon_lower(scheme: TruncatedPoisson, delta: float, direction: Direction) -> float:
    """A LOWER end of ε(δ) from :func:`delta_lower` (:func:`lower_end`)."""
    return lower_end(lambda epsilon: delta_lower(scheme, epsilon, direction), delta)


def lower_end(delta_at: Callable[[float], float], delta: float, tolerance: float = SEARCH_TOLERANCE) -> float:
    """A LOWER end of ε(δ) from a LOWER bound ``delta_at`` on δ(ε): a point where it was evaluated
    above δ (δ(ε) > δ there, so ε(δ) exceeds it), the failing end of
    :func:`~verifier.analytic._search.smallest_passing`'s bracket at ``tolerance``; −∞ if it is not
    above δ at ε = 0 (below that the bound is left to others), and the search's ceiling where it is
    still above δ there."""
    def passes(epsilon: float) -> bool:
        return not delta_at(epsilon) > delta

    if passes(0.0):
        return -math.inf
    try:
        return smallest_passing(passes, 0.0, tolerance=tolerance)[0]
    except NotApplicable:  # no passing point up to the ceiling: the ceiling if it fails too (else 0, which failed)
        return EPSILON_CEILING if not passes(EPSILON_CEILING) else 0.0


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

    def _check(self, scheme: Scheme) -> TruncatedPoisson:
        """The scheme, for a method that has said it supports it (a subclass may decline here)."""
        assert isinstance(scheme, TruncatedPoisson)
        return scheme

    def _delta_lower(self, scheme: TruncatedPoisson, epsilon: float, direction: Direction) -> float:
        return delta_lower(scheme, epsilon, direction)

    def _epsilon_lower(self, scheme: TruncatedPoisson, delta: float, direction: Direction) -> float:
        return epsilon_lower(scheme, delta, direction)

    def delta_bounds(self, scheme: Scheme, epsilon: float, direction: Direction) -> Sequence[Bound]:
        value = self._delta_lower(self._check(scheme), epsilon, direction)
        return [Bound(value, Side.LOWER, direction, Quantity.DELTA, epsilon, self.name, self.citation)]

    def epsilon_bounds(self, scheme: Scheme, delta: float, direction: Direction) -> Sequence[Bound]:
        value = self._epsilon_lower(self._check(scheme), delta, direction)
        if not math.isfinite(value):
            return []
        return [Bound(value, Side.LOWER, direction, Quantity.EPSILON, delta, self.name, self.citation)]


METHODS = [TruncatedAttained()]
