"""A finite family of Gram step pairs that dominates every realisable fixed-batch step (issue 29).

Units: clipping norm 1 (σ in those units), so a step is E(A, B, C): the pair
((1 − q)N(0) + qN(a), (1 − q)N(0) + qN(b)) with Gram matrix [[A, C], [C, B]] of a = x − z, b = x′ − z,
|x|, |x′|, |z| <= 1 (proofs/fixed_batch_domination.py, step 1). The realisable set is
{A, B in [0, 4], C >= Cmin(A, B)} (step 5), and E(G) is dominated by E(G*) whenever G <= G* in
step 4's order: A <= A*, B <= B*, C* <= C + sqrt((A* − A)(B* − B)) (:func:`dominates`).

A :class:`GramCover` holds a family of members (A*, B*, C*), closed under the mirror
(A, B, C) -> (B, A, C), and a tiling of [0, 4]^2 by dyadic rectangles, each assigned to a member that
covers it: for every (A, B) in the cell, A <= A*, B <= B* and

    C* <= min over the cell of  Cmin(A, B) + sqrt((A* − A)(B* − B))            (*)

so every realisable step with (A, B) in the cell is dominated by the member (steps 4 and 5). The
right side of (*) is bounded below rigorously (:func:`cell_floor`: float operations rounded outward
one ulp each, on a sub-grid of the cell, with step 5's monotonicity of Cmin), and equivalently the
cell's step-6 dominator taken at the member's corner, (A*, B*, floor), is dominated by the member
(same A, B; lower C). :func:`check_cover` re-checks both properties from scratch: the cells tile
[0, 4]^2 exactly (integer arithmetic on the dyadic edges) and (*) holds for every cell. With that,
the Bellman recursion over the members' dominating PLDs (verifier.pld.adaptive) is an UPPER bound
on δ(ε) of every adaptive adversary (the theorem at the end of proofs/fixed_batch_domination.py).

How the members are chosen is planning, not proof (a poor plan makes :func:`gram_cover` raise or
use more members, never a wrong cover): a step behaves, to second order in q, like a Gaussian step
with μ² = q²·D(A, B, C), D = e^{A/σ²} + e^{B/σ²} − 2e^{C/σ²} (the χ² divergence over q²); the remove
step (4, 0, 0) has the largest D of any realisable step, D_r = e^{4/σ²} − 1. Every member's C* is the
smallest C with D(A*, B*, C) <= (1 + excess)·D_r (at least −sqrt(A*B*)); a greedy set cover with
reverse deletion over sample points with A >= B (graded toward the edge A = 4 and the corner (4, 0);
the mirrors cover the rest) picks corners on a 1/32 grid plus dyadic corners graded toward (4, 0), at
PLAN_SHARE of the budget and with a small neighbourhood around each point, so the members' regions
overlap and the rigorous quadtree ends; open cells the members miss even in floats join the sample
points and the plan is redone. The steps (4, B, B) (x = −z on the sphere) force members with A* = 4
along that edge, each covering B in [C*, B*] there: at least 7 per side at excess 1% (σ = 1.1).

Measured (benchmarks/fixed_batch_cover.md, float recursion, NOT a bound): at the DP-SGD row
(σ = 1.1, q = 256/60000, T = 2344) the cover at excess 0.01 has 34 members (mirrors included, all
two-dimensional) and adds 0.027 to the remove/add family's ε (6.7599 -> 6.7872 at h = 2^-9); at excess
0.03, 24 members and +0.052. 12 members have A* = 4 (one is (4, 4, C*)) and 11 their mirrors B* = 4:
the edge alone needs at least 7 (the chain above), the others keep the thin regions next to it covered. The D proxy is only a rough guide to that cost: members at
the remove corner cost about 0.06 ε per unit of D − D_r, members far from it much less per unit but
not nothing, and members with D far below D_r still cost up to ~0.003 each ((3.5, 2, −1): the
adaptive recursion uses them where remove is not the worst step). Fewer members need a better cost proxy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from verifier._directed import down, up
from verifier._validation import check_positive
from verifier.errors import InvalidArgument, NumericalFailure

__all__ = [
    "Cell",
    "GramCover",
    "Member",
    "check_cover",
    "check_tiling",
    "cell_floor",
    "cmin_lower",
    "dominates",
    "gram_cover",
]

#: Sub-boxes per cell edge in :func:`cell_floor` (a power of two: the sub-box edges stay dyadic).
SUBGRID = 4
#: Deepest quadtree level: cells of edge 4·2^-MAX_DEPTH.
MAX_DEPTH = 18
#: Most open cells on one quadtree level (a gap between the members' regions would open 4^depth).
MAX_OPEN = 20_000
#: Re-planning rounds: the open cells' centres that no member covers join the sample points.
PLAN_ROUNDS = 6
#: Planning grid of member corners, and the share of ``excess`` the plan uses (the members get the
#: whole ``excess``: their regions then overlap the plan's, so the quadtree terminates).
CORNER_STEP = 1 / 32
PLAN_SHARE = 0.85
#: Members' C* are rounded up to multiples of this (dyadic, so C* is an exact float).
C_QUANTUM = 2.0**-24


@dataclass(frozen=True)
class Member:
    """A step pair E(a_sq, b_sq, c): Gram matrix [[a_sq, c], [c, b_sq]], c >= −sqrt(a_sq·b_sq)."""

    a_sq: float
    b_sq: float
    c: float

    def mirror(self) -> "Member":
        return Member(self.b_sq, self.a_sq, self.c)

    @property
    def rank_one(self) -> bool:
        """c = −sqrt(a_sq·b_sq) exactly: a one-dimensional pair (a = sqrt(a_sq), b = −sqrt(b_sq))."""
        return self.c <= 0 and Fraction(self.c) ** 2 == Fraction(self.a_sq) * Fraction(self.b_sq)

    @property
    def product(self) -> bool:
        """c = 0: a product of two one-dimensional pairs (orthogonal a and b)."""
        return self.c == 0


@dataclass(frozen=True)
class Cell:
    """[a0, a1] x [b0, b1] (dyadic rationals) and the index of the member that covers it."""

    a0: Fraction
    a1: Fraction
    b0: Fraction
    b1: Fraction
    member: int


@dataclass(frozen=True)
class GramCover:
    sigma: float
    excess: float
    members: tuple[Member, ...]
    cells: tuple[Cell, ...]


def dominates(member: Member, gram: tuple[float, float, float], *, atol: float = 0.0) -> bool:
    """Step 4's order E(gram) <= E(member), evaluated in floats with slack ``atol`` (for tests and
    sampling; the rigorous check of a cover is :func:`check_cover`)."""
    a_sq, b_sq, c = gram
    if a_sq > member.a_sq + atol or b_sq > member.b_sq + atol:
        return False
    return member.c <= c + math.sqrt(max(0.0, (member.a_sq - a_sq) * (member.b_sq - b_sq))) + atol


def cmin_lower(a0: npt.ArrayLike, a1: npt.ArrayLike, b0: npt.ArrayLike, b1: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """A rigorous lower bound of Cmin(A, B) over each box [a0, a1] x [b0, b1] in [0, 4]^2 (elementwise;
    ends exact floats). Valid everywhere: C >= −sqrt(AB) >= −sqrt(a1·b1) and C >= (A + B − 4)/2 >=
    (a0 + b0 − 4)/2 (step 5's proof). Where the box lies in sqrt(A) + sqrt(B) >= 2 and A + B >= 4
    (decided at (a0, b0) with outward rounding), Cmin is non-decreasing in A and B (step 5) so the
    third piece at (a0, b0) bounds it. Every operation is rounded one ulp toward the safe side."""
    a0, a1, b0, b1 = (np.asarray(x, dtype=np.float64) for x in (a0, a1, b0, b1))
    with np.errstate(invalid="ignore"):
        low = np.maximum(-up(np.sqrt(up(a1 * b1))), down(down(a0 + b0) - 4.0) / 2)
        outside = (down(down(np.sqrt(a0)) + down(np.sqrt(b0))) >= 2.0) & (down(a0 + b0) >= 4.0)
        product = down(a0 * b0)
        root = up(np.sqrt(up(up(a0 * b0) * up(up(4.0 - a0) * up(4.0 - b0)))))
        third = down(down(product - root) / 4)
    return np.where(outside, np.maximum(low, third), low)


def cell_floor(
    a0: npt.ArrayLike, a1: npt.ArrayLike, b0: npt.ArrayLike, b1: npt.ArrayLike, a_star: npt.ArrayLike, b_star: npt.ArrayLike
) -> npt.NDArray[np.float64]:
    """A rigorous lower bound of min over the cell of Cmin(A, B) + sqrt((A* − A)(B* − B)), elementwise
    over cells (a0 .. b1) and corners (a_star, b_star) with a1 <= a_star, b1 <= b_star (broadcast):
    each of SUBGRID^2 sub-boxes contributes Cmin's lower bound plus the square root at its upper
    corner (the root decreases in A and B)."""
    a0, a1, b0, b1, a_star, b_star = np.broadcast_arrays(*(np.asarray(x, dtype=np.float64) for x in (a0, a1, b0, b1, a_star, b_star)))
    fractions = np.arange(SUBGRID + 1) / SUBGRID
    edges_a = a0[..., None] + (a1 - a0)[..., None] * fractions  # exact: dyadic ends, SUBGRID a power of 2
    edges_b = b0[..., None] + (b1 - b0)[..., None] * fractions
    lo_a, hi_a = edges_a[..., :-1, None], edges_a[..., 1:, None]
    lo_b, hi_b = edges_b[..., None, :-1], edges_b[..., None, 1:]
    width = np.maximum(0.0, down(a_star[..., None, None] - hi_a)) * np.maximum(0.0, down(b_star[..., None, None] - hi_b))
    slack = np.maximum(0.0, down(np.sqrt(np.maximum(0.0, down(width)))))
    total = down(cmin_lower(lo_a, hi_a, lo_b, hi_b) + slack)
    return total.min(axis=(-2, -1))


def _cmin(a_sq: npt.NDArray[np.float64], b_sq: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Step 5's Cmin (float, planning only)."""
    with np.errstate(invalid="ignore"):
        third = (a_sq * b_sq - np.sqrt(np.maximum(0.0, a_sq * b_sq * (4 - a_sq) * (4 - b_sq)))) / 4
        return np.where(np.sqrt(a_sq) + np.sqrt(b_sq) <= 2, -np.sqrt(a_sq * b_sq), np.where(a_sq + b_sq <= 4, (a_sq + b_sq - 4) / 2, third))


def _lowest_c(a_sq: npt.NDArray[np.float64], b_sq: npt.NDArray[np.float64], sigma: float, excess: float) -> npt.NDArray[np.float64]:
    """Smallest C with D(A, B, C) <= (1 + excess)·D_r, at least −sqrt(AB) (float, planning)."""
    s2 = sigma * sigma
    half = (np.exp(a_sq / s2) + np.exp(b_sq / s2) - (1 + excess) * math.expm1(4 / s2)) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        c = np.where(half > 0, s2 * np.log(np.where(half > 0, half, 1.0)), -np.inf)
    return np.maximum(c, -np.sqrt(a_sq * b_sq))


def _member(a_sq: float, b_sq: float, sigma: float, excess: float) -> Member:
    """The member at corner (a_sq, b_sq): C* rounded up to C_QUANTUM, or exactly −sqrt(a_sq·b_sq)
    where that is the lowest allowed C and is an exact float (a rank-one pair)."""
    c = float(_lowest_c(np.array(a_sq), np.array(b_sq), sigma, excess))
    root = math.sqrt(a_sq * b_sq)
    if c <= -root and Fraction(root) ** 2 == Fraction(a_sq) * Fraction(b_sq):
        return Member(a_sq, b_sq, -root)
    quantised = math.ceil(c / C_QUANTUM) * C_QUANTUM
    if Fraction(quantised) < 0 and Fraction(quantised) ** 2 > Fraction(a_sq) * Fraction(b_sq):
        quantised += C_QUANTUM  # below −sqrt(AB) after rounding: not a Gram matrix
    return Member(a_sq, b_sq, quantised)


def _sample_points() -> npt.NDArray[np.float64]:
    """Planning points with A >= B: a uniform grid plus points graded toward the edge A = 4 and the
    corner (4, 0), where the members' regions are thin."""
    uniform = np.linspace(0.0, 4.0, 129)
    graded = np.concatenate([[0.0], 4.0 * 2.0 ** (-np.arange(0, 40) / 3)])
    rows = [(a, b) for a in uniform for b in uniform]
    rows += [(4.0 - e, b) for e in graded[graded < 0.5] for b in np.concatenate([graded, uniform])]
    points = np.array(rows)
    return points[points[:, 0] >= points[:, 1]]


def _float_covered(members: list[Member], points: npt.NDArray[np.float64]) -> npt.NDArray[np.bool_]:
    """Which points (A, B) some member covers in floats at their C (planning)."""
    a_sq, b_sq = points[:, 0], points[:, 1]
    floor = _cmin(a_sq, b_sq)
    covered = np.zeros(len(points), dtype=bool)
    for m in members:
        reach = floor + np.sqrt(np.maximum(0.0, (m.a_sq - a_sq) * (m.b_sq - b_sq)))
        covered |= (a_sq <= m.a_sq) & (b_sq <= m.b_sq) & (reach >= m.c)
    return covered


def _plan(sigma: float, excess: float, points: npt.NDArray[np.float64]) -> list[tuple[float, float]]:
    """Greedy set cover of the sample points by members' regions at PLAN_SHARE·excess (float)."""
    a_sq, b_sq = points[:, 0], points[:, 1]
    floor = _cmin(a_sq, b_sq)
    grid = np.arange(0.0, 4.0 + CORNER_STEP / 2, CORNER_STEP)
    fine = 2.0 ** -np.arange(6, 13)  # dyadic corners graded toward (4, 0), below the grid's step
    corners = np.array([(a, b) for a in grid for b in grid if a >= 2.0] + [(4.0 - e, b) for e in np.append(fine, 0.0) for b in fine])
    lowest = _lowest_c(corners[:, 0], corners[:, 1], sigma, PLAN_SHARE * excess)
    margin = np.minimum(CORNER_STEP / 2, (4.0 - a_sq + b_sq) / 8)
    covers = np.empty((len(corners), len(points)), dtype=bool)
    for start in range(0, len(corners), 256):
        ca, cb, cc = (x[start : start + 256, None] for x in (corners[:, 0], corners[:, 1], lowest))
        # a point counts as covered with a neighbourhood (CORNER_STEP/2, less near the corner (4, 0))
        near_a, near_b = np.minimum(a_sq + margin, 4.0), np.minimum(b_sq + margin, 4.0)
        inside = (near_a <= ca) & (near_b <= cb)
        reach = floor + np.sqrt(np.maximum(0.0, (ca - near_a) * (cb - near_b)))
        covers[start : start + 256] = inside & (reach >= cc)
    open_points = np.ones(len(points), dtype=bool)
    chosen: list[int] = []
    while open_points.any():
        gain = (covers & open_points).sum(axis=1)
        best = int(gain.argmax())
        if gain[best] == 0:
            raise NumericalFailure(f"no planned member covers the point {tuple(points[open_points][0])} at excess {excess}")
        chosen.append(best)
        open_points &= ~covers[best]
    for index in list(chosen):  # reverse delete: drop a member the others make redundant
        rest = [i for i in chosen if i != index]
        if rest and covers[rest].any(axis=0).all():
            chosen = rest
    return [(float(corners[i, 0]), float(corners[i, 1])) for i in chosen]


def _prune(members: list[Member]) -> list[Member]:
    """Drop members dominated (step 4's order, exact in rationals) by another member: the order is
    transitive (proofs/fixed_batch_domination.py, step 8), so the steps they cover stay covered."""

    def below(m: Member, other: Member) -> bool:
        da, db = Fraction(other.a_sq) - Fraction(m.a_sq), Fraction(other.b_sq) - Fraction(m.b_sq)
        if da < 0 or db < 0:
            return False
        gap = Fraction(m.c) - Fraction(other.c)  # need other.c <= m.c + sqrt(da·db)
        return gap >= 0 or gap * gap <= da * db

    kept: list[Member] = []
    for i, m in enumerate(members):
        if not any(below(m, other) and (not below(other, m) or j < i) for j, other in enumerate(members) if j != i):
            kept.append(m)
    return kept


def _quadtree(members: tuple[Member, ...]) -> tuple[list[Cell], npt.NDArray[np.float64]]:
    """Split [0, 4]^2 into dyadic squares until each is covered (*) by a member (rigorous). Returns
    the cells and, where the splitting runs past OPEN_DEPTH with open cells left, their centres
    (then the cells are incomplete)."""
    star_a = np.array([m.a_sq for m in members])
    star_b = np.array([m.b_sq for m in members])
    star_c = np.array([m.c for m in members])
    cells: list[Cell] = []
    level: list[tuple[Fraction, Fraction]] = [(Fraction(a), Fraction(b)) for a in range(4) for b in range(4)]
    size = Fraction(1)
    for _depth in range(MAX_DEPTH + 1):
        if not level:
            return cells, np.empty((0, 2))
        if len(level) > MAX_OPEN or _depth == MAX_DEPTH:
            return cells, np.array([(float(a + size / 2), float(b + size / 2)) for a, b in level])
        a0 = np.array([float(a) for a, _ in level])[:, None]
        b0 = np.array([float(b) for _, b in level])[:, None]
        a1, b1 = a0 + float(size), b0 + float(size)
        fits = (a1 <= star_a) & (b1 <= star_b)
        floor = cell_floor(a0, a1, b0, b1, np.where(fits, star_a, 4.0), np.where(fits, star_b, 4.0))
        covered = fits & (floor >= star_c)
        pick = np.where(covered.any(axis=1), covered.argmax(axis=1), -1)
        half = size / 2
        following = []
        for (a, b), index in zip(level, pick):
            if index >= 0:
                cells.append(Cell(a, a + size, b, b + size, int(index)))
            else:
                following += [(a, b), (a + half, b), (a, b + half), (a + half, b + half)]
        level, size = following, half
    return cells, np.empty((0, 2))


def gram_cover(sigma: float, *, excess: float = 0.01) -> GramCover:
    """A cover of the realisable Gram set for noise ``sigma`` (clipping norm 1) whose members' D is at
    most (1 + ``excess``)·D_r (planning target; the cover is rigorous whatever the plan)."""
    check_positive("sigma", sigma)
    if not 0 < excess < 1:
        raise InvalidArgument("excess", excess, "must be in (0, 1)")
    points = _sample_points()
    for _round in range(PLAN_ROUNDS):
        planned = [_member(a, b, sigma, excess) for a, b in _plan(sigma, excess, points)]
        planned += [m.mirror() for m in planned]
        members = tuple(sorted(set(_prune(planned)), key=lambda m: (m.a_sq, m.b_sq, m.c)))
        cells, open_centres = _quadtree(members)
        if not open_centres.size:
            break
        missed = open_centres[~_float_covered(list(members), open_centres)]
        if not missed.size:
            raise NumericalFailure(f"the members cover {tuple(open_centres[0])} in floats but no cell around it is certified")
        missed = np.where((missed[:, 0] >= missed[:, 1])[:, None], missed, missed[:, ::-1])
        points = np.concatenate([points, missed[:: max(1, len(missed) // 2000)]])
    else:
        raise NumericalFailure(f"no cover found in {PLAN_ROUNDS} planning rounds at excess {excess}")
    used = {members[cell.member] for cell in cells}
    family = tuple(sorted(used | {m.mirror() for m in used}, key=lambda m: (m.a_sq, m.b_sq, m.c)))
    index = {m: i for i, m in enumerate(family)}
    cells = [Cell(c.a0, c.a1, c.b0, c.b1, index[members[c.member]]) for c in cells]
    return GramCover(sigma=sigma, excess=excess, members=family, cells=tuple(cells))


def check_tiling(cells: tuple[Cell, ...] | list[Cell]) -> None:
    """Raise NumericalFailure unless the cells tile [0, 4]^2 exactly: every cell non-empty inside the
    square, and over every slab between consecutive distinct A-edges the B-intervals of the cells
    spanning it partition [0, 4] (integer arithmetic on the edges times their common denominator)."""
    if not cells:
        raise NumericalFailure("no cells")
    scale = math.lcm(*(x.denominator for c in cells for x in (c.a0, c.a1, c.b0, c.b1)))
    rows = np.array([[int(x * scale) for x in (c.a0, c.a1, c.b0, c.b1)] for c in cells], dtype=object)
    a0, a1, b0, b1 = (rows[:, k] for k in range(4))
    top = 4 * scale
    if any(a0 >= a1) or any(b0 >= b1) or any(a0 < 0) or any(b0 < 0) or any(a1 > top) or any(b1 > top):
        raise NumericalFailure("a cell is empty or leaves [0, 4]^2")
    edges = sorted(set(a0) | set(a1))
    if edges[0] != 0 or edges[-1] != top:
        raise NumericalFailure("the cells do not span A in [0, 4]")
    for left, right in zip(edges, edges[1:]):
        spanning = sorted(zip(b0[(a0 <= left) & (a1 >= right)], b1[(a0 <= left) & (a1 >= right)]))
        reach = 0
        for low, high in spanning:
            if low != reach:
                raise NumericalFailure(f"over A in [{left / scale}, {right / scale}] the cells {'overlap' if low < reach else 'leave a gap'} at B = {Fraction(min(low, reach), scale)}")
            reach = high
        if reach != top:
            raise NumericalFailure(f"over A in [{left / scale}, {right / scale}] the cells stop at B = {Fraction(reach, scale)}")


def check_cover(cover: GramCover) -> None:
    """Raise NumericalFailure unless the cover is valid: the family is closed under the mirror, every
    member is a Gram matrix (C*² <= A*B* when C* < 0, exact), the cells tile [0, 4]^2, and every
    cell satisfies (*) for its member (recomputed with :func:`cell_floor`)."""
    members = cover.members
    if set(members) != {m.mirror() for m in members}:
        raise NumericalFailure("the family is not closed under the mirror (A, B, C) -> (B, A, C)")
    for m in members:
        if not (0 <= m.a_sq <= 4 and 0 <= m.b_sq <= 4) or (m.c < 0 and Fraction(m.c) ** 2 > Fraction(m.a_sq) * Fraction(m.b_sq)):
            raise NumericalFailure(f"member {m} is not a Gram matrix with A, B in [0, 4]")
    check_tiling(cover.cells)
    edges = np.array([[float(c.a0), float(c.a1), float(c.b0), float(c.b1)] for c in cover.cells])
    if any(Fraction(float(x)) != x for c in cover.cells for x in (c.a0, c.a1, c.b0, c.b1)):
        raise NumericalFailure("a cell edge is not an exact float")
    star = np.array([[members[c.member].a_sq, members[c.member].b_sq, members[c.member].c] for c in cover.cells])
    fits = (edges[:, 1] <= star[:, 0]) & (edges[:, 3] <= star[:, 1])
    floor = cell_floor(edges[:, 0], edges[:, 1], edges[:, 2], edges[:, 3], star[:, 0], star[:, 1])
    bad = np.flatnonzero(~(fits & (floor >= star[:, 2])))  # a NaN floor fails
    if bad.size:
        cell = cover.cells[int(bad[0])]
        raise NumericalFailure(f"cell [{cell.a0}, {cell.a1}] x [{cell.b0}, {cell.b1}] is not covered by member {members[cell.member]}")
