"""A DOMINATING discrete PLD of the two-dimensional elementary step E(A, B, C) of fixed-size
batches (issue 29; proofs/fixed_batch_domination.py step 1, proofs/gram_step_split.py).

The step, for a Gram matrix [[A, C], [C, B]] (A = |a|², B = |b|², C = <a, b>), is the pair

    P = (1 − q) N(0, s² I₂) + q N(a, s² I₂),    Q = (1 − q) N(0, s² I₂) + q N(b, s² I₂),

which depends on (a, b) only through the Gram matrix (rotations act on both alike). We take
a = (√A, 0), b = (C/√A, √(B − C²/A)) (A = 0: b = (0, √B), where C must be 0). The PLD built here
is the law of ln(P/Q) under P (REMOVE), DOMINATING: stochastically larger than the PLD of a pair
that Blackwell-dominates (P, Q). The mirror member (B, A, C) is another call.

Construction and proof.

1. Cells. Product rectangles R = I × J in y = (y1, y2), from per-axis edges covering
   [min mean − 12s, max mean + 12s] on each axis (finer where P's density times the squared loss
   gradient is large, :func:`_edge_sets`; placement only, any edges are valid); the complement O of
   the box is one more region.
2. Masses. On a rectangle the isotropic normals factor, and a₂ = 0, so
       P(R) = [(1 − q) N₀(I) + q N_{a₁}(I)] · N₀(J),   Q(R) = (1 − q) N₀(I) N₀(J) + q N_{b₁}(I) N_{b₂}(J),
   N_m(I) = Φ((hi − m)/s) − Φ((lo − m)/s), evaluated in ball arithmetic (python-flint's arb erfc,
   on the side of the mean away from the interval, so the far-tail cells keep relative accuracy)
   with the means themselves as balls; the balls are rounded outward to floats and every float
   product or sum after that is rounded outward by one nextafter step (each is one correctly
   rounded IEEE operation on non-negative numbers).
3. Loss range on a cell. With α = (<a, y> − A/2)/s², β = (<b, y> − B/2)/s² and
   F(x) = ln(1 − q + q eˣ), L(y) = ln(dP/dQ)(y) = F(α) − F(β), increasing in α and decreasing in β.
   Both are affine in y, so on R they lie in the intervals computed by outward-rounded interval
   arithmetic (verifier._directed.Intervals, coefficients from the balls of step 2), and
   L ∈ [F(α_lo) − F(β_hi), F(α_hi) − F(β_lo)]. F is evaluated in float (log1p(q·expm1(x)) for
   x <= ln((1 − q)/q), else x + ln q + log1p(((1 − q)/q)e^{−x})); for q <= 1/2 each branch is within
   6u + 4u|F| resp. 12u + 6u(|x| + |ln q| + 1) of F with every libm call charged 4 ulp (u = 2^-53;
   numpy documents at most 4 ulp for its float64 exp/log family), and the pad 2^-40·(|x| + |ln q| + 2)
   applied to each end is far above both. The ends are then moved to the grid: g0 = ⌊Lmin/h⌋,
   g1 = ⌈Lmax/h⌉ (verifier._directed.loss_index).
4. Two-atom split (second-order error). If dP/dQ ∈ [r0, r1] on R, r0 = e^{g0 h} < r1 = e^{g1 h},
   write dP/dQ = w·r1 + (1 − w)·r0 with w = (dP/dQ − r0)/(r1 − r0) ∈ [0, 1], and let the two-atom
   pair (P', Q') put Q'-masses Q'_hi = ∫_R w dQ, Q'_lo = ∫_R (1 − w) dQ and P'-masses r1·Q'_hi,
   r0·Q'_lo on atoms hi, lo. The kernel hi ↦ w dQ/Q'_hi, lo ↦ (1 − w) dQ/Q'_lo maps Q' to Q|_R
   and P' to (r1 w + r0 (1 − w)) dQ = P|_R: (P|_R, Q|_R) is a post-processing of (P', Q'). Solving
   p_lo + p_hi = P(R), p_lo/r0 + p_hi/r1 = Q(R) gives
       p_hi = (P(R) − r0 Q(R))/(1 − e^{−(g1−g0)h}),   p_lo = (r1 Q(R) − P(R))/(e^{(g1−g0)h} − 1)
   (proofs/gram_step_split.py, sympy). If g0 = g1 the ratio is constant, P(R) all at g0 h. The
   region O maps to one atom with P' = P(O), Q' = 0 (loss +∞) and one with P' = 0, Q' = Q(O);
   the union over cells of these pairs dominates (P, Q) (a kernel on the disjoint union). Cells with
   an end beyond ±_LOSS_CAP go to +∞ whole (moving P-mass up is stochastically larger). Steps 1-4
   are the pair whose PLD puts P-mass p_lo at g0 h and p_hi at g1 h on every cell, P(O) (+ the capped
   cells) at +∞: the DOMINATING object this module bounds.
5. Intervals to one PLD. Every grid mass is replaced by a lower bound (p_hi from P_lo − r0⁺Q_hi over
   the upper end of the divisor, p_lo likewise, clipped at 0; grid sums scaled by 1 − (k + 2)u for
   k summands, Higham Lemma 3.1), and the mass at +∞ is up(1 − a lower bound of the grid total).
   Every tail sum Σ_{ℓ_i >= t} p_i + p_∞ is then >= the exact pair's (the deficit of the lower
   ends plus P(O) all sit at +∞), i.e. stochastically larger: DOMINATING in the sense of
   :mod:`verifier.pld.distribution`, with total mass >= 1 as there. Finally at most ``tail_mass``
   is cut off each end of the grid (lower tail moved up, upper tail to +∞, as :func:`verifier.pld.distribution.compose`).

The error is second order in the cell's loss range (the split only adds the variance of a two-point
law spanning [g0 h, g1 h]), plus the unavoidable first-grid-step rounding; what the box leaves out
is P(O) <= 2Φ(−12) ≈ 4e-33 per axis.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
from flint import arb

from verifier._directed import ARB_PRECISION_BITS, Intervals, arb_bounds_many, down, loss_index, up, with_precision
from verifier._types import Direction, Dominance
from verifier._validation import check_integer, check_nonnegative, check_positive, check_real
from verifier.errors import InvalidArgument
from verifier.pld.distribution import DEFAULT_TAIL_MASS, DiscretePLD, _truncate, check_step

__all__ = ["DEFAULT_CELLS", "gram_step_pld"]

#: Default number of cells per axis (about 10^6 rectangles in all).
DEFAULT_CELLS = 1024

_U = 2.0**-53
#: Half-width of the box beyond the extreme means, in noise standard deviations (step 1).
_SIGMAS = 12.0
#: Absolute pad on F (step 3): 2^-40 per unit of |x| + |ln q| + 2, thousands of ulps above the error.
_PAD = 2.0**-40
#: Relative margin on exp / expm1 values in the split (libm charged 16 ulp, 4x its documented bound).
_EXP_MARGIN = 16.0 * _U
#: Cells whose loss range reaches beyond ±_LOSS_CAP go to +∞ whole (no overflow of e^{g h}).
_LOSS_CAP = 600.0
#: Widest cell of an edge grid relative to the narrowest (:func:`_edge_sets`).
_MAX_WIDTH_RATIO = 24.0
#: Quantum of the exact grid sums (:func:`_assemble`).
_QUANTUM = 2.0**-62
_QUANTUM_INVERSE = 2.0**62
#: Cells per block of rows (bounds the memory of the vectorised cell computations).
_BLOCK = 1 << 18


def gram_step_pld(
    sigma: float,
    rate: float,
    a_sq: float,
    b_sq: float,
    c: float,
    step: float,
    *,
    cells: int = DEFAULT_CELLS,
    tail_mass: float = DEFAULT_TAIL_MASS,
) -> DiscretePLD:
    """DOMINATING REMOVE-direction discrete PLD (law of ln P/Q under P on the grid {i·step}) of the
    elementary step E(A, B, C) = ((1 − q)N(0, σ²I) + qN(a, σ²I), (1 − q)N(0, σ²I) + qN(b, σ²I)) with
    A = |a|² = ``a_sq``, B = |b|² = ``b_sq``, C = <a, b> = ``c``, q = ``rate`` <= 1/2 (module
    docstring: cells, ball-arithmetic masses, interval loss ranges, the two-atom split).

    ``cells`` per axis (``cells``² rectangles; the error is second order in the loss range of a
    cell). C may lie below −√(AB) by rounding (|C|² <= AB(1 + 2^-40)): then b = (C/√A, 0), whose Gram
    (A, C²/A, C) dominates (A, B, −√(AB)) by step 4 of proofs/fixed_batch_domination.py."""
    s = check_positive("sigma", sigma)
    q = check_positive("rate", rate)
    if q > 0.5:
        raise InvalidArgument("rate", rate, "must be in (0, 1/2] (the loss bounds of step 3 assume q <= 1/2)")
    big_a, big_b = check_nonnegative("a_sq", a_sq), check_nonnegative("b_sq", b_sq)
    cc = check_real("c", c)
    if not (math.isfinite(big_a) and math.isfinite(big_b)):
        raise InvalidArgument("a_sq, b_sq", (a_sq, b_sq), "must be finite")
    h = check_step(step)
    n = check_integer("cells", cells, minimum=2)
    tail = check_nonnegative("tail_mass", tail_mass)
    means = _means(big_a, big_b, cc)
    with with_precision(ARB_PRECISION_BITS):
        a1, b1, b2 = means
        edges1, edges2 = _edge_sets(s, q, tuple(float(m.mid()) for m in means), big_a, big_b, n)
        sq = arb(s)
        n0_1, na_1, nb_1 = (_interval_masses(edges1, m, sq) for m in (arb(0), a1, b1))
        n0_2, nb_2 = (_interval_masses(edges2, m, sq) for m in (arb(0), b2))
        one_minus_q = 1 - arb(q)
        p1 = _nonnegative([one_minus_q * x + q * y for x, y in zip(n0_1, na_1)])  # P's y1-factor
        u0 = _nonnegative([one_minus_q * x for x in n0_1])
        v1 = _nonnegative([q * x for x in nb_1])
        z0, zb = _nonnegative(n0_2), _nonnegative(nb_2)
        coefficients = [Intervals(*arb_bounds_many([m])) for m in means]
    alpha, beta1, beta2 = _linear_forms(coefficients, edges1, edges2, s, big_a, big_b)
    ln_q = math.log(q)
    f_alpha = (_f(alpha.lo, q, ln_q, -1.0), _f(alpha.hi, q, ln_q, 1.0))
    rows = max(1, _BLOCK // (edges2.size - 1))
    indices, masses = [], []
    for start in range(0, edges1.size - 1, rows):
        i = slice(start, min(start + rows, edges1.size - 1))
        beta = beta1[i][:, None] + beta2[None, :]
        low_loss = down(f_alpha[0][i][:, None] - _f(beta.hi, q, ln_q, 1.0))
        high_loss = up(f_alpha[1][i][:, None] - _f(beta.lo, q, ln_q, -1.0))
        p_lo = np.maximum(down(p1[0][i][:, None] * z0[0][None, :]), 0.0)
        p_hi = up(p1[1][i][:, None] * z0[1][None, :])
        q_lo = np.maximum(down(down(u0[0][i][:, None] * z0[0][None, :]) + down(v1[0][i][:, None] * zb[0][None, :])), 0.0)
        q_hi = up(up(u0[1][i][:, None] * z0[1][None, :]) + up(v1[1][i][:, None] * zb[1][None, :]))
        keep = (low_loss > -_LOSS_CAP) & (high_loss < _LOSS_CAP)  # the rest stays off the grid: +∞
        g0 = loss_index(low_loss[keep], h, Dominance.DOMINATED)
        g1 = loss_index(high_loss[keep], h, Dominance.DOMINATING)
        at_g0, at_g1 = _split(p_lo[keep], p_hi[keep], q_lo[keep], q_hi[keep], g0, g1, h)
        indices += [g0, g1]
        masses += [at_g0, at_g1]
    return _assemble(np.concatenate(indices), np.concatenate(masses), h, tail)


def _means(big_a: float, big_b: float, c: float) -> tuple[arb, arb, arb]:
    """Balls of (a₁, b₁, b₂) with a = (a₁, 0), b = (b₁, b₂), b₂ = √max(0, B − C²/A) (module docstring)."""
    with with_precision(ARB_PRECISION_BITS):
        ab = arb(big_a) * arb(big_b)
        c2 = arb(c) ** 2
        if c2 > ab * (1 + arb(2) ** -40) or (c > 0 and c2 > ab):
            raise InvalidArgument("c", c, f"needs C² <= AB (a Gram matrix), here A = {big_a}, B = {big_b}")
        if big_a == 0.0:
            return arb(0), arb(0), arb(big_b).sqrt()
        a1 = arb(big_a).sqrt()
        rest = arb(big_b) - c2 / arb(big_a)
        if rest >= 0:
            b2 = rest.sqrt()
        elif rest < 0:
            b2 = arb(0)
        else:  # straddles 0: the true b₂ = √max(0, rest) lies in [0, √(upper end)]
            b2 = arb(0).union(arb(rest.upper()).sqrt())
        return a1, arb(c) / a1, b2


def _edge_sets(
    s: float, q: float, means: tuple[float, float, float], big_a: float, big_b: float, n: int
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Edges on [min mean − 12s, max mean + 12s] per axis, about n² cells in all. Placement only (any
    edges are valid). A cell of widths w1 × w2 adds about P(R)·(G1²w1² + G2²w2²) of variance (G the loss
    gradient), so each axis gets spacing ∝ I_k^(−1/3) with I_k = ∫ p·G_k² over the other axis (the
    minimiser of ∫ I_k w_k² for a fixed count; the widest cell at most _MAX_WIDTH_RATIO times the
    narrowest), and the counts N1·N2 = n² with N1/N2 = (T1/T2)^(3/2), T_k = ∫ I_k^(1/3) (the minimiser of
    T1³/N1² + T2³/N2²)."""
    a1, b1, b2 = means
    var = s * s
    boxes = [(min(0.0, a1, b1) - _SIGMAS * s, max(0.0, a1, b1) + _SIGMAS * s), (min(0.0, b2) - _SIGMAS * s, max(0.0, b2) + _SIGMAS * s)]
    y1 = np.linspace(*boxes[0], 16 * n + 1)[:, None]
    y2 = np.linspace(*boxes[1], 16 * n + 1)[None, :][:, :: max(1, n // 8)]
    y1_coarse = y1[:: max(1, n // 8)]
    odds = (1.0 - q) / q

    def pieces(u1, u2):
        density = ((1.0 - q) * np.exp(-0.5 * (u1 / s) ** 2) + q * np.exp(-0.5 * ((u1 - a1) / s) ** 2)) * np.exp(-0.5 * (u2 / s) ** 2)
        with np.errstate(over="ignore"):
            sig_a = 1.0 / (1.0 + odds * np.exp(-(a1 * u1 - 0.5 * big_a) / var))
            sig_b = 1.0 / (1.0 + odds * np.exp(-(b1 * u1 + b2 * u2 - 0.5 * big_b) / var))
        return density, (a1 * sig_a - b1 * sig_b) / var, -b2 * sig_b / var

    density, g1, _ = pieces(y1, y2)
    rate1 = np.cbrt(np.sum(density * g1 * g1, axis=1) * (y2[0, 1] - y2[0, 0]))
    density, _, g2 = pieces(y1_coarse.T, y2.T)
    rate2 = np.cbrt(np.sum(density * g2 * g2, axis=1) * (y1_coarse[1, 0] - y1_coarse[0, 0]))
    totals = [float(np.mean(r)) * (hi - lo) for r, (lo, hi) in zip((rate1, rate2), boxes)]  # ∫ I_k^(1/3)
    if totals[1] <= 0.0 or totals[0] <= 0.0:  # the loss does not vary along one axis
        counts = (2, min(n * n // 2, 16 * n)) if totals[0] <= 0.0 else (min(n * n // 2, 16 * n), 2)
    else:
        n1 = int(min(16 * n, max(2, round(n * (totals[0] / totals[1]) ** 0.75))))
        counts = (n1, int(min(16 * n, max(2, n * n // n1))))
    rates = [np.maximum(r, max(float(r.max()), 1e-300) / _MAX_WIDTH_RATIO) for r in (rate1, rate2)]
    return tuple(_edges(np.linspace(lo, hi, r.size), r, k) for (lo, hi), r, k in zip(boxes, rates, counts))


def _edges(mesh: npt.NDArray[np.float64], rate: npt.NDArray[np.float64], n: int) -> npt.NDArray[np.float64]:
    """n + 1 increasing edges from mesh[0] to mesh[-1], n·rate/∫rate of them per unit length."""
    cumulative = np.concatenate([[0.0], np.cumsum(0.5 * (rate[1:] + rate[:-1]) * np.diff(mesh))])
    edges = np.interp(np.linspace(0.0, cumulative[-1], n + 1), cumulative, mesh)
    edges[0], edges[-1] = mesh[0], mesh[-1]
    return np.unique(edges)


def _interval_masses(edges: npt.NDArray[np.float64], mean: arb, s: arb) -> list[arb]:
    """Balls of N(mean, s²)([e_k, e_{k+1}]) for consecutive edges: Φ differences on the side of the
    mean away from the interval (tails keep relative accuracy; ball arithmetic is exact either way)."""
    root2 = arb(2).sqrt()
    z = [(arb(float(e)) - mean) / s for e in edges]
    upper = [zk > 0 or (not zk < 0 and float(zk.mid()) >= 0.0) for zk in z]
    tail = [(zk / root2).erfc() / 2 if up_ else (-zk / root2).erfc() / 2 for zk, up_ in zip(z, upper)]
    out = []
    for k in range(len(edges) - 1):
        if upper[k]:  # both ends above the mean: sf(lo) − sf(hi)
            out.append(tail[k] - tail[k + 1])
        elif not upper[k + 1]:  # both below: cdf(hi) − cdf(lo)
            out.append(tail[k + 1] - tail[k])
        else:  # straddling: 1 − cdf(lo) − sf(hi)
            out.append(1 - tail[k] - tail[k + 1])
    return out


def _nonnegative(balls: list[arb]) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Float (lower, upper) ends of balls of masses, the lower ends clipped at 0 (a mass is >= 0)."""
    lower, upper = arb_bounds_many(balls)
    return np.maximum(lower, 0.0), upper


def _linear_forms(
    coefficients: list[Intervals],
    edges1: npt.NDArray[np.float64],
    edges2: npt.NDArray[np.float64],
    s: float,
    big_a: float,
    big_b: float,
) -> tuple[Intervals, Intervals, Intervals]:
    """Intervals of α = (a₁y₁ − A/2)/s² per y1-interval, and of β = β₁(y₁) + β₂(y₂) with
    β₁ = (b₁y₁ − B/2)/s², β₂ = b₂y₂/s² (outward-rounded; a sum of intervals contains β on the cell)."""
    a1, b1, b2 = coefficients
    y1 = Intervals(edges1[:-1], edges1[1:])
    y2 = Intervals(edges2[:-1], edges2[1:])
    var = Intervals.point(s) * Intervals.point(s)
    alpha = (a1 * y1 - Intervals.point(0.5 * big_a)) / var
    beta1 = (b1 * y1 - Intervals.point(0.5 * big_b)) / var
    beta2 = (b2 * y2) / var
    return alpha, beta1, beta2


def _f(x: npt.NDArray[np.float64], q: float, ln_q: float, side: float) -> npt.NDArray[np.float64]:
    """F(x) = ln(1 − q + q eˣ) at the doubles x, moved by the pad of step 3 toward ``side`` (+1 up, −1 down)."""
    switch = math.log((1.0 - q) / q)
    low = x <= switch
    with np.errstate(over="ignore", invalid="ignore"):
        near = np.log1p(q * np.expm1(np.where(low, x, 0.0)))
        far = x + ln_q + np.log1p(((1.0 - q) / q) * np.exp(-np.where(low, switch, x)))
    value = np.where(low, near, far)
    return value + side * _PAD * (np.abs(x) + abs(ln_q) + 2.0)


def _split(
    p_lo: npt.NDArray[np.float64],
    p_hi: npt.NDArray[np.float64],
    q_lo: npt.NDArray[np.float64],
    q_hi: npt.NDArray[np.float64],
    g0: npt.NDArray[np.int64],
    g1: npt.NDArray[np.int64],
    h: float,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Masses at g0·h and g1·h for cells with P(R) ∈ [p_lo, p_hi], Q(R) ∈ [q_lo, q_hi] (step 5): a
    lower bound l of the two-atom mass p_lo = (r1 Q(R) − P(R))/(e^{(g1−g0)h} − 1) at g0, clipped to
    [0, p_lo], and down(p_lo − l) at g1 (every tail sum stays >= the exact pair's: the shortfall
    P(R) − p_lo plus the rounding goes to +∞); all of a cell at g0 when g0 = g1."""
    d = (g1 - g0).astype(np.float64)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):  # e^{dh} = ∞: nothing at g0
        r1_lo = down(np.exp(g1 * h) * (1.0 - _EXP_MARGIN))
        rises = up(np.expm1(d * h) * (1.0 + _EXP_MARGIN))  # >= r1/r0 − 1
        low = np.maximum(down(down(down(r1_lo * q_lo) - p_hi) / rises), 0.0)
    low = np.where(d == 0, p_lo, np.minimum(low, p_lo))
    return low, np.maximum(down(p_lo - low), 0.0)


def _assemble(indices: npt.NDArray[np.int64], masses: npt.NDArray[np.float64], h: float, tail: float) -> DiscretePLD:
    """Grid sums rounded down, the deficit to +∞, tails cut (step 5). A bin near loss 0 collects ~10^5
    cells, where the recursive-summation bound of Higham Lemma 3.1 would send ~10^-11 to +∞, so the
    sums are exact: each mass (< 2) is k·2^-62 + r with k = ⌊m·2^62⌋ < 2^63 and 0 <= r < 2^-62 (both
    exact); k is split into 31-bit halves whose float sums stay below 2^53 (exact integers) and
    recombined in int64 (Σk <= 2^62: the masses are lower bounds of masses summing to <= 1); the
    remainders, at most count·2^-62 a bin, are summed in float and scaled by 1 − (count + 2)u."""
    used = masses > 0
    indices, masses = indices[used], masses[used]
    if indices.size == 0:
        return DiscretePLD(h, 0, np.zeros(1), 1.0, 0.0, Dominance.DOMINATING, Direction.REMOVE, 1.0)
    first = int(indices.min())
    position = indices - first
    units = np.floor(masses * _QUANTUM_INVERSE)  # exact: a power-of-two scaling, then floor
    remainder = masses - units * _QUANTUM  # exact: the low bits of the mass
    whole = units.astype(np.int64)
    high = np.bincount(position, weights=(whole >> 31).astype(np.float64))
    low = np.bincount(position, weights=(whole & ((1 << 31) - 1)).astype(np.float64))
    exact_units = (high.astype(np.int64) << 31) + low.astype(np.int64)
    counts = np.bincount(position)
    rest = np.maximum(down(np.bincount(position, weights=remainder) * (1.0 - (counts + 2) * _U)), 0.0)
    probs = np.maximum(down(down(exact_units.astype(np.float64) * _QUANTUM) + rest), 0.0)
    infinite = max(0.0, up(1.0 - down(math.fsum(probs))))
    probs, offset, moved_up, moved_off = _truncate(probs, first, tail, True)
    infinite = up(infinite + moved_off)
    budget = up(infinite + moved_up)
    return DiscretePLD(h, offset, probs, infinite, 0.0, Dominance.DOMINATING, Direction.REMOVE, budget)
