"""RDP curves of matrix mechanisms under random allocation (Schuchardt & Kalinin, §3).

REMOVE: Algorithm 1 (Lemma 3.3) at the integer orders, best over the bandwidths the cost budget
allows (:func:`verifier.matrix.renyi.remove_table`); exact (to EXACT_RTOL) where τ = 0,
b >= 3p − 3 and the order's rounding bracket is narrow enough, an UPPER bound elsewhere, +∞ above the largest order reached; fractional orders by the log-convex chord
(:mod:`verifier.rdp.interpolation`, never exact). ADD: Lemma 3.4 (Algorithm 2), an UPPER bound at
every real order. The table is computed once per scheme (cached), so the fractional-order search of
the conversion does not rerun the dynamic program.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import numpy.typing as npt

from verifier._types import Direction
from verifier.errors import InvalidArgument
from verifier.matrix.gram import gram, means
from verifier.matrix.renyi import CITATION_ADD, CITATION_REMOVE, RemoveTable, add_values, remove_table
from verifier.rdp.curve import RdpCurve, check_orders
from verifier.rdp.interpolation import interpolate
from verifier.schemes import MatrixMechanism

__all__ = ["matrix_curve", "scaled_gram", "scaled_means", "matrix_remove_table"]


@lru_cache(maxsize=16)
def scaled_gram(scheme: MatrixMechanism) -> npt.NDArray[np.float64]:
    """Γ = Δ²·G/σ² of the scheme's dominating pair (Lemma 2.8), read-only."""
    g = gram(scheme.strategy, scheme.batches, scheme.epochs)
    gamma = g * (scheme.pair.sensitivity**2 / scheme.pair.sigma**2)
    gamma.setflags(write=False)
    return gamma


def scaled_means(scheme: MatrixMechanism) -> npt.NDArray[np.float64]:
    """The means Δ·m/σ of the scheme's per-step Gaussians in the Lemma 2.8 pair (shared by the
    conditional-composition accountant and the Monte Carlo evidence)."""
    return means(scheme.strategy, scheme.batches, scheme.epochs) * (scheme.pair.sensitivity / scheme.pair.sigma)


@lru_cache(maxsize=16)
def matrix_remove_table(scheme: MatrixMechanism) -> RemoveTable:
    """The remove-direction table of the scheme (cached)."""
    return remove_table(scaled_gram(scheme))


def matrix_curve(scheme: MatrixMechanism, orders: npt.ArrayLike, direction: Direction) -> RdpCurve:
    """RDP curve (UPPER bounds, exact where flagged) of the matrix mechanism in ``direction``."""
    grid = check_orders(orders)
    if not isinstance(direction, Direction):
        raise InvalidArgument("direction", direction, "must be Direction.ADD or Direction.REMOVE")
    if direction is Direction.ADD:
        return RdpCurve(grid, add_values(scaled_gram(scheme), grid), np.zeros(len(grid), dtype=bool), direction, CITATION_ADD)
    table = matrix_remove_table(scheme)

    def at_integers(ints: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
        values = np.full(len(ints), np.inf)
        exact = np.zeros(len(ints), dtype=bool)
        inside = ints <= table.orders[-1]
        values[inside] = table.values[ints[inside] - 2]
        exact[inside] = table.exact[ints[inside] - 2]
        return values, exact

    values, exact = interpolate(grid, at_integers)
    return RdpCurve(grid, values, exact, direction, CITATION_REMOVE)
