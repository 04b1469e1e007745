"""The shuffled one-dimensional Gaussian randomizer through the privacy blanket of Balle, Bell,
Gascón & Nissim, "The privacy blanket of the shuffle model" (CRYPTO 2019: the blanket
decomposition), computed rigorously. The paper's text was not available here to check its lemma
numbers, so every step used is derived and checked in proofs/shuffle_gaussian_blanket.py.

Every user adds N(0, σ²) to a record y in an interval of length s (the pair's sensitivity; by a
shift, [−Δ, Δ] with Δ = s/2). The report laws R_y have a common lower envelope

    ω(z) = min_y φ_σ(z − y) = φ_σ(|z| + Δ),   mass γ = 2Φ(−Δ/σ),

so every other user's report is, with probability γ, a draw from ω̃ = ω/γ whatever its record.
Revealing which users are not blanket draws, and their reports, is a post-processing in the
adversary's favour; what is left is the victim's report among N ~ Bin(n − 1, γ) blanket draws,
shuffled, N revealed. For victim records x (P) and x′ (Q) the density of that multiset against
ω̃^{⊗(N+1)} is (1/(N + 1))·Σ_i u_x(z_i), u_x = R_x/ω̃, so for κ = e^ε

    H_N = E_{ω̃^{N+1}}[(Σ_i W(z_i))_+]/(N + 1),   W = u_x − κ·u_x′,

an expectation of a convex increasing function of a sum of i.i.d. terms. H_N does not increase with
N (one more blanket draw, added and shuffled in, is a post-processing), so δ(ε) <= Pr[N < c_0] +
Σ_b Pr[N in bucket b]·H_(left end of b).

The law of W is replaced by a larger one in the increasing convex order, which only raises H_N:

1. The records. A cell X × X′ of victim records gets the pointwise envelope W_cell = sup_X u_x −
   κ·inf_X′ u_x′ (>= W for every pair in the cell); the cells cover every ordered pair with x >= x′,
   and the reflection z ↦ −z (ω̃ is even) maps the others onto them. The bound is the largest over
   the cells.
2. The reports. On each of ~500–700 intervals I of z (σ/40 wide) (breakpoints at 0 and the cell's ends), W_cell lies
   between its values at I's ends (each part is monotone there), and its conditional mean is
   (∫_I sup_X φ − κ ∫_I inf_X′ φ)/ω̃(I), Gaussian interval masses in ball arithmetic; the two-point law
   on the ends with that mean is a mean-preserving spread of W_cell given I. Beyond |z| = z_max
   (Δ + 8.5σ, or closer where the R-mass beyond is below 1e-4 of the δ asked about, or below 0.1
   of it where the lattice (3. below) needs a smaller largest value: :func:`_z_tail`) W_cell is replaced
   by 0 and that R-mass (2Φ(−(z_max − Δ)/σ)) is added to the bound ((a + b)_+ <= a_+ + b for b >= 0).
   Values below a floor (−max(top, 1)/4, top the largest value) are raised to it: any floor is
   sound, as raising W only raises H; it only sets the lattice's range.
3. The lattice. Each end is split between its two neighbours on a lattice of step 2^k keeping its
   mean (another spread); every mass is rounded up. The step is the power of two below γ/16, or
   coarser where the law would span more than 2^16 points: any step is sound (the split is a
   mean-preserving spread whatever the step), a coarse one is only looser (at σ = Δ the likelihood
   ratio reaches ~10^5 at δ = 10^-6 and the step is 1 against γ = 0.317).
4. The sum. N + 1 draws are self-composed by :func:`verifier.pld.self_compose` (DOMINATING: its
   result is stochastically larger, mass it cannot place sits at +∞, here the largest possible sum),
   and E[S_+] is summed rounded up. A step 2^k > 1 (the composition's grids have step <= 1) is
   composed as the law of W/2^k, whose sums are those of W divided by 2^k exactly:
   E[(Σ W)_+] = 2^k·E[(Σ W/2^k)_+].
5. Fewer users. ε(δ) of n shuffled reports does not increase with n: with n' < n users, the other
   n − n' records (fixed, as every other record is) can be drawn, added and shuffled in by the
   adversary, a post-processing of the n'-user output, and the victim is among the n'. So more than
   :data:`USERS_CAP` users are bounded at that many (where the cells' envelope bias, which grows with
   N, made the bound at n = 10^6 worse than at 10^5: σ = Δ, 3.42 against 0.79).

Only d = 1 is handled: in d dimensions (records of norm <= Δ) the blanket has mass
γ_d = E[exp(−Δ‖Z‖/σ² − Δ²/(2σ²))], Z ~ N(0, σ²I_d), which falls like exp(−Δ√d/σ)
(:func:`blanket_mass_dimension`), so no bound of this kind holds for every dimension.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from flint import arb

from verifier._directed import arb_bound, arb_bounds_many, with_precision
from verifier._types import Direction, Dominance, Side
from verifier._validation import check_integer, check_nonnegative, check_open_unit, check_positive
from verifier.shuffle.count import binomial_sf_arb

__all__ = [
    "GAUSSIAN_BLANKET_CITATION",
    "Cell",
    "blanket_mass",
    "blanket_mass_dimension",
    "cell_delta_upper",
    "blanket_delta_upper",
    "blanket_epsilon_upper",
    "USERS_CAP",
]

GAUSSIAN_BLANKET_CITATION = (
    "Balle, Bell, Gascón & Nissim 2019 (CRYPTO), the privacy blanket: the victim's report among Bin(n − 1, γ) draws "
    "of the blanket min_y R_y, the hockey stick E[(Σ W)_+]/(N + 1) spread to a lattice and self-composed with a "
    "rigorous error, the worst over cells of records (proofs/shuffle_gaussian_blanket.py): UPPER"
)

_BITS = 96
#: |z| beyond Δ + _Z_MAX·σ: W replaced by 0, the R-mass there (<= 2Φ(−8.5) = 1.9e-17) added.
_Z_MAX = 8.5
#: Intervals of z per σ.
_PER_SIGMA = 40
#: The lattice step is the power of two below γ/_PER_GAMMA, or coarser where the single draw's law
#: would span more than _LATTICE points.
_PER_GAMMA = 16
_LATTICE = 1 << 16
#: Values of W below −_FLOOR·max(top, 1) are raised to it (any floor is sound: raising W raises H).
_FLOOR = 0.25
#: Relative width to which an ε is searched.
_EPS_TOLERANCE = 1e-5
#: Factor by which an ε that fails is raised before the bisection.
_GROWTH = 1.25
#: The most rounds of the corner cell in δ(ε) (:func:`blanket_delta_upper`), each cutting the tail for
#: the last one's δ: each gains about a factor of 10 where the widest cut does not fit the lattice.
ROUNDS = 12
#: Share of a finite target δ the R-mass beyond z_max may take.
_TAIL_SHARE = 1e-4
_TAIL_SHARE_COARSE = 0.1
#: Cells of victim records: the first grid has _FIRST per axis; a cell above δ is split down to 2Δ/_FINEST wide.
#: More users than this are bounded at this many (step 5 of the module docstring: ε does not increase with n).
USERS_CAP = 10**5
_FIRST = 8
_FINEST = 128
#: Buckets of N: left ends at the mean + z·sd.
_EDGES_Z = (-7.0, -5.5, -4.5, -3.75, -3.0, -2.5, -2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0)


@dataclass(frozen=True)
class Cell:
    """Victim records x in [x_low, x_high] (P) and x′ in [xp_low, xp_high] (Q), in units where the
    records lie in [−Δ, Δ]."""

    x_low: float
    x_high: float
    xp_low: float
    xp_high: float

    @property
    def width(self) -> float:
        return max(self.x_high - self.x_low, self.xp_high - self.xp_low)

    def split(self) -> list["Cell"]:
        """The four quarters (those with some x >= x′)."""
        xm, pm = 0.5 * (self.x_low + self.x_high), 0.5 * (self.xp_low + self.xp_high)
        quarters = [Cell(a, b, c, d) for a, b in ((self.x_low, xm), (xm, self.x_high)) for c, d in ((self.xp_low, pm), (pm, self.xp_high))]
        return [q for q in quarters if q.x_high >= q.xp_low]


def blanket_mass(sigma: float, half_width: float) -> arb:
    """γ = 2Φ(−Δ/σ) = erfc(Δ/(σ√2)), the mass of ω = min over y in [−Δ, Δ] of φ_σ(· − y), as a ball."""
    return (arb(half_width) / (arb(sigma) * arb(2).sqrt())).erfc()


@functools.lru_cache(maxsize=64)
def blanket_mass_dimension(dimension: int, sigma: float, radius: float, digits: int = 30) -> float:
    """γ_d = ∫ min over ‖y‖ <= Δ of φ_d(z − y) dz = E[exp(−Δ‖Z‖/σ² − Δ²/(2σ²))], Z ~ N(0, σ²I_d) (the
    closest record is Δ·z/‖z‖, so the minimum is φ_d at distance ‖z‖ + Δ): a chi integral at
    ``digits`` digits by mpmath (not a bound; the docs' table of how the blanket vanishes with d)."""
    import mpmath

    d = check_integer("dimension", dimension, minimum=1)
    with mpmath.workdps(digits):
        a, s = mpmath.mpf(radius) / sigma, mpmath.mpf(d)
        chi = lambda r: r ** (s - 1) * mpmath.exp(-r * r / 2) / (2 ** (s / 2 - 1) * mpmath.gamma(s / 2))  # noqa: E731
        return float(mpmath.quad(lambda r: chi(r) * mpmath.exp(-a * r - a * a / 2), [0, s**0.5, mpmath.inf]))


def _normal_mass(left: arb, right: arb, centre: arb, scale: arb) -> arb:
    """Pr[left <= Y <= right], Y ~ N(centre, σ²) (scale = σ√2), by erfc on the side without cancellation."""
    lo, hi = (left - centre) / scale, (right - centre) / scale
    if lo >= 0:
        return (lo.erfc() - hi.erfc()) / 2
    if hi <= 0:
        return ((-hi).erfc() - (-lo).erfc()) / 2
    return 1 - ((-lo).erfc() + hi.erfc()) / 2  # 1 − Pr[Y < left] − Pr[Y > right]


def _edges(cell: Cell, z_max: float, step: float) -> np.ndarray:
    """Interval ends of z: the breakpoints 0, the cell's ends and the midpoint of X′, each segment cut
    into pieces at most ``step`` long (exact doubles)."""
    mid = 0.5 * (cell.xp_low + cell.xp_high)
    points = sorted({-z_max, 0.0, z_max, *(p for p in (cell.x_low, cell.x_high, cell.xp_low, cell.xp_high, mid) if -z_max < p < z_max)})
    out: list[float] = []
    for left, right in zip(points[:-1], points[1:]):
        pieces = max(1, int(math.ceil((right - left) / step)))
        out.extend(float(v) for v in np.linspace(left, right, pieces + 1)[:-1])
    out.append(z_max)
    return np.array(out)


@dataclass(frozen=True)
class _Law:
    """The single draw's law on the lattice {(offset + i)·step}: masses rounded up, the largest value,
    and the R-mass left beyond |z| = z_max (added to every H_N)."""

    step: float
    offset: int
    probs: np.ndarray
    top: float
    tail: float


def _ratio(z: arb, centre: arb | None, half: arb, two_var: arb) -> arb:
    """φ_σ(z − centre)/φ_σ(|z| + Δ) (centre None: φ_σ(0), z inside X)."""
    far = (abs(z) + half) ** 2
    near = arb(0) if centre is None else (z - centre) ** 2
    return ((far - near) / two_var).exp()


def _z_tail(target: float, sigma: float, half: float) -> float:
    """z_max − Δ in units of σ: _Z_MAX, or less where the R-mass beyond (erfc(z/√2)) is below
    :data:`_TAIL_SHARE` of a finite ``target``; where the law would then not fit 2^16 points of step
    γ/16 (its largest value γ·e^(2Δ·z_max/σ²) sets the lattice's step), as low as that fit or a
    share :data:`_TAIL_SHARE_COARSE` (at σ = Δ, n = 10⁴: ε 2.00 against 2.66 at the share 1e-4). Any z_max
    is sound (the mass beyond is added)."""
    if not math.isfinite(target):
        return _Z_MAX
    from scipy.special import erfcinv

    fine, coarse = (min(_Z_MAX, max(3.0, math.sqrt(2) * float(erfcinv(share * target)))) for share in (_TAIL_SHARE, _TAIL_SHARE_COARSE))
    fits = (sigma * sigma * math.log(_LATTICE / (1.25 * _PER_GAMMA)) / (2 * half) - half) / sigma
    return fine if fits >= fine else max(coarse, fits)


@dataclass(frozen=True)
class _Parts:
    """What a cell's law needs that does not depend on κ, per interval I of z: ω̃(I), ∫_I sup_X φ and
    ∫_I inf_X′ φ (balls), the float ends [u_low, u_high] of sup_X u and [v_low, v_high] of inf_X′ u at
    I's ends, and ω̃(|z| > z_max) and the R-mass beyond z_max (balls)."""

    omega: list[arb]
    u_mass: list[arb]
    v_mass: list[arb]
    u_low: list[float]
    u_high: list[float]
    v_low: list[float]
    v_high: list[float]
    gamma: float
    outside: arb
    tail: arb


@functools.lru_cache(maxsize=4096)
def _cell_parts(sigma: float, half: float, cell: Cell, z_tail: float) -> _Parts:
    """The κ-free part of step 2 of the module docstring for one cell (ball arithmetic)."""
    z_max = half + z_tail * sigma
    edges = _edges(cell, z_max, sigma / _PER_SIGMA)
    out: dict[str, list] = {key: [] for key in ("omega", "u_mass", "v_mass", "u_low", "u_high", "v_low", "v_high")}
    with with_precision(_BITS):
        s, dlt = arb(sigma), arb(half)
        scale, two_var = s * arb(2).sqrt(), 2 * s * s
        gamma = blanket_mass(sigma, half)
        density0 = 1 / (s * (2 * arb.pi()).sqrt())
        x_lo, x_hi, p_lo, p_hi = (arb(v) for v in (cell.x_low, cell.x_high, cell.xp_low, cell.xp_high))
        mid = 0.5 * (cell.xp_low + cell.xp_high)
        for left_f, right_f in zip(edges[:-1], edges[1:]):
            left, right, centre_f = arb(left_f), arb(right_f), 0.5 * (left_f + right_f)
            out["omega"].append(_normal_mass(left, right, -dlt if centre_f > 0 else dlt, scale) / gamma)  # ω̃(I)
            if centre_f < cell.x_low:
                u_centre, u_mass = x_lo, _normal_mass(left, right, x_lo, scale)
            elif centre_f > cell.x_high:
                u_centre, u_mass = x_hi, _normal_mass(left, right, x_hi, scale)
            else:
                u_centre, u_mass = None, (right - left) * density0
            v_centre = p_lo if centre_f >= mid else p_hi
            out["u_mass"].append(u_mass)
            out["v_mass"].append(_normal_mass(left, right, v_centre, scale))
            u_ends = [gamma * _ratio(z, u_centre, dlt, two_var) for z in (left, right)]
            v_ends = [gamma * _ratio(z, v_centre, dlt, two_var) for z in (left, right)]
            out["u_low"].append(min(arb_bound(u, Side.LOWER) for u in u_ends))
            out["u_high"].append(max(arb_bound(u, Side.UPPER) for u in u_ends))
            out["v_low"].append(min(arb_bound(v, Side.LOWER) for v in v_ends))
            out["v_high"].append(max(arb_bound(v, Side.UPPER) for v in v_ends))
        outside = ((arb(z_max) + dlt) / scale).erfc() / gamma  # ω̃(|z| > z_max)
        tail = ((arb(z_max) - dlt) / scale).erfc()  # >= ∫ over |z| > z_max of max_y φ_σ(z − y)
    return _Parts(**out, gamma=float(gamma.mid()), outside=outside, tail=tail)


def _draw_law(sigma: float, half: float, cell: Cell, kappa: float, z_tail: float = _Z_MAX) -> _Law:
    """Steps 2 and 3 of the module docstring for one cell at κ (ball arithmetic, masses rounded up)."""
    parts = _cell_parts(sigma, half, cell, z_tail)
    lows, highs, low_mass, high_mass = [], [], [], []
    with with_precision(_BITS):
        k = arb(kappa)
        for omega, u_mass, v_mass, u_low, u_high, v_low, v_high in zip(
            parts.omega, parts.u_mass, parts.v_mass, parts.u_low, parts.u_high, parts.v_low, parts.v_high
        ):
            mean = (u_mass - k * v_mass) / omega
            low = arb_bound(arb(u_low) - k * v_high, Side.LOWER)
            high = arb_bound(arb(u_high) - k * v_low, Side.UPPER)
            if high <= low:
                high = math.nextafter(low, math.inf)
            width = arb(high) - arb(low)
            lows.append(low)
            highs.append(high)
            low_mass.append(omega * ((arb(high) - mean) / width))
            high_mass.append(omega * ((mean - arb(low)) / width))
    _, m_low = arb_bounds_many(low_mass)
    _, m_high = arb_bounds_many(high_mass)
    values = np.concatenate([np.array(lows), np.array(highs), [0.0]])
    masses = np.concatenate([np.clip(m_low, 0.0, None), np.clip(m_high, 0.0, None), [max(0.0, arb_bound(parts.outside, Side.UPPER))]])
    top = float(values.max())
    floor = -_FLOOR * max(top, 1.0)
    values = np.maximum(values, floor)
    step = 2.0 ** math.floor(math.log2(max(parts.gamma / _PER_GAMMA, (top - floor) / _LATTICE)))
    values = np.where((values < 0) & (values > -step), 0.0, values)  # raised: keeps the fractions below exact
    scaled = values / step  # exact: step is a power of two
    index = np.floor(scaled)
    frac = scaled - index  # exact (Sterbenz, or index = 0; no value lies in (−1, 0) steps)
    offset = int(index.min())
    probs = np.zeros(int(index.max()) - offset + 2)
    np.add.at(probs, (index - offset).astype(np.int64), masses * (1.0 - frac))
    np.add.at(probs, (index - offset).astype(np.int64) + 1, masses * frac)
    probs *= 1.0 + 1e-12  # each mass a product and a sum of at most 2·len(edges) + 1 terms: relative error < 1e-12
    return _Law(step, offset, probs, (offset + probs.size - 1) * step, arb_bound(parts.tail, Side.UPPER))


def _expected_positive(law: _Law, draws: int) -> float:
    """UPPER bound on E[(Σ of ``draws`` draws)_+]/draws: the rigorous self-composition (DOMINATING),
    its grid's positive part summed rounded up, the mass at +∞ at the largest possible sum."""
    from verifier.pld import DiscretePLD, self_compose

    scale = max(1.0, law.step)  # a power of two: the grid {(offset + i)·step} is scale times one of step <= 1
    pld = DiscretePLD(law.step / scale, law.offset, law.probs, 0.0, 0.0, Dominance.DOMINATING, Direction.REMOVE)
    out = self_compose(pld, draws)
    values = out.losses() * scale  # exact (a power of two)
    positive = values > 0
    total = float(np.sum(out.probs[positive] * values[positive])) * (1.0 + (int(positive.sum()) + 4) * 2.0**-52)
    return math.nextafter(total / draws + out.infinite_mass * max(law.top, 0.0) * (1 + 2.0**-50), math.inf)


def _bucket_starts(others: int, share: float) -> list[int]:
    """Left ends of the buckets of N ~ Bin(others, share), increasing: mean + z·sd for z in :data:`_EDGES_Z`,
    every value when the standard deviation is below 2."""
    mean, sd = others * share, math.sqrt(others * share * (1 - share))
    if sd < 2:
        return list(range(0, min(others, int(mean + 20 * sd) + 10) + 1))
    return sorted({min(others, max(0, int(math.floor(mean + z * sd)))) for z in _EDGES_Z})


@functools.lru_cache(maxsize=16)
def _buckets(sigma: float, half: float, users: int) -> tuple[list[int], list[arb]]:
    """(left ends c_b of the buckets of N ~ Bin(n − 1, γ⁻), [Pr[N >= c_b]] + [0]) with γ⁻ <= γ (a
    smaller blanket is a blanket, and N only gets smaller)."""
    others = users - 1
    with with_precision(_BITS):
        share = arb(arb_bound(blanket_mass(sigma, half), Side.LOWER))
        starts = _bucket_starts(others, float(share.mid()))
        return starts, [binomial_sf_arb(c, others, share) for c in starts] + [arb(0)]


def cell_delta_upper(
    sigma: float, half: float, users: int, epsilon: float, cell: Cell, target: float = math.inf, scale: float | None = None
) -> float:
    """UPPER bound on δ(ε) of every pair of victim records in ``cell`` (module docstring): Pr[N < c_0]
    plus Σ over buckets of N of their mass times H at the bucket's left end, plus the R-mass beyond
    z_max. H is computed at the buckets' left ends one at a time, c_0 first, then where the most mass
    is undecided; with H known at some left ends, giving each bucket the H of the nearest known end
    below it is also an UPPER bound (H_N does not increase with N), returned once it is <= a finite
    ``target``; the nearest known end above it gives an estimate, returned once it is > ``target``.
    z_max is chosen for δ of the size ``scale`` (default ``target``; :func:`_z_tail`): any z_max is
    sound, the right one is tight."""
    law = _draw_law(sigma, half, cell, math.exp(epsilon), _z_tail(target if scale is None else scale, sigma, half))
    starts, tails = _buckets(sigma, half, users)
    with with_precision(_BITS):
        base = 1 - tails[0] + law.tail
        masses = [tails[i] - tails[i + 1] for i in range(len(starts))]
        weights = [float(m.mid()) for m in masses]
        known: dict[int, float] = {}
        pick = 0
        while True:
            known[pick] = min(1.0, _expected_positive(law, starts[pick] + 1))
            ends = sorted(known)
            below = [known[max(j for j in ends if j <= i)] for i in range(len(starts))]
            above = [known[min((j for j in ends if j >= i), default=ends[-1])] if i <= ends[-1] else 0.0 for i in range(len(starts))]
            upper = arb_bound(base + sum((m * h for m, h in zip(masses, below)), arb(0)), Side.UPPER)
            if len(known) == len(starts) or upper <= target < math.inf:
                return min(1.0, max(0.0, upper))
            estimate = arb_bound(base + sum((m * h for m, h in zip(masses, above)), arb(0)), Side.UPPER)
            if estimate > target:
                return estimate
            pick = max((i for i in range(len(starts)) if i not in known), key=lambda i: weights[i] * (below[i] - above[i]))


def _first_cells(half: float) -> list[Cell]:
    w = 2 * half / _FIRST
    ends = [-half + i * w for i in range(_FIRST)] + [half]
    return [Cell(ends[i], ends[i + 1], ends[j], ends[j + 1]) for i in range(_FIRST) for j in range(i + 1)]


def _corner(half: float) -> Cell:
    """The finest cell at the corner x = Δ, x′ = −Δ (where δ is largest)."""
    w = 2 * half / _FINEST
    return Cell(half - w, half, -half, -half + w)


def _cover(sigma: float, half: float, users: int, epsilon: float, target: float) -> tuple[float, list[Cell]]:
    """(An UPPER bound on the largest cell bound over a cover of the ordered pairs x >= x′, the finest
    cells above ``target``): cells whose bound is <= ``target`` are settled (possibly by the
    one-composition bound); the others are split down to Δ/_FINEST, and the largest finest cell above
    ``target`` is returned, or ``target``."""
    queue = _first_cells(half)
    finest = 2 * half / _FINEST
    worst, above = target, []
    while queue:
        cell = queue.pop()
        value = cell_delta_upper(sigma, half, users, epsilon, cell, target)
        if value <= target:
            continue
        if cell.width <= finest * (1 + 1e-12):
            worst = max(worst, value)
            above.append(cell)
        else:
            queue.extend(cell.split())
    return worst, above


@functools.lru_cache(maxsize=32)
def blanket_delta_upper(sigma: float, sensitivity: float, users: int, epsilon: float) -> float:
    """UPPER bound on δ(ε) of n shuffled reports y + N(0, σ²), records y in an interval of length
    ``sensitivity`` (either direction; module docstring): the finest corner cell's bound, then every
    cell of a cover checked against it; a finest cell the cover leaves above the corner's bound is
    bounded again in full (the cover's value for it is a partial sum, cut off once above the corner's).
    The tail cut z_max is chosen for δ of the size found (:func:`_z_tail`): the corner cell alone is
    bounded again with its tail cut for its last bound until that falls by less than 1% (at most
    :data:`ROUNDS` times), then the whole cover with that cut, and again with the cover's bound while it
    is more than 1% below. Where the widest cut does not fit the lattice (σ = Δ) the coarse tail share
    makes each round about 10 times smaller: n = 10³, ε = 4.3045 went from 0.0098 to 7.96e-7 (the ε(δ)
    search, whose tail is cut for its δ, certifies 1e-6 there), n = 20, ε = 8.9921 from 5.2e-5 to
    1.0000082e-6. Every round is an UPPER bound; the smallest is kept."""
    s = check_positive("sigma", sigma)
    half = check_positive("sensitivity", sensitivity) / 2
    n = min(check_integer("users", users, minimum=2), USERS_CAP)
    eps = check_nonnegative("epsilon", epsilon)
    corners: dict[float, float] = {}

    def corner(scale: float) -> float:
        """The corner cell's bound with its tail cut for δ of the size ``scale`` (each scale once)."""
        if scale not in corners:
            corners[scale] = cell_delta_upper(s, half, n, eps, _corner(half), scale=scale)
        return corners[scale]

    scale = corner(math.inf)
    for _ in range(ROUNDS):
        if not 0.0 < scale < 1.0:
            return _delta_round(s, half, n, eps, math.inf, corner(math.inf))
        again = corner(scale)
        if again > 0.99 * scale:
            break
        scale = again
    value = 1.0
    for _ in range(3):
        value = min(value, _delta_round(s, half, n, eps, scale, corner(scale)))
        if not 0.0 < value < 0.99 * scale:
            break
        scale = value
    return value


def _delta_round(sigma: float, half: float, users: int, epsilon: float, scale: float, corner: float) -> float:
    """One round of :func:`blanket_delta_upper`, every cell's tail cut for δ of the size ``scale``;
    ``corner`` is the corner cell's bound with that cut."""
    worst, above = _cover(sigma, half, users, epsilon, corner)
    return min(1.0, max([worst] + [cell_delta_upper(sigma, half, users, epsilon, cell, scale=scale) for cell in above]))


def _cells_epsilon(sigma: float, half: float, users: int, target: float, cells: list[Cell], lo: float) -> float:
    """The smallest ε above ``lo`` at which every cell's bound is <= ``target``, by bisection to a
    relative :data:`_EPS_TOLERANCE` (the returned ε is one where every cell was checked); inf beyond
    64. The cell that failed last is tried first (a failing ε then costs one cell)."""
    order = list(cells)

    def passes(eps: float) -> bool:
        for i, cell in enumerate(order):
            if cell_delta_upper(sigma, half, users, eps, cell, target) > target:
                order.insert(0, order.pop(i))
                return False
        return True

    hi = max(_GROWTH * lo, 0.25)
    while not passes(hi):
        lo, hi = hi, _GROWTH * hi
        if hi > 64:
            return math.inf
    while hi - lo > _EPS_TOLERANCE * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if passes(mid) else (mid, hi)
    return hi


def _probes(half: float) -> list[Cell]:
    """Finest cells where the largest bound was found: the corner (x = Δ, x′ = −Δ), and x = Δ against
    x′ just below 0, which comes within a few percent of it (σ = Δ, n = 10⁴: ε 1.96 there against the
    corner's 2.00; with the tail cut at 1e-4·δ and the lattice of step 16 they were the worst, 3.13
    against 2.66)."""
    w = 2 * half / _FINEST
    return [_corner(half), Cell(half - w, half, -w, 0.0), Cell(half - w, half, -3 * w, -2 * w)]


@functools.lru_cache(maxsize=32)
def blanket_epsilon_upper(sigma: float, sensitivity: float, users: int, delta: float) -> float:
    """UPPER bound on ε(δ): the smallest ε at which a few finest cells (:func:`_probes`) are <= δ,
    accepted once every cell of a cover is <= δ there; otherwise the smallest ε at which the finest
    cells the cover left above δ are <= δ is tried next (at most 6 rounds); inf when no ε <= 64 is
    accepted."""
    s = check_positive("sigma", sigma)
    half = check_positive("sensitivity", sensitivity) / 2
    n = min(check_integer("users", users, minimum=2), USERS_CAP)
    target = check_open_unit("delta", delta)
    candidate = _cells_epsilon(s, half, n, target, _probes(half), 0.0)
    for _ in range(6):
        if not math.isfinite(candidate):
            return math.inf
        _, above = _cover(s, half, n, candidate, target)
        if not above:
            return candidate
        candidate = _cells_epsilon(s, half, n, target, above, candidate)
    return math.inf
