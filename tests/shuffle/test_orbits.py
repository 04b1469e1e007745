"""verifier.shuffle.orbits against brute force: the sorted states of every list are every histogram's
orbit (counted by enumeration, and by the generating function of orbit_cells), the law of sorted iid
draws is the enumeration of every ordered draw, and one orbit step is the full histogram's step lumped
to orbits. The multiplicity mutant is in test_kary_search.py."""

import itertools

import numpy as np
import pytest

from verifier.shuffle.orbits import OrbitLayers, orbit_cells, sorted_iid


def _canonical(h: tuple[int, ...], sizes: tuple[int, ...]) -> tuple[int, ...]:
    out, at = [], 0
    for g in sizes:
        out += sorted(h[at:at + g], reverse=True)
        at += g
    return tuple(out)


@pytest.mark.parametrize("sizes,users", [((1, 1, 3, 1), 6), ((1, 1, 2, 2), 5), ((1, 4), 7)])
def test_lists_hold_every_orbit_once(sizes, users):
    layers = OrbitLayers(sizes, users)
    slots = sum(sizes)
    total = 0
    for t in range(users + 1):
        orbits = {_canonical(h, sizes) for h in itertools.product(range(t + 1), repeat=slots) if sum(h) == t}
        assert {tuple(int(v) for v in row) for row in layers.states(t)} == orbits
        total += len(orbits)
    assert orbit_cells(sizes, users) == total


def test_sorted_iid_is_the_enumeration_of_ordered_draws():
    pmf = [0.5, 0.3, 0.2]
    rows, masses = sorted_iid(pmf, 3)
    truth: dict[tuple[int, ...], float] = {}
    for draw in itertools.product(range(3), repeat=3):
        key = tuple(sorted(draw, reverse=True))
        truth[key] = truth.get(key, 0.0) + float(np.prod([pmf[v] for v in draw]))
    assert {tuple(int(v) for v in r): m for r, m in zip(rows, masses)} == pytest.approx(truth, rel=1e-15)


def test_step_is_the_histogram_step_lumped_to_orbits():
    """A symmetric law on (1, 1, 3) slots (mass on every histogram of 3 reports), one report with masses
    (0.5, 0.2, 0.1 on each of the three symbols): the orbit masses after the step equal the full step's,
    summed over orbits. Catches a wrong multiplicity (a report on two symbols holding the same count)."""
    sizes, masses = (1, 1, 3), [0.5, 0.2, 0.1, 0.1, 0.1]
    layers = OrbitLayers(sizes, 4)
    full = {h: 1.0 + h[0] + 2 * h[1] + sum(v * v for v in h[2:]) for h in itertools.product(range(4), repeat=5) if sum(h) == 3}
    after: dict[tuple[int, ...], float] = {}
    for h, m in full.items():
        for j in range(5):
            g = list(h)
            g[j] += 1
            key = _canonical(tuple(g), sizes)
            after[key] = after.get(key, 0.0) + m * masses[j]
    start = np.zeros(len(layers.keys[3]))
    for h, m in full.items():
        start[layers.index(3, np.array([_canonical(h, sizes)]))] += m
    out = layers.step(start, 3, [masses[0], masses[1], 0.1, 0.1, 0.1])
    assert {tuple(int(v) for v in r): x for r, x in zip(layers.states(4), out)} == pytest.approx(after, rel=1e-14)


@pytest.mark.parametrize("sizes,users", [((1, 1, 3, 1), 6), ((2, 1, 1, 4), 9)])
def test_compiled_step_gives_the_twins_doubles(sizes, users):
    """The kernel against its NumPy twin, bit for bit (same products, same order per state); a kernel
    that dropped the multiplicity or summed a slot's moves twice would differ."""
    from verifier.reference.orbits import orbit_step as twin

    layers = OrbitLayers(sizes, users)
    rng = np.random.default_rng(7)
    masses = list(rng.uniform(0.01, 0.2, layers.slots))
    for t in range(users):
        values = rng.uniform(0.0, 1.0, len(layers.keys[t]))
        assert np.array_equal(layers.step(values, t, masses), twin(values, *layers.moves[t], np.array(masses), len(layers.keys[t + 1])))


def test_compiled_step_refuses_a_wrong_number_of_masses():
    layers = OrbitLayers((1, 2), 4)
    with pytest.raises(ValueError, match="masses for 3 slots"):
        layers.step(np.ones(1), 0, [0.1, 0.2])
