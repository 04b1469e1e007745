"""Shuffled k-ary randomized response, exactly, for small n: the worst case over every pair of
neighbouring datasets through the histogram of reports, the shuffle's sufficient statistic.

Setting: n users, each reporting its input symbol with probability e^ε0/Z and every other symbol
with probability 1/Z (Z = e^ε0 + k − 1), the reports shuffled, so the release is their histogram;
replace-one neighbours change the victim's input. By symmetry the victim's two inputs are the
symbols 0 and 1, and the other users enter through their input counts (c_0, c_1, c_2, …, c_{k−1})
with c_2 >= … >= c_{k−1} (exchangeable symbols); relabelling 0 ↔ 1 maps the counts (c_0, c_1, …) to
(c_1, c_0, …) and exchanges the two orders, so c_0 >= c_1 with both orders covers every ordered pair.

Lumping: the symbols outside {0, 1} that no user holds are reported only uniformly at random among
themselves (with probability 1/Z each, under both datasets), so given their total count the split is
the same multinomial under both laws: the histogram with those symbols merged into one coordinate
is sufficient, and the hockey-stick divergence and the Neyman–Pearson power are unchanged.

Evaluation (float64 with a proven relative error, as :mod:`verifier.shuffle.binary`): the law of the
lumped histogram is built one user at a time on a dense array (the last coordinate implied by the
total); every entry of a step is a sum of at most d products of nonnegative numbers (d coordinates),
so each step adds at most 2d + 2 roundings to every entry's relative error, and the report masses
e^ε0/Z, 1/Z (rounded from arb) one more; no value falls below (1/Z)^n, which the method keeps in the
normal range (n·ln Z < 600). The worst case over the candidates is then
:class:`verifier.shuffle.worst.WorstCase`. Exact where it runs (checked against an mpmath enumeration
of every dataset in tests/shuffle); its cost grows like n^(d+1) per background, so it declines
(NotApplicable) past :data:`WORK_LIMIT` multiply-adds or :data:`CELL_LIMIT` cells: k = 3 runs to
n = 75, k = 4 to n = 26, k = 10 to n = 7 (about 3 s of CPU at each end).
"""

from __future__ import annotations

import functools
import math
from typing import Iterator

import numpy as np
import numpy.typing as npt
from flint import arb

from verifier._directed import with_precision
from verifier._validation import check_integer, check_positive
from verifier.errors import NotApplicable
from verifier.shuffle.worst import UNIT_ROUNDOFF, Candidate, WorstCase

__all__ = [
    "HISTOGRAM_CITATION",
    "WORK_LIMIT",
    "CELL_LIMIT",
    "THREE_SYMBOL_LIMIT",
    "KaryShuffle",
    "ThreeSymbolBackgrounds",
    "kary_shuffle",
    "three_symbol_backgrounds",
    "histogram_work",
    "three_symbol_work",
    "float_masses",
]

HISTOGRAM_CITATION = (
    "shuffled k-ary randomized response: the exact worst case over every background (the other users' input counts) "
    "and both orders, through the histogram of reports (symbols no one holds merged), float64 with proven error bounds: EXACT"
)

#: The most multiply-adds the enumeration may take (about 5 s of CPU).
WORK_LIMIT = 2e9
#: The largest dense array of one background's law (cells; 8 bytes each).
CELL_LIMIT = 2e7
#: The most multiply-adds of :class:`ThreeSymbolBackgrounds` (about 1 s of CPU: n <= 27).
THREE_SYMBOL_LIMIT = 5e8


def _backgrounds(k: int, others: int) -> Iterator[tuple[int, ...]]:
    """Input counts (c_0, c_1, c_2 >= … >= c_{k−1}) of the other users with c_0 >= c_1."""
    for c0 in range(others + 1):
        for c1 in ([others - c0] if k == 2 and others - c0 <= c0 else [] if k == 2 else range(min(c0, others - c0) + 1)):
            rest = others - c0 - c1
            for split in _partitions(rest, k - 2, rest):
                yield (c0, c1, *split)


def _partitions(total: int, parts: int, largest: int) -> Iterator[tuple[int, ...]]:
    """Non-increasing tuples of ``parts`` nonnegative integers <= ``largest`` summing to ``total``."""
    if parts == 0:
        if total == 0:
            yield ()
        return
    for first in range(min(total, largest), -1, -1):
        for tail in _partitions(total - first, parts - 1, first):
            yield (first, *tail)


def _coordinates(counts: tuple[int, ...]) -> tuple[list[int], int]:
    """(symbols kept as their own coordinate: 0, 1 and every held symbol, number of merged symbols)."""
    kept = [0, 1] + [s for s in range(2, len(counts)) if counts[s] > 0]
    return kept, len(counts) - len(kept)


def histogram_work(k: int, users: int) -> tuple[float, float]:
    """(multiply-adds the enumeration takes, cells of its largest array): estimates from the array
    sizes, for the limits; (+∞, +∞) as soon as either limit is passed (without enumerating further:
    the largest array alone, (n + 1)^(d − 1) cells with d = 2 + min(k − 2, n − 1) coordinates plus a
    merged one, rules out most (k, n) at once)."""
    held = min(k - 2, users - 1)
    if (1 + held + (1 if k - 2 > held else 0)) * math.log(users + 1) > math.log(CELL_LIMIT):  # in logs: k = 1000 overflows
        return math.inf, math.inf
    total, largest = 0.0, 0.0
    for counts in _backgrounds(k, users - 1):
        kept, merged = _coordinates(counts)
        d = len(kept) + (1 if merged else 0)
        cells = float(users + 1) ** (d - 1)
        total += users * d * cells
        largest = max(largest, cells)
        if total > WORK_LIMIT or largest > CELL_LIMIT:
            return math.inf, math.inf
    return total, largest


def _step(law: npt.NDArray[np.float64], masses: list[float]) -> npt.NDArray[np.float64]:
    """The law after one more report with the given masses on the d coordinates (the last implied)."""
    out = masses[-1] * law
    for axis, mass in enumerate(masses[:-1]):
        src = [slice(None)] * law.ndim
        dst = [slice(None)] * law.ndim
        src[axis], dst[axis] = slice(0, -1), slice(1, None)
        out[tuple(dst)] += mass * law[tuple(src)]
    return out


def float_masses(epsilon0: float, k: int, users: int) -> tuple[float, float]:
    """(e^ε0/Z, 1/Z) rounded to nearest, or NotApplicable when (1/Z)^n leaves the normal float range."""
    with with_precision(128):
        big = arb(epsilon0).exp()
        z = big + (k - 1)
        hit, miss = float((big / z).mid()), float((1 / z).mid())
        log_floor = float((users * z.log()).mid())
    if log_floor > 600:
        raise NotApplicable(f"k-ary histogram: (1/Z)^n = e^-{log_floor:.0f} leaves the float range (n = {users}, eps0 = {epsilon0:g})")
    return hit, miss


def _candidates(users: int, hit: float, miss: float, backgrounds: Iterator[tuple[int, ...]]) -> list[Candidate]:
    """Both orders of the victim's inputs 0 and 1 over each background, on the lumped histogram."""
    candidates = []
    for counts in backgrounds:
        kept, merged = _coordinates(counts)
        d = len(kept) + (1 if merged else 0)

        def masses(symbol: int) -> list[float]:
            row = [hit if s == symbol else miss for s in kept]
            return row + [merged * miss] if merged else row

        law = np.zeros((users + 1,) * (d - 1))
        law[(0,) * (d - 1)] = 1.0
        for symbol in kept:
            for _ in range(counts[symbol]):
                law = _step(law, masses(symbol))
        first, second = _step(law, masses(0)).ravel(), _step(law, masses(1)).ravel()
        keep = (first > 0) | (second > 0)
        widen = math.expm1(((2 * d + 2) * users + 4) * math.log1p(UNIT_ROUNDOFF)) * (1 + 1e-6)
        name = f"others' inputs {counts}"
        candidates.append(Candidate.sorted(first[keep], second[keep], widen, 0.0, f"{name}, 0->1"))
        candidates.append(Candidate.sorted(second[keep], first[keep], widen, 0.0, f"{name}, 1->0"))
    return candidates


class KaryShuffle(WorstCase):
    """The exact worst case of n shuffled k-ary ε0-randomized-response reports (module docstring)."""

    def __init__(self, epsilon0: float, k: int, users: int) -> None:
        self.epsilon0 = check_positive("epsilon0", epsilon0)
        self.k = check_integer("k", k, minimum=2)
        self.users = check_integer("users", users, minimum=2)
        work, cells = histogram_work(self.k, self.users)
        if work > WORK_LIMIT or cells > CELL_LIMIT:
            raise NotApplicable(f"the exact histogram enumeration of k = {self.k} randomized response at n = {self.users} "
                                f"needs more than {WORK_LIMIT:.0e} multiply-adds or arrays of more than {CELL_LIMIT:.0e} cells")
        hit, miss = float_masses(self.epsilon0, self.k, self.users)
        candidates = _candidates(self.users, hit, miss, _backgrounds(self.k, self.users - 1))
        super().__init__(candidates, f"shuffled {self.k}-ary randomized response", self.epsilon0)


def three_symbol_work(users: int) -> float:
    """Multiply-adds of :class:`ThreeSymbolBackgrounds`: about n²/4 backgrounds, n steps on (n + 1)³ cells each."""
    return (users * users / 4 + users) * users * 4 * float(users + 1) ** 3


class ThreeSymbolBackgrounds(WorstCase):
    """The backgrounds whose other users hold at most one symbol besides the victim's two (c_0 >= c_1 on
    them, the rest on one third symbol z), both orders, through the lumped histogram (0, 1, z, the
    rest): each is a pair of neighbouring datasets, so the largest LOWER end over them is a LOWER
    bound on the shuffle model's δ(ε) and ε(δ) (its upper end bounds only these backgrounds). It
    contains every other user on one symbol, and mixed backgrounds such as fourteen users on x and one
    on z at k = 10, n = 16, ε0 = 2 (ε(10⁻⁶) >= 1.7187 against 1.6684 for one symbol)."""

    def __init__(self, epsilon0: float, k: int, users: int) -> None:
        self.epsilon0 = check_positive("epsilon0", epsilon0)
        self.k = check_integer("k", k, minimum=3)
        self.users = check_integer("users", users, minimum=2)
        if three_symbol_work(self.users) > THREE_SYMBOL_LIMIT:
            raise NotApplicable(f"the three-symbol backgrounds at n = {self.users} need more than {THREE_SYMBOL_LIMIT:.0e} multiply-adds")
        hit, miss = float_masses(self.epsilon0, self.k, self.users)
        others = self.users - 1
        backgrounds = ((c0, c1, others - c0 - c1, *([0] * (self.k - 3))) for c0 in range(others + 1) for c1 in range(min(c0, others - c0) + 1))
        super().__init__(_candidates(self.users, hit, miss, backgrounds), f"shuffled {self.k}-ary randomized response, three-symbol backgrounds", self.epsilon0)


@functools.lru_cache(maxsize=4)
def three_symbol_backgrounds(epsilon0: float, k: int, users: int) -> ThreeSymbolBackgrounds:
    """The three-symbol backgrounds for (ε0, k, n), cached like :func:`kary_shuffle`."""
    return ThreeSymbolBackgrounds(epsilon0, k, users)


@functools.lru_cache(maxsize=4)
def kary_shuffle(epsilon0: float, k: int, users: int) -> KaryShuffle:
    """The enumeration for (ε0, k, n), cached: certify asks both directions and quantities of one scheme."""
    return KaryShuffle(epsilon0, k, users)
