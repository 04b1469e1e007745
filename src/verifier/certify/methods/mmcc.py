"""MMCC for matrix mechanisms under Poisson sampling (:class:`~verifier.schemes.MatrixPoisson`) as a
certification method ("mmcc", UPPER and LOWER; the mathematics is :mod:`verifier.matrix.mmcc`).

UPPER: conditional composition of per-step Gaussian mixtures, δ(ε) <= δ_PLD(ε) + δ_E and
ε(δ) <= ε_PLD(δ − δ_E), δ_E = δ/2 for ε(δ) queries and matrix-cc's DELTA_E for δ(ε) queries (the
target δ is unknown there), the maximum over the b groups. LOWER: the best block projection of one
group's attained pair (group 0, which takes part in the most steps). Where the participating
columns of every group have disjoint supports (C = I; a b-banded C with b groups) the pair is the
Poisson run of the column norms and both sides are the registered Poisson methods' bounds
(through :func:`verifier.certify.methods.banded_poisson.run_bound`): C = I with one group is
Poisson DP-SGD.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from verifier._directed import up
from verifier._types import Bound, Direction, Quantity, Side
from verifier.certify.method import Guarantee, QuantityMethod
from verifier.certify.methods.banded_poisson import poisson_run, run_bound
from verifier.certify.methods.matrix_cc import DELTA_E
from verifier.errors import NotApplicable
from verifier.matrix.mmcc import (
    CITATION_BLOCKS,
    CITATION_MMCC,
    block_lengths,
    block_pairs,
    block_pld,
    exact_norms,
    mmcc_pld,
    mmcc_steps,
    participation,
    scaled,
)
from verifier.schemes import MatrixPoisson, Scheme

__all__ = ["MMCC", "METHODS", "MAX_STEPS"]

#: Largest N the method takes on (the posterior bounds grow like N·bandwidth, N² for a dense C).
MAX_STEPS = 4096


@lru_cache(maxsize=4)
def _dense(scheme: MatrixPoisson) -> np.ndarray:
    return scheme.strategy.dense()


def _columns(scheme: MatrixPoisson) -> list[np.ndarray]:
    return [participation(scheme.strategy.size, scheme.groups, g) for g in range(scheme.groups)]


def _exact_norms(scheme: MatrixPoisson) -> list[list[float]] | None:
    """Each group's sorted column norms when every group's columns have disjoint supports, else None."""
    out = []
    for columns in _columns(scheme):
        norms = exact_norms(_dense(scheme), columns)
        if norms is None:
            return None
        out.append(sorted(norms, reverse=True))
    return out


@lru_cache(maxsize=16)
def _upper_plds(scheme: MatrixPoisson, direction: Direction, delta_e: float) -> list:
    """(bracket, number of posterior bounds) of every group's conditional composition."""
    pair = scheme.pair
    a = scaled(_dense(scheme), pair.sensitivity, pair.sigma)  # type: ignore[attr-defined]
    out = []
    for columns in _columns(scheme):
        steps = mmcc_steps(a, columns, scheme.rate, direction, delta_e)
        out.append((mmcc_pld(steps, direction), steps.bounds))
    return out


@lru_cache(maxsize=16)
def _lower_plds(scheme: MatrixPoisson, direction: Direction) -> list:
    """(bracket, block length) of group 0's block projections."""
    pair = scheme.pair
    a = np.nextafter(_dense(scheme) * (pair.sensitivity / pair.sigma), 0.0)  # type: ignore[attr-defined]
    a[a < 0] = 0.0
    columns = participation(scheme.strategy.size, scheme.groups, 0)
    return [(block_pld(block_pairs(a, columns, scheme.rate, length), direction), length) for length in block_lengths(a, columns)]


class MMCC(QuantityMethod):
    name = "mmcc"
    citation = CITATION_MMCC
    returns = frozenset({Guarantee.UPPER, Guarantee.LOWER})
    cost = 3
    scheme_types = (MatrixPoisson,)

    def supports(self, scheme: Scheme) -> bool:
        return isinstance(scheme, MatrixPoisson) and scheme.strategy.size <= MAX_STEPS

    def _exact(self, scheme: MatrixPoisson, norms: list[list[float]], quantity: Quantity, at: float, direction: Direction) -> list[Bound]:
        longest = max(len(g) for g in norms)
        profiles = {
            Side.UPPER: [max(g[k] for g in norms if k < len(g)) for k in range(longest)],
            Side.LOWER: max(norms),
        }
        out = []
        for side, profile in profiles.items():
            best = run_bound(poisson_run(scheme.pair, scheme.rate, profile, side), side, quantity, at, direction)  # type: ignore[arg-type]
            if best is not None:
                bound, steps = best
                note = f"exact: the participating columns have disjoint supports, {bound.method} on {steps} Poisson-subsampled Gaussian steps"
                out.append(Bound(bound.value, side, direction, quantity, at, self.name, self.citation, bound.error_budget, note=note))
        return out

    def quantity_bounds(self, scheme: Scheme, quantity: Quantity, at: float, direction: Direction) -> list[Bound]:
        if not isinstance(scheme, MatrixPoisson):
            raise NotApplicable(f"{self.name} needs a MatrixPoisson scheme, got {type(scheme).__name__}")
        norms = _exact_norms(scheme)
        if norms is not None:
            return self._exact(scheme, norms, quantity, at, direction)
        delta_e = DELTA_E if quantity is Quantity.DELTA else at / 2
        uppers = []
        for bracket, bounds in _upper_plds(scheme, direction, delta_e):
            spent = delta_e if bounds else 0.0
            if bracket is None:
                uppers.append(0.0)
            elif quantity is Quantity.DELTA:
                uppers.append(min(1.0, float(up(float(bracket.delta(at).upper) + spent))))
            else:
                uppers.append(float(bracket.epsilon(at - spent).upper))
        note = f"delta_E={delta_e:g} over {scheme.groups} group(s), max over groups"
        out = [Bound(max(uppers), Side.UPPER, direction, quantity, at, self.name, self.citation, error_budget=delta_e, note=note)]
        lowers = [
            (float(bracket.delta(at).lower) if quantity is Quantity.DELTA else float(bracket.epsilon(at).lower), length)
            for bracket, length in _lower_plds(scheme, direction)
            if bracket is not None
        ]
        if lowers:
            value, length = max(lowers)
            note = f"block projection, blocks of {length} rows (group 0)"
            out.append(Bound(max(0.0, value) if quantity is Quantity.DELTA else value, Side.LOWER, direction, quantity, at, "mmcc", CITATION_BLOCKS, note=note))
        return out


METHODS = [MMCC()]
