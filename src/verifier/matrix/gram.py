"""The dominating pair of a matrix mechanism under random allocation and its Gram matrix.

Lemma 2.8 of Schuchardt & Kalinin (= Lemma 3.2 of Choquette-Choo et al. 2025 with add/remove
swapped back, notes §1.4): with k epochs of b batches (N = k·b) and clipping norm Δ,

    P = (1/b) Σ_i N(Δ·m_i, σ² I_N),  Q = N(0, σ² I_N),   m_i = Σ_{j<k} |C|[:, i + j·b],

dominates the remove direction as (P, Q) and the add direction as (Q, P). The Rényi accountant needs
only the Gram matrix G_ij = <m_i, m_j> (b×b, symmetric, entrywise >= 0); the conditional-composition
accountant and the lower bounds need the means M (b×N, row i = m_i).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from verifier._validation import check_integer
from verifier.errors import InvalidArgument
from verifier.matrix.strategy import Strategy

__all__ = ["means", "gram", "cyclic_distance", "cyclic_bandwidth", "truncate"]

#: Above this bandwidth G is formed as M·Mᵀ (b²N flops) instead of from the column products (N·w²).
_BANDED_GRAM_WIDTH = 64


def _check_layout(strategy: Strategy, batches: int, epochs: int) -> tuple[int, int]:
    b = check_integer("batches", batches, minimum=1)
    k = check_integer("epochs", epochs, minimum=1)
    if strategy.size != b * k:
        raise InvalidArgument(
            "matrix", f"N={strategy.size}", f"the strategy must have N = epochs·batches = {k}·{b} = {k * b} rows and columns"
        )
    return b, k


def means(strategy: Strategy, batches: int, epochs: int) -> npt.NDArray[np.float64]:
    """M (b×N): row i is m_i = Σ_j |C|[:, i + j·b] (0-indexed columns; Lemma 2.8), clipping norm 1."""
    b, _ = _check_layout(strategy, batches, epochs)
    n = strategy.size
    out = np.zeros((b, n))
    rows = np.arange(n)
    for d in range(strategy.width):
        r = rows[d:]
        np.add.at(out, ((r - d) % b, r), strategy.bands[d:, d])
    return out


def gram(strategy: Strategy, batches: int, epochs: int) -> npt.NDArray[np.float64]:
    """G_ij = <m_i, m_j> (b×b), clipping norm 1. Banded strategies use the column inner products
    K(c, c+s) = Σ_{d>=s} |C|[c+d, c]·|C|[c+d, c+s] (zero for s >= bandwidth), folded modulo b."""
    b, _ = _check_layout(strategy, batches, epochs)
    n, w, band = strategy.size, strategy.width, strategy.bands
    if w > _BANDED_GRAM_WIDTH:
        m = means(strategy, batches, epochs)
        g = m @ m.T
        return (g + g.T) / 2.0
    flat = np.zeros(b * b)
    for s in range(min(w, n)):
        k = np.zeros(n - s)
        for d in range(s, w):
            c = np.arange(n - d)
            k[: n - d] += band[c + d, d] * band[c + d, d - s]
        c = np.arange(n - s)
        flat += np.bincount((c % b) * b + (c + s) % b, weights=k, minlength=b * b)
        if s > 0:
            flat += np.bincount(((c + s) % b) * b + c % b, weights=k, minlength=b * b)
    return flat.reshape(b, b)


def cyclic_distance(b: int) -> npt.NDArray[np.int64]:
    """cyc(i, j) = min(|i − j|, b − |i − j|) (notes §2.4)."""
    i = np.arange(b)
    diff = np.abs(i[:, None] - i[None, :])
    return np.minimum(diff, b - diff)


def cyclic_bandwidth(g: npt.NDArray[np.float64]) -> int:
    """The smallest p >= 1 with G_ij = 0 whenever cyc(i, j) >= p (so τ = 0 and Algorithm 1 with
    this p is exact when b >= 3p − 3)."""
    cyc = cyclic_distance(g.shape[0])
    nonzero = cyc[g != 0.0]
    return int(nonzero.max()) + 1 if nonzero.size else 1


def truncate(g: npt.NDArray[np.float64], bands: int) -> tuple[npt.NDArray[np.float64], float]:
    """(G^(p), τ) of Algorithm 1 (Lemma 3.3): τ = max_{cyc >= p} G_ij (0 if none) and
    G^(p)_ij = max(G_ij − τ, 0) inside the cyclic band, 0 outside; G <= G^(p) + τ·11ᵀ entrywise."""
    p = check_integer("bands", bands, minimum=1)
    if p == 1:  # diagonal band: no b×b distance table needed
        diag = np.diagonal(g).copy()
        off = g.copy()
        np.fill_diagonal(off, -np.inf)
        tau = max(float(off.max()), 0.0) if g.shape[0] > 1 else 0.0
        return np.diag(np.maximum(diag - tau, 0.0)), tau
    cyc = cyclic_distance(g.shape[0])
    outside = cyc >= p
    tau = float(g[outside].max()) if np.any(outside) else 0.0
    h = np.where(outside, 0.0, np.maximum(g - tau, 0.0))
    return h, tau
