"""Histogram laws on orbits: the coordinates of a histogram split into groups whose symbols are
exchangeable, each group's sub-histogram kept sorted (non-increasing), so one state stands for its
whole orbit under the permutations inside every group (proofs/shuffle_blanket.py, step 5).

If both laws of a pair (P, Q) on histograms are invariant under a group of permutations of the
coordinates, the orbit is a sufficient statistic for the pair (the likelihood ratio is constant on an
orbit), so the hockey-stick divergence and the Neyman–Pearson power of the orbit masses equal those of
the histograms. A report law that puts the same mass on every symbol of a group is such a Markov
kernel on orbits: from any histogram of an orbit, the mass sent into another orbit is the same, so
the orbit masses are updated from one representative each. From the sorted representative, a report
on the group's symbols holding the value v lands in one orbit (adding 1 to the first of them keeps the
group sorted) with multiplicity the number of them, :func:`OrbitLayers.moves`.

States are stored as one list per number t of reports (t = 0..n), sorted by their mixed-radix key,
with, for each t < n and each coordinate slot j, the states of list t where slot j is the first of its
value in its group, the index in list t + 1 of the state plus one report there, and that multiplicity.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import numpy.typing as npt

from verifier._budget import available_memory_bytes
from verifier.errors import NumericalFailure

__all__ = ["CACHE_STATES", "OrbitLayers", "orbit_layers", "orbit_cells", "sorted_iid"]

Move = tuple[npt.NDArray[np.int32], npt.NDArray[np.int32], npt.NDArray[np.int8], npt.NDArray[np.int8]]


def orbit_cells(sizes: tuple[int, ...], users: int) -> int:
    """States of all lists t = 0..n: the coefficients up to z^n of the product over the groups of
    ∏_{i <= g} 1/(1 − z^i) (partitions into at most g parts, g the group's size)."""
    poly = [1] + [0] * users
    for g in sizes:
        for i in range(1, g + 1):
            for t in range(i, users + 1):
                poly[t] += poly[t - i]
    return sum(poly)


def _parts(g: int, users: int) -> npt.NDArray[np.int64]:
    """Every non-increasing tuple of g counts summing to at most n, one row each."""
    rows = [combo for t in range(users + 1) for combo in _partitions(t, g, t)]
    return np.array(rows, dtype=np.int64).reshape(len(rows), g)


def _partitions(total: int, parts: int, largest: int) -> list[tuple[int, ...]]:
    """Non-increasing tuples of ``parts`` counts <= ``largest`` summing to ``total``."""
    if parts == 0:
        return [()] if total == 0 else []
    return [(first, *tail) for first in range(min(total, largest), -1, -1) for tail in _partitions(total - first, parts - 1, first)]


class OrbitLayers:
    """The sorted states of t = 0..n reports on groups of the given sizes (module docstring)."""

    def __init__(self, sizes: tuple[int, ...], users: int) -> None:
        self.sizes, self.users = sizes, users
        self.slots = sum(sizes)
        self.powers = (users + 1) ** np.arange(self.slots, dtype=np.int64)
        rows, totals = np.zeros((1, 0), dtype=np.int64), np.zeros(1, dtype=np.int64)
        for g in sizes:  # every state with total <= n, group by group (rows kept by increasing total)
            parts = _parts(g, users)
            sums = parts.sum(axis=1)
            fit = np.searchsorted(totals, users - sums, side="right")
            pick = np.concatenate([np.arange(f) for f in fit])
            rows = np.hstack([rows[pick], np.repeat(parts, fit, axis=0)])
            totals = totals[pick] + np.repeat(sums, fit)
            order = np.argsort(totals, kind="stable")
            rows, totals = rows[order], totals[order]
        keys = rows @ self.powers
        self.keys: list[npt.NDArray[np.int64]] = [np.sort(keys[totals == t]) for t in range(users + 1)]
        starts = np.cumsum((0,) + sizes[:-1])
        self.group_of = [(int(s), int(s) + g) for s, g in zip(starts, sizes) for _ in range(g)]
        self.moves: list[Move] = [self._moves(t) for t in range(users)]

    @property
    def cells(self) -> int:
        """States of all lists t = 0..n."""
        return sum(len(k) for k in self.keys)

    def states(self, t: int) -> npt.NDArray[np.int64]:
        """The states of list t, one row each (slots in order)."""
        return (self.keys[t][:, None] // self.powers[None, :]) % (self.users + 1)

    def _moves(self, t: int) -> Move:
        """The moves of list t, slot by slot: (source states, destinations in list t + 1, slots, multiplicities)."""
        now, parts = self.states(t), []
        for j, (start, stop) in enumerate(self.group_of):
            first = np.ones(len(now), dtype=bool) if j == start else now[:, j - 1] > now[:, j]
            src = np.flatnonzero(first)
            mult = (now[src, start:stop] == now[src, j : j + 1]).sum(axis=1, dtype=np.int8)
            dst = np.searchsorted(self.keys[t + 1], self.keys[t][src] + self.powers[j])
            parts.append((src.astype(np.int32), dst.astype(np.int32), np.full(len(src), j, dtype=np.int8), mult))
        src, dst, slot, mult = (np.ascontiguousarray(np.concatenate(column)) for column in zip(*parts))
        return src, dst, slot, mult

    def index(self, t: int, states: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """Positions in list t of the given sorted states (rows)."""
        keys = states @ self.powers
        at = np.searchsorted(self.keys[t], keys)
        if not np.array_equal(self.keys[t][np.minimum(at, len(self.keys[t]) - 1)], keys):
            raise ValueError("a state outside its list (not sorted within a group, or a wrong total)")
        return at

    def step(self, values: npt.NDArray[np.float64], t: int, masses: list[float]) -> npt.NDArray[np.float64]:
        """The orbit masses of list t + 1 after one more report with ``masses[j]`` on each symbol of slot
        j's group (equal inside a group): at most ``slots`` products of (multiplicity·mass)·value summed
        into each state (one source per slot), so 3 + slots roundings on top of the inputs' (the mass
        included). The compiled kernel :func:`verifier._fast.orbit_step.orbit_step` (slow twin
        :func:`verifier.reference.orbits.orbit_step`, the same doubles)."""
        from verifier._fast.orbit_step import orbit_step

        if len(masses) != self.slots or len(values) != len(self.keys[t]):
            raise ValueError(f"orbit step: {len(masses)} masses for {self.slots} slots, {len(values)} values for {len(self.keys[t])} states")
        out = np.zeros(len(self.keys[t + 1]))
        code = orbit_step(np.ascontiguousarray(values, dtype=np.float64), *self.moves[t], np.asarray(masses, dtype=np.float64), out)
        if code:
            raise NumericalFailure(f"orbit step kernel: return code {code} (inconsistent moves)")
        return out


_CACHE: dict[tuple[tuple[int, ...], int], OrbitLayers] = {}
#: The most states the cached layers hold together (about LAYER_BYTES each): 3·10⁷, which keeps the
#: largest layouts of k = 10, n = 20 (up to 1.07·10⁷ states each) between the search's nodes (with
#: 8·10⁶ they were rebuilt for every leaf, half the CPU of ε0 = 0.15 there), less where
#: :data:`CACHE_MEMORY_SHARE` of the memory available would not hold them.
CACHE_STATES = 30_000_000
CACHE_MEMORY_SHARE, LAYER_BYTES = 0.25, 100.0


def orbit_layers(sizes: tuple[int, ...], users: int) -> OrbitLayers:
    """:class:`OrbitLayers`, cached up to :data:`CACHE_STATES` states, least recently used dropped first
    (a search asks for the same few layouts many times)."""
    key = (sizes, users)
    layers = _CACHE.pop(key, None) or OrbitLayers(sizes, users)
    _CACHE[key] = layers
    held = sum(c.cells for c in _CACHE.values())
    limit = min(CACHE_STATES, CACHE_MEMORY_SHARE * (available_memory_bytes() / LAYER_BYTES + held))  # its own share counted back
    while held > limit and len(_CACHE) > 1:
        held -= _CACHE.pop(next(iter(_CACHE))).cells
    return layers


def sorted_iid(pmf: list[float], g: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """The law of g independent draws from ``pmf`` (on 0..len − 1) as sorted (non-increasing) tuples:
    each multiset's mass is g!/∏ m_v! ∏ pmf(v)^{m_v} (m_v draws equal to v), an exact integer times
    g products, so g + 1 roundings."""
    rows, masses = [], []
    for combo in itertools.combinations_with_replacement(range(len(pmf) - 1, -1, -1), g):
        count = math.factorial(g)
        for v in set(combo):
            count //= math.factorial(combo.count(v))
        mass = float(count)
        for v in combo:
            mass *= pmf[v]
        rows.append(combo)
        masses.append(mass)
    return np.array(rows, dtype=np.int64).reshape(len(rows), g), np.array(masses)
