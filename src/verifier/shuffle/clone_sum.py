"""The clone reduction keeping the clones' reports: a rigorous UPPER bound on δ(ε) and ε(δ) for n
shuffled reports of the Laplace randomizer, below the clone count of :mod:`verifier.shuffle.clones`.

The clone reduction (Feldman, McMillan & Talwar, FOCS 2021, arXiv:2012.12803, Thm 3.2, in the form
proved in proofs/shuffle_coupling.py step 2): if every other user's law satisfies R(x_i) >= w·M
pointwise, M = (R(x) + R(x'))/2, then the shuffled reports are a post-processing of the release
"C ~ Bin(n − 1, w) clones drawing from M, plus the changed user's report, as a multiset" (the other
users' reports are revealed). FMT then collapse each report to one bit, which is lossless for
randomized response and loses for a continuous randomizer. Here the reports are kept
(proofs/shuffle_clone_sum.py):

1. With t(y) = (R(x)(y) − R(x')(y))/(R(x)(y) + R(x')(y)) ∈ [−T, T], the multiset of c + 1 reports
   has likelihood ratio (c + 1 + Σt)/(c + 1 − Σt) between the two orders, so (the ratio being a
   function of the mean t̄ of c + 1 i.i.d. draws of t under M) δ_c(ε) = (1 + e^ε)·E_M[(t̄ − tanh(ε/2))⁺].
2. For Laplace (scale b) with inputs at distance d (loss l = d/b): T = tanh(l/2); under M, t has
   atoms (1 + e^{−l})/4 at ±T and density e^{−l/2}(1 − t²)^{−3/2}/2 on (−T, T).
3. Each cell of a grid of K steps on [−T, T] is split to its ends keeping its mean (a mean-preserving
   spread, closed-form masses); (t̄ − τ)⁺ is convex, so by Jensen the δ_c of the spread law is an
   UPPER bound. K = 1 (both ends) is FMT's bit: the clone count pair exactly.
4. The sum of c + 1 draws of the spread law lives on a lattice; its pmf, wrapped modulo a window of
   N >= 20 Hoeffding widths, is computed by a DFT in ball arithmetic (arb's acb_dft), each wrapped
   value an UPPER bound on the pmf at every index of its class; indices above the window are bounded
   by Hoeffding's inequality (the spread law has mean 0 and range 2T).
5. δ_c falls with c (the mean of c + 2 i.i.d. draws is a mean-preserving contraction of the mean of
   c + 1), so C is bucketed and each bucket takes the δ_c of its left end; C below the first bucket
   contributes its probability (δ_c <= 1).
6. Over the distance d: the reduced pair at distance d is a post-processing of the pair at d' > d
   (the Laplace location family's trade-off curves are ordered), and δ falls with the share, so the
   range [l_i, l_{i+1}] of losses takes the law at l_{i+1} with the share at l_i
   (:class:`verifier.shuffle.clones.CloneWeight` DISTANCE's ranges, the share of
   proofs/shuffle_binary.py); each range keeps the smaller of this bound and the clone count's.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np
from flint import acb, acb_poly, arb

from verifier._directed import arb_bound, with_precision
from verifier._types import Side
from verifier._validation import check_integer, check_nonnegative, check_open_unit, check_positive
from verifier.analytic._search import smallest_passing
from verifier.errors import NumericalFailure
from verifier.shuffle.clones import accepted_proposal, clone_delta_ball, clone_delta_piece_float, distance_pieces
from verifier.shuffle.count import binomial_sf_arb

__all__ = ["CLONE_SUM_CITATION", "CELLS", "laplace_t_law", "laplace_t_law_float", "clone_sum_delta_upper",
           "clone_sum_delta_float", "laplace_shuffle_delta_upper", "laplace_shuffle_epsilon_upper"]

CLONE_SUM_CITATION = (
    "Feldman, McMillan & Talwar 2021, Thm 3.2 (clone reduction) keeping the clones' reports: the law of the sum of "
    "likelihood ratios, spread to a grid and convolved in ball arithmetic (proofs/shuffle_clone_sum.py): UPPER"
)

#: Grid steps on [−T, T] (ε(1e-6) at ε0 = 1, n = 10³, a float estimate without buckets and ranges:
#: 0.1364 with 2, 0.1322 with 8, 0.1320 with 32).
CELLS = 8
_PRECISION_BITS = 96
#: Half-width of the window of the sum, in Hoeffding widths T·√(c + 1) (tail e^{−Z²/2} <= 2e-22).
_Z = 10.0
#: ln of the modulus below which φ_k^(c+1) is replaced by a ball of radius 1e-150 about 0 (ln 1e-150 = −345.4).
_NEGLIGIBLE_LOG = -350.0
#: Buckets of C: edges at the mean + z·sd for these z (then one bucket up to n − 1); below, δ_c <= 1.
#: Ranges of the changed inputs' loss, as fractions of ε0: finer near ε0, where the sum is needed
#: (share 0.84% below ε0's in the top range at ε0 = 1).
_FRACTIONS = [j / 8 for j in range(7)] + [13 / 16, 7 / 8, 15 / 16, 31 / 32, 1.0]
_EDGES_Z = (-9.0, -7.0, -5.5, -4.5, -3.75) + tuple(-3.0 + 0.5 * j for j in range(13)) + (4.0,)


def laplace_t_law(loss: arb, cells: int = CELLS) -> list[arb]:
    """Masses at the grid points −T + k·2T/K (k = 0 … K) of the mean-preserving spread of t's law
    under M, for the Laplace pair of loss l (module docstring, steps 2 and 3), as balls."""
    big_t = (loss / 2).tanh()
    h = 2 * big_t / cells
    scale = (-loss / 2).exp() / 2
    grid = [-big_t + k * h for k in range(cells + 1)]
    gap = 2 / (1 + loss.exp())  # 1 − T, without the cancellation of 1 − tanh at large losses
    root = [((gap + k * h) * (gap + (cells - k) * h)).sqrt() for k in range(cells + 1)]  # √(1 − g_k²)
    mass_at = [scale * g / r for g, r in zip(grid, root)]  # ∫ density = F(t)
    moment_at = [scale / r for r in root]  # ∫ t·density = G(t)
    atom = (1 + (-loss).exp()) / 4
    out = [arb(0)] * (cells + 1)
    out[0], out[cells] = atom, atom
    for k in range(cells):
        mass = mass_at[k + 1] - mass_at[k]
        right = (moment_at[k + 1] - moment_at[k] - grid[k] * mass) / h
        out[k + 1] = out[k + 1] + right
        out[k] = out[k] + (mass - right)
    return out


def laplace_t_law_float(loss: float, cells: int = CELLS) -> np.ndarray:
    """:func:`laplace_t_law` in float64 (no guarantee; the float search's proposals)."""
    big_t = math.tanh(loss / 2)
    grid = np.linspace(-big_t, big_t, cells + 1)
    scale = math.exp(-loss / 2) / 2
    gap, k, h = 2 / (1 + math.exp(min(loss, 700.0))), np.arange(cells + 1), 2 * big_t / cells
    root = np.sqrt((gap + k * h) * (gap + (cells - k) * h))
    mass = np.diff(scale * grid / root)
    moment = np.diff(scale / root)
    right = (moment - grid[:-1] * mass) / (grid[1] - grid[0])
    out = np.zeros(cells + 1)
    out[0] = out[-1] = (1 + math.exp(-loss)) / 4
    out[1:] += right
    out[:-1] += mass - right
    return out


def _window(c: int, cells: int, big_t: float, tau: float) -> tuple[int, int, int]:
    """(first index with a positive weight, J0, DFT length N) for the sum of c + 1 draws: the window
    [J0, J0 + N) holds the mean ± Z Hoeffding widths and the first weighted index, or is every index
    0 … (c + 1)K when that is no longer. Any choice is sound (every index outside the window is
    wrapped onto it, which only adds mass; the Hoeffding term covers the indices above it); this one
    keeps both additions negligible."""
    top = (c + 1) * cells
    h = 2 * big_t / cells
    first = max(0, int(math.floor((c + 1) * (big_t + tau) / h)) - 1)
    width = _Z * big_t * math.sqrt(c + 1) / h
    start = max(0, int(math.floor(top / 2 - width)))
    windowed = 1 << int(math.ceil(max(2 * width, first - start) + 2)).bit_length()
    whole = 1 << max(6, top.bit_length())
    if whole <= windowed:
        return first, 0, whole
    return first, start, windowed


@functools.lru_cache(maxsize=8)
def _transform(loss: float, cells: int, length: int) -> tuple[list[acb], np.ndarray]:
    """(φ_k for k = 0 … N/2: the DFT of the spread law, as balls; an upper bound on ln|φ_k| each)."""
    with with_precision(_PRECISION_BITS):
        law = laplace_t_law(arb(loss), cells)
        half = acb.dft([acb(p) for p in law] + [acb(0)] * (length - cells - 1))[: length // 2 + 1]
        log_abs = np.array([math.log(max(arb_bound(f.abs_upper(), Side.UPPER), 1e-300)) for f in half])
    return half, log_abs


def _powers(loss: float, cells: int, c: int, length: int) -> list[acb]:
    """φ_k^(c+1) for k = 0 … N − 1 as balls: a ball of radius 1e-150 about 0 where (c + 1)·ln|φ_k| <
    _NEGLIGIBLE_LOG (< ln 1e-150 with room for the float product), and φ(−θ) = conj φ(θ) (the law is real)."""
    half, log_abs = _transform(loss, cells, length)
    tiny = acb(arb(0, 1e-150), arb(0, 1e-150))
    powered = [tiny if small else f ** (c + 1) for f, small in zip(half, (c + 1) * log_abs < _NEGLIGIBLE_LOG)]
    return powered + [f.conjugate() for f in powered[-2:0:-1]]


def _delta_c_arb(loss: float, cells: int, c: int, epsilon: float) -> arb:
    """UPPER enclosure of δ_c(ε) of the spread law (module docstring, steps 1–4). Every wrapped value
    W_(j mod N) is >= the pmf at j, so each index j from the first positive weight to the window's end
    is counted through it; beyond the end, Hoeffding. Where the weight a + b·j is surely positive the
    sum is a·ΣW_j + b·Σj·W_j, evaluated as a polynomial and its derivative at 1 (one C loop)."""
    big_t_f = math.tanh(loss / 2)
    big = arb(epsilon).exp()
    tau = (arb(epsilon) / 2).tanh()
    big_t = (arb(loss) / 2).tanh()
    if tau >= big_t:
        return arb(0)
    first, start, length = _window(c, cells, big_t_f, math.tanh(epsilon / 2))
    wrapped = acb.dft(_powers(loss, cells, c, length), inverse=True)
    h = 2 * big_t / cells
    per = h / (c + 1)
    base = -big_t - tau
    top = (c + 1) * cells
    end = min(top, start + length - 1)
    positive = max(first, int(math.floor(arb_bound((big_t + tau) / per, Side.UPPER))) + 1)
    total = arb(0)
    for j in range(first, min(positive, end + 1)):  # the weight's ball may hold 0 here
        total += wrapped[j % length].real * (base + j * per).nonnegative_part()
    j1 = positive
    while j1 <= end:  # runs of indices whose residues are contiguous
        j2 = min(end, (j1 // length + 1) * length - 1)
        run = acb_poly(wrapped[j1 % length: j2 % length + 1])
        total += (base + j1 * per) * run(1).real + per * run.derivative()(1).real
        j1 = j2 + 1
    if start + length <= top:  # Hoeffding above the window (Σt >= s there; the window puts s > 0)
        s = (start + length) * h - (c + 1) * big_t
        tail = (-(s * s) / (2 * (c + 1) * big_t * big_t)).exp() if s > 0 else arb(1)
        total += (big_t - tau) * tail
    return (1 + big) * total


@functools.lru_cache(maxsize=48)
def _wrapped_float(loss: float, cells: int, c: int, length: int) -> np.ndarray:
    """The pmf of the sum of c + 1 draws wrapped modulo ``length``, in float64 (kept across the
    bisection steps of the ε search, which change only the weights)."""
    law = np.zeros(length)
    law[: cells + 1] = laplace_t_law_float(loss, cells)
    return np.fft.irfft(np.fft.rfft(law) ** (c + 1), length)


def _delta_c_float(loss: float, cells: int, c: int, epsilon: float) -> float:
    big_t = math.tanh(loss / 2)
    tau = math.tanh(epsilon / 2)
    if tau >= big_t:
        return 0.0
    first, start, length = _window(c, cells, big_t, tau)
    wrapped = _wrapped_float(loss, cells, c, length)
    top = (c + 1) * cells
    j = np.arange(first, min(top, start + length - 1) + 1)
    weight = np.maximum(-big_t - tau + j * (2 * big_t / cells) / (c + 1), 0.0)
    return (1 + math.exp(epsilon)) * float(np.sum(np.maximum(wrapped[j % length], 0.0) * weight))


def _buckets(others: int, share: float) -> list[int]:
    """Left ends of the buckets of C ~ Bin(others, share), increasing: every value up to far above the
    mean when its standard deviation is below 4, else the edges mean + z·sd of :data:`_EDGES_Z`."""
    mean, sd = others * share, math.sqrt(others * share * (1 - share))
    if sd < 4:  # up to 10 standard deviations and 10 clones above the mean; the last bucket holds the rest
        return list(range(min(others, int(math.ceil(mean + 10 * sd)) + 10) + 1))
    return sorted({min(others, max(0, int(math.floor(mean + z * sd)))) for z in _EDGES_Z})


def clone_sum_delta_upper(loss: float, share: arb, share_float: float, users: int, epsilon: float, cells: int = CELLS) -> float:
    """A rigorous UPPER bound on Σ_c Pr[C = c] δ_c(ε), C ~ Bin(n − 1, ``share``), for the Laplace law
    of loss ``loss`` (module docstring); ε >= 0."""
    others = users - 1
    starts = _buckets(others, share_float)
    with with_precision(_PRECISION_BITS):
        tails = [binomial_sf_arb(c, others, share) for c in starts] + [arb(0)]
        total = 1 - tails[0]  # C below the first bucket: δ_c <= 1
        for i, c in enumerate(starts):
            mass = tails[i] - tails[i + 1]
            total += mass * _delta_c_arb(loss, cells, c, epsilon)
        return min(1.0, max(0.0, arb_bound(total, Side.UPPER)))


def clone_sum_delta_float(loss: float, share: float, users: int, epsilon: float, cells: int = CELLS) -> float:
    """The same bucketed sum in float64 (no guarantee; proposals for the ε search)."""
    from scipy.stats import binom

    others = users - 1
    starts = _buckets(others, share)
    tails = [float(binom.sf(c - 1, others, share)) for c in starts] + [0.0]
    total = 1 - tails[0]
    for i, c in enumerate(starts):
        total += (tails[i] - tails[i + 1]) * _delta_c_float(loss, cells, c, epsilon)
    return total


def _count_upper(loss: float, users: int, epsilon: float, share: arb, share_float: float) -> float:
    """The clone count's UPPER bound for one range, or 1 (δ <= 1) where its threshold cannot be
    decided in ball arithmetic (very large ε0); the clone sum then decides alone."""
    try:
        return arb_bound(clone_delta_ball(loss, users, epsilon, share, share_float), Side.UPPER)
    except NumericalFailure:
        return 1.0


def _pieces(epsilon0: float) -> list[tuple[float, arb, float]]:
    with with_precision(_PRECISION_BITS):
        return distance_pieces(epsilon0, _FRACTIONS)


def laplace_shuffle_delta_upper(epsilon0: float, users: int, epsilon: float, cells: int = CELLS) -> float:
    """UPPER bound on δ(ε) of n shuffled Laplace reports with ε0 = Δ/b (either direction): the largest
    over the ranges of the changed inputs' loss of the smaller of the clone count's and the clone
    sum's bound (module docstring, step 6)."""
    e0 = check_positive("epsilon0", epsilon0)
    n = check_integer("users", users, minimum=1)
    eps = check_nonnegative("epsilon", epsilon)
    ranked = []
    with with_precision(_PRECISION_BITS):
        for loss, ball, share in _pieces(e0):
            ranked.append((_count_upper(loss, n, eps, ball, share), loss, ball, share))
    ranked.sort(key=lambda item: -item[0])
    best = 0.0
    for count, loss, ball, share in ranked:
        if count <= best:
            break
        best = max(best, min(count, clone_sum_delta_upper(loss, ball, share, n, eps, cells)))
    return min(1.0, best)


@functools.lru_cache(maxsize=64)
def laplace_shuffle_epsilon_upper(epsilon0: float, users: int, delta: float, cells: int = CELLS) -> float:
    """UPPER bound on ε(δ) of n shuffled Laplace reports (ε0 = Δ/b): a float bisection proposes ε,
    accepted once every range's bound (clone count or clone sum, ball arithmetic) is <= δ there."""
    e0 = check_positive("epsilon0", epsilon0)
    n = check_integer("users", users, minimum=1)
    target = check_open_unit("delta", delta)
    pieces = _pieces(e0)
    goal = target * (1 - 1e-6)

    def smallest(fits: Callable[[float], bool], hi: float) -> float:  # 40 bisection steps on [0, hi], hi passing unevaluated
        return smallest_passing(lambda eps: eps >= hi or fits(eps), 0.0, hi, tolerance=0.0, steps=40)[1]

    def fits(eps: float) -> bool:
        with with_precision(_PRECISION_BITS):
            for loss, ball, share in pieces:
                if _count_upper(loss, n, eps, ball, share) <= target:
                    continue
                if clone_sum_delta_upper(loss, ball, share, n, eps, cells) > target:
                    return False
        return True

    candidate = 0.0  # the float proposal: the largest over the ranges of the smaller ε of the two bounds
    for loss, _, share in pieces:
        count = smallest(lambda eps: clone_delta_piece_float(loss, n, eps, share) <= goal, e0)
        if count > candidate:
            candidate = max(candidate, smallest(lambda eps: clone_sum_delta_float(loss, share, n, eps, cells) <= goal, count))
    return accepted_proposal(fits, candidate, e0, attempts=20, step=1e-5)

