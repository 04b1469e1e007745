"""The k-ary background search (verifier.shuffle.kary_search) against a brute force that shares nothing with
it: the full histogram of the n reports over all k symbols (no lumped symbols, no orbits), built user by
user in float64, for every background up to relabelling the k − 2 symbols that are neither x nor x′,
both orders of the victim's pair. Small ε0 (0.05, 0.1), where the partial blanket prunes little and
the backgrounds' δ agree to 1e-14 relative, and k = 10."""

from __future__ import annotations

import math

import numpy as np
import pytest

from verifier.shuffle.kary_search import KarySearch


def _partitions(total: int, parts: int, largest: int) -> list[tuple[int, ...]]:
    if total == 0:
        return [()]
    if parts == 0:
        return []
    return [(v, *rest) for v in range(min(total, largest), 0, -1) for rest in _partitions(total - v, parts - 1, v)]


def full_histogram_laws(eps0: float, k: int, n: int) -> list[tuple[tuple[int, ...], np.ndarray, np.ndarray]]:
    """[(the others' counts on x, x′ and the third symbols, P, Q)]: the laws of the histogram of n reports,
    victim on x (P) or on x′ (Q), every background (third-symbol counts non-increasing)."""
    hit = math.exp(eps0) / (math.exp(eps0) + k - 1)
    miss = 1 / (math.exp(eps0) + k - 1)
    levels = [[(0,) * k]]
    for _ in range(n):
        levels.append(sorted({h[:s] + (h[s] + 1,) + h[s + 1:] for h in levels[-1] for s in range(k)}))
    index = [{h: i for i, h in enumerate(level)} for level in levels]
    moves = [[np.array([index[t + 1][h[:s] + (h[s] + 1,) + h[s + 1:]] for h in levels[t]]) for s in range(k)] for t in range(n)]

    def report(law: np.ndarray, t: int, symbol: int) -> np.ndarray:
        out = np.zeros(len(levels[t + 1]))
        for s in range(k):
            np.add.at(out, moves[t][s], law * (hit if s == symbol else miss))
        return out

    laws = []
    for c0 in range(n):
        for c1 in range(n - c0):
            for third in _partitions(n - 1 - c0 - c1, k - 2, n):
                counts = (c0, c1, *third)
                law, t = np.ones(1), 0
                for symbol, count in enumerate(counts):
                    for _ in range(count):
                        law, t = report(law, t, symbol), t + 1
                laws.append((counts, report(law, t, 0), report(law, t, 1)))
    return laws


def worst_delta(laws, eps: float) -> float:
    big = math.exp(eps)
    return max(float(np.maximum(a - big * b, 0.0).sum()) for _, p, q in laws for a, b in ((p, q), (q, p)))


def worst_epsilon(laws, delta: float) -> float:
    if worst_delta(laws, 0.0) <= delta:
        return 0.0
    lo, hi = 0.0, 20.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if worst_delta(laws, mid) > delta else (lo, mid)
    return hi


@pytest.mark.parametrize(("eps0", "k", "n"), [(0.05, 10, 7), (0.1, 5, 10), (1.0, 3, 12)])
def test_search_brackets_the_full_histogram_brute_force(eps0, k, n):
    laws = full_histogram_laws(eps0, k, n)
    search = KarySearch(eps0, k, n)
    for eps in (0.05 * eps0, 0.3 * eps0, 0.7 * eps0):
        truth = worst_delta(laws, eps)
        bracket = search.delta(eps)
        assert bracket.lower <= truth * (1 + 1e-12) and truth <= bracket.upper * (1 + 1e-12)
        assert bracket.upper - bracket.lower <= 1e-8 * truth  # the ends meet
    for delta in (1e-4, 1e-6):
        truth = worst_epsilon(laws, delta)
        bracket = search.epsilon(delta)
        assert bracket.lower - 1e-12 <= truth <= bracket.upper + 1e-12
        assert bracket.upper - bracket.lower <= 1e-8 * max(truth, 1.0)


def test_mutant_lumped_symbols_with_one_symbol_mass_misses_at_a_small_eps0(monkeypatch):
    """Mutant: the lumped third symbols weighted as one symbol (as in test_kary_search.py, there at ε0 = 2):
    at ε0 = 0.05, k = 10, n = 7, where the backgrounds' δ agree to 1e-14 relative, the bracket still
    misses the brute force at every ε checked."""
    laws = full_histogram_laws(0.05, 10, 7)
    honest = KarySearch._layout

    def one_mass(self, node):
        sizes, counts, symbols, slots = honest(self, node)
        return sizes, counts, [min(s, 1) for s in symbols], slots

    monkeypatch.setattr(KarySearch, "_layout", one_mass)
    search = KarySearch(0.05, 10, 7)
    for eps in (0.0025, 0.015, 0.035):
        truth, bracket = worst_delta(laws, eps), search.delta(eps)
        assert not bracket.lower <= truth <= bracket.upper
