"""Brute force for shuffled batches on tiny datasets: the exact output density of one epoch (every
labelled partition of the records, one-dimensional gradients, adaptive gradient maps) on a grid
over R^t, and the same for the reduced mechanism of proofs/shuffled_reduction.py (F and the
placement of the other records revealed), so that hockey-stick divergences of both come from the
same numerical quadrature (a Riemann sum on the grid; the densities are smooth for Gaussian noise).

A gradient map is ``g(j, history, x)``: the (clipped, |g| <= 1) gradient of a record of value x at
step j given the earlier outputs ``history`` (arrays broadcast over the grid)."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from typing import Callable, Sequence

import numpy as np

GradientMap = Callable[[int, list[np.ndarray], float], np.ndarray | float]


def axes(t: int, span: float, step: float) -> list[np.ndarray]:
    """t grid axes over [-span, span], each shaped to broadcast along its own dimension."""
    line = np.arange(-span, span + step / 2, step)
    return [line.reshape([-1 if d == j else 1 for d in range(t)]) for j in range(t)]


def _noise_pdf(kind: str, scale: float) -> Callable[[np.ndarray], np.ndarray]:
    if kind == "gaussian":
        return lambda z: np.exp(-0.5 * (z / scale) ** 2) / (scale * math.sqrt(2 * math.pi))
    return lambda z: np.exp(-np.abs(z) / scale) / (2 * scale)


def _layouts(values: Sequence[float], batch: int, drop_last: bool = False) -> Counter[tuple[tuple[float, ...], ...]]:
    """Labelled partitions of the records into ⌊n/B⌋ batches of B and the n mod B left over (a last,
    smaller batch, or nothing with ``drop_last``), as the sorted values of each released batch (the
    density depends on nothing else), with their multiplicities."""
    n = len(values)
    out: Counter[tuple[tuple[float, ...], ...]] = Counter()

    def rec(left: tuple[int, ...], acc: tuple[tuple[float, ...], ...]) -> None:
        if len(left) < batch:
            out[acc if drop_last or not left else acc + (tuple(sorted(values[i] for i in left)),)] += 1
            return
        for chosen in itertools.combinations(left, batch):
            rest = tuple(i for i in left if i not in chosen)
            rec(rest, acc + (tuple(sorted(values[i] for i in chosen)),))

    rec(tuple(range(n)), ())
    return out


def _step_density(grid: list[np.ndarray], means: list[Callable[[list[np.ndarray]], np.ndarray]], pdf) -> np.ndarray:
    """Π_j pdf(y_j - mean_j(y_<j)) on the grid."""
    dens = np.ones(1)
    for j, mean in enumerate(means):
        dens = dens * pdf(grid[j] - mean(grid[:j]))
    return dens


def _sum_of(g: GradientMap, j: int, members: Sequence[float]) -> Callable[[list[np.ndarray]], np.ndarray]:
    return lambda hist: sum((np.asarray(g(j, hist, x), dtype=float) for x in members), np.zeros(1))


def batch_density(
    values: Sequence[float], batch: int, g: GradientMap, noise: str, scale: float, grid: list[np.ndarray], drop_last: bool = False
) -> np.ndarray:
    """Density of one epoch's outputs (y_1 … y_steps), the layout uniform over labelled partitions."""
    pdf = _noise_pdf(noise, scale)
    layouts = _layouts(values, batch, drop_last)
    total = sum(layouts.values())
    out = np.zeros(1)
    for layout, count in layouts.items():
        out = out + count / total * _step_density(grid, [_sum_of(g, j, members) for j, members in enumerate(layout)], pdf)
    return out


def _reveals(values: Sequence[float], batch: int) -> Counter[tuple[tuple[float, ...], tuple[tuple[float, ...], ...]]]:
    """The revealed part R of the generation (F's other members, the placement of the records outside
    F into B - 1 slots per batch), as values, with multiplicities (all R equally likely)."""
    n, t = len(values), len(values) // batch
    out: Counter = Counter()
    others = list(range(1, n))
    for chosen in itertools.combinations(others, t - 1):
        rest = [i for i in others if i not in chosen]
        for labels in set(itertools.permutations([j for j in range(t) for _ in range(batch - 1)])):
            known = tuple(tuple(sorted(values[i] for i, lab in zip(rest, labels) if lab == j)) for j in range(t))
            out[(tuple(sorted(values[i] for i in chosen)), known)] += 1
    return out


def reduced_densities(
    values: Sequence[float], target: float, batch: int, g: GradientMap, noise: str, scale: float, grid: list[np.ndarray],
    reveal_permutation: bool = False,
) -> list[tuple[float, np.ndarray]]:
    """[(Pr[label], density of the outputs given the label)] for the reduced mechanism with the
    target's value ``target`` (``values[0]`` replaced): the label is R, or (R, F's permutation) with
    ``reveal_permutation`` (the refuted reduction). Given R, step j releases the revealed records'
    gradients plus the gradient of F's member pi(j) plus noise (adaptive: every map reads the grid's
    history)."""
    pdf = _noise_pdf(noise, scale)
    data = [target, *values[1:]]
    reveals = _reveals(data, batch)
    total = sum(reveals.values())
    t = len(values) // batch
    out = []
    for (chosen, known), count in reveals.items():
        members = (target, *chosen)
        perms = list(itertools.permutations(members))
        parts = []
        for perm in perms:
            means = [_sum_of(g, j, (*known[j], perm[j])) for j in range(t)]
            parts.append(_step_density(grid, means, pdf))
        if reveal_permutation:
            out += [(count / total / len(perms), part) for part in parts]
        else:
            out.append((count / total, sum(parts) / len(perms)))
    return out


def hockey(p: np.ndarray, q: np.ndarray, epsilon: float, cell: float) -> float:
    """Σ (p − e^ε q)_+ · cell: the hockey stick by the grid's Riemann sum."""
    return float(np.sum(np.maximum(p - math.exp(epsilon) * q, 0.0)) * cell)


def reduced_hockey(labelled_p: list[tuple[float, np.ndarray]], labelled_q: list[tuple[float, np.ndarray]], epsilon: float, cell: float) -> float:
    """Σ_label Pr[label]·H(p_label ‖ q_label): the hockey stick with the label revealed."""
    return sum(w * hockey(p, q, epsilon, cell) for (w, p), (_, q) in zip(labelled_p, labelled_q))
