"""Rigorous UPPER and LOWER bounds on δ(ε) of the exact Lemma 2.8 pair for few batches, by a dyadic
partition of the span of the means [derived here, not in the paper].

Work in units of σ: P = (1/b) Σ_i N(μ_i, I_N), Q = N(0, I_N), Γ = Gram matrix of the μ_i. Both
densities factor through the orthogonal projection onto span{μ_i} (the orthogonal part is N(0, I)
under both), so the pair equals, as a pair of distributions of a sufficient statistic, the pair
P = (1/b) Σ N(a_i, I_d), Q = N(0, I_d) on R^d, d = rank Γ, for any rows a_i with a_i·a_j = Γ_ij
(computed here by an eigendecomposition; the float residual max|AAᵀ − Γ| is checked below 1e-12·max Γ,
far inside the 1e-9 loss margins below).

With the privacy loss L(x) = log p/q(x) = log (1/b) Σ exp(a_i·x − |a_i|²/2) (remove: loss ℓ = L,
measure μ = P, reference ν = Q; add: ℓ = −L, μ = Q, ν = P), δ(ε) = ∫ (dμ − e^ε dν)_+ = ∫ dμ (1 − e^{ε−ℓ})_+.
Cover a box R ⊂ R^d with dyadic boxes B (the mass outside R is bounded by Gaussian tails). On each B,
ℓ is enclosed by [ℓ_inf, ℓ_sup] (each a_i·x − |a_i|²/2 is affine, so its range over B is exact, and
log-sum-exp is increasing in every argument), and μ(B), ν(B) are products of one-dimensional Gaussian
masses (identity covariance), computed in ball arithmetic. Then

- UPPER: ∫_B (dμ − e^ε dν)_+ equals μ(B) − e^ε ν(B) when ℓ_inf > ε, is 0 when ℓ_sup <= ε, and is at
  most μ(B)(1 − e^{ε−ℓ_sup})_+ otherwise; plus μ(R^d \\ R).
- LOWER: δ(ε) >= μ(S) − e^ε ν(S) for every event S (hockey-stick divergence as a supremum over
  events); S is the union of the boxes with μ(B) − e^ε ν(B) > 0. For non-negative C the pair is
  attained (see :mod:`verifier.matrix.evidence`), so this bounds the mechanism's δ(ε) from below.

Boxes whose ℓ-range straddles ε are split in 2^d until a depth limit, or until their slack (upper
minus lower contribution) is negligible. The boxes are independent of ε; the partition is refined for
one ε and then answers every ε (bounds stay valid, they are tightest near the ε refined for).

Floating point: box centres, enclosures and sums are binary64; every loss enclosure is widened by
1e-9·(1 + magnitude), far above the rounding error of the few operations behind it, every mass
product by a relative 2^-44 and every sum of n non-negative terms by n·2^-52 (Higham's bound for
recursive summation), each toward the safe side. Cost: the number of boxes grows like 2^{d·depth}
near the boundary {ℓ = ε}, so this is for d <= MAX_DIMENSION (b <= 3 batches).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt
from flint import arb

from verifier._directed import with_precision
from verifier._types import Direction
from verifier._validation import check_open_unit, check_real
from verifier.errors import InvalidArgument

__all__ = ["CITATION", "MAX_DIMENSION", "Partition", "coordinates", "partition", "delta_bracket", "epsilon_bracket"]

CITATION = "dyadic partition of the Lemma 2.8 pair (Schuchardt & Kalinin) on the span of its means: derived rigorous upper and lower bounds"

#: Largest rank of Γ (dimension of the span of the means) the partition takes on.
MAX_DIMENSION = 3
#: Relative widening of a product of masses and of the constant e^ε (covers their rounding).
_SAFE = 2.0**-44
#: Half-width of the covered box around the means, in units of σ (Gaussian tail < 1e-17 per axis).
_RADIUS = 8.5
#: Default depth (finest boxes have side (width of R)/2^depth) and slack tolerance.
DEPTH = 10
#: Total slack below which straddling boxes are not split (δ below ~1e-14 is resolved no further).
_FLOOR = 1e-16
#: Bisection steps of the ε searches (the ε found is a valid bound whatever the count).
_BISECTIONS = 26
#: Most boxes examined at one level (memory: ~15 doubles per box and component).
_MAX_BOXES = 1 << 21
_REL_SLACK = 1e-2


def coordinates(gamma: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Rows a_i in R^d (d = rank Γ) with a_i·a_j = Γ_ij (module docstring)."""
    g = np.asarray(gamma, dtype=float)
    if g.ndim != 2 or g.shape[0] != g.shape[1] or not np.all(np.isfinite(g)):
        raise InvalidArgument("gamma", g.shape, "must be a finite square Gram matrix")
    w, v = np.linalg.eigh((g + g.T) / 2)
    scale = max(float(np.abs(g).max()), 1e-300)
    keep = w > 0.0  # Γ is PSD: the eigenvalues dropped are rounding noise (checked just below)
    a = v[:, keep] * np.sqrt(w[keep])
    if float(np.abs(a @ a.T - g).max()) > 1e-12 * scale:
        raise InvalidArgument("gamma", "not positive semi-definite", "a Gram matrix has a float factorisation to 1e-12")
    return a


def _masses(shifts: npt.NDArray[np.float64], low: float, width: float, depth: int) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Enclosures [lo, hi] of Φ(t_{(k+1)s} − c) − Φ(t_{ks} − c) for every shift c and every dyadic
    interval k at every level (heap index 2^level + k) of [low, low + width] split into 2^depth."""
    n = 1 << depth
    lo = np.zeros((len(shifts), 2 << depth))
    hi = np.zeros((len(shifts), 2 << depth))
    with with_precision():
        root2, step = arb(2).sqrt(), arb(width) / n
        for row, shift in enumerate(shifts):
            cdf = [(-(arb(low) + step * t - arb(float(shift))) / root2).erfc() / 2 for t in range(n + 1)]
            for level in range(depth + 1):
                span = n >> level
                for k in range(1 << level):
                    m = cdf[(k + 1) * span] - cdf[k * span]
                    mid, rad = float(m.mid()), float(m.rad())
                    lo[row, (1 << level) + k] = max(0.0, (mid - rad) * (1 - _SAFE))
                    hi[row, (1 << level) + k] = (mid + rad) * (1 + _SAFE) + 5e-324
    return lo, hi


def _lse(z: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    top = z.max(axis=1)
    return top + np.log(np.exp(z - top[:, None]).sum(axis=1))


@dataclass(frozen=True)
class Partition:
    """The leaf boxes of a refined partition: loss enclosures and mass enclosures of μ and ν per box,
    and an upper bound on μ outside the covered box."""

    loss_inf: npt.NDArray[np.float64]
    loss_sup: npt.NDArray[np.float64]
    mu_lo: npt.NDArray[np.float64]
    mu_hi: npt.NDArray[np.float64]
    nu_lo: npt.NDArray[np.float64]
    nu_hi: npt.NDArray[np.float64]
    tail: float

    def delta(self, epsilon: float) -> tuple[float, float]:
        """(LOWER, UPPER) bounds on δ(ε) (module docstring)."""
        if epsilon > 700.0:  # e^ε beyond binary64: drop the (non-negative) ν terms; 0 is a lower bound
            kept = self.loss_sup > epsilon
            return 0.0, min(1.0, float(self.mu_hi[kept].sum()) * (1 + len(self.mu_hi) * 2.0**-52) + self.tail)
        e_lo, e_hi = math.exp(epsilon) * (1 - _SAFE), math.exp(epsilon) * (1 + _SAFE)
        inside = self.loss_inf > epsilon
        mixed = ~inside & (self.loss_sup > epsilon)
        n = len(self.mu_hi)
        grow, shrink = 1 + n * 2.0**-52, 1 - n * 2.0**-52
        # a straddling box: ∫_B (dμ − e^ε dν)_+ <= μ(B)(1 − e^{ε−ℓ_sup}), and also
        # = μ(B) − e^ε ν(B) + ∫_B (e^ε dν − dμ)_+ <= μ(B) − e^ε ν(B) + e^ε ν(B)(1 − e^{ℓ_inf−ε})
        above = self.mu_hi[mixed] * -np.expm1(epsilon - self.loss_sup[mixed])
        below = self.mu_hi[mixed] - e_lo * self.nu_lo[mixed] + e_hi * self.nu_hi[mixed] * -np.expm1(np.minimum(self.loss_inf[mixed] - epsilon, 0.0))
        straddle = np.minimum(above, np.maximum(below, 0.0))
        upper = (float(self.mu_hi[inside].sum()) + float(straddle.sum())) * grow - e_lo * float(self.nu_lo[inside].sum()) * shrink
        upper = upper + self.tail
        chosen = self.mu_lo - e_hi * self.nu_hi > 0
        lower = float(self.mu_lo[chosen].sum()) * shrink - e_hi * float(self.nu_hi[chosen].sum()) * grow
        return max(0.0, lower), min(1.0, max(upper, 0.0))


@lru_cache(maxsize=16)
def _layout(gamma_bytes: bytes, size: int, depth: int):
    """Coordinates, covered box and the dyadic mass tables of one Γ (independent of ε and direction)."""
    a = coordinates(np.frombuffer(gamma_bytes, dtype=np.float64).reshape(size, size))
    b, d = a.shape
    if d > MAX_DIMENSION:
        raise InvalidArgument("batches", b, f"the span of the means has dimension {d}; the partition handles at most {MAX_DIMENSION}")
    low = np.minimum(a.min(axis=0), 0.0) - _RADIUS if d else np.zeros(0)
    width = float((np.maximum(a.max(axis=0), 0.0) + _RADIUS - low).max()) if d else 1.0
    tables = [_masses(np.append(a[:, j], 0.0), float(low[j]), width, depth) for j in range(d)]
    return a, low, width, tables


def partition(gamma: npt.ArrayLike, epsilon: float, direction: Direction, depth: int = DEPTH, rel_slack: float = _REL_SLACK) -> Partition:
    """The partition refined at ``epsilon`` in ``direction`` (module docstring)."""
    g = np.ascontiguousarray(gamma, dtype=np.float64)
    a, low, width, tables = _layout(g.tobytes(), g.shape[0], depth)
    b, d = a.shape
    if d == 0:  # all means zero: P = Q
        empty = np.zeros(0)
        return Partition(empty, empty, empty, empty, empty, empty, 0.0)
    half = 0.5 * (a * a).sum(axis=1)
    # μ outside the root box R: 1 − μ(R), with μ(R) from below
    root = np.ones(b + 1)
    for lo, _ in tables:
        root = root * lo[:, 1]
    root *= 1 - _SAFE
    mass_root = float(root[:b].mean()) if direction is Direction.REMOVE else float(root[b])
    tail = max(0.0, 1.0 - mass_root * (1 - b * 2.0**-52)) + 2.0**-52
    offsets = np.stack([g.ravel() for g in np.meshgrid(*[np.arange(2)] * d, indexing="ij")], axis=1)
    idx = np.zeros((1, d), dtype=np.int64)
    leaves: list[tuple[npt.NDArray[np.float64], ...]] = []
    lower_so_far = 0.0
    e_hi = math.exp(min(epsilon, 700.0)) * (1 + _SAFE)
    log_b = math.log(b)
    for level in range(depth + 1):
        side = width / (1 << level)
        centres = low[None, :] + (idx + 0.5) * side
        c = centres @ a.T - half
        r = np.abs(a).sum(axis=1)[None, :] * (side / 2)
        margin = 1e-9 * (1.0 + np.abs(c).max(axis=1) + float(r.max()))
        l_sup = _lse(c + r) - log_b + margin
        l_inf = _lse(c - r) - log_b - margin
        loss_inf, loss_sup = (l_inf, l_sup) if direction is Direction.REMOVE else (-l_sup, -l_inf)
        heap = (1 << level) + idx
        m_lo, m_hi = np.ones((len(idx), b + 1)), np.ones((len(idx), b + 1))
        for j, (lo, hi) in enumerate(tables):
            m_lo *= lo[:, heap[:, j]].T
            m_hi *= hi[:, heap[:, j]].T
        mix_lo, mix_hi = m_lo[:, :b].mean(axis=1), m_hi[:, :b].mean(axis=1)
        if direction is Direction.REMOVE:
            mu_lo, mu_hi, nu_lo, nu_hi = mix_lo, mix_hi, m_lo[:, b], m_hi[:, b]
        else:
            mu_lo, mu_hi, nu_lo, nu_hi = m_lo[:, b], m_hi[:, b], mix_lo, mix_hi
        decided = (loss_inf > epsilon) | (loss_sup <= epsilon)
        gain = mu_lo - e_hi * nu_hi
        lower_so_far += float(gain[(loss_inf > epsilon) & (gain > 0)].sum())
        above = mu_hi * -np.expm1(np.minimum(epsilon - loss_sup, 0.0))
        below = mu_hi - nu_lo * (e_hi / (1 + _SAFE) ** 2) + e_hi * nu_hi * -np.expm1(np.minimum(loss_inf - epsilon, 0.0))
        slack = np.minimum(above, np.maximum(below, 0.0)) - np.maximum(gain, 0.0)
        split = ~decided & (level < depth)
        if split.any():
            split &= slack * split.sum() > max(rel_slack * lower_so_far, _FLOOR)
        if split.sum() << d > _MAX_BOXES:  # keep memory bounded: split only the largest slacks
            cut = np.partition(slack[split], -(_MAX_BOXES >> d))[-(_MAX_BOXES >> d)]
            split &= slack >= cut
        keep = ~split
        leaves.append((loss_inf[keep], loss_sup[keep], mu_lo[keep], mu_hi[keep], nu_lo[keep], nu_hi[keep]))
        if level == depth or not split.any():
            break
        idx = (2 * idx[split][:, None, :] + offsets[None, :, :]).reshape(-1, d)
    columns = [np.concatenate(parts) for parts in zip(*leaves)]
    return Partition(*columns, tail=tail)


@lru_cache(maxsize=64)
def _cached(gamma_bytes: bytes, size: int, epsilon: float, direction: Direction) -> Partition:
    return partition(np.frombuffer(gamma_bytes, dtype=np.float64).reshape(size, size), epsilon, direction)


def _partition_for(gamma: npt.ArrayLike, epsilon: float, direction: Direction) -> Partition:
    g = np.ascontiguousarray(gamma, dtype=np.float64)
    return _cached(g.tobytes(), g.shape[0], float(epsilon), direction)


def delta_bracket(gamma: npt.ArrayLike, epsilon: float, direction: Direction) -> tuple[float, float]:
    """(LOWER, UPPER) bounds on δ(ε) of the pair with scaled Gram matrix ``gamma`` in ``direction``."""
    eps = check_real("epsilon", epsilon)
    if not isinstance(direction, Direction):
        raise InvalidArgument("direction", direction, "must be Direction.ADD or Direction.REMOVE")
    return _partition_for(gamma, eps, direction).delta(eps)


def epsilon_bracket(gamma: npt.ArrayLike, delta: float, direction: Direction, tolerance: float = 1e-3, rounds: int = 4) -> tuple[float, float]:
    """(LOWER, UPPER) bounds on ε(δ): UPPER is an ε found with δ_upper(ε) <= δ (so ε(δ) <= it), LOWER
    one with δ_lower(ε) > δ (so δ(ε') > δ for every ε' <= ε, and ε(δ) >= it; 0 when none is found).
    Neither needs the bounds to be monotone in ε. A partition is tight near the ε it was refined at, so
    the next one is refined where the truth lies: first at ε = 1, then at the lower end found (the
    lower bounds hold up away from that ε), then at the middle of the bracket; at most ``rounds``
    partitions, fewer once the bracket is narrower than ``tolerance`` (relative)."""
    target = check_open_unit("delta", delta)
    if not isinstance(direction, Direction):
        raise InvalidArgument("direction", direction, "must be Direction.ADD or Direction.REMOVE")
    centre, lower, upper = 1.0, 0.0, math.inf
    for turn in range(rounds):
        part = _partition_for(gamma, centre, direction)
        upper = min(upper, _search(lambda e: part.delta(e)[1] <= target))
        # the upper bound need not be monotone away from the partition's ε: scan near it too
        near = [e for e in centre * (1 + 2e-4 * np.arange(-10, 11)) if part.delta(float(e))[1] <= target]
        upper = min([upper, *map(float, near)])
        found = _search(lambda e: part.delta(e)[0] > target, last_true=True)
        lower = max(lower, found or 0.0)
        if math.isfinite(upper) and upper - lower <= tolerance * upper:
            break
        if lower > 0:
            centre = _aim(part, centre, lower)
        elif math.isfinite(upper):
            centre = upper / 2
        else:
            centre = 2 * centre
    return lower, upper


def _aim(part: Partition, centre: float, lower: float) -> float:
    """Where to refine next: just above ``lower`` (near the truth), by the upper bound's relative
    excess g at the partition's own ε over the local slope of log δ_lower, with a 50% margin."""
    low_c, up_c = part.delta(centre)
    step = 0.01 * lower
    d0, d1 = part.delta(lower)[0], part.delta(lower + step)[0]
    if not (low_c > 0 and d0 > d1 > 0):
        return lower * 1.01
    slope = (math.log(d0) - math.log(d1)) / step
    return lower + 1.5 * math.log(up_c / low_c) / slope + 1e-4 * lower


def _search(test, last_true: bool = False):
    """For ``last_true=False``: the smallest ε >= 0 (to 2^-_BISECTIONS of the bracket) with ``test(ε)`` true, assuming
    it is monotone false→true (+∞ if true nowhere below 1e6). For ``last_true=True``: the largest
    ε >= 0 with ``test(ε)`` true, assuming true→false (None if ``test(0)`` is false)."""
    if last_true:
        if not test(0.0):
            return None
        lo, hi = 0.0, 1.0
        while test(hi):
            lo, hi = hi, 2 * hi
            if hi > 1e6:
                return lo
        for _ in range(_BISECTIONS):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if test(mid) else (lo, mid)
        return lo
    if test(0.0):
        return 0.0
    lo, hi = 0.0, 1.0
    while not test(hi):
        lo, hi = hi, 2 * hi
        if hi > 1e6:
            return math.inf
    for _ in range(_BISECTIONS):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if test(mid) else (mid, hi)
    return hi
