"""Brute force for shuffled k-ary randomized response: the histogram law of every user's report by direct
convolution on the full histogram (no lumping, no blanket), and the worst δ(ε) over every dataset.
:func:`convolve` is the convolution for any report laws (the other shuffle brute forces use it too)."""

import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any


def report(x: int, e0: float, k: int) -> list[float]:
    """One user's report law: its input x with probability e^ε0/Z, every other symbol 1/Z."""
    z = math.exp(e0) + k - 1
    return [math.exp(e0) / z if y == x else 1 / z for y in range(k)]


def convolve(data: tuple[int, ...], law: Callable[[int], Sequence], size: int, one=1.0) -> dict[tuple[int, ...], Any]:
    """The histogram law of the users' reports over ``size`` outputs, by convolution: user i reports y
    with mass ``law(data[i])[y]`` (outputs of mass 0 add no histogram); ``one`` is the empty
    histogram's mass and sets the arithmetic (1.0: float64, mpmath.mpf(1): mpmath)."""
    out = {tuple([0] * size): one}
    for x in data:
        r, nxt = law(x), {}
        for h, m in out.items():
            for y in range(size):
                if not r[y]:
                    continue
                g = list(h)
                g[y] += 1
                nxt[tuple(g)] = nxt.get(tuple(g), 0) + m * r[y]
        out = nxt
    return out


def histogram_law(data: tuple[int, ...], e0: float, k: int) -> dict[tuple[int, ...], float]:
    """The histogram law of the users' reports, by convolution."""
    return convolve(data, lambda x: report(x, e0, k), k)


def hockey(p: dict, q: dict, eps: float) -> float:
    big = math.exp(eps)
    return sum(max(0.0, p[h] - big * q.get(h, 0.0)) for h in p)


def pair_delta(others: tuple[int, ...], e0: float, k: int, eps: float) -> float:
    """Both orders of the victim's inputs 0 and 1 over the background ``others``."""
    p, q = histogram_law((0, *others), e0, k), histogram_law((1, *others), e0, k)
    return max(hockey(p, q, eps), hockey(q, p, eps))


def worst(n: int, e0: float, k: int, eps: float) -> float:
    """The worst case over every multiset of the other n − 1 inputs (relabelling the symbols is a
    symmetry of k-ary randomized response, so the victim's inputs 0 and 1 lose nothing)."""
    return max(pair_delta(others, e0, k, eps) for others in itertools.combinations_with_replacement(range(k), n - 1))
