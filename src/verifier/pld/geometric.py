"""Privacy-ratio laws on geometric grids and their sums with directed re-binning.

A :class:`RatioLaw` is a non-negative random variable (a privacy ratio P/Q, or a sum of them) held
on the lattice x_i = e^{(offset + i)Δ}, Δ = 2^-step_exponent, with atoms at 0 and at +∞. The grid
is uniform in log space, so ln x_i = (offset + i)Δ is directly a loss grid of the PLD engine.

``dominance`` says which way the law was rounded: DOMINATING laws stochastically dominate the true
variable (every value rounded UP, mass above the grid at +∞), DOMINATED laws are dominated by it
(values rounded DOWN, mass below the grid at 0). Sums of independent variables keep the relation
(Claim A.1 of "Efficient computation of the privacy loss distribution for random allocation",
the paper cited below as S1), and :func:`convolve` re-bins every sum in the same direction, so
the relation holds exactly, whatever the grids and the truncation.

Floating-point error in the masses is tracked as a bound ``relative_error`` on the relative error
of every mass plus ``absolute_error`` on the total absolute error. The base laws take their cell
masses from the pair's rigorous loss brackets (:meth:`DominatingPair.loss_cell_bracket`, ball
arithmetic): each mass is the bracket's midpoint and its error the bracket's half-width, so no
accuracy is assumed.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from verifier._directed import ratio_sum_breakpoints, up
from verifier._fast.geometric import convolve_ratio_moments, convolve_ratios
from verifier._types import Bracket, Direction, Dominance, Measure
from verifier._validation import check_integer, check_nonnegative
from verifier.errors import AccuracyNotReachable, IncompatibleObjects, InvalidArgument, NumericalFailure
from verifier.pairs import DominatingPair
from verifier.pld.binary_power import binary_power

__all__ = [
    "MAX_BINS",
    "RatioLaw",
    "ratio_law",
    "convolve",
    "self_convolve",
    "MomentLaw",
    "convex_ratio_law",
    "convolve_convex",
    "self_convolve_convex",
    "body_width",
    "refine",
    "thinned",
    "infinite_loss_mass",
]

#: Default memory limit: the most grid points one law may hold (8 bytes each, plus scratch).
MAX_BINS = 1 << 24

_U = 2.0**-53  # unit roundoff

#: A base mass whose error bound exceeds this fraction of itself is charged as absolute error.
_RELATIVE_CUTOFF = 1e-8


@dataclass(frozen=True)
class RatioLaw:
    """A non-negative variable on the lattice e^{(offset+i)Δ}, Δ = 2^-step_exponent (module docstring).

    ``summands`` is how many independent base variables the law is the sum of (1 for a base law).
    """

    step_exponent: int
    offset: int
    probs: npt.NDArray[np.float64]
    zero_mass: float
    infinite_mass: float
    dominance: Dominance
    summands: int = 1
    relative_error: float = 0.0
    absolute_error: float = 0.0

    @property
    def step(self) -> float:
        return 2.0**-self.step_exponent

    @property
    def log_ratios(self) -> npt.NDArray[np.float64]:
        """ln x_i = (offset + i)Δ (exact in float64 while |offset + i| < 2^53)."""
        return (self.offset + np.arange(self.probs.size, dtype=np.float64)) * self.step

    def tail_indices(self, tail: float) -> tuple[int, int]:
        """Lattice indices (absolute) of the smallest and largest grid points that keep at most
        ``tail`` of the finite mass strictly below resp. above them."""
        below = np.cumsum(self.probs) - self.probs  # mass strictly below i
        above = np.cumsum(self.probs[::-1])[::-1] - self.probs  # mass strictly above i
        low = int(np.nonzero(below <= tail)[0][-1])
        high = int(np.nonzero(above <= tail)[0][0])
        return self.offset + low, self.offset + max(high, low)


#: A loss beyond every finite loss of a pair (and small enough that scipy's standardisation of it
#: does not overflow): the loss law at ±_FAR is the mass of loss ±∞.
_FAR = 1e300


def infinite_loss_mass(pair: DominatingPair, under: Measure, sign: int) -> float:
    """P(ℓ = +∞) (``sign`` +1) or P(ℓ = −∞) (``sign`` −1) of the REMOVE loss ℓ = ln(P/Q) under
    ``under``: the atoms where Q = 0 < P, resp. P = 0 < Q (float accuracy; for locating tails)."""
    if sign > 0:
        return float(np.reshape(pair.loss_sf(_FAR, Direction.REMOVE, under), -1)[0])
    return float(np.reshape(pair.loss_cdf(-_FAR, Direction.REMOVE, under), -1)[0])


def _infinite_loss_bracket(pair: DominatingPair, under: Measure, sign: int) -> Bracket:
    """:func:`infinite_loss_mass` as a rigorous bracket (the pair's ball-arithmetic loss law)."""
    if sign > 0:
        return pair.loss_sf_bracket(_FAR, Direction.REMOVE, under)
    return pair.loss_cdf_bracket(-_FAR, Direction.REMOVE, under)


@dataclass(frozen=True)
class _Cells:
    """Masses of the loss cells of a lattice under one measure, from the pair's rigorous brackets:
    ``cells`` (ℓ_i, ℓ_{i+1}], ``below`` (ℓ <= ℓ_0) and ``above`` (ℓ > ℓ_top, infinite loss included)
    are midpoints; ``error`` the half-widths (rounded up) in the same layout (below, cells…, above)."""

    cells: npt.NDArray[np.float64]
    below: float
    above: float
    error: npt.NDArray[np.float64]

    @property
    def values(self) -> npt.NDArray[np.float64]:
        return np.concatenate(([self.below], self.cells, [self.above]))

    def relative_error(self, skip: npt.NDArray[np.bool_] | None = None) -> float:
        """max error/value over the non-zero masses (``skip``: cells, in ``cells`` layout, left out)."""
        values, error = self.values, self.error
        keep = values > 0
        if skip is not None:
            keep[1:-1] &= ~skip
        if not keep.any():
            return 0.0
        return float(up(np.max(up(error[keep] / values[keep]))))


def _loss_cells(pair: DominatingPair, points: npt.NDArray[np.float64], under: Measure) -> _Cells:
    bracket = pair.loss_cell_bracket(points, Direction.REMOVE, under)
    lo, hi = np.asarray(bracket.lower), np.asarray(bracket.upper)
    mid = 0.5 * lo + 0.5 * hi  # within [lo, hi] (exact halving; the sum rounds between them)
    error = up(np.maximum(up(hi - mid), up(mid - lo)))
    return _Cells(mid[1:-1], float(mid[0]), float(mid[-1]), error)


def _check_compatible(a: RatioLaw | MomentLaw, b: RatioLaw | MomentLaw) -> None:
    if a.step_exponent != b.step_exponent:
        raise IncompatibleObjects("grid step exponent", a.step_exponent, b.step_exponent)
    if a.dominance is not b.dominance:
        raise IncompatibleObjects("dominance", a.dominance.value, b.dominance.value)


@functools.lru_cache(maxsize=8)
def _breaks(step_exponent: int) -> npt.NDArray[np.int64]:
    return ratio_sum_breakpoints(step_exponent)


def convolve(a: RatioLaw, b: RatioLaw, tail: float, *, max_bins: int = MAX_BINS) -> RatioLaw:
    """Law of A + B (independent) on a new lattice grid, rounded in the inputs' direction.

    The output grid spans [x_a,lo + x_b,lo, x_a,hi + x_b,hi] where x_·,lo / x_·,hi keep at most
    ``tail`` of each input's mass outside (S1, Alg. 1 Renorm, with the per-input tail as a
    parameter). DOMINATING: sums above the grid go to +∞ (at most 2·tail + the inputs' +∞ mass),
    sums below it to the bottom point; DOMINATED: sums below go to 0, sums above to the top point.
    S1, Alg. 2 with the corrections of notes/random-allocation.md §3.8 (lost mass at the safe end).
    """
    _check_compatible(a, b)
    low, size = _output_grid(a, b, check_nonnegative("tail", tail), max_bins)
    symmetric = a is b
    out = np.zeros(size)
    atoms = np.zeros(2)
    scratch = [np.empty(a.probs.size + 1), np.empty(a.probs.size + 1), np.empty(b.probs.size + 1), np.empty(b.probs.size + 1)]
    code = convolve_ratios(
        a.probs, a.offset, a.zero_mass, a.infinite_mass,
        b.probs, b.offset, b.zero_mass, b.infinite_mass,
        _breaks(a.step_exponent), a.dominance is Dominance.DOMINATING, symmetric,
        low, out, atoms, *scratch,
    )  # fmt: skip
    if code != 0:
        raise NumericalFailure(f"convolve_ratios rejected its buffers (code {code})")  # pragma: no cover
    total_a = float(a.probs.sum()) + a.zero_mass + a.infinite_mass
    total_b = float(b.probs.sum()) + b.zero_mass + b.infinite_mass
    # Each output mass is a sum of at most na + nb + 2 products of a mass by a window sum (relative
    # error <= 3u + u for the product); double-double windows add <= 4u²·(prefix total) each.
    n_terms = a.probs.size + b.probs.size + 2
    relative = a.relative_error + b.relative_error + (n_terms + 8) * _U
    absolute = (
        a.absolute_error * total_b + b.absolute_error * total_a + a.absolute_error * b.absolute_error
        + 8.0 * _U * _U * n_terms * _breaks(a.step_exponent).size * (1.0 + relative)
    )
    return _trimmed(
        RatioLaw(
            a.step_exponent, low, out, float(atoms[0]), float(atoms[1]), a.dominance,
            a.summands + b.summands, relative, absolute,
        )
    )  # fmt: skip


def _output_grid(a, b, tail: float, max_bins: int) -> tuple[int, int]:
    """(lowest label, size) of the grid of A + B: from the sum of the low ends to the sum of the high
    ends that keep at most ``tail`` outside each input (S1 Alg. 1), widened by one point, and down to
    a low end alone where the other input has an atom at 0 heavier than ``tail`` (0 + y = y stays on
    the grid). The choice
    affects tightness only, never validity. AccuracyNotReachable above ``max_bins`` points."""
    step = a.step
    a_lo, a_hi = a.tail_indices(tail)
    b_lo, b_hi = b.tail_indices(tail)
    low = math.floor(np.logaddexp(a_lo * step, b_lo * step) / step) - 1
    if b.zero_mass > tail:
        low = min(low, a_lo)
    if a.zero_mass > tail:
        low = min(low, b_lo)
    size = math.ceil(np.logaddexp(a_hi * step, b_hi * step) / step) + 1 - low + 1
    if size > max_bins:
        raise AccuracyNotReachable(
            f"a geometric-grid convolution needs {size} grid points (Δ = 2^-{a.step_exponent}); the limit "
            f"is max_bins={max_bins}: ask for a coarser accuracy or raise max_bins"
        )
    return low, size


def _trimmed(law: RatioLaw) -> RatioLaw:
    """The same law without leading and trailing zero masses (keeps one point if all are zero)."""
    nonzero = np.nonzero(law.probs)[0]
    if nonzero.size == 0:
        first, last = 0, 0
    else:
        first, last = int(nonzero[0]), int(nonzero[-1])
    return RatioLaw(
        law.step_exponent, law.offset + first, np.ascontiguousarray(law.probs[first : last + 1]),
        law.zero_mass, law.infinite_mass, law.dominance, law.summands, law.relative_error, law.absolute_error,
    )  # fmt: skip


def self_convolve(base: RatioLaw, times: int, tail_for, *, max_bins: int = MAX_BINS) -> RatioLaw:
    """Law of the sum of ``times`` independent copies of ``base`` by binary exponentiation:
    O(log times) calls of :func:`convolve` (S1, Alg. 3, without its final, unused squaring).

    ``tail_for(summands)`` gives the per-input tail used by a convolution whose result is a sum of
    that many copies (the caller's truncation budget).
    """
    times = check_integer("times", times, minimum=1)

    def combine(x: RatioLaw, y: RatioLaw | None) -> RatioLaw:
        other = x if y is None else y
        return convolve(x, other, tail_for(x.summands + other.summands), max_bins=max_bins)

    return binary_power(base, times, combine)


def ratio_law(
    pair: DominatingPair,
    under: Measure,
    step_exponent: int,
    log_range: tuple[float, float],
    dominance: Dominance,
    *,
    max_bins: int = MAX_BINS,
) -> RatioLaw:
    """The REMOVE privacy ratio P/Q of ``pair`` with the output drawn from ``under`` (P: the law
    R_{P,Q}; Q: the law of 1/R_{Q,P}, S1 Def 3.1 and Cor 3.3), discretised onto the lattice
    points with ln x in ``log_range``, rounded in the direction of ``dominance``:

    - DOMINATING: mass of ℓ in (ℓ_{i−1}, ℓ_i] goes to ℓ_i, finite mass at or below the bottom point
      to the bottom point, mass above the top point (infinite loss included) to +∞;
    - DOMINATED: mass of ℓ in (ℓ_i, ℓ_{i+1}] goes to ℓ_i (an atom exactly at ℓ_{i+1} moves down one
      point: safe), mass at or below the bottom point to 0, finite mass above the top point to the top.

    Atoms of loss ±∞ (ratio 0 or +∞) stay where they are in both.

    This is S1 Alg. 4 step 4 with its erratum fixed (notes/random-allocation.md §6 item 23(b)): the
    CDF of P/Q under Q at r is P_Q(ℓ <= ln r), read from the pair's loss law under Q, not
    F^R_{Q,P}(1/r). Masses come from the CDF below the median and the survival function above it,
    so no mass is a difference of two numbers close to one.
    """
    if not isinstance(dominance, Dominance):
        raise InvalidArgument("dominance", dominance, "must be Dominance.DOMINATING or Dominance.DOMINATED")
    k = check_integer("step_exponent", step_exponent, minimum=0, maximum=40)
    step = 2.0**-k
    lo_index = math.floor(log_range[0] / step)
    hi_index = math.ceil(log_range[1] / step)
    if hi_index < lo_index:
        raise InvalidArgument("log_range", log_range, "must satisfy low <= high")
    size = hi_index - lo_index + 1
    if size > max_bins:
        raise AccuracyNotReachable(
            f"the base ratio law needs {size} grid points (Δ = 2^-{k} over ln-ratio range {log_range}); "
            f"the limit is max_bins={max_bins}: ask for a coarser accuracy or raise max_bins"
        )
    points = (lo_index + np.arange(size, dtype=np.float64)) * step
    cells = _loss_cells(pair, points, under)  # masses of (ℓ_i, ℓ_{i+1}], rigorous half-widths
    gaps, error = cells.cells, cells.error[1:-1] + _U * cells.cells
    # Where error/gap is small the error is charged as a relative error of the mass; elsewhere (tiny
    # or zero gaps) as an absolute error.
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(gaps > 0, error / gaps, np.where(error > 0, np.inf, 0.0))
    as_relative = ratio <= _RELATIVE_CUTOFF
    relative = float(np.max(ratio[as_relative], initial=0.0)) + 4 * _U
    # a loosely known mass (near underflow, or a difference of equal balls) becomes 0 and its upper
    # end an absolute error: tiny positive values would only feed cancellation in the convolutions
    absolute = float(up(np.sum(gaps[~as_relative] + error[~as_relative]) + cells.error[0] + cells.error[-1]))
    gaps = np.where(as_relative, gaps, 0.0)
    below, above = cells.below, cells.above
    # atoms of infinite loss (ratio 0 or +∞) are exact points of the law: they keep their place; the
    # part of an atom its bracket cannot certify moves one grid point the safe way (to ℓ_0 / ℓ_top)
    at_zero = float(_infinite_loss_bracket(pair, under, -1).lower)
    at_infinity = float(_infinite_loss_bracket(pair, under, +1).lower)
    probs = np.zeros(size)
    if dominance is Dominance.DOMINATING:
        probs[1:] = gaps
        probs[0] = max(below - at_zero, 0.0)
        zero, infinite = at_zero, above
    else:
        probs[:-1] = gaps
        probs[-1] = max(above - at_infinity, 0.0)
        zero, infinite = below, at_infinity
    return _trimmed(RatioLaw(k, lo_index, probs, zero, infinite, dominance, 1, relative, absolute))


# ---- convex-order laws ----------------------------------------------------------------------------
#
# Both directions of random allocation are expectations of a convex function of the mean ratio
# R̄ = S/t, S = Σ_t X_i with X = P/Q under Q (S1 Cor 3.3 under Q^t):
#     REMOVE δ(ε) = E[(S/t − e^ε)_+] + π,    ADD δ(ε) = E[(1 − e^ε S/t)_+],
# π the P-mass of infinite loss. A law S̃ >= S in convex order (same mean) therefore bounds both
# directions from above, and S' <= S from below, for every ε at once; convex order is kept by
# independent sums (Shaked & Shanthikumar, Stochastic Orders, Thm 3.A.12). Mean-preserving spreads
# onto the lattice (DOMINATING) and merging atoms to their mean (DOMINATED, Jensen) change the
# convex functionals only at second order in Δ, where directed rounding shifts every loss by up
# to Δ per convolution: the same bracket width needs a much coarser grid.


@dataclass(frozen=True)
class MomentLaw:
    """A non-negative variable as atoms with masses ``probs`` and first moments ``moments`` per
    lattice label offset + i (DOMINATING: the atoms sit at e^{(offset+i)Δ}; DOMINATED: at
    moments/probs, anywhere), an atom ``zero_mass`` at 0, and ``lost_moment``: first moment at +∞
    (P-only mass of infinite loss; for DOMINATING also first moment moved off the top of the grid),
    which becomes mass of infinite REMOVE privacy loss."""

    step_exponent: int
    offset: int
    probs: npt.NDArray[np.float64]
    moments: npt.NDArray[np.float64]
    zero_mass: float
    lost_moment: float
    dominance: Dominance
    summands: int = 1
    relative_error: float = 0.0

    @property
    def step(self) -> float:
        return 2.0**-self.step_exponent

    def tail_indices(self, tail: float) -> tuple[int, int]:
        """Lattice labels keeping at most ``tail`` of the mass below and of the first moment above."""
        below = np.cumsum(self.probs) - self.probs
        above = np.cumsum(self.moments[::-1])[::-1] - self.moments
        low = int(np.nonzero(below <= tail)[0][-1])
        high = int(np.nonzero(above <= tail)[0][0])
        return self.offset + low, self.offset + max(high, low)


@functools.lru_cache(maxsize=16)
def _cell_masses(pair: DominatingPair, step_exponent: int, lo_index: int, size: int) -> tuple[_Cells, _Cells]:
    """Q-masses and P-masses (= Q first moments of P/Q) of the loss cells (ℓ_i, ℓ_{i+1}] of the
    lattice, below ℓ_0 and above the top, as rigorous midpoints and half-widths; cached, since both
    sides of a bracket (and both directions) discretise the same pair on the same lattice."""
    points = (lo_index + np.arange(size, dtype=np.float64)) * 2.0**-step_exponent
    return _loss_cells(pair, points, Measure.Q), _loss_cells(pair, points, Measure.P)


@functools.lru_cache(maxsize=8)
def _growth(step_exponent: int) -> npt.NDArray[np.float64]:
    return np.exp(np.arange(_breaks(step_exponent).size + 1) * 2.0**-step_exponent)


def convolve_convex(a: MomentLaw, b: MomentLaw, tail: float, *, max_bins: int = MAX_BINS) -> MomentLaw:
    """Law of A + B (independent) in convex order: a mean-preserving spread onto the new lattice
    grid (DOMINATING) or a contraction of groups of pair sums to their means (DOMINATED); see the
    comment above :class:`MomentLaw` and :func:`verifier._fast.geometric.convolve_ratio_moments`."""
    _check_compatible(a, b)
    low, size = _output_grid(a, b, check_nonnegative("tail", tail), max_bins)
    k, step = a.step_exponent, a.step
    spread = a.dominance is Dominance.DOMINATING
    symmetric = a is b
    out, out_m, atoms = np.zeros(size), np.zeros(size), np.zeros(2)
    scratch = [np.empty(a.probs.size + 1) for _ in range(4)] + [np.empty(b.probs.size + 1) for _ in range(4)]
    code = convolve_ratio_moments(
        a.probs, a.moments, a.offset, a.zero_mass, b.probs, b.moments, b.offset, b.zero_mass,
        _breaks(k), _growth(k), spread, symmetric, step, low, out, out_m, atoms, *scratch,
    )  # fmt: skip
    if code != 0:
        raise NumericalFailure(f"convolve_ratio_moments rejected its buffers (code {code})")  # pragma: no cover
    n_terms = a.probs.size + b.probs.size + 2
    # the spread's split of a group costs ~u/(e^Δ − 1) relative (cancellation in (sum − lo))
    relative = a.relative_error + b.relative_error + (n_terms + 8) * _U + 8.0 * _U * 2.0**k
    if spread:
        moments = out * np.exp((low + np.arange(size)) * step)
        law = MomentLaw(k, low, out, moments, float(atoms[0]), a.lost_moment + b.lost_moment + float(atoms[1]),
                        a.dominance, a.summands + b.summands, relative)  # fmt: skip
    else:
        law = _regrouped(MomentLaw(k, low, out, out_m, float(atoms[0]), a.lost_moment + b.lost_moment, a.dominance,
                                   a.summands + b.summands, relative))  # fmt: skip
    return _trimmed_moments(law)


def _regrouped(law: MomentLaw) -> MomentLaw:
    """A contraction law with every atom relabelled by the lattice cell of its mean (clamped to the
    grid) and atoms sharing a label merged to their mean: a further contraction, which keeps the
    labels next to the means so that later groupings stay narrow."""
    with np.errstate(divide="ignore", invalid="ignore"):
        labels = np.floor(np.log(law.moments / law.probs) / law.step)
    index = np.where(law.probs > 0, labels - law.offset, 0)
    index = np.clip(np.nan_to_num(index, nan=0.0), 0, law.probs.size - 1).astype(np.int64)
    probs = np.bincount(index, weights=law.probs, minlength=law.probs.size)
    moments = np.bincount(index, weights=law.moments, minlength=law.probs.size)
    return MomentLaw(law.step_exponent, law.offset, probs, moments, law.zero_mass, law.lost_moment, law.dominance,
                     law.summands, law.relative_error + 4 * _U)  # fmt: skip


def _trimmed_moments(law: MomentLaw) -> MomentLaw:
    nonzero = np.nonzero(law.probs)[0]
    first, last = (int(nonzero[0]), int(nonzero[-1])) if nonzero.size else (0, 0)
    return MomentLaw(
        law.step_exponent, law.offset + first, np.ascontiguousarray(law.probs[first : last + 1]),
        np.ascontiguousarray(law.moments[first : last + 1]), law.zero_mass, law.lost_moment, law.dominance,
        law.summands, law.relative_error,
    )  # fmt: skip


def refine(law: MomentLaw, step_exponent: int) -> MomentLaw:
    """The same law on the finer lattice Δ' = 2^-step_exponent <= Δ: lattice label u becomes
    u·2^d (the same point), with empty labels in between; a contraction law is then regrouped by
    its means on the finer cells. Exact (no mass or moment moves)."""
    d = check_integer("step_exponent", step_exponent, minimum=law.step_exponent, maximum=40) - law.step_exponent
    if d == 0:
        return law
    factor = 1 << d
    probs = np.zeros((law.probs.size - 1) * factor + 1)
    moments = np.zeros_like(probs)
    probs[::factor] = law.probs
    moments[::factor] = law.moments
    fine = MomentLaw(step_exponent, law.offset * factor, probs, moments, law.zero_mass, law.lost_moment,
                     law.dominance, law.summands, law.relative_error)  # fmt: skip
    if law.dominance is Dominance.DOMINATED:
        # widen by one coarse cell on top so that every mean finds its fine cell
        fine = MomentLaw(fine.step_exponent, fine.offset, np.append(fine.probs, np.zeros(factor)),
                         np.append(fine.moments, np.zeros(factor)), fine.zero_mass, fine.lost_moment, fine.dominance,
                         fine.summands, fine.relative_error)  # fmt: skip
        fine = _trimmed_moments(_regrouped(fine))
    return fine


#: Upper-tail thinning of the laws a binary exponentiation convolves (:func:`thinned`): with W =
#: THIN_WIDTHS times the labels from the median to the THIN_QUANTILE of the mass, the lattice stays
#: dense up to W above that quantile; beyond, the spacing doubles with every band (W, 2W, 4W, ...
#: labels long). Measured (issue 17, σ = 0.46, t = 10^5 and σ = 0.4, t = 10^6, δ = 1e-6, base lattice
#: 2^-3): the ε brackets' ends move by at most 0.1% of their width, the laws cost 3–6× less, and the
#: cost grows ~5.6× per decade of t instead of ~11× (the unthinned upper tail, out to the truncation
#: at ln x ≈ 19, held √(summands) more points at every level). The rest of that growth was the
#: lattice itself refining with √(summands) past the body (now capped by the body's width,
#: :func:`verifier.pld.allocation.convex_allocation`): ~2× per decade, benchmarks/allocation_scaling.md.
THIN_QUANTILE = 0.99
THIN_WIDTHS = 2


def _kept_labels(law: MomentLaw) -> npt.NDArray[np.int64] | None:
    """Indices kept by :func:`thinned` (increasing, the last at or above the top index), or None when
    thinning would keep nearly everything."""
    n = law.probs.size
    cumulative = np.cumsum(law.probs)
    median = int(np.searchsorted(cumulative, 0.5 * cumulative[-1]))
    quantile = int(np.searchsorted(cumulative, THIN_QUANTILE * cumulative[-1]))
    width = THIN_WIDTHS * max(quantile - median, 8)
    dense_end = quantile + width
    if dense_end + 4 * width >= n:
        return None
    pieces = [np.arange(0, dense_end + 1)]
    cap = max(2, 1 << max(law.step_exponent - 1, 0))  # spacing·Δ <= 1/2: kept neighbours within e^½
    start, spacing, band = dense_end, 2, width
    while start < n - 1:
        stop = min(start + 2 * band, n - 1 + spacing)
        pieces.append(np.arange(start + spacing, stop + 1, spacing))
        start, spacing, band = int(pieces[-1][-1]), min(2 * spacing, cap), 2 * band
    return np.concatenate(pieces)


def thinned(law: MomentLaw) -> MomentLaw:
    """``law`` with its far upper tail on sparser lattice points (:func:`_kept_labels`): DOMINATING,
    each atom between two kept points split between them keeping its first moment (a mean-preserving
    spread, so still above the true law in convex order); DOMINATED, the atoms from one kept point up
    to the next merged into one atom at their mean (a contraction, still below). The convolution
    kernel skips empty labels, so its cost falls with the tail's atom count; the resolution stays
    relative to the distance from the body, where δ at small ε is decided."""
    kept = _kept_labels(law)
    if kept is None:
        return law
    size = int(kept[-1]) + 1
    n = law.probs.size
    probs, moments = np.zeros(size), np.zeros(size)
    slot = np.searchsorted(kept, np.arange(n), side="right") - 1  # the kept point at or below each index
    lower = kept[slot]
    if law.dominance is Dominance.DOMINATED:
        np.add.at(probs, lower, law.probs)
        np.add.at(moments, lower, law.moments)
        run = int(np.max(np.bincount(slot)))  # the most terms one sum adds up
        out = MomentLaw(law.step_exponent, law.offset, probs, moments, law.zero_mass, law.lost_moment, law.dominance,
                        law.summands, law.relative_error + 1.01 * run * _U)  # fmt: skip
        return _trimmed_moments(_regrouped(out))
    upper = kept[np.minimum(slot + 1, kept.size - 1)]
    step = law.step
    x = np.exp((law.offset + np.arange(n)) * step)
    x0, x1 = np.exp((law.offset + lower) * step), np.exp((law.offset + upper) * step)
    on_point = upper == lower
    with np.errstate(divide="ignore", invalid="ignore"):
        up_share = np.where(on_point, 0.0, np.clip((x - x0) / (x1 - x0), 0.0, 1.0))
        down_share = np.where(on_point, 1.0, np.clip((x1 - x) / (x1 - x0), 0.0, 1.0))
    np.add.at(probs, upper, law.probs * up_share)
    np.add.at(probs, lower, law.probs * down_share)
    moments = probs * np.exp((law.offset + np.arange(size)) * step)
    # each share: exp's and the differences' rounding, relative to x1 − x0 >= x0·(e^Δ − 1) (<= 8u/Δ
    # while x1/x0 <= e); each kept point sums at most 2·run shares
    run = int(np.max(np.bincount(slot)))
    relative = law.relative_error + 16.0 * _U * 2.0**law.step_exponent + 2.02 * run * _U
    return MomentLaw(law.step_exponent, law.offset, probs, moments, law.zero_mass, law.lost_moment, law.dominance,
                     law.summands, relative)  # fmt: skip


def body_width(law: MomentLaw) -> float:
    """Width in ln x of the law's body: from the lattice label holding its 16% quantile to the one
    holding its 84% quantile (at least one lattice step). Sets the resolution of the next lattice."""
    cumulative = np.cumsum(law.probs)
    low, high = np.searchsorted(cumulative, [0.16 * cumulative[-1], 0.84 * cumulative[-1]])
    return max(int(high) - int(low), 1) * law.step


def self_convolve_convex(
    base: MomentLaw, times: int, tail_for, step_for=None, *, max_bins: int = MAX_BINS
) -> MomentLaw:
    """Sum of ``times`` independent copies of ``base`` in convex order, by binary exponentiation
    (S1 Alg. 3 without the final unused squaring).

    ``step_for(summands, body)`` (optional) is the lattice step exponent for a result holding that
    many copies whose body (:func:`body_width`) is predicted to be ``body`` wide in ln x: the laws
    are refined (:func:`refine`, exact) before such a convolution. The prediction is the larger
    input's body narrowed by √(its summands / the result's), the central-limit rate: a heavy-tailed
    ratio (small σ) narrows more slowly than that before its sums concentrate, so the prediction
    never undershoots the labels the result's body gets. Before each convolution the far upper tails
    are thinned (:func:`thinned`, a spread or contraction, so the convex order holds): the fine
    lattice is needed where the sum concentrates. Neither choice affects validity, only tightness.
    """
    times = check_integer("times", times, minimum=1)

    def combine(x: MomentLaw, y: MomentLaw | None) -> MomentLaw:
        summands = x.summands + (x.summands if y is None else y.summands)
        k = max(x.step_exponent, y.step_exponent if y is not None else 0)
        if step_for is not None:
            larger = x if y is None or x.summands >= y.summands else y
            k = max(k, step_for(summands, body_width(larger) * math.sqrt(larger.summands / summands)))
        x = thinned(refine(x, k))
        other = x if y is None else thinned(refine(y, k))
        return convolve_convex(x, other, tail_for(summands), max_bins=max_bins)

    return binary_power(base, times, combine)


def convex_ratio_law(
    pair: DominatingPair,
    step_exponent: int,
    log_range: tuple[float, float],
    dominance: Dominance,
    *,
    max_bins: int = MAX_BINS,
) -> MomentLaw:
    """The REMOVE privacy ratio X = P/Q under Q as a convex-order bound on the lattice points with
    ln x in ``log_range``. On a cell (x_i, x_{i+1}] the Q-mass is P_Q(ℓ ∈ cell) and the first
    moment E_Q[X; cell] = P_P(ℓ ∈ cell) (the P-mass of the cell), both from the pair's loss laws.

    - DOMINATING: each cell's mass is split between its ends keeping its moment; the mass below
      the grid between 0 and the bottom point; the mass above it goes to the top point and its
      excess moment, with the P-mass of infinite loss, to ``lost_moment``.
    - DOMINATED: each cell becomes one atom at its mean; ratio 0 stays an atom at 0 and the P-mass
      of infinite loss is kept in ``lost_moment`` (exact, not a truncation).
    """
    if not isinstance(dominance, Dominance):
        raise InvalidArgument("dominance", dominance, "must be Dominance.DOMINATING or Dominance.DOMINATED")
    k = check_integer("step_exponent", step_exponent, minimum=0, maximum=40)
    step = 2.0**-k
    lo_index, hi_index = math.floor(log_range[0] / step), math.ceil(log_range[1] / step)
    size = hi_index - lo_index + 1
    if size > max_bins or size < 1:
        raise AccuracyNotReachable(
            f"the base ratio law needs {size} grid points (Δ = 2^-{k} over ln-ratio range {log_range}); "
            f"the limit is max_bins={max_bins}: ask for a coarser accuracy or raise max_bins"
        )
    x = np.exp((lo_index + np.arange(size, dtype=np.float64)) * step)
    q_cells, m_cells = _cell_masses(pair, k, lo_index, size)
    # a cell whose rigorous bracket is loose (a mass near underflow) is not split: DOMINATING sends
    # its Q-mass (upper end) to 0 and its first moment (upper end) to +∞, the extreme spread;
    # DOMINATED drops it (δ is increasing in every mass)
    loose = (q_cells.error[1:-1] > _RELATIVE_CUTOFF * q_cells.cells) | (m_cells.error[1:-1] > _RELATIVE_CUTOFF * m_cells.cells)
    q, m = np.where(loose, 0.0, q_cells.cells), np.where(loose, 0.0, m_cells.cells)
    loose_q = float(up(np.sum(q_cells.cells[loose] + q_cells.error[1:-1][loose]))) if loose.any() else 0.0
    loose_m = float(up(np.sum(m_cells.cells[loose] + m_cells.error[1:-1][loose]))) if loose.any() else 0.0
    q_below, q_above, m_below, m_above = q_cells.below, q_cells.above, m_cells.below, m_cells.above
    probs = np.zeros(size)
    if dominance is Dominance.DOMINATING:
        up_split = np.clip((m - q * x[:-1]) / (x[1:] - x[:-1]), 0.0, q)
        probs[1:] += up_split
        probs[:-1] += q - up_split
        up_below = min(m_below / x[0], q_below)
        probs[0] += up_below
        probs[-1] += q_above
        lost = max(m_above - q_above * x[-1], 0.0) + loose_m
        law = MomentLaw(k, lo_index, probs, probs * x, q_below - up_below + loose_q, lost, dominance)
    else:
        # ratio 0 (P = 0 < Q) stays an atom of its own; the P-mass of infinite loss is kept as
        # first moment "at +∞" (a P-only atom: it adds π to REMOVE δ, nothing to ADD δ); the parts
        # of these atoms their brackets cannot certify are merged into the end cells (contractions)
        zero = float(_infinite_loss_bracket(pair, Measure.Q, -1).lower)
        infinite = float(_infinite_loss_bracket(pair, Measure.P, +1).lower)
        moments = np.zeros(size)
        probs[:-1], moments[:-1] = q, m
        probs[0] += max(q_below - zero, 0.0)
        moments[0] += m_below
        probs[-1] += q_above
        moments[-1] += max(m_above - infinite, 0.0)
        law = MomentLaw(k, lo_index, probs, moments, zero, infinite, dominance)
    # the masses' rigorous relative error ρ (bracket half-widths), amplified by the split
    # (1/(e^Δ − 1) <= 2^k) for the spread, plus the split's own rounding
    rho = max(q_cells.relative_error(loose), m_cells.relative_error(loose))
    relative = float(up(4.0 * rho * 2.0**k + 8 * _U * 2.0**k))
    law = MomentLaw(law.step_exponent, law.offset, law.probs, law.moments, law.zero_mass, law.lost_moment,
                    law.dominance, 1, relative)  # fmt: skip
    return _trimmed_moments(law)
