"""The finite Gram cover of fixed-batch steps (verifier.pld.gram_cover): realisable configurations
built from vectors (an independent reference for the Gram set) are dominated by its members, and
the checker rejects a family missing a member and a tiling with a gap or an overlap."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from verifier.errors import NumericalFailure
from verifier.pld.gram_cover import GramCover, Member, check_cover, check_tiling, cmin_lower, dominates, gram_cover


@pytest.fixture(scope="module")
def cover() -> GramCover:
    return gram_cover(1.1, excess=0.03)


def _configurations(rng: np.random.Generator, count: int) -> np.ndarray:
    """(A, B, C) of x, x', z in the unit ball of R^3 (uniform, some on the sphere), plus the extremal
    great-circle configurations (x, x', z on one unit circle) and the remove/add/antipodal ones."""
    points = rng.normal(size=(count, 3, 3))
    points /= np.linalg.norm(points, axis=2, keepdims=True)
    radii = rng.uniform(0, 1, size=(count, 3, 1)) ** (1 / 3)
    radii[rng.uniform(size=(count, 3, 1)) < 0.4] = 1.0
    points *= radii
    angles = rng.uniform(0, 2 * math.pi, size=(count, 3))
    circle = np.stack([np.cos(angles), np.sin(angles), np.zeros_like(angles)], axis=2)
    special = np.array([[[1, 0, 0], [-1, 0, 0], [-1, 0, 0]], [[-1, 0, 0], [1, 0, 0], [-1, 0, 0]], [[1, 0, 0], [-1, 0, 0], [0, 0, 0]]], dtype=float)
    points = np.concatenate([points, circle, special])
    a, b = points[:, 0] - points[:, 2], points[:, 1] - points[:, 2]
    return np.stack([np.sum(a * a, 1), np.sum(b * b, 1), np.sum(a * b, 1)], axis=1)


def test_cover_checks_and_is_mirror_closed(cover: GramCover) -> None:
    check_cover(cover)
    assert set(cover.members) == {m.mirror() for m in cover.members}
    assert Member(4.0, 0.0, 0.0) not in cover.members  # remove needs no member of its own: a cell covers it


def test_random_configurations_are_dominated_by_their_cells_member(cover: GramCover) -> None:
    grams = _configurations(np.random.default_rng(7), 4000)
    grams[:, :2] = np.minimum(grams[:, :2], 4.0)  # float noise of |x - z|^2 on the sphere
    edges = np.array([[float(c.a0), float(c.a1), float(c.b0), float(c.b1)] for c in cover.cells])
    for a_sq, b_sq, c in grams:
        inside = (edges[:, 0] <= a_sq) & (a_sq <= edges[:, 1]) & (edges[:, 2] <= b_sq) & (b_sq <= edges[:, 3])
        owners = [cover.cells[i].member for i in np.flatnonzero(inside)]
        assert owners, (a_sq, b_sq)
        assert any(dominates(cover.members[i], (a_sq, b_sq, c), atol=1e-12) for i in owners), (a_sq, b_sq, c)


def test_a_family_missing_the_corner_member_fails(cover: GramCover) -> None:
    corner = min((m for m in cover.members if m.a_sq == 4.0), key=lambda m: m.b_sq)
    rest = [m for m in cover.members if m not in (corner, corner.mirror())]
    # the remove configuration x = e, z = x' = -e: (A, B, C) = (4, 0, 0)
    assert not any(dominates(m, (4.0, 0.0, 0.0), atol=1e-12) for m in rest)
    for dropped in (corner, cover.members[len(cover.members) // 2]):
        family = tuple(m for m in cover.members if m not in (dropped, dropped.mirror()))

        def owner(cell) -> int:
            """The cell's member if kept, else the kept member with room and the lowest C*."""
            old = cover.members[cell.member]
            if old in family:
                return family.index(old)
            fits = [i for i, m in enumerate(family) if m.a_sq >= cell.a1 and m.b_sq >= cell.b1]
            return min(fits, key=lambda i: family[i].c, default=0)

        mutant = GramCover(cover.sigma, cover.excess, family, tuple(replace(c, member=owner(c)) for c in cover.cells))
        with pytest.raises(NumericalFailure):
            check_cover(mutant)


def test_tiling_check_rejects_gaps_and_overlaps(cover: GramCover) -> None:
    cells = list(cover.cells)
    check_tiling(cells)
    with pytest.raises(NumericalFailure):
        check_tiling(cells[:-1])
    with pytest.raises(NumericalFailure):
        check_tiling(cells + [cells[0]])
    small = max(cells, key=lambda c: c.a1 - c.a0)
    with pytest.raises(NumericalFailure):
        check_tiling([c for c in cells if c is not small] + [replace(small, a1=small.a0 + (small.a1 - small.a0) / 2)])


def test_cmin_lower_is_below_realisable_c_in_random_boxes() -> None:
    rng = np.random.default_rng(11)
    grams = _configurations(rng, 20000)
    grams[:, :2] = np.minimum(grams[:, :2], 4.0)
    for _ in range(200):
        a0, b0 = (math.floor(x * 64) / 64 for x in rng.uniform(0, 3.9, size=2))
        a1, b1 = min(4.0, a0 + 2.0 ** -rng.integers(1, 6)), min(4.0, b0 + 2.0 ** -rng.integers(1, 6))
        inside = grams[(grams[:, 0] >= a0) & (grams[:, 0] <= a1) & (grams[:, 1] >= b0) & (grams[:, 1] <= b1)]
        if inside.size:
            assert float(cmin_lower(a0, a1, b0, b1)) <= inside[:, 2].min() + 1e-12
    # the wrong-way rule, Cmin at the box's upper corner (4, 1/2), is 1/2: realisable C go below it
    inside = grams[(grams[:, 0] >= 3.5) & (grams[:, 1] <= 0.5)]
    assert inside[:, 2].min() < 0.5 and float(cmin_lower(3.5, 4.0, 0.0, 0.5)) <= inside[:, 2].min()


def test_a_coarser_cell_than_the_quadtree_made_fails(cover: GramCover) -> None:
    """Merging four sibling cells into their parent (which the quadtree split because no member
    covered it) keeps the tiling exact but must fail the cover check, whichever member it gets."""
    cells = {(c.a0, c.b0, c.a1 - c.a0): c for c in cover.cells if c.a1 - c.a0 == c.b1 - c.b0 < 1}  # the quadtree starts at 1
    for (a0, b0, size), cell in cells.items():
        corner = (a0 // (2 * size) * 2 * size, b0 // (2 * size) * 2 * size)
        siblings = [cells.get((corner[0] + i * size, corner[1] + j * size, size)) for i in (0, 1) for j in (0, 1)]
        if all(siblings) and corner == (a0, b0):
            break
    else:
        pytest.fail("no four sibling cells")
    rest = [c for c in cover.cells if c not in siblings]
    check_tiling(rest + [replace(cell, a1=a0 + 2 * size, b1=b0 + 2 * size)])
    for index, member in enumerate(cover.members):
        if member.a_sq < a0 + 2 * size or member.b_sq < b0 + 2 * size:
            continue  # fails on the corner alone
        parent = replace(cell, a1=a0 + 2 * size, b1=b0 + 2 * size, member=index)
        with pytest.raises(NumericalFailure):
            check_cover(replace(cover, cells=tuple(rest + [parent])))
