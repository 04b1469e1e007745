"""Truncated Poisson where truncation binds (n = 1000, q = 0.05, B = 40, σ = 2, C = 1, 10 steps,
add/remove, δ = 1e-5): which end of verifier's bracket is loose, measured in FLOAT (an experiment,
NOT a bound: float loss laws on a grid of 1e-3 and numpy convolutions), and how low any accountant
that composes one pair per step could take the upper end (the last table, RIGOROUS).

    .venv/bin/python benchmarks/truncated_family.py [--out FILE.md]

Rows, with the record first (REMOVE):

- instances of the real mechanism in one dimension, the record at +C and every other record at v,
  the same pair at all 10 steps (v = −C is verifier's truncated-attained LOWER bound), and 10 steps
  mixing v = −C with v = −C/2;
- instances in the plane: the record at C(cos θ, sin θ) and every other record at −C·e_1 (θ = 0 is
  the collinear instance; verifier's truncated-attained also bounds θ = π/4 rigorously);
- the two-label UPPER bound (the count M <= B − 1 at rate q with shift C, M >= B at the averaged
  rate q_c with shift 2C), and its M >= B label alone;
- the pair that reveals the count M only below B − j and hides it from B − j on, with every other
  record at −C (a chain of j + 1 points, j = 0 is the two-label bound). For j = 1 it is proven to
  be the worst placement (verifier.pairs.truncated_edge, Lemma C of proofs/batch_sampling.py) and
  verifier uses it. For j >= 2 it would be an UPPER bound only if the collinear chain were the worst
  chain. proofs/batch_sampling.py shows that the collinear instance is not the worst at larger ε on
  tiny cases, so those rows are estimates only;
- the same chains with every other record at −(cos π/4, sin π/4) (for j >= 8 they lie above the
  collinear ones, as the instance in the plane does);
- for j = 2, the bound that also reveals the values of the next two other records drawn (joint
  convexity over them: the worst placement on a grid of angles π/4 apart, unit norms), and the one
  that reveals the two values but not their order (the order is uniform given the pair);
- instances in one dimension with two values: a share of the other records at −C, the rest at 0 or
  +C (the number at −C among k kept is hypergeometric). Every one lies far below the homogeneous
  instance: mixing values spreads the sum without the record, which masks the displacement;
- the adaptive adversary, which picks one instance in the plane at every step from the outputs so far
  (the Bellman recursion on the accumulated loss; verifier's truncated-adaptive computes it rigorously);
- for j = 8 with the values revealed but not their order, random placements around the homogeneous
  one at −(cos π/4, sin π/4): all below it, for the composed ε;
- the float twin of the last table's floor (the hull of the plane instances' trade-off curves), and
  the same hull with six two-valued instances in the plane added: they leave it where it is, so on
  this evidence the homogeneous instances at an angle are the worst steps in the hull's sense.

A second table gives δ(ε) of ONE step. For the chain of 2 with the values revealed as a multiset, a
mixed pair {−C, 0} or {−C, +C} lies ABOVE every homogeneous pair from ε = 1 on (8.3e-8 against
7.2e-8 at ε = 1, 1.4e-9 against 4.4e-11 at ε = 1.5). So "the homogeneous placement is the worst",
which a proof through per-step profiles would need at every ε, is false for that chain, even
though the composed ε above never exceeded the homogeneous value. The real mechanism shows the same
pattern: others at 0 have the heavier one-step tail, others at −C the larger composed ε.

A third table gives verifier's rigorous ε(1e-5) bracket in each direction, under add/remove and
replace-one, and its width (upper − lower)/lower.

A fourth table gives the FLOOR of per-step accounting, rigorous (ball arithmetic). Why a floor exists. A per-step dominating pair (P*, Q*) must dominate every instance of the step: in
DP-SGD the other records' clipped gradients can be anything at every step. The instances used are
verifier's truncated-attained ones: every other record at o = −C·e_u and the record at
C(cos θ, sin θ), for the angles in :data:`ANGLES`. Each is taken post-processed, through its
rounded log-likelihood ratio on cells with the masses in ball arithmetic
(:func:`verifier.certify.methods.truncated_attained.step_laws`), at the angles ADAPTIVE_ANGLES; a pair
that dominates an instance dominates it post-processed.

Any event S of an instance gives a point of its trade-off curve: f(Q(S)) <= 1 − P(S). Since f* <= f
and f* decreases, f*(Q_hi) <= 1 − P_lo, with Q_hi an upper end of Q(S) (plus the counts left out)
and P_lo a lower end of P(S). The events used are the unions of the statistic's values, taken in
decreasing order of their float likelihood ratio. f* is convex, so it lies below the lower convex
envelope g of all these points and of (0, 1), (1, 0). g is the trade-off curve of a discrete pair D,
one atom per segment of the upper concave hull of the points (Q_hi, P_lo) in the plane. The hull is
found in exact rationals, and the atoms' masses are differences of binary64 numbers, exact in arb.
So (P*, Q*) dominates D (Blackwell), and (P*, Q*)^T dominates D^T. Every event of D^T bounds
δ_{P*^T}(ε) from below.

The events of D^T used are thresholds on the sum of the atoms' log-likelihood ratios, rounded to
:data:`LABEL_STEP`. Merging atoms with the same label is post-processing, so the result is still
dominated by P*. The T-fold laws are exact polynomial powers (flint.arb_poly). The floor is the
largest ε found where this lower bound on δ exceeds δ. No upper bound built by composing one
per-step pair can certify ε(δ) at or below it.

That covers verifier's pld method, dp_accounting's and PRV's PLD accountants. An RDP bound is not
covered, but it is looser here anyway. The floor is NOT a bound on the mechanism's ε: an adaptive
adversary picks one instance per step, and no single instance reaches g. The table compares it with
the two rigorous LOWER ends: one instance repeated, and the adversary that picks the instance from the
history (truncated-adaptive). Against the first the floor is more than 5% above, so no per-step
accounting could make that bracket 5% wide; against the second it is not.
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import time
from fractions import Fraction
from pathlib import Path
from typing import Callable

import numpy as np
from scipy.signal import fftconvolve
from scipy.special import logsumexp
from flint import arb, arb_poly
from scipy.stats import binom, hypergeom

from verifier._directed import arb_bound, up, with_precision
from verifier._types import Direction, Quantity, Side
from verifier.analytic._search import smallest_passing
from verifier.certify.claim import parse_claim
from verifier.certify.methods import truncated_adaptive, truncated_attained
from verifier.certify.methods.truncated_adaptive import ANGLES as ADAPTIVE_ANGLES
from verifier.certify.methods.truncated_attained import best_threshold, step_laws
from verifier.certify.portfolio import best_bracket, collect_bounds
from verifier.schemes import TruncatedPoisson

N, Q, B, SIGMA, STEPS, DELTA = 1000, 0.05, 40, 2.0, 10, 1e-5
STEP = 1e-3  # loss grid
COUNTS = binom.pmf(np.arange(N), N - 1, Q)  # law of the other records' count M
FULL = COUNTS[B:].sum()
RATE_FULL = Q * sum(COUNTS[m] * B / (m + 1) for m in range(B, N)) / FULL  # q_c
Component = tuple[float, int, int]  # (weight, other records in the batch, record in the batch)


def components() -> tuple[list[Component], list[Component]]:
    """The batch laws of the real mechanism, with the record (P) and without it (Q): given M = m other
    records drawn, min(m, B) of them are kept; with the record present it joins with probability q
    (m <= B − 1) or qB/(m + 1), taking one of the B places (m >= B)."""
    p: dict[tuple[int, int], float] = {}
    q: dict[tuple[int, int], float] = {}
    for m, weight in enumerate(COUNTS):
        if weight < 1e-30:
            continue
        rate = Q if m <= B - 1 else Q * B / (m + 1)
        p[min(m, B - 1), 1] = p.get((min(m, B - 1), 1), 0.0) + rate * weight
        p[min(m, B), 0] = p.get((min(m, B), 0), 0.0) + (1 - rate) * weight
        q[min(m, B), 0] = q.get((min(m, B), 0), 0.0) + weight
    return [(w, k, s) for (k, s), w in p.items()], [(w, k, s) for (k, s), w in q.items()]


P_PARTS, Q_PARTS = components()


def loss_law(p: dict[float, float], q: dict[float, float]) -> tuple[np.ndarray, int]:
    """The law of the loss log(p/q)(y), y ~ P, for one-dimensional Gaussian mixtures {mean: weight},
    on the grid STEP·k: (masses, lowest k)."""
    means = np.array(sorted(set(p) | set(q)))
    y = np.linspace(means.min() - 14 * SIGMA, means.max() + 14 * SIGMA, 200_001)

    def log_density(mix: dict[float, float]) -> np.ndarray:
        m = np.array(list(mix))
        w = np.array(list(mix.values()))
        return logsumexp(-((y[:, None] - m) ** 2) / (2 * SIGMA**2) + np.log(w), axis=1)

    lp = log_density(p)
    index = np.round((lp - log_density(q)) / STEP).astype(int)
    base = int(index.min())
    masses = np.bincount(index - base, weights=np.exp(lp - lp.max()))
    return masses / masses.sum(), base


def epsilon(laws: list[tuple[np.ndarray, int]]) -> float:
    """ε(δ) of the composition of the given one-step loss laws (bisection on δ(ε) = E(1 − e^{ε−L})_+)."""
    total, base = np.array([1.0]), 0
    for masses, low in laws:
        size = len(total) + len(masses) - 1
        n = 1 << (size - 1).bit_length()
        total = np.maximum(np.fft.irfft(np.fft.rfft(total, n) * np.fft.rfft(masses, n), n)[:size], 0.0)
        base += low
    return _bisect(lambda e: step_delta((total, base), e), 20.0, 50)


def _bisect(delta: Callable[[float], float], hi: float, rounds: int) -> float:
    """The upper end, after ``rounds`` halvings of [0, ``hi``], of where ``delta`` falls to DELTA."""
    lo = 0.0
    for _ in range(rounds):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if delta(mid) > DELTA else (lo, mid)
    return hi


def _put(mix: dict[float, float], mean: float, weight: float) -> None:
    key = round(mean, 9)
    mix[key] = mix.get(key, 0.0) + weight


def instance(v: float, at_v: int = N - 1, rest: float = 0.0) -> tuple[dict, dict]:
    """The record at +1 (present, then absent), ``at_v`` of the n − 1 other records at v and the rest
    at ``rest``, in one dimension (with every other record at v, the default, k kept sum to k·v)."""
    out: tuple[dict, dict] = ({}, {})
    for line, mix in zip(out, _two_valued(np.array([1.0, 0.0]), np.array([v, 0.0]), np.array([rest, 0.0]), at_v)):
        for (u, _), w in mix.items():
            _put(line, u, w)
    return out


def _two_valued(x: np.ndarray, first: np.ndarray, second: np.ndarray, count: int) -> tuple[dict, dict]:
    """Batch sums of the real mechanism in the plane, {(u, w): weight} with the record at x and
    without it: ``count`` of the n − 1 other records at ``first``, the rest at ``second``. Of k
    other records kept, the number at ``first`` is hypergeometric (a uniform k-subset)."""
    mixes: tuple[dict, dict] = ({}, {})
    for mix, parts in zip(mixes, (P_PARTS, Q_PARTS)):
        for weight, k, s in parts:
            law = hypergeom(N - 1, count, k)
            for a in range(min(count, k) + 1):
                if (share := float(law.pmf(a))) > 1e-30:
                    _at(mix, a * first + (k - a) * second + s * x, weight * share)
    return mixes


def plane_law(p: dict[tuple[float, float], float], q: dict[tuple[float, float], float], h: float = 0.04) -> tuple[np.ndarray, int]:
    """The loss law of Gaussian mixtures in the plane {(u, w): weight} (REMOVE), on the grid STEP·k:
    the densities on a grid of cells of side ``h``."""
    means = np.array(list(p) + list(q))
    u = np.arange(means[:, 0].min() - 9 * SIGMA, means[:, 0].max() + 9 * SIGMA, h)
    v = np.arange(means[:, 1].min() - 9 * SIGMA, means[:, 1].max() + 9 * SIGMA, h)

    def density(mix: dict[tuple[float, float], float]) -> np.ndarray:
        rows: dict[float, np.ndarray] = {}  # the mixture's u-part on each line w = const
        for (mu, mw), weight in mix.items():
            rows[mw] = rows.get(mw, 0.0) + weight * np.exp(-((u - mu) ** 2) / (2 * SIGMA**2))
        return sum(np.outer(row, np.exp(-((v - mw) ** 2) / (2 * SIGMA**2))) for mw, row in rows.items())

    dp, dq = density(p), density(q)
    keep = (dp > 1e-300) & (dq > 1e-300)
    index = np.round(np.log(dp[keep] / dq[keep]) / STEP).astype(int)
    base = int(index.min())
    masses = np.bincount(index - base, weights=dp[keep])
    return masses / masses.sum(), base


def _at(mix: dict, point: np.ndarray, weight: float) -> None:
    key = (round(float(point[0]), 9), round(float(point[1]), 9))
    mix[key] = mix.get(key, 0.0) + weight


def plane_instance(theta: float) -> tuple[dict, dict]:
    """The record at (cos θ, sin θ), every other record at (−1, 0): batch sums of the real mechanism."""
    others = np.array([-1.0, 0.0])
    return _two_valued(np.array([np.cos(theta), np.sin(theta)]), others, others, 0)


def plane_chain(j: int, x: np.ndarray, others: list[np.ndarray]) -> tuple[float, dict, dict]:
    """(P(M >= B − j), the pair given M >= B − j with the count hidden): the record at x and the
    next j other records drawn at ``others`` (in that order), their partial sums S_k."""
    weight = COUNTS[B - j:].sum()
    sums = [np.zeros(2)]
    for r in others:
        sums.append(sums[-1] + r)
    p: dict = {}
    q: dict = {}
    for k in range(j + 1):
        pi = (COUNTS[B - j + k] if k < j else FULL) / weight
        rate, landing = (Q, sums[k] + x) if k < j else (RATE_FULL, sums[k - 1] + x)
        _at(q, sums[k], pi)
        _at(p, sums[k], pi * (1 - rate))
        _at(p, landing, pi * rate)
    return weight, p, q


def chain(j: int) -> tuple[float, dict, dict]:
    """(P(M >= B − j), the pair given M >= B − j with the count hidden, the other records at −1)."""
    weight = COUNTS[B - j:].sum()
    p: dict[float, float] = {}
    q: dict[float, float] = {}
    for k in range(j + 1):
        pi = (COUNTS[B - j + k] if k < j else FULL) / weight
        _put(q, -k, pi)
        rate, shift = (Q, 1) if k < j else (RATE_FULL, 2)
        _put(p, -k, pi * (1 - rate))
        _put(p, -k + shift, pi * rate)
    return weight, p, q


def _weighted(chain_pair: tuple[float, dict, dict]) -> tuple[float, tuple[np.ndarray, int]]:
    weight, p, q = chain_pair
    return weight, plane_law(p, q)


def _mean(mixes: list[dict]) -> dict:
    """The even mixture of the given mixtures."""
    out: dict = {}
    for mix in mixes:
        for key, w in mix.items():
            out[key] = out.get(key, 0.0) + w / len(mixes)
    return out


def multiset_chain(j: int, x: np.ndarray, others: list[np.ndarray]) -> tuple[float, dict, dict]:
    """:func:`plane_chain` with the next j other records' values revealed but not their order (every
    order equally likely given the multiset ``others``)."""
    chains = [plane_chain(j, x, [others[i] for i in order]) for order in set(itertools.permutations(range(j)))]
    return chains[0][0], _mean([p for _, p, _ in chains]), _mean([q for _, _, q in chains])


def step_delta(law: tuple[np.ndarray, int], eps: float) -> float:
    """δ(ε) = E_P(1 − e^{ε − L})_+ of one step, from its loss law on the grid STEP·k."""
    masses, low = law
    loss = (np.arange(len(masses)) + low) * STEP
    above = loss > eps
    return float(np.sum(masses[above] * -np.expm1(eps - loss[above])))


def labelled(weight: float, pair: tuple[np.ndarray, int], rest: tuple[np.ndarray, int]) -> tuple[np.ndarray, int]:
    """The loss law of a two-label mixture: ``pair`` with probability ``weight``, ``rest`` otherwise."""
    (a, la), (b, lb) = pair, rest
    low = min(la, lb)
    out = np.zeros(max(la + len(a), lb + len(b)) - low)
    out[la - low: la - low + len(a)] += weight * a
    out[lb - low: lb - low + len(b)] += (1 - weight) * b
    return out, low


#: (share of the other records at −1, value of the rest) of the two-valued instances in one dimension.
TWO_VALUED = ((0.99, 0.0), (0.95, 0.0), (0.8, 0.0), (0.99, 1.0), (0.95, 1.0))
#: Width of the lattice of the floor's hull pair's rounded log-likelihood ratios (the labels of its T-fold test).
LABEL_STEP = 1e-3
#: Absolute width in ε at which the search for the floor stops.
FLOOR_TOLERANCE = 1e-5
_FLOOR_BITS = 128
#: Per-step ε of the one-step table.
STEP_EPSILONS = (0.1, 0.2, 0.5, 1.0, 1.5)
#: Random placements tried around the chain of 8 at −(cos π/4, sin π/4), per spread of the angles.
PERTURBED = 4


def adaptive_epsilon(laws: list[tuple[np.ndarray, int]]) -> float:
    """ε(δ) against an adversary that picks one of ``laws`` (one-step loss laws on the grid STEP·k) at
    every step from the history: the Bellman recursion W_k(c) = max_law E[W_{k−1}(c − L)],
    W_0(c) = (1 − e^c)_+, δ = W_T(ε) (float; c = ε − the loss so far, on the grid, 0 off its ends)."""
    low, high = -40.0, 5.0
    c = low + np.arange(int(round((high - low) / STEP)) + 1) * STEP
    value = np.maximum(-np.expm1(c), 0.0)
    for _ in range(STEPS):  # W_T on the grid: it does not depend on ε, which only picks where it is read
        best = np.zeros(c.size)
        for masses, base in laws:  # E W(c − L): W read at index i − base − j
            full = np.convolve(value, masses) if masses.size < 64 else fftconvolve(value, masses)
            index = np.arange(c.size) - base
            inside = (index >= 0) & (index < full.size)
            best = np.maximum(best, np.where(inside, full[np.clip(index, 0, full.size - 1)], 0.0))
        value = best
    return _bisect(lambda e: float(np.interp(e, c, value)), 2.0, 40)


def float_hull_law(laws: list[tuple[np.ndarray, int]]) -> tuple[np.ndarray, int]:
    """FLOAT twin of the floor's pair: the loss law (grid STEP·k) of the pair whose ROC curve is the
    upper concave hull of the given laws' ROC curves (each law's losses in decreasing order, its Q-masses
    m·e^{−L}); each hull segment an atom at its rounded log-likelihood ratio."""
    points = []
    for masses, low in laws:
        top_down = masses[::-1]
        losses = (low + np.arange(masses.size)[::-1]) * STEP
        points += list(zip(np.minimum(np.cumsum(top_down * np.exp(-losses)), 1.0).tolist(), np.cumsum(top_down).tolist()))
    hull = np.array(upper_hull(points))
    dq, dp = np.diff(hull[:, 0]), np.diff(hull[:, 1])
    keep = dp > 0
    index = np.round(np.log(dp[keep] / np.maximum(dq[keep], 1e-300)) / STEP).astype(int)
    out = np.bincount(index - index.min(), weights=dp[keep])
    return out / out.sum(), int(index.min())


def two_valued_plane_instance(theta: float, second: tuple[float, float], share: float) -> tuple[dict, dict]:
    """The record at (cos θ, sin θ), a share of the other records at (−1, 0) and the rest at ``second``."""
    return _two_valued(np.array([np.cos(theta), np.sin(theta)]), np.array([-1.0, 0.0]), np.array(second), round(share * (N - 1)))


#: (share at (−1, 0), the rest's value, θ/π) of the two-valued instances in the plane added to the hull.
TWO_VALUED_PLANE = ((0.9, (0.0, 0.0), 0.25), (0.9, (0.0, 1.0), 0.25), (0.9, (0.0, -1.0), 0.25), (0.7, (0.0, 1.0), 0.25),
                    (0.9, (-0.7071, 0.7071), 0.0), (0.95, (1.0, 0.0), 0.3))


def _hull_rows(plane: dict[float, tuple[np.ndarray, int]]) -> list[str]:
    """Rows: the float floor (hull of the plane instances at ADAPTIVE_ANGLES), alone and with the
    two-valued plane instances of TWO_VALUED_PLANE (each also alone)."""
    base = [plane[t] for t in ADAPTIVE_ANGLES]
    rows = [f"| hull of the plane instances' trade-off curves (the floor's float twin) | {epsilon([float_hull_law(base)] * STEPS):.4f} |"]
    extra = []
    for share, second, turn in TWO_VALUED_PLANE:
        law = plane_law(*two_valued_plane_instance(turn * np.pi, second, share), h=0.05)
        extra.append(law)
        rows.append(f"| instance in the plane, a share {share:g} of the others at (−1, 0) and the rest at {second}, θ = {turn:g}π | {epsilon([law] * STEPS):.4f} |")
    rows.append(f"| hull of the plane instances and these {len(extra)} | {epsilon([float_hull_law(base + extra)] * STEPS):.4f} |")
    return rows


def _perturbed_multisets(poisson: tuple[np.ndarray, int]) -> list[str]:
    """Rows: the chain of 8 with the values revealed as a multiset, at −(cos π/4, sin π/4) and at the
    largest of PERTURBED random placements around it (each value's angle moved by N(0, s²) and its
    norm shrunk by |N(0, s²/4)|), for spreads s = 0.05, 0.15, 0.3."""
    rng = np.random.default_rng(0)
    x = np.array([1.0, 0.0])
    rows = []
    for spread in (0.0, 0.05, 0.15, 0.3):
        values = []
        for _ in range(1 if spread == 0.0 else PERTURBED):
            angles = 1.25 * np.pi + rng.normal(0.0, spread, 8)
            norms = 1.0 - np.abs(rng.normal(0.0, spread / 2, 8))
            others = [r * np.array([np.cos(a), np.sin(a)]) for a, r in zip(angles, norms)]
            values.append(epsilon([labelled(*_weighted(multiset_chain(8, x, others)), poisson)] * STEPS))
        where = "at −(cos π/4, sin π/4)" if spread == 0.0 else f"largest of {PERTURBED} random placements around −(cos π/4, sin π/4), spread {spread:g}"
        rows.append(f"| count hidden from M >= B − 8, the next 8 others' values revealed but not their order, {where} (estimate) | {max(values):.4f} |")
    return rows


def _one_step_table() -> list[str]:
    """A second table: δ(ε) of ONE step at per-step ε in STEP_EPSILONS, for the real mechanism's
    instances and for the hidden label of the chain of 2 with the values revealed as a multiset
    (the record at (1, 0)), whose largest value over placements a proof through per-step profiles
    would have to bound at every ε."""
    x = np.array([1.0, 0.0])
    rows = ["", "| one step, δ(ε) (FLOAT) | " + " | ".join(f"ε = {e:g}" for e in STEP_EPSILONS) + " |",
            "|---|" + "---|" * len(STEP_EPSILONS)]

    def row(name: str, deltas: list[float]) -> None:
        rows.append(f"| {name} | " + " | ".join(f"{d:.3g}" for d in deltas) + " |")

    for name, pair in (("instance, other records at -1", instance(-1.0)), ("instance, other records at 0", instance(0.0)),
                       ("instance, half the other records at -1 and half at 0", instance(-1.0, (N - 1) // 2, 0.0))):
        law = loss_law(*pair)
        row(name, [step_delta(law, e) for e in STEP_EPSILONS])
    for second in (-1.0, 0.0, 1.0):
        _, p, q = multiset_chain(2, x, [np.array([-1.0, 0.0]), np.array([second, 0.0])])
        law = plane_law(p, q)
        row(f"chain of 2 given M >= B − 2, values {{-1, {second:g}}} revealed", [step_delta(law, e) for e in STEP_EPSILONS])
    largest = [0.0] * len(STEP_EPSILONS)
    for turn in np.arange(17) / 16:
        for norm in (0.75, 1.0):
            _, p, q = plane_chain(2, np.array([np.cos(turn * np.pi), np.sin(turn * np.pi)]), [np.array([-norm, 0.0])] * 2)
            law = plane_law(p, q)
            largest = [max(d, step_delta(law, e)) for d, e in zip(largest, STEP_EPSILONS)]
    row("chain of 2 given M >= B − 2, both values equal: largest over the record's angle (π/16 grid) and ‖v‖ ∈ {0.75, 1}", largest)
    return rows


Point = tuple[float, float]


def roc_points(p: list[arb], q: list[arb]) -> list[Point]:
    """Points (Q_hi, P_lo) of the events 'the statistic is among the j most likely values under P
    against Q', for every j. The values are ordered by their float likelihood ratio; any order gives
    valid events. Q_hi includes the mass missing from Q's law (the counts left out)."""
    with with_precision(_FLOOR_BITS):
        missing = arb_bound(1 - sum(q, arb(0)), Side.UPPER)
        order = sorted(range(len(p)), key=lambda i: -_ratio(float(p[i].mid()), float(q[i].mid())))
        points, run_p, run_q = [], arb(0), arb(0)
        for i in order:
            run_p, run_q = run_p + p[i], run_q + q[i]
            points.append((min(1.0, up(arb_bound(run_q, Side.UPPER) + missing)), max(0.0, arb_bound(run_p, Side.LOWER))))
        return points


def _ratio(p: float, q: float) -> float:
    return math.inf if q <= 0.0 else p / q


def upper_hull(points: list[Point]) -> list[Point]:
    """The vertices of the upper concave hull of ``points`` and (0, 0), (1, 1), from (0, 0) to
    (1, 1), found in exact rationals (each vertex is one of the given binary64 points)."""
    exact = sorted({(Fraction(a), Fraction(b)) for a, b in [*points, (0.0, 0.0), (1.0, 1.0)]}, key=lambda t: (t[0], -t[1]))
    hull: list[tuple[Fraction, Fraction]] = []
    for point in exact:
        if hull and point[0] == hull[-1][0]:
            continue  # same Q, lower P (the sort puts the highest first)
        while len(hull) >= 2 and _turn(hull[-2], hull[-1], point) >= 0:
            hull.pop()
        hull.append(point)
    return [(float(a), float(b)) for a, b in hull]


def _turn(o: tuple[Fraction, Fraction], a: tuple[Fraction, Fraction], b: tuple[Fraction, Fraction]) -> Fraction:
    """Cross product (a − o) × (b − o): >= 0 when a lies on or below the segment o→b."""
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def hull_pair(hull: list[Point]) -> tuple[list[arb], list[arb], int]:
    """(P-law, Q-law, lowest label) of the hull's pair D: an atom (ΔP, ΔQ) per segment, labelled by
    its log-likelihood ratio rounded to LABEL_STEP (atoms with ΔQ = 0 above every other label);
    atoms with one label merged."""
    with with_precision(_FLOOR_BITS):
        atoms = [(arb(b1) - arb(b0), arb(a1) - arb(a0), a1 - a0, b1 - b0) for (a0, b0), (a1, b1) in zip(hull, hull[1:])]
        finite = [round(math.log(db / da) / LABEL_STEP) for _, _, da, db in atoms if da > 0.0 and db > 0.0]
        low, top = min(finite), max(finite) + 1
        p, q = [arb(0)] * (top - low + 1), [arb(0)] * (top - low + 1)
        for dp, dq, da, db in atoms:
            if db <= 0.0:
                label = low  # no P-mass: the lowest label (never above a threshold that matters)
            else:
                label = top if da <= 0.0 else round(math.log(db / da) / LABEL_STEP)
            p[label - low] += dp
            q[label - low] += dq
        return p, q, low


def delta_floor(p: arb_poly, q: arb_poly, epsilon: float) -> float:
    """A LOWER bound on δ(ε) of D^T: the largest P^T(Σ >= τ) − e^ε Q^T(Σ >= τ) over thresholds τ."""
    with with_precision(_FLOOR_BITS):
        return best_threshold(p, q, arb(epsilon).exp())


def _scheme(relation: str) -> TruncatedPoisson:
    """The binding case's scheme under ``relation``."""
    return parse_claim({"mechanism": {"name": "gaussian", "sigma": SIGMA}, "neighboring": relation, "epsilon": 1.0, "delta": DELTA,
                        "scheme": {"name": "truncated_poisson", "dataset_size": N, "rate": Q, "max_batch": B, "steps": STEPS}}).model


def _floor_table() -> list[str]:
    """The last table: per relation, the floor of per-step accounting (REMOVE) from the instances at
    ADAPTIVE_ANGLES (module docstring; under replace-one the record x against −x, one orientation),
    against the two rigorous LOWER ends."""
    rows = ["", "| per-step accounting's floor (remove, ε(1e-5) over 10 steps; RIGOROUS) | add_or_remove | replace_one |", "|---|---|---|"]
    columns = []
    for relation in ("add_or_remove", "replace_one"):
        scheme = _scheme(relation)
        points = [point for turn in ADAPTIVE_ANGLES for point in roc_points(*step_laws(scheme, turn * np.pi)[:2])]
        hull = upper_hull(points)
        p, q, _ = hull_pair(hull)
        with with_precision(_FLOOR_BITS):
            p_run, q_run = arb_poly(p) ** STEPS, arb_poly(q) ** STEPS
        floor, _ = smallest_passing(lambda e: not delta_floor(p_run, q_run, e) > DELTA, 0.0, tolerance=FLOOR_TOLERANCE)
        fixed = truncated_attained.epsilon_lower(scheme, DELTA, Direction.REMOVE)
        adaptive = truncated_adaptive.epsilon_lower(scheme, DELTA, Direction.REMOVE)
        columns.append([f"{len(hull)} of {len(points)}", f"{floor:.5f}", f"{fixed:.5f}", f"{floor / fixed:.4f}", f"{adaptive:.5f}", f"{floor / adaptive:.4f}"])
    names = ("hull vertices (events kept)", "FLOOR: every per-step dominating pair composes to ε above",
             "rigorous LOWER end, one instance repeated (truncated-attained)", "floor / that end",
             "rigorous LOWER end, the instance picked from the history (truncated-adaptive, verifier's)", "floor / that end")
    return rows + [f"| {name} | {a} | {b} |" for name, a, b in zip(names, *columns)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    start = time.process_time()
    lines = ["| pair (REMOVE, FLOAT, not a bound) | ε(1e-5) over 10 steps |", "|---|---|"]
    laws = {v: loss_law(*instance(v)) for v in (-1.0, -0.9, -0.75, -0.5, 0.0)}
    for v, law in laws.items():
        lines.append(f"| instance, other records at {v:g} | {epsilon([law] * STEPS):.4f} |")
    for share, rest in TWO_VALUED:
        law = loss_law(*instance(-1.0, round(share * (N - 1)), rest))
        lines.append(f"| instance, a share {share:g} of the other records at -1 and the rest at {rest:g} | {epsilon([law] * STEPS):.4f} |")
    lines.append(f"| instance, 8 steps at −1 and 2 at −0.5 | {epsilon([laws[-1.0]] * 8 + [laws[-0.5]] * 2):.4f} |")
    plane = {turn: plane_law(*plane_instance(turn * np.pi)) for turn in ADAPTIVE_ANGLES + (0.26,)}
    for turn in (0.1, 0.2, 0.25, 0.26, 0.3, 0.4):
        lines.append(f"| instance in the plane, θ = {turn:g}π | {epsilon([plane[turn]] * STEPS):.4f} |")
    lines.append(f"| adaptive adversary: at each step the instance in the plane at θ/π in {{{', '.join(f'{t:g}' for t in ADAPTIVE_ANGLES)}}} "
                 f"picked from the history (Bellman recursion) | {adaptive_epsilon([plane[t] for t in ADAPTIVE_ANGLES]):.4f} |")
    lines += _hull_rows(plane)
    poisson = loss_law({0.0: 1 - Q, 1.0: Q}, {0.0: 1.0})
    swapped = loss_law({0.0: 1 - RATE_FULL, 2.0: RATE_FULL}, {0.0: 1.0})
    lines.append(f"| two-label UPPER bound | {epsilon([labelled(FULL, swapped, poisson)] * STEPS):.4f} |")
    lines.append(f"| its M >= B label alone | {epsilon([swapped] * STEPS):.4f} |")
    for j in (1, 2, 4, 8, 16):
        weight, p, q = chain(j)
        status = "proven, verifier's UPPER bound for ε >= 0" if j == 1 else "estimate"
        lines.append(f"| count hidden from M >= B − {j}, collinear ({status}) | {epsilon([labelled(weight, loss_law(p, q), poisson)] * STEPS):.4f} |")
    x = np.array([1.0, 0.0])
    toward = [np.array([np.cos(a), np.sin(a)]) for a in np.arange(8) * np.pi / 4]
    for j in (2, 4, 8, 16):
        weight, p, q = plane_chain(j, x, [-toward[1]] * j)
        lines.append(f"| count hidden from M >= B − {j}, others at −(cos π/4, sin π/4) (estimate) | {epsilon([labelled(weight, plane_law(p, q), poisson)] * STEPS):.4f} |")
    revealed = max((epsilon([labelled(*_weighted(plane_chain(2, x, [a, b])), poisson)] * STEPS), i, k)
                   for i, a in enumerate(toward) for k, b in enumerate(toward))
    lines.append(f"| count hidden from M >= B − 2, the next two others' values revealed, worst on the π/4 grid "
                 f"(at {revealed[1]}π/4, {revealed[2]}π/4) | {revealed[0]:.4f} |")
    unordered = [(epsilon([labelled(*_weighted(multiset_chain(2, x, [toward[i], toward[k]])), poisson)] * STEPS), i, k)
                 for i, k in itertools.combinations_with_replacement(range(8), 2)]
    worst = max(unordered)
    lines.append(f"| count hidden from M >= B − 2, the two others' values revealed but not their order, worst on the π/4 grid "
                 f"(at {worst[1]}π/4, {worst[2]}π/4) | {worst[0]:.4f} |")
    lines += _perturbed_multisets(poisson)
    lines += _one_step_table()
    lines += ["", "| verifier's rigorous ε(1e-5) bracket | direction | bracket | width |", "|---|---|---|---|"]
    for relation in ("add_or_remove", "replace_one"):
        scheme = _scheme(relation)
        collected = collect_bounds(scheme, Quantity.EPSILON, DELTA, tuple(Direction))
        for direction in Direction:
            bracket = best_bracket(collected.bounds, direction)
            lines.append(f"| {relation} | {direction.value} | [{bracket.lower:.5f}, {bracket.upper:.5f}] | "
                         f"{100 * (bracket.upper - bracket.lower) / bracket.lower:.1f}% |")
    lines += _floor_table()
    lines.append("")
    lines.append(f"CPU {time.process_time() - start:.1f} s; load average at the end: {os.getloadavg()[0]:.1f}")
    text = "\n".join(lines) + "\n"
    if args.out:
        args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
